/* op_perf.c: achieved rates of the GEMM, convolution and attention ops
 * against the roofline ("op_perf", docs/definitions.md, Op performance).
 *
 * Each call of such an op is sized from its arguments (model/op_flops.h)
 * and timed by the union of its own GPU events, as /ops times it: a
 * wrapper (aten::conv2d, aten::linear) launches nothing itself, its inner
 * op (aten::miopen_convolution, aten::addmm) carries both the kernels and
 * the same FLOPs, so only calls with GPU work of their own count and no
 * work is counted twice.  Per (op name, Input Dims, Input type): calls,
 * unsized calls, FLOPs, bytes, GPU time, TFLOPS, TB/s, arithmetic
 * intensity, and against the GPU's peaks (model/gpu_peaks.h: the
 * --gpu-spec file, else the built-in table by the trace's device name)
 * the roofline time max(FLOPs / peak, bytes / bandwidth), what bounds it
 * and the share of it achieved.  Rates cover the sized calls only.  Per
 * rank, to /rank_metrics and so the outlier search and the straggler's
 * reasons: gemm_tflops and attention_tflops (all such FLOPs over all
 * such time) and gemm_pct_peak (the GEMMs' time at peak over their
 * actual time, in percent).  A call's sizing is kept per context, so an
 * op repeated with the same arguments is sized once. */
#define _GNU_SOURCE /* qsort_r */
#include "analysis/op_perf.h"

#include "analysis/metrics.h"
#include "model/gpu_peaks.h"
#include "model/op_flops.h"
#include "model/profiler_steps.h"
#include "util/grow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per step, for /steps on the root (crossrank/compare/op_perf_comparison.c). */
static const hta_column STEP_COLUMNS[HTA_STEP_FLOPS_N_COLUMNS] = {
    [HTA_STEP_FLOPS_RANK] = {"rank", HTA_COL_I64},
    [HTA_STEP_FLOPS_STEP] = {"step", HTA_COL_I64},
    [HTA_STEP_FLOPS_FLOPS] = {"flops", HTA_COL_F64},
    [HTA_STEP_FLOPS_TIME_AT_PEAK_US] = {"time_at_peak_us", HTA_COL_F64},
};
const hta_table_spec hta_step_flops_table = {
    "_step_flops", STEP_COLUMNS, HTA_STEP_FLOPS_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED | HTA_TABLE_SCRATCH};

