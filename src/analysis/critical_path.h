/* analysis/critical_path.h: the critical path of each ProfilerStep of a rank.
 *
 * HTA's critical-path graph (docs/definitions.md, Critical path): a node
 * for the start and the end of each CPU op, runtime call and GPU kernel
 * of a step; edges for the nesting and order of ops on each CPU thread,
 * the runtime lock between threads, each kernel's duration, launch ->
 * kernel when the stream's queue was empty, kernel -> kernel on a stream
 * below a 1500 us gap, and the synchronisations the cuda_sync events
 * record.  The longest path through it, found in topological order in
 * O(V + E), is what bounds the step; each of its edges is put down to
 * one of six causes. */
#ifndef HTA_CRITICAL_PATH_H
#define HTA_CRITICAL_PATH_H

#include <stddef.h>
#include <stdint.h>

#include "model/rank_view.h"
#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

typedef enum hta_cp_bound {
    HTA_CP_CPU = 0,
    HTA_CP_DATA_LOADING,
    HTA_CP_GPU_COMPUTE,
    HTA_CP_GPU_COMMUNICATION,
    HTA_CP_KERNEL_KERNEL,
    HTA_CP_KERNEL_LAUNCH,
    HTA_CP_N_BOUNDS,
    HTA_CP_NONE = HTA_CP_N_BOUNDS, /* zero-weight dependency and sync edges */
} hta_cp_bound;

/* HTA's names of the causes, by hta_cp_bound. */
extern const char *const hta_cp_bound_names[HTA_CP_N_BOUNDS];

/* "critical_path" (one row per rank and step), "critical_path_events"
 * (the path's longest segments per step) and rank metrics. */
int hta_critical_path(const hta_rank_view *view, const hta_analysis_settings *opt,
                      hta_tableset *out, hta_error *err);

/* A node of a step's critical path: the start or end of an event. */
typedef struct hta_cp_point {
    const hta_event *event;
    int64_t ts_ns;
    int is_start;
} hta_cp_point;

/* Called once per step (number -1: the whole trace) with its window and
 * its path's nodes in order; nonzero stops the walk and is returned. */
typedef int (*hta_cp_path_fn)(void *ctx, int64_t step, int64_t start_ns, int64_t end_ns,
                              const hta_cp_point *points, size_t n);

/* Computes every step's critical path of the view and hands each to fn
 * instead of writing tables: -1 when out of memory, else what fn
 * returned or 0. */
int hta_critical_path_each(const hta_rank_view *view, hta_cp_path_fn fn, void *ctx);

/* The columns of /critical_path (docs/results-format.md). */
enum {
    HTA_CRITICAL_PATH_RANK,
    HTA_CRITICAL_PATH_STEP,
    HTA_CRITICAL_PATH_START_US,
    HTA_CRITICAL_PATH_END_US,
    HTA_CRITICAL_PATH_PATH_US,
    HTA_CRITICAL_PATH_GRAPH_OK,
    HTA_CRITICAL_PATH_NODES,
    HTA_CRITICAL_PATH_EDGES,
    HTA_CRITICAL_PATH_BOUND_BY,
    HTA_CRITICAL_PATH_CPU_BOUND_US,
    HTA_CRITICAL_PATH_DATA_LOADING_US,
    HTA_CRITICAL_PATH_GPU_COMPUTE_BOUND_US,
    HTA_CRITICAL_PATH_GPU_COMMUNICATION_BOUND_US,
    HTA_CRITICAL_PATH_GPU_KERNEL_KERNEL_OVERHEAD_US,
    HTA_CRITICAL_PATH_GPU_KERNEL_LAUNCH_OVERHEAD_US,
    HTA_CRITICAL_PATH_CPU_BOUND_PCT,
    HTA_CRITICAL_PATH_DATA_LOADING_PCT,
    HTA_CRITICAL_PATH_GPU_COMPUTE_BOUND_PCT,
    HTA_CRITICAL_PATH_GPU_COMMUNICATION_BOUND_PCT,
    HTA_CRITICAL_PATH_GPU_KERNEL_KERNEL_OVERHEAD_PCT,
    HTA_CRITICAL_PATH_GPU_KERNEL_LAUNCH_OVERHEAD_PCT,
    HTA_CRITICAL_PATH_N_COLUMNS
};
extern const hta_table_spec hta_critical_path_table;

/* The columns of /critical_path_events (docs/results-format.md). */
enum {
    HTA_CRITICAL_PATH_EVENTS_RANK,
    HTA_CRITICAL_PATH_EVENTS_STEP,
    HTA_CRITICAL_PATH_EVENTS_POSITION,
    HTA_CRITICAL_PATH_EVENTS_NAME_ID,
    HTA_CRITICAL_PATH_EVENTS_TYPE,
    HTA_CRITICAL_PATH_EVENTS_BOUND_BY,
    HTA_CRITICAL_PATH_EVENTS_TS_US,
    HTA_CRITICAL_PATH_EVENTS_TIME_US,
    HTA_CRITICAL_PATH_EVENTS_N_COLUMNS
};
extern const hta_table_spec hta_critical_path_events_table;

/* The columns of /critical_path_names (docs/results-format.md). */
enum {
    HTA_CRITICAL_PATH_NAMES_RANK,
    HTA_CRITICAL_PATH_NAMES_NAME_ID,
    HTA_CRITICAL_PATH_NAMES_NAME,
    HTA_CRITICAL_PATH_NAMES_N_COLUMNS
};
extern const hta_table_spec hta_critical_path_names_table;

