/* model/op_walk.h: CPU ops, the launches inside them and their GPU work.
 *
 * Each thread's cpu_op events nest by time.  A runtime event that launched
 * GPU work (its correlation names a GPU event) belongs to the innermost op
 * that encloses it on its own thread (pid, tid), and so does every GPU
 * event carrying its correlation: one for an ordinary launch, the whole
 * replay for a CUDA/HIP graph launch (docs/definitions.md, "Graph
 * launches").  The walk visits every cpu_op once, when it closes, with the
 * GPU events of its whole subtree in launch order, each marked with the
 * depth of the op it belongs to, so that a caller gets both an op's own
 * GPU work (entries at its depth) and everything under it.
 *
 * Ops are ordered per thread by (start, longer first, trace order), and a
 * launch comes after an op starting with it.  An op that only partly
 * overlaps the one open before it is not nested in it: the open one is
 * closed first.  Memory: 4 bytes per op, launch and GPU event, plus the
 * open chain. */
#ifndef HTA_OP_WALK_H
#define HTA_OP_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "model/cpu_context.h"
#include "model/rank_view.h"

typedef struct hta_op_gpu {
    const hta_event *launch;
    const hta_event *gpu;
    uint32_t depth;            /* of the op it belongs to */
} hta_op_gpu;

typedef struct hta_op_visit {
    const hta_event *op;
    uint32_t depth;            /* 0 = no enclosing op on its thread */
    const hta_op_gpu *gpu;     /* its subtree's GPU events, in launch order */
    size_t n_gpu;
} hta_op_visit;

/* Called once per op; nonzero stops the walk and is returned. */
typedef int (*hta_op_visit_fn)(void *ctx, const hta_op_visit *visit);

/* Walks every thread's ops; -1 when out of memory, else what a visit
 * returned or 0.  contexts must be built from the view's trace. */
int hta_op_walk(const hta_rank_view *view, const hta_cpu_contexts *contexts,
                hta_op_visit_fn visit, void *ctx);

#endif
