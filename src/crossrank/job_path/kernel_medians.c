/* kernel_medians.c: the median over the ranks of each kernel at its
 * place in the step, spread over the processes (see
 * crossrank/job_path/kernel_medians.h; docs/definitions.md, What-if).
 *
 * A kernel's place is (step, name, k): the k-th launch of that name in
 * the step, since one kernel runs at several places with different
 * lengths.  Each rank's analysis lists a step's launches of a name as a
 * run (analysis/critical_path.h: the name by the rank's id, the
 * durations by place, eight to a row), so a place is a run's key and an
 * index into its durations; the key's name is a hash of the name's text
 * (util/name_hash.h), the same on every rank, hashed here once per name
 * row of "_path_names".  As the collectives' instances are
 * (crossrank/collective_exchange.c), each (step, name) has an owner, here
 * by its hash: one MPI_Alltoallv sends each run's key and another its
 * durations to the owner, which groups the runs of a key in a hash table
 * and puts the median of each place over the place's durations, and a
 * third returns the medians to the process holding the rank, which lists
 * each of its launches with its place's median.  No process holds more than
 * its ranks' durations and its share of the places: 8 bytes a launch
 * each way, beside the keys of the runs. */
#include "crossrank/job_path/kernel_medians.h"

#include <limits.h>
#include <stdlib.h>

#include "analysis/critical_path.h"
#include "numerics/stats.h"
#include "util/name_hash.h"
#include "util/ranked.h"

/* A run's key and its launches, as sent. */
typedef struct run_key {
    int64_t step, hash, launches;
} run_key;

/* A duration, as sent; at the owner, replaced by its place's median. */
typedef union sample {
    int64_t dur;
    double median;
} sample;

static uint64_t mix(int64_t step, int64_t hash)
{
    uint64_t h = (uint64_t)hash ^ ((uint64_t)step * 0x9e3779b97f4a7c15u);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9u;
    return h ^ (h >> 29);
}

static int owner_of(int64_t step, int64_t hash, int n_processes)
{
    return (int)(mix(step, hash) % (uint64_t)n_processes);
}

/* The exchange's buffers.  Counts: per process, send, send displacements,
 * receive, receive displacements; of keys, then of samples. */
typedef struct medians {
    const hta_processes *pr;
    const hta_table *runs, *durations, *names;
    int64_t *hashes;           /* per run: its name's hash */
    int *keys, *samples;
    run_key *sent_keys, *received_keys;
    sample *sent, *received;
    double *returned;          /* per local duration, in the order sent */
    size_t n_runs, n_durations, n_received_keys, n_received;
} medians;

static void medians_free(medians *m)
{
    free(m->hashes);
    free(m->keys);
    free(m->samples);
    free(m->sent_keys);
    free(m->received_keys);
    free(m->sent);
    free(m->received);
    free(m->returned);
}

static int run_owner(const medians *m, size_t i)
{
    return owner_of(hta_table_row(m->runs, i)[HTA_KERNEL_RUNS_STEP].i, m->hashes[i], m->pr->n);
}

static int64_t run_name_id(const hta_cell *run)
{
    return run[HTA_KERNEL_RUNS_NAME_LAUNCHES].i >> 32;
}

static int64_t run_launches(const hta_cell *run)
{
    return run[HTA_KERNEL_RUNS_NAME_LAUNCHES].i & 0xffffffff;
}

/* Reads a rank's durations in order, row by row: a rank's first starts
 * a row. */
typedef struct duration_cursor {
    const hta_table *t;
    size_t row;
    int slot;
    int64_t rank;
} duration_cursor;

/* The rank's next duration into *dur; -1 when the rows run out or are
 * another rank's. */
static int next_duration(duration_cursor *c, int64_t rank, int64_t *dur)
{
    if (c->rank != rank && c->slot > 0) {
        c->row++;
        c->slot = 0;
    }
    c->rank = rank;
    if (!c->t || c->row >= c->t->n_rows)
        return -1;
    const hta_cell *row = hta_table_row(c->t, c->row);
    if (row[HTA_KERNEL_DURATIONS_RANK].i != rank)
        return -1;
    *dur = row[HTA_KERNEL_DURATIONS_FIRST_NS + c->slot].i;
    if (++c->slot == HTA_KERNEL_DURATIONS_PER_ROW) {
        c->row++;
        c->slot = 0;
    }
    return 0;
}

