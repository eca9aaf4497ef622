/* global_path_results.c: the tables of the job's critical path, on the
 * root, from the pieces the processes walked (see crossrank/job_path/global_path.h;
 * docs/crossrank.md, The job's critical path).
 *
 * "_path_walk" holds each step's pieces numbered back from the step's
 * end; they are put in time order as /global_critical_path, added up per
 * step by cause and per (step, rank), and compared per name with the
 * ranks' own time in that name: the critical-path imbalance, Scalasca's
 * max(0, time on the path - mean time over the ranks), over every step,
 * counting the time operators (CPU ops and kernels) take, not the launch
 * and kernel-to-kernel gaps put down to them. */
#include "crossrank/job_path/global_path.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/critical_path.h"
#include "util/ranked.h"
#include "util/strtab.h"

static const hta_column PATH_COLUMNS[HTA_GLOBAL_PATH_N_COLUMNS] = {
    [HTA_GLOBAL_PATH_STEP] = {"step", HTA_COL_I64},
    [HTA_GLOBAL_PATH_POSITION] = {"position", HTA_COL_I64},
    [HTA_GLOBAL_PATH_RANK] = {"rank", HTA_COL_I64},
    [HTA_GLOBAL_PATH_NAME_ID] = {"name_id", HTA_COL_I64},
    [HTA_GLOBAL_PATH_BOUND_BY] = {"bound_by", HTA_COL_STR},
    [HTA_GLOBAL_PATH_TIME_US] = {"time_us", HTA_COL_F64},
};
const hta_table_spec hta_global_path_table = {"global_critical_path", PATH_COLUMNS,
                                              HTA_GLOBAL_PATH_N_COLUMNS, HTA_TABLE_GATHERED};

static const hta_column NAME_COLUMNS[HTA_GLOBAL_PATH_NAMES_N_COLUMNS] = {
    [HTA_GLOBAL_PATH_NAMES_NAME_ID] = {"name_id", HTA_COL_I64},
    [HTA_GLOBAL_PATH_NAMES_NAME] = {"name", HTA_COL_STR},
};
const hta_table_spec hta_global_path_names_table = {"global_critical_path_names", NAME_COLUMNS,
                                                    HTA_GLOBAL_PATH_NAMES_N_COLUMNS,
                                                    HTA_TABLE_GATHERED};

static const hta_column STEP_COLUMNS[HTA_GLOBAL_PATH_STEPS_N_COLUMNS] = {
    [HTA_GLOBAL_PATH_STEPS_STEP] = {"step", HTA_COL_I64},
    [HTA_GLOBAL_PATH_STEPS_END_RANK] = {"end_rank", HTA_COL_I64},
    [HTA_GLOBAL_PATH_STEPS_PATH_US] = {"path_us", HTA_COL_F64},
    [HTA_GLOBAL_PATH_STEPS_RANKS] = {"ranks", HTA_COL_I64},
    [HTA_GLOBAL_PATH_STEPS_HOPS] = {"hops", HTA_COL_I64},
    [HTA_GLOBAL_PATH_STEPS_CPU_BOUND_US] = {"cpu_bound_us", HTA_COL_F64},
    [HTA_GLOBAL_PATH_STEPS_CPU_BOUND_US + 1] = {"data_loading_us", HTA_COL_F64},
    [HTA_GLOBAL_PATH_STEPS_CPU_BOUND_US + 2] = {"gpu_compute_bound_us", HTA_COL_F64},
    [HTA_GLOBAL_PATH_STEPS_CPU_BOUND_US + 3] = {"gpu_communication_bound_us", HTA_COL_F64},
    [HTA_GLOBAL_PATH_STEPS_CPU_BOUND_US + 4] = {"gpu_kernel_kernel_overhead_us", HTA_COL_F64},
    [HTA_GLOBAL_PATH_STEPS_CPU_BOUND_US + 5] = {"gpu_kernel_launch_overhead_us", HTA_COL_F64},
};
const hta_table_spec hta_global_path_steps_table = {
    "global_critical_path_steps", STEP_COLUMNS, HTA_GLOBAL_PATH_STEPS_N_COLUMNS,
    HTA_TABLE_GATHERED};

