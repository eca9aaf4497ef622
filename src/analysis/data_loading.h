/* analysis/data_loading.h: entry point of analysis/data_loading.c
 * (registry.h). */
#ifndef HTA_DATA_LOADING_H
#define HTA_DATA_LOADING_H

#include <stddef.h>

#include "model/rank_view.h"
#include "table/table.h"
#include "util/error.h"

/* The metric "data_loading_us": CPU time in DataLoader batch fetches. */
int hta_data_loading(const hta_rank_view *view, hta_tableset *out, hta_error *err);

/* Per name id of t's string table, 1 when the name is a DataLoader batch
 * fetch; *found counts them.  calloc'd (the caller frees), NULL when out
 * of memory. */
unsigned char *hta_data_loader_names(const hta_trace *t, size_t *found);

#endif
