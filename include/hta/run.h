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

#include "hta/analysis.h"
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
 * *.json, *.json.gz, *.sqlite and CUPTI CSV folders, recursively with
 * opt->recursive; --input-format narrows it to one form), an Nsight
 * export holding several GPUs as one entry per GPU (EXPORT@device=N)
 * unless opt->merge_devices.  Fails with a
 * usage-class error when an input does not exist or nothing is found. */
int hta_discover(const hta_options *opt, hta_file_list *out, hta_error *err);

/* Assigns files to processes, largest first to the least loaded process, so
 * that every process computes the same assignment from the same list.
 * owner[i] receives the process of file i. */
int hta_assign(const hta_file_list *list, int n_processes, int *owner);

/* Rank number in a file name: "rank" optionally followed by '-' or '_', then
 * digits (rank-3, rank_3, rank3, sampled_rank-1); -1 when absent. */
int64_t hta_rank_from_file_name(const char *path);

/* A trace with fewer events is viewed and analysed on one thread: its
 * analyses take a few milliseconds, and starting threads would cost more
 * than they save (opt->threaded_min_events overrides it for tests). */
#define HTA_THREADED_MIN_EVENTS 32768

/* A trace this large frees megabytes of scratch per analysis, which glibc
 * keeps as free heap (up to TRIM_THRESHOLD in main.c) for reuse.  There
 * it would sit beside the next analysis's own large
 * arrays, and between traces under the next trace's peak (12 and 20 MB on
 * 1 GB traces), so it is handed back after each analysis and after the
 * trace.  A small trace keeps it: re-faulting pages for thousands of small
 * traces is what the threshold avoids. */
#define HTA_TRIM_MIN_EVENTS (1u << 20)

/* Parses and analyses one file, appending its rows (rank column = file
 * index) and one row of the "ranks" table.  Never fails for bad input: the
 * failure is recorded in the ranks row.  Returns -1 only when out of memory. */
int hta_analyze_file(const char *path, uint64_t bytes, int64_t file_index,
                     int process, const hta_options *opt, hta_tableset *out);

/* Runs every analysis of hta_analyses over the view into out, on up to
 * `threads` threads, with the same rows in the same order whatever the
 * thread count.  deadline: monotonic seconds after which no analysis
 * starts (0: none).  -1 with err set on the first failure in registry
 * order. */
int hta_run_analyses(const hta_rank_view *view, const hta_options *opt, int threads,
                     const char *path, double deadline, hta_tableset *out, hta_error *err);

/* Where each file's rows go: rank_of_file[file index] is the trace's rank,
 * or -1 when its rows are dropped (failed, duplicate, outside --ranks). */
typedef struct hta_rank_map {
    int64_t *rank_of_file;     /* owned */
    size_t n_files;
} hta_rank_map;

void hta_rank_map_free(hta_rank_map *map);

/* Root, after the gather: turns file indices into ranks (distributedInfo,
 * then file name, then the lowest free number), fails later duplicates,
 * drops excluded ranks and sorts every per-rank table by rank.  *map
 * receives the decisions, for the processes' own tables. */
int hta_resolve_ranks(hta_tableset *set, const hta_options *opt, hta_rank_map *map,
                      hta_error *err);

/* Relabels the rank-keyed tables of set (other than "ranks") with the map,
 * drops the rows it drops, and sorts them by rank (stable). */
int hta_apply_rank_map(hta_tableset *set, const hta_rank_map *map, hta_error *err);

/* Cross-rank statistics on the root (definitions section 5). */
int hta_find_outliers(hta_tableset *set, const hta_options *opt, hta_error *err);

/* Root: HTA's kernel-type breakdown summed over ranks ("kernel_type_breakdown"
 * from the per-rank "kernel_type_by_rank"). */
int hta_kernel_type_totals(hta_tableset *set, hta_error *err);

/* Root, after the gather: hta_resolve_ranks, then every cross-rank table
 * (hta_find_outliers, hta_kernel_type_totals, crossrank.h), in run order. */
int hta_root_statistics(hta_tableset *set, const hta_options *opt, hta_rank_map *map,
                        hta_error *err);

typedef struct hta_run_info {
    const char *tool_version;
    int n_processes;
    double wall_seconds;
    const hta_file_list *files;
    int64_t timeline_start_ns, timeline_end_ns; /* global GPU range */
    /* After every process has finished its traces: gathering the tables
     * to the root, then resolving ranks and the cross-rank statistics. */
    double gather_seconds, crossrank_seconds;
    double write_start;        /* MPI_Wtime when the results file is begun */
} hta_run_info;

/* The results file, written under a temporary name in the output's
 * directory so that it appears complete or not at all:
 *  1. root: hta_write_root_tables writes the gathered and cross-rank tables
 *     and returns the temporary's path (owned by the caller);
 *  2. every process: hta_write_in_place_tables adds its own rows of the
 *     tables that were never gathered, collectively through MPI-IO
 *     (collective over MPI_COMM_WORLD; rows already passed through
 *     hta_apply_rank_map; invalid UTF-8 in them is repaired in place);
 *  3. root: hta_publish_results syncs and renames it when complete, else
 *     removes it. */
int hta_write_root_tables(const hta_tableset *set, const hta_options *opt,
                          const hta_run_info *info, char **tmp_path, hta_error *err);
int hta_write_in_place_tables(const char *tmp_path, const char *output, hta_tableset *mine,
                              const hta_rank_map *map, hta_error *err);
int hta_publish_results(const char *tmp_path, const char *output, int complete,
                        hta_error *err);
/* Tables written in place: per-rank tables the root does not need for the
 * cross-rank statistics, whose strings come from fixed vocabularies. */
int hta_table_is_written_in_place(const char *name);

void hta_print_summary(const hta_tableset *set, const hta_options *opt,
                       const hta_run_info *info);

#endif
