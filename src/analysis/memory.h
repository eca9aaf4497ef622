/* analysis/memory.h: entry point of analysis/memory.c (registry.h). */
#ifndef HTA_MEMORY_H
#define HTA_MEMORY_H

#include "analysis/registry.h"

int hta_memory(const hta_rank_view *view, hta_tableset *out, hta_error *err);

#endif
