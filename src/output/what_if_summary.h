/* output/what_if_summary.h: the summary's lines on what fixing it buys
 * (output/what_if_summary.c). */
#ifndef HTA_WHAT_IF_SUMMARY_H
#define HTA_WHAT_IF_SUMMARY_H

#include "table/table.h"

/* Prints how close the replay as measured comes to the measured steps and
 * the scenario that saves the most per step; nothing without /what_if. */
void hta_print_what_if_summary(const hta_tableset *set);

#endif
