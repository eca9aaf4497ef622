/* output/summary.h: the text summary printed at the end of a run. */
#ifndef HTA_SUMMARY_H
#define HTA_SUMMARY_H

#include "output/run_info.h"
#include "settings/settings.h"
#include "table/table.h"

void hta_print_summary(const hta_tableset *set, const hta_output_settings *opt,
                       const hta_run_info *info);

#endif
