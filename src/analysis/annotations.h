/* analysis/annotations.h: entry point of analysis/annotations.c (registry.h). */
#ifndef HTA_ANNOTATIONS_H
#define HTA_ANNOTATIONS_H

#include "analysis/registry.h"

int hta_annotations(const hta_rank_view *view, const hta_analysis_settings *opt,
                    hta_tableset *out, hta_error *err);

#endif
