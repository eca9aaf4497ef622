/* stragglers.c: one ranked list of the ranks holding the job back
 * ("stragglers"), with the evidence and the likely cause spelled out.
 *
 * The straggler is the rank the others wait for.  So the verdict follows
 * the wait each rank causes (crossrank/compare/collective_wait.c,
 * collective_groups.c): at every collective instance the rank(s) that
 * arrived last caused the others' wait there, and a rank's caused wait is
 * the sum over its instances.  Ranks are listed by caused wait, largest
 * first (ties by rank); "score" is the rank's share of all the wait caused
 * in the job (0..1).  A rank that waits more than the others, or computes
 * more but still arrives early, causes no wait and ranks low.
 *
 * A rank is flagged when it caused some wait and either arrives last far
 * more often than chance (the binomial test of collective_wait.c:
 * Bonferroni over the ranks, so a job without a straggler flags anybody
 * with probability under 0.1%; its paired sends and receives count as
 * instances of two, so a pipeline stage without collectives is judged
 * too) or caused more than half of all the wait at collectives and at
 * least twice as much as any other rank (a rank late at one collective
 * per step, after a slow data loading, arrives last too seldom for the
 * first test but holds everyone up).  With few collectives
 * (one profiler step of a real job may hold fewer than ten) neither can
 * be trusted: when even arriving last every time would not pass the
 * binomial test, nothing is flagged and the reasons say "too few
 * collectives to tell from chance".
 *
 * Why it arrived late: for each candidate cause, the rank's value against
 * the median of all ranks, with the robust z of crossrank/compare/spread.c (noise
 * floor included) past --robust-z and past the --min-effect floor:
 *   data loading   data_loading_us (analysis/data_loading.c)
 *   CPU launches   idle_host_wait_us: the GPU idle waiting for the CPU
 *   compute        compute_time_us: slower kernels
 * The "cause" is data loading when it stands out (slow data loading leaves
 * the GPU waiting for the CPU, so it explains a host wait rather than the
 * other way round), else whichever of the other two stands out by more
 * microseconds (slower kernels also lengthen the idle gaps of the
 * streams that wait for them).  Compute time alone cannot tell a slower
 * GPU from more work; the rank's GEMM rate (gemm_tflops,
 * analysis/op_perf.c) can: when it stands out below the median (robust z
 * past -(--robust-z), past --min-effect) the reasons say "slower GPU",
 * and so does the cause when that is compute (the causes' names and words
 * are crossrank/compare/causes.c's, shared with the delay costs).  The relative
 * compute speed of NVIDIA's straggler detector (fastest rank's compute
 * time / this rank's) and compute time z-scores are kept as columns. */
#include "crossrank/compare/stragglers.h"

#include "analysis/metrics.h"
#include "analysis/ranks_table.h"
#include "analysis/steps.h"
#include "crossrank/compare/causes.h"
#include "crossrank/compare/collective_wait.h"
#include "crossrank/compare/spread.h"
#include "crossrank/compare/step_parts.h"
#include "crossrank/exchange/p2p_pairs.h"
#include "numerics/bounds.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const hta_column COLUMNS[HTA_STRAGGLERS_N_COLUMNS] = {
    [HTA_STRAGGLERS_RANK] = {"rank", HTA_COL_I64},
    [HTA_STRAGGLERS_SCORE] = {"score", HTA_COL_F64},
    [HTA_STRAGGLERS_FLAGGED] = {"flagged", HTA_COL_I64},
    [HTA_STRAGGLERS_ARRIVED_LAST_SHARE] = {"arrived_last_share", HTA_COL_F64},
    [HTA_STRAGGLERS_FAIR_SHARE] = {"fair_share", HTA_COL_F64},
    [HTA_STRAGGLERS_COMPUTE_TIME_US] = {"compute_time_us", HTA_COL_F64},
    [HTA_STRAGGLERS_COMPUTE_RATIO] = {"compute_ratio", HTA_COL_F64},
    [HTA_STRAGGLERS_COMPUTE_Z] = {"compute_z", HTA_COL_F64},
    [HTA_STRAGGLERS_COMPUTE_ROBUST_Z] = {"compute_robust_z", HTA_COL_F64},
    [HTA_STRAGGLERS_REASONS] = {"reasons", HTA_COL_STR},
    [HTA_STRAGGLERS_CAUSED_WAIT_US] = {"caused_wait_us", HTA_COL_F64},
    [HTA_STRAGGLERS_CAUSE] = {"cause", HTA_COL_STR},
};
const hta_table_spec hta_stragglers_table = {
    "stragglers", COLUMNS, HTA_STRAGGLERS_N_COLUMNS, HTA_TABLE_GATHERED};

