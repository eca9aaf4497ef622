/* step_parts.c: a step's time split into parts that add up to it
 * (docs/definitions.md, Step-time jitter).
 *
 * From a rank's /steps row: compute (compute_us), exposed communication
 * (exposed_comm_us less the wait for peers, which the collective kernels
 * hold), wait for peers (wait_us), data loading (data_loading_us), idle
 * (idle_us less the launch-bound gaps), launch-bound gaps (launch_gap_us)
 * and other, the rest of the step time (CPU time outside the GPU span, GPU
 * work that is neither compute nor communication), so that the parts add
 * up to the step time by construction. */
#include "crossrank/compare/step_parts.h"

#include "analysis/steps.h"

#include <math.h>

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
