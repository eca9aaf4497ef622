/* pipeline.c: one run across MPI processes (see hta/run.h for the stages).
 *
 * Communication is a handful of collectives: the root broadcasts the file
 * list (or the reason there is nothing to do); an allreduce agrees on the
 * timeline's global range; every process sends the result tables the root
 * needs to the root with one gather (a barrier before it only makes the
 * gather's timing meaningful); the root broadcasts its decisions (exit code
 * so far, each file's rank, the temporary results file), after which every
 * process writes its own rows of the per-rank tables into that file
 * collectively (output/hdf5_in_place.c); and the root broadcasts the exit
 * status so that mpirun reports the same code everywhere.  Progress
 * messages travel on a duplicate communicator (run/progress.c). */
#include "hta/pipeline.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hta/cli.h"
#include "hta/clock.h"
#include "hta/crossrank.h"
#include "hta/progress.h"
#include "hta/run.h"
#include "hta/table_stash.h"
#include "hta/timeline.h"

#define ROOT 0

static void report(const char *line)
{
    fprintf(stderr, "hta-mpi: %s\n", line);
}

/* Creates an empty file beside the output and puts its path in probe:
 * unlike access(2), creating one also fails for root on a read-only file
 * system and for a "directory" that is a file. */
static int create_probe(const char *output, char probe[PATH_MAX], hta_error *err)
{
    char *dir = strdup(output);
    if (!dir)
        return hta_fail(err, "out of memory");
    char *slash = strrchr(dir, '/');
    const char *d = slash ? (slash == dir ? "/" : (*slash = '\0', dir)) : ".";
    snprintf(probe, PATH_MAX, "%s/.hta-mpi-probe.%ld", d, (long)getpid());
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0600);
    int rc = fd < 0 ? hta_fail(err, "%s: cannot write to directory %s: %s", output, d,
                               strerror(errno))
                    : 0;
    if (fd >= 0)
        close(fd);
    free(dir);
    return rc;
}

