/* analysis/kernel_type_masks.h: the combinations of kernel types HTA's
 * breakdown lists, zero-time ones included.
 *
 * HTA's get_gpu_kernel_breakdown finds the time of each combination by a
 * sweep: per type (in its order: COMPUTATION, COMMUNICATION, MEMORY) it
 * appends the starts, then the ends, of the type's merged intervals to one
 * list of (time, +bit / -bit) and re-sorts the whole list by time with
 * pandas' unstable sort; the running sum of the bits is the combination
 * after each point, and every combination the running sum takes is a row,
 * with the time to the next point.  Where points of several types (or a
 * zero-length interval's two) share a time, the sort's order among them
 * makes the running sum pass through combinations that last no time: HTA
 * lists them with 0 (a kernel ending as a copy starts gives
 * "COMPUTATION overlapping MEMORY" at 0).  The exact set needs numpy's
 * order, so the sweep is replayed through numerics/argsort.h, but only when
 * some tie could add a combination not already there with time. */
#ifndef HTA_KERNEL_TYPE_MASKS_H
#define HTA_KERNEL_TYPE_MASKS_H

#include <stddef.h>
#include <stdint.h>

#include "model/interval.h"

/* Sets bit m of *seen for each combination m (bit i: list i) HTA's sweep
 * passes through over the k <= 5 merged, sorted lists.  `timed`: the
 * combinations known to last some time (bit m set), seen without the
 * sweep.  -1 when out of memory. */
int hta_kernel_type_masks_like_hta(const hta_interval *const lists[], const size_t counts[],
                                   size_t k, uint32_t timed, uint32_t *seen);

#endif
