/* crossrank/exchange/clock_offsets.h: each host's clock offset, measured on the
 * collectives and taken out before the waits (crossrank/exchange/clock_offsets.c). */
#ifndef HTA_CLOCK_OFFSETS_H
#define HTA_CLOCK_OFFSETS_H

#include <stddef.h>
#include <stdint.h>

#include "crossrank/exchange/comm_catalog.h"
#include "crossrank/exchange/hosts.h"
#include "crossrank/exchange/processes.h"
#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

/* --align-clocks, as the settings list stores it. */
enum { HTA_ALIGN_CLOCKS_AUTO, HTA_ALIGN_CLOCKS_ON, HTA_ALIGN_CLOCKS_OFF };

/* What the alignment needs beside the ops: the --align-clocks choice, and
 * on the root its gathered tables, whose kernels matched by stream it
 * measures too (NULL elsewhere). */
typedef struct hta_clock_alignment {
    int mode;
    const hta_tableset *gathered;
} hta_clock_alignment;

/* Every process, on the ops it owns (ops[0..n), whole instances), before
 * they are matched: measures each node's offset on the instances of all
 * processes and, on the root, on those of the kernels matched by stream
 * ("_collectives" of clocks->gathered), shifts the ops of the nodes whose
 * offset is applied (as clocks->mode says), and on the
 * root appends one row per node to "_clock_offsets" and one per shifted
 * rank to "_clock_shifts" in out.  valid and valid_node as for
 * hta_match_group_ops; nothing happens without nodes or with one.  -1 on
 * every process when one lacks memory. */
int hta_align_clocks(const hta_processes *pr, const hta_comm_catalog *c, hta_group_op *ops,
                     size_t n, const int64_t *valid, const int64_t *valid_node, size_t n_valid,
                     const hta_clock_alignment *clocks, hta_tableset *out);

/* Root: "clock_offsets" from "_clock_offsets", with the names of the
 * nodes in hosts (crossrank/exchange/hosts.h; NULL: unknown). */
int hta_clock_offsets_results(hta_tableset *set, const hta_rank_hosts *hosts,
                              const hta_crossrank_settings *opt, hta_error *err);

/* The columns of "_clock_offsets", per node. */
enum {
    HTA_NODE_CLOCKS_NODE,
    HTA_NODE_CLOCKS_OFFSET_NS,
    HTA_NODE_CLOCKS_MAD_NS,
    HTA_NODE_CLOCKS_INSTANCES,
    HTA_NODE_CLOCKS_APPLIED,
    HTA_NODE_CLOCKS_VIOLATIONS_BEFORE,
    HTA_NODE_CLOCKS_VIOLATIONS_AFTER,
    HTA_NODE_CLOCKS_N_COLUMNS
};
extern const hta_table_spec hta_node_clocks_table;

/* The columns of "_clock_shifts": the shift taken out of a rank's
 * kernels matched by stream, per rank shifted (ascending). */
enum {
    HTA_CLOCK_SHIFTS_RANK,
    HTA_CLOCK_SHIFTS_NS,
    HTA_CLOCK_SHIFTS_N_COLUMNS
};
extern const hta_table_spec hta_clock_shifts_table;

/* The columns of /clock_offsets (docs/results-format.md). */
enum {
    HTA_CLOCK_OFFSETS_HOST,
    HTA_CLOCK_OFFSETS_OFFSET_US,
    HTA_CLOCK_OFFSETS_MAD_US,
    HTA_CLOCK_OFFSETS_INSTANCES,
    HTA_CLOCK_OFFSETS_APPLIED,
    HTA_CLOCK_OFFSETS_VIOLATIONS_BEFORE,
    HTA_CLOCK_OFFSETS_VIOLATIONS_AFTER,
    HTA_CLOCK_OFFSETS_N_COLUMNS
};
extern const hta_table_spec hta_clock_offsets_table;

#endif
