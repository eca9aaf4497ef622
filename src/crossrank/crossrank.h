/* crossrank/crossrank.h: the statistics over ranks, computed on the root
 * after the gather (definitions section 5), in the order they depend on
 * each other.
 *
 * Every cross-rank table is built from the per-rank tables the root holds
 * once hta_resolve_ranks (run/ranks.h) has mapped and sorted them: rows
 * are in rank order, so results never depend on the number of processes. */
#ifndef HTA_CROSSRANK_H
#define HTA_CROSSRANK_H

#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

/* Adds every cross-rank table to set; -1 with err set at the first
 * failure. */
int hta_crossrank_statistics(hta_tableset *set, const hta_crossrank_settings *opt, hta_error *err);

#endif
