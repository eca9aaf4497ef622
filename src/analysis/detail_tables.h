/* analysis/detail_tables.h: entry point of analysis/detail_tables.c (registry.h). */
#ifndef HTA_DETAIL_TABLES_H
#define HTA_DETAIL_TABLES_H

#include "analysis/registry.h"

/* Per-event tables under detail/, only with --detail. */
int hta_detail_tables(const hta_rank_view *view, const hta_analysis_settings *opt,
                      hta_tableset *out, hta_error *err);

#endif
