/* what_if_choice.c: the scenarios the job is replayed under (see
 * crossrank/job_path/what_if_choice.h; docs/definitions.md, What-if).
 *
 * Without --what-if the candidates are those a user would try first:
 * each step's five costliest delays (/delay_costs) whose cause a change
 * takes away, the change that takes it away on the rank delayed; when
 * several of a step's are ranks' kernels, those ranks at the median
 * together (a pipeline stage or a tensor-parallel group slow as one:
 * fixing one of them alone saves little); and the ranks /stragglers
 * flags at the median.  Each step is replayed under its own candidates
 * only, so a step has at most TOP_PER_STEP + 2 of them however large
 * the job: a candidate of several steps is one scenario, replayed for
 * those steps (its steps set); they come costliest first (the cost
 * summed over its steps), the ranks together after them, the flagged
 * ranks, replayed for every step, last.  A RANKS
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

/* Each step's costliest TOP_PER_STEP, by step, the costliest first; *n
 * of them. */
static candidate *default_candidates(const hta_table *costs, size_t *n)
{
    size_t all = 0;
    candidate *c = changeable_delays(costs, &all);
    *n = 0;
    if (!c)
        return NULL;
    qsort(c, all, sizeof *c, compare_in_step);
    for (size_t i = 0, in_step = 0; i < all; i++) {
        in_step = i && c[i].step == c[i - 1].step ? in_step + 1 : 0;
        if (in_step < TOP_PER_STEP)
            c[(*n)++] = c[i];
    }
    return c;
}

/* A default scenario for one step: its spec, whether it is the step's
 * median ranks together (those follow the single changes), its cost;
 * once merged over the steps, their list. */
typedef struct pick {
    char spec[8 + TOP_PER_STEP * 22];
    int64_t step;
    double cost;
    int together;
    char *steps;
} pick;

/* By spec, then by step. */
static int compare_spec(const void *a, const void *b)
{
    const pick *x = a, *y = b;
    int c = strcmp(x->spec, y->spec);
    return c ? c : hta_cmp_i64(x->step, y->step);
}

/* The single changes first, each kind the costliest (over its steps)
 * first, then by spec. */
static int compare_order(const void *a, const void *b)
{
    const pick *x = a, *y = b;
    if (x->together != y->together)
        return x->together - y->together;
    if (x->cost != y->cost)
        return x->cost > y->cost ? -1 : 1;
    return strcmp(x->spec, y->spec);
}

/* The step's median ranks c[0..n) together into *p; 0 when fewer than
 * two, -1 when out of memory. */
static int together_pick(const candidate *c, size_t n, pick *p)
{
    int64_t ranks[TOP_PER_STEP];
    size_t k = 0;
    *p = (pick){.step = c[0].step, .together = 1};
    for (size_t i = 0; i < n; i++)
        if (strcmp(c[i].change, "median") == 0) {
            ranks[k++] = c[i].rank;
            p->cost += c[i].cost;
        }
    if (k < 2)
        return 0;
    qsort(ranks, k, sizeof *ranks, hta_compare_i64);
    char *list = hta_ranks_text(ranks, k);
    if (!list)
        return -1;
    snprintf(p->spec, sizeof p->spec, "median:%s", list);
    free(list);
    return 1;
}

/* Per step its candidates' changes, and its median ranks together when
 * several, into p (room for n + steps picks); *n_picks of them. */
static int step_picks(const candidate *c, size_t n, pick *p, size_t *n_picks)
{
    *n_picks = 0;
    for (size_t i = 0, end; i < n; i = end) {
        for (end = i; end < n && c[end].step == c[i].step; end++) {
            pick *q = &p[(*n_picks)++];
            *q = (pick){.step = c[end].step, .cost = c[end].cost};
            snprintf(q->spec, sizeof q->spec, "%s:%lld", c[end].change, (long long)c[end].rank);
        }
        int got = together_pick(&c[i], end - i, &p[*n_picks]);
        if (got < 0)
            return -1;
        *n_picks += (size_t)got;
    }
    return 0;
}

/* The picks p[0..n) sorted by spec, each spec once (its cost summed,
 * its steps listed) in p[0..*n_specs); -1 when out of memory (their
 * steps to free all the same). */
