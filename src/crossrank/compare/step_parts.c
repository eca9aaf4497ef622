/* step_parts.c: a step's time split into parts that add up to it
 * (docs/definitions.md, Step-time jitter).
 *
 * From a rank's /steps row: compute (compute_us), exposed communication
 * (exposed_comm_us less the wait for peers, which the collective kernels
 * hold), wait for peers (wait_us), data loading (data_loading_us), idle
 * (idle_us less the launch-bound gaps), launch-bound gaps (launch_gap_us)
 * and other, the rest of the step time (CPU time outside the GPU span, GPU
 * work that is neither compute nor communication), so that the parts add
 * up to the step time by construction.
 *
 * A rank's own work is late against the others' where its compute,
 * launch gaps or data loading stand out above their median over the
 * step's ranks: the delay costs keep the share of a rank's cost that
 * excess explains, and /stragglers names a flagged rank's cause from it
 * when no cause stands out over the whole run (crossrank/job_path/
 * delay_costs.c, crossrank/compare/stragglers.c).  Standing out is
 * /stragglers' test of a cause (crossrank/compare/spread.c): an excess of
 * at least --robust-z robust standard deviations (MAD / 0.6745, noise
 * floor included) and at least --min-effect of the median, so kernels
 * that jitter within the ranks' spread make nobody late by their work.
 * One difference: where the MAD is 0 (most ranks identical) the scale is
 * the noise floor alone, not the mean absolute deviation, which among
 * four ranks of which three agree keeps the fourth's robust z under 3.5
 * however far it lies. */
#include "crossrank/compare/step_parts.h"

#include "analysis/steps.h"
#include "crossrank/compare/spread.h"
#include "numerics/bounds.h"
#include "util/ranked.h"

#include <math.h>
#include <stdlib.h>

const char *const hta_step_part_names[HTA_N_PARTS] = {
    "compute", "exposed_comm", "wait", "data_loading", "idle", "launch_gaps", "other"};

void hta_step_parts_of(const hta_cell *row, double *p)
{
    double wait = row[HTA_STEPS_WAIT_US].f, launch = row[HTA_STEPS_LAUNCH_GAP_US].f;
    p[HTA_PART_COMPUTE] = row[HTA_STEPS_COMPUTE_US].f;
    p[HTA_PART_EXPOSED_COMM] = fmax(0.0, row[HTA_STEPS_EXPOSED_COMM_US].f - wait);
    p[HTA_PART_WAIT] = wait;
    p[HTA_PART_DATA_LOADING] = row[HTA_STEPS_DATA_LOADING_US].f;
    p[HTA_PART_IDLE] = row[HTA_STEPS_IDLE_US].f - launch;
    p[HTA_PART_LAUNCH_GAPS] = launch;
    double named = 0;
    for (int c = 0; c < HTA_PART_OTHER; c++)
        named += p[c];
    p[HTA_PART_OTHER] = row[HTA_STEPS_STEP_TIME_US].f - named;
}

static int compare_step_row(const void *a, const void *b)
{
    const hta_step_row *x = a, *y = b;
    int c = hta_cmp_i64(x->step, y->step);
    return c ? c : hta_cmp_i64(x->rank, y->rank);
}

const hta_step_row *hta_step_rows_of(const hta_step_row *s, size_t n, int64_t step,
                                     size_t *count)
{
    size_t lo = HTA_LOWER_BOUND(s, n, step, step), end = lo;
    while (end < n && s[end].step == step)
        end++;
    *count = end - lo;
    return &s[lo];
}

/* Sets the medians and least standing-out excesses of one step's rows
 * s[0..n); values holds n.  -1 when out of memory. */
static int set_step_spreads(hta_step_row *s, size_t n, double robust_z, double min_effect,
                            double *values)
{
    for (int c = 0; c < HTA_N_PARTS; c++) {
        hta_spread sp;
        for (size_t i = 0; i < n; i++)
            values[i] = s[i].part[c];
        if (hta_spread_of(values, n, &sp))
            return -1;
        hta_spread_set_noise_floor(&sp, min_effect);
        double least = fmax(robust_z * fmax(sp.mad / 0.6745, sp.noise_floor),
                            min_effect * fabs(sp.median));
        for (size_t i = 0; i < n; i++) {
            s[i].median[c] = sp.median;
            s[i].least[c] = least;
        }
    }
    return 0;
}

hta_step_row *hta_step_rows(const hta_table *steps, double robust_z, double min_effect)
{
    size_t n = steps->n_rows;
    hta_step_row *s = malloc((n ? n : 1) * sizeof *s);
    double *values = malloc((n ? n : 1) * sizeof *values);
    for (size_t i = 0; s && values && i < n; i++) {
        const hta_cell *row = hta_table_row(steps, i);
        s[i] = (hta_step_row){.step = row[HTA_STEPS_STEP].i, .rank = row[HTA_STEPS_RANK].i};
        hta_step_parts_of(row, s[i].part);
    }
    int rc = s && values ? 0 : -1;
    if (rc == 0)
        qsort(s, n, sizeof *s, compare_step_row);
    for (size_t i = 0, count; rc == 0 && i < n; i += count) {
        hta_step_row *step = (hta_step_row *)hta_step_rows_of(s, n, s[i].step, &count);
        rc = set_step_spreads(step, count, robust_z, min_effect, values);
    }
    free(values);
    if (rc) {
        free(s);
        return NULL;
    }
    return s;
}

int hta_step_part_stands_out(const hta_step_row *r, int c, double *excess)
{
    *excess = r->part[c] - r->median[c];
    return *excess > 0 && *excess >= r->least[c];
}

int hta_step_part_is_own_work(int part)
{
    return part == HTA_PART_COMPUTE || part == HTA_PART_LAUNCH_GAPS ||
           part == HTA_PART_DATA_LOADING;
}
