/* critical_path_results.c: a step's path into the tables, or to a
 * callback (see analysis/critical_path_internal.h).
 *
 * Each edge of the path is put down to one of six causes; /critical_path
 * has a row per step with the time by cause, /critical_path_events the
 * path's longest segments (time per event and edge type). */
#include "analysis/critical_path_internal.h"

#include <stdlib.h>

#define TOP_SEGMENTS 10

static const char *const EDGE_TYPE_NAMES[] = {
    "operator", "dependency", "kernel_launch_delay", "kernel_kernel_delay", "sync",
};

static const hta_column STEP_COLUMNS[HTA_CRITICAL_PATH_N_COLUMNS] = {
    [HTA_CRITICAL_PATH_RANK] = {"rank", HTA_COL_I64},
    [HTA_CRITICAL_PATH_STEP] = {"step", HTA_COL_I64},
    [HTA_CRITICAL_PATH_START_US] = {"start_us", HTA_COL_F64},
    [HTA_CRITICAL_PATH_END_US] = {"end_us", HTA_COL_F64},
    [HTA_CRITICAL_PATH_PATH_US] = {"path_us", HTA_COL_F64},
    [HTA_CRITICAL_PATH_GRAPH_OK] = {"graph_ok", HTA_COL_I64},
    [HTA_CRITICAL_PATH_NODES] = {"nodes", HTA_COL_I64},
    [HTA_CRITICAL_PATH_EDGES] = {"edges", HTA_COL_I64},
    [HTA_CRITICAL_PATH_BOUND_BY] = {"bound_by", HTA_COL_STR},
    [HTA_CRITICAL_PATH_CPU_BOUND_US] = {"cpu_bound_us", HTA_COL_F64},
    [HTA_CRITICAL_PATH_DATA_LOADING_US] = {"data_loading_us", HTA_COL_F64},
    [HTA_CRITICAL_PATH_GPU_COMPUTE_BOUND_US] = {"gpu_compute_bound_us", HTA_COL_F64},
    [HTA_CRITICAL_PATH_GPU_COMMUNICATION_BOUND_US] = {"gpu_communication_bound_us", HTA_COL_F64},
    [HTA_CRITICAL_PATH_GPU_KERNEL_KERNEL_OVERHEAD_US] =
        {"gpu_kernel_kernel_overhead_us", HTA_COL_F64},
    [HTA_CRITICAL_PATH_GPU_KERNEL_LAUNCH_OVERHEAD_US] =
        {"gpu_kernel_launch_overhead_us", HTA_COL_F64},
    [HTA_CRITICAL_PATH_CPU_BOUND_PCT] = {"cpu_bound_pct", HTA_COL_F64},
    [HTA_CRITICAL_PATH_DATA_LOADING_PCT] = {"data_loading_pct", HTA_COL_F64},
    [HTA_CRITICAL_PATH_GPU_COMPUTE_BOUND_PCT] = {"gpu_compute_bound_pct", HTA_COL_F64},
    [HTA_CRITICAL_PATH_GPU_COMMUNICATION_BOUND_PCT] = {"gpu_communication_bound_pct", HTA_COL_F64},
    [HTA_CRITICAL_PATH_GPU_KERNEL_KERNEL_OVERHEAD_PCT] =
        {"gpu_kernel_kernel_overhead_pct", HTA_COL_F64},
    [HTA_CRITICAL_PATH_GPU_KERNEL_LAUNCH_OVERHEAD_PCT] =
        {"gpu_kernel_launch_overhead_pct", HTA_COL_F64},
};
const hta_table_spec hta_critical_path_table = {
    "critical_path", STEP_COLUMNS, HTA_CRITICAL_PATH_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

/* A segment's event is named by an id into the rank's /critical_path_names
 * rows, not by its text: the table holds ten rows per step, and strings
 * drawn from a small vocabulary keep it written where it was computed
 * (output/hdf5_in_place.c), with no variable-length string per row. */
static const hta_column SEGMENT_COLUMNS[HTA_CRITICAL_PATH_EVENTS_N_COLUMNS] = {
    [HTA_CRITICAL_PATH_EVENTS_RANK] = {"rank", HTA_COL_I64},
    [HTA_CRITICAL_PATH_EVENTS_STEP] = {"step", HTA_COL_I64},
    [HTA_CRITICAL_PATH_EVENTS_POSITION] = {"position", HTA_COL_I64},
    [HTA_CRITICAL_PATH_EVENTS_NAME_ID] = {"name_id", HTA_COL_I64},
    [HTA_CRITICAL_PATH_EVENTS_TYPE] = {"type", HTA_COL_STR},
    [HTA_CRITICAL_PATH_EVENTS_BOUND_BY] = {"bound_by", HTA_COL_STR},
    [HTA_CRITICAL_PATH_EVENTS_TS_US] = {"ts_us", HTA_COL_F64},
    [HTA_CRITICAL_PATH_EVENTS_TIME_US] = {"time_us", HTA_COL_F64},
};
const hta_table_spec hta_critical_path_events_table = {
    "critical_path_events", SEGMENT_COLUMNS, HTA_CRITICAL_PATH_EVENTS_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_IN_PLACE};

static const hta_column NAME_COLUMNS[HTA_CRITICAL_PATH_NAMES_N_COLUMNS] = {
    [HTA_CRITICAL_PATH_NAMES_RANK] = {"rank", HTA_COL_I64},
    [HTA_CRITICAL_PATH_NAMES_NAME_ID] = {"name_id", HTA_COL_I64},
    [HTA_CRITICAL_PATH_NAMES_NAME] = {"name", HTA_COL_STR},
};
const hta_table_spec hta_critical_path_names_table = {
    "critical_path_names", NAME_COLUMNS, HTA_CRITICAL_PATH_NAMES_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

typedef struct segment {
    int64_t attr;              /* event the time is put down to, -1 = none */
    uint8_t type;
    uint8_t bound;
    int64_t time;
    int32_t next;              /* the next segment of the same event, -1 = none */
} segment;

/* Whether x comes before y in the table: longer, then by event and type. */
static int segment_before(const segment *x, const segment *y)
{
    if (x->time != y->time)
        return x->time > y->time;
    if (x->attr != y->attr)
        return x->attr < y->attr;
    return x->type < y->type;
}

/* Adds an edge's time to its (event, type) segment: segment_of[event] is
 * the event's first segment when it points at one of this step's
 * segments for that event, whatever it held before (so it is never
 * cleared). */
static void add_to_segment(rank_state *r, segment *s, size_t *n, int32_t *none, const edge *e)
{
    int32_t *head = e->attr < 0 ? &none[e->type] : &r->segment_of[e->attr];
    int32_t i = *head;
    if (e->attr >= 0 && (i < 0 || (size_t)i >= *n || s[i].attr != e->attr))
        i = -1;
    int32_t first = i;
    for (; i >= 0; i = s[i].next)
        if (s[i].type == e->type) {
            s[i].time += e->weight;
            return;
        }
    s[*n] = (segment){e->attr, e->type, (uint8_t)bound_of(r, e), e->weight, first};
    *head = (int32_t)(*n)++;
}

/* The segment's name id, numbered by first use in the rank's rows so that
 * it does not depend on how the trace was parsed; a name's first use adds
 * its /critical_path_names row.  -1 for time put down to no event. */
static int64_t listed_name_id(rank_state *r, const hta_event *ev, hta_tableset *out)
{
    if (!ev)
        return -1;
    if (!r->listed_id && !(r->listed_id = calloc(r->t->names.count + 1, sizeof *r->listed_id)))
        return -2;
    if (r->listed_id[ev->name])
        return r->listed_id[ev->name] - 1;
    hta_table *tab = hta_tableset_table(out, &hta_critical_path_names_table);
    if (!tab)
        return -2;
    hta_row_builder row = hta_table_add_row(tab);
    hta_row_put_i64(&row, r->v->rank_key);
    hta_row_put_i64(&row, (int64_t)r->n_listed);
    hta_row_put_str(&row, hta_event_name(r->t, ev));
    if (hta_row_done(&row))
        return -2;
    r->listed_id[ev->name] = ++r->n_listed;
    return (int64_t)r->n_listed - 1;
}

/* The path's time per event (and edge type), longest first. */
static int emit_segments(rank_state *r, const step_window *w, const path *p, hta_tableset *out)
{
    const graph *g = &r->g;
    segment *s = scratch(r, S_SEGMENTS, p->n, sizeof *s);
    if (!r->segment_of)
        r->segment_of = calloc(r->t->n_events + 1, sizeof *r->segment_of);
    if (!s || !r->segment_of)
        return -1;
    int32_t none[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    size_t m = 0;
    for (size_t i = 0; i < p->n; i++) {
        const edge *e = &g->edges[p->edges[i]];
        if (e->weight > 0)
            add_to_segment(r, s, &m, none, e);
    }
    /* The first TOP_SEGMENTS in table order, by insertion. */
    size_t top[TOP_SEGMENTS], n_top = 0;
    for (size_t i = 0; i < m; i++) {
        if (n_top == TOP_SEGMENTS && !segment_before(&s[i], &s[top[n_top - 1]]))
            continue;
        size_t j = n_top < TOP_SEGMENTS ? n_top++ : n_top - 1;
        for (; j > 0 && segment_before(&s[i], &s[top[j - 1]]); j--)
            top[j] = top[j - 1];
        top[j] = i;
    }
    hta_table *tab = hta_tableset_table(out, &hta_critical_path_events_table);
    int rc = tab ? 0 : -1;
    for (size_t i = 0; i < n_top && !rc; i++) {
        const segment *sg = &s[top[i]];
        const hta_event *ev = sg->attr >= 0 ? &r->t->events[sg->attr] : NULL;
        int64_t name_id = listed_name_id(r, ev, out);
        if (name_id < -1)
            return -1;
        hta_row_builder row = hta_table_add_row(tab);
        hta_row_put_i64(&row, r->v->rank_key);
        hta_row_put_i64(&row, w->number);
        hta_row_put_i64(&row, (int64_t)i + 1);
        hta_row_put_i64(&row, name_id);
        hta_row_put_str(&row, EDGE_TYPE_NAMES[sg->type]);
        hta_row_put_str(&row, sg->bound < HTA_CP_N_BOUNDS ? hta_cp_bound_names[sg->bound] : "");
        hta_row_put_f64(&row, ev ? hta_ns_to_us(ev->ts_ns) : 0.0);
        hta_row_put_f64(&row, hta_ns_to_us(sg->time));
        rc = hta_row_done(&row);
    }
    return rc;
}

int cp_emit_step(rank_state *r, const step_window *w, const path *p, hta_tableset *out)
{
    const graph *g = &r->g;
    int64_t by[HTA_CP_N_BOUNDS + 1] = {0};
    int64_t total = 0;
    for (size_t i = 0; i < p->n; i++) {
        const edge *e = &g->edges[p->edges[i]];
        by[bound_of(r, e)] += e->weight;
        total += e->weight;
    }
    int top = -1;
    for (int b = 0; b < HTA_CP_N_BOUNDS; b++) {
        r->total[b] += (double)by[b];
        if (by[b] > 0 && (top < 0 || by[b] > by[top]))
            top = b;
    }
    if (!r->step_table && !(r->step_table = hta_tableset_table(out, &hta_critical_path_table)))
        return -1;
    hta_table *tab = r->step_table;
    hta_row_builder row = hta_table_add_row(tab);
    hta_row_put_i64(&row, r->v->rank_key);
    hta_row_put_i64(&row, w->number);
    hta_row_put_f64(&row, hta_ns_to_us(w->start));
    hta_row_put_f64(&row, hta_ns_to_us(w->end));
    hta_row_put_f64(&row, hta_ns_to_us(total));
    hta_row_put_i64(&row, p->ok);
    hta_row_put_i64(&row, (int64_t)g->n_nodes);
    hta_row_put_i64(&row, (int64_t)g->n_edges);
    hta_row_put_str(&row, top >= 0 ? hta_cp_bound_names[top] : "");
    for (int b = 0; b < HTA_CP_N_BOUNDS; b++)
        hta_row_put_f64(&row, hta_ns_to_us(by[b]));
    for (int b = 0; b < HTA_CP_N_BOUNDS; b++)
        hta_row_put_f64(&row, total > 0 ? 100.0 * (double)by[b] / (double)total : 0.0);
    return hta_row_done(&row) || emit_segments(r, w, p, out);
}

int cp_hand_path(rank_state *r, const step_window *w, const path *p)
{
    const graph *g = &r->g;
    hta_cp_point *points = malloc((p->n + 2) * sizeof *points);
    if (!points)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++) {
        const edge *e = &g->edges[p->edges[i]];
        if (i == 0)
            points[n++] = (hta_cp_point){&r->t->events[g->nodes[e->src].ev], g->nodes[e->src].ts,
                                         g->nodes[e->src].is_start};
        points[n++] = (hta_cp_point){&r->t->events[g->nodes[e->dst].ev], g->nodes[e->dst].ts,
                                     g->nodes[e->dst].is_start};
    }
    r->path_rc = r->path_fn(r->path_ctx, w->number, w->start, w->end, points, n);
    free(points);
    return r->path_rc ? -1 : 0;
}

