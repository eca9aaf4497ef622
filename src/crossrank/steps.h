/* crossrank/steps.h: the steps of the cross-rank stage, in the order they
 * run (crossrank/steps.c), and what each reads and writes.
 *
 * A step is one statistic over ranks (or the matching that feeds them)
 * behind one function: it runs on every process (the matching among the
 * processes) or on the root alone (the statistics, over the tables the
 * root holds).  Each declares the tables it reads and writes: a whole
 * table, or one column of another producer's table that it fills (its
 * declared cells, which nothing else changes).  A step writes nothing
 * else, frees only scratch tables no later step reads, and runs after
 * every writer of what it reads (tests/test_crossrank_steps.c checks
 * these on real runs).
 *
 * No step adds rows to a table an earlier producer made: what a
 * statistic adds to such a table (a metric per rank to "rank_metrics",
 * a flagged rank to "outliers") it puts in a scratch table of its own,
 * of the same columns, and a join step of the table appends those rows
 * (in rank order when the table is per rank) where the readers expect
 * them. */
#ifndef HTA_CROSSRANK_STEPS_H
#define HTA_CROSSRANK_STEPS_H

#include <stddef.h>

#include "crossrank/crossrank.h"

typedef enum hta_crossrank_where {
    HTA_CROSSRANK_ALL_PROCESSES,
    HTA_CROSSRANK_ROOT
} hta_crossrank_where;

/* A table a step reads or writes: the whole of spec (column NULL) or the
 * one named column of it. */
typedef struct hta_crossrank_io {
    const hta_table_spec *spec;
    const char *column;
} hta_crossrank_io;

/* Every process: the step sees the processes and the stage's tables. */
typedef int (*hta_crossrank_everywhere_fn)(const hta_processes *pr, hta_crossrank_tables *t,
                                           const hta_crossrank_settings *opt, hta_error *err);
/* The root, on its tables: a statistic options shape, and one none do. */
typedef int (*hta_crossrank_root_fn)(hta_tableset *set, const hta_crossrank_settings *opt,
                                     hta_error *err);
typedef int (*hta_crossrank_fixed_fn)(hta_tableset *set, hta_error *err);
/* The root, on its tables and the ranks' nodes (NULL: unknown). */
typedef int (*hta_crossrank_nodes_fn)(hta_tableset *set, const hta_rank_hosts *hosts,
                                      const hta_crossrank_settings *opt, hta_error *err);

/* where says which one function is set: everywhere on every process,
 * root, root_fixed or root_nodes on the root; a join step (on the root)
 * has none but part and into: it appends the rows of part to into, when
 * into exists, and removes part.  frees: the scratch tables the step
 * reads last and removes.  reads, writes and frees end with {NULL}. */
typedef struct hta_crossrank_step {
    const char *name;
    hta_crossrank_where where;
    hta_crossrank_everywhere_fn everywhere;
    hta_crossrank_root_fn root;
    hta_crossrank_fixed_fn root_fixed;
    hta_crossrank_nodes_fn root_nodes;
    const hta_table_spec *part, *into;
    const hta_crossrank_io *reads, *writes, *frees;
} hta_crossrank_step;

extern const hta_crossrank_step hta_crossrank_steps[];
extern const size_t hta_n_crossrank_steps;

/* Runs step s on this process (nothing on a process that is not the root
 * for a root step).  -1 with err as the step returns it. */
int hta_crossrank_step_run(const hta_crossrank_step *s, const hta_processes *pr,
                           hta_crossrank_tables *t, const hta_crossrank_settings *opt,
                           hta_error *err);

#endif
