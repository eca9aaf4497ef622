/* steps.c: one row per rank and profiler step ("steps").
 *
 * GPU work belongs to the step whose CPU range (ProfilerStep#N) launched
 * it, HTA's rule for its last-step filter, so work a step queued runs on
 * into the next step's CPU range and still counts for it.  Per step:
 * step_time_us (the ProfilerStep's CPU duration), gpu_busy_us (union of
 * its GPU work), compute_us and comm_us (unions of its COMPUTATION and
 * COMMUNICATION kernels), exposed_comm_us (communication not overlapped
 * by computation), idle_us (its GPU span, first start to last end, not
 * busy; host waits, cuda_sync records, are not GPU work: the view's
 * hta_rank_view_is_wait), launch_gap_us (the part of idle_us in gaps
 * whose next GPU work was launched after the gap began: the GPU waited
 * for the CPU's launch, gpu_gaps.c's launch_delay and cpu_op causes),
 * data_loading_us (the DataLoader batch fetches, data_loading.c, that
 * start in the step's CPU range), and wait_us: the wait for peers at its
 * collectives matched by process group, added on the root
 * (crossrank/exchange/group_results.c), as are traced_flops and
 * traced_mfu_pct, the FLOPs of its sized GEMM, convolution and attention
 * calls and their time at the GPU's peak over the step time
 * (analysis/op_perf.c, crossrank/compare/op_perf_comparison.c).
 * The step time's mean and coefficient of variation enter /rank_metrics,
 * and so the outlier search. */
#include "analysis/steps.h"

#include "analysis/data_loading.h"
#include "analysis/metrics.h"
#include "model/interval.h"
#include "model/profiler_steps.h"
#include "numerics/stats.h"

#include <math.h>
#include <stdlib.h>

static const hta_column COLUMNS[HTA_STEPS_N_COLUMNS] = {
    [HTA_STEPS_RANK] = {"rank", HTA_COL_I64},
    [HTA_STEPS_STEP] = {"step", HTA_COL_I64},
    [HTA_STEPS_STEP_TIME_US] = {"step_time_us", HTA_COL_F64},
    [HTA_STEPS_GPU_BUSY_US] = {"gpu_busy_us", HTA_COL_F64},
    [HTA_STEPS_COMPUTE_US] = {"compute_us", HTA_COL_F64},
    [HTA_STEPS_COMM_US] = {"comm_us", HTA_COL_F64},
    [HTA_STEPS_EXPOSED_COMM_US] = {"exposed_comm_us", HTA_COL_F64},
    [HTA_STEPS_IDLE_US] = {"idle_us", HTA_COL_F64},
    [HTA_STEPS_LAUNCH_GAP_US] = {"launch_gap_us", HTA_COL_F64},
    [HTA_STEPS_DATA_LOADING_US] = {"data_loading_us", HTA_COL_F64},
    [HTA_STEPS_WAIT_US] = {"wait_us", HTA_COL_F64},
    [HTA_STEPS_TRACED_FLOPS] = {"traced_flops", HTA_COL_F64},
    [HTA_STEPS_TRACED_MFU_PCT] = {"traced_mfu_pct", HTA_COL_F64},
};
const hta_table_spec hta_steps_table = {
    "steps", COLUMNS, HTA_STEPS_N_COLUMNS, HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

/* Appends [start, end) to the merged list iv[0..*n) (events come in start
 * order). */
static void add_interval(hta_interval *iv, size_t *n, int64_t start, int64_t end)
{
    hta_interval next = {start, end};
    if (*n == 0 || hta_interval_merge(&iv[*n - 1], next))
        iv[(*n)++] = next;
}

typedef struct scratch {
    hta_interval *all, *comp, *comm;
} scratch;

/* The gap before e, which opens a new stretch of GPU work after the
 * previous ended at idle_from, when e was launched after the gap began. */
static int64_t launch_gap(const hta_rank_view *v, const hta_event *e, int64_t idle_from)
{
    const hta_event *launch = hta_rank_view_launch(v, e);
    return launch && launch->ts_ns >= idle_from ? e->ts_ns - idle_from : 0;
}

/* A step's GPU events are at positions at[0..n) of the view's. */
static int put_step(hta_table *t, const hta_rank_view *v, const hta_profiler_step *step,
                    const uint32_t *at, size_t n, int64_t loading_ns, scratch *s)
{
    size_t n_all = 0, n_comp = 0, n_comm = 0;
    int64_t first = n ? v->gpu[at[0]]->ts_ns : 0, last = first, launch_bound = 0;
    for (size_t i = 0; i < n; i++) {
        const hta_event *e = v->gpu[at[i]];
        int64_t end = hta_rank_view_work_end(v, at[i]);
        size_t before = n_all;
        int64_t idle_from = n_all ? s->all[n_all - 1].end : 0;
        add_interval(s->all, &n_all, e->ts_ns, end);
        if (before && n_all > before)
            launch_bound += launch_gap(v, e, idle_from);
        if (e->kernel_type == HTA_KT_COMPUTATION)
            add_interval(s->comp, &n_comp, e->ts_ns, end);
        else if (e->kernel_type == HTA_KT_COMMUNICATION)
            add_interval(s->comm, &n_comm, e->ts_ns, end);
        last = end > last ? end : last;
    }
    int64_t busy = hta_intervals_length(s->all, n_all);
    int64_t comm = hta_intervals_length(s->comm, n_comm);
    int64_t hidden = hta_intervals_overlap(s->comp, n_comp, s->comm, n_comm);
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, v->rank_key);
    hta_row_put_i64(&row, step->number);
    hta_row_put_f64(&row, hta_ns_to_us(step->end_ns - step->start_ns));
    hta_row_put_f64(&row, hta_ns_to_us(busy));
    hta_row_put_f64(&row, hta_ns_to_us(hta_intervals_length(s->comp, n_comp)));
    hta_row_put_f64(&row, hta_ns_to_us(comm));
    hta_row_put_f64(&row, hta_ns_to_us(comm - hidden));
    hta_row_put_f64(&row, hta_ns_to_us(last - first - busy));
    hta_row_put_f64(&row, hta_ns_to_us(launch_bound));
    hta_row_put_f64(&row, hta_ns_to_us(loading_ns));
    hta_row_put_f64(&row, 0.0);
    hta_row_put_f64(&row, 0.0);
    hta_row_put_f64(&row, NAN);
    return hta_row_done(&row);
}

