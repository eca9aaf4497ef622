/* analysis/comm_comp_overlap.h: entry point of analysis/comm_comp_overlap.c (registry.h). */
#ifndef HTA_COMM_COMP_OVERLAP_H
#define HTA_COMM_COMP_OVERLAP_H

#include "model/rank_view.h"
#include "table/table.h"
#include "util/error.h"

int hta_comm_comp_overlap(const hta_rank_view *view, hta_tableset *out, hta_error *err);

/* The columns of /comm_comp_overlap (docs/results-format.md). */
enum {
    HTA_COMM_COMP_OVERLAP_RANK,
    HTA_COMM_COMP_OVERLAP_COMP_COMM_OVERLAP_PCTG,
    HTA_COMM_COMP_OVERLAP_N_COLUMNS
};
extern const hta_table_spec hta_comm_comp_overlap_table;

#endif
