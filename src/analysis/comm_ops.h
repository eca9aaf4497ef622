/* analysis/comm_ops.h: each communication kernel's collective metadata, joined
 * to its launching CPU op when the kernel carries none (analysis/comm_ops.c).
 *
 * Order of sources: the kernel's own args; else the record_param_comms op
 * with the kernel's External id; else the one whose time range holds the
 * kernel's launch (found by correlation): on the launching thread the
 * runtime call runs inside record_param_comms; else, for a coalesced
 * batch of sends and recvs, the ops of the batch (hta_comm_batch). */
#ifndef HTA_COMM_OPS_H
#define HTA_COMM_OPS_H

#include <stddef.h>

#include "model/comm_meta.h"
#include "model/rank_view.h"
#include "table/table.h"
#include "util/error.h"

typedef struct hta_comm_resolver {
    const hta_rank_view *view;
    const hta_comm_meta **by_external_id; /* owned: CPU ops with metadata */
    const hta_comm_meta **by_start;       /* owned: the same, by start time */
    size_t n_ops;
    /* Coalesced point-to-point batches: per communication kernel of the
     * view (comm_at order), its ops batch_ops[batch_first[c]..
     * + batch_count[c]) (owned; NULL without any batch). */
    const hta_comm_meta **batch_ops;
    size_t *batch_first, *batch_count;
} hta_comm_resolver;

/* -1 when out of memory. */
int hta_comm_resolver_build(hta_comm_resolver *r, const hta_rank_view *view);
void hta_comm_resolver_free(hta_comm_resolver *r);
/* The metadata of communication kernel gpu, or NULL when the trace has
 * none for it (old traces, some AMD ones): it is then matched by stream
 * (crossrank/compare/collective_wait.c). */
const hta_comm_meta *hta_comm_resolve(const hta_comm_resolver *r, const hta_event *gpu);
/* The sends and recvs communication kernel c (in comm_at order) ran as
 * one batch (batch_isend_irecv), *n of them, when it has no metadata of
 * its own: PyTorch records each op of a coalesced batch as a
 * record_param_comms op that ends before the batch's one kernel is
 * launched, so the batch is the point-to-point ops with metadata that
 * no kernel claims, started on the launching side after the previous
 * communication kernel's launch and ended by this one's. */
const hta_comm_meta *const *hta_comm_batch(const hta_comm_resolver *r, size_t c, size_t *n);

/* "_comm_ops": one row per communication kernel with metadata. */
int hta_comm_ops(const hta_rank_view *view, hta_tableset *out, hta_error *err);

/* The columns of _comm_ops (scratch between stages, never written). */
enum {
    HTA_COMM_OPS_RANK,
    HTA_COMM_OPS_GROUP,
    HTA_COMM_OPS_GROUP_DESC,
    HTA_COMM_OPS_GROUP_RANKS,
    HTA_COMM_OPS_KERNELS,
    HTA_COMM_OPS_KINDS,
    HTA_COMM_OPS_KIND_OF,
    HTA_COMM_OPS_SEQS,
    HTA_COMM_OPS_FIRST_START_NS,
    HTA_COMM_OPS_START_GAPS,
    HTA_COMM_OPS_DURATIONS,
    HTA_COMM_OPS_OVERLAPS,
    HTA_COMM_OPS_STEPS,
    HTA_COMM_OPS_SAME_KERNEL,
    HTA_COMM_OPS_SPLITS,
    HTA_COMM_OPS_N_COLUMNS
};
extern const hta_table_spec hta_comm_ops_table;

#endif