/* Candidate causes, in the order the verdict tries them: the metric
 * that measures each, and its name in the list of causes. */
enum { CAUSE_DATA, CAUSE_LAUNCH, CAUSE_COMPUTE, N_CAUSES };

static const hta_metric_id CAUSE_METRIC[N_CAUSES] = {
    HTA_METRIC_DATA_LOADING_US, HTA_METRIC_IDLE_HOST_WAIT_US, HTA_METRIC_COMPUTE_TIME_US};
static const hta_cause CAUSE[N_CAUSES] = {HTA_CAUSE_DATA_LOADING, HTA_CAUSE_CPU_LAUNCH,
                                          HTA_CAUSE_COMPUTE};
/* The part of a step (crossrank/compare/step_parts.h) each cause is. */
static const int CAUSE_PART[N_CAUSES] = {HTA_PART_DATA_LOADING, HTA_PART_LAUNCH_GAPS,
                                         HTA_PART_COMPUTE};

typedef struct suspect {
    int64_t rank;
    int64_t arrived_last, matched; /* collectives and point-to-point pairs */
    int64_t pairs;                 /* the pairs among them */
    double share, fair;            /* NaN without either */
    double caused_us, score;
    double coll_caused_us, coll_fair; /* at collectives alone */
    double compute_us, ratio, z, robust_z; /* NaN without GPU events */
    double value[N_CAUSES], median[N_CAUSES], excess_z[N_CAUSES];
    int stands_out[N_CAUSES];
    double gemm_tflops, gemm_median, gemm_z; /* NaN without sized GEMMs */
    int slow_gpu;              /* its GEMM rate stands out below the median */
    double own[N_CAUSES], own_median[N_CAUSES]; /* over its steps: above the
                                  steps' medians, and those medians */
    int late, flagged, testable;
    int cause;                 /* N_CAUSES when none stands out */
    int cause_by_steps;        /* named from own[], none standing out */
} suspect;

/* The row of rank in a rank-sorted table that may be absent, or NULL. */
static const hta_cell *row_of(const hta_table *t, int64_t rank)
{
    long r = t ? hta_table_find_sorted(t, rank) : -1;
    return r >= 0 ? hta_table_row(t, (size_t)r) : NULL;
}

/* Fills the arrival figures from /collective_wait; returns how many ranks
 * took part in collectives (the straggler test's n). */
static size_t read_arrivals(const hta_table *waits, suspect *s, size_t n)
{
    size_t taking_part = 0;
    for (size_t i = 0; i < n; i++) {
        const hta_cell *row = row_of(waits, s[i].rank);
        s[i].matched = row ? row[HTA_COLLECTIVE_WAIT_MATCHED].i : 0;
        s[i].arrived_last = row ? row[HTA_COLLECTIVE_WAIT_ARRIVED_LAST].i : 0;
        s[i].share = row ? row[HTA_COLLECTIVE_WAIT_ARRIVED_LAST_SHARE].f : NAN;
        s[i].fair = row ? row[HTA_COLLECTIVE_WAIT_FAIR_SHARE].f : NAN;
        s[i].caused_us = row ? row[HTA_COLLECTIVE_WAIT_CAUSED_WAIT_US].f : 0;
        s[i].coll_caused_us = s[i].caused_us;
        s[i].coll_fair = s[i].fair;
        taking_part += s[i].matched > 0;
    }
    return taking_part;
}

/* The suspect of a rank (s is in rank order), or NULL. */
static suspect *find_suspect(suspect *s, size_t n, int64_t rank)
{
    size_t lo = HTA_LOWER_BOUND(s, n, rank, rank);
    return lo < n && s[lo].rank == rank ? &s[lo] : NULL;
}

