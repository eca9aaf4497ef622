/* output/replay_summary.h: the summary's line on the replay of the job
 * (output/replay_summary.c). */
#ifndef HTA_REPLAY_SUMMARY_H
#define HTA_REPLAY_SUMMARY_H

#include "table/table.h"

/* Prints how close the replay as measured comes to the measured steps and
 * the scenario that saves the most per step; nothing without /replay. */
void hta_print_replay_summary(const hta_tableset *set);

#endif
