/* analysis/registry.h: the per-rank analyses, in the order they run.
 *
 * Each analysis is one file of src/analysis/ with one entry point
 * (declared in a header named like its file) that reads the rank view,
 * and its settings when options shape it, and appends rows to result
 * tables; hta_analyses lists them, and run/run_analyses.c runs them. */
#ifndef HTA_REGISTRY_H
#define HTA_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "model/rank_view.h"
#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

/* An analysis that options shape, and one that none do. */
typedef int (*hta_analysis_fn)(const hta_rank_view *view, const hta_analysis_settings *opt,
                               hta_tableset *out, hta_error *err);
typedef int (*hta_fixed_analysis_fn)(const hta_rank_view *view, hta_tableset *out,
                                     hta_error *err);

/* A note on a rank: appends to notes ("; " after any note already there)
 * what the rank's rows of the analysis's tables in set say about how far
 * its results can be trusted; nothing when they say nothing. */
typedef void (*hta_analysis_note_fn)(const hta_tableset *set, int64_t rank_key,
                                     hta_error *notes);

/* Exactly one of run and run_fixed is set; note, when the analysis has a
 * note on a rank to give. */
typedef struct hta_analysis {
    const char *name;
    hta_analysis_fn run;
    hta_fixed_analysis_fn run_fixed;
    hta_analysis_note_fn note;
} hta_analysis;

/* Runs a with the settings it takes. */
int hta_analysis_run(const hta_analysis *a, const hta_rank_view *view,
                     const hta_analysis_settings *opt, hta_tableset *out, hta_error *err);
/* Every analysis's note on the rank, in the registry's order, after its
 * analyses ran into set. */
void hta_analyses_note(const hta_tableset *set, int64_t rank_key, hta_error *notes);

/* The analyses in the order their rows are kept (results never depend on
 * the order they run in: hta_analysis_schedule). */
typedef enum hta_analysis_id {
    HTA_ANALYSIS_TEMPORAL_BREAKDOWN,
    HTA_ANALYSIS_COMM_COMP_OVERLAP,
    HTA_ANALYSIS_KERNEL_BREAKDOWN,
    HTA_ANALYSIS_OVERLAP_BREAKDOWN,
    HTA_ANALYSIS_IDLE_TIME,
    HTA_ANALYSIS_LAUNCH_STATS,
    HTA_ANALYSIS_LAUNCH_PIPELINING,
    HTA_ANALYSIS_QUEUE_LENGTH,
    HTA_ANALYSIS_MEMORY_BW,
    HTA_ANALYSIS_TIMELINE,
    HTA_ANALYSIS_ACTIVITY_CATEGORIES,
    HTA_ANALYSIS_COLLECTIVES,
    HTA_ANALYSIS_DATA_LOADING,
    HTA_ANALYSIS_STEPS,
    HTA_ANALYSIS_DETAIL_TABLES,
    HTA_ANALYSIS_OPS,
    HTA_ANALYSIS_ANNOTATIONS,
    HTA_ANALYSIS_GPU_GAPS,
    HTA_ANALYSIS_MEMORY,
    HTA_ANALYSIS_CRITICAL_PATH,
    HTA_ANALYSIS_CUPTI_COUNTERS,
    HTA_ANALYSIS_GRAPH_LAUNCHES,
    HTA_N_ANALYSES
} hta_analysis_id;

/* Indexed by hta_analysis_id. */
extern const hta_analysis hta_analyses[HTA_N_ANALYSES];
extern const size_t hta_n_analyses;
/* Every hta_analysis_id once, in the order threads take them
 * (run_analyses.c); results keep the registry's order. */
extern const hta_analysis_id hta_analysis_schedule[HTA_N_ANALYSES];

#endif