/* The first row of each rank's block of "_path_names", whose rows are
 * the rank's names in id order. */
typedef struct name_block {
    int64_t rank;
    size_t first;
} name_block;

static int compare_block(const void *a, const void *b)
{
    return hta_cmp_i64(((const name_block *)a)->rank, ((const name_block *)b)->rank);
}

/* Each run's name hash: each name row's text hashed once. */
static int hash_names(medians *m)
{
    const hta_table *t = m->names;
    size_t n = t ? t->n_rows : 0, n_blocks = 0;
    int64_t *of_row = malloc((n + 1) * sizeof *of_row);
    name_block *b = malloc((n + 1) * sizeof *b);
    m->hashes = malloc((m->n_runs + 1) * sizeof *m->hashes);
    int rc = of_row && b && m->hashes ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const hta_cell *row = hta_table_row(t, i);
        of_row[i] = hta_name_hash(row[HTA_PATH_NAMES_NAME].s);
        if (row[HTA_PATH_NAMES_NAME_ID].i == 0)
            b[n_blocks++] = (name_block){row[HTA_PATH_NAMES_RANK].i, i};
    }
    if (rc == 0)
        qsort(b, n_blocks, sizeof *b, compare_block);
    const name_block *at = NULL;
    for (size_t i = 0; rc == 0 && i < m->n_runs; i++) {
        const hta_cell *run = hta_table_row(m->runs, i);
        int64_t rank = run[HTA_KERNEL_RUNS_RANK].i, id = run_name_id(run);
        if (!at || at->rank != rank) {
            name_block probe = {rank, 0};
            at = bsearch(&probe, b, n_blocks, sizeof *b, compare_block);
        }
        size_t row = at ? at->first + (size_t)id : n;
        rc = id < 0 || row >= n || hta_table_row(t, row)[HTA_PATH_NAMES_RANK].i != rank ||
                     hta_table_row(t, row)[HTA_PATH_NAMES_NAME_ID].i != id
                 ? -1
                 : 0;
        if (rc == 0)
            m->hashes[i] = of_row[row];
    }
    free(of_row);
    free(b);
    return rc;
}

/* The local runs and durations packed by owner (a counting sort); -1
 * when out of memory or the durations are not the runs'. */
static int pack(medians *m)
{
    int np = m->pr->n;
    m->n_runs = m->runs ? m->runs->n_rows : 0;
    m->keys = calloc(4 * (size_t)np, sizeof *m->keys);
    m->samples = calloc(4 * (size_t)np, sizeof *m->samples);
    int *next_key = calloc(2 * (size_t)np, sizeof *next_key), *next = next_key + np;
    int rc = m->keys && m->samples && next_key ? hash_names(m) : -1;
    size_t total = 0;
    for (size_t i = 0; rc == 0 && i < m->n_runs; i++) {
        int64_t launches = run_launches(hta_table_row(m->runs, i));
        int p = run_owner(m, i);
        m->keys[p]++;
        m->samples[p] += (int)launches;
        total += (size_t)launches;
        rc = launches > INT_MAX || m->samples[p] < 0 ? -1 : 0;
    }
    m->n_durations = total;
    m->sent_keys = malloc((m->n_runs + 1) * sizeof *m->sent_keys);
    m->sent = malloc((m->n_durations + 1) * sizeof *m->sent);
    rc = rc || !m->sent_keys || !m->sent ||
         hta_processes_displacements(m->keys, m->keys + np, np) ||
         hta_processes_displacements(m->samples, m->samples + np, np);
    duration_cursor c = {m->durations, 0, 0, 0};
    for (size_t i = 0; rc == 0 && i < m->n_runs; i++) {
        const hta_cell *row = hta_table_row(m->runs, i);
        int p = run_owner(m, i);
        int64_t launches = run_launches(row);
        m->sent_keys[m->keys[np + p] + next_key[p]++] =
            (run_key){row[HTA_KERNEL_RUNS_STEP].i, m->hashes[i], launches};
        sample *to = &m->sent[m->samples[np + p] + next[p]];
        for (int64_t k = 0; rc == 0 && k < launches; k++)
            rc = next_duration(&c, row[HTA_KERNEL_RUNS_RANK].i, &to[k].dur);
        next[p] += (int)launches;
    }
    free(next_key);
    return rc;
}

