/* critical_path_intervals.c: the stretches of a rank's longest paths
 * between its communication kernels, which crossrank/job_path/global_path.c
 * chains into the job's critical path (see analysis/critical_path.h,
 * "_path_intervals", and docs/crossrank.md).
 *
 * After a step's longest path, every node holds the edge its longest
 * path arrives by (via).  From the start of each communication kernel,
 * and from the end of the step's path, the via edges are followed back
 * until the duration edge of a communication kernel (where the job's
 * path may hop to the rank that arrived last) or the step's start.  Only
 * the interval's time by (name, cause) is kept, not its edges, so that
 * what a rank keeps for the job's path stays small beside its graph: the
 * 8 longest pieces by name, the rest by cause.  Walking one rank's via
 * edges per interval keeps the rank's work proportional to its intervals'
 * lengths; the job's path then needs only these summaries. */
#include "analysis/critical_path_internal.h"

#include <stdlib.h>
#include <string.h>

#include "numerics/run_merge_sort.h"

#define TOP_PIECES 8
#define NAME_NONE (-1)
#define NAME_OTHER (-2)

static const hta_column INTERVAL_COLUMNS[HTA_PATH_INTERVALS_N_COLUMNS] = {
    [HTA_PATH_INTERVALS_RANK] = {"rank", HTA_COL_I64},
    [HTA_PATH_INTERVALS_STEP] = {"step", HTA_COL_I64},
    [HTA_PATH_INTERVALS_KIND] = {"kind", HTA_COL_I64},
    [HTA_PATH_INTERVALS_AT_NS] = {"at_ns", HTA_COL_I64},
    [HTA_PATH_INTERVALS_FROM_NS] = {"from_ns", HTA_COL_I64},
    [HTA_PATH_INTERVALS_FROM_DUR_NS] = {"from_dur_ns", HTA_COL_I64},
    [HTA_PATH_INTERVALS_TIME_NS] = {"time_ns", HTA_COL_I64},
    [HTA_PATH_INTERVALS_NAME_ID] = {"name_id", HTA_COL_I64},
    [HTA_PATH_INTERVALS_PIECES] = {"pieces", HTA_COL_I64},
};
const hta_table_spec hta_path_intervals_table = {
    "_path_intervals", INTERVAL_COLUMNS, HTA_PATH_INTERVALS_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_EXCHANGED | HTA_TABLE_SCRATCH};

static const hta_column PIECE_COLUMNS[HTA_PATH_PIECES_N_COLUMNS] = {
    [HTA_PATH_PIECES_RANK] = {"rank", HTA_COL_I64},
    [HTA_PATH_PIECES_TIME_NS] = {"time_ns", HTA_COL_I64},
    [HTA_PATH_PIECES_NAME_ID] = {"name_id", HTA_COL_I64},
    [HTA_PATH_PIECES_BOUND] = {"bound", HTA_COL_I64},
};
const hta_table_spec hta_path_pieces_table = {
    "_path_pieces", PIECE_COLUMNS, HTA_PATH_PIECES_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_EXCHANGED | HTA_TABLE_SCRATCH};

static const hta_column NAME_COLUMNS[HTA_PATH_NAMES_N_COLUMNS] = {
    [HTA_PATH_NAMES_RANK] = {"rank", HTA_COL_I64},
    [HTA_PATH_NAMES_NAME_ID] = {"name_id", HTA_COL_I64},
    [HTA_PATH_NAMES_NAME] = {"name", HTA_COL_STR},
};
const hta_table_spec hta_path_names_table = {
    "_path_names", NAME_COLUMNS, HTA_PATH_NAMES_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_EXCHANGED | HTA_TABLE_SCRATCH};

static const hta_column NAME_TIME_COLUMNS[HTA_PATH_NAME_TIMES_N_COLUMNS] = {
    [HTA_PATH_NAME_TIMES_RANK] = {"rank", HTA_COL_I64},
    [HTA_PATH_NAME_TIMES_NAME] = {"name", HTA_COL_STR},
    [HTA_PATH_NAME_TIMES_TIME_NS] = {"time_ns", HTA_COL_I64},
};
const hta_table_spec hta_path_name_times_table = {
    "_path_name_times", NAME_TIME_COLUMNS, HTA_PATH_NAME_TIMES_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED | HTA_TABLE_SCRATCH};

