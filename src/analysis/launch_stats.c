/* launch_stats.c: what kernel launches cost (definitions section 4, HTA's
 * get_cuda_kernel_launch_stats, summarised per rank).
 *
 * A launch is a GPU event whose launching CPU call (same correlation) is
 * one of the launch APIs of model/launch_apis.h.  For each: the CPU call's
 * duration, the GPU event's duration and the launch delay max(0, GPU start
 * - CPU end).  HTA returns them per correlation; one row per rank keeps
 * their p50 / p90 / p99 / max and HTA's three counts:
 *   short_kernels          GPU shorter than its launch call, the call
 *                          itself not an outlier (<= runtime_cutoff):
 *                          the launch costs more than the work;
 *   runtime_outliers       launch calls longer than runtime_cutoff;
 *   launch_delay_outliers  launch delays longer than launch_delay_cutoff.
 * Those columns stay HTA's, which knows no graph launch.  Beside them, the
 * CUDA/HIP graph launches (model/launch_apis.h) that left a GPU event,
 * each counted once however many GPU events its replay holds, and those
 * GPU events: launches + graph_launches is what the CPU launched, and
 * /graph_launches has the replays' own times. */
#include "analysis/launch_stats.h"

#include "analysis/metrics.h"
#include "model/launch_apis.h"
#include "numerics/stats.h"
#include "util/large_alloc.h"

#include <math.h>
#include <stdlib.h>

static const hta_column COLUMNS[HTA_LAUNCH_STATS_N_COLUMNS] = {
    [HTA_LAUNCH_STATS_RANK] = {"rank", HTA_COL_I64},
    [HTA_LAUNCH_STATS_LAUNCHES] = {"launches", HTA_COL_I64},
    [HTA_LAUNCH_STATS_CPU_DURATION_P50_US] = {"cpu_duration_p50_us", HTA_COL_F64},
    [HTA_LAUNCH_STATS_CPU_DURATION_P90_US] = {"cpu_duration_p90_us", HTA_COL_F64},
    [HTA_LAUNCH_STATS_CPU_DURATION_P99_US] = {"cpu_duration_p99_us", HTA_COL_F64},
    [HTA_LAUNCH_STATS_CPU_DURATION_MAX_US] = {"cpu_duration_max_us", HTA_COL_F64},
    [HTA_LAUNCH_STATS_GPU_DURATION_P50_US] = {"gpu_duration_p50_us", HTA_COL_F64},
    [HTA_LAUNCH_STATS_GPU_DURATION_P90_US] = {"gpu_duration_p90_us", HTA_COL_F64},
    [HTA_LAUNCH_STATS_GPU_DURATION_P99_US] = {"gpu_duration_p99_us", HTA_COL_F64},
    [HTA_LAUNCH_STATS_GPU_DURATION_MAX_US] = {"gpu_duration_max_us", HTA_COL_F64},
    [HTA_LAUNCH_STATS_LAUNCH_DELAY_P50_US] = {"launch_delay_p50_us", HTA_COL_F64},
    [HTA_LAUNCH_STATS_LAUNCH_DELAY_P90_US] = {"launch_delay_p90_us", HTA_COL_F64},
    [HTA_LAUNCH_STATS_LAUNCH_DELAY_P99_US] = {"launch_delay_p99_us", HTA_COL_F64},
    [HTA_LAUNCH_STATS_LAUNCH_DELAY_MAX_US] = {"launch_delay_max_us", HTA_COL_F64},
    [HTA_LAUNCH_STATS_SHORT_KERNELS] = {"short_kernels", HTA_COL_I64},
    [HTA_LAUNCH_STATS_RUNTIME_OUTLIERS] = {"runtime_outliers", HTA_COL_I64},
    [HTA_LAUNCH_STATS_LAUNCH_DELAY_OUTLIERS] = {"launch_delay_outliers", HTA_COL_I64},
    [HTA_LAUNCH_STATS_GRAPH_LAUNCHES] = {"graph_launches", HTA_COL_I64},
    [HTA_LAUNCH_STATS_GRAPH_GPU_EVENTS] = {"graph_gpu_events", HTA_COL_I64},
};
const hta_table_spec hta_launch_stats_table = {
    "launch_stats", COLUMNS, HTA_LAUNCH_STATS_N_COLUMNS, HTA_TABLE_PER_RANK | HTA_TABLE_IN_PLACE};

/* The per-launch quantities, in microseconds, HTA's counts, and the graph
 * launch calls of the replays' GPU events (n_graph of them, one per
 * event, each call as often as its replay has events). */
typedef struct launches {
    double *cpu_us, *gpu_us, *delay_us;
    size_t n;
    int64_t short_kernels, runtime_outliers, delay_outliers;
    const hta_event **graph_calls;
    size_t n_graph;
} launches;

