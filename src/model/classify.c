/* classify.c: kernel type from a GPU event's name (definitions section 3).
 *
 * The rules are HTA's, applied in order, case-sensitive; the first match
 * wins, so an NCCL kernel whose name mentions Memcpy is still
 * COMMUNICATION. */
#include "model/classify.h"

#include "model/trace.h"

#include <string.h>

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int starts_with_any(const char *s, const char *const *prefixes)
{
    for (; *prefixes; prefixes++)
        if (starts_with(s, *prefixes))
            return 1;
    return 0;
}

static int is_communication(const char *name)
{
    static const char *const prefixes[] = {"nccl", "hip", "hccl", NULL};
    return starts_with_any(name, prefixes) || strstr(name, "ncclKernel");
}

static int is_memory(const char *name)
{
    static const char *const prefixes[] = {"Memcpy", "hipMemcpy", "Memset",
                                           "hipMemset", "dma", NULL};
    return starts_with_any(name, prefixes);
}

static int is_computation(const char *name)
{
    static const char *const excluded_prefixes[] = {
        "runFunction", "job_exe", "packet", "pe_exe", "cpum_exe_subgraph",
        "collective_subgraph_execution", "Stream Wait Event", NULL};
    if (strstr(name, "Memcpy") || strstr(name, "Memset") || strstr(name, "dma") ||
        strstr(name, "Sync"))
        return 0;
    if (starts_with_any(name, excluded_prefixes))
        return 0;
    if (starts_with(name, "cuda") && strstr(name + 4, "LaunchKernel"))
        return 0;
    return 1;
}

hta_kernel_type hta_classify_kernel(const char *name)
{
    if (is_communication(name))
        return HTA_KT_COMMUNICATION;
    if (is_memory(name))
        return HTA_KT_MEMORY;
    if (is_computation(name))
        return HTA_KT_COMPUTATION;
    return HTA_KT_OTHER;
}

const char *hta_kernel_type_name(hta_kernel_type type)
{
    switch (type) {
    case HTA_KT_COMPUTATION: return "COMPUTATION";
    case HTA_KT_COMMUNICATION: return "COMMUNICATION";
    case HTA_KT_MEMORY: return "MEMORY";
    default: return "OTHER";
    }
}