static const hta_column RANK_COLUMNS[HTA_GLOBAL_PATH_RANKS_N_COLUMNS] = {
    [HTA_GLOBAL_PATH_RANKS_STEP] = {"step", HTA_COL_I64},
    [HTA_GLOBAL_PATH_RANKS_RANK] = {"rank", HTA_COL_I64},
    [HTA_GLOBAL_PATH_RANKS_TIME_US] = {"time_us", HTA_COL_F64},
    [HTA_GLOBAL_PATH_RANKS_SHARE_PCT] = {"share_pct", HTA_COL_F64},
};
const hta_table_spec hta_global_path_ranks_table = {
    "global_critical_path_ranks", RANK_COLUMNS, HTA_GLOBAL_PATH_RANKS_N_COLUMNS,
    HTA_TABLE_GATHERED};

static const hta_column IMBALANCE_COLUMNS[HTA_GLOBAL_PATH_IMBALANCE_N_COLUMNS] = {
    [HTA_GLOBAL_PATH_IMBALANCE_NAME] = {"name", HTA_COL_STR},
    [HTA_GLOBAL_PATH_IMBALANCE_PATH_US] = {"path_us", HTA_COL_F64},
    [HTA_GLOBAL_PATH_IMBALANCE_MEAN_US] = {"mean_us", HTA_COL_F64},
    [HTA_GLOBAL_PATH_IMBALANCE_IMBALANCE_US] = {"imbalance_us", HTA_COL_F64},
};
const hta_table_spec hta_global_path_imbalance_table = {
    "global_critical_path_imbalance", IMBALANCE_COLUMNS, HTA_GLOBAL_PATH_IMBALANCE_N_COLUMNS,
    HTA_TABLE_GATHERED};

/* name_id: the rank's, then the table's (first use in time order); name
 * NULL: none (name_id -1) or the rest (-2). */
typedef hta_path_piece piece;

static int compare_step_rank(const void *a, const void *b)
{
    const piece *x = a, *y = b;
    int c = hta_cmp_i64(x->step, y->step);
    c = c ? c : hta_cmp_i64(x->rank, y->rank);
    return c ? c : hta_cmp_i64(y->seq, x->seq);
}

static const char *bound_name(int64_t b)
{
    return b >= 0 && b < HTA_CP_N_BOUNDS ? hta_cp_bound_names[b] : "none";
}

static int put_pieces(hta_table *t, const piece *p, size_t n)
{
    int rc = 0;
    for (size_t i = 0, pos = 1; rc == 0 && i < n; i++, pos++) {
        if (i && p[i].step != p[i - 1].step)
            pos = 1;
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, p[i].step);
        hta_row_put_i64(&row, (int64_t)pos);
        hta_row_put_i64(&row, p[i].rank);
        hta_row_put_i64(&row, p[i].name_id);
        hta_row_put_str(&row, bound_name(p[i].bound));
        hta_row_put_f64(&row, hta_ns_to_us(p[i].time));
        rc = hta_row_done(&row);
    }
    return rc;
}

/* The string of each piece's (rank, name_id), from "_path_walk_names";
 * name_id then the row's place among them (sorted by rank and id). */
static int resolve_names(piece *p, size_t n, const hta_table *names)
{
    size_t *rows = hta_path_names_order(names);
    if (!rows)
        return -1;
    for (size_t i = 0; i < n; i++) {
        long at = hta_path_names_place(names, rows, p[i].rank, p[i].name_id);
        p[i].name = at >= 0 ? hta_table_row(names, rows[at])[HTA_PATH_NAMES_NAME].s : NULL;
        if (at >= 0 || p[i].name_id >= 0)
            p[i].name_id = at;
    }
    free(rows);
    return 0;
}

/* Numbers the names by first use in p[0..n) (time order) into
 * "global_critical_path_names" and the pieces' name_id by them: the ids
 * of a string table they are interned into in that order, each row of
 * "_path_walk_names" (m of them) once. */