/* Adds each rank's paired sends and receives from "_p2p_ranks" to its
 * arrivals: a pair is an instance of two, and the rank whose half came
 * last (a late sender, or a late receiver) made the other wait, so
 * chance gives each side half.  A pipeline stage that holds up its
 * neighbours comes last at most of its pairs without a collective to
 * show it.  Returns how many more ranks now take part. */
static size_t add_p2p_arrivals(const hta_table *p2p, suspect *s, size_t n)
{
    size_t newly = 0;
    for (size_t r = 0; p2p && r < p2p->n_rows; r++) {
        const hta_cell *row = hta_table_row(p2p, r);
        suspect *x = find_suspect(s, n, row[HTA_P2P_RANKS_RANK].i);
        int64_t pairs = row[HTA_P2P_RANKS_OPS].i - row[HTA_P2P_RANKS_UNPAIRED].i;
        if (!x || pairs <= 0)
            continue;
        double fair_collectives = isfinite(x->fair) ? x->fair * (double)x->matched : 0;
        newly += x->matched == 0;
        x->pairs = pairs;
        x->matched += pairs;
        x->arrived_last += row[HTA_P2P_RANKS_ARRIVED_LAST].i;
        x->fair = (fair_collectives + 0.5 * (double)pairs) / (double)x->matched;
        x->share = (double)x->arrived_last / (double)x->matched;
    }
    return newly;
}

/* Fills value[k] and gemm_tflops of every rank from /rank_metrics (NaN
 * when absent). */
static void read_metrics(const hta_table *metrics, suspect *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < N_CAUSES; k++)
            s[i].value[k] = NAN;
        s[i].gemm_tflops = s[i].gemm_median = s[i].gemm_z = NAN;
    }
    for (size_t r = 0; metrics && r < metrics->n_rows; r++) {
        const hta_cell *row = hta_table_row(metrics, r);
        suspect *g = hta_metric_is(row[HTA_RANK_METRICS_METRIC].s, HTA_METRIC_GEMM_TFLOPS)
                         ? find_suspect(s, n, row[HTA_RANK_METRICS_RANK].i)
                         : NULL;
        if (g)
            g->gemm_tflops = row[HTA_RANK_METRICS_VALUE].f;
        for (int k = 0; k < N_CAUSES; k++) {
            suspect *x = hta_metric_is(row[HTA_RANK_METRICS_METRIC].s, CAUSE_METRIC[k])
                             ? find_suspect(s, n, row[HTA_RANK_METRICS_RANK].i)
                             : NULL;
            if (x)
                x->value[k] = row[HTA_RANK_METRICS_VALUE].f;
        }
    }
}

/* Adds the late-sender wait each rank's sends caused its receivers
 * (crossrank/compare/p2p_results.c) to the wait it caused at collectives: a
 * pipeline stage that holds up the next one is a straggler too. */
static void add_p2p_caused(const hta_table *metrics, suspect *s, size_t n)
{
    for (size_t r = 0; metrics && r < metrics->n_rows; r++) {
        const hta_cell *row = hta_table_row(metrics, r);
        suspect *x = hta_metric_is(row[HTA_RANK_METRICS_METRIC].s, HTA_METRIC_P2P_CAUSED_WAIT_US)
                         ? find_suspect(s, n, row[HTA_RANK_METRICS_RANK].i)
                         : NULL;
        if (x && isfinite(row[HTA_RANK_METRICS_VALUE].f))
            x->caused_us += row[HTA_RANK_METRICS_VALUE].f;
    }
}

/* Sums over each rank's steps (/steps) how far each cause's part stands
 * out above its median over the step's ranks (the delay costs' own
 * excess, crossrank/compare/step_parts.c), and those medians; -1 when out
 * of memory. */
