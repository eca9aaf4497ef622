/* tracegen_nodes.c: the DDP job's ranks placed on nodes
 * (--ranks-per-node R: ranks r..r+R-1, r a multiple of R, on node r / R),
 * for the node statistics (hta-mpi's crossrank/compare/nodes.c).  The node is
 * written only where PyTorch writes it, in the file name
 * (HOST_PID.TIME.pt.trace.json, the host being "node<k>"); --slow-node
 * K:F makes every rank of node K compute F times as long, as a throttled
 * node does, and --clock-offset K:US makes node K's clock read US
 * microseconds ahead: all its ranks' events, CPU and GPU, move by US,
 * while what happens is the same as without it. */
#include "tracegen_nodes.h"

#include "tracegen_common.h"
#include "tracegen_ddp.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define FIRST_PID 4000
#define TRACE_TIME 1700000000000LL

void tg_nodes_slow(double *factor, int64_t world, int64_t ranks_per_node, const char *value)
{
    char *end;
    errno = 0;
    long long node = strtoll(value, &end, 10);
    double f = 0;
    if (*end == ':')
        f = strtod(end + 1, &end);
    if (errno || *end || node < 0 || f < MIN_FACTOR || f > MAX_FACTOR || ranks_per_node < 1 ||
        node * ranks_per_node >= world) {
        char detail[160];
        snprintf(detail, sizeof detail,
                 "'%.80s' (want NODE:FACTOR, FACTOR in 0.5..10, with --ranks-per-node)", value);
        tg_fail("invalid value for --slow-node ", detail);
    }
    for (int64_t r = node * ranks_per_node; r < (node + 1) * ranks_per_node && r < world; r++)
        factor[r] *= f;
}

void tg_nodes_clock_offset(int64_t *offset_us, int64_t world, int64_t ranks_per_node,
                           const char *value)
{
    char *end;
    errno = 0;
    long long node = strtoll(value, &end, 10), us = 0;
    if (*end == ':')
        us = strtoll(end + 1, &end, 10);
    if (errno || *end || node < 0 || ranks_per_node < 1 || node * ranks_per_node >= world ||
        us < -1000000 || us > 1000000) {
        char detail[160];
        snprintf(detail, sizeof detail,
                 "'%.80s' (want NODE:US, |US| <= 1000000, with --ranks-per-node)", value);
        tg_fail("invalid value for --clock-offset ", detail);
    }
    for (int64_t r = node * ranks_per_node; r < (node + 1) * ranks_per_node && r < world; r++)
        offset_us[r] = us;
}

void tg_nodes_trace_path(char *path, size_t n, const char *dir, int64_t rank,
                         int64_t ranks_per_node, bool gzip)
{
    if (ranks_per_node > 0)
        snprintf(path, n, "%s/node%" PRId64 "_%" PRId64 ".%lld.pt.trace.json%s", dir,
                 rank / ranks_per_node, FIRST_PID + rank, TRACE_TIME, gzip ? ".gz" : "");
    else
        snprintf(path, n, "%s/rank-%" PRId64 ".json%s", dir, rank, gzip ? ".gz" : "");
}
