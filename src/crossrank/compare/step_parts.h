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

/* A rank's step and its parts. */
typedef struct hta_step_row {
    int64_t step, rank;
    double part[HTA_N_PARTS];
} hta_step_row;

/* The rows of "steps" by (step, rank), each with its parts (steps->n_rows
 * of them); NULL when out of memory. */
hta_step_row *hta_step_rows(const hta_table *steps);

/* The rows of one step number in s[0..n) (sorted as above), *count. */
const hta_step_row *hta_step_rows_of(const hta_step_row *s, size_t n, int64_t step,
                                     size_t *count);

/* Each part's median over one step's rows s[0..n) into
 * median[0..HTA_N_PARTS), and the least excess over it that stands out
 * from the ranks' spread into least[0..HTA_N_PARTS)
 * (crossrank/compare/step_parts.c); scratch holds n. */
void hta_step_spreads(const hta_step_row *s, size_t n, double robust_z, double min_effect,
                      double *scratch, double *median, double *least);

/* Whether an excess over the median stands out (at least least > 0). */
int hta_step_excess_stands_out(double excess, double least);

/* Whether a part is the rank's own work, whose excess over the others'
 * makes it late (compute, launch gaps, data loading), not what it waits
 * for or what the schedule leaves idle. */
int hta_step_part_is_own_work(int part);

#endif
