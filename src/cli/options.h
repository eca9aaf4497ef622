/* cli/options.h: everything the command line can set, and how it is parsed.
 *
 * Defaults are HTA's (docs/hta-mpi.1); hta_options_defaults fills them. */
#ifndef HTA_OPTIONS_H
#define HTA_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hta/run.h" /* the exit codes */
#include "util/error.h"

typedef struct hta_rank_range {
    int64_t first, last;
} hta_rank_range;

typedef struct hta_options {
    /* analysis */
    int include_last_step;
    int round_like_hta;        /* HTA's whole-microsecond rounding */
    double consecutive_kernel_delay_us;
    double runtime_cutoff_us;
    double launch_delay_cutoff_us;
    int num_kernels;
    double duration_ratio;
    int bins;
    const char *sequence_op;   /* regex of ops whose kernel sequences are
                                  counted; NULL = every top-level op */
    int min_pattern_len;       /* kernels a sequence needs */
    int sequence_top;          /* sequences kept per rank */
    double gap_threshold_us;   /* GPU idle gaps listed in /gpu_gaps */
    const char *gpu_spec;      /* --gpu-spec FILE, borrowed from argv; NULL =
                                  the built-in peaks (model/gpu_peaks.h) */
    /* cross-rank */
    double z_outlier, z_likely, robust_z, min_effect;
    /* run */
    const char *output;        /* borrowed from argv */
    int force, recursive, quiet, verbose, detail;
    int critical_path;         /* write /critical_path (opt-in: its cost) */
    const char *write_traces;  /* --write-traces DIR, borrowed from argv; NULL = no */
    double timeout_per_trace;  /* seconds per trace file; 0 = no limit */
    int inflater;              /* hta_inflater: gzip backend */
    int input_format;          /* hta_input_format: how to read the inputs */
    const char *step_regex;    /* borrowed from argv; NULL = ProfilerStep#N only */
    int merge_devices;         /* an export's devices are one rank, not one each */
    int threads;               /* threads for one large trace (parse and
                                  analyses); 0 = automatic, resolved by main
                                  after MPI_Init */
    uint64_t threaded_min_events; /* tests: a trace of this many events is
                                  analysed on threads; 0 = HTA_THREADED_MIN_EVENTS */
    char **inputs;             /* borrowed from argv */
    size_t n_inputs;
    hta_rank_range *ranks;     /* owned; NULL = all ranks */
    size_t n_ranks;
    const char *command_line;  /* owned by the CLI */
} hta_options;

void hta_options_defaults(hta_options *o);
int hta_options_wants_rank(const hta_options *o, int64_t rank);

typedef enum hta_cli_action {
    HTA_CLI_RUN,
    HTA_CLI_HELP,
    HTA_CLI_VERSION,
    HTA_CLI_USAGE_ERROR,
} hta_cli_action;

/* Fills o from argv (after hta_options_defaults). */
hta_cli_action hta_parse_options(int argc, char **argv, hta_options *o, hta_error *err);
void hta_options_free(hta_options *o);
/* One option by its long name, as on the command line (a flag takes NULL,
 * "" or "1"); string values are borrowed, like argv's.  -1 with err set
 * for an unknown name or a bad value. */
int hta_options_set(hta_options *o, const char *name, const char *value, hta_error *err);
/* 1 when the long option takes a value, 0 for a flag, -1 unknown. */
int hta_options_takes_value(const char *name);
void hta_print_usage(FILE *out);

#endif
