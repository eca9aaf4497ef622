/* output/hang_report.h: the "Hang diagnosis" section of the stdout
 * summary, from /fr_findings (crossrank/compare/hang_diagnosis.h). */
#ifndef HTA_HANG_REPORT_H
#define HTA_HANG_REPORT_H

#include "table/table.h"

/* Per process group, each finding: its kind, the culprits and the waiting
 * ranks, what it means, and what to look at next (the culprit's entry and
 * stack frames).  Nothing when the run read no Flight Recorder dump. */
void hta_print_hang_report(const hta_tableset *set);

#endif
