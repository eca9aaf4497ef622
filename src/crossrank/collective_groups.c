/* collective_groups.c: collective instances by process group, on the root.
 *
 * Input: "_comm_ops" (analysis/comm_ops.c), every communication kernel
 * whose collective metadata is known, packed per (rank, group) and
 * unpacked here into compact ops.  A process group issues its
 * collectives in the same order on each of its ranks, whatever stream each
 * rank runs them on, so one instance is (group, Seq) when PyTorch recorded
 * Seq, else (group, k-th kernel of that group on the rank).  Only the
 * ranks that ran a kernel of the group take part in its instances; a
 * member rank of the group (its "Process Group Ranks", else pg_config)
 * that was analysed but has no kernel for an instance counts it as
 * "missing".  Ranks are the traces' global ranks, so the members listed by
 * the group are global too.
 *
 * Per instance ("collectives", one row each): bytes (input buffer for
 * all-reduce, broadcast, reduce, all-to-all and reduce-scatter, output
 * buffer for all-gather: the full message, as nccl-tests counts it), the
 * first and last arriving rank, arrival skew (latest start - earliest
 * start), end skew (latest end - earliest end), transfer time (the
 * shortest duration: on the last rank to arrive the kernel only
 * transfers), algbw = bytes / transfer time and busbw = algbw x the
 * nccl-tests factor for n = group size (all-reduce 2(n-1)/n; all-gather,
 * reduce-scatter, all-to-all (n-1)/n; others 1), in GB/s of 1e9 bytes.
 * A rank whose collective name or element count differs from the lowest
 * rank's at the same instance is listed in "mismatched_ranks" and counted
 * on the rank, never silently matched as agreeing.
 *
 * "collective_summary": one row per (group description, collective,
 * dtype, message size bucket = the smallest power of two >= bytes).
 *
 * "comm_by_group": per rank and group, the communication time, the part
 * computation overlapped, the exposed rest split into waiting for the last
 * peer and transferring, the wait and the last arrivals. */
#include "crossrank/collective_groups.h"

#include "model/comm_meta.h"
#include "model/trace.h"
#include "numerics/stats.h"
#include "table/packed_ints.h"
#include "util/strtab.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const hta_column INSTANCE_COLUMNS[] = {
    {"group", HTA_COL_STR},          {"group_desc", HTA_COL_STR},
    {"seq", HTA_COL_I64},            {"seq_from_trace", HTA_COL_I64},
    {"collective", HTA_COL_STR},     {"dtype", HTA_COL_STR},
    {"bytes", HTA_COL_I64},          {"group_size", HTA_COL_I64},
    {"n_ranks", HTA_COL_I64},        {"ranks", HTA_COL_STR},
    {"first_rank", HTA_COL_I64},     {"last_rank", HTA_COL_I64},
    {"start_us", HTA_COL_F64},       {"arrival_skew_us", HTA_COL_F64},
    {"end_skew_us", HTA_COL_F64},    {"transfer_us", HTA_COL_F64},
    {"algbw_gbps", HTA_COL_F64},     {"busbw_gbps", HTA_COL_F64},
    {"total_wait_us", HTA_COL_F64},  {"mismatched_ranks", HTA_COL_STR},
};

static const hta_column SUMMARY_COLUMNS[] = {
    {"group_desc", HTA_COL_STR},      {"collective", HTA_COL_STR},
    {"dtype", HTA_COL_STR},           {"bucket_max_bytes", HTA_COL_I64},
    {"count", HTA_COL_I64},           {"total_bytes", HTA_COL_I64},
    {"transfer_p50_us", HTA_COL_F64}, {"transfer_p90_us", HTA_COL_F64},
    {"transfer_max_us", HTA_COL_F64}, {"busbw_p50_gbps", HTA_COL_F64},
    {"busbw_min_gbps", HTA_COL_F64},  {"mean_arrival_skew_us", HTA_COL_F64},
    {"total_wait_us", HTA_COL_F64},
};

/* Column positions in "_comm_ops". */
enum { C_RANK, C_GROUP, C_DESC, C_RANKS, C_KERNELS, C_KINDS, C_KIND_OF, C_SEQS, C_FIRST_START,
       C_START_GAPS, C_DURATIONS, C_OVERLAPS, C_STEPS };