static int read_own_excess(const hta_table *steps, suspect *s, size_t n,
                           const hta_crossrank_settings *opt)
{
    size_t rows = steps ? steps->n_rows : 0;
    hta_step_row *r = steps ? hta_step_rows(steps, opt->robust_z, opt->min_effect) : NULL;
    for (size_t i = 0; r && i < rows; i++) {
        suspect *x = find_suspect(s, n, r[i].rank);
        for (int k = 0; x && k < N_CAUSES; k++) {
            double excess;
            int stands_out = hta_step_part_stands_out(&r[i], CAUSE_PART[k], &excess);
            x->own[k] += stands_out ? excess : 0.0;
            x->own_median[k] += r[i].median[CAUSE_PART[k]];
        }
    }
    free(r);
    return steps && !r ? -1 : 0;
}

/* A rank flagged through its point-to-point pairs none of whose causes
 * stands out over the run (a pipeline stage of four has too few peers
 * for a robust z past the threshold) is named by its own work standing
 * out above its steps' medians, as its delay costs are: the cause
 * furthest above, when past --min-effect.  A rank flagged at collectives
 * alone keeps the run's verdict: among many peers a cause that does not
 * stand out is not one. */
static void cause_by_steps(suspect *x, const hta_crossrank_settings *opt)
{
    double most = 0;
    for (int k = 0; k < N_CAUSES; k++)
        if (x->own[k] > most && x->own[k] >= opt->min_effect * x->own_median[k]) {
            most = x->own[k];
            x->cause = k;
            x->cause_by_steps = 1;
        }
}

/* Scores one cause's metric over the ranks that have it. */
static int score_cause(suspect *s, size_t n, int k, const hta_crossrank_settings *opt,
                       double *scratch)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(s[i].value[k]))
            scratch[m++] = s[i].value[k];
    hta_spread sp;
    if (m < 2) {
        for (size_t i = 0; i < n; i++)
            s[i].excess_z[k] = s[i].median[k] = NAN;
        return 0;
    }
    if (hta_spread_of(scratch, m, &sp))
        return -1;
    hta_spread_set_noise_floor(&sp, opt->min_effect);
    for (size_t i = 0; i < n; i++) {
        double x = s[i].value[k];
        s[i].median[k] = sp.median;
        s[i].excess_z[k] = isfinite(x) ? hta_spread_robust_z(&sp, x) : NAN;
        s[i].stands_out[k] = isfinite(x) && x > sp.median && s[i].excess_z[k] >= opt->robust_z &&
                             hta_spread_is_material(&sp, x, opt->min_effect);
        if (k == CAUSE_COMPUTE) {
            s[i].z = hta_spread_z(&sp, x);
            s[i].robust_z = s[i].excess_z[k];
        }
    }
    return 0;
}

/* Marks the ranks whose GEMMs run slower than the median rank's. */
static int score_gpu_speed(suspect *s, size_t n, const hta_crossrank_settings *opt,
                           double *scratch)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(s[i].gemm_tflops))
            scratch[m++] = s[i].gemm_tflops;
    hta_spread sp;
    if (m < 2)
        return 0;
    if (hta_spread_of(scratch, m, &sp))
        return -1;
    hta_spread_set_noise_floor(&sp, opt->min_effect);
    for (size_t i = 0; i < n; i++) {
        double x = s[i].gemm_tflops;
        if (!isfinite(x))
            continue;
        s[i].gemm_median = sp.median;
        s[i].gemm_z = hta_spread_robust_z(&sp, x);
        s[i].slow_gpu = x < sp.median && s[i].gemm_z <= -opt->robust_z &&
                        hta_spread_is_material(&sp, x, opt->min_effect);
    }
    return 0;
}

static void compute_ratios(suspect *s, size_t n)
{
    double fastest = INFINITY;
    for (size_t i = 0; i < n; i++) {
        s[i].compute_us = s[i].value[CAUSE_COMPUTE];
        if (s[i].compute_us > 0 && s[i].compute_us < fastest)
            fastest = s[i].compute_us;
    }
    for (size_t i = 0; i < n; i++) {
        s[i].ratio = s[i].compute_us > 0 ? fastest / s[i].compute_us : NAN;
        s[i].z = s[i].robust_z = NAN;
    }
}

/* Whether `matched` instances at a chance of `fair` each could pass
 * the test at all (arriving last at every one). */
static int testable(int64_t matched, double fair, size_t taking_part)
{
    return matched > 0 && hta_is_late_arriver(matched, matched, fair, taking_part);
}

