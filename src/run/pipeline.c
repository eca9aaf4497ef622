/* pipeline.c: one run across MPI processes, stage by stage.
 *
 * Communication is a handful of collectives: the root broadcasts the file
 * list (or the reason there is nothing to do); an allreduce agrees on the
 * timeline's global range; every process sends the result tables the root
 * needs to the root with one gather (crossrank/exchange/processes.h; a barrier
 * before it only makes the gather's timing meaningful); the root resolves
 * ranks and broadcasts each file's rank, so that the processes run the
 * cross-rank stage together (crossrank/crossrank.h: the collectives
 * matched by process group among them, the root getting per-rank figures
 * and summary rows, never every rank's kernels or every instance, then
 * the statistics there); the root broadcasts its decisions (exit code so
 * far, the temporary results file), after which every process writes its
 * own rows of the per-rank tables into that file collectively
 * (output/hdf5_in_place.c); and the root broadcasts the exit status so
 * that mpirun reports the same code everywhere.  Progress messages travel
 * on a duplicate communicator (run/progress.c). */
#include "run/pipeline.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/ranks_table.h"
#include "crossrank/exchange/collective_groups.h"
#include "crossrank/crossrank.h"
#include "hta/error.h" /* the exit codes */
#include "output/hdf5_in_place.h"
#include "output/hdf5_writer.h"
#include "output/results_file.h"
#include "output/run_info.h"
#include "output/summary.h"
#include "written_trace/trace_outliers.h"
#include "written_trace/trace_waits.h"
#include "run/analyse_file.h"
#include "run/discover.h"
#include "run/file_list.h"
#include "run/progress.h"
#include "analysis/timeline_bins.h"
#include "table/table_stash.h"
#include "util/clock.h"

#define ROOT HTA_ROOT

static void report(const char *line)
{
    fprintf(stderr, "hta-mpi: %s\n", line);
}

/* One run as this process sees it: what every stage reads and fills. */
typedef struct hta_run_context {
    const hta_settings *opt;
    int me, n_processes;
    hta_head_start *head;
    double started_at;         /* MPI_Wtime when the run's work began */
    hta_file_list list;        /* owned; the same on every process */
    hta_run_info info;
    hta_tableset mine;         /* owned: this process's tables to gather */
    hta_tableset in_place;     /* owned: its tables written in place */
    hta_tableset comm;         /* owned: its tables matched among the processes */
    double crossrank_start;    /* MPI_Wtime when ranks began to be resolved */
    hta_tableset all;          /* owned, root: every gathered table */
    hta_rank_map map;          /* owned: root's decisions, then everyone's */
    char *tmp_path;            /* owned: the results file being written */
} hta_run_context;

/* Root decides what to analyse; everyone receives the list or the exit
 * code that ends the run before any work. */
static int share_file_list(hta_run_context *run)
{
    const hta_settings *opt = run->opt;
    hta_buf packed = {0};
    int64_t header[2] = {HTA_EXIT_OK, 0}; /* exit code, packed length */
    if (run->me == ROOT) {
        hta_error err = {{0}};
        hta_file_list found;
        if (hta_results_file_check(opt->output.path, opt->output.force, &err) ||
            hta_discover(opt, &found, &err)) {
            report(err.text);
            header[0] = HTA_EXIT_USAGE;
        } else {
            if (hta_file_list_pack(&found, &packed))
                header[0] = HTA_EXIT_INTERNAL;
            hta_file_list_free(&found);
            header[1] = (int64_t)packed.len;
        }
    }
    MPI_Bcast(header, 2, MPI_INT64_T, ROOT, MPI_COMM_WORLD);
    if (header[0] != HTA_EXIT_OK) {
        hta_buf_free(&packed);
        return (int)header[0];
    }
    if (run->me != ROOT && hta_buf_reserve(&packed, (size_t)header[1]))
        return HTA_EXIT_INTERNAL;
    MPI_Bcast(packed.data, (int)header[1], MPI_BYTE, ROOT, MPI_COMM_WORLD);
    int rc = hta_file_list_unpack(packed.data, (size_t)header[1], &run->list);
    hta_buf_free(&packed);
    return rc ? HTA_EXIT_INTERNAL : HTA_EXIT_OK;
}

