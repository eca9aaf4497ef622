/* analysis/queue_length.h: entry point of analysis/queue_length.c (registry.h). */
#ifndef HTA_QUEUE_LENGTH_H
#define HTA_QUEUE_LENGTH_H

#include "model/rank_view.h"
#include "table/table.h"
#include "util/error.h"

int hta_queue_length(const hta_rank_view *view, hta_tableset *out, hta_error *err);

/* The columns of /queue_length (docs/results-format.md). */
enum {
    HTA_QUEUE_LENGTH_RANK,
    HTA_QUEUE_LENGTH_STREAM,
    HTA_QUEUE_LENGTH_COUNT,
    HTA_QUEUE_LENGTH_MEAN,
    HTA_QUEUE_LENGTH_STD,
    HTA_QUEUE_LENGTH_MIN,
    HTA_QUEUE_LENGTH_P25,
    HTA_QUEUE_LENGTH_P50,
    HTA_QUEUE_LENGTH_P75,
    HTA_QUEUE_LENGTH_MAX,
    HTA_QUEUE_LENGTH_TIME_WEIGHTED_MEAN,
    HTA_QUEUE_LENGTH_TIME_AT_MAX_US,
    HTA_QUEUE_LENGTH_TIME_AT_MAX_RATIO,
    HTA_QUEUE_LENGTH_N_COLUMNS
};
extern const hta_table_spec hta_queue_length_table;

#endif