/* The owner's runs grouped by key: chains through next from a hash
 * table's heads (UINT32_MAX: none). */
typedef struct groups {
    uint32_t *head, *next;
    size_t mask;
} groups;

static int same_key(const run_key *x, const run_key *y)
{
    return x->step == y->step && x->hash == y->hash;
}

static int group_runs(const run_key *k, size_t n, groups *g)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    g->mask = cap - 1;
    g->head = malloc(cap * sizeof *g->head);
    g->next = malloc((n + 1) * sizeof *g->next);
    if (!g->head || !g->next || n >= UINT32_MAX)
        return -1;
    for (size_t i = 0; i < cap; i++)
        g->head[i] = UINT32_MAX;
    /* Each run joins the chain of its key's first run (the head slot's
     * run), or opens a slot; chains keep the runs in the order received. */
    uint32_t *last = malloc((n + 1) * sizeof *last);
    if (!last)
        return -1;
    for (size_t i = 0; i < n; i++) {
        g->next[i] = UINT32_MAX;
        size_t s = (size_t)mix(k[i].step, k[i].hash) & g->mask;
        while (g->head[s] != UINT32_MAX && !same_key(&k[g->head[s]], &k[i]))
            s = (s + 1) & g->mask;
        if (g->head[s] == UINT32_MAX) {
            g->head[s] = (uint32_t)i;
        } else {
            g->next[last[g->head[s]]] = (uint32_t)i;
        }
        last[g->head[s]] = (uint32_t)i;
    }
    free(last);
    return 0;
}

/* The medians of the places of the group starting at run i, each put in
 * place of the place's durations; v: room for the group's runs. */
static void group_medians(const medians *m, const groups *g, const size_t *first, uint32_t i,
                          double *v)
{
    int64_t most = 0;
    for (uint32_t j = i; j != UINT32_MAX; j = g->next[j])
        most = m->received_keys[j].launches > most ? m->received_keys[j].launches : most;
    for (int64_t k = 0; k < most; k++) {
        size_t n = 0;
        for (uint32_t j = i; j != UINT32_MAX; j = g->next[j])
            if (m->received_keys[j].launches > k)
                v[n++] = (double)m->received[first[j] + (size_t)k].dur;
        double med = v[0]; /* one rank's: no sort */
        if (n > 1) {
            hta_sort_doubles(v, n);
            med = hta_quantile_sorted(v, n, 0.5);
        }
        for (uint32_t j = i; j != UINT32_MAX; j = g->next[j])
            if (m->received_keys[j].launches > k)
                m->received[first[j] + (size_t)k].median = med;
    }
}

/* The owner's medians, in place of the durations received. */
static int take_medians(medians *m)
{
    size_t n = m->n_received_keys, at = 0;
    groups g = {0};
    size_t *first = malloc((n + 1) * sizeof *first);
    double *v = malloc((n + 1) * sizeof *v);
    int rc = first && v ? group_runs(m->received_keys, n, &g) : -1;
    /* The samples come by process in the keys' order. */
    for (size_t i = 0; rc == 0 && i < n; i++) {
        first[i] = at;
        at += (size_t)m->received_keys[i].launches;
    }
    rc = rc || at != m->n_received;
    for (size_t s = 0; rc == 0 && s <= g.mask; s++)
        if (g.head[s] != UINT32_MAX)
            group_medians(m, &g, first, g.head[s], v);
    free(g.head);
    free(g.next);
    free(first);
    free(v);
    return rc;
}