static int number_names(piece *p, size_t n, size_t m, hta_strtab *ids, hta_table *t)
{
    uint32_t *of_row = malloc((m ? m : 1) * sizeof *of_row);
    int rc = of_row ? 0 : -1;
    for (size_t j = 0; rc == 0 && j < m; j++)
        of_row[j] = UINT32_MAX;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (!p[i].name)
            continue;
        uint32_t *id = &of_row[p[i].name_id];
        if (*id == UINT32_MAX) {
            uint32_t known = ids->count;
            *id = hta_strtab_intern(ids, p[i].name, strlen(p[i].name));
            rc = *id == UINT32_MAX ? -1 : 0;
            if (rc == 0 && *id == known) {
                hta_row_builder row = hta_table_add_row(t);
                hta_row_put_i64(&row, (int64_t)*id);
                hta_row_put_str(&row, p[i].name);
                rc = hta_row_done(&row);
            }
        }
        p[i].name_id = (int64_t)*id;
    }
    free(of_row);
    return rc;
}

/* One row per step of p[0..n) (in time order). */
static int put_steps(hta_table *t, const piece *p, size_t n, const piece *by_rank)
{
    int rc = 0;
    for (size_t i = 0, end; rc == 0 && i < n; i = end) {
        int64_t total = 0, by[HTA_CP_N_BOUNDS] = {0}, hops = 0, ranks = 0;
        for (end = i; end < n && p[end].step == p[i].step; end++) {
            total += p[end].time;
            if (p[end].bound >= 0 && p[end].bound < HTA_CP_N_BOUNDS)
                by[p[end].bound] += p[end].time;
            hops += end > i && p[end].rank != p[end - 1].rank;
            ranks += end == i || by_rank[end].rank != by_rank[end - 1].rank;
        }
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, p[i].step);
        hta_row_put_i64(&row, p[end - 1].rank);
        hta_row_put_f64(&row, hta_ns_to_us(total));
        hta_row_put_i64(&row, ranks);
        hta_row_put_i64(&row, hops);
        for (int b = 0; b < HTA_CP_N_BOUNDS; b++)
            hta_row_put_f64(&row, hta_ns_to_us(by[b]));
        rc = hta_row_done(&row);
    }
    return rc;
}

/* One row per (step, rank) of p[0..n), by (step, rank). */
static int put_ranks(hta_table *t, const piece *p, size_t n)
{
    int rc = 0;
    for (size_t i = 0, end; rc == 0 && i < n; i = end) {
        int64_t step_total = 0;
        for (end = i; end < n && p[end].step == p[i].step; end++)
            step_total += p[end].time;
        for (size_t j = i, k; rc == 0 && j < end; j = k) {
            int64_t mine = 0;
            for (k = j; k < end && p[k].rank == p[j].rank; k++)
                mine += p[k].time;
            hta_row_builder row = hta_table_add_row(t);
            hta_row_put_i64(&row, p[j].step);
            hta_row_put_i64(&row, p[j].rank);
            hta_row_put_f64(&row, hta_ns_to_us(mine));
            hta_row_put_f64(&row, step_total > 0 ? 100.0 * (double)mine / (double)step_total : 0);
            rc = hta_row_done(&row);
        }
    }
    return rc;
}

typedef struct imbalance {
    const char *name;
    double path, mean, excess;
} imbalance;

