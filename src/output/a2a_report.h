/* output/a2a_report.h: the all-to-all lines of the stdout summary
 * (output/a2a_report.c). */
#ifndef HTA_A2A_REPORT_H
#define HTA_A2A_REPORT_H

#include "table/table.h"

/* Prints the rank that received the most all-to-all bytes beside the
 * median rank and the wait it caused, and the instances whose split
 * sizes disagree.  Nothing without all-to-all traffic. */
void hta_print_a2a_report(const hta_tableset *set);

#endif
