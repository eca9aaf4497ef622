/* analysis/memory_bw.h: entry point of analysis/memory_bw.c (registry.h). */
#ifndef HTA_MEMORY_BW_H
#define HTA_MEMORY_BW_H

#include "analysis/registry.h"

int hta_memory_bw(const hta_rank_view *view, hta_tableset *out, hta_error *err);

#endif
