/* model/launch_apis.h: the CPU runtime calls that enqueue GPU work.
 *
 * Launch statistics and queue length (definitions section 4) each count a
 * fixed list of runtime call names, and graph replays have a list of
 * their own.  A trace stores names as ids, so a list is resolved once per
 * trace into the ids present, and matching an event is then a few integer
 * comparisons. */
#ifndef HTA_LAUNCH_H
#define HTA_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "model/rank_view.h"
#include "model/trace.h"

typedef enum hta_launch_apis {
    /* HTA's cudaLaunchKernel, cudaLaunchKernelExC, cudaMemcpyAsync,
     * cudaMemsetAsync, plus cuLaunchKernel(Ex) (Triton) and hipLaunchKernel. */
    HTA_LAUNCH_STATS_APIS,
    /* Every call that enqueues on a stream: the above and the other ROCm
     * launch and copy calls. */
    HTA_LAUNCH_QUEUE_APIS,
    /* The calls that replay a whole CUDA/HIP graph, every GPU event of the
     * replay carrying the call's correlation (docs/definitions.md, "Graph
     * launches"): on neither list above. */
    HTA_LAUNCH_GRAPH_APIS,
} hta_launch_apis;

#define HTA_MAX_LAUNCH_APIS 16

typedef struct hta_launch_names {
    uint32_t ids[HTA_MAX_LAUNCH_APIS];
    size_t n;
} hta_launch_names;

/* The ids, in this trace, of the names of a list. */
hta_launch_names hta_launch_names_find(const hta_trace *t, hta_launch_apis apis);

static inline int hta_launch_names_match(const hta_launch_names *names, const hta_event *e)
{
    for (size_t i = 0; i < names->n; i++)
        if (names->ids[i] == e->name)
            return 1;
    return 0;
}

/* The launching call of a GPU event when it is one of names, else NULL. */
static inline const hta_event *hta_listed_launch(const hta_rank_view *view,
                                                 const hta_launch_names *names,
                                                 const hta_event *gpu)
{
    const hta_event *cpu = hta_rank_view_launch(view, gpu);
    return cpu && hta_launch_names_match(names, cpu) ? cpu : NULL;
}

#endif
