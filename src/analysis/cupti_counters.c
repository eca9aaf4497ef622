/* cupti_counters.c: HTA's get_cupti_counter_data_with_operators (see
 * analysis/cupti_counters.h and docs/definitions.md, CUPTI counters).
 *
 * FLOPs follow HTA's CUDA_SASS_INSTRUCTION_COUNTER_FLOPS: the SASS
 * thread-instruction counters of the fadd, fmul, ffma, hadd, hmul, hfma,
 * dadd, dmul and dfma ops, each fma counting 2 operations. */
#include "analysis/cupti_counters.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cpu_context.h"
#include "numerics/radix_sort.h"

#define N_SASS 9
static const char *const SASS_OPS[N_SASS] = {"ffma", "fmul", "fadd", "hfma", "hmul",
                                             "hadd", "dfma", "dmul", "dadd"};

static const hta_column RANGE_COLUMNS[HTA_CUPTI_COUNTERS_N_COLUMNS] = {
    [HTA_CUPTI_COUNTERS_RANK] = {"rank", HTA_COL_I64},
    [HTA_CUPTI_COUNTERS_RANGE] = {"range", HTA_COL_I64},
    [HTA_CUPTI_COUNTERS_KERNEL] = {"kernel", HTA_COL_STR},
    [HTA_CUPTI_COUNTERS_TS_US] = {"ts_us", HTA_COL_F64},
    [HTA_CUPTI_COUNTERS_DUR_US] = {"dur_us", HTA_COL_F64},
    [HTA_CUPTI_COUNTERS_LAUNCH_TS_US] = {"launch_ts_us", HTA_COL_F64},
    [HTA_CUPTI_COUNTERS_LAUNCH_CORRELATION] = {"launch_correlation", HTA_COL_I64},
    [HTA_CUPTI_COUNTERS_TOP_OP] = {"top_op", HTA_COL_STR},
    [HTA_CUPTI_COUNTERS_BOTTOM_OP] = {"bottom_op", HTA_COL_STR},
    [HTA_CUPTI_COUNTERS_OP_STACK] = {"op_stack", HTA_COL_STR},
    [HTA_CUPTI_COUNTERS_FLOPS] = {"flops", HTA_COL_F64},
    [HTA_CUPTI_COUNTERS_FFMA] = {"ffma", HTA_COL_F64},
    [HTA_CUPTI_COUNTERS_FMUL] = {"fmul", HTA_COL_F64},
    [HTA_CUPTI_COUNTERS_FADD] = {"fadd", HTA_COL_F64},
    [HTA_CUPTI_COUNTERS_HFMA] = {"hfma", HTA_COL_F64},
    [HTA_CUPTI_COUNTERS_HMUL] = {"hmul", HTA_COL_F64},
    [HTA_CUPTI_COUNTERS_HADD] = {"hadd", HTA_COL_F64},
    [HTA_CUPTI_COUNTERS_DFMA] = {"dfma", HTA_COL_F64},
    [HTA_CUPTI_COUNTERS_DMUL] = {"dmul", HTA_COL_F64},
    [HTA_CUPTI_COUNTERS_DADD] = {"dadd", HTA_COL_F64},
};
const hta_table_spec hta_cupti_counters_table = {
    "cupti_counters", RANGE_COLUMNS, HTA_CUPTI_COUNTERS_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};
static const hta_column VALUE_COLUMNS[HTA_CUPTI_COUNTER_VALUES_N_COLUMNS] = {
    [HTA_CUPTI_COUNTER_VALUES_RANK] = {"rank", HTA_COL_I64},
    [HTA_CUPTI_COUNTER_VALUES_RANGE] = {"range", HTA_COL_I64},
    [HTA_CUPTI_COUNTER_VALUES_COUNTER] = {"counter", HTA_COL_STR},
    [HTA_CUPTI_COUNTER_VALUES_VALUE] = {"value", HTA_COL_F64},
};
const hta_table_spec hta_cupti_counter_values_table = {
    "cupti_counter_values", VALUE_COLUMNS, HTA_CUPTI_COUNTER_VALUES_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};
