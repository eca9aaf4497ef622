/* analysis/kernel_sequences.h: frequent GPU kernel sequences of CPU ops
 * (analysis/kernel_sequences.c), counted during the op breakdown's walk
 * (analysis/ops.c): both read every op once, so they share one walk. */
#ifndef HTA_KERNEL_SEQUENCES_H
#define HTA_KERNEL_SEQUENCES_H

#include "model/op_walk.h"
#include "model/rank_view.h"
#include "settings/settings.h"
#include "table/table.h"

typedef struct hta_sequences hta_sequences;

/* NULL when out of memory. */
hta_sequences *hta_sequences_start(const hta_rank_view *view, const hta_analysis_settings *opt);
/* An hta_op_visit_fn for the state hta_sequences_start returned. */
int hta_sequences_visit(void *sequences, const hta_op_visit *visit);
/* Appends the "kernel_sequences" rows; -1 when out of memory. */
int hta_sequences_finish(hta_sequences *s, hta_tableset *out);
void hta_sequences_free(hta_sequences *s);

/* The columns of /kernel_sequences (docs/results-format.md). */
enum {
    HTA_KERNEL_SEQUENCES_RANK,
    HTA_KERNEL_SEQUENCES_NAME,
    HTA_KERNEL_SEQUENCES_OP,
    HTA_KERNEL_SEQUENCES_N_KERNELS,
    HTA_KERNEL_SEQUENCES_COUNT,
    HTA_KERNEL_SEQUENCES_GPU_TIME_US,
    HTA_KERNEL_SEQUENCES_CPU_TIME_US,
    HTA_KERNEL_SEQUENCES_N_COLUMNS
};
extern const hta_table_spec hta_kernel_sequences_table;

#endif