static const hta_column BY_GROUP_COLUMNS[] = {
    {"rank", HTA_COL_I64},           {"group", HTA_COL_STR},
    {"group_desc", HTA_COL_STR},     {"instances", HTA_COL_I64},
    {"comm_us", HTA_COL_F64},        {"overlapped_us", HTA_COL_F64},
    {"exposed_us", HTA_COL_F64},     {"exposed_wait_us", HTA_COL_F64},
    {"exposed_transfer_us", HTA_COL_F64}, {"wait_us", HTA_COL_F64},
    {"arrived_last", HTA_COL_I64},
};

/* A (collective, dtype, element counts, group size) of a row's kinds. */
typedef struct comm_kind {
    const char *collective, *dtype;
    int64_t in, out, size;
} comm_kind;

/* A row of "_comm_ops": one rank's kernels of one group. */
typedef struct group_row {
    const char *group, *desc, *ranks;
    comm_kind *kinds;          /* owned */
    size_t n_kinds;
    char *text;                /* owned: the kinds' strings */
} group_row;

typedef struct op {
    uint32_t group;            /* id in the groups table */
    int by_seq;                /* key is Seq, else the ordinal */
    int64_t key;
    size_t slot;               /* the rank's row in "ranks" */
    const group_row *g;
    const comm_kind *kind;
    int64_t start, end, overlap, step;
    int64_t wait_ns;           /* set by the matching */
    int arrived_last;
} op;

static int compare_instance_then_rank(const void *a, const void *b)
{
    const op *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->by_seq != y->by_seq)
        return x->by_seq < y->by_seq ? -1 : 1;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->slot > y->slot) - (x->slot < y->slot);
}

typedef enum coll_kind { K_ALLREDUCE, K_ALLGATHER, K_REDUCE_SCATTER, K_ALLTOALL, K_OTHER } coll_kind;

static coll_kind kind_of(const char *name)
{
    if (strstr(name, "allreduce") || strstr(name, "all_reduce"))
        return K_ALLREDUCE;
    if (strstr(name, "allgather") || strstr(name, "all_gather"))
        return K_ALLGATHER;
    if (strstr(name, "reduce_scatter") || strstr(name, "reducescatter"))
        return K_REDUCE_SCATTER;
    if (strstr(name, "alltoall") || strstr(name, "all_to_all"))
        return K_ALLTOALL;
    return K_OTHER;
}

/* nccl-tests' bus bandwidth factor for n ranks. */
static double busbw_factor(coll_kind k, int64_t n)
{
    if (n < 1)
        return NAN;
    switch (k) {
    case K_ALLREDUCE: return 2.0 * (double)(n - 1) / (double)n;
    case K_ALLGATHER: case K_REDUCE_SCATTER: case K_ALLTOALL: return (double)(n - 1) / (double)n;
    default: return 1.0;
    }
}

/* The message size of a kind: -1 when its dtype or counts are unknown. */
static int64_t bytes_of(const comm_kind *k)
{
    int size = hta_dtype_size(k->dtype);
    int64_t nelems = kind_of(k->collective) == K_ALLGATHER ? k->out : k->in;
    return size > 0 && nelems >= 0 ? nelems * size : -1;
}

/* One instance's figures, kept for the summary. */
typedef struct instance {
    const group_row *g;        /* the lowest rank's op: names and sizes */
    const comm_kind *kind;
    int64_t bytes;
    int64_t transfer_ns, arrival_skew_ns, wait_ns;
    double busbw;
} instance;

/* Parses "[0, 1, 2]" (or "0,1,2") into ranks; the count, or -1 when out of
 * memory. */
static long parse_ranks(const char *text, int64_t **out)
{
    size_t n = 0, cap = 0;
    int64_t *r = NULL;
    for (const char *p = text; *p;) {
        if (*p < '0' || *p > '9') {
            p++;
            continue;
        }
        char *end;
        long long v = strtoll(p, &end, 10);
        p = end;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            int64_t *grown = realloc(r, cap * sizeof *r);
            if (!grown) {
                free(r);
                return -1;
            }
            r = grown;
        }
        r[n++] = v;
    }
    *out = r;
    return (long)n;
}