/* What the job's critical path (crossrank/job_path/global_path.h) needs of each
 * step of a rank, kept on the process that analysed it: for the start of
 * each communication kernel and for the step's end, the rank's longest
 * path back to the communication kernel that bounds it (or to the step's
 * start), an "interval" row of "_path_intervals" with its number of
 * pieces, the interval's time by (name, cause), the longest 8 by name,
 * the rest by cause (name id -2), which are rows of "_path_pieces" in
 * the same order as the intervals, each interval's in time order (four
 * int64 a piece, kept narrow since the pieces outnumber the intervals).  An
 * interval row's at_ns is the time of its end (the kernel's start, or
 * the step's end); from_ns, from_dur_ns and name_id are the bounding
 * kernel's start, duration and name (-1: none). */
enum { HTA_PATH_INTERVAL_TO_KERNEL, HTA_PATH_INTERVAL_TO_END };
enum {
    HTA_PATH_INTERVALS_RANK,
    HTA_PATH_INTERVALS_STEP,
    HTA_PATH_INTERVALS_KIND,
    HTA_PATH_INTERVALS_AT_NS,
    HTA_PATH_INTERVALS_FROM_NS,
    HTA_PATH_INTERVALS_FROM_DUR_NS,
    HTA_PATH_INTERVALS_TIME_NS,
    HTA_PATH_INTERVALS_NAME_ID,
    HTA_PATH_INTERVALS_PIECES,
    HTA_PATH_INTERVALS_N_COLUMNS
};
extern const hta_table_spec hta_path_intervals_table;

enum {
    HTA_PATH_PIECES_RANK,
    HTA_PATH_PIECES_TIME_NS,
    HTA_PATH_PIECES_NAME_ID,
    HTA_PATH_PIECES_BOUND,     /* its hta_cp_bound */
    HTA_PATH_PIECES_N_COLUMNS
};
extern const hta_table_spec hta_path_pieces_table;

/* The names of "_path_intervals", by (rank, id). */
enum { HTA_PATH_NAMES_RANK, HTA_PATH_NAMES_NAME_ID, HTA_PATH_NAMES_NAME, HTA_PATH_NAMES_N_COLUMNS };
extern const hta_table_spec hta_path_names_table;

/* Each kernel of a step that is not communication, at its place: the
 * k-th launch of its name in the step (0 first, by start), for the
 * medians over the ranks (crossrank/job_path/kernel_medians.h).  A step's kernels
 * of one name are a "run": a row of "_kernel_runs" with the name by its
 * "_path_names" id and the number of launches in one cell (id x 2^32 +
 * launches), a rank's runs by step, then name id; their durations, in
 * the same order and each run's by place, fill the rows of
 * "_kernel_durations" eight at a time (a rank's last row padded with
 * zeros), so that a kernel costs little beyond its duration, its step,
 * name and place said once per run rather than on a row per kernel. */
#define HTA_KERNEL_DURATIONS_PER_ROW 8
enum {
    HTA_KERNEL_RUNS_RANK,
    HTA_KERNEL_RUNS_STEP,
    HTA_KERNEL_RUNS_NAME_LAUNCHES,
    HTA_KERNEL_RUNS_N_COLUMNS
};
extern const hta_table_spec hta_kernel_runs_table;

enum {
    HTA_KERNEL_DURATIONS_RANK,
    HTA_KERNEL_DURATIONS_FIRST_NS,
    HTA_KERNEL_DURATIONS_N_COLUMNS = HTA_KERNEL_DURATIONS_FIRST_NS + HTA_KERNEL_DURATIONS_PER_ROW
};
extern const hta_table_spec hta_kernel_durations_table;

/* Per (rank, name): its operator edges' time over every step's graph,
 * which the critical-path imbalance compares the job's path with. */
enum {
    HTA_PATH_NAME_TIMES_RANK,
    HTA_PATH_NAME_TIMES_NAME,
    HTA_PATH_NAME_TIMES_TIME_NS,
    HTA_PATH_NAME_TIMES_N_COLUMNS
};
extern const hta_table_spec hta_path_name_times_table;

/* What the replay of the job (crossrank/job_path/replay.h) needs of each
 * step of a rank, kept on the process that analysed it (--replay): the
 * step's graph as built here.  "_replay_nodes": per step a header row
 * (info HTA_REPLAY_STEP_HEAD | edges << 2, ts_ns the step's start, aux its
 * length), then its nodes in the graph's order (ts_ns; info the kind:
 * plain, the start or the end of a communication kernel, | 4 for a CPU
 * node; aux the start's place for an end, else -1).  "_replay_edges": the step's edges in the
 * same order, ends packing src << 32 | dst (places among the step's
 * nodes), weight_ns the measured one (0 for dependencies and syncs), what
 * packing the edge's hta_cp_bound (HTA_CP_NONE for none) and, for a
 * kernel, 1 + its "_path_names" id << 8 and its place (the k-th launch of
 * its name in the step, as in "_kernel_runs") << 32.  A communication kernel's own
 * duration is no edge: the replay puts its end at the instance's. */
enum { HTA_REPLAY_PLAIN, HTA_REPLAY_COMM_START, HTA_REPLAY_COMM_END, HTA_REPLAY_STEP_HEAD };
enum {
    HTA_REPLAY_NODES_RANK,
    HTA_REPLAY_NODES_STEP,
    HTA_REPLAY_NODES_TS_NS,
    HTA_REPLAY_NODES_INFO,
    HTA_REPLAY_NODES_AUX,
    HTA_REPLAY_NODES_N_COLUMNS
};
extern const hta_table_spec hta_replay_nodes_table;

enum {
    HTA_REPLAY_EDGES_RANK,
    HTA_REPLAY_EDGES_ENDS,
    HTA_REPLAY_EDGES_WEIGHT_NS,
    HTA_REPLAY_EDGES_WHAT,
    HTA_REPLAY_EDGES_N_COLUMNS
};
extern const hta_table_spec hta_replay_edges_table;

#endif