static int emit_step_metrics(hta_tableset *out, int64_t rank_key, const hta_profiler_steps *st)
{
    if (st->n < 2)
        return 0;
    double *d = malloc(st->n * sizeof *d);
    if (!d)
        return -1;
    for (size_t i = 0; i < st->n; i++)
        d[i] = hta_ns_to_us(st->steps[i].end_ns - st->steps[i].start_ns);
    double mean = hta_mean(d, st->n), std = hta_sample_std(d, st->n, mean);
    free(d);
    return hta_emit_metric(out, rank_key, HTA_METRIC_STEP_TIME_MEAN_US, NULL, mean) ||
                   hta_emit_metric(out, rank_key, HTA_METRIC_STEP_TIME_CV, NULL,
                                   mean > 0 ? std / mean : NAN)
               ? -1
               : 0;
}

/* Per step, the time in DataLoader batch fetches that start in its CPU
 * range, into loading[0..st->n) (zeroed); -1 when out of memory. */
static int data_loading_by_step(const hta_trace *t, const hta_profiler_steps *st,
                                int64_t *loading)
{
    size_t found, cursor = 0;
    unsigned char *is_loader = hta_data_loader_names(t, &found);
    if (!is_loader)
        return -1;
    for (size_t i = 0; found && i < t->n_events; i++) {
        const hta_event *e = &t->events[i];
        long k = !hta_event_is_gpu(e) && is_loader[e->name]
                     ? hta_profiler_step_at(st, e->ts_ns, &cursor)
                     : -1;
        if (k >= 0)
            loading[k] += e->dur_ns;
    }
    free(is_loader);
    return 0;
}

/* The GPU events grouped by step, each group in start order (a stable
 * counting sort of the view): the positions in the view of step k's are
 * by_step[first[k] .. first[k + 1]).  Positions and steps take 4 bytes
 * an event: the view's GPU events fit in 32 bits (util/corrmap.h). */
static int group_by_step(const hta_rank_view *v, const hta_profiler_steps *st,
                         uint32_t *by_step, size_t *first)
{
    int32_t *step = malloc((v->n_gpu ? v->n_gpu : 1) * sizeof *step);
    if (!step)
        return -1;
    for (size_t k = 0; k <= st->n; k++)
        first[k] = 0;
    size_t cursor = 0;
    for (size_t i = 0; i < v->n_gpu; i++) {
        step[i] = (int32_t)hta_profiler_step_of(st, v, v->gpu[i], &cursor);
        if (hta_rank_view_is_wait(v, v->gpu[i]))
            step[i] = -1;      /* a host wait is no step's GPU work */
        if (step[i] >= 0)
            first[step[i] + 1]++;
    }
    for (size_t k = 0; k < st->n; k++)
        first[k + 1] += first[k];
    size_t *at = malloc((st->n ? st->n : 1) * sizeof *at);
    for (size_t k = 0; at && k < st->n; k++)
        at[k] = first[k];
    for (size_t i = 0; at && i < v->n_gpu; i++)
        if (step[i] >= 0)
            by_step[at[step[i]]++] = (uint32_t)i;
    free(step);
    int rc = at ? 0 : -1;
    free(at);
    return rc;
}

int hta_steps(const hta_rank_view *v, hta_tableset *out, hta_error *err)
{
    hta_profiler_steps st;
    if (hta_profiler_steps_find(&st, v->trace))
        return hta_fail(err, "out of memory listing profiler steps");
    if (st.n == 0)
        return 0;
    uint32_t *by_step = malloc((v->n_gpu ? v->n_gpu : 1) * sizeof *by_step);
    size_t *first = malloc((st.n + 1) * sizeof *first);
    int64_t *loading = calloc(st.n, sizeof *loading);
    hta_table *t = hta_tableset_table(out, &hta_steps_table);
    scratch s = {0};
    int rc = by_step && first && loading && t ? 0 : -1;
    if (rc == 0)
        rc = group_by_step(v, &st, by_step, first);
    if (rc == 0)
        rc = data_loading_by_step(v->trace, &st, loading);
    size_t largest = 1;        /* the scratch holds one step's intervals */
    for (size_t k = 0; rc == 0 && k < st.n; k++)
        largest = first[k + 1] - first[k] > largest ? first[k + 1] - first[k] : largest;
    if (rc == 0) {
        s = (scratch){malloc(largest * sizeof *s.all), malloc(largest * sizeof *s.comp),
                      malloc(largest * sizeof *s.comm)};
        rc = s.all && s.comp && s.comm ? 0 : -1;
    }
    for (size_t k = 0; rc == 0 && k < st.n; k++)
        rc = put_step(t, v, &st.steps[k], &by_step[first[k]], first[k + 1] - first[k], loading[k],
                      &s);
    if (rc == 0)
        rc = emit_step_metrics(out, v->rank_key, &st);
    free(by_step);
    free(first);
    free(loading);
    free(s.all);
    free(s.comp);
    free(s.comm);
    hta_profiler_steps_free(&st);
    return rc ? hta_fail(err, "out of memory in the per-step analysis") : 0;
}
