/* stragglers.c: one ranked list of the ranks most likely holding the job
 * back ("stragglers"), with the evidence spelled out per rank.
 *
 * Three pieces of evidence, each scored from 0 (none) to 1 (at or past
 * the point where it alone flags the rank), summed into the score (0..3):
 * - late arrival (crossrank/collective_wait.c): how far the rank's share
 *   of last arrivals exceeds chance, (share - fair) / (1 - fair); flags
 *   with the binomial test there.
 * - relative compute speed, NVIDIA's straggler detector's "relative
 *   performance score": the fastest rank's compute time / this rank's
 *   (compute_time_us of /temporal_breakdown), flagging below 0.75; scored
 *   (1 - ratio) / 0.25.
 * - compute time against the other ranks: robust z (positive = slower);
 *   scored z / --robust-z, flagging when it reaches --robust-z past the
 *   --min-effect floor, as the outlier search does.
 * Every rank analysed without failure gets a row, most suspect first (ties
 * by rank); "flagged" says whether any evidence reached its flag. */

#include "crossrank/stragglers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crossrank/collective_wait.h"
#include "crossrank/spread.h"

#define RELATIVE_PERF_THRESHOLD 0.75

static const hta_column COLUMNS[] = {
    {"rank", HTA_COL_I64},
    {"score", HTA_COL_F64},
    {"flagged", HTA_COL_I64},
    {"arrived_last_share", HTA_COL_F64},
    {"fair_share", HTA_COL_F64},
    {"compute_time_us", HTA_COL_F64},
    {"compute_ratio", HTA_COL_F64},
    {"compute_z", HTA_COL_F64},
    {"compute_robust_z", HTA_COL_F64},
    {"reasons", HTA_COL_STR},
};

typedef struct suspect {
    int64_t rank;
    int64_t arrived_last, matched;
    double share, fair;        /* NaN without matched collectives */
    double compute_us, ratio, z, robust_z; /* NaN without GPU events */
    int material;              /* compute time past the --min-effect floor */
    int late, slow, heavy;     /* which evidence flags the rank */
    double score;
} suspect;

typedef struct evidence {
    const hta_table *waits, *breakdown;
    long arrived_last, matched, share, fair, compute;
} evidence;

static double clamp01(double x)
{
    return isfinite(x) ? fmin(1.0, fmax(0.0, x)) : 0.0;
}

/* The row of rank in a rank-sorted table that may be absent, or NULL. */
static const hta_cell *row_of(const hta_table *t, int64_t rank)
{
    long r = t ? hta_table_find_sorted(t, rank) : -1;
    return r >= 0 ? hta_table_row(t, (size_t)r) : NULL;
}

/* Fills the late-arrival figures from /collective_wait; returns how many
 * ranks took part in collectives (the straggler test's n). */
static size_t read_arrivals(const evidence *ev, suspect *s, size_t n)
{
    size_t taking_part = 0;
    for (size_t i = 0; i < n; i++) {
        const hta_cell *row = row_of(ev->waits, s[i].rank);
        s[i].matched = row ? row[ev->matched].i : 0;
        s[i].arrived_last = row ? row[ev->arrived_last].i : 0;
        s[i].share = row ? row[ev->share].f : NAN;
        s[i].fair = row ? row[ev->fair].f : NAN;
        taking_part += s[i].matched > 0;
    }
    return taking_part;
}

/* Fills compute time, its ratio to the fastest rank and its z-scores. */
static int read_compute(const evidence *ev, const hta_options *opt, suspect *s, size_t n)
{
    double *values = malloc((n ? n : 1) * sizeof *values);
    if (!values)
        return -1;
    size_t k = 0;
    double fastest = INFINITY;
    for (size_t i = 0; i < n; i++) {
        const hta_cell *row = row_of(ev->breakdown, s[i].rank);
        s[i].compute_us = row ? row[ev->compute].f : NAN;
        if (isfinite(s[i].compute_us))
            values[k++] = s[i].compute_us;
        if (s[i].compute_us > 0 && s[i].compute_us < fastest)
            fastest = s[i].compute_us;
    }
    hta_spread sp;
    int rc = hta_spread_of(values, k, &sp);
    free(values);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        double x = s[i].compute_us;
        s[i].ratio = x > 0 ? fastest / x : NAN;
        s[i].z = hta_spread_z(&sp, x);
        s[i].robust_z = hta_spread_robust_z(&sp, x);
        s[i].material = isfinite(x) && hta_spread_is_material(&sp, x, opt->min_effect);
        s[i].heavy = s[i].material && s[i].robust_z >= opt->robust_z;
        s[i].slow = s[i].ratio < RELATIVE_PERF_THRESHOLD;
    }
    return rc;
}

static void score(suspect *s, size_t n, size_t taking_part, const hta_options *opt)
{
    for (size_t i = 0; i < n; i++) {
        s[i].late = hta_is_late_arriver(s[i].arrived_last, s[i].matched, s[i].fair, taking_part);
        double late = (s[i].share - s[i].fair) / (1.0 - s[i].fair);
        double slow = (1.0 - s[i].ratio) / (1.0 - RELATIVE_PERF_THRESHOLD);
        double heavy = s[i].material ? s[i].robust_z / opt->robust_z : 0.0;
        s[i].score = clamp01(late) + clamp01(slow) + clamp01(heavy);
    }
}

