/* step_jitter.c: what drives each rank's step-time jitter ("step_jitter",
 * "step_jitter_slowest", docs/definitions.md, Step-time jitter).
 *
 * A rank's step time T splits, step by step, into parts c that add up to
 * it (crossrank/compare/step_parts.c), so over the rank's steps
 * var(T) = sum_c cov(T, c) exactly, and cov(T, c) / var(T) is c's share
 * of the jitter: a part that is constant takes none, one that alone
 * varies takes all, and one that varies against T takes a negative share.
 * The slowest steps (STEP_JITTER_SLOWEST per rank) name their dominant
 * component: the one furthest above its mean over the rank's steps, the
 * one that made the step slow. */
#include "crossrank/compare/step_jitter.h"

#include "analysis/steps.h"
#include "crossrank/compare/step_parts.h"

#include <math.h>
#include <stdlib.h>

enum { STEP_JITTER_SLOWEST = 3 };

static const hta_column COLUMNS[HTA_STEP_JITTER_N_COLUMNS] = {
    [HTA_STEP_JITTER_RANK] = {"rank", HTA_COL_I64},
    [HTA_STEP_JITTER_COMPONENT] = {"component", HTA_COL_STR},
    [HTA_STEP_JITTER_N_STEPS] = {"n_steps", HTA_COL_I64},
    [HTA_STEP_JITTER_MEAN_US] = {"mean_us", HTA_COL_F64},
    [HTA_STEP_JITTER_STD_US] = {"std_us", HTA_COL_F64},
    [HTA_STEP_JITTER_COVARIANCE_US2] = {"covariance_us2", HTA_COL_F64},
    [HTA_STEP_JITTER_SHARE] = {"share", HTA_COL_F64},
};
const hta_table_spec hta_step_jitter_table = {"step_jitter", COLUMNS, HTA_STEP_JITTER_N_COLUMNS,
                                              HTA_TABLE_GATHERED};

static const hta_column SLOWEST_COLUMNS[HTA_STEP_JITTER_SLOWEST_N_COLUMNS] = {
    [HTA_STEP_JITTER_SLOWEST_RANK] = {"rank", HTA_COL_I64},
    [HTA_STEP_JITTER_SLOWEST_STEP] = {"step", HTA_COL_I64},
    [HTA_STEP_JITTER_SLOWEST_STEP_TIME_US] = {"step_time_us", HTA_COL_F64},
    [HTA_STEP_JITTER_SLOWEST_EXCESS_US] = {"excess_us", HTA_COL_F64},
    [HTA_STEP_JITTER_SLOWEST_DOMINANT_COMPONENT] = {"dominant_component", HTA_COL_STR},
    [HTA_STEP_JITTER_SLOWEST_DOMINANT_EXCESS_US] = {"dominant_excess_us", HTA_COL_F64},
};
const hta_table_spec hta_step_jitter_slowest_table = {
    "step_jitter_slowest", SLOWEST_COLUMNS, HTA_STEP_JITTER_SLOWEST_N_COLUMNS,
    HTA_TABLE_GATHERED};

typedef struct step_parts {
    int64_t rank, step;
    double time, c[HTA_N_PARTS];
} step_parts;

static step_parts parts_of(const hta_cell *row)
{
    step_parts p = {row[HTA_STEPS_RANK].i, row[HTA_STEPS_STEP].i, row[HTA_STEPS_STEP_TIME_US].f,
                    {0}};
    hta_step_parts_of(row, p.c);
    return p;
}

static int compare_rank_then_step(const void *a, const void *b)
{
    const step_parts *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->step > y->step) - (x->step < y->step);
}

/* Slowest first, the earlier step on ties. */
static int compare_slowest(const void *a, const void *b)
{
    const step_parts *x = a, *y = b;
    if (x->time != y->time)
        return x->time > y->time ? -1 : 1;
    return (x->step > y->step) - (x->step < y->step);
}