static void add_launch(launches *l, const hta_event *cpu, const hta_event *gpu,
                       const hta_analysis_settings *opt)
{
    int64_t delay = gpu->ts_ns - hta_event_end(cpu);
    double cpu_us = hta_ns_to_us(cpu->dur_ns), gpu_us = hta_ns_to_us(gpu->dur_ns);
    double delay_us = hta_ns_to_us(delay > 0 ? delay : 0);
    l->short_kernels += cpu_us <= opt->runtime_cutoff_us && gpu_us < cpu_us;
    l->runtime_outliers += cpu_us > opt->runtime_cutoff_us;
    l->delay_outliers += delay_us > opt->launch_delay_cutoff_us;
    l->cpu_us[l->n] = cpu_us;
    l->gpu_us[l->n] = gpu_us;
    l->delay_us[l->n] = delay_us;
    l->n++;
}

static void collect_launches(const hta_rank_view *v, const hta_analysis_settings *opt, launches *l)
{
    hta_launch_names apis = hta_launch_names_find(v->trace, HTA_LAUNCH_STATS_APIS);
    hta_launch_names graph = hta_launch_names_find(v->trace, HTA_LAUNCH_GRAPH_APIS);
    for (size_t i = 0; i < v->n_gpu; i++) {
        const hta_event *cpu = hta_rank_view_launch(v, v->gpu[i]);
        if (cpu && hta_launch_names_match(&apis, cpu))
            add_launch(l, cpu, v->gpu[i], opt);
        else if (cpu && hta_launch_names_match(&graph, cpu))
            l->graph_calls[l->n_graph++] = cpu;
    }
}

static int compare_pointer(const void *a, const void *b)
{
    const hta_event *x = *(const hta_event *const *)a, *y = *(const hta_event *const *)b;
    return (x > y) - (x < y);
}

/* The distinct graph launch calls; sorts graph_calls. */
static int64_t count_graph_launches(launches *l)
{
    qsort(l->graph_calls, l->n_graph, sizeof *l->graph_calls, compare_pointer);
    int64_t n = 0;
    for (size_t i = 0; i < l->n_graph; i++)
        n += i == 0 || l->graph_calls[i] != l->graph_calls[i - 1];
    return n;
}

/* Sorts values and puts p50, p90, p99 and max. */
static void put_percentiles(hta_row_builder *row, double *values, size_t n)
{
    hta_sort_doubles(values, n);
    hta_row_put_f64(row, hta_quantile_sorted(values, n, 0.50));
    hta_row_put_f64(row, hta_quantile_sorted(values, n, 0.90));
    hta_row_put_f64(row, hta_quantile_sorted(values, n, 0.99));
    hta_row_put_f64(row, n ? values[n - 1] : NAN);
}

static int add_row(hta_tableset *out, int64_t rank_key, launches *l)
{
    hta_table *t = hta_tableset_table(out, &hta_launch_stats_table);
    if (!t)
        return -1;
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, rank_key);
    hta_row_put_i64(&row, (int64_t)l->n);
    put_percentiles(&row, l->cpu_us, l->n);
    put_percentiles(&row, l->gpu_us, l->n);
    put_percentiles(&row, l->delay_us, l->n);
    hta_row_put_i64(&row, l->short_kernels);
    hta_row_put_i64(&row, l->runtime_outliers);
    hta_row_put_i64(&row, l->delay_outliers);
    hta_row_put_i64(&row, count_graph_launches(l));
    hta_row_put_i64(&row, (int64_t)l->n_graph);
    return hta_row_done(&row);
}

/* After add_row, delay_us is sorted. */
static int emit_metrics(hta_tableset *out, int64_t rank_key, const launches *l)
{
    if (l->n == 0)
        return 0;
    return hta_emit_metric(out, rank_key, HTA_METRIC_LAUNCH_DELAY_P50_US, NULL,
                           hta_quantile_sorted(l->delay_us, l->n, 0.50)) |
           hta_emit_metric(out, rank_key, HTA_METRIC_LAUNCH_DELAY_P99_US, NULL,
                           hta_quantile_sorted(l->delay_us, l->n, 0.99));
}

int hta_launch_stats(const hta_rank_view *v, const hta_analysis_settings *opt, hta_tableset *out,
                     hta_error *err)
{
    if (v->n_gpu == 0)
        return 0;
    launches l = {.cpu_us = hta_large_malloc(v->n_gpu * sizeof(double)),
                  .gpu_us = hta_large_malloc(v->n_gpu * sizeof(double)),
                  .delay_us = hta_large_malloc(v->n_gpu * sizeof(double)),
                  .graph_calls = hta_large_malloc(v->n_gpu * sizeof(const hta_event *))};
    int rc = -1;
    if (l.cpu_us && l.gpu_us && l.delay_us && l.graph_calls) {
        collect_launches(v, opt, &l);
        rc = add_row(out, v->rank_key, &l) || emit_metrics(out, v->rank_key, &l) ? -1 : 0;
    }
    free(l.cpu_us);
    free(l.gpu_us);
    free(l.delay_us);
    free(l.graph_calls);
    return rc ? hta_fail(err, "out of memory in the launch statistics") : 0;
}
