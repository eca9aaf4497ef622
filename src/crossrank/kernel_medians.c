/* kernel_medians.c: each kernel's median over the ranks at its place in
 * the step, spread over the processes (see crossrank/kernel_medians.h;
 * docs/definitions.md, What-if).
 *
 * A kernel's place is (step, name, k): the k-th launch of that name in
 * the step, since one kernel runs at several places with different
 * lengths.  The names are keyed by a hash of their text, the same on
 * every rank.  As the collectives' instances are (crossrank/
 * collective_exchange.c), each place has an owner, here by its hash: one
 * MPI_Alltoallv sends each launch's duration to its place's owner, which
 * takes the median of each place, and a second returns each launch's
 * median to the process holding its rank, which sums each (rank, step,
 * name)'s time above the medians.  No process holds more than its ranks'
 * launches and its share of the places. */
#define _GNU_SOURCE /* qsort_r */
#include "crossrank/kernel_medians.h"

#include <limits.h>
#include <stdlib.h>

#include "analysis/critical_path.h"
#include "numerics/stats.h"

typedef struct launch {
    int64_t step, hash, place, dur;
} launch;

static int cmp_i64(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}

static int compare_place(const void *a, const void *b, void *ctx)
{
    const launch *l = ctx, *x = &l[*(const size_t *)a], *y = &l[*(const size_t *)b];
    int c = cmp_i64(x->step, y->step);
    c = c ? c : cmp_i64(x->hash, y->hash);
    return c ? c : cmp_i64(x->place, y->place);
}

static int owner_of(const launch *l, int n_processes)
{
    uint64_t h = (uint64_t)l->hash ^ ((uint64_t)l->step * 0x9e3779b97f4a7c15u) ^
                 ((uint64_t)l->place * 0xc2b2ae3d27d4eb4fu);
    h ^= h >> 31;
    return (int)(h % (uint64_t)n_processes);
}

/* The exchange's buffers. */
typedef struct medians {
    const hta_processes *pr;
    int *counts;               /* 4 x processes: send, send displs, recv, recv displs */
    size_t *slot;              /* per local launch: its place in the send buffer */
    launch *sent, *received;
    double *median, *returned; /* per received launch; per sent */
    size_t n, n_received;
} medians;

static void medians_free(medians *m)
{
    free(m->counts);
    free(m->slot);
    free(m->sent);
    free(m->received);
    free(m->median);
    free(m->returned);
}

/* The local launches packed by owner (a counting sort). */
static int pack(medians *m, const hta_table *places)
{
    int np = m->pr->n;
    m->n = places ? places->n_rows : 0;
    m->counts = calloc(4 * (size_t)np, sizeof *m->counts);
    m->slot = malloc((m->n + 1) * sizeof *m->slot);
    m->sent = malloc((m->n + 1) * sizeof *m->sent);
    int *next = calloc((size_t)np, sizeof *next);
    int rc = m->counts && m->slot && m->sent && next ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < m->n; i++) {
        const hta_cell *row = hta_table_row(places, i);
        m->sent[i] = (launch){row[HTA_KERNEL_PLACES_STEP].i, row[HTA_KERNEL_PLACES_NAME_HASH].i,
                              row[HTA_KERNEL_PLACES_PLACE].i, row[HTA_KERNEL_PLACES_DUR_NS].i};
        m->counts[owner_of(&m->sent[i], np)]++;
    }
    long long total = 0;
    for (int p = 0; rc == 0 && p < np; p++) {
        m->counts[np + p] = (int)total;
        total += m->counts[p];
    }
    rc = rc || total > INT_MAX;
    /* Place each launch after its owner's earlier ones, then move them. */
    for (size_t i = 0; rc == 0 && i < m->n; i++) {
        int p = owner_of(&m->sent[i], np);
        m->slot[i] = (size_t)m->counts[np + p] + (size_t)next[p]++;
    }
    launch *by_owner = rc ? NULL : malloc((m->n + 1) * sizeof *by_owner);
    rc = rc || !by_owner;
    for (size_t i = 0; rc == 0 && i < m->n; i++)
        by_owner[m->slot[i]] = m->sent[i];
    free(m->sent);
    m->sent = by_owner;
    free(next);
    return rc;
}

