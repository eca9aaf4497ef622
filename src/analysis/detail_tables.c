/* detail_tables.c: the per-event tables behind the per-rank summaries,
 * written under /detail/ only with --detail (docs/results-format.md: they are large;
 * the HDF5 writer chunks and compresses every "detail/" table).
 *
 * - detail/launches: the launches that launch_stats.c summarises, one row
 *   per GPU event whose launching CPU call (same correlation) is one of
 *   HTA_LAUNCH_STATS_APIS: both sides' start and duration and launch_delay
 *   = max(0, GPU start - CPU end), the per-correlation values of HTA's
 *   get_cuda_kernel_launch_stats.  Rows in GPU start order.
 * - detail/queue_length and detail/memory_bw: every point of the step
 *   series of analysis/step_series.h (per stream, per copy kind), the very
 *   points the /queue_length and /memory_bw summaries describe, so that
 *   the two always agree; one row per step with the value after it.
 * Everything is read from the rank view; nothing here feeds another table. */
#include "analysis/detail_tables.h"

#include "analysis/step_series.h"
#include "model/launch_apis.h"

#include <math.h>

static const hta_column LAUNCH_COLUMNS[HTA_DETAIL_LAUNCHES_N_COLUMNS] = {
    [HTA_DETAIL_LAUNCHES_RANK] = {"rank", HTA_COL_I64},
    [HTA_DETAIL_LAUNCHES_CORRELATION] = {"correlation", HTA_COL_I64},
    [HTA_DETAIL_LAUNCHES_LAUNCH_NAME] = {"launch_name", HTA_COL_STR},
    [HTA_DETAIL_LAUNCHES_CPU_START_US] = {"cpu_start_us", HTA_COL_F64},
    [HTA_DETAIL_LAUNCHES_CPU_DURATION_US] = {"cpu_duration_us", HTA_COL_F64},
    [HTA_DETAIL_LAUNCHES_GPU_START_US] = {"gpu_start_us", HTA_COL_F64},
    [HTA_DETAIL_LAUNCHES_GPU_DURATION_US] = {"gpu_duration_us", HTA_COL_F64},
    [HTA_DETAIL_LAUNCHES_LAUNCH_DELAY_US] = {"launch_delay_us", HTA_COL_F64},
    [HTA_DETAIL_LAUNCHES_STREAM] = {"stream", HTA_COL_I64},
};
const hta_table_spec hta_detail_launches_table = {
    "detail/launches", LAUNCH_COLUMNS, HTA_DETAIL_LAUNCHES_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_IN_PLACE | HTA_TABLE_PER_EVENT};

static const hta_column QUEUE_COLUMNS[HTA_DETAIL_QUEUE_LENGTH_N_COLUMNS] = {
    [HTA_DETAIL_QUEUE_LENGTH_RANK] = {"rank", HTA_COL_I64},
    [HTA_DETAIL_QUEUE_LENGTH_STREAM] = {"stream", HTA_COL_I64},
    [HTA_DETAIL_QUEUE_LENGTH_TS_US] = {"ts_us", HTA_COL_F64},
    [HTA_DETAIL_QUEUE_LENGTH_QUEUE_LENGTH] = {"queue_length", HTA_COL_I64},
};
const hta_table_spec hta_detail_queue_length_table = {
    "detail/queue_length", QUEUE_COLUMNS, HTA_DETAIL_QUEUE_LENGTH_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_IN_PLACE | HTA_TABLE_PER_EVENT};

static const hta_column BANDWIDTH_COLUMNS[HTA_DETAIL_MEMORY_BW_N_COLUMNS] = {
    [HTA_DETAIL_MEMORY_BW_RANK] = {"rank", HTA_COL_I64},
    [HTA_DETAIL_MEMORY_BW_KIND] = {"kind", HTA_COL_STR},
    [HTA_DETAIL_MEMORY_BW_TS_US] = {"ts_us", HTA_COL_F64},
    [HTA_DETAIL_MEMORY_BW_BANDWIDTH_GBPS] = {"bandwidth_gbps", HTA_COL_F64},
};
const hta_table_spec hta_detail_memory_bw_table = {
    "detail/memory_bw", BANDWIDTH_COLUMNS, HTA_DETAIL_MEMORY_BW_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_IN_PLACE | HTA_TABLE_PER_EVENT};

