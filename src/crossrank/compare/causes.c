/* causes.c: the causes of lateness (docs/definitions.md, Causes of
 * lateness).
 *
 * /stragglers judges a rank over the whole run from its metrics, and
 * /delay_costs a (rank, step) from the parts of its step; both answer
 * "why was it late", so both name their answer from this one list, and a
 * user can set the two side by side.  Each step part (crossrank/
 * step_parts.c) stands for the cause the straggler metric of the same
 * time would give: the launch-bound gaps for "cpu launch" as the GPU's
 * idle time waiting for the host does.  Compute becomes "slower GPU" where
 * the rank's GEMM rate tells a slower GPU from more work. */
#include "crossrank/compare/causes.h"

#include "crossrank/compare/step_parts.h"

#include <string.h>

static const struct {
    const char *name, *text;
} CAUSES[HTA_N_CAUSES] = {
    [HTA_CAUSE_NONE] = {"", "nothing stands out"},
    [HTA_CAUSE_COMPUTE] = {"compute", "slower kernels (compute time)"},
    [HTA_CAUSE_SLOWER_GPU] = {"slower GPU", "a slower GPU (its GEMM rate)"},
    [HTA_CAUSE_CPU_LAUNCH] = {"cpu launch", "GPU idle waiting for the CPU"},
    [HTA_CAUSE_DATA_LOADING] = {"data loading", "longer data loading"},
    [HTA_CAUSE_COMMUNICATION] = {"communication", "longer exposed communication"},
    [HTA_CAUSE_IDLE] = {"idle", "GPU idle, not waiting for launches"},
    [HTA_CAUSE_OTHER] = {"other", "other time in the step (CPU outside the GPU work, copies)"},
};

static const hta_cause OF_PART[HTA_N_PARTS] = {
    [HTA_PART_COMPUTE] = HTA_CAUSE_COMPUTE,
    [HTA_PART_EXPOSED_COMM] = HTA_CAUSE_COMMUNICATION,
    [HTA_PART_WAIT] = HTA_CAUSE_NONE,
    [HTA_PART_DATA_LOADING] = HTA_CAUSE_DATA_LOADING,
    [HTA_PART_IDLE] = HTA_CAUSE_IDLE,
    [HTA_PART_LAUNCH_GAPS] = HTA_CAUSE_CPU_LAUNCH,
    [HTA_PART_OTHER] = HTA_CAUSE_OTHER,
};

const char *hta_cause_name(hta_cause c)
{
    return CAUSES[c].name;
}

const char *hta_cause_text(hta_cause c)
{
    return CAUSES[c].text;
}

hta_cause hta_cause_named(const char *name)
{
    int c = 0;
    while (c < HTA_N_CAUSES && strcmp(CAUSES[c].name, name) != 0)
        c++;
    return (hta_cause)c;
}

hta_cause hta_cause_of_step_part(int part)
{
    return OF_PART[part];
}

hta_cause hta_cause_refined(hta_cause c, int slower_gpu)
{
    return c == HTA_CAUSE_COMPUTE && slower_gpu ? HTA_CAUSE_SLOWER_GPU : c;
}