static const hta_column COLUMNS[HTA_OP_PERF_N_COLUMNS] = {
    [HTA_OP_PERF_RANK] = {"rank", HTA_COL_I64},
    [HTA_OP_PERF_NAME] = {"name", HTA_COL_STR},
    [HTA_OP_PERF_INPUT_DIMS] = {"input_dims", HTA_COL_STR},
    [HTA_OP_PERF_INPUT_TYPE] = {"input_type", HTA_COL_STR},
    [HTA_OP_PERF_KIND] = {"kind", HTA_COL_STR},
    [HTA_OP_PERF_DTYPE] = {"dtype", HTA_COL_STR},
    [HTA_OP_PERF_CALLS] = {"calls", HTA_COL_I64},
    [HTA_OP_PERF_UNSIZED_CALLS] = {"unsized_calls", HTA_COL_I64},
    [HTA_OP_PERF_FLOPS] = {"flops", HTA_COL_F64},
    [HTA_OP_PERF_BYTES] = {"bytes", HTA_COL_F64},
    [HTA_OP_PERF_GPU_TIME_US] = {"gpu_time_us", HTA_COL_F64},
    [HTA_OP_PERF_TFLOPS] = {"tflops", HTA_COL_F64},
    [HTA_OP_PERF_TBPS] = {"tbps", HTA_COL_F64},
    [HTA_OP_PERF_INTENSITY] = {"intensity", HTA_COL_F64},
    [HTA_OP_PERF_PEAK_TFLOPS] = {"peak_tflops", HTA_COL_F64},
    [HTA_OP_PERF_PEAK_TBPS] = {"peak_tbps", HTA_COL_F64},
    [HTA_OP_PERF_ROOFLINE_TIME_US] = {"roofline_time_us", HTA_COL_F64},
    [HTA_OP_PERF_BOUND] = {"bound", HTA_COL_STR},
    [HTA_OP_PERF_PCT_ROOFLINE] = {"pct_roofline", HTA_COL_F64},
    [HTA_OP_PERF_PEAKS_OF] = {"peaks_of", HTA_COL_STR},
};
const hta_table_spec hta_op_perf_table = {
    "op_perf", COLUMNS, HTA_OP_PERF_N_COLUMNS, HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

typedef struct sizing {
    uint32_t name;             /* the op it was computed for; UINT32_MAX = none */
    hta_op_work work;
} sizing;

typedef struct group_perf {
    int64_t calls, unsized_calls;
    int64_t time_ns, sized_time_ns;
    double flops, bytes;
    hta_op_kind kind;
    hta_dtype dtype;           /* of the first sized call */
    uint32_t name, context;    /* of the first call */
} group_perf;

struct hta_op_perf {
    const hta_rank_view *view;
    const hta_op_groups *op_groups; /* while the rows are sorted */
    unsigned char *kind_of;    /* by name id: hta_op_kind */
    sizing *sized;             /* by context index */
    group_perf *groups;        /* by op group; kind 0 = none seen */
    size_t cap_groups, n_groups;
    hta_gpu_peaks peaks;
    char peaks_of[160];        /* what the peaks are, or why there are none */
    hta_profiler_steps steps;
    double *step_flops, *step_at_peak_s; /* by step index */
    size_t step_cursor;
};

static int resolve_peaks(hta_op_perf *p, const hta_analysis_settings *opt, hta_error *err)
{
    const char *device = p->view->trace->device_name;
    if (opt->gpu_spec) {
        if (hta_gpu_spec_read(opt->gpu_spec, &p->peaks, err))
            return -1;
        snprintf(p->peaks_of, sizeof p->peaks_of, "--gpu-spec %s", p->peaks.name);
    } else if (hta_gpu_peaks_builtin(device, &p->peaks) == 0) {
        snprintf(p->peaks_of, sizeof p->peaks_of, "built-in %s", p->peaks.name);
    } else {
        snprintf(p->peaks_of, sizeof p->peaks_of, "unknown device \"%s\": no peaks", device);
    }
    return 0;
}

hta_op_perf *hta_op_perf_start(const hta_rank_view *v, const hta_analysis_settings *opt,
                               hta_error *err)
{
    const hta_strtab *names = &v->trace->names;
    const hta_strtab *contexts = &v->trace->cpu_contexts;
    hta_op_perf *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->view = v;
    p->kind_of = malloc((size_t)names->count + 1);
    p->sized = malloc(((size_t)contexts->count + 1) * sizeof *p->sized);
    if (!p->kind_of || !p->sized) {
        hta_fail(err, "out of memory in the op performance");
        hta_op_perf_free(p);
        return NULL;
    }
    for (uint32_t k = 0; k < names->count; k++)
        p->kind_of[k] = (unsigned char)hta_op_kind_of(hta_strtab_get(names, k));
    for (size_t c = 0; c <= contexts->count; c++)
        p->sized[c].name = UINT32_MAX;
    if (hta_profiler_steps_find(&p->steps, v->trace) ||
        !(p->step_flops = calloc(p->steps.n + 1, sizeof *p->step_flops)) ||
        !(p->step_at_peak_s = calloc(p->steps.n + 1, sizeof *p->step_at_peak_s))) {
        hta_fail(err, "out of memory in the op performance");
        hta_op_perf_free(p);
        return NULL;
    }
    if (resolve_peaks(p, opt, err)) {
        hta_op_perf_free(p);
        return NULL;
    }
    return p;
}

static const hta_op_work *work_of(hta_op_perf *p, const hta_op_groups *groups,
                                  const hta_event *op)
{
    size_t c = hta_cpu_context_index(&groups->contexts, op);
    sizing *s = &p->sized[c];
    if (s->name != op->name) {
        const hta_cpu_context *ctx = &groups->contexts.of[c];
        s->name = op->name;
        s->work = hta_op_work_of(hta_event_name(p->view->trace, op), ctx->input_dims,
                                 ctx->input_type, ctx->concrete_inputs);
    }
    return &s->work;
}

int hta_op_perf_visit(hta_op_perf *p, const hta_op_groups *groups, const hta_op_visit *v,
                      size_t group, int64_t own_busy_ns)
{
    if (p->kind_of[v->op->name] == HTA_OP_OTHER || own_busy_ns <= 0)
        return 0;
    if (hta_grow_array((void **)&p->groups, &p->cap_groups, group + 1, sizeof *p->groups))
        return -1;
    for (; p->n_groups <= group; p->n_groups++)
        p->groups[p->n_groups] = (group_perf){0};
    const hta_op_work *w = work_of(p, groups, v->op);
    group_perf *g = &p->groups[group];
    if (g->calls == 0)
        *g = (group_perf){.kind = w->kind, .name = v->op->name,
                          .context = (uint32_t)hta_cpu_context_index(&groups->contexts, v->op)};
    g->calls++;
    g->time_ns += own_busy_ns;
    if (!w->sized) {
        g->unsized_calls++;
        return 0;
    }
    if (g->dtype == HTA_DTYPE_UNKNOWN)
        g->dtype = w->dtype;
    g->flops += w->flops;
    g->bytes += w->bytes;
    g->sized_time_ns += own_busy_ns;
    long step = hta_profiler_step_at(&p->steps, v->op->ts_ns, &p->step_cursor);
    if (step >= 0) {
        p->step_flops[step] += w->flops;
        p->step_at_peak_s[step] += w->flops / (p->peaks.tflops[w->dtype] * 1e12);
    }
    return 0;
}

static const char *kind_name(hta_op_kind k)
{
    return k == HTA_OP_GEMM ? "gemm" : k == HTA_OP_CONV ? "conv" : "attention";
}

/* Seconds at peak: the compute roof and the memory roof. */
static void roofs(const hta_op_perf *p, const group_perf *g, double *compute_s,
                  double *memory_s)
{
    *compute_s = g->flops / (p->peaks.tflops[g->dtype] * 1e12);
    *memory_s = g->bytes / (p->peaks.memory_tbps * 1e12);
}

static int put_row(hta_table *t, const hta_op_perf *p, const hta_op_groups *groups,
                   const group_perf *g)
{
    const hta_cpu_context *c = &groups->contexts.of[g->context];
    int sized = g->sized_time_ns > 0;
    double seconds = (double)g->sized_time_ns / 1e9, compute_s, memory_s;
    roofs(p, g, &compute_s, &memory_s);
    double roof_s = fmax(compute_s, memory_s);
    int known = sized && isfinite(compute_s) && isfinite(memory_s);
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, p->view->rank_key);
    hta_row_put_str(&row, hta_strtab_get(&p->view->trace->names, g->name));
    hta_row_put_str(&row, c->input_dims);
    hta_row_put_str(&row, c->input_type);
    hta_row_put_str(&row, kind_name(g->kind));
    hta_row_put_str(&row, hta_dtype_name(g->dtype));
    hta_row_put_i64(&row, g->calls);
    hta_row_put_i64(&row, g->unsized_calls);
    hta_row_put_f64(&row, sized ? g->flops : NAN);
    hta_row_put_f64(&row, sized ? g->bytes : NAN);
    hta_row_put_f64(&row, hta_ns_to_us(g->time_ns));
    hta_row_put_f64(&row, sized ? g->flops / seconds / 1e12 : NAN);
    hta_row_put_f64(&row, sized ? g->bytes / seconds / 1e12 : NAN);
    hta_row_put_f64(&row, sized && g->bytes > 0 ? g->flops / g->bytes : NAN);
    hta_row_put_f64(&row, p->peaks.tflops[g->dtype]);
    hta_row_put_f64(&row, p->peaks.memory_tbps);
    hta_row_put_f64(&row, known ? roof_s * 1e6 : NAN);
    hta_row_put_str(&row, !known ? "" : compute_s >= memory_s ? "compute" : "memory");
    hta_row_put_f64(&row, known ? 100 * roof_s / seconds : NAN);
    hta_row_put_str(&row, p->peaks_of);
    return hta_row_done(&row);
}