/* Per group: its member ranks (parsed once). */
typedef struct group_members {
    int64_t *ranks;            /* owned */
    long n;                    /* -1 until parsed */
} group_members;

typedef struct matcher {
    hta_tableset *set;
    const hta_table *ranks;
    rank_waits *w;
    size_t n_ranks;
    group_members *members;
    hta_table *out;
    instance *instances;
    size_t n_instances;
    hta_buf text;              /* scratch for mismatched_ranks */
    char *present;             /* per slot: took part in the current instance */
} matcher;

/* Counts the instance as missing for every analysed member rank of the
 * group that took no part in it. */
static int count_missing(matcher *m, uint32_t group, const group_row *first)
{
    group_members *g = &m->members[group];
    if (g->n < 0 && (g->n = parse_ranks(first->ranks, &g->ranks)) < 0)
        return -1;
    for (long i = 0; i < g->n; i++) {
        long slot = hta_table_find_sorted(m->ranks, g->ranks[i]);
        if (slot >= 0 && !m->w[slot].failed && !m->present[slot])
            m->w[slot].missing++;
    }
    return 0;
}

static int put_instance(matcher *m, const op *o, size_t n, const instance *in, int64_t earliest,
                        int64_t latest, int64_t earliest_end, int64_t latest_end,
                        size_t first_slot, size_t last_slot)
{
    const group_row *g = in->g;
    const comm_kind *k = in->kind;
    int64_t group_size = k->size > 0 ? k->size : (int64_t)n;
    double algbw = in->bytes >= 0 && in->transfer_ns > 0
                       ? (double)in->bytes / (double)in->transfer_ns
                       : NAN;
    hta_row_builder row = hta_table_add_row(m->out);
    hta_row_put_str(&row, g->group);
    hta_row_put_str(&row, g->desc);
    hta_row_put_i64(&row, o->key);
    hta_row_put_i64(&row, o->by_seq);
    hta_row_put_str(&row, k->collective);
    hta_row_put_str(&row, k->dtype);
    hta_row_put_i64(&row, in->bytes);
    hta_row_put_i64(&row, group_size);
    hta_row_put_i64(&row, (int64_t)n);
    hta_row_put_str(&row, g->ranks);
    hta_row_put_i64(&row, m->w[first_slot].rank);
    hta_row_put_i64(&row, m->w[last_slot].rank);
    hta_row_put_f64(&row, hta_ns_to_us(earliest));
    hta_row_put_f64(&row, hta_ns_to_us(latest - earliest));
    hta_row_put_f64(&row, hta_ns_to_us(latest_end - earliest_end));
    hta_row_put_f64(&row, hta_ns_to_us(in->transfer_ns));
    hta_row_put_f64(&row, algbw);
    hta_row_put_f64(&row, in->busbw);
    hta_row_put_f64(&row, hta_ns_to_us(in->wait_ns));
    if (hta_buf_putc(&m->text, '\0'))
        return -1;
    hta_row_put_str(&row, m->text.data);
    return hta_row_done(&row);
}

/* Lists o's rank in the scratch text when its name or size differs from
 * the instance's first op. */
static int note_mismatch(matcher *m, const op *o, const comm_kind *first)
{
    const comm_kind *k = o->kind;
    if (strcmp(k->collective, first->collective) == 0 && k->in == first->in && k->out == first->out)
        return 0;
    m->w[o->slot].metadata_mismatches++;
    char num[32];
    int len = snprintf(num, sizeof num, "%s%lld", m->text.len ? "," : "",
                       (long long)m->w[o->slot].rank);
    return hta_buf_append(&m->text, num, (size_t)len);
}

