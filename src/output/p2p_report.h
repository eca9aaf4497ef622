/* output/p2p_report.h: the point-to-point lines of the stdout summary
 * (output/p2p_report.c). */
#ifndef HTA_P2P_REPORT_H
#define HTA_P2P_REPORT_H

#include "table/table.h"

/* Prints the pairs' late sender and late receiver totals, the pipeline
 * stage that causes the most late-sender wait with its bubble, and the
 * point-to-point kernels that could not be paired.  Nothing without
 * point-to-point traffic. */
void hta_print_p2p_report(const hta_tableset *set);

#endif
