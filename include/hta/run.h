/* hta/run.h: the stages of a run, in the order data flows.
 *
 *   discover (root)  ->  assign (every process, same answer)
 *   -> analyse each assigned file (parse, step filter, analyses)
 *   -> gather tables to the root -> resolve ranks -> cross-rank -> write.
 */
#ifndef HTA_RUN_H
#define HTA_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "hta/error.h"
#include "hta/options.h"
#include "hta/table.h"

typedef struct hta_file_list {
    char **paths;              /* owned, sorted */
    uint64_t *bytes;           /* owned, size on disk */
    size_t count;
} hta_file_list;

void hta_file_list_free(hta_file_list *list);

/* Lists the trace files named by the inputs (directories are scanned for
 * *.json and *.json.gz, recursively with opt->recursive).  Fails with a
 * usage-class error when an input does not exist or nothing is found. */
int hta_discover(const hta_options *opt, hta_file_list *out, hta_error *err);

/* Assigns files to processes, largest first to the least loaded process, so
 * that every process computes the same assignment from the same list.
 * owner[i] receives the process of file i. */
int hta_assign(const hta_file_list *list, int n_processes, int *owner);

/* Rank number in a file name: "rank" optionally followed by '-' or '_', then
 * digits (rank-3, rank_3, rank3, sampled_rank-1); -1 when absent. */
int64_t hta_rank_from_file_name(const char *path);

/* Parses and analyses one file, appending its rows (rank column = file
 * index) and one row of the "ranks" table.  Never fails for bad input: the
 * failure is recorded in the ranks row.  Returns -1 only when out of memory. */
int hta_analyze_file(const char *path, uint64_t bytes, int64_t file_index,
                     int process, const hta_options *opt, hta_tableset *out);

/* Root, after the gather: turns file indices into ranks (distributedInfo,
 * then file name, then the lowest free number), fails later duplicates,
 * drops excluded ranks and sorts every per-rank table by rank. */
int hta_resolve_ranks(hta_tableset *set, const hta_options *opt, hta_error *err);

/* Cross-rank statistics on the root (definitions section 5). */
int hta_find_outliers(hta_tableset *set, const hta_options *opt, hta_error *err);

/* Root: HTA's kernel-type breakdown summed over ranks ("kernel_type_breakdown"
 * from the per-rank "kernel_type_by_rank"). */
int hta_kernel_type_totals(hta_tableset *set, hta_error *err);

/* Root, after the gather: hta_resolve_ranks, then every cross-rank table
 * (hta_find_outliers, hta_kernel_type_totals, crossrank.h), in run order. */
int hta_root_statistics(hta_tableset *set, const hta_options *opt, hta_error *err);

/* Root: writes every table to an HDF5 file via a temporary name. */
typedef struct hta_run_info {
    const char *tool_version;
    int n_processes;
    double wall_seconds;
    const hta_file_list *files;
    int64_t timeline_start_ns, timeline_end_ns; /* global GPU range */
    /* After every process has finished its traces: gathering the tables
     * to the root, then resolving ranks and the cross-rank statistics. */
    double gather_seconds, crossrank_seconds;
} hta_run_info;

int hta_write_hdf5(const hta_tableset *set, const hta_options *opt,
                   const hta_run_info *info, hta_error *err);
void hta_print_summary(const hta_tableset *set, const hta_options *opt,
                       const hta_run_info *info);

#endif
