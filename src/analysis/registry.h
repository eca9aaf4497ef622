/* analysis/registry.h: the per-rank analyses, in the order they run.
 *
 * Each analysis is one file of src/analysis/ with one entry point of type
 * hta_analysis_fn (declared in a header named like its file) that reads
 * the rank view and appends rows to result tables; hta_analyses lists
 * them, and run/run_analyses.c runs them. */
#ifndef HTA_REGISTRY_H
#define HTA_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "cli/options.h"
#include "model/rank_view.h"
#include "table/table.h"
#include "util/error.h"

typedef int (*hta_analysis_fn)(const hta_rank_view *view, const hta_options *opt,
                               hta_tableset *out, hta_error *err);

typedef struct hta_analysis {
    const char *name;
    hta_analysis_fn run;
} hta_analysis;

extern const hta_analysis hta_analyses[];
extern const size_t hta_n_analyses;
/* hta_analyses' indices in the order threads take them (run_analyses.c);
 * results keep the registry's order. */
extern const size_t hta_analysis_schedule[];

/* Records a per-rank scalar for the cross-rank outlier search
 * (table "rank_metrics": rank, metric, value). */
int hta_emit_metric(hta_tableset *out, int64_t rank_key, const char *metric, double value);

#endif