static const hta_column RUN_COLUMNS[HTA_KERNEL_RUNS_N_COLUMNS] = {
    [HTA_KERNEL_RUNS_RANK] = {"rank", HTA_COL_I64},
    [HTA_KERNEL_RUNS_STEP] = {"step", HTA_COL_I64},
    [HTA_KERNEL_RUNS_NAME_LAUNCHES] = {"name_launches", HTA_COL_I64},
};
const hta_table_spec hta_kernel_runs_table = {
    "_kernel_runs", RUN_COLUMNS, HTA_KERNEL_RUNS_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_EXCHANGED | HTA_TABLE_SCRATCH};

static const hta_column DURATION_COLUMNS[HTA_KERNEL_DURATIONS_N_COLUMNS] = {
    [HTA_KERNEL_DURATIONS_RANK] = {"rank", HTA_COL_I64},
    [HTA_KERNEL_DURATIONS_FIRST_NS] = {"dur_ns_0", HTA_COL_I64},
    [HTA_KERNEL_DURATIONS_FIRST_NS + 1] = {"dur_ns_1", HTA_COL_I64},
    [HTA_KERNEL_DURATIONS_FIRST_NS + 2] = {"dur_ns_2", HTA_COL_I64},
    [HTA_KERNEL_DURATIONS_FIRST_NS + 3] = {"dur_ns_3", HTA_COL_I64},
    [HTA_KERNEL_DURATIONS_FIRST_NS + 4] = {"dur_ns_4", HTA_COL_I64},
    [HTA_KERNEL_DURATIONS_FIRST_NS + 5] = {"dur_ns_5", HTA_COL_I64},
    [HTA_KERNEL_DURATIONS_FIRST_NS + 6] = {"dur_ns_6", HTA_COL_I64},
    [HTA_KERNEL_DURATIONS_FIRST_NS + 7] = {"dur_ns_7", HTA_COL_I64},
};
const hta_table_spec hta_kernel_durations_table = {
    "_kernel_durations", DURATION_COLUMNS, HTA_KERNEL_DURATIONS_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_EXCHANGED | HTA_TABLE_SCRATCH};

/* The rank's job's-path tables, each looked up among the tables once
 * (rather than by name at each step), on first use. */
enum { T_INTERVALS, T_PIECES, T_NAMES, T_RUNS, T_DURATIONS, T_N };

static hta_table *job_table(rank_state *r, int which, hta_tableset *out)
{
    static const hta_table_spec *const specs[] = {
        [T_INTERVALS] = &hta_path_intervals_table, [T_PIECES] = &hta_path_pieces_table,
        [T_NAMES] = &hta_path_names_table,
        [T_RUNS] = &hta_kernel_runs_table, [T_DURATIONS] = &hta_kernel_durations_table};
    if (!r->job_tables[which])
        r->job_tables[which] = hta_tableset_table(out, specs[which]);
    return r->job_tables[which];
}

/* An interval's time put down to one (name, cause). */
typedef struct piece {
    int64_t name;              /* the trace's name id, NAME_NONE or NAME_OTHER */
    int64_t time, first_ts;    /* first_ts: its earliest edge's start */
    int32_t next;              /* the next piece of the same name, -1 = none */
    uint8_t bound;
} piece;

/* Whether e is the duration of a communication kernel: the edge the job's
 * path hops at. */
static int is_comm_kernel_edge(const rank_state *r, const edge *e)
{
    if (e->type != E_OPERATOR || e->attr < 0)
        return 0;
    const hta_event *ev = &r->t->events[e->attr];
    return hta_event_is_gpu(ev) && !is_sync_event(r, ev) &&
           ev->kernel_type == HTA_KT_COMMUNICATION;
}

/* Adds e to its (name, cause) piece: piece_of[name + 1] is the name's
 * first piece when it points at one of this interval's pieces for that
 * name (so it is never cleared). */
static void add_to_piece(rank_state *r, piece *s, size_t *n, const edge *e, int64_t ts)
{
    int64_t name = e->attr >= 0 ? (int64_t)r->t->events[e->attr].name : NAME_NONE;
    uint8_t bound = (uint8_t)bound_of(r, e);
    int32_t *head = &r->piece_of[name + 1];
    int32_t i = *head;
    if (i < 0 || (size_t)i >= *n || s[i].name != name)
        i = -1;
    int32_t first = i;
    for (; i >= 0; i = s[i].next)
        if (s[i].bound == bound) {
            s[i].time += e->weight;
            s[i].first_ts = ts;
            return;
        }
    s[*n] = (piece){name, e->weight, ts, first, bound};
    *head = (int32_t)(*n)++;
}

