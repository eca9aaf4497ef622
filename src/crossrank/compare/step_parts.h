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

/* A rank's step, its parts, and how they spread over the step's ranks. */
typedef struct hta_step_row {
    int64_t step, rank;
    double part[HTA_N_PARTS];
    double median[HTA_N_PARTS]; /* each part's median over the step's ranks */
    double least[HTA_N_PARTS];  /* the least excess over it that stands out
                                   from their spread (step_parts.c) */
} hta_step_row;

/* The rows of "steps" by (step, rank), each with its parts and its step's
 * spreads, standing out past robust_z and min_effect (--robust-z,
 * --min-effect) (steps->n_rows of them); NULL when out of memory. */
hta_step_row *hta_step_rows(const hta_table *steps, double robust_z, double min_effect);

/* The rows of one step number in s[0..n) (sorted as above), *count. */
const hta_step_row *hta_step_rows_of(const hta_step_row *s, size_t n, int64_t step,
                                     size_t *count);

/* Whether part c of row r stands out above its median; its excess. */
int hta_step_part_stands_out(const hta_step_row *r, int c, double *excess);

/* Whether a part is the rank's own work, whose excess over the others'
 * makes it late (compute, launch gaps, data loading), not what it waits
 * for or what the schedule leaves idle. */
int hta_step_part_is_own_work(int part);

#endif