static int compare_imbalance(const void *a, const void *b)
{
    const imbalance *x = a, *y = b;
    if (x->excess != y->excess)
        return x->excess > y->excess ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Whether a piece's time is an operator's own (an op's or kernel's). */
static int is_operator_time(const piece *p)
{
    return p->name && (p->bound == HTA_CP_CPU || p->bound == HTA_CP_DATA_LOADING ||
            p->bound == HTA_CP_GPU_COMPUTE || p->bound == HTA_CP_GPU_COMMUNICATION);
}

/* The number of ranks in "_path_name_times", whose rows are in rank
 * order (the root sorted them). */
static size_t ranks_timed(const hta_table *times)
{
    size_t n = 0;
    for (size_t i = 0; i < times->n_rows; i++)
        n += i == 0 || hta_table_row(times, i)[HTA_PATH_NAME_TIMES_RANK].i !=
                           hta_table_row(times, i - 1)[HTA_PATH_NAME_TIMES_RANK].i;
    return n;
}

/* Per name on the path (ids: its numbers), its operator time there and
 * over the ranks; the names not on the path are not looked at. */
static int put_imbalance(hta_table *t, const piece *p, size_t n, const hta_strtab *ids,
                         const hta_table *times)
{
    size_t n_times = times ? times->n_rows : 0, m = 0;
    int64_t *path = calloc(ids->count + 1, sizeof *path);
    int64_t *ranks = calloc(ids->count + 1, sizeof *ranks);
    imbalance *im = malloc((ids->count + 1) * sizeof *im);
    int rc = path && ranks && im ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (is_operator_time(&p[i]))
            path[p[i].name_id] += p[i].time;
    for (size_t i = 0; rc == 0 && i < n_times; i++) {
        const hta_cell *row = hta_table_row(times, i);
        const char *name = row[HTA_PATH_NAME_TIMES_NAME].s;
        uint32_t id = hta_strtab_find(ids, name, strlen(name));
        if (id != UINT32_MAX)
            ranks[id] += row[HTA_PATH_NAME_TIMES_TIME_NS].i;
    }
    size_t n_ranks = times ? ranks_timed(times) : 0;
    for (uint32_t id = 0; rc == 0 && id < ids->count; id++) {
        if (path[id] == 0)
            continue;
        double on_path = hta_ns_to_us(path[id]);
        double mean = n_ranks ? hta_ns_to_us(ranks[id]) / (double)n_ranks : 0;
        im[m++] = (imbalance){hta_strtab_get(ids, id), on_path, mean,
                              on_path > mean ? on_path - mean : 0};
    }
    qsort(im, m, sizeof *im, compare_imbalance);
    for (size_t i = 0; rc == 0 && i < m; i++) {
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_str(&row, im[i].name);
        hta_row_put_f64(&row, im[i].path);
        hta_row_put_f64(&row, im[i].mean);
        hta_row_put_f64(&row, im[i].excess);
        rc = hta_row_done(&row);
    }
    free(path);
    free(ranks);
    free(im);
    return rc;
}

/* The tables from the n rows of walk; -1 when out of memory. */
static int put_tables(hta_tableset *set, const hta_table *walk)
{
    size_t n = 0;
    piece *p = hta_path_pieces_in_time(walk, &n), *by_rank = malloc((n + 1) * sizeof *by_rank);
    const hta_table *walk_names = hta_tableset_find(set, hta_path_walk_names_table.name);
    hta_table *names = hta_tableset_table(set, &hta_global_path_names_table);
    hta_table *path = hta_tableset_table(set, &hta_global_path_table);
    hta_table *steps = hta_tableset_table(set, &hta_global_path_steps_table);
    hta_table *ranks = hta_tableset_table(set, &hta_global_path_ranks_table);
    hta_table *imb = hta_tableset_table(set, &hta_global_path_imbalance_table);
    hta_strtab ids;
    hta_strtab_init(&ids);
    int rc = p && by_rank && names && path && steps && ranks && imb ? 0 : -1;
    if (rc == 0)
        rc = resolve_names(p, n, walk_names) ||
             number_names(p, n, walk_names ? walk_names->n_rows : 0, &ids, names);
    if (rc == 0) {
        memcpy(by_rank, p, n * sizeof *p);
        qsort(by_rank, n, sizeof *p, compare_step_rank);
        rc = put_pieces(path, p, n) || put_steps(steps, p, n, by_rank) ||
             put_ranks(ranks, by_rank, n) ||
             put_imbalance(imb, p, n, &ids,
                           hta_tableset_find(set, hta_path_name_times_table.name));
    }
    hta_strtab_free(&ids);
    free(p);
    free(by_rank);
    return rc;
}

int hta_global_path_results(hta_tableset *set, hta_error *err)
{
    const hta_table *walk = hta_tableset_find(set, hta_path_walk_table.name);
    int rc = walk && walk->n_rows ? put_tables(set, walk) : 0;
    /* The scratch tables are not written: freed before the file is. */
    hta_tableset_remove(set, hta_path_walk_table.name);
    hta_tableset_remove(set, hta_path_walk_names_table.name);
    hta_tableset_remove(set, hta_path_name_times_table.name);
    return rc ? hta_fail(err, "out of memory putting the job's critical path together") : 0;
}
