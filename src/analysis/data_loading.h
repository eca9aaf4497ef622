/* analysis/data_loading.h: entry point of analysis/data_loading.c
 * (registry.h). */
#ifndef HTA_DATA_LOADING_H
#define HTA_DATA_LOADING_H

#include "analysis/registry.h"

/* The metric "data_loading_us": CPU time in DataLoader batch fetches. */
int hta_data_loading(const hta_rank_view *view, hta_tableset *out, hta_error *err);

#endif