/* Root: refuse to clobber results, and fail early on an unwritable target. */
static int check_output(const hta_options *opt, hta_error *err)
{
    struct stat st;
    if (stat(opt->output, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return hta_fail(err, "%s: is a directory", opt->output);
        if (!opt->force)
            return hta_fail(err, "%s: already exists (use --force to overwrite)", opt->output);
    }
    char probe[PATH_MAX];
    if (create_probe(opt->output, probe, err))
        return -1;
    unlink(probe);
    return 0;
}

static int pack_file_list(const hta_file_list *list, hta_buf *out)
{
    if (hta_buf_put_u64(out, list->count))
        return -1;
    for (size_t i = 0; i < list->count; i++) {
        size_t len = strlen(list->paths[i]);
        if (hta_buf_put_u64(out, list->bytes[i]) || hta_buf_put_u32(out, (uint32_t)len) ||
            hta_buf_append(out, list->paths[i], len))
            return -1;
    }
    return 0;
}

static int unpack_file_list(const char *p, size_t len, hta_file_list *list)
{
    const char *end = p + len;
    uint64_t count;
    memset(list, 0, sizeof *list);
    if (len < sizeof count)
        return -1;
    memcpy(&count, p, sizeof count);
    p += sizeof count;
    list->paths = calloc(count ? count : 1, sizeof *list->paths);
    list->bytes = calloc(count ? count : 1, sizeof *list->bytes);
    if (!list->paths || !list->bytes)
        return -1;
    for (uint64_t i = 0; i < count; i++) {
        uint32_t n;
        if ((size_t)(end - p) < sizeof(uint64_t) + sizeof n)
            return -1;
        memcpy(&list->bytes[i], p, sizeof(uint64_t));
        memcpy(&n, p + sizeof(uint64_t), sizeof n);
        p += sizeof(uint64_t) + sizeof n;
        if ((size_t)(end - p) < n || !(list->paths[i] = strndup(p, n)))
            return -1;
        p += n;
        list->count = i + 1;
    }
    return 0;
}

/* Root decides what to analyse; everyone receives the list or the exit
 * code that ends the run before any work. */
static int share_file_list(const hta_options *opt, int me, hta_file_list *list)
{
    hta_buf packed = {0};
    int64_t header[2] = {HTA_EXIT_OK, 0}; /* exit code, packed length */
    if (me == ROOT) {
        hta_error err = {{0}};
        hta_file_list found;
        if (check_output(opt, &err) || hta_discover(opt, &found, &err)) {
            report(err.text);
            header[0] = HTA_EXIT_USAGE;
        } else {
            if (pack_file_list(&found, &packed))
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
    if (me != ROOT && hta_buf_reserve(&packed, (size_t)header[1]))
        return HTA_EXIT_INTERNAL;
    MPI_Bcast(packed.data, (int)header[1], MPI_BYTE, ROOT, MPI_COMM_WORLD);
    int rc = unpack_file_list(packed.data, (size_t)header[1], list);
    hta_buf_free(&packed);
    return rc ? HTA_EXIT_INTERNAL : HTA_EXIT_OK;
}

/* Every process writes its own rows into the results file, so the output
 * directory must be the same directory for all of them: a node-local /tmp
 * in a multi-node job, or a relative path under different working
 * directories, would otherwise fail only after all the work (or leave a
 * collective open waiting).  The root leaves a probe file there; every
 * process must see it under the same path.  0 or HTA_EXIT_USAGE, agreed. */
static int check_output_is_shared(const hta_options *opt, int me)
{
    char probe[PATH_MAX] = "";
    int failed = 0;
    if (me == ROOT) {
        hta_error unused;
        failed = create_probe(opt->output, probe, &unused) != 0;
    }
    MPI_Bcast(probe, PATH_MAX, MPI_CHAR, ROOT, MPI_COMM_WORLD);
    int first_blind = failed || access(probe, W_OK) == 0 ? INT_MAX : me;
    MPI_Allreduce(MPI_IN_PLACE, &first_blind, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (me != ROOT)
        return first_blind == INT_MAX ? HTA_EXIT_OK : HTA_EXIT_USAGE;
    unlink(probe);
    if (!failed && first_blind == INT_MAX)
        return HTA_EXIT_OK;
    char line[PATH_MAX + 256];
    if (failed)
        snprintf(line, sizeof line, "%s: cannot create a file beside it", opt->output);
    else
        snprintf(line, sizeof line, "%s: process %d does not see the output directory: every "
                 "process writes into the results file, so it must be on a file system "
                 "they all share", opt->output, first_blind);
    report(line);
    return HTA_EXIT_USAGE;
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
 * next trace starts (hta/table_stash.h); out gets them all after the last
 * one, whose own tables are moved rather than packed and unpacked (the
 * whole of the work for a process with one trace). */
static int analyze_my_files(const hta_file_list *list, int me, int n_processes,
                            const hta_options *opt, hta_head_start *head, double started,
                            hta_tableset *out, hta_error *err)
{
    int *owner = malloc((list->count ? list->count : 1) * sizeof *owner);
    if (!owner || hta_assign(list, n_processes, owner)) {
        free(owner);
        return hta_fail(err, "out of memory while analysing traces");
    }
    hta_progress progress;
    hta_progress_start(&progress, list, owner, !opt->quiet, started);
    hta_table_stash stash = {0};
    hta_tableset latest = {0};
    int rc = 0, taken = 0;
    for (size_t i = 0; i < list->count && rc == 0; i++) {
        if (owner[i] != me)
            continue;
        if (latest.n_tables)
            rc = hta_table_stash_add(&stash, &latest);
        hta_tableset_free(&latest);
        taken = rc ? 0 : hta_head_start_take(head, list, i, me, &latest);
        rc = rc || taken < 0 ||
             (!taken && hta_analyze_file(list->paths[i], list->bytes[i], (int64_t)i, me, opt,
                                         &latest));
        if (opt->verbose)
            fprintf(stderr, "hta-mpi: process %d analysed %s%s\n", me, list->paths[i],
                    taken > 0 ? " (begun during MPI start-up)" : "");
        hta_progress_file_done(&progress, i);
    }
    hta_progress_finish(&progress);
    if (opt->verbose)
        report_stash(me, &stash);
    if (rc == 0 && hta_table_stash_unpack(&stash, out, err))
        rc = -1; /* err says why */
    else if (rc || hta_tableset_move_rows(out, &latest))
        rc = hta_fail(err, "out of memory while analysing traces");
    hta_tableset_free(&latest);
    hta_table_stash_free(&stash);
    free(owner);
    return rc;
}

/* Sends every other process's packed tables to the root, which merges
 * them after its own, moved rather than packed (mine is emptied there). */
static int gather_tables(hta_tableset *mine, int me, int n_processes, hta_tableset *all,
                         hta_error *err)
{
    hta_buf packed = {0};
    int failed = me != ROOT && (hta_tableset_pack(mine, &packed) || packed.len > INT_MAX);
    int len = failed ? 0 : (int)packed.len;
    int *lens = NULL, *offsets = NULL;
    char *data = NULL;
    if (me == ROOT) {
        lens = calloc((size_t)n_processes, sizeof *lens);
        offsets = calloc((size_t)n_processes, sizeof *offsets);
    }
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, ROOT, MPI_COMM_WORLD);
    long long total = 0;
    if (me == ROOT) {
        for (int p = 0; p < n_processes; p++) {
            offsets[p] = (int)total;
            total += lens[p];
        }
        if (total > INT_MAX)
            failed = 1;
        data = malloc(total > 0 && total <= INT_MAX ? (size_t)total : 1);
    }
    MPI_Gatherv(packed.data, len, MPI_BYTE, data, lens, offsets, MPI_BYTE, ROOT,
                MPI_COMM_WORLD);
    hta_buf_free(&packed);
    int rc = failed ? hta_fail(err, "result tables too large to gather") : 0;
    if (me == ROOT && rc == 0 && hta_tableset_move_rows(all, mine))
        rc = hta_fail(err, "out of memory gathering the result tables");
    if (me == ROOT && rc == 0)
        for (int p = 0; p < n_processes && rc == 0; p++) /* the root, 0, came first */
            if (p != ROOT)
                rc = hta_tableset_merge(all, data + offsets[p], (size_t)lens[p], err);
    free(lens);
    free(offsets);
    free(data);
    return rc;
}

/* The timeline's bins span every rank, so the processes agree on the
 * global GPU range before binning their own ranks. */
static int bin_timeline(hta_tableset *mine, const hta_options *opt, hta_run_info *info,
                        hta_error *err)
{
    int64_t lo = 0, hi = 0;
    int64_t local[2] = {INT64_MAX, INT64_MAX}, global[2];
    if (hta_timeline_local_range(mine, &lo, &hi)) {
        local[0] = lo;
        local[1] = -hi;
    }
    MPI_Allreduce(local, global, 2, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
    if (global[0] == INT64_MAX)
        return 0;
    info->timeline_start_ns = global[0];
    info->timeline_end_ns = -global[1];
    return hta_timeline_bin(mine, opt->bins, info->timeline_start_ns, info->timeline_end_ns, err);
}

static int report_failed_ranks(const hta_tableset *set)
{
    const hta_table *ranks = hta_tableset_find(set, "ranks");
    long status = hta_table_column(ranks, "status");
    long error = hta_table_column(ranks, "error");
    int any = 0;
    for (size_t r = 0; r < ranks->n_rows; r++) {
        const hta_cell *row = hta_table_row(ranks, r);
        if (strcmp(row[status].s, "failed") == 0) {
            report(row[error].s);
            any = 1;
        }
    }
    return any;
}

int hta_root_statistics(hta_tableset *all, const hta_options *opt, hta_rank_map *map,
                        hta_error *err)
{
    return hta_resolve_ranks(all, opt, map, err) || hta_find_outliers(all, opt, err) ||
                   hta_kernel_type_totals(all, err) || hta_kernel_comparison(all, opt, err) ||
                   hta_collective_wait(all, err) || hta_step_comparison(all, err) ||
                   hta_rank_stragglers(all, opt, err)
               ? -1
               : 0;
}

/* Moves the tables that are written in place out of mine: they are never
 * gathered (output/hdf5_in_place.c). */
static int take_in_place_tables(hta_tableset *mine, hta_tableset *in_place)
{
    in_place->tables = malloc((mine->n_tables ? mine->n_tables : 1) * sizeof *in_place->tables);
    if (!in_place->tables)
        return -1;
    size_t kept = 0;
    for (size_t i = 0; i < mine->n_tables; i++) {
        hta_table *t = mine->tables[i];
        if (hta_table_is_written_in_place(t->name))
            in_place->tables[in_place->n_tables++] = t;
        else
            mine->tables[kept++] = t;
    }
    mine->n_tables = kept;
    return 0;
}

/* Root: everything between the gather and the in-place tables. */
static int root_tables(hta_tableset *all, const hta_options *opt, hta_run_info *info,
                       hta_rank_map *map, char **tmp_path)
{
    hta_error err = {{0}};
    double start = MPI_Wtime();
    if (hta_root_statistics(all, opt, map, &err)) {
        report(err.text);
        return HTA_EXIT_INTERNAL;
    }
    int some_failed = report_failed_ranks(all);
    info->write_start = MPI_Wtime();
    info->crossrank_seconds = info->write_start - start;
    info->wall_seconds = info->write_start - info->wall_seconds;
    if (hta_write_root_tables(all, opt, info, tmp_path, &err)) {
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

/* The root's decisions to every process: the exit code so far, where each
 * file's rows go, and the results file being written.  -1 (on every
 * process) when a process has no room for them. */
static int share_decisions(int *code, hta_rank_map *map, char **tmp_path)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int64_t header[3] = {*code, (int64_t)map->n_files, *tmp_path ? (int64_t)strlen(*tmp_path) : 0};
    bcast_asleep(header, 3, MPI_INT64_T);
    *code = (int)header[0];
    if (*code == HTA_EXIT_INTERNAL)
        return 0;
    if (me != ROOT) {
        map->n_files = (size_t)header[1];
        map->rank_of_file = malloc((map->n_files ? map->n_files : 1) * sizeof *map->rank_of_file);
        *tmp_path = calloc((size_t)header[2] + 1, 1);
    }
    int failed = !map->rank_of_file || !*tmp_path;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (failed)
        return -1;
    MPI_Bcast(map->rank_of_file, (int)map->n_files, MPI_INT64_T, ROOT, MPI_COMM_WORLD);
    MPI_Bcast(*tmp_path, (int)header[2], MPI_CHAR, ROOT, MPI_COMM_WORLD);
    return 0;
}

/* Every process: its own rows of the in-place tables into the file; then
 * the root publishes the file and prints the summary. */
static int finish_results(hta_tableset *in_place, const hta_tableset *all,
                          const hta_options *opt, hta_run_info *info,
                          const hta_rank_map *map, const char *tmp_path, int code)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    hta_error err = {{0}};
    int failed = hta_apply_rank_map(in_place, map, &err) != 0;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (failed && me == ROOT)
        report("out of memory while ordering the per-rank tables");
    if (!failed && hta_write_in_place_tables(tmp_path, opt->output, in_place, map, &err)) {
        if (me == ROOT)
            report(err.text);
        failed = 1;
    }
    if (me != ROOT)
        return code;
    if (hta_publish_results(tmp_path, opt->output, !failed, &err)) {
        if (!failed)
            report(err.text);
        return HTA_EXIT_INTERNAL;
    }
    if (opt->verbose)
        fprintf(stderr, "hta-mpi: after the last trace: gather %.3f s, cross-rank %.3f s, "
                        "HDF5 write %.3f s\n",
                info->gather_seconds, info->crossrank_seconds, MPI_Wtime() - info->write_start);
    if (!opt->quiet)
        hta_print_summary(all, opt, info);
    return code;
}

int hta_run(const hta_options *opt, const char *tool_version, hta_head_start *head)
{
    int me, n_processes;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n_processes);
    /* The run's clock starts with its work: a head start's began before
     * MPI_Init, so it is set back by the time since then. */
    double head_start_seconds = head->begun_at > 0 ? hta_monotonic_seconds() - head->begun_at : 0;
    hta_run_info info = {.tool_version = tool_version, .n_processes = n_processes,
                         .wall_seconds = MPI_Wtime() - head_start_seconds};
    hta_file_list list;
    int code = share_file_list(opt, me, &list);
    if (code != HTA_EXIT_OK)
        return code;
    if ((code = check_output_is_shared(opt, me)) != HTA_EXIT_OK) {
        hta_file_list_free(&list);
        return code;
    }
    info.files = &list;

    hta_tableset mine = {0}, in_place = {0}, all = {0};
    hta_error err = {{0}};
    int local_failed =
        analyze_my_files(&list, me, n_processes, opt, head, info.wall_seconds, &mine, &err) != 0;
    if (local_failed)
        report(err.text);
    if (bin_timeline(&mine, opt, &info, &err)) {
        report(err.text);
        local_failed = 1;
    }
    if (take_in_place_tables(&mine, &in_place))
        local_failed = 1;
    /* Only for timing: the gather starts when the last process is done. */
    MPI_Barrier(MPI_COMM_WORLD);
    double gather_start = MPI_Wtime();
    if (gather_tables(&mine, me, n_processes, &all, &err) && me == ROOT) {
        report(err.text);
        local_failed = 1;
    }
    info.gather_seconds = MPI_Wtime() - gather_start;
    hta_tableset_free(&mine);
    int any_failed = 0;
    MPI_Allreduce(&local_failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    code = HTA_EXIT_INTERNAL;
    hta_rank_map map = {0};
    char *tmp_path = NULL;
    if (me == ROOT && !any_failed)
        code = root_tables(&all, opt, &info, &map, &tmp_path);
    if (!any_failed && share_decisions(&code, &map, &tmp_path) != 0) {
        code = HTA_EXIT_INTERNAL;
        if (me == ROOT)
            hta_publish_results(tmp_path, opt->output, 0, &err); /* removes it */
    }
    if (code != HTA_EXIT_INTERNAL)
        code = finish_results(&in_place, &all, opt, &info, &map, tmp_path, code);
    bcast_asleep(&code, 1, MPI_INT); /* the root's exit code everywhere */
    free(tmp_path);
    hta_rank_map_free(&map);
    hta_tableset_free(&in_place);
    hta_tableset_free(&all);
    hta_file_list_free(&list);
    return code;
}
