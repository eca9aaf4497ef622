/* ops.c: GPU work per CPU op ("ops", docs/definitions.md, CPU ops).
 *
 * Each GPU event belongs to the innermost cpu_op that encloses its launch
 * on the launching thread (model/op_walk.h): an op's own GPU work, not its
 * children's.  Per (op name, Input Dims, Input type), over every call of
 * the op: calls, calls that launched GPU work, GPU events and GPU events
 * per call, GPU busy time of a call (the union of its own GPU events'
 * intervals) summed and as mean / min / max / sample std over the calls,
 * CPU time (the op's duration) summed, and over the calls that launched
 * a kernel the mean op-to-launch delay (its first kernel launch's start
 * minus the op's start) and launch-to-kernel delay (that kernel's start
 * minus the launch's start), HTA's two delays of
 * get_aten_op_kernels_and_delay.  A kernel launch is what HTA calls one
 * (cuda*LaunchKernel*, cuLaunchKernel*, runFunction*) and hipLaunchKernel
 * and hipExtModuleLaunchKernel, which HTA misses; copies and memsets count
 * as GPU work but not as launches.  Rows by name, Input Dims, Input type.
 * The same walk counts the kernel sequences (analysis/kernel_sequences.h)
 * and sizes the GEMM, convolution and attention calls
 * (analysis/op_perf.h), with each call's own GPU time measured here.
 * With --detail, "detail/op_kernels" lists every call that launched a
 * kernel: its start, the names of its own kernels in launch order joined
 * by " -> " and its two delays (the rows HTA groups by op and kernel
 * sequence). */