/* The owner's medians, one per received launch. */
static int take_medians(medians *m)
{
    size_t n = m->n_received;
    size_t *idx = malloc((n + 1) * sizeof *idx);
    double *v = malloc((n + 1) * sizeof *v);
    m->median = malloc((n + 1) * sizeof *m->median);
    if (!idx || !v || !m->median) {
        free(idx);
        free(v);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    qsort_r(idx, n, sizeof *idx, compare_place, m->received);
    for (size_t i = 0, end; i < n; i = end) {
        for (end = i; end < n && compare_place(&idx[i], &idx[end], m->received) == 0; end++)
            v[end - i] = (double)m->received[idx[end]].dur;
        hta_sort_doubles(v, end - i);
        double med = hta_quantile_sorted(v, end - i, 0.5);
        for (size_t j = i; j < end; j++)
            m->median[idx[j]] = med;
    }
    free(idx);
    free(v);
    return 0;
}

static int exchange(medians *m)
{
    const hta_processes *pr = m->pr;
    int np = pr->n, *send = m->counts, *send_displs = m->counts + np,
        *recv = m->counts + 2 * np, *recv_displs = m->counts + 3 * np;
    hta_processes_alltoall_int(pr, send, recv);
    long long total = 0;
    for (int p = 0; p < np; p++) {
        recv_displs[p] = (int)total;
        total += recv[p];
    }
    m->n_received = (size_t)total;
    m->received = total <= INT_MAX ? malloc((m->n_received + 1) * sizeof *m->received) : NULL;
    if (hta_processes_any(pr, !m->received))
        return -1;
    hta_processes_alltoallv(pr, m->sent, send, send_displs, m->received, recv, recv_displs,
                            sizeof *m->sent);
    m->returned = malloc((m->n + 1) * sizeof *m->returned);
    if (hta_processes_any(pr, take_medians(m) != 0 || !m->returned))
        return -1;
    hta_processes_alltoallv(pr, m->median, recv, recv_displs, m->returned, send, send_displs,
                            sizeof *m->median);
    return 0;
}

static int compare_excess(const void *a, const void *b)
{
    const hta_kernel_excess *x = a, *y = b;
    int c = cmp_i64(x->rank, y->rank);
    c = c ? c : cmp_i64(x->step, y->step);
    return c ? c : cmp_i64(x->name_id, y->name_id);
}

/* Each local launch's excess, summed per (rank, step, name) and per
 * (rank, step). */
static hta_kernel_excess *sum_excess(const medians *m, const hta_table *places, size_t *n_out)
{
    hta_kernel_excess *e = malloc((2 * m->n + 1) * sizeof *e);
    size_t k = 0;
    for (size_t i = 0; e && i < m->n; i++) {
        const hta_cell *row = hta_table_row(places, i);
        double dur = (double)row[HTA_KERNEL_PLACES_DUR_NS].i, med = m->returned[m->slot[i]];
        hta_kernel_excess x = {row[HTA_KERNEL_PLACES_RANK].i, row[HTA_KERNEL_PLACES_STEP].i,
                               row[HTA_KERNEL_PLACES_NAME_ID].i, dur > med ? dur - med : 0, dur};
        e[k++] = x;
        x.name_id = -1;
        e[k++] = x;
    }
    if (!e)
        return NULL;
    qsort(e, k, sizeof *e, compare_excess);
    size_t n = 0;
    for (size_t i = 0; i < k; i++) {
        if (n && compare_excess(&e[n - 1], &e[i]) == 0) {
            e[n - 1].excess_ns += e[i].excess_ns;
            e[n - 1].dur_ns += e[i].dur_ns;
        } else {
            e[n++] = e[i];
        }
    }
    *n_out = n;
    return e;
}

int hta_kernel_excess_exchange(const hta_processes *pr, const hta_table *places,
                               hta_kernel_excess **out, size_t *n)
{
    medians m = {.pr = pr};
    *out = NULL;
    *n = 0;
    int failed = hta_processes_any(pr, pack(&m, places) != 0) || exchange(&m) != 0;
    if (!failed)
        *out = sum_excess(&m, places, n);
    medians_free(&m);
    return failed || hta_processes_any(pr, !*out) ? -1 : 0;
}

double hta_kernel_excess_share(const hta_kernel_excess *ex, size_t n, int64_t rank,
                               int64_t step, int64_t name_id)
{
    for (int pass = 0; pass < 2; pass++, name_id = -1) {
        hta_kernel_excess probe = {rank, step, name_id, 0, 0};
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (compare_excess(&ex[mid], &probe) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < n && compare_excess(&ex[lo], &probe) == 0 && ex[lo].dur_ns > 0)
            return ex[lo].excess_ns / ex[lo].dur_ns;
    }
    return 0;
}