/* Matches the ops o[0..n) of one instance (rank order). */
static int match_instance(matcher *m, op *o, size_t n)
{
    int64_t earliest = INT64_MAX, latest = INT64_MIN, earliest_end = INT64_MAX;
    int64_t latest_end = INT64_MIN, shortest = INT64_MAX;
    size_t first_slot = o[0].slot, last_slot = o[0].slot, n_last = 0;
    for (size_t j = 0; j < n; j++) {
        int64_t s = o[j].start, e = o[j].end;
        if (s < earliest)
            earliest = s, first_slot = o[j].slot;
        if (s > latest)
            latest = s, last_slot = o[j].slot, n_last = 0;
        n_last += s == latest;
        earliest_end = e < earliest_end ? e : earliest_end;
        latest_end = e > latest_end ? e : latest_end;
        shortest = e - s < shortest ? e - s : shortest;
    }
    instance in = {.g = o[0].g, .kind = o[0].kind, .bytes = bytes_of(o[0].kind),
                   .transfer_ns = shortest,
                   .arrival_skew_ns = latest - earliest};
    int contested = n_last < n;
    m->text.len = 0;
    for (size_t j = 0; j < n; j++) {
        rank_waits *r = &m->w[o[j].slot];
        int64_t s = o[j].start, e = o[j].end;
        r->collectives++;
        r->matched++;
        r->wait_ns += latest - s;
        in.wait_ns += latest - s;
        o[j].wait_ns = latest - s;
        o[j].arrived_last = contested && s == latest;
        r->clock_violations += e < latest;
        if (e - earliest_end > r->max_end_lag_ns)
            r->max_end_lag_ns = e - earliest_end;
        if (contested) {
            r->arrived_last += s == latest;
            r->expected_last += 1.0 / (double)n;
        }
        if (note_mismatch(m, &o[j], o[0].kind))
            return -1;
        m->present[o[j].slot] = 1;
    }
    /* The wait an instance's last arrivers caused, shared among them. */
    for (size_t j = 0; contested && j < n; j++)
        if (o[j].start == latest)
            m->w[o[j].slot].caused_wait_ns += in.wait_ns / (int64_t)n_last;
    int64_t group_size = o[0].kind->size > 0 ? o[0].kind->size : (int64_t)n;
    in.busbw = in.bytes >= 0 && shortest > 0
                   ? (double)in.bytes / (double)shortest *
                         busbw_factor(kind_of(o[0].kind->collective), group_size)
                   : NAN;
    int rc = count_missing(m, o[0].group, o[0].g);
    for (size_t j = 0; j < n; j++)
        m->present[o[j].slot] = 0;
    if (rc == 0)
        rc = put_instance(m, o, n, &in, earliest, latest, earliest_end, latest_end, first_slot,
                          last_slot);
    m->instances[m->n_instances++] = in;
    return rc;
}

/* ---- summary ---------------------------------------------------------- */

static int64_t bucket_of(int64_t bytes)
{
    if (bytes <= 1)
        return bytes < 0 ? -1 : 1;
    int64_t b = 1;
    while (b < bytes && b < INT64_MAX / 2)
        b *= 2;
    return b;
}

/* strcmp that settles shared strings (the same group or kind) at once. */
static int compare_text(const char *a, const char *b)
{
    return a == b ? 0 : strcmp(a, b);
}

static int compare_summary_key(const void *a, const void *b)
{
    const instance *x = a, *y = b;
    int c = compare_text(x->g->desc, y->g->desc);
    if (!c)
        c = compare_text(x->kind->collective, y->kind->collective);
    if (!c)
        c = compare_text(x->kind->dtype, y->kind->dtype);
    if (!c) {
        int64_t bx = bucket_of(x->bytes), by = bucket_of(y->bytes);
        c = (bx > by) - (bx < by);
    }
    return c;
}

static int put_summary_row(hta_table *t, const instance *in, size_t n, double *scratch)
{
    int64_t total_bytes = 0, wait = 0, skew = 0;
    for (size_t i = 0; i < n; i++) {
        total_bytes += in[i].bytes > 0 ? in[i].bytes : 0;
        wait += in[i].wait_ns;
        skew += in[i].arrival_skew_ns;
        scratch[i] = hta_ns_to_us(in[i].transfer_ns);
    }
    hta_sort_doubles(scratch, n);
    double p50 = hta_quantile_sorted(scratch, n, 0.5), p90 = hta_quantile_sorted(scratch, n, 0.9);
    double max = scratch[n - 1];
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(in[i].busbw))
            scratch[k++] = in[i].busbw;
    hta_sort_doubles(scratch, k);
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_str(&row, in[0].g->desc);
    hta_row_put_str(&row, in[0].kind->collective);
    hta_row_put_str(&row, in[0].kind->dtype);
    hta_row_put_i64(&row, bucket_of(in[0].bytes));
    hta_row_put_i64(&row, (int64_t)n);
    hta_row_put_i64(&row, total_bytes);
    hta_row_put_f64(&row, p50);
    hta_row_put_f64(&row, p90);
    hta_row_put_f64(&row, max);
    hta_row_put_f64(&row, k ? hta_quantile_sorted(scratch, k, 0.5) : NAN);
    hta_row_put_f64(&row, k ? scratch[0] : NAN);
    hta_row_put_f64(&row, hta_ns_to_us(skew) / (double)n);
    hta_row_put_f64(&row, hta_ns_to_us(wait));
    return hta_row_done(&row);
}