typedef struct moments {
    double mean_time, var_time, mean[HTA_N_PARTS], var[HTA_N_PARTS], cov[HTA_N_PARTS];
} moments;

/* Sample moments over one rank's n >= 2 steps (two passes). */
static moments moments_of(const step_parts *p, size_t n)
{
    moments m = {0};
    for (size_t i = 0; i < n; i++) {
        m.mean_time += p[i].time / (double)n;
        for (int c = 0; c < HTA_N_PARTS; c++)
            m.mean[c] += p[i].c[c] / (double)n;
    }
    for (size_t i = 0; i < n; i++) {
        double dt = p[i].time - m.mean_time;
        m.var_time += dt * dt / (double)(n - 1);
        for (int c = 0; c < HTA_N_PARTS; c++) {
            double dc = p[i].c[c] - m.mean[c];
            m.var[c] += dc * dc / (double)(n - 1);
            m.cov[c] += dt * dc / (double)(n - 1);
        }
    }
    return m;
}

static int put_components(hta_table *t, const step_parts *p, size_t n, const moments *m)
{
    for (int c = 0; c < HTA_N_PARTS; c++) {
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, p[0].rank);
        hta_row_put_str(&row, hta_step_part_names[c]);
        hta_row_put_i64(&row, (int64_t)n);
        hta_row_put_f64(&row, m->mean[c]);
        hta_row_put_f64(&row, sqrt(m->var[c]));
        hta_row_put_f64(&row, m->cov[c]);
        hta_row_put_f64(&row, m->var_time > 0 ? m->cov[c] / m->var_time : NAN);
        if (hta_row_done(&row))
            return -1;
    }
    return 0;
}

/* The slowest steps of one rank; sorts p. */
static int put_slowest(hta_table *t, step_parts *p, size_t n, const moments *m)
{
    qsort(p, n, sizeof *p, compare_slowest);
    for (size_t i = 0; i < n && i < STEP_JITTER_SLOWEST; i++) {
        int dominant = 0;
        for (int c = 1; c < HTA_N_PARTS; c++)
            if (p[i].c[c] - m->mean[c] > p[i].c[dominant] - m->mean[dominant])
                dominant = c;
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, p[i].rank);
        hta_row_put_i64(&row, p[i].step);
        hta_row_put_f64(&row, p[i].time);
        hta_row_put_f64(&row, p[i].time - m->mean_time);
        hta_row_put_str(&row, hta_step_part_names[dominant]);
        hta_row_put_f64(&row, p[i].c[dominant] - m->mean[dominant]);
        if (hta_row_done(&row))
            return -1;
    }
    return 0;
}

int hta_step_jitter(hta_tableset *set, hta_error *err)
{
    const hta_table *steps = hta_tableset_find(set, hta_steps_table.name);
    if (!steps || steps->n_rows == 0)
        return 0;
    size_t n = steps->n_rows;
    step_parts *p = malloc(n * sizeof *p);
    hta_table *jitter = hta_tableset_table(set, &hta_step_jitter_table);
    hta_table *slowest = hta_tableset_table(set, &hta_step_jitter_slowest_table);
    int rc = p && jitter && slowest ? 0 : -1;
    for (size_t r = 0; rc == 0 && r < n; r++)
        p[r] = parts_of(hta_table_row(steps, r));
    if (rc == 0)
        qsort(p, n, sizeof *p, compare_rank_then_step);
    for (size_t i = 0, end; rc == 0 && i < n; i = end) {
        for (end = i + 1; end < n && p[end].rank == p[i].rank;)
            end++;
        if (end - i < 2)
            continue;
        moments m = moments_of(&p[i], end - i);
        rc = put_components(jitter, &p[i], end - i, &m) || put_slowest(slowest, &p[i], end - i, &m)
                 ? -1
                 : 0;
    }
    free(p);
    return rc ? hta_fail(err, "out of memory decomposing the step-time jitter") : 0;
}