static int longer_piece(const piece *x, const piece *y)
{
    if (x->time != y->time)
        return x->time > y->time ? -1 : 1;
    return (x->first_ts > y->first_ts) - (x->first_ts < y->first_ts);
}

static int earlier_piece(const piece *x, const piece *y)
{
    if (x->first_ts != y->first_ts)
        return x->first_ts < y->first_ts ? -1 : 1;
    return (x->bound > y->bound) - (x->bound < y->bound);
}

/* Whether s[x] goes before s[y] among the longest: the longer, then the
 * earlier, then the first found. */
static int longer_first(const piece *s, size_t x, size_t y)
{
    int c = longer_piece(&s[x], &s[y]);
    return c ? c < 0 : x < y;
}

#define KEPT INT32_MIN /* in piece.next, once add_to_piece is done with it */

/* Marks the TOP_PIECES longest of s[0..n) (n > TOP_PIECES) and copies
 * them, longest first, into top: one pass, each piece against the kept
 * few, rather than a sort of every piece. */
static void pick_longest(piece *s, size_t n, piece top[TOP_PIECES])
{
    size_t at[TOP_PIECES], k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k == TOP_PIECES && !longer_first(s, i, at[k - 1]))
            continue;
        size_t j = k < TOP_PIECES ? k++ : k - 1;
        for (; j > 0 && longer_first(s, i, at[j - 1]); j--)
            at[j] = at[j - 1];
        at[j] = i;
    }
    for (size_t j = 0; j < TOP_PIECES; j++) {
        s[at[j]].next = KEPT;
        top[j] = s[at[j]];
    }
}

/* Keeps the TOP_PIECES longest of s[0..n) and sums the rest by cause
 * (NAME_OTHER), in time order (ties: longest first, then by cause); the
 * count left, at most TOP_PIECES + HTA_CP_N_BOUNDS + 1. */
static size_t keep_top_pieces(piece *s, size_t n)
{
    if (n > TOP_PIECES) {
        piece top[TOP_PIECES], rest[HTA_CP_N_BOUNDS + 1];
        int used[HTA_CP_N_BOUNDS + 1] = {0};
        pick_longest(s, n, top);
        for (size_t i = 0; i < n; i++) {
            if (s[i].next == KEPT)
                continue;
            piece *o = &rest[s[i].bound];
            if (!used[s[i].bound])
                *o = (piece){NAME_OTHER, 0, s[i].first_ts, -1, s[i].bound};
            used[s[i].bound] = 1;
            o->time += s[i].time;
            o->first_ts = s[i].first_ts < o->first_ts ? s[i].first_ts : o->first_ts;
        }
        memcpy(s, top, sizeof top);
        n = TOP_PIECES;
        for (int b = 0; b <= HTA_CP_N_BOUNDS; b++)
            if (used[b])
                s[n++] = rest[b];
    }
    /* A stable insertion sort of these few. */
    for (size_t i = 1; i < n; i++) {
        piece x = s[i];
        size_t j = i;
        for (; j > 0 && earlier_piece(&x, &s[j - 1]) < 0; j--)
            s[j] = s[j - 1];
        s[j] = x;
    }
    return n;
}

int64_t cp_path_name_id(rank_state *r, int64_t name, hta_tableset *out)
{
    if (name < 0)
        return name;
    if (r->path_name_id[name])
        return r->path_name_id[name] - 1;
    hta_table *tab = job_table(r, T_NAMES, out);
    if (!tab)
        return -3;
    hta_row_builder row = hta_table_add_row(tab);
    hta_row_put_i64(&row, r->v->rank_key);
    hta_row_put_i64(&row, (int64_t)r->n_path_names);
    hta_row_put_str(&row, hta_strtab_get(&r->t->names, (uint32_t)name));
    if (hta_row_done(&row))
        return -3;
    r->path_name_id[name] = ++r->n_path_names;
    return (int64_t)r->n_path_names - 1;
}

static int put_row(hta_table *tab, const int64_t *cells, int n)
{
    hta_row_builder row = hta_table_add_row(tab);
    for (int c = 0; c < n; c++)
        hta_row_put_i64(&row, cells[c]);
    return hta_row_done(&row);
}

/* The interval ending at node v (kind: HTA_PATH_INTERVAL_*): its row and
 * its pieces' rows. */
