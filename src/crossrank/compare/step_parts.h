/* crossrank/compare/step_parts.h: a step's time split into parts that add up to
 * it (crossrank/compare/step_parts.c), read by the step-time jitter and the
 * causes of delay costs. */
#ifndef HTA_STEP_PARTS_H
#define HTA_STEP_PARTS_H

#include "table/table.h"

enum {
    HTA_PART_COMPUTE,
    HTA_PART_EXPOSED_COMM,
    HTA_PART_WAIT,
    HTA_PART_DATA_LOADING,
    HTA_PART_IDLE,
    HTA_PART_LAUNCH_GAPS,
    HTA_PART_OTHER,
    HTA_N_PARTS
};
/* The parts' names, as the tables give them. */
extern const char *const hta_step_part_names[HTA_N_PARTS];

/* The parts of the step of a "steps" row, into parts[0..HTA_N_PARTS). */
void hta_step_parts_of(const hta_cell *steps_row, double *parts);

#endif