static int summarize(hta_tableset *set, instance *in, size_t n)
{
    hta_table *t = HTA_TABLE(set, "collective_summary", SUMMARY_COLUMNS);
    double *scratch = malloc((n ? n : 1) * sizeof *scratch);
    int rc = t && scratch ? 0 : -1;
    if (rc == 0)
        qsort(in, n, sizeof *in, compare_summary_key);
    for (size_t i = 0, end; rc == 0 && i < n; i = end) {
        for (end = i + 1; end < n && compare_summary_key(&in[i], &in[end]) == 0;)
            end++;
        rc = put_summary_row(t, &in[i], end - i, scratch);
    }
    free(scratch);
    return rc;
}

/* ---- per rank and group ------------------------------------------------ */

static int compare_rank_then_group(const void *a, const void *b)
{
    const op *x = a, *y = b;
    if (x->slot != y->slot)
        return (x->slot > y->slot) - (x->slot < y->slot);
    return (x->group > y->group) - (x->group < y->group);
}

/* One row for a rank's ops o[0..n) of one group.  The exposed time (not
 * overlapped by computation) splits into waiting and transferring; where
 * computation fell inside a kernel is not known here, so the wait is
 * exposed only for what computation could not have covered: exposed
 * wait = max(0, wait - overlapped), a lower bound. */
static int put_rank_group(hta_table *t, const rank_waits *w, const op *o, size_t n)
{
    int64_t comm = 0, overlapped = 0, wait = 0, exposed_wait = 0, last = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t dur = o[i].end - o[i].start, covered = o[i].overlap;
        comm += dur;
        overlapped += covered;
        wait += o[i].wait_ns;
        exposed_wait += o[i].wait_ns > covered ? o[i].wait_ns - covered : 0;
        last += o[i].arrived_last;
    }
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, w[o[0].slot].rank);
    hta_row_put_str(&row, o[0].g->group);
    hta_row_put_str(&row, o[0].g->desc);
    hta_row_put_i64(&row, (int64_t)n);
    hta_row_put_f64(&row, hta_ns_to_us(comm));
    hta_row_put_f64(&row, hta_ns_to_us(overlapped));
    hta_row_put_f64(&row, hta_ns_to_us(comm - overlapped));
    hta_row_put_f64(&row, hta_ns_to_us(exposed_wait));
    hta_row_put_f64(&row, hta_ns_to_us(comm - overlapped - exposed_wait));
    hta_row_put_f64(&row, hta_ns_to_us(wait));
    hta_row_put_i64(&row, last);
    return hta_row_done(&row);
}

static int put_by_group(hta_tableset *set, const rank_waits *w, op *o, size_t n)
{
    hta_table *t = HTA_TABLE(set, "comm_by_group", BY_GROUP_COLUMNS);
    if (!t)
        return -1;
    qsort(o, n, sizeof *o, compare_rank_then_group);
    int rc = 0;
    for (size_t i = 0, end; rc == 0 && i < n; i = end) {
        for (end = i + 1; end < n && o[end].slot == o[i].slot && o[end].group == o[i].group;)
            end++;
        rc = put_rank_group(t, w, &o[i], end - i);
    }
    return rc;
}

/* A row of "steps" by (rank, step number): the rows come by rank, but a
 * rank's steps in start order, which need not be number order. */
typedef struct step_row {
    int64_t rank, step;
    size_t row;
} step_row;