/* The largest wait caused at collectives by a rank other than i. */
static double largest_other(const suspect *s, size_t n, size_t i)
{
    double most = 0;
    for (size_t j = 0; j < n; j++)
        if (j != i && s[j].coll_caused_us > most)
            most = s[j].coll_caused_us;
    return most;
}

/* The dominance rule weighs the wait caused at collectives alone: in a
 * pipeline the stages' sends wait for each other by the schedule, and
 * the last stage of two causes most of that wait with nobody slow. */
static void judge(suspect *s, size_t n, size_t taking_part, const hta_crossrank_settings *opt)
{
    double total = 0, total_coll = 0;
    size_t top = 0;
    for (size_t i = 0; i < n; i++) {
        total += s[i].caused_us;
        total_coll += s[i].coll_caused_us;
        top = s[i].coll_caused_us > s[top].coll_caused_us ? i : top;
    }
    double runner_up = n ? largest_other(s, n, top) : 0;
    for (size_t i = 0; i < n; i++) {
        s[i].late = hta_is_late_arriver(s[i].arrived_last, s[i].matched, s[i].fair, taking_part);
        s[i].testable = testable(s[i].matched, s[i].fair, taking_part);
        int dominant = i == top &&
                       testable(s[i].matched - s[i].pairs, s[i].coll_fair, taking_part) &&
                       s[i].coll_caused_us > 0.5 * total_coll &&
                       s[i].coll_caused_us >= 2 * runner_up;
        s[i].flagged = (s[i].late || dominant) && s[i].caused_us > 0;
        s[i].score = total > 0 ? s[i].caused_us / total : 0;
        s[i].cause = N_CAUSES;
        double most = 0;
        for (int k = 0; k < N_CAUSES && s[i].cause != CAUSE_DATA; k++) {
            double excess = s[i].value[k] - s[i].median[k];
            if (s[i].stands_out[k] && excess > most) {
                most = excess;
                s[i].cause = k;
            }
        }
        if (s[i].flagged && s[i].pairs > 0 && s[i].cause == N_CAUSES)
            cause_by_steps(&s[i], opt);
    }
}

static int compare_most_suspect(const void *a, const void *b)
{
    const suspect *x = a, *y = b;
    if (x->caused_us != y->caused_us)
        return x->caused_us > y->caused_us ? -1 : 1;
    double sx = isfinite(x->share) ? x->share : -1, sy = isfinite(y->share) ? y->share : -1;
    if (sx != sy)
        return sx > sy ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static size_t clause_arrivals(const suspect *s, char *out, size_t size)
{
    if (s->matched == 0)
        return (size_t)snprintf(out, size, "took part in no matched collective or pair");
    if (!(s->fair > 0)) /* every instance had this rank alone */
        return (size_t)snprintf(out, size, "shared none of its %lld collectives with another rank",
                                (long long)s->matched);
    int any_cause = s->cause < N_CAUSES;
    const char *verdict = s->flagged     ? "the others wait for it: "
                          : !s->testable ? "too few collectives to tell from chance: "
                          : any_cause    ? "late arrivals not beyond chance: "
                                         : "nothing stands out: ";
    const char *what = s->pairs == 0              ? "collectives ("
                       : s->pairs == s->matched ? "point-to-point pairs ("
                                                : "collectives and point-to-point pairs (";
    return (size_t)snprintf(out, size,
                            "%sothers waited %.1f us for it (%.0f%% of all waiting); "
                            "arrived last at %lld of %lld %s%.0f%%, chance %.0f%%)",
                            verdict, s->caused_us, 100 * s->score, (long long)s->arrived_last,
                            (long long)s->matched, what, 100 * s->share, 100 * s->fair);
}

/* The arrivals, then what stands out: the cause first. */
static void write_reasons(const suspect *s, char *out, size_t size)
{
    size_t len = clause_arrivals(s, out, size);
    for (int j = -1; j < N_CAUSES && len < size; j++) {
        int k = j < 0 ? s->cause : j;
        if (j < 0 && s->cause_by_steps) {
            len += (size_t)snprintf(out + len, size - len,
                                    "; %s: %.1f us above its steps' medians (of %.1f us), "
                                    "not standing out over the run (robust z %.1f)",
                                    hta_cause_text(CAUSE[k]), s->own[k], s->own_median[k],
                                    s->excess_z[k]);
            continue;
        }
        if (k == N_CAUSES || !s->stands_out[k] || (j >= 0 && k == s->cause))
            continue;
        len +=
            (size_t)snprintf(out + len, size - len,
                             "; %s: %.1f us against a median of %.1f "
                             "(robust z %.1f)",
                             hta_cause_text(CAUSE[k]), s->value[k], s->median[k], s->excess_z[k]);
    }
    if (s->slow_gpu && len < size)
        snprintf(out + len, size - len, "; slower GPU: its GEMMs run at %.1f TFLOPS against a "
                 "median of %.1f (robust z %.1f)", s->gemm_tflops, s->gemm_median, s->gemm_z);
}

/* The rank's cause in the list of causes. */
static hta_cause cause_of(const suspect *s)
{
    return s->cause < N_CAUSES ? hta_cause_refined(CAUSE[s->cause], s->slow_gpu) : HTA_CAUSE_NONE;
}

static int put_suspects(hta_table *t, const suspect *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char reasons[1024];
        write_reasons(&s[i], reasons, sizeof reasons);
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, s[i].rank);
        hta_row_put_f64(&row, s[i].score);
        hta_row_put_i64(&row, s[i].flagged);
        hta_row_put_f64(&row, s[i].share);
        hta_row_put_f64(&row, s[i].fair);
        hta_row_put_f64(&row, s[i].compute_us);
        hta_row_put_f64(&row, s[i].ratio);
        hta_row_put_f64(&row, s[i].z);
        hta_row_put_f64(&row, s[i].robust_z);
        hta_row_put_str(&row, reasons);
        hta_row_put_f64(&row, s[i].caused_us);
        hta_row_put_str(&row, hta_cause_name(cause_of(&s[i])));
        if (hta_row_done(&row))
            return -1;
    }
    return 0;
}

