/* run/run_analyses.h: every analysis of the registry over one rank view. */
#ifndef HTA_RUN_ANALYSES_H
#define HTA_RUN_ANALYSES_H

#include "model/rank_view.h"
#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

/* Runs every analysis of hta_analyses over the view into out, on up to
 * `threads` threads, with the same rows in the same order whatever the
 * thread count.  deadline: monotonic seconds after which no analysis
 * starts (0: none).  -1 with err set on the first failure in registry
 * order. */
int hta_run_analyses(const hta_rank_view *view, const hta_settings *opt, int threads,
                     const char *path, double deadline, hta_tableset *out, hta_error *err);

#endif
