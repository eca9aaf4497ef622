/* what_if_choice.c: the scenarios the job is replayed under (see
 * crossrank/job_path/what_if_choice.h; docs/definitions.md, What-if).
 *
 * Without --what-if the candidates are those a user would try first:
 * each step's five costliest delays (/delay_costs) whose cause a change
 * takes away, the change that takes it away on the rank delayed, and the
 * ranks /stragglers flags at the median.  A candidate of several steps
 * is one scenario, replayed for every step; they come costliest first
 * (the cost summed over the steps where it is a candidate); when
 * several ranks' kernels are candidates, those ranks at the median
 * together follow (a pipeline stage or a tensor-parallel group slow as
 * one: fixing one of them alone saves little).  A RANKS
 * word (stragglers, node:HOST) is set here, where the tables that name
 * those ranks are, and travels to the other processes as a list. */
#define _POSIX_C_SOURCE 200809L
#include "crossrank/job_path/what_if_choice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crossrank/compare/causes.h"
#include "crossrank/compare/stragglers.h"
#include "crossrank/exchange/hosts.h"
#include "crossrank/job_path/delay_costs.h"
#include "util/buf.h"
#include "util/ranked.h"

#define TOP_PER_STEP 5

void hta_what_if_choice_free(hta_what_if_choice *c)
{
    for (size_t i = 0; c->notes && i < c->n; i++)
        free(c->notes[i]);
    free(c->notes);
    hta_scenarios_free(c->sc, c->n);
    *c = (hta_what_if_choice){0};
}

/* The scenario kind a cause's delay calls for, or NULL. */
static const char *change_of(hta_cause c)
{
    switch (c) {
    case HTA_CAUSE_COMPUTE:
    case HTA_CAUSE_SLOWER_GPU: return "median";
    case HTA_CAUSE_DATA_LOADING: return "no-data-loading";
    case HTA_CAUSE_CPU_LAUNCH: return "no-launch-delay";
    default: return NULL;
    }
}

typedef struct candidate {
    int64_t step, rank;
    double cost;               /* us */
    const char *change;
} candidate;

/* By step, the costliest first, then by rank. */
static int compare_in_step(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    int c = hta_cmp_i64(x->step, y->step);
    if (c)
        return c;
    if (x->cost != y->cost)
        return x->cost > y->cost ? -1 : 1;
    return hta_cmp_i64(x->rank, y->rank);
}

/* By change and rank. */
static int compare_change(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    int c = strcmp(x->change, y->change);
    return c ? c : hta_cmp_i64(x->rank, y->rank);
}

/* The costliest first, then by change and rank. */
static int compare_total(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost > y->cost ? -1 : 1;
    return compare_change(a, b);
}

/* The rows of "delay_costs" a change takes away. */
static candidate *changeable_delays(const hta_table *costs, size_t *n)
{
    size_t rows = costs ? costs->n_rows : 0;
    candidate *c = malloc((rows + 1) * sizeof *c);
    *n = 0;
    for (size_t i = 0; c && i < rows; i++) {
        const hta_cell *row = hta_table_row(costs, i);
        hta_cause cause = hta_cause_named(row[HTA_DELAY_COSTS_CAUSE].s);
        const char *change = cause < HTA_N_CAUSES ? change_of(cause) : NULL;
        if (change && row[HTA_DELAY_COSTS_TOTAL_US].f > 0)
            c[(*n)++] = (candidate){row[HTA_DELAY_COSTS_STEP].i, row[HTA_DELAY_COSTS_RANK].i,
                                    row[HTA_DELAY_COSTS_TOTAL_US].f, change};
    }
    return c;
}

/* Each step's costliest TOP_PER_STEP, each (change, rank) once with its
 * cost summed, costliest first; *n of them. */
static candidate *default_candidates(const hta_table *costs, size_t *n)
{
    size_t all = 0, k = 0;
    candidate *c = changeable_delays(costs, &all);
    if (!c)
        return NULL;
    qsort(c, all, sizeof *c, compare_in_step);
    for (size_t i = 0, in_step = 0; i < all; i++) {
        in_step = i && c[i].step == c[i - 1].step ? in_step + 1 : 0;
        if (in_step < TOP_PER_STEP)
            c[k++] = c[i];
    }
    qsort(c, k, sizeof *c, compare_change);
    *n = 0;
    for (size_t i = 0; i < k; i++) {
        if (*n && compare_change(&c[*n - 1], &c[i]) == 0)
            c[*n - 1].cost += c[i].cost;
        else
            c[(*n)++] = c[i];
    }
    qsort(c, *n, sizeof *c, compare_total);
    return c;
}

/* The ranks "stragglers" flags, ascending; *n of them. */
static int64_t *flagged_ranks(const hta_tableset *set, size_t *n)
{
    const hta_table *t = hta_tableset_find(set, hta_stragglers_table.name);
    size_t rows = t ? t->n_rows : 0;
    int64_t *r = malloc((rows + 1) * sizeof *r);
    *n = 0;
    for (size_t i = 0; r && i < rows; i++)
        if (hta_table_row(t, i)[HTA_STRAGGLERS_FLAGGED].i)
            r[(*n)++] = hta_table_row(t, i)[HTA_STRAGGLERS_RANK].i;
    if (r)
        qsort(r, *n, sizeof *r, hta_compare_i64);
    return r;
}