static int put_interval(rank_state *r, const step_window *w, uint32_t v, int kind,
                        hta_table *tab, hta_tableset *out)
{
    const graph *g = &r->g;
    const int64_t *via = r->scratch[S_VIA];
    /* Room for every edge walked and the rest's pieces by cause. */
    piece *s = scratch(r, S_PIECES, g->n_nodes + HTA_CP_N_BOUNDS + 1, sizeof *s);
    hta_table *pieces = job_table(r, T_PIECES, out);
    if (!s || !pieces)
        return -1;
    size_t n = 0;
    int64_t length = 0;
    const edge *stop = NULL;
    for (uint32_t u = v; via[u] >= 0;) {
        const edge *e = &g->edges[via[u]];
        if (is_comm_kernel_edge(r, e)) {
            stop = e;
            break;
        }
        if (e->weight != 0)
            add_to_piece(r, s, &n, e, g->nodes[e->src].ts);
        length += e->weight;
        u = e->src;
    }
    n = keep_top_pieces(s, n);
    int64_t stop_name = stop ? cp_path_name_id(r, r->t->events[stop->attr].name, out) : -1;
    if (stop_name < -2)
        return -1;
    int64_t head[HTA_PATH_INTERVALS_N_COLUMNS] = {
        r->v->rank_key, w->number, kind, g->nodes[v].ts,
        stop ? g->nodes[stop->src].ts : -1, stop ? stop->weight : 0, length, stop_name,
        (int64_t)n};
    if (put_row(tab, head, HTA_PATH_INTERVALS_N_COLUMNS))
        return -1;
    for (size_t i = 0; i < n; i++) {
        int64_t name = cp_path_name_id(r, s[i].name, out);
        int64_t row[HTA_PATH_PIECES_N_COLUMNS] = {r->v->rank_key, s[i].time, name, s[i].bound};
        if (name < -2 || put_row(pieces, row, HTA_PATH_PIECES_N_COLUMNS))
            return -1;
    }
    return 0;
}

/* Adds the graph's operator edges to their names' time. */
static void add_name_times(rank_state *r)
{
    const graph *g = &r->g;
    for (size_t i = 0; i < g->n_edges; i++) {
        const edge *e = &g->edges[i];
        if (e->type == E_OPERATOR && e->attr >= 0)
            r->name_time[r->t->events[e->attr].name] += e->weight;
    }
}

/* A name's kernels in a step: the trace's name id and its "_path_names"
 * id. */
typedef struct kernel_run {
    uint32_t name, id;
} kernel_run;

static int earlier_id(const void *a, const void *b)
{
    const kernel_run *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

/* The step's runs by name id: names get their ids in the order of first
 * launch, so from one step to the next they mostly come in order. */
static void sort_runs(kernel_run *kr, size_t n)
{
    for (size_t j = 1; j < n; j++)
        if (kr[j].id < kr[j - 1].id) {
            qsort(kr, n, sizeof *kr, earlier_id);
            return;
        }
}

static int put_run(rank_state *r, hta_table *t, int64_t step, const kernel_run *kr, int64_t n)
{
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, r->v->rank_key);
    hta_row_put_i64(&row, step);
    hta_row_put_i64(&row, (int64_t)kr->id * ((int64_t)1 << 32) + n);
    return hta_row_done(&row);
}

/* The durations kept, as a row of "_kernel_durations", the rest zeros. */
static int put_durations_row(rank_state *r, hta_table *t)
{
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, r->v->rank_key);
    for (int i = 0; i < HTA_KERNEL_DURATIONS_PER_ROW; i++)
        hta_row_put_i64(&row, i < r->n_durations_row ? r->durations_row[i] : 0);
    r->n_durations_row = 0;
    return hta_row_done(&row);
}

static int put_duration(rank_state *r, hta_table *t, int64_t dur)
{
    r->durations_row[r->n_durations_row++] = dur;
    return r->n_durations_row == HTA_KERNEL_DURATIONS_PER_ROW ? put_durations_row(r, t) : 0;
}

/* The step's kernels that are not communication, by name, each name's
 * by start (its places): "_kernel_runs" and "_kernel_durations". */
