/* analysis/launch_pipelining.h: entry point of analysis/launch_pipelining.c (registry.h). */
#ifndef HTA_LAUNCH_PIPELINING_H
#define HTA_LAUNCH_PIPELINING_H

#include "analysis/registry.h"

int hta_launch_pipelining(const hta_rank_view *view, hta_tableset *out, hta_error *err);

#endif