static const hta_column KERNEL_COLUMNS[HTA_CUPTI_KERNELS_N_COLUMNS] = {
    [HTA_CUPTI_KERNELS_RANK] = {"rank", HTA_COL_I64},
    [HTA_CUPTI_KERNELS_KERNEL] = {"kernel", HTA_COL_STR},
    [HTA_CUPTI_KERNELS_COUNT] = {"count", HTA_COL_I64},
    [HTA_CUPTI_KERNELS_DUR_SUM_US] = {"dur_sum_us", HTA_COL_F64},
    [HTA_CUPTI_KERNELS_FLOPS_SUM] = {"flops_sum", HTA_COL_F64},
    [HTA_CUPTI_KERNELS_FLOPS_MEAN] = {"flops_mean", HTA_COL_F64},
};
const hta_table_spec hta_cupti_kernels_table = {
    "cupti_kernels", KERNEL_COLUMNS, HTA_CUPTI_KERNELS_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};
static const hta_column MATCH_COLUMNS[HTA_CUPTI_MATCHING_N_COLUMNS] = {
    [HTA_CUPTI_MATCHING_RANK] = {"rank", HTA_COL_I64},
    [HTA_CUPTI_MATCHING_RANGES] = {"ranges", HTA_COL_I64},
    [HTA_CUPTI_MATCHING_LAUNCHES] = {"launches", HTA_COL_I64},
    [HTA_CUPTI_MATCHING_MATCHED] = {"matched", HTA_COL_I64},
    [HTA_CUPTI_MATCHING_UNMATCHED_RANGES] = {"unmatched_ranges", HTA_COL_I64},
    [HTA_CUPTI_MATCHING_UNMATCHED_LAUNCHES] = {"unmatched_launches", HTA_COL_I64},
};
const hta_table_spec hta_cupti_matching_table = {
    "cupti_matching", MATCH_COLUMNS, HTA_CUPTI_MATCHING_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

/* The counter ids of the SASS ops (UINT32_MAX when absent). */
static void find_sass(const hta_trace *t, uint32_t *ids)
{
    char name[96];
    for (int k = 0; k < N_SASS; k++) {
        snprintf(name, sizeof name, "smsp__sass_thread_inst_executed_op_%s_pred_on.sum",
                 SASS_OPS[k]);
        ids[k] = hta_strtab_find(&t->counter_names, name, strlen(name));
    }
}

static int is_kernel_launch(const hta_trace *t, const hta_event *e, uint32_t runtime_cat)
{
    return !hta_event_is_gpu(e) && e->cat == runtime_cat &&
           strncmp(hta_event_name(t, e), "cudaLaunchKernel", 16) == 0;
}

/* Indices of the events (or ranges) ordered by start, ties in trace order. */
static size_t *order_by_start(const int64_t *ts, size_t n)
{
    hta_keyed *k = malloc((2 * n + 1) * sizeof *k);
    size_t *order = malloc((n + 1) * sizeof *order);
    if (!k || !order) {
        free(k);
        free(order);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        k[i] = (hta_keyed){ts[i], i};
    if (hta_stable_sort_keyed_using(k, n, k + n)) {
        free(k);
        free(order);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = k[i].index;
    free(k);
    return order;
}

/* The cpu_ops enclosing each launch on its thread, outermost first, as
 * text: "['a', 'b']" like HTA's op_stack, with top and bottom. */
typedef struct op_stack {
    char *text;                /* owned */
    const char *top, *bottom;  /* names, "" when none */
} op_stack;

/* The cpu_ops of each thread in stack order (by start, longer first, then
 * trace order), swept with the launches in order of start: a thread's ops
 * started so far and not ended before the last launch are its open ones,
 * and those that also end at or after a launch's end enclose it. */
typedef struct op_sweep {
    const hta_cpu_contexts *ctx;
    const hta_event **ops;     /* owned: thread th's from first[th] */
    size_t *first;             /* owned, n_threads + 1 */
    size_t *next;              /* owned: per thread, its first op not yet started */
    const hta_event **open;    /* owned: thread th's open ops from first[th] */
    size_t *n_open;            /* owned, per thread */
    const hta_event **stack;   /* owned: the last launch's enclosing ops */
} op_sweep;

static void op_sweep_free(op_sweep *w)
{
    free(w->ops);
    free(w->first);
    free(w->next);
    free(w->open);
    free(w->n_open);
    free(w->stack);
}

/* -1 when out of memory (op_sweep_free frees what was made). */
static int op_sweep_init(op_sweep *w, const hta_trace *t, const hta_cpu_contexts *ctx,
                         uint32_t cpu_op_cat)
{
    size_t n_threads = ctx->n_threads, n = 0;
    *w = (op_sweep){.ctx = ctx};
    for (size_t i = 0; i < t->n_events; i++)
        n += !hta_event_is_gpu(&t->events[i]) && t->events[i].cat == cpu_op_cat;
    hta_keyed *k = malloc((2 * n + 1) * sizeof *k);
    w->ops = malloc((n + 1) * sizeof *w->ops);
    w->open = malloc((n + 1) * sizeof *w->open);
    w->first = calloc(n_threads + 2, sizeof *w->first);
    w->next = malloc((n_threads + 1) * sizeof *w->next);
    w->n_open = calloc(n_threads + 1, sizeof *w->n_open);
    w->stack = malloc((n + 1) * sizeof *w->stack);
    int rc = -1;
    if (!k || !w->ops || !w->open || !w->first || !w->next || !w->n_open || !w->stack)
        goto done;
    n = 0;
    for (size_t i = 0; i < t->n_events; i++)
        if (!hta_event_is_gpu(&t->events[i]) && t->events[i].cat == cpu_op_cat)
            k[n++] = (hta_keyed){-t->events[i].dur_ns, i};
    /* Longer first, then stably by start: (start, longer first, trace order). */
    if (hta_stable_sort_keyed_using(k, n, k + n))
        goto done;
    for (size_t i = 0; i < n; i++)
        k[i].key = t->events[k[i].index].ts_ns;
    if (hta_stable_sort_keyed_using(k, n, k + n))
        goto done;
    for (size_t i = 0; i < n; i++)
        w->first[hta_cpu_context_of(ctx, &t->events[k[i].index])->thread + 1]++;
    for (size_t th = 0; th < n_threads; th++)
        w->first[th + 1] += w->first[th];
    memcpy(w->next, w->first, n_threads * sizeof *w->next);
    for (size_t i = 0; i < n; i++) {
        const hta_event *e = &t->events[k[i].index];
        w->ops[w->next[hta_cpu_context_of(ctx, e)->thread]++] = e;
    }
    memcpy(w->next, w->first, n_threads * sizeof *w->next);
    rc = 0;
done:
    free(k);
    return rc;
}

/* The enclosing ops of launch, the launches coming in order of start:
 * their number, at *ops (owned by w, valid until the next call). */
static size_t op_sweep_enclosing(op_sweep *w, const hta_event *launch, const hta_event ***ops)
{
    uint32_t th = hta_cpu_context_of(w->ctx, launch)->thread;
    const hta_event **open = w->open + w->first[th];
    size_t n = w->n_open[th], kept = 0;
    for (; w->next[th] < w->first[th + 1] && w->ops[w->next[th]]->ts_ns <= launch->ts_ns;
         w->next[th]++)
        open[n++] = w->ops[w->next[th]];
    /* An op ended before this launch starts encloses no later launch. */
    for (size_t i = 0; i < n; i++)
        if (hta_event_end(open[i]) >= launch->ts_ns)
            open[kept++] = open[i];
    w->n_open[th] = kept;
    size_t m = 0;
    for (size_t i = 0; i < kept; i++)
        if (hta_event_end(open[i]) >= hta_event_end(launch))
            w->stack[m++] = open[i];
    *ops = w->stack;
    return m;
}

static int stack_of(const hta_trace *t, op_sweep *w, const hta_event *launch, op_stack *out)
{
    const hta_event **ops;
    size_t n = op_sweep_enclosing(w, launch, &ops);
    size_t len = 3;
    for (size_t i = 0; i < n; i++)
        len += strlen(hta_event_name(t, ops[i])) + 4;
    out->text = malloc(len);
    if (!out->text)
        return -1;
    char *p = out->text;
    *p++ = '[';
    for (size_t i = 0; i < n; i++)
        p += sprintf(p, "%s'%s'", i ? ", " : "", hta_event_name(t, ops[i]));
    *p++ = ']';
    *p = '\0';
    out->top = n ? hta_event_name(t, ops[0]) : "";
    out->bottom = n ? hta_event_name(t, ops[n - 1]) : "";
    return 0;
}

typedef struct kernel_sum {
    uint32_t name;
    int64_t count;
    int64_t dur;
    double flops;
} kernel_sum;

static int cmp_kernel_sum(const void *a, const void *b)
{
    const kernel_sum *x = a, *y = b;
    return x->name < y->name ? -1 : x->name > y->name;
}

static double range_counter(const hta_trace *t, const hta_profiler_range *r, uint32_t id)
{
    for (uint32_t c = 0; c < r->n_counters; c++)
        if (t->range_counters[r->first_counter + c].counter == id)
            return t->range_counters[r->first_counter + c].value;
    return id == UINT32_MAX ? NAN : 0.0;
}

static int emit_range(hta_tableset *out, const hta_rank_view *v, size_t i,
                      const hta_profiler_range *r, const hta_event *launch, const op_stack *st,
                      const uint32_t *sass, kernel_sum *sum)
{
    const hta_trace *t = v->trace;
    double counts[N_SASS], flops = 0;
    for (int k = 0; k < N_SASS; k++) {
        counts[k] = range_counter(t, r, sass[k]);
        if (!isnan(counts[k]))
            flops += counts[k] * (strstr(SASS_OPS[k], "fma") ? 2 : 1);
    }
    hta_table *tab = hta_tableset_table(out, &hta_cupti_counters_table);
    if (!tab)
        return -1;
    hta_row_builder row = hta_table_add_row(tab);
    hta_row_put_i64(&row, v->rank_key);
    hta_row_put_i64(&row, (int64_t)i);
    hta_row_put_str(&row, hta_strtab_get(&t->names, r->name));
    hta_row_put_f64(&row, hta_ns_to_us(r->ts_ns));
    hta_row_put_f64(&row, hta_ns_to_us(r->dur_ns));
    hta_row_put_f64(&row, launch ? hta_ns_to_us(launch->ts_ns) : NAN);
    hta_row_put_i64(&row, launch ? hta_event_correlation(t, launch) : -1);
    hta_row_put_str(&row, st->top);
    hta_row_put_str(&row, st->bottom);
    hta_row_put_str(&row, st->text ? st->text : "");
    hta_row_put_f64(&row, flops);
    for (int k = 0; k < N_SASS; k++)
        hta_row_put_f64(&row, counts[k]);
    if (hta_row_done(&row))
        return -1;
    hta_table *values = hta_tableset_table(out, &hta_cupti_counter_values_table);
    for (uint32_t c = 0; c < r->n_counters; c++) {
        const hta_range_counter *rc = &t->range_counters[r->first_counter + c];
        hta_row_builder vr = hta_table_add_row(values);
        hta_row_put_i64(&vr, v->rank_key);
        hta_row_put_i64(&vr, (int64_t)i);
        hta_row_put_str(&vr, hta_strtab_get(&t->counter_names, rc->counter));
        hta_row_put_f64(&vr, rc->value);
        if (!values || hta_row_done(&vr))
            return -1;
    }
    *sum = (kernel_sum){r->name, 1, r->dur_ns, flops};
    return 0;
}

static int emit_kernels(hta_tableset *out, const hta_rank_view *v, kernel_sum *s, size_t n)
{
    qsort(s, n, sizeof *s, cmp_kernel_sum);
    hta_table *tab = hta_tableset_table(out, &hta_cupti_kernels_table);
    if (!tab)
        return -1;
    for (size_t i = 0, j; i < n; i = j) {
        kernel_sum k = s[i];
        for (j = i + 1; j < n && s[j].name == s[i].name; j++) {
            k.count++;
            k.dur += s[j].dur;
            k.flops += s[j].flops;
        }
        hta_row_builder row = hta_table_add_row(tab);
        hta_row_put_i64(&row, v->rank_key);
        hta_row_put_str(&row, hta_strtab_get(&v->trace->names, k.name));
        hta_row_put_i64(&row, k.count);
        hta_row_put_f64(&row, hta_ns_to_us(k.dur));
        hta_row_put_f64(&row, k.flops);
        hta_row_put_f64(&row, k.flops / (double)k.count);
        if (hta_row_done(&row))
            return -1;
    }
    return 0;
}

static int emit_matching(hta_tableset *out, int64_t rank, size_t ranges, size_t launches)
{
    size_t matched = ranges < launches ? ranges : launches;
    hta_table *tab = hta_tableset_table(out, &hta_cupti_matching_table);
    if (!tab)
        return -1;
    hta_row_builder row = hta_table_add_row(tab);
    hta_row_put_i64(&row, rank);
    hta_row_put_i64(&row, (int64_t)ranges);
    hta_row_put_i64(&row, (int64_t)launches);
    hta_row_put_i64(&row, (int64_t)matched);
    hta_row_put_i64(&row, (int64_t)(ranges - matched));
    hta_row_put_i64(&row, (int64_t)(launches - matched));
    return hta_row_done(&row);
}

int hta_cupti_counters(const hta_rank_view *view, hta_tableset *out, hta_error *err)
{
    const hta_trace *t = view->trace;
    if (t->n_ranges == 0)
        return 0;
    uint32_t runtime_cat = hta_strtab_find(&t->categories, "cuda_runtime", 12);
    uint32_t cpu_op_cat = hta_strtab_find(&t->categories, "cpu_op", 6);
    uint32_t sass[N_SASS];
    find_sass(t, sass);
    hta_cpu_contexts ctx = {0};
    op_sweep sweep = {0};
    size_t n_launches = 0;
    for (size_t i = 0; i < t->n_events; i++)
        n_launches += is_kernel_launch(t, &t->events[i], runtime_cat);
    const hta_event **launches = malloc((n_launches + 1) * sizeof *launches);
    int64_t *launch_ts = malloc((n_launches + 1) * sizeof *launch_ts);
    int64_t *range_ts = malloc((t->n_ranges + 1) * sizeof *range_ts);
    kernel_sum *sums = malloc((t->n_ranges + 1) * sizeof *sums);
    size_t *launch_order = NULL, *range_order = NULL;
    int rc = -1;
    if (!launches || !launch_ts || !range_ts || !sums || hta_cpu_contexts_build(&ctx, t) ||
        op_sweep_init(&sweep, t, &ctx, cpu_op_cat))
        goto done;
    n_launches = 0;
    for (size_t i = 0; i < t->n_events; i++)
        if (is_kernel_launch(t, &t->events[i], runtime_cat)) {
            launch_ts[n_launches] = t->events[i].ts_ns;
            launches[n_launches++] = &t->events[i];
        }
    for (size_t i = 0; i < t->n_ranges; i++)
        range_ts[i] = t->ranges[i].ts_ns;
    launch_order = order_by_start(launch_ts, n_launches);
    range_order = order_by_start(range_ts, t->n_ranges);
    if (!launch_order || !range_order)
        goto done;
    for (size_t i = 0; i < t->n_ranges; i++) {
        const hta_event *launch = i < n_launches ? launches[launch_order[i]] : NULL;
        op_stack st = {NULL, "", ""};
        if (launch && stack_of(t, &sweep, launch, &st))
            goto done;
        int bad = emit_range(out, view, i, &t->ranges[range_order[i]], launch, &st, sass,
                             &sums[i]);
        free(st.text);
        if (bad)
            goto done;
    }
    if (emit_kernels(out, view, sums, t->n_ranges) ||
        emit_matching(out, view->rank_key, t->n_ranges, n_launches))
        goto done;
    rc = 0;
done:
    op_sweep_free(&sweep);
    hta_cpu_contexts_free(&ctx);
    free(launches);
    free(launch_ts);
    free(range_ts);
    free(sums);
    free(launch_order);
    free(range_order);
    return rc ? hta_fail(err, "out of memory in the CUPTI counters") : 0;
}