/* As /ops orders its rows. */
static int compare_rows(const void *a, const void *b, void *perf)
{
    const hta_op_perf *p = perf;
    const group_perf *x = a, *y = b;
    return hta_op_groups_compare(p->op_groups, p->view->trace, x->name, x->context, y->name,
                                 y->context);
}

/* The rank's rate of one kind over its sized calls, and for GEMMs the
 * time at peak over the actual time. */
static int emit_metrics(const hta_op_perf *p, hta_tableset *out)
{
    double flops[HTA_OP_ATTENTION + 1] = {0}, seconds[HTA_OP_ATTENTION + 1] = {0};
    double gemm_at_peak_s = 0;
    for (size_t i = 0; i < p->n_groups; i++) {
        const group_perf *g = &p->groups[i];
        if (g->sized_time_ns <= 0)
            continue;
        flops[g->kind] += g->flops;
        seconds[g->kind] += (double)g->sized_time_ns / 1e9;
        if (g->kind == HTA_OP_GEMM)
            gemm_at_peak_s += g->flops / (p->peaks.tflops[g->dtype] * 1e12);
    }
    int64_t rank = p->view->rank_key;
    double pct_peak = 100 * gemm_at_peak_s / seconds[HTA_OP_GEMM];
    int rc = 0;
    if (seconds[HTA_OP_GEMM] > 0)
        rc = hta_emit_metric(out, rank, HTA_METRIC_GEMM_TFLOPS, NULL,
                             flops[HTA_OP_GEMM] / seconds[HTA_OP_GEMM] / 1e12) ||
             (isfinite(pct_peak) &&
              hta_emit_metric(out, rank, HTA_METRIC_GEMM_PCT_PEAK, NULL, pct_peak));
    if (rc == 0 && seconds[HTA_OP_ATTENTION] > 0)
        rc = hta_emit_metric(out, rank, HTA_METRIC_ATTENTION_TFLOPS, NULL,
                             flops[HTA_OP_ATTENTION] / seconds[HTA_OP_ATTENTION] / 1e12);
    return rc ? -1 : 0;
}

