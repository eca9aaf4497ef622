/* launch_pipelining.c: was the GPU still busy when each launch was issued?
 * (the CUPTI notebook's launch pipelining; HTA has no equivalent).
 *
 * A healthy job keeps the CPU ahead of the GPU: when a launch call starts,
 * the stream it enqueues on still has earlier work running or queued, and
 * the new kernel follows its predecessor without a gap.  When the stream's
 * previous event had already ended before the call started, the stream sat
 * waiting for the CPU.
 *
 * The test is per stream, against the launched event's predecessor in the
 * order of model/stream_work.h: idle when the launch call started after the
 * predecessor ended, busy otherwise.  That is HTA's host_wait test, so
 * gpu_idle_at_launch counts exactly the host_wait gaps that follow one of
 * the launch APIs of model/launch_apis.h.  Per stream rather than per device,
 * because work on other streams cannot start this stream's kernel: a device
 * busy elsewhere would hide the wait.  A launch whose event is the first on
 * its stream has no predecessor and is neither busy nor idle, so
 * busy + idle <= launches and busy_share = busy / (busy + idle).
 * top_waited_kernels names the kernels launched onto an idle stream, most
 * often first (ties by name), at most 5, as "name (count); name (count)". */
#include "analysis/launch_pipelining.h"

#include "model/launch_apis.h"
#include "model/stream_work.h"
#include "util/buf.h"
#include "util/large_alloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const hta_column COLUMNS[HTA_LAUNCH_PIPELINING_N_COLUMNS] = {
    [HTA_LAUNCH_PIPELINING_RANK] = {"rank", HTA_COL_I64},
    [HTA_LAUNCH_PIPELINING_LAUNCHES] = {"launches", HTA_COL_I64},
    [HTA_LAUNCH_PIPELINING_GPU_BUSY_AT_LAUNCH] = {"gpu_busy_at_launch", HTA_COL_I64},
    [HTA_LAUNCH_PIPELINING_GPU_IDLE_AT_LAUNCH] = {"gpu_idle_at_launch", HTA_COL_I64},
    [HTA_LAUNCH_PIPELINING_BUSY_SHARE] = {"busy_share", HTA_COL_F64},
    [HTA_LAUNCH_PIPELINING_TOP_WAITED_KERNELS] = {"top_waited_kernels", HTA_COL_STR},
};
const hta_table_spec hta_launch_pipelining_table = {
    "launch_pipelining", COLUMNS, HTA_LAUNCH_PIPELINING_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

#define TOP_WAITED 5

typedef struct pipelining {
    int64_t launches, busy, idle;
    uint32_t *waited;          /* name ids of the kernels launched onto an idle stream */
} pipelining;

typedef struct name_count {
    uint32_t name;
    size_t count;
} name_count;

static int64_t count_launches(const hta_rank_view *v, const hta_launch_names *apis)
{
    int64_t n = 0;
    for (size_t i = 0; i < v->n_gpu; i++)
        n += hta_listed_launch(v, apis, v->gpu[i]) != NULL;
    return n;
}

static void judge_stream(const hta_rank_view *v, const hta_launch_names *apis,
                         const hta_stream_work *s, pipelining *p)
{
    for (size_t i = 1; i < s->n; i++) {
        const hta_event *cpu = hta_listed_launch(v, apis, s->events[i]);
        if (!cpu)
            continue;
        if (cpu->ts_ns > hta_event_end(s->events[i - 1]))
            p->waited[p->idle++] = s->events[i]->name;
        else
            p->busy++;
    }
}

static int compare_ids(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Sorts ids and turns them into (name, count) runs; returns the count. */
static size_t count_names(uint32_t *ids, size_t n, name_count *out)
{
    qsort(ids, n, sizeof *ids, compare_ids);
    size_t runs = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || ids[i] != ids[i - 1])
            out[runs++] = (name_count){ids[i], 0};
        out[runs - 1].count++;
    }
    return runs;
}

/* Most often first, then by name: an order independent of id assignment. */
static int compare_counts(const name_count *x, const name_count *y, const hta_trace *t)
{
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(hta_strtab_get(&t->names, x->name), hta_strtab_get(&t->names, y->name));
}

/* Moves the top entries to the front by selection: few of them, n may be large. */
static size_t select_top(name_count *c, size_t n, const hta_trace *t)
{
    size_t top = n < TOP_WAITED ? n : TOP_WAITED;
    for (size_t i = 0; i < top; i++)
        for (size_t j = i + 1; j < n; j++)
            if (compare_counts(&c[j], &c[i], t) < 0) {
                name_count tmp = c[i];
                c[i] = c[j];
                c[j] = tmp;
            }
    return top;
}

/* "name (count); name (count)" of the most waited-for kernels. */
static int describe_waited(const hta_trace *t, pipelining *p, hta_buf *text)
{
    name_count *counts = malloc(((size_t)p->idle + 1) * sizeof *counts);
    if (!counts)
        return -1;
    size_t n = count_names(p->waited, (size_t)p->idle, counts);
    size_t top = select_top(counts, n, t);
    int rc = hta_buf_append(text, "", 0); /* "" rather than NULL when none waited */
    for (size_t i = 0; i < top && rc == 0; i++) {
        char count[32];
        snprintf(count, sizeof count, " (%zu)", counts[i].count);
        const char *name = hta_strtab_get(&t->names, counts[i].name);
        rc = (i ? hta_buf_append(text, "; ", 2) : 0) | hta_buf_append(text, name, strlen(name)) |
             hta_buf_append(text, count, strlen(count));
    }
    free(counts);
    return rc;
}

static int add_row(hta_tableset *out, int64_t rank_key, const pipelining *p, const char *waited)
{
    hta_table *t = hta_tableset_table(out, &hta_launch_pipelining_table);
    if (!t)
        return -1;
    int64_t judged = p->busy + p->idle;
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, rank_key);
    hta_row_put_i64(&row, p->launches);
    hta_row_put_i64(&row, p->busy);
    hta_row_put_i64(&row, p->idle);
    hta_row_put_f64(&row, judged ? (double)p->busy / (double)judged : NAN);
    hta_row_put_str(&row, waited);
    return hta_row_done(&row);
}

static int measure(const hta_rank_view *v, const hta_stream_work_set *work, hta_tableset *out)
{
    hta_launch_names apis = hta_launch_names_find(v->trace, HTA_LAUNCH_STATS_APIS);
    pipelining p = {.launches = count_launches(v, &apis),
                    .waited = hta_large_malloc((v->n_gpu + 1) * sizeof *p.waited)};
    hta_buf waited = {0};
    int rc = p.waited ? 0 : -1;
    for (size_t s = 0; s < work->n_streams && rc == 0; s++)
        judge_stream(v, &apis, &work->streams[s], &p);
    if (rc == 0 && (describe_waited(v->trace, &p, &waited) ||
                    add_row(out, v->rank_key, &p, waited.data)))
        rc = -1;
    free(p.waited);
    hta_buf_free(&waited);
    return rc;
}

int hta_launch_pipelining(const hta_rank_view *v, hta_tableset *out, hta_error *err)
{
    if (v->n_gpu == 0)
        return 0;
    int rc = measure(v, &v->stream_work, out);
    return rc ? hta_fail(err, "out of memory in the launch pipelining") : 0;
}
