/* output/job_path_summary.h: the summary's line on the job's critical
 * path (output/job_path_summary.c). */
#ifndef HTA_JOB_PATH_SUMMARY_H
#define HTA_JOB_PATH_SUMMARY_H

#include "table/table.h"

/* Prints the rank with the largest share of the job's critical path over
 * the steps; nothing without /global_critical_path_ranks. */
void hta_print_job_path_summary(const hta_tableset *set);

#endif
