/* metrics.c: the per-rank metrics of HTA_METRICS (analysis/metrics.h)
 * and "rank_metrics", where their values go. */
#include "analysis/metrics.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

const hta_metric_info hta_metrics[HTA_N_METRICS] = {
#define HTA_METRIC_INFO(id, name, unit, producer, search, reliability)                             \
    [HTA_METRIC_##id] = {name, unit, producer, HTA_METRIC_##search, HTA_METRIC_##reliability},
    HTA_METRICS(HTA_METRIC_INFO)
#undef HTA_METRIC_INFO
};

const hta_column hta_rank_metrics_columns[HTA_RANK_METRICS_N_COLUMNS] = {
    [HTA_RANK_METRICS_RANK] = {"rank", HTA_COL_I64},
    [HTA_RANK_METRICS_METRIC] = {"metric", HTA_COL_STR},
    [HTA_RANK_METRICS_VALUE] = {"value", HTA_COL_F64},
};
const hta_table_spec hta_rank_metrics_table = {"rank_metrics", hta_rank_metrics_columns,
                                               HTA_RANK_METRICS_N_COLUMNS,
                                               HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

/* Whether name is a member of the family pattern ("a_%s_b"). */
static int in_family(const char *pattern, const char *name)
{
    const char *hole = strstr(pattern, "%s");
    size_t head = (size_t)(hole - pattern), tail = strlen(hole + 2), n = strlen(name);
    return n > head + tail && strncmp(name, pattern, head) == 0 &&
           strcmp(name + n - tail, hole + 2) == 0;
}

const hta_metric_info *hta_metric_named(const char *name)
{
    for (size_t i = 0; i < HTA_N_METRICS; i++) {
        const char *pattern = hta_metrics[i].name;
        if (strstr(pattern, "%s") ? in_family(pattern, name) : strcmp(pattern, name) == 0)
            return &hta_metrics[i];
    }
    return NULL;
}

int hta_metric_is(const char *name, hta_metric_id id)
{
    return strcmp(name, hta_metrics[id].name) == 0;
}

void hta_metric_name(hta_metric_id id, const char *part, char *buf, size_t size)
{
    const char *pattern = hta_metrics[id].name, *hole = strstr(pattern, "%s");
    if (!hole || !part) {
        snprintf(buf, size, "%s", pattern);
        return;
    }
    int head = (int)(hole - pattern);
    int len = snprintf(buf, size, "%.*s%s%s", head, pattern, part, hole + 2);
    size_t end = len < 0 ? 0 : (size_t)len < size ? (size_t)len : size - 1;
    for (size_t i = (size_t)head; i < end; i++)
        buf[i] = buf[i] == ' ' ? '_' : (char)tolower((unsigned char)buf[i]);
}

int hta_put_metric(hta_table *t, int64_t rank_key, hta_metric_id id, const char *part, double value)
{
    char name[64];
    hta_metric_name(id, part, name, sizeof name);
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, rank_key);
    hta_row_put_str(&row, name);
    hta_row_put_f64(&row, value);
    return hta_row_done(&row);
}

int hta_emit_metric(hta_tableset *out, int64_t rank_key, hta_metric_id id, const char *part,
                    double value)
{
    hta_table *t = hta_tableset_table(out, &hta_rank_metrics_table);
    return t ? hta_put_metric(t, rank_key, id, part, value) : -1;
}