static int compare_step_row(const void *a, const void *b)
{
    const step_row *x = a, *y = b;
    if (x->rank != y->rank)
        return (x->rank > y->rank) - (x->rank < y->rank);
    return (x->step > y->step) - (x->step < y->step);
}

/* Adds each op's wait to its rank's row of "steps" for the ProfilerStep
 * that launched it, looked up in a sorted index of the rows (an op per
 * collective kernel against a row per step: a scan per op is quadratic on
 * long traces); -1 when out of memory. */
static int add_step_waits(hta_tableset *set, const rank_waits *w, const op *o, size_t n)
{
    hta_table *t = hta_tableset_find(set, "steps");
    long step = t ? hta_table_column(t, "step") : -1, wait = t ? hta_table_column(t, "wait_us") : -1;
    if (step < 0 || wait < 0 || t->n_rows == 0)
        return 0;
    step_row *index = malloc(t->n_rows * sizeof *index);
    if (!index)
        return -1;
    for (size_t r = 0; r < t->n_rows; r++) {
        const hta_cell *row = hta_table_row(t, r);
        index[r] = (step_row){row[0].i, row[step].i, r};
    }
    qsort(index, t->n_rows, sizeof *index, compare_step_row);
    for (size_t i = 0; i < n; i++) {
        if (o[i].step < 0)
            continue;
        step_row key = {w[o[i].slot].rank, o[i].step, 0};
        const step_row *hit = bsearch(&key, index, t->n_rows, sizeof *index, compare_step_row);
        if (hit)
            hta_table_row(t, hit->row)[wait].f += hta_ns_to_us(o[i].wait_ns);
    }
    free(index);
    return 0;
}

/* ---- entry ------------------------------------------------------------ */

/* Splits a row's kinds ("collective TAB dtype TAB in TAB out TAB size"
 * lines) into g->kinds; -1 when malformed or out of memory. */
static int parse_kinds(group_row *g, const char *kinds)
{
    g->text = strdup(kinds);
    size_t lines = 0;
    for (const char *p = kinds; *p; p++)
        lines += *p == '\n';
    g->kinds = calloc(lines ? lines : 1, sizeof *g->kinds);
    if (!g->text || !g->kinds)
        return -1;
    for (char *line = g->text, *next; *line; line = next) {
        char *end = strchr(line, '\n'), *field[5];
        if (!end)
            return -1;
        *end = '\0';
        next = end + 1;
        field[0] = line;
        for (int f = 1; f < 5; f++) {
            char *tab = strchr(field[f - 1], '\t');
            if (!tab)
                return -1;
            *tab = '\0';
            field[f] = tab + 1;
        }
        g->kinds[g->n_kinds++] = (comm_kind){field[0], field[1], strtoll(field[2], NULL, 10),
                                             strtoll(field[3], NULL, 10),
                                             strtoll(field[4], NULL, 10)};
    }
    return 0;
}

/* Unpacks a row's kernels into o (its kernels in start order); -1 when its
 * series are shorter than its kernel count or name a kind it lacks. */
static int unpack_row(const hta_cell *row, const group_row *g, uint32_t group, size_t slot,
                      op *o)
{
    hta_series s[6];
    const char *packed[6] = {row[C_KIND_OF].s, row[C_SEQS].s, row[C_START_GAPS].s,
                             row[C_DURATIONS].s, row[C_OVERLAPS].s, row[C_STEPS].s};
    for (int k = 0; k < 6; k++)
        hta_series_open(&s[k], packed[k]);
    int64_t start = row[C_FIRST_START].i;
    for (int64_t i = 0; i < row[C_KERNELS].i; i++) {
        uint64_t kind, gap, overlap;
        int64_t seq, duration, step;
        if (!hta_series_next(&s[0], &kind) || !hta_series_next_signed(&s[1], &seq) ||
            !hta_series_next(&s[2], &gap) || !hta_series_next_signed(&s[3], &duration) ||
            !hta_series_next(&s[4], &overlap) || !hta_series_next_signed(&s[5], &step) ||
            kind >= g->n_kinds)
            return -1;
        start += (int64_t)gap;
        o[i] = (op){.group = group, .by_seq = seq >= 0, .key = seq >= 0 ? seq : i, .slot = slot,
                    .g = g, .kind = &g->kinds[kind], .start = start, .end = start + duration,
                    .overlap = (int64_t)overlap, .step = step};
    }
    return 0;
}

