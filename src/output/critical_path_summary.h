/* output/critical_path_summary.h: the summary's critical-path lines. */
#ifndef HTA_CRITICAL_PATH_SUMMARY_H
#define HTA_CRITICAL_PATH_SUMMARY_H

#include "table/table.h"

/* Prints, per ProfilerStep, what bounds most ranks' critical path and
 * the ranks bound by something else; nothing without /critical_path. */
void hta_print_critical_path_summary(const hta_tableset *set);

#endif