static int compare_most_suspect(const void *a, const void *b)
{
    const suspect *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* One clause per piece of evidence, those that flag the rank first. */
static void clause_arrivals(const suspect *s, char *out, size_t size)
{
    if (s->matched == 0)
        snprintf(out, size, "took part in no matched collective");
    else
        snprintf(out, size, "%sarrived last at %lld of %lld collectives (%.0f%%, chance %.0f%%)",
                 s->late ? "arrives last far more often than chance: " : "",
                 (long long)s->arrived_last, (long long)s->matched, 100 * s->share,
                 100 * s->fair);
}

static void clause_ratio(const suspect *s, char *out, size_t size)
{
    if (!isfinite(s->ratio))
        snprintf(out, size, "no compute time");
    else
        snprintf(out, size, "%scompute time %.2fx the fastest rank's (fastest/this %.2f%s)",
                 s->slow ? "slow: " : "", 1.0 / s->ratio, s->ratio,
                 s->slow ? ", below 0.75" : "");
}

/* Empty when there is no score (a single rank, or all ranks equal). */
static void clause_z(const suspect *s, char *out, size_t size)
{
    if (!isfinite(s->z) && !isfinite(s->robust_z))
        out[0] = '\0';
    else
        snprintf(out, size, "%scompute time z %.2f, robust z %.2f",
                 s->heavy ? "more compute than the other ranks: " : "", s->z, s->robust_z);
}

static void write_reasons(const suspect *s, char *out, size_t size)
{
    char c[3][256];
    clause_arrivals(s, c[0], sizeof c[0]);
    clause_ratio(s, c[1], sizeof c[1]);
    clause_z(s, c[2], sizeof c[2]);
    int flags[3] = {s->late, s->slow, s->heavy};
    const char *sep = s->late || s->slow || s->heavy ? "" : "nothing stands out: ";
    size_t len = 0;
    out[0] = '\0';
    for (int pass = 1; pass >= 0; pass--)
        for (int k = 0; k < 3; k++) {
            if (flags[k] != pass || !c[k][0] || len >= size)
                continue;
            len += (size_t)snprintf(out + len, size - len, "%s%s", sep, c[k]);
            sep = "; ";
        }
}

static int put_suspects(hta_table *t, const suspect *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char reasons[1024];
        write_reasons(&s[i], reasons, sizeof reasons);
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, s[i].rank);
        hta_row_put_f64(&row, s[i].score);
        hta_row_put_i64(&row, s[i].late || s[i].slow || s[i].heavy);
        hta_row_put_f64(&row, s[i].share);
        hta_row_put_f64(&row, s[i].fair);
        hta_row_put_f64(&row, s[i].compute_us);
        hta_row_put_f64(&row, s[i].ratio);
        hta_row_put_f64(&row, s[i].z);
        hta_row_put_f64(&row, s[i].robust_z);
        hta_row_put_str(&row, reasons);
        if (hta_row_done(&row))
            return -1;
    }
    return 0;
}

/* The ranks analysed without failure, in rank order. */
static suspect *list_suspects(const hta_table *ranks, size_t *n)
{
    long status = hta_table_column(ranks, "status");
    suspect *s = calloc(ranks->n_rows ? ranks->n_rows : 1, sizeof *s);
    *n = 0;
    for (size_t r = 0; s && r < ranks->n_rows; r++) {
        const hta_cell *row = hta_table_row(ranks, r);
        if (strcmp(row[status].s, "failed") != 0)
            s[(*n)++].rank = row[0].i;
    }
    return s;
}

/* Column positions; a table that is absent (no rank had GPU events or
 * collectives) simply contributes no evidence. */
static evidence find_evidence(const hta_tableset *set)
{
    evidence ev = {hta_tableset_find(set, "collective_wait"),
                   hta_tableset_find(set, "temporal_breakdown"), -1, -1, -1, -1, -1};
    if (ev.waits) {
        ev.arrived_last = hta_table_column(ev.waits, "arrived_last");
        ev.matched = hta_table_column(ev.waits, "matched");
        ev.share = hta_table_column(ev.waits, "arrived_last_share");
        ev.fair = hta_table_column(ev.waits, "fair_share");
    }
    if (ev.breakdown)
        ev.compute = hta_table_column(ev.breakdown, "compute_time_us");
    return ev;
}

int hta_rank_stragglers(hta_tableset *set, const hta_options *opt, hta_error *err)
{
    hta_table *t = HTA_TABLE(set, "stragglers", COLUMNS);
    evidence ev = find_evidence(set);
    size_t n = 0;
    suspect *s = t ? list_suspects(hta_tableset_find(set, "ranks"), &n) : NULL;
    int rc = s ? 0 : -1;
    if (rc == 0) {
        size_t taking_part = read_arrivals(&ev, s, n);
        rc = read_compute(&ev, opt, s, n);
        score(s, n, taking_part, opt);
        qsort(s, n, sizeof *s, compare_most_suspect);
    }
    if (rc == 0)
        rc = put_suspects(t, s, n);
    free(s);
    return rc ? hta_fail(err, "out of memory ranking stragglers") : 0;
}