static size_t count_kernels(const hta_table *t)
{
    size_t n = 0;
    for (size_t r = 0; r < t->n_rows; r++)
        n += (size_t)hta_table_row(t, r)[C_KERNELS].i;
    return n;
}

/* The table's rows as ops with group ids and rank slots; -1 when a row's
 * rank was not analysed, or the row is corrupt. */
static int load_ops(const hta_table *t, const hta_table *ranks, const rank_waits *w,
                    group_row *rows, op *o, hta_strtab *groups)
{
    for (size_t r = 0, at = 0; r < t->n_rows; r++) {
        const hta_cell *row = hta_table_row(t, r);
        long slot = hta_table_find_sorted(ranks, row[C_RANK].i);
        if (slot < 0 || w[slot].failed)
            return -1;
        uint32_t g = hta_strtab_intern(groups, row[C_GROUP].s, strlen(row[C_GROUP].s));
        rows[r] = (group_row){row[C_GROUP].s, row[C_DESC].s, row[C_RANKS].s, NULL, 0, NULL};
        if (g == UINT32_MAX || parse_kinds(&rows[r], row[C_KINDS].s) ||
            unpack_row(row, &rows[r], g, (size_t)slot, &o[at]))
            return -1;
        at += (size_t)row[C_KERNELS].i;
    }
    return 0;
}

static int match_ops(matcher *m, op *o, size_t n)
{
    qsort(o, n, sizeof *o, compare_instance_then_rank);
    int rc = 0;
    for (size_t i = 0, end; rc == 0 && i < n; i = end) {
        for (end = i + 1; end < n && o[end].group == o[i].group && o[end].by_seq == o[i].by_seq &&
                          o[end].key == o[i].key;)
            end++;
        rc = match_instance(m, &o[i], end - i);
    }
    return rc;
}

int hta_match_collective_groups(hta_tableset *set, rank_waits *w, size_t n_ranks,
                                hta_error *err)
{
    const hta_table *t = hta_tableset_find(set, "_comm_ops");
    if (!t || t->n_rows == 0)
        return 0;
    matcher m = {.set = set, .ranks = hta_tableset_find(set, "ranks"), .w = w,
                 .n_ranks = n_ranks, .out = HTA_TABLE(set, "collectives", INSTANCE_COLUMNS)};
    size_t n = count_kernels(t);
    op *o = malloc((n ? n : 1) * sizeof *o);
    group_row *rows = calloc(t->n_rows, sizeof *rows);
    m.instances = malloc((n ? n : 1) * sizeof *m.instances);
    m.present = calloc(n_ranks ? n_ranks : 1, 1);
    hta_strtab groups;
    hta_strtab_init(&groups);
    int rc = o && rows && m.instances && m.present && m.out ? 0 : -1;
    if (rc == 0 && load_ops(t, m.ranks, w, rows, o, &groups)) {
        rc = hta_fail(err, "collective metadata of a rank missing from /ranks, or corrupt");
    } else if (rc == 0) {
        m.members = malloc((groups.count ? groups.count : 1) * sizeof *m.members);
        for (uint32_t g = 0; m.members && g < groups.count; g++)
            m.members[g] = (group_members){NULL, -1};
        rc = m.members && match_ops(&m, o, n) == 0 &&
                     summarize(set, m.instances, m.n_instances) == 0 &&
                     put_by_group(set, w, o, n) == 0 && add_step_waits(set, w, o, n) == 0
                 ? 0
                 : hta_fail(err, "out of memory matching collectives by process group");
    } else {
        rc = hta_fail(err, "out of memory matching collectives by process group");
    }
    for (uint32_t g = 0; m.members && g < groups.count; g++)
        free(m.members[g].ranks);
    free(m.members);
    hta_strtab_free(&groups);
    for (size_t r = 0; rows && r < t->n_rows; r++) {
        free(rows[r].kinds);
        free(rows[r].text);
    }
    free(rows);
    hta_buf_free(&m.text);
    free(m.present);
    free(m.instances);
    free(o);
    return rc;
}