/* The launch of a GPU event when it is one of apis, else NULL. */
static const hta_event *listed_launch(const hta_rank_view *v, const hta_event *gpu,
                                      const hta_launch_names *apis)
{
    const hta_event *cpu = hta_rank_view_launch(v, gpu);
    return cpu && hta_launch_names_match(apis, cpu) ? cpu : NULL;
}

static int add_launch_rows(const hta_rank_view *v, hta_tableset *out)
{
    hta_table *t = hta_tableset_table(out, &hta_detail_launches_table);
    if (!t)
        return -1;
    hta_launch_names launches = hta_launch_names_find(v->trace, HTA_LAUNCH_STATS_APIS);
    for (size_t i = 0; i < v->n_gpu; i++) {
        const hta_event *gpu = v->gpu[i];
        const hta_event *cpu = listed_launch(v, gpu, &launches);
        if (!cpu)
            continue;
        int64_t delay = gpu->ts_ns - hta_event_end(cpu);
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, v->rank_key);
        hta_row_put_i64(&row, hta_event_correlation(v->trace, gpu));
        hta_row_put_str(&row, hta_event_name(v->trace, cpu));
        hta_row_put_f64(&row, hta_ns_to_us(cpu->ts_ns));
        hta_row_put_f64(&row, hta_ns_to_us(cpu->dur_ns));
        hta_row_put_f64(&row, hta_ns_to_us(gpu->ts_ns));
        hta_row_put_f64(&row, hta_ns_to_us(gpu->dur_ns));
        hta_row_put_f64(&row, hta_ns_to_us(delay > 0 ? delay : 0));
        hta_row_put_i64(&row, gpu->stream);
        if (hta_row_done(&row))
            return -1;
    }
    return 0;
}

static int add_queue_length_rows(const hta_rank_view *v, hta_tableset *out)
{
    hta_table *t = hta_tableset_table(out, &hta_detail_queue_length_table);
    hta_step_series_set set;
    if (!t || hta_queue_length_series(&set, v))
        return -1;
    int rc = 0;
    for (size_t s = 0; s < set.n_series && rc == 0; s++) {
        const hta_step_series *series = &set.series[s];
        for (size_t i = 0; i < series->n && rc == 0; i++) {
            hta_row_builder row = hta_table_add_row(t);
            hta_row_put_i64(&row, v->rank_key);
            hta_row_put_i64(&row, series->stream);
            hta_row_put_f64(&row, hta_ns_to_us(series->points[i].ts_ns));
            hta_row_put_i64(&row, (int64_t)series->points[i].value);
            rc = hta_row_done(&row);
        }
    }
    hta_step_series_free(&set);
    return rc;
}

static int add_memory_bw_rows(const hta_rank_view *v, hta_tableset *out)
{
    hta_table *t = hta_tableset_table(out, &hta_detail_memory_bw_table);
    hta_step_series_set set;
    if (!t || hta_memory_bw_series(&set, v->trace))
        return -1;
    int rc = 0;
    for (size_t s = 0; s < set.n_series && rc == 0; s++) {
        const hta_step_series *series = &set.series[s];
        for (size_t i = 0; i < series->n && rc == 0; i++) {
            /* A copy without a bandwidth is a point of HTA's series but
             * changes nothing. */
            if (isnan(series->points[i].value))
                continue;
            hta_row_builder row = hta_table_add_row(t);
            hta_row_put_i64(&row, v->rank_key);
            hta_row_put_str(&row, series->kind);
            hta_row_put_f64(&row, hta_ns_to_us(series->points[i].ts_ns));
            hta_row_put_f64(&row, series->points[i].value);
            rc = hta_row_done(&row);
        }
    }
    hta_step_series_free(&set);
    return rc;
}

int hta_detail_tables(const hta_rank_view *v, const hta_analysis_settings *opt,
                      hta_tableset *out, hta_error *err)
{
    if (!opt->detail || v->n_gpu == 0)
        return 0;
    if (add_launch_rows(v, out) || add_queue_length_rows(v, out) ||
        add_memory_bw_rows(v, out))
        return hta_fail(err, "out of memory in the detail tables");
    return 0;
}