#define _GNU_SOURCE /* qsort_r */
#include "analysis/ops.h"
#include "analysis/kernel_sequences.h"
#include "analysis/op_perf.h"
#include "model/op_groups.h"
#include "model/op_walk.h"
#include "numerics/stats.h"
#include "util/grow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const hta_column COLUMNS[HTA_OPS_N_COLUMNS] = {
    [HTA_OPS_RANK] = {"rank", HTA_COL_I64},
    [HTA_OPS_NAME] = {"name", HTA_COL_STR},
    [HTA_OPS_INPUT_DIMS] = {"input_dims", HTA_COL_STR},
    [HTA_OPS_INPUT_TYPE] = {"input_type", HTA_COL_STR},
    [HTA_OPS_CALLS] = {"calls", HTA_COL_I64},
    [HTA_OPS_CALLS_WITH_GPU] = {"calls_with_gpu", HTA_COL_I64},
    [HTA_OPS_CALLS_WITH_KERNELS] = {"calls_with_kernels", HTA_COL_I64},
    [HTA_OPS_GPU_EVENTS] = {"gpu_events", HTA_COL_I64},
    [HTA_OPS_GPU_EVENTS_PER_CALL] = {"gpu_events_per_call", HTA_COL_F64},
    [HTA_OPS_GPU_BUSY_SUM_US] = {"gpu_busy_sum_us", HTA_COL_F64},
    [HTA_OPS_GPU_BUSY_MEAN_US] = {"gpu_busy_mean_us", HTA_COL_F64},
    [HTA_OPS_GPU_BUSY_MIN_US] = {"gpu_busy_min_us", HTA_COL_F64},
    [HTA_OPS_GPU_BUSY_MAX_US] = {"gpu_busy_max_us", HTA_COL_F64},
    [HTA_OPS_GPU_BUSY_STD_US] = {"gpu_busy_std_us", HTA_COL_F64},
    [HTA_OPS_CPU_TIME_US] = {"cpu_time_us", HTA_COL_F64},
    [HTA_OPS_OP_TO_LAUNCH_MEAN_US] = {"op_to_launch_mean_us", HTA_COL_F64},
    [HTA_OPS_LAUNCH_TO_KERNEL_MEAN_US] = {"launch_to_kernel_mean_us", HTA_COL_F64},
};
const hta_table_spec hta_ops_table = {
    "ops", COLUMNS, HTA_OPS_N_COLUMNS, HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

static const hta_column CALL_COLUMNS[HTA_DETAIL_OP_KERNELS_N_COLUMNS] = {
    [HTA_DETAIL_OP_KERNELS_RANK] = {"rank", HTA_COL_I64},
    [HTA_DETAIL_OP_KERNELS_NAME] = {"name", HTA_COL_STR},
    [HTA_DETAIL_OP_KERNELS_TS_US] = {"ts_us", HTA_COL_F64},
    [HTA_DETAIL_OP_KERNELS_KERNELS] = {"kernels", HTA_COL_STR},
    [HTA_DETAIL_OP_KERNELS_OP_TO_LAUNCH_US] = {"op_to_launch_us", HTA_COL_F64},
    [HTA_DETAIL_OP_KERNELS_LAUNCH_TO_KERNEL_US] = {"launch_to_kernel_us", HTA_COL_F64},
};
const hta_table_spec hta_detail_op_kernels_table = {
    "detail/op_kernels", CALL_COLUMNS, HTA_DETAIL_OP_KERNELS_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

typedef struct op_stats {
    int64_t calls, calls_with_gpu, calls_with_kernels, gpu_events;
    int64_t busy_sum_ns, busy_min_ns, busy_max_ns, cpu_ns;
    double busy_mean, busy_m2; /* Welford, in ns */
    int64_t op_to_launch_ns, launch_to_kernel_ns;
    uint32_t name, context;    /* of the first call */
} op_stats;

typedef struct ops_run {
    const hta_rank_view *view;
    hta_op_groups groups;
    op_stats *stats;
    size_t cap_stats;
    unsigned char *is_kernel_launch; /* by name id */
    hta_sequences *sequences;  /* counted in the same walk */
    hta_op_perf *perf;         /* likewise */
    hta_interval *spans;       /* one call's own GPU intervals */
    size_t cap_spans;
    hta_table *calls;          /* detail/op_kernels, or NULL without --detail */
    char *text;                /* a call's kernel names being joined */
    size_t cap_text;
} ops_run;

static int compare_spans(const void *a, const void *b)
{
    const hta_interval *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

static int is_sorted_by_start(const hta_interval *s, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (s[i].start < s[i - 1].start)
            return 0;
    return 1;
}

/* The union length of n intervals (sorted here, unless they already are:
 * most ops launch one kernel, or several in start order). */
static int64_t union_length(hta_interval *s, size_t n)
{
    if (n == 0)
        return 0;
    if (!is_sorted_by_start(s, n))
        qsort(s, n, sizeof *s, compare_spans);
    int64_t total = 0, start = 0, end = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        if (s[i].start > end) {
            total += end > start ? end - start : 0;
            start = s[i].start;
            end = s[i].end;
        } else if (s[i].end > end) {
            end = s[i].end;
        }
    }
    return total + (end > start ? end - start : 0);
}

static op_stats *stats_of(ops_run *r, const hta_event *op, size_t *group)
{
    size_t g = *group = hta_op_groups_find(&r->groups, op);
    if (g == SIZE_MAX)
        return NULL;
    if (hta_grow_array((void **)&r->stats, &r->cap_stats, g + 1, sizeof *r->stats))
        return NULL;
    if (g == r->groups.n - 1 && r->groups.fresh) {
        size_t context = hta_cpu_context_index(&r->groups.contexts, op);
        r->stats[g] = (op_stats){.busy_min_ns = INT64_MAX, .name = op->name,
                                 .context = (uint32_t)context};
    }
    return &r->stats[g];
}

/* The call's own GPU intervals into r->spans; their count. */
static long own_spans(ops_run *r, const hta_op_visit *v)
{
    size_t n = 0;
    for (size_t i = 0; i < v->n_gpu; i++)
        n += v->gpu[i].depth == v->depth;
    if (n > r->cap_spans) {
        hta_interval *grown = realloc(r->spans, n * sizeof *grown);
        if (!grown)
            return -1;
        r->spans = grown;
        r->cap_spans = n;
    }
    n = 0;
    for (size_t i = 0; i < v->n_gpu; i++)
        if (v->gpu[i].depth == v->depth)
            r->spans[n++] = (hta_interval){v->gpu[i].gpu->ts_ns, hta_event_end(v->gpu[i].gpu)};
    return (long)n;
}

static int names_kernel_launch(const char *name)
{
    const char *at = strstr(name, "LaunchKernel");
    return (at && (strncmp(name, "cuda", 4) == 0 || strncmp(name, "cuLaunchKernel", 14) == 0 ||
                   strcmp(name, "hipLaunchKernel") == 0 ||
                   strcmp(name, "hipExtModuleLaunchKernel") == 0)) ||
           strncmp(name, "runFunction", 11) == 0;
}

static int find_kernel_launches(ops_run *r)
{
    const hta_strtab *names = &r->view->trace->names;
    r->is_kernel_launch = malloc((size_t)names->count + 1);
    if (!r->is_kernel_launch)
        return -1;
    for (uint32_t k = 0; k < names->count; k++)
        r->is_kernel_launch[k] = (unsigned char)names_kernel_launch(hta_strtab_get(names, k));
    return 0;
}

/* The call's own first kernel launch, or NULL. */
static const hta_op_gpu *first_kernel_launch(const ops_run *r, const hta_op_visit *v)
{
    for (size_t i = 0; i < v->n_gpu; i++)
        if (v->gpu[i].depth == v->depth && r->is_kernel_launch[v->gpu[i].launch->name])
            return &v->gpu[i];
    return NULL;
}

static int append_text(ops_run *r, size_t *len, const char *s)
{
    size_t n = strlen(s);
    if (hta_grow_array((void **)&r->text, &r->cap_text, *len + n + 1, 1))
        return -1;
    memcpy(r->text + *len, s, n + 1);
    *len += n;
    return 0;
}

/* The call's detail/op_kernels row: first is its first kernel launch. */
static int put_call_row(ops_run *r, const hta_op_visit *v, const hta_op_gpu *first)
{
    const hta_trace *trace = r->view->trace;
    size_t len = 0;
    int rc = append_text(r, &len, "");
    for (size_t i = 0; rc == 0 && i < v->n_gpu; i++) {
        const hta_op_gpu *g = &v->gpu[i];
        if (g->depth != v->depth || !r->is_kernel_launch[g->launch->name])
            continue;
        if (len)
            rc = append_text(r, &len, " -> ");
        if (rc == 0)
            rc = append_text(r, &len, hta_event_name(trace, g->gpu));
    }
    if (rc)
        return -1;
    hta_row_builder row = hta_table_add_row(r->calls);
    hta_row_put_i64(&row, r->view->rank_key);
    hta_row_put_str(&row, hta_event_name(trace, v->op));
    hta_row_put_f64(&row, hta_ns_to_us(v->op->ts_ns));
    hta_row_put_str(&row, r->text);
    hta_row_put_f64(&row, hta_ns_to_us(first->launch->ts_ns - v->op->ts_ns));
    hta_row_put_f64(&row, hta_ns_to_us(first->gpu->ts_ns - first->launch->ts_ns));
    return hta_row_done(&row);
}

static int visit_op(void *ctx, const hta_op_visit *v)
{
    ops_run *r = ctx;
    if (hta_sequences_visit(r->sequences, v))
        return -1;
    size_t group;
    op_stats *s = stats_of(r, v->op, &group);
    long n = s ? own_spans(r, v) : -1;
    if (n < 0)
        return -1;
    int64_t busy = union_length(r->spans, (size_t)n);
    if (hta_op_perf_visit(r->perf, &r->groups, v, group, busy))
        return -1;
    s->calls++;
    s->gpu_events += n;
    s->cpu_ns += v->op->dur_ns;
    s->busy_sum_ns += busy;
    s->busy_min_ns = busy < s->busy_min_ns ? busy : s->busy_min_ns;
    s->busy_max_ns = busy > s->busy_max_ns ? busy : s->busy_max_ns;
    double delta = (double)busy - s->busy_mean;
    s->busy_mean += delta / (double)s->calls;
    s->busy_m2 += delta * ((double)busy - s->busy_mean);
    s->calls_with_gpu += n > 0;
    const hta_op_gpu *first = first_kernel_launch(r, v);
    if (first) {
        s->calls_with_kernels++;
        s->op_to_launch_ns += first->launch->ts_ns - v->op->ts_ns;
        s->launch_to_kernel_ns += first->gpu->ts_ns - first->launch->ts_ns;
        if (r->calls && put_call_row(r, v, first))
            return -1;
    }
    return 0;
}

static int put_row(hta_table *t, const ops_run *r, const op_stats *s)
{
    const hta_trace *trace = r->view->trace;
    const hta_cpu_context *c = &r->groups.contexts.of[s->context];
    double with_kernels = (double)s->calls_with_kernels;
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, r->view->rank_key);
    hta_row_put_str(&row, hta_strtab_get(&trace->names, s->name));
    hta_row_put_str(&row, c->input_dims);
    hta_row_put_str(&row, c->input_type);
    hta_row_put_i64(&row, s->calls);
    hta_row_put_i64(&row, s->calls_with_gpu);
    hta_row_put_i64(&row, s->calls_with_kernels);
    hta_row_put_i64(&row, s->gpu_events);
    hta_row_put_f64(&row, (double)s->gpu_events / (double)s->calls);
    hta_row_put_f64(&row, hta_ns_to_us(s->busy_sum_ns));
    hta_row_put_f64(&row, s->busy_mean / 1000.0);
    hta_row_put_f64(&row, hta_ns_to_us(s->busy_min_ns));
    hta_row_put_f64(&row, hta_ns_to_us(s->busy_max_ns));
    hta_row_put_f64(&row, hta_std_from_squares(s->busy_m2, (size_t)s->calls) / 1000.0);
    hta_row_put_f64(&row, hta_ns_to_us(s->cpu_ns));
    hta_row_put_f64(&row, with_kernels ? (double)s->op_to_launch_ns / with_kernels / 1000.0 : NAN);
    hta_row_put_f64(&row,
                    with_kernels ? (double)s->launch_to_kernel_ns / with_kernels / 1000.0 : NAN);
    return hta_row_done(&row);
}

static int compare_rows(const void *a, const void *b, void *run)
{
    const ops_run *r = run;
    const op_stats *x = a, *y = b;
    return hta_op_groups_compare(&r->groups, r->view->trace, x->name, x->context, y->name,
                                 y->context);
}

int hta_ops(const hta_rank_view *v, const hta_analysis_settings *opt, hta_tableset *out,
            hta_error *err)
{
    hta_table *t = hta_tableset_table(out, &hta_ops_table);
    ops_run r = {.view = v, .sequences = hta_sequences_start(v, opt)};
    hta_error perf_err = {{0}};
    r.perf = hta_op_perf_start(v, opt, &perf_err);
    if (!r.perf) {
        hta_sequences_free(r.sequences);
        return hta_fail(err, "%s", perf_err.text);
    }
    if (opt->detail && v->n_gpu > 0)
        r.calls = hta_tableset_table(out, &hta_detail_op_kernels_table);
    int rc = t && r.sequences && (r.calls || !opt->detail || v->n_gpu == 0) &&
                     find_kernel_launches(&r) == 0 &&
                     hta_op_groups_init(&r.groups, v->trace) == 0
                 ? 0
                 : -1;
    if (rc == 0)
        rc = hta_op_walk(v, &r.groups.contexts, visit_op, &r);
    if (rc == 0 && r.groups.n)
        qsort_r(r.stats, r.groups.n, sizeof *r.stats, compare_rows, &r);
    for (size_t g = 0; rc == 0 && g < r.groups.n; g++)
        rc = put_row(t, &r, &r.stats[g]);
    if (rc == 0)
        rc = hta_sequences_finish(r.sequences, out);
    if (rc == 0)
        rc = hta_op_perf_finish(r.perf, &r.groups, out);
    hta_sequences_free(r.sequences);
    hta_op_perf_free(r.perf);
    hta_op_groups_free(&r.groups);
    free(r.stats);
    free(r.spans);
    free(r.text);
    free(r.is_kernel_launch);
    return rc ? hta_fail(err, "out of memory in the op breakdown") : 0;
}
