/* analysis/ops.h: entry point of analysis/ops.c (registry.h). */
#ifndef HTA_OPS_H
#define HTA_OPS_H

#include "analysis/registry.h"

int hta_ops(const hta_rank_view *view, const hta_analysis_settings *opt, hta_tableset *out,
            hta_error *err);

#endif
