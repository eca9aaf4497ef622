/* output/collective_report.h: the collectives' lines of the stdout summary
 * (output/collective_report.c). */
#ifndef HTA_COLLECTIVE_REPORT_H
#define HTA_COLLECTIVE_REPORT_H

#include "table/table.h"

/* Prints the kinds of collective (rows of /collective_summary) with the
 * most waiting and those whose slowest instance fell furthest below their
 * median bandwidth, three each, and ranks that disagree on a collective's
 * metadata.  Nothing without /collective_summary. */
void hta_print_collective_report(const hta_tableset *set);

#endif
