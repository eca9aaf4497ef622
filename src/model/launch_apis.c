/* launch_apis.c: the runtime call names of definitions section 4 (see
 * model/launch_apis.h).  Only the names differ between the lists; everything
 * that counts launches goes through hta_launch_names_find. */
#include "model/launch_apis.h"

#include <string.h>

static const char *const STATS_APIS[] = {
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cudaMemcpyAsync", "cudaMemsetAsync",
    "cuLaunchKernel", "cuLaunchKernelEx", "hipLaunchKernel", NULL,
};

static const char *const QUEUE_APIS[] = {
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
    "cudaMemcpyAsync", "cudaMemsetAsync", "hipLaunchKernel", "hipExtModuleLaunchKernel",
    "hipMemcpyAsync", "hipMemsetAsync", "hipMemcpyWithStream", NULL,
};

/* The _ptsz and _spt names are the per-thread default stream variants that
 * code built with --default-stream per-thread (or HIP's equivalent) calls. */
static const char *const GRAPH_APIS[] = {
    "cudaGraphLaunch",     "cuGraphLaunch",  "hipGraphLaunch",     "cudaGraphLaunch_ptsz",
    "cuGraphLaunch_ptsz",  "hipGraphLaunch_spt", NULL,
};

hta_launch_names hta_launch_names_find(const hta_trace *t, hta_launch_apis apis)
{
    const char *const *names = apis == HTA_LAUNCH_STATS_APIS   ? STATS_APIS
                               : apis == HTA_LAUNCH_QUEUE_APIS ? QUEUE_APIS
                                                               : GRAPH_APIS;
    hta_launch_names found = {.n = 0};
    for (; *names; names++) {
        uint32_t id = hta_strtab_find(&t->names, *names, strlen(*names));
        if (id != UINT32_MAX)
            found.ids[found.n++] = id;
    }
    return found;
}