/* -v: how much of the stash went to disk, and why none or no more could. */
static void report_stash(int me, const hta_table_stash *stash)
{
    const hta_spill_file *file = &stash->file;
    if (file->len)
        fprintf(stderr, "hta-mpi: process %d kept %.1f MB of result tables in a temporary "
                        "file in %s\n",
                me, (double)file->len / 1e6, hta_spill_file_dir());
    if (file->unusable)
        fprintf(stderr, "hta-mpi: process %d kept result tables in memory: cannot write a "
                        "temporary file in %s: %s\n",
                me, hta_spill_file_dir(), strerror(file->error));
}

/* Each trace's tables go into the stash, packed and deflated, once the
 * next trace starts (table/table_stash.h); run->mine gets them all after
 * the last one, whose own tables are moved rather than packed and unpacked
 * (the whole of the work for a process with one trace). */
static int analyse_my_files(hta_run_context *run, hta_error *err)
{
    const hta_file_list *list = &run->list;
    const hta_settings *opt = run->opt;
    int me = run->me;
    int *owner = malloc((list->count ? list->count : 1) * sizeof *owner);
    if (!owner || hta_assign(list, run->n_processes, owner)) {
        free(owner);
        return hta_fail(err, "out of memory while analysing traces");
    }
    hta_progress progress;
    hta_progress_start(&progress, list, owner, !opt->run.quiet, run->started_at);
    hta_table_stash stash = {0};
    hta_tableset latest = {0};
    int rc = 0;
    hta_head_start_take_result taken = HTA_HEAD_START_NOT_TAKEN;
    for (size_t i = 0; i < list->count && rc == 0; i++) {
        if (owner[i] != me)
            continue;
        if (latest.n_tables)
            rc = hta_table_stash_add(&stash, &latest);
        hta_tableset_free(&latest);
        taken = rc ? HTA_HEAD_START_NOT_TAKEN
                   : hta_head_start_take(run->head, list, i, me, &latest);
        rc = rc || taken == HTA_HEAD_START_FAILED ||
             (taken == HTA_HEAD_START_NOT_TAKEN &&
              hta_analyse_file(list->paths[i], list->bytes[i], (int64_t)i, me, opt, &latest));
        if (opt->run.verbose)
            fprintf(stderr, "hta-mpi: process %d analysed %s%s\n", me, list->paths[i],
                    taken == HTA_HEAD_START_TAKEN ? " (begun during MPI start-up)" : "");
        hta_progress_file_done(&progress, i, rc == 0 && hta_analysed_file_failed(&latest));
    }
    hta_progress_finish(&progress);
    if (opt->run.verbose)
        report_stash(me, &stash);
    if (rc == 0 && hta_table_stash_unpack(&stash, &run->mine, err))
        rc = -1; /* err says why */
    else if (rc || hta_tableset_move_rows(&run->mine, &latest))
        rc = hta_fail(err, "out of memory while analysing traces");
    hta_tableset_free(&latest);
    hta_table_stash_free(&stash);
    free(owner);
    return rc;
}

/* The timeline's bins span every rank, so the processes agree on the
 * global GPU range before binning their own ranks. */
