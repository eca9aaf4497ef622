/* tracegen_nodes.h: the DDP job spread over nodes (tracegen_nodes.c). */
#ifndef TRACEGEN_NODES_H
#define TRACEGEN_NODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --slow-node NODE:FACTOR: multiplies the compute factor of every rank of
 * NODE (ranks NODE x ranks_per_node ..) by FACTOR; exits on a bad value. */
void tg_nodes_slow(double *factor, int64_t world, int64_t ranks_per_node, const char *value);

/* --clock-offset NODE:US: every rank of NODE stamps its events US
 * microseconds later than the others (a clock running ahead; negative:
 * behind), into offset_us[world]; exits on a bad value. */
void tg_nodes_clock_offset(int64_t *offset_us, int64_t world, int64_t ranks_per_node,
                           const char *value);

/* The file of rank: DIR/rank-R.json without nodes, else as PyTorch's
 * tensorboard_trace_handler names it, DIR/nodeK_PID.TIME.pt.trace.json. */
void tg_nodes_trace_path(char *path, size_t n, const char *dir, int64_t rank,
                         int64_t ranks_per_node, bool gzip);

#endif
