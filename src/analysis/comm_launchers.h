/* analysis/comm_launchers.h: whether a communication kernel without
 * collective metadata ran a collective or a send/recv, told by the op or
 * annotation that launched it (analysis/comm_launchers.c).
 *
 * NCCL runs an all-to-all as a SendRecv kernel, exactly as it runs a send
 * or a recv, so the kernel's name cannot tell them apart: the launch can.
 * A kernel launched inside a collective's op (c10d::alltoall_base_,
 * c10d::allreduce_, a record_param_comms naming a collective, an
 * nccl:all_to_all annotation, NCCL's own ncclAllToAll range) is a member
 * of that collective's instance; one launched inside a send's or recv's
 * (c10d::send, c10d::recv_, nccl:send, nccl:recv, batch_isend_irecv,
 * ncclSend, ncclRecv, a coalesced batch of them) is point-to-point.  The
 * innermost such op on the launching thread decides; a kernel whose launch
 * the trace lacks is decided by the annotations drawn on its stream. */
#ifndef HTA_COMM_LAUNCHERS_H
#define HTA_COMM_LAUNCHERS_H

#include "model/rank_view.h"

typedef enum hta_comm_launch {
    HTA_COMM_LAUNCH_UNKNOWN,   /* no op or annotation names it */
    HTA_COMM_LAUNCH_COLLECTIVE,
    HTA_COMM_LAUNCH_P2P,
} hta_comm_launch;

/* The rank's communication ops and annotations, by thread and start. */
typedef struct hta_comm_launchers {
    const hta_rank_view *view;
    struct hta_comm_label *labels; /* owned */
    size_t n;
    struct hta_cpu_contexts *contexts; /* owned */
} hta_comm_launchers;

/* -1 when out of memory. */
int hta_comm_launchers_build(hta_comm_launchers *l, const hta_rank_view *view);
void hta_comm_launchers_free(hta_comm_launchers *l);
/* What launched communication kernel gpu of the view. */
hta_comm_launch hta_comm_launch_of(const hta_comm_launchers *l, const hta_event *gpu);

#endif
