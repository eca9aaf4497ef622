/* crossrank/job_path/global_path.h: the job's critical path per step, across the
 * ranks (crossrank/job_path/global_path.c). */
#ifndef HTA_GLOBAL_PATH_H
#define HTA_GLOBAL_PATH_H

#include "analysis/critical_path.h"
#include "crossrank/exchange/collective_groups.h"
#include "crossrank/exchange/processes.h"
#include "table/table.h"
#include "util/error.h"

/* Every process, once its ranks' ops have their results: walks each
 * step's path back from the rank whose step ends last through the
 * "_path_intervals" of path (analysis/critical_path.h), hopping at each
 * instance to its last arriver, and puts the pieces it walked into
 * "_path_walk" of out (gathered).  -1 on every process when one ran out
 * of memory. */
int hta_global_path_walk(const hta_processes *pr, const hta_tableset *path,
                         const hta_rank_ops *r, const hta_op_result *res, hta_tableset *out);

/* Root: "global_critical_path", "global_critical_path_names",
 * "global_critical_path_steps", "global_critical_path_ranks" and
 * "global_critical_path_imbalance" from "_path_walk", "_path_walk_names"
 * and "_path_name_times", which it then drops. */
int hta_global_path_results(hta_tableset *set, hta_error *err);

/* The columns of _path_walk (scratch between stages, never written):
 * seq counts the pieces back from the step's end (0 = the last). */
enum {
    HTA_PATH_WALK_STEP,
    HTA_PATH_WALK_SEQ,
    HTA_PATH_WALK_RANK,
    HTA_PATH_WALK_NAME_ID,     /* the rank's: see _path_walk_names */
    HTA_PATH_WALK_BOUND,
    HTA_PATH_WALK_TIME_NS,
    HTA_PATH_WALK_N_COLUMNS
};
extern const hta_table_spec hta_path_walk_table;

/* A row of _path_walk; name: the caller's (NULL from the reader). */
typedef struct hta_path_piece {
    int64_t step, seq, rank, bound, time, name_id;
    const char *name;
} hta_path_piece;

/* The rows of walk in time order, step by step; *n of them.  NULL when
 * out of memory. */
hta_path_piece *hta_path_pieces_in_time(const hta_table *walk, size_t *n);

/* The rows of names (a table of _path_names' columns; NULL: none) in
 * (rank, name_id) order; NULL when out of memory. */
size_t *hta_path_names_order(const hta_table *names);
/* The place in order (as hta_path_names_order gives it) of the row of
 * (rank, id), or -1; ids below 0 (none, the rest) have no row. */
long hta_path_names_place(const hta_table *names, const size_t *order, int64_t rank, int64_t id);

/* _path_walk_names (scratch): the columns of analysis/critical_path.h's
 * _path_names, for the names the pieces walked use. */
extern const hta_table_spec hta_path_walk_names_table;

/* The columns of /global_critical_path (docs/results-format.md). */
enum {
    HTA_GLOBAL_PATH_STEP,
    HTA_GLOBAL_PATH_POSITION,
    HTA_GLOBAL_PATH_RANK,
    HTA_GLOBAL_PATH_NAME_ID,   /* in /global_critical_path_names */
    HTA_GLOBAL_PATH_BOUND_BY,
    HTA_GLOBAL_PATH_TIME_US,
    HTA_GLOBAL_PATH_N_COLUMNS
};
extern const hta_table_spec hta_global_path_table;

/* The columns of /global_critical_path_names (docs/results-format.md). */
enum {
    HTA_GLOBAL_PATH_NAMES_NAME_ID,
    HTA_GLOBAL_PATH_NAMES_NAME,
    HTA_GLOBAL_PATH_NAMES_N_COLUMNS
};
extern const hta_table_spec hta_global_path_names_table;

/* The columns of /global_critical_path_steps (docs/results-format.md);
 * the six causes' columns follow HTA_GLOBAL_PATH_STEPS_CPU_BOUND_US in
 * hta_cp_bound order. */
enum {
    HTA_GLOBAL_PATH_STEPS_STEP,
    HTA_GLOBAL_PATH_STEPS_END_RANK,
    HTA_GLOBAL_PATH_STEPS_PATH_US,
    HTA_GLOBAL_PATH_STEPS_RANKS,
    HTA_GLOBAL_PATH_STEPS_HOPS,
    HTA_GLOBAL_PATH_STEPS_CPU_BOUND_US,
    HTA_GLOBAL_PATH_STEPS_N_COLUMNS = HTA_GLOBAL_PATH_STEPS_CPU_BOUND_US + 6
};
extern const hta_table_spec hta_global_path_steps_table;

/* The columns of /global_critical_path_ranks (docs/results-format.md). */
enum {
    HTA_GLOBAL_PATH_RANKS_STEP,
    HTA_GLOBAL_PATH_RANKS_RANK,
    HTA_GLOBAL_PATH_RANKS_TIME_US,
    HTA_GLOBAL_PATH_RANKS_SHARE_PCT,
    HTA_GLOBAL_PATH_RANKS_N_COLUMNS
};
extern const hta_table_spec hta_global_path_ranks_table;

/* The columns of /global_critical_path_imbalance (docs/results-format.md). */
enum {
    HTA_GLOBAL_PATH_IMBALANCE_NAME,
    HTA_GLOBAL_PATH_IMBALANCE_PATH_US,
    HTA_GLOBAL_PATH_IMBALANCE_MEAN_US,
    HTA_GLOBAL_PATH_IMBALANCE_IMBALANCE_US,
    HTA_GLOBAL_PATH_IMBALANCE_N_COLUMNS
};
extern const hta_table_spec hta_global_path_imbalance_table;

#endif
