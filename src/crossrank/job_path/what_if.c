/* what_if.c: the what-if step of the cross-rank stage (see
 * crossrank/job_path/what_if.h; docs/crossrank.md, "/what_if").
 *
 * The job's graph was built during the matching, on every process for
 * its ranks (crossrank/job_path/replay.h); the scenarios are chosen
 * later, on the root, because the defaults and the RANKS words read what
 * only the root computes (/delay_costs, /stragglers, the hosts).  The
 * root sends every process the chosen specs, each with its ranks as a
 * list, so each parses the same scenarios; every process replays its
 * ranks, and the spans come back to the root for the rows. */
#include "crossrank/job_path/what_if.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "crossrank/job_path/replay.h"
#include "util/buf.h"

/* The choice as text: the specs after "as measured", each ended by ';',
 * then a NUL, then each scenario's ranks and steps ("" for every step),
 * each ended by a NUL. */
static int choice_text(const hta_what_if_choice *c, hta_buf *b)
{
    int rc = 0;
    for (size_t i = 1; rc == 0 && i < c->n; i++)
        rc = hta_buf_append(b, c->sc[i].text, strlen(c->sc[i].text)) || hta_buf_putc(b, ';');
    rc = rc || hta_buf_putc(b, 0);
    for (size_t i = 0; rc == 0 && i < c->n; i++) {
        const char *steps = c->sc[i].steps ? c->sc[i].steps : "";
        rc = hta_buf_append(b, c->sc[i].ranks, strlen(c->sc[i].ranks) + 1) ||
             hta_buf_append(b, steps, strlen(steps) + 1);
    }
    return rc;
}

/* The choice from its text (len bytes); -1 when it does not read back
 * or out of memory. */
static int choice_of_text(const char *text, size_t len, hta_what_if_choice *c)
{
    hta_error ignored = {{0}};
    const char *end = text + len, *at = memchr(text, 0, len);
    if (!at || hta_scenarios_parse(text, &c->sc, &c->n, &ignored))
        return -1;
    for (size_t i = 0; i < c->n; i++) {
        const char *ranks = at + 1;
        at = ranks < end ? memchr(ranks, 0, (size_t)(end - ranks)) : NULL;
        const char *steps = at ? at + 1 : end;
        at = steps < end ? memchr(steps, 0, (size_t)(end - steps)) : NULL;
        hta_scenario *s = &c->sc[i];
        if (!at || ((s->by == HTA_RANKS_STRAGGLERS || s->by == HTA_RANKS_NODE) &&
                    hta_scenario_set_ranks(s, ranks)) ||
            (*steps && hta_scenario_set_steps(s, steps)))
            return -1;
    }
    return 0;
}

/* The root's choice on every process; -1 on every process when the
 * root's failed (err set there) or one ran out of memory. */
static int share_choice(const hta_processes *pr, const hta_crossrank_tables *t,
                        const hta_crossrank_settings *opt, hta_what_if_choice *c, hta_error *err)
{
    hta_buf text = {0};
    int failed = pr->me == HTA_ROOT &&
                 (hta_what_if_choose(t->all, t->hosts, opt, c, err) || choice_text(c, &text) ||
                  text.len > INT_MAX);
    int *lens = calloc((size_t)pr->n * 2, sizeof *lens);
    failed = hta_processes_any(pr, failed || !lens);
    char *all = NULL;
    if (!failed) {
        hta_processes_allgather_int(pr, pr->me == HTA_ROOT ? (int)text.len : 0, lens);
        all = malloc((size_t)lens[HTA_ROOT] + 1);
        failed = hta_processes_any(pr, !all);
    }
    if (!failed) {
        hta_processes_allgatherv(pr, text.data, pr->me == HTA_ROOT ? (int)text.len : 0, all,
                                 lens, lens + pr->n);
        failed = pr->me != HTA_ROOT && choice_of_text(all, (size_t)lens[HTA_ROOT], c);
        failed = hta_processes_any(pr, failed);
    }
    free(all);
    free(lens);
    hta_buf_free(&text);
    return failed ? -1 : 0;
}

int hta_what_if(const hta_processes *pr, hta_crossrank_tables *t,
                const hta_crossrank_settings *opt, hta_error *err)
{
    if (!t->replay)
        return 0;
    hta_what_if_choice c = {0};
    hta_tableset spans = {0}, gathered = {0};
    int failed = share_choice(pr, t, opt, &c, err) ||
                 hta_replay_run(t->replay, c.sc, c.n, &spans, err);
    hta_replay_free(t->replay);
    t->replay = NULL;
    if (!failed)
        failed = hta_processes_any(pr, hta_processes_gather_tables(pr, &spans, &gathered, err));
    if (!failed && pr->me == HTA_ROOT &&
        hta_what_if_rows(t->all, hta_tableset_find(&gathered, hta_replay_spans_table.name), &c))
        failed = hta_fail(err, "out of memory putting the what-if rows");
    hta_tableset_free(&spans);
    hta_tableset_free(&gathered);
    hta_what_if_choice_free(&c);
    return failed ? -1 : 0;
}
