/* tracegen_ddp.h: hta-tracegen's default job shape, a DDP training job
 * with stragglers (tracegen_ddp.c); tracegen.c parses its options. */
#ifndef TRACEGEN_DDP_H
#define TRACEGEN_DDP_H

#include <stdbool.h>
#include <stdint.h>

#define MIN_FACTOR 0.5 /* straggler factors the timing model keeps exact */
#define MAX_FACTOR 10.0
#define MAX_WORLD 1000000

typedef struct {
    const char *outdir;
    int64_t ranks, first_rank, world;
    double size_mb;
    bool gzip, compact;
    uint64_t seed;
    int64_t steps_opt; /* 0: derive from size_mb */
    double *factor;    /* [world] straggler factor per rank */
    const char *slow_match, *rename_match, *rename_to; /* --kernel-factor, --rename-kernel */
    double slow_factor;
    int64_t ranks_per_node; /* 0: files named rank-R.json */
    int64_t *clock_offset_us; /* [world] --clock-offset per rank */
} tg_ddp_options;

/* Writes ranks first_rank .. world - 1 into outdir; exits on failure. */
void tracegen_ddp_write(const tg_ddp_options *opt);

#endif
