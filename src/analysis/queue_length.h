/* analysis/queue_length.h: entry point of analysis/queue_length.c (registry.h). */
#ifndef HTA_QUEUE_LENGTH_H
#define HTA_QUEUE_LENGTH_H

#include "analysis/registry.h"

int hta_queue_length(const hta_rank_view *view, hta_tableset *out, hta_error *err);

#endif