static int exchange(medians *m)
{
    const hta_processes *pr = m->pr;
    int np = pr->n, *keys = m->keys, *samples = m->samples;
    hta_processes_alltoall_int(pr, keys, keys + 2 * np);
    hta_processes_alltoall_int(pr, samples, samples + 2 * np);
    int failed = hta_processes_displacements(keys + 2 * np, keys + 3 * np, np) ||
                 hta_processes_displacements(samples + 2 * np, samples + 3 * np, np);
    m->n_received_keys = failed ? 0 : (size_t)keys[4 * np - 1] + (size_t)keys[3 * np - 1];
    m->n_received = failed ? 0 : (size_t)samples[4 * np - 1] + (size_t)samples[3 * np - 1];
    m->received_keys = malloc((m->n_received_keys + 1) * sizeof *m->received_keys);
    m->received = malloc((m->n_received + 1) * sizeof *m->received);
    if (hta_processes_any(pr, failed || !m->received_keys || !m->received))
        return -1;
    hta_processes_alltoallv(pr, m->sent_keys, keys, keys + np, m->received_keys, keys + 2 * np,
                            keys + 3 * np, sizeof *m->sent_keys);
    hta_processes_alltoallv(pr, m->sent, samples, samples + np, m->received, samples + 2 * np,
                            samples + 3 * np, sizeof *m->sent);
    free(m->sent_keys);
    free(m->sent);
    m->sent_keys = NULL;
    m->sent = NULL;
    failed = take_medians(m) != 0;
    free(m->received_keys);
    m->received_keys = NULL;
    m->returned = failed ? NULL : malloc((m->n_durations + 1) * sizeof *m->returned);
    if (hta_processes_any(pr, failed || !m->returned))
        return -1;
    hta_processes_alltoallv(pr, m->received, samples + 2 * np, samples + 3 * np, m->returned,
                            samples, samples + np, sizeof *m->received);
    return 0;
}

/* Each local launch's place and the median there. */
static hta_kernel_median *list_medians(const medians *m, size_t *n_out)
{
    int np = m->pr->n;
    hta_kernel_median *e = malloc((m->n_durations + 1) * sizeof *e);
    int *next = calloc((size_t)np, sizeof *next);
    size_t k = 0;
    for (size_t i = 0; e && next && i < m->n_runs; i++) {
        const hta_cell *row = hta_table_row(m->runs, i);
        int p = run_owner(m, i);
        const double *med = &m->returned[m->samples[np + p] + next[p]];
        int64_t launches = run_launches(row);
        for (int64_t j = 0; j < launches && k < m->n_durations; j++)
            e[k++] = (hta_kernel_median){row[HTA_KERNEL_RUNS_RANK].i, row[HTA_KERNEL_RUNS_STEP].i,
                                         run_name_id(row), j, med[j]};
        next[p] += (int)launches;
    }
    free(next);
    if (!e)
        return NULL;
    qsort(e, k, sizeof *e, hta_kernel_median_compare);
    *n_out = k;
    return e;
}

int hta_kernel_median_compare(const void *a, const void *b)
{
    const hta_kernel_median *x = a, *y = b;
    int c = hta_cmp_i64(x->rank, y->rank);
    c = c ? c : hta_cmp_i64(x->step, y->step);
    c = c ? c : hta_cmp_i64(x->name_id, y->name_id);
    return c ? c : hta_cmp_i64(x->place, y->place);
}

int hta_kernel_medians_exchange(const hta_processes *pr, const hta_table *runs,
                                const hta_table *durations, const hta_table *names,
                                hta_kernel_median **out, size_t *n)
{
    medians m = {.pr = pr, .runs = runs, .durations = durations, .names = names};
    *out = NULL;
    *n = 0;
    int failed = hta_processes_any(pr, pack(&m) != 0) || exchange(&m) != 0;
    if (!failed)
        *out = list_medians(&m, n);
    medians_free(&m);
    return failed || hta_processes_any(pr, !*out) ? -1 : 0;
}