static int merge_picks(pick *p, size_t n, size_t *n_specs)
{
    int64_t *numbers = malloc((n + 1) * sizeof *numbers);
    int rc = numbers ? 0 : -1;
    *n_specs = 0;
    for (size_t i = 0, end; rc == 0 && i < n; i = end) {
        pick merged = p[i];
        merged.cost = 0;
        for (end = i; end < n && strcmp(p[end].spec, p[i].spec) == 0; end++) {
            merged.cost += p[end].cost;
            numbers[end - i] = p[end].step;
        }
        merged.steps = hta_ranks_text(numbers, end - i);
        rc = merged.steps ? 0 : -1;
        p[(*n_specs)++] = merged;
    }
    free(numbers);
    return rc;
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

/* The default scenarios after "as measured": each spec ended by ';' in
 * specs, and steps[i] the steps the i-th is replayed for (NULL: every
 * step). */
typedef struct defaults {
    hta_buf specs;
    char **steps;
    size_t n;
} defaults;

static void defaults_free(defaults *d)
{
    for (size_t i = 0; d->steps && i < d->n; i++)
        free(d->steps[i]);
    free(d->steps);
    hta_buf_free(&d->specs);
}

/* Each step's own picks, each spec once for the steps that chose it,
 * then median:stragglers on every step when a rank is flagged. */
static int default_specs(const hta_tableset *set, defaults *d)
{
    size_t n = 0, n_picks = 0, n_flagged = 0;
    candidate *c = default_candidates(hta_tableset_find(set, hta_delay_costs_table.name), &n);
    pick *p = calloc(2 * n + 1, sizeof *p);
    int64_t *flagged = flagged_ranks(set, &n_flagged);
    d->steps = calloc(2 * n + 2, sizeof *d->steps);
    int rc = c && p && flagged && d->steps ? step_picks(c, n, p, &n_picks) : -1;
    if (rc == 0) {
        qsort(p, n_picks, sizeof *p, compare_spec);
        rc = merge_picks(p, n_picks, &d->n);
        qsort(p, d->n, sizeof *p, compare_order);
    }
    for (size_t i = 0; p && i < d->n; i++) {
        d->steps[i] = p[i].steps;
        rc = rc || hta_buf_append(&d->specs, p[i].spec, strlen(p[i].spec)) ||
             hta_buf_putc(&d->specs, ';');
    }
    if (rc == 0 && n_flagged) {
        rc = hta_buf_append(&d->specs, "median:stragglers", strlen("median:stragglers"));
        d->steps[d->n++] = NULL;
    }
    free(c);
    free(p);
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

/* The steps of each default scenario. */
static int set_default_steps(const defaults *d, hta_what_if_choice *c, hta_error *err)
{
    for (size_t i = 0; i < d->n && i + 1 < c->n; i++)
        if (d->steps[i] && hta_scenario_set_steps(&c->sc[i + 1], d->steps[i]))
            return hta_fail(err, "out of memory choosing the what-if scenarios");
    return 0;
}

int hta_what_if_choose(const hta_tableset *set, const hta_rank_hosts *hosts,
                       const hta_crossrank_settings *opt, hta_what_if_choice *out,
                       hta_error *err)
{
    *out = (hta_what_if_choice){0};
    defaults d = {0};
    if (!opt->what_if && default_specs(set, &d)) {
        defaults_free(&d);
        return hta_fail(err, "out of memory choosing the what-if scenarios");
    }
    const char *specs = opt->what_if ? opt->what_if : d.specs.data ? d.specs.data : "";
    int rc = hta_scenarios_parse(specs, &out->sc, &out->n, err) || set_default_steps(&d, out, err);
    defaults_free(&d);
    out->notes = rc ? NULL : calloc(out->n, sizeof *out->notes);
    if (rc == 0 && !out->notes)
        rc = hta_fail(err, "out of memory choosing the what-if scenarios");
    if (rc == 0)
        rc = set_word_ranks(set, hosts, out, err);
    if (rc)
        hta_what_if_choice_free(out);
    return rc ? -1 : 0;
}