static int put_kernel_places(rank_state *r, size_t s, hta_tableset *out)
{
    const member *m = r->members + r->step_first[s];
    size_t n = r->step_first[s + 1] - r->step_first[s], k = 0, n_runs = 0;
    hta_keyed *rows = scratch(r, S_ROWS, n, sizeof *rows);
    hta_keyed *tmp = scratch(r, S_ITEMS_TMP, n, sizeof *tmp);
    kernel_run *kr = scratch(r, S_RUNS, n, sizeof *kr);
    int64_t *dur = scratch(r, S_DURATIONS, n, sizeof *dur);
    hta_table *runs = job_table(r, T_RUNS, out);
    hta_table *durations = job_table(r, T_DURATIONS, out);
    if (!rows || !tmp || !kr || !dur || !runs || !durations)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const hta_event *e = &r->t->events[m[i].ev];
        if (m[i].gpu != UINT32_MAX && !is_sync_event(r, e) &&
            e->kernel_type != HTA_KT_COMMUNICATION)
            rows[k++] = (hta_keyed){e->ts_ns, i};
    }
    if (hta_run_merge_sort_keyed(rows, k, tmp))
        return -1;
    for (size_t i = 0; i < k; i++) {
        uint32_t name = r->t->events[m[rows[i].index].ev].name;
        if (r->place_step[name] != s + 1) {
            int64_t id = cp_path_name_id(r, name, out);
            if (id < 0)
                return -1;
            r->place_step[name] = (uint32_t)(s + 1);
            r->place_next[name] = 0;
            kr[n_runs++] = (kernel_run){name, (uint32_t)id};
        }
        r->place_next[name]++;
    }
    sort_runs(kr, n_runs);
    int64_t at = 0;
    for (size_t j = 0; j < n_runs; j++) {
        int64_t launches = r->place_next[kr[j].name];
        r->place_next[kr[j].name] = at;
        at += launches;
        if (put_run(r, runs, r->steps[s].number, &kr[j], launches))
            return -1;
    }
    for (size_t i = 0; i < k; i++) {
        const hta_event *e = &r->t->events[m[rows[i].index].ev];
        dur[r->place_next[e->name]++] = e->dur_ns;
    }
    for (size_t i = 0; i < k; i++)
        if (put_duration(r, durations, dur[i]))
            return -1;
    return 0;
}

int cp_put_intervals(rank_state *r, size_t s, const path *p, hta_tableset *out)
{
    size_t names = r->t->names.count;
    if (!r->piece_of) {
        r->piece_of = malloc((names + 2) * sizeof *r->piece_of);
        r->path_name_id = calloc(names + 1, sizeof *r->path_name_id);
        r->name_time = calloc(names + 1, sizeof *r->name_time);
        r->place_step = calloc(names + 1, sizeof *r->place_step);
        r->place_next = calloc(names + 1, sizeof *r->place_next);
        if (!r->piece_of || !r->path_name_id || !r->name_time || !r->place_step ||
            !r->place_next)
            return -1;
        memset(r->piece_of, 0xff, (names + 2) * sizeof *r->piece_of);
    }
    if (!p->ok || p->n == 0)
        return 0;
    if (r->replay && put_kernel_places(r, s, out))
        return -1;
    add_name_times(r);
    hta_table *tab = job_table(r, T_INTERVALS, out);
    if (!tab)
        return -1;
    const graph *g = &r->g;
    const step_window *w = &r->steps[s];
    const member *m = r->members + r->step_first[s];
    size_t n = r->step_first[s + 1] - r->step_first[s];
    for (size_t k = 0; k < n; k++) {
        const hta_event *e = &r->t->events[m[k].ev];
        if (m[k].gpu == UINT32_MAX || is_sync_event(r, e) ||
            e->kernel_type != HTA_KT_COMMUNICATION || g->start_of[k] < 0)
            continue;
        if (put_interval(r, w, (uint32_t)g->start_of[k], HTA_PATH_INTERVAL_TO_KERNEL, tab, out))
            return -1;
    }
    return put_interval(r, w, g->edges[p->edges[p->n - 1]].dst, HTA_PATH_INTERVAL_TO_END, tab,
                        out);
}

int cp_put_name_times(rank_state *r, hta_tableset *out)
{
    if (!r->name_time)
        return 0;
    if (r->n_durations_row && put_durations_row(r, job_table(r, T_DURATIONS, out)))
        return -1;
    hta_table *tab = hta_tableset_table(out, &hta_path_name_times_table);
    int rc = tab ? 0 : -1;
    for (uint32_t name = 0; rc == 0 && name < r->t->names.count; name++) {
        if (r->name_time[name] == 0)
            continue;
        hta_row_builder row = hta_table_add_row(tab);
        hta_row_put_i64(&row, r->v->rank_key);
        hta_row_put_str(&row, hta_strtab_get(&r->t->names, name));
        hta_row_put_i64(&row, r->name_time[name]);
        rc = hta_row_done(&row);
    }
    return rc;
}
