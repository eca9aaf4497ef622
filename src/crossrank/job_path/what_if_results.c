/* what_if_results.c: the root's /what_if rows from the processes'
 * replayed spans (see crossrank/job_path/what_if.h; docs/definitions.md,
 * What-if).
 *
 * Per (step, scenario) the processes sent their ranks' longest step
 * time, replayed and measured (crossrank/job_path/replay.c); the step's
 * is the longest over the processes.  The measured step time is
 * the step's slowest rank's (/cross_rank/steps), the replayed one the
 * "as measured" scenario's span, and each scenario's prediction is its
 * span, so a scenario's saving compares two replays of the same graph. */
#include "crossrank/job_path/what_if.h"

#include <math.h>
#include <stdlib.h>

#include "crossrank/compare/step_comparison.h"
#include "crossrank/job_path/replay.h"
#include "util/ranked.h"

static const hta_column COLUMNS[HTA_WHAT_IF_N_COLUMNS] = {
    [HTA_WHAT_IF_STEP] = {"step", HTA_COL_I64},
    [HTA_WHAT_IF_SCENARIO] = {"scenario", HTA_COL_STR},
    [HTA_WHAT_IF_RANKS] = {"ranks", HTA_COL_STR},
    [HTA_WHAT_IF_MEASURED_STEP_TIME_US] = {"measured_step_time_us", HTA_COL_F64},
    [HTA_WHAT_IF_REPLAYED_STEP_TIME_US] = {"replayed_step_time_us", HTA_COL_F64},
    [HTA_WHAT_IF_PREDICTED_STEP_TIME_US] = {"predicted_step_time_us", HTA_COL_F64},
    [HTA_WHAT_IF_SAVING_US] = {"saving_us", HTA_COL_F64},
    [HTA_WHAT_IF_SAVING_PCT] = {"saving_pct", HTA_COL_F64},
    [HTA_WHAT_IF_NOTE] = {"note", HTA_COL_STR},
};

/* How far the replay's step may be from the measured one before its
 * numbers are withheld. */
#define MAX_WINDOW_ERROR 0.02
const hta_table_spec hta_what_if_table = {"what_if", COLUMNS, HTA_WHAT_IF_N_COLUMNS,
                                          HTA_TABLE_GATHERED};

typedef struct span {
    int64_t step, scenario, replayed, measured;
} span;

static int compare_span(const void *a, const void *b)
{
    const span *x = a, *y = b;
    int c = hta_cmp_i64(x->step, y->step);
    return c ? c : hta_cmp_i64(x->scenario, y->scenario);
}

/* The spans by (step, scenario), each the longest over the processes;
 * *n of them, NULL when out of memory. */
static span *merged_spans(const hta_table *t, size_t *n)
{
    span *s = malloc((t->n_rows + 1) * sizeof *s);
    *n = 0;
    if (!s)
        return NULL;
    for (size_t i = 0; i < t->n_rows; i++) {
        const hta_cell *row = hta_table_row(t, i);
        s[i] = (span){row[HTA_REPLAY_SPANS_STEP].i, row[HTA_REPLAY_SPANS_SCENARIO].i,
                      row[HTA_REPLAY_SPANS_REPLAYED_NS].i, row[HTA_REPLAY_SPANS_MEASURED_NS].i};
    }
    qsort(s, t->n_rows, sizeof *s, compare_span);
    for (size_t i = 0; i < t->n_rows; i++) {
        if (*n && compare_span(&s[*n - 1], &s[i]) == 0) {
            span *m = &s[*n - 1];
            m->replayed = s[i].replayed > m->replayed ? s[i].replayed : m->replayed;
            m->measured = s[i].measured > m->measured ? s[i].measured : m->measured;
        } else {
            s[(*n)++] = s[i];
        }
    }
    return s;
}

/* The step's measured time: its slowest rank's, else its longest span. */
static double measured_us(const hta_table *steps, const span *s)
{
    size_t i = steps ? hta_table_lower_bound(steps, HTA_CROSS_STEPS_STEP, s->step) : 0;
    if (steps && i < steps->n_rows && hta_table_row(steps, i)[HTA_CROSS_STEPS_STEP].i == s->step)
        return hta_table_row(steps, i)[HTA_CROSS_STEPS_STEP_TIME_MAX_US].f;
    return (double)s->measured / 1000.0;
}

static int put_row(hta_table *t, const span *s, const hta_scenario *sc, const char *note,
                   double measured, double replayed)
{
    double predicted = (double)s->replayed / 1000.0, saving = replayed - predicted;
    double window = (double)s->measured / 1000.0;
    if (fabs(window - measured) > MAX_WINDOW_ERROR * measured) {
        /* A step recorded twice (a ProfilerStep on the GPU's timeline
         * too) is longer in /steps than the CPU range the graph spans. */
        note = "the step's graph spans its ProfilerStep's CPU range, not the step's time in "
               "/steps (a range recorded on the GPU too)";
        replayed = predicted = saving = NAN;
    } else if (*note) {
        predicted = saving = NAN;
    }
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, s->step);
    hta_row_put_str(&row, sc->text);
    hta_row_put_str(&row, sc->ranks);
    hta_row_put_f64(&row, measured);
    hta_row_put_f64(&row, replayed);
    hta_row_put_f64(&row, predicted);
    hta_row_put_f64(&row, saving);
    hta_row_put_f64(&row, replayed > 0 ? 100.0 * saving / replayed : saving);
    hta_row_put_str(&row, note);
    return hta_row_done(&row);
}

int hta_what_if_rows(hta_tableset *set, const hta_table *spans, const hta_what_if_choice *c)
{
    if (!spans)
        return 0;
    size_t n = 0;
    span *s = merged_spans(spans, &n);
    hta_table *t = s ? hta_tableset_table(set, &hta_what_if_table) : NULL;
    const hta_table *steps = hta_tableset_find(set, hta_cross_steps_table.name);
    int rc = t ? 0 : -1;
    double replayed = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (s[i].scenario < 0 || (size_t)s[i].scenario >= c->n)
            continue;
        if (s[i].scenario == 0)
            replayed = (double)s[i].replayed / 1000.0;
        rc = put_row(t, &s[i], &c->sc[s[i].scenario], c->notes[s[i].scenario],
                     measured_us(steps, &s[i]), replayed);
    }
    free(s);
    return rc;
}