/* median:LIST; of the ranks c[0..n).rank into b. */
static int median_together(candidate *c, size_t n, hta_buf *b)
{
    int64_t *ranks = malloc(n * sizeof *ranks);
    for (size_t i = 0; ranks && i < n; i++)
        ranks[i] = c[i].rank;
    if (ranks)
        qsort(ranks, n, sizeof *ranks, hta_compare_i64);
    char *list = ranks ? hta_ranks_text(ranks, n) : NULL;
    int rc = !list || hta_buf_append(b, "median:", 7) || hta_buf_append(b, list, strlen(list)) ||
             hta_buf_putc(b, ';');
    free(ranks);
    free(list);
    return rc ? -1 : 0;
}

/* The default specs, each ended by ';', into b. */
static int default_specs(const hta_tableset *set, hta_buf *b)
{
    size_t n = 0, n_flagged = 0;
    candidate *c = default_candidates(hta_tableset_find(set, hta_delay_costs_table.name), &n);
    int64_t *flagged = flagged_ranks(set, &n_flagged);
    int rc = c && flagged ? 0 : -1;
    char spec[64];
    size_t n_median = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        int len = snprintf(spec, sizeof spec, "%s:%lld;", c[i].change, (long long)c[i].rank);
        rc = hta_buf_append(b, spec, (size_t)len);
        if (strcmp(c[i].change, "median") == 0)
            c[n_median++].rank = c[i].rank; /* c[i] is read already */
    }
    if (rc == 0 && n_median > 1)
        rc = median_together(c, n_median, b);
    if (rc == 0 && n_flagged)
        rc = hta_buf_append(b, "median:stragglers", strlen("median:stragglers"));
    free(c);
    free(flagged);
    return rc;
}

/* The ranks of host (hosts known), ascending; *n of them. */
static int64_t *ranks_of_host(const hta_rank_hosts *h, const char *host, size_t *n)
{
    uint32_t node = hta_strtab_find(&h->names, host, strlen(host));
    int64_t *r = malloc((h->n_ranks + 1) * sizeof *r);
    *n = 0;
    for (size_t i = 0; r && node != UINT32_MAX && i < h->n_ranks; i++)
        if (h->node[i] == node)
            r[(*n)++] = h->rank[i];
    return r;
}

/* The ranks a word names, ascending, into *ranks (*n), and into *note
 * why there are none; -1 when out of memory.  h NULL: hosts unknown. */
static int word_ranks(const hta_tableset *set, const hta_rank_hosts *h, const hta_scenario *s,
                      int64_t **ranks, size_t *n, const char **note)
{
    if (s->by == HTA_RANKS_STRAGGLERS) {
        *ranks = flagged_ranks(set, n);
        *note = "/stragglers flags no rank";
    } else if (!h || h->n_ranks == 0) {
        *ranks = malloc(sizeof **ranks);
        *n = 0;
        *note = "the ranks' hosts are unknown (--hostfile or --gpus-per-node names them)";
    } else {
        *ranks = ranks_of_host(h, s->ranks + 5, n);
        *note = "no rank analysed ran on this host";
    }
    return *ranks ? 0 : -1;
}

/* Sets the ranks of each scenario named by a word, and the notes. */
static int set_word_ranks(const hta_tableset *set, const hta_rank_hosts *hosts,
                          hta_what_if_choice *c, hta_error *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < c->n; i++) {
        hta_scenario *s = &c->sc[i];
        const char *note = "";
        if (s->by == HTA_RANKS_STRAGGLERS || s->by == HTA_RANKS_NODE) {
            int64_t *ranks = NULL;
            size_t n = 0;
            char *list = NULL;
            rc = word_ranks(set, hosts, s, &ranks, &n, &note) ||
                 !(list = hta_ranks_text(ranks, n)) || hta_scenario_set_ranks(s, list);
            free(ranks);
            free(list);
            note = n ? "" : note;
        }
        c->notes[i] = rc ? NULL : strdup(note);
        rc = rc || !c->notes[i];
    }
    return rc ? hta_fail(err, "out of memory naming the ranks of the what-if scenarios") : 0;
}

int hta_what_if_choose(const hta_tableset *set, const hta_rank_hosts *hosts,
                       const hta_crossrank_settings *opt, hta_what_if_choice *out,
                       hta_error *err)
{
    *out = (hta_what_if_choice){0};
    hta_buf defaults = {0};
    if (!opt->what_if && default_specs(set, &defaults)) {
        hta_buf_free(&defaults);
        return hta_fail(err, "out of memory choosing the what-if scenarios");
    }
    const char *specs = opt->what_if ? opt->what_if : defaults.data ? defaults.data : "";
    int rc = hta_scenarios_parse(specs, &out->sc, &out->n, err);
    hta_buf_free(&defaults);
    out->notes = rc ? NULL : calloc(out->n, sizeof *out->notes);
    if (rc == 0 && !out->notes)
        rc = hta_fail(err, "out of memory choosing the what-if scenarios");
    if (rc == 0)
        rc = set_word_ranks(set, hosts, out, err);
    if (rc)
        hta_what_if_choice_free(out);
    return rc;
}