/* The ranks analysed without failure, in rank order. */
static suspect *list_suspects(const hta_table *ranks, size_t *n)
{
    suspect *s = calloc(ranks->n_rows ? ranks->n_rows : 1, sizeof *s);
    *n = 0;
    for (size_t r = 0; s && r < ranks->n_rows; r++) {
        const hta_cell *row = hta_table_row(ranks, r);
        if (strcmp(row[HTA_RANKS_STATUS].s, "failed") != 0)
            s[(*n)++].rank = row[0].i;
    }
    return s;
}

int hta_rank_stragglers(hta_tableset *set, const hta_crossrank_settings *opt, hta_error *err)
{
    hta_table *t = hta_tableset_table(set, &hta_stragglers_table);
    size_t n = 0;
    suspect *s = t ? list_suspects(hta_tableset_find(set, hta_ranks_table.name), &n) : NULL;
    double *scratch = malloc((n ? n : 1) * sizeof *scratch);
    int rc = s && scratch ? 0 : -1;
    if (rc == 0) {
        const hta_table *waits = hta_tableset_find(set, hta_collective_wait_table.name);
        const hta_table *metrics = hta_tableset_find(set, hta_rank_metrics_table.name);
        size_t taking_part = read_arrivals(waits, s, n);
        taking_part += add_p2p_arrivals(hta_tableset_find(set, hta_p2p_ranks_table.name), s, n);
        read_metrics(metrics, s, n);
        add_p2p_caused(metrics, s, n);
        compute_ratios(s, n);
        for (int k = 0; rc == 0 && k < N_CAUSES; k++)
            rc = score_cause(s, n, k, opt, scratch);
        rc = rc ? rc : score_gpu_speed(s, n, opt, scratch);
        rc = rc ? rc : read_own_excess(hta_tableset_find(set, hta_steps_table.name), s, n, opt);
        judge(s, n, taking_part, opt);
        qsort(s, n, sizeof *s, compare_most_suspect);
    }
    if (rc == 0)
        rc = put_suspects(t, s, n);
    free(scratch);
    free(s);
    return rc ? hta_fail(err, "out of memory ranking stragglers") : 0;
}