/* Every step's traced FLOPs and their time at peak (NaN without peaks). */
static int put_steps(const hta_op_perf *p, hta_tableset *out)
{
    hta_table *t = p->steps.n ? hta_tableset_table(out, &hta_step_flops_table) : NULL;
    if (p->steps.n && !t)
        return -1;
    for (size_t k = 0; k < p->steps.n; k++) {
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, p->view->rank_key);
        hta_row_put_i64(&row, p->steps.steps[k].number);
        hta_row_put_f64(&row, p->step_flops[k]);
        hta_row_put_f64(&row, p->step_at_peak_s[k] * 1e6);
        if (hta_row_done(&row))
            return -1;
    }
    return 0;
}

int hta_op_perf_finish(hta_op_perf *p, const hta_op_groups *groups, hta_tableset *out)
{
    hta_table *t = hta_tableset_table(out, &hta_op_perf_table);
    if (!t)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < p->n_groups; i++)
        if (p->groups[i].calls > 0)
            p->groups[n++] = p->groups[i];
    p->n_groups = n;
    p->op_groups = groups;
    if (n)
        qsort_r(p->groups, n, sizeof *p->groups, compare_rows, p);
    for (size_t i = 0; i < n; i++)
        if (put_row(t, p, groups, &p->groups[i]))
            return -1;
    return emit_metrics(p, out) || put_steps(p, out) ? -1 : 0;
}

void hta_op_perf_free(hta_op_perf *p)
{
    if (!p)
        return;
    free(p->kind_of);
    free(p->sized);
    hta_profiler_steps_free(&p->steps);
    free(p->step_flops);
    free(p->step_at_peak_s);
    free(p->groups);
    free(p);
}