static int bin_timeline(hta_run_context *run, hta_error *err)
{
    hta_run_info *info = &run->info;
    int64_t lo = 0, hi = 0;
    int64_t local[2] = {INT64_MAX, INT64_MAX}, global[2];
    if (hta_timeline_local_range(&run->mine, &lo, &hi)) {
        local[0] = lo;
        local[1] = -hi;
    }
    MPI_Allreduce(local, global, 2, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
    if (global[0] == INT64_MAX)
        return 0;
    info->timeline_start_ns = global[0];
    info->timeline_end_ns = -global[1];
    return hta_timeline_bin(&run->mine, run->opt->analysis.bins, info->timeline_start_ns,
                            info->timeline_end_ns, err);
}

static int report_failed_ranks(const hta_tableset *set)
{
    const hta_table *ranks = hta_tableset_find(set, hta_ranks_table.name);
    int any = 0;
    for (size_t r = 0; r < ranks->n_rows; r++) {
        const hta_cell *row = hta_table_row(ranks, r);
        if (strcmp(row[HTA_RANKS_STATUS].s, "failed") == 0) {
            report(row[HTA_RANKS_ERROR].s);
            any = 1;
        }
    }
    return any;
}

int hta_crossrank_alone(hta_tableset *all, const hta_settings *opt, hta_rank_map *map,
                        hta_error *err)
{
    if (hta_resolve_ranks(all, &opt->run.ranks, map, err))
        return -1;
    if (hta_rank_map_find_nodes(map, all, &opt->crossrank, err))
        return -1;
    hta_processes alone = {.me = HTA_ROOT, .n = 1, .mpi = 0};
    hta_tableset exchanged = {0};
    size_t n_valid = 0;
    int64_t *valid = hta_rank_map_kept_ranks(map, &n_valid), *nodes = NULL;
    int rc = !valid || hta_rank_map_kept_nodes(map, valid, n_valid, &nodes) ||
             hta_tableset_take(all, HTA_TABLE_EXCHANGED, &exchanged);
    hta_crossrank_tables t = {.all = all, .exchanged = &exchanged, .valid = valid,
                              .valid_node = nodes, .n_valid = n_valid, .hosts = &map->hosts,
                              .in_place = all};
    rc = rc ? hta_fail(err, "out of memory while matching the collectives")
            : hta_crossrank(&alone, &t, &opt->crossrank, err);
    hta_tableset_free(&exchanged);
    free(valid);
    free(nodes);
    return rc;
}

/* Sorts mine by where its tables go: the tables written in place to
 * in_place, those matched among the processes to exchanged (NULL: none
 * left to match); those that stay on the process are dropped, and what is
 * left is gathered. */
static int route_tables(hta_tableset *mine, hta_tableset *in_place, hta_tableset *exchanged)
{
    if (hta_tableset_take(mine, HTA_TABLE_IN_PLACE, in_place) ||
        (exchanged && hta_tableset_take(mine, HTA_TABLE_EXCHANGED, exchanged)))
        return -1;
    hta_tableset_keep(mine, HTA_TABLE_GATHERED);
    return 0;
}

/* Root, after the cross-rank stage: the failed traces reported and the
 * root's tables written. */
static int root_tables(hta_run_context *run)
{
    hta_run_info *info = &run->info;
    hta_error err = {{0}};
    int some_failed = report_failed_ranks(&run->all);
    info->write_start = MPI_Wtime();
    info->crossrank_seconds = info->write_start - run->crossrank_start;
    info->wall_seconds = info->write_start - run->started_at;
    if (hta_write_root_tables(&run->all, run->opt, info, &run->tmp_path, &err)) {
        report(err.text);
        return HTA_EXIT_INTERNAL;
    }
    return some_failed ? HTA_EXIT_SOME_FAILED : HTA_EXIT_OK;
}

/* A broadcast from the root that the others wait for asleep rather than in
 * a busy-polling MPI_Bcast, so that on a machine with fewer cores than
 * processes the root's cross-rank phase and HDF5 write get the cores. */
static void bcast_asleep(void *data, int count, MPI_Datatype type)
{
    MPI_Request request;
    int done = 0;
    MPI_Ibcast(data, count, type, ROOT, MPI_COMM_WORLD, &request);
    for (MPI_Test(&request, &done, MPI_STATUS_IGNORE); !done;
         MPI_Test(&request, &done, MPI_STATUS_IGNORE))
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
}

/* Root resolves ranks (run/ranks.h) and finds their nodes; every process
 * receives where each file's rows go and the node of its rank (the
 * collective summary splits instances within a node from the others).
 * -1 on every process when the root failed or a process has no room for
 * the map. */
static int share_rank_map(hta_run_context *run)
{
    hta_rank_map *map = &run->map;
    int64_t header[3] = {0, 0, 0}; /* failed, number of files, nodes known */
    if (run->me == ROOT) {
        hta_error err = {{0}};
        if (hta_resolve_ranks(&run->all, &run->opt->run.ranks, map, &err)) {
            report(err.text);
            header[0] = 1;
        } else if (hta_rank_map_find_nodes(map, &run->all, &run->opt->crossrank, &err)) {
            report(err.text);
            header[0] = 1;
        }
        header[1] = (int64_t)map->n_files;
        header[2] = map->node_of_file != NULL;
    }
    bcast_asleep(header, 3, MPI_INT64_T);
    if (header[0])
        return -1;
    size_t bytes = (header[1] ? (size_t)header[1] : 1) * sizeof(int64_t);
    if (run->me != ROOT) {
        map->n_files = (size_t)header[1];
        map->rank_of_file = malloc(bytes);
        map->node_of_file = header[2] ? malloc(bytes) : NULL;
    }
    int failed = !map->rank_of_file || (header[2] && !map->node_of_file);
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (failed)
        return -1;
    MPI_Bcast(map->rank_of_file, (int)map->n_files, MPI_INT64_T, ROOT, MPI_COMM_WORLD);
    if (header[2])
        MPI_Bcast(map->node_of_file, (int)map->n_files, MPI_INT64_T, ROOT, MPI_COMM_WORLD);
    return 0;
}

/* --write-traces: each of this process's ranks' kernel waits into the
 * trace written for it.  A failure is reported, not fatal: the results do
 * not depend on it. */
static void add_waits_to_written_traces(const hta_run_context *run, const hta_table *waits)
{
    hta_error err = {{0}};
    size_t n_files = run->map.n_files < run->list.count ? run->map.n_files : run->list.count;
    if (hta_add_waits_to_written_traces(run->opt->output.write_traces, run->list.paths,
                                        run->map.rank_of_file, n_files, waits, &err))
        report(err.text);
}

/* Every process: its exchanged tables relabelled with the map, then the
 * cross-rank stage (crossrank/crossrank.h): the collectives matched among
 * the processes, the instance rows kept to be written in place, the rest
 * gathered, and the statistics on the root.  -1 on every process when the
 * matching failed, on the root when a statistic did. */
static int cross_ranks(hta_run_context *run)
{
    hta_error err = {{0}};
    hta_processes pr = hta_processes_of_job();
    hta_tableset kept = {0};
    size_t n_valid = 0;
    int64_t *valid = hta_rank_map_kept_ranks(&run->map, &n_valid), *nodes = NULL;
    int failed = !valid || hta_rank_map_kept_nodes(&run->map, valid, n_valid, &nodes) ||
                 hta_apply_rank_map(&run->comm, &run->map, &err) != 0;
    failed = hta_processes_any(&pr, failed);
    if (failed && run->me == ROOT)
        report("out of memory while matching the collectives");
    hta_crossrank_tables t = {.all = &run->all, .exchanged = &run->comm, .valid = valid,
                              .valid_node = nodes, .n_valid = n_valid,
                              .hosts = &run->map.hosts, .in_place = &run->in_place,
                              .kept = run->opt->output.write_traces ? &kept : NULL};
    if (!failed && hta_crossrank(&pr, &t, &run->opt->crossrank, &err)) {
        if (err.text[0])
            report(err.text);
        failed = 1;
    }
    free(valid);
    free(nodes);
    hta_tableset_free(&run->comm);
    if (!failed && run->opt->output.write_traces)
        add_waits_to_written_traces(run, hta_tableset_find(&kept, hta_kernel_waits_table.name));
    hta_tableset_free(&kept);
    return failed ? -1 : 0;
}

/* The root's decisions to every process: the exit code so far and the
 * results file being written.  -1 (on every process) when a process has
 * no room for them. */
static int share_decisions(hta_run_context *run, int *code)
{
    char **tmp_path = &run->tmp_path;
    int64_t header[2] = {*code, *tmp_path ? (int64_t)strlen(*tmp_path) : 0};
    bcast_asleep(header, 2, MPI_INT64_T);
    *code = (int)header[0];
    if (*code == HTA_EXIT_INTERNAL)
        return 0;
    if (run->me != ROOT)
        *tmp_path = calloc((size_t)header[1] + 1, 1);
    int failed = !*tmp_path;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (failed)
        return -1;
    MPI_Bcast(*tmp_path, (int)header[1], MPI_CHAR, ROOT, MPI_COMM_WORLD);
    return 0;
}

/* Every process: its own rows of the in-place tables into the file; then
 * the root publishes the file and prints the summary. */
static int finish_results(hta_run_context *run, int code)
{
    const hta_settings *opt = run->opt;
    int me = run->me;
    hta_error err = {{0}};
    size_t n_kept = 0;
    int64_t *kept = NULL;
    int failed = hta_apply_rank_map(&run->in_place, &run->map, &err) != 0 ||
                 !(kept = hta_rank_map_kept_ranks(&run->map, &n_kept));
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (failed && me == ROOT)
        report("out of memory while ordering the per-rank tables");
    if (!failed && hta_write_in_place_tables(run->tmp_path, opt->output.path, &run->in_place,
                                             kept, n_kept, &err)) {
        if (me == ROOT)
            report(err.text);
        failed = 1;
    }
    free(kept);
    if (me != ROOT)
        return code;
    if (failed) {
        hta_results_file_discard(run->tmp_path);
        return HTA_EXIT_INTERNAL;
    }
    if (hta_results_file_publish(run->tmp_path, opt->output.path, &err)) {
        report(err.text);
        return HTA_EXIT_INTERNAL;
    }
    const char *traces = opt->output.write_traces;
    if (traces && hta_add_outliers_to_written_traces(&run->all, traces, &err))
        report(err.text);
    if (opt->run.verbose)
        fprintf(stderr, "hta-mpi: after the last trace: gather %.3f s, cross-rank %.3f s, "
                        "HDF5 write %.3f s\n",
                run->info.gather_seconds, run->info.crossrank_seconds,
                MPI_Wtime() - run->info.write_start);
    if (!opt->run.quiet)
        hta_print_summary(&run->all, &opt->output, &run->info);
    return code;
}

static void run_context_free(hta_run_context *run)
{
    free(run->tmp_path);
    hta_rank_map_free(&run->map);
    hta_tableset_free(&run->in_place);
    hta_tableset_free(&run->comm);
    hta_tableset_free(&run->all);
    hta_tableset_free(&run->mine);
    hta_file_list_free(&run->list);
}

int hta_run(const hta_settings *opt, const char *tool_version, hta_head_start *head)
{
    hta_run_context run = {.opt = opt, .head = head};
    MPI_Comm_rank(MPI_COMM_WORLD, &run.me);
    MPI_Comm_size(MPI_COMM_WORLD, &run.n_processes);
    /* The run's clock starts with its work: a head start's began before
     * MPI_Init, so it is set back by the time since then. */
    double head_start_seconds = head->begun_at > 0 ? hta_monotonic_seconds() - head->begun_at : 0;
    run.started_at = MPI_Wtime() - head_start_seconds;
    run.info = (hta_run_info){.tool_version = tool_version, .n_processes = run.n_processes};
    int code = share_file_list(&run);
    hta_error err = {{0}};
    if (code == HTA_EXIT_OK && hta_results_file_check_shared(opt->output.path, &err)) {
        if (run.me == ROOT)
            report(err.text);
        code = HTA_EXIT_USAGE;
    }
    if (code != HTA_EXIT_OK) {
        run_context_free(&run);
        return code;
    }
    run.info.trace_paths = run.list.paths;
    run.info.n_traces = run.list.count;

    int local_failed = analyse_my_files(&run, &err) != 0;
    if (local_failed)
        report(err.text);
    if (bin_timeline(&run, &err)) {
        report(err.text);
        local_failed = 1;
    }
    if (route_tables(&run.mine, &run.in_place, &run.comm))
        local_failed = 1;
    /* Only for timing: the gather starts when the last process is done. */
    MPI_Barrier(MPI_COMM_WORLD);
    double gather_start = MPI_Wtime();
    hta_processes pr = hta_processes_of_job();
    if (hta_processes_gather_tables(&pr, &run.mine, &run.all, &err) && run.me == ROOT) {
        report(err.text);
        local_failed = 1;
    }
    run.info.gather_seconds = MPI_Wtime() - gather_start;
    hta_tableset_free(&run.mine);
    int any_failed = 0;
    MPI_Allreduce(&local_failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    code = HTA_EXIT_INTERNAL;
    run.crossrank_start = MPI_Wtime();
    if (!any_failed && share_rank_map(&run) == 0 && cross_ranks(&run) == 0 && run.me == ROOT)
        code = root_tables(&run);
    if (!any_failed && share_decisions(&run, &code) != 0) {
        code = HTA_EXIT_INTERNAL;
        if (run.me == ROOT)
            hta_results_file_discard(run.tmp_path);
    }
    if (code != HTA_EXIT_INTERNAL)
        code = finish_results(&run, code);
    bcast_asleep(&code, 1, MPI_INT); /* the root's exit code everywhere */
    run_context_free(&run);
    return code;
}
