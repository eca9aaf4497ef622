/* model/op_groups.h: CPU ops grouped by (name, Input Dims, Input type).
 *
 * The per-op tables report each op name once per distinct argument
 * signature, whatever thread called it.  A group is found by a hash of
 * the name id and the signature id (each context's "dims\ttype" interned
 * once), so a call costs one probe.  Groups are numbered densely in
 * first-seen order. */
#ifndef HTA_OP_GROUPS_H
#define HTA_OP_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "model/cpu_context.h"
#include "model/trace.h"

typedef struct hta_op_groups {
    hta_cpu_contexts contexts;
    uint32_t *signature;       /* owned, by context id */
    uint64_t *keys;            /* owned, open addressing: key + 1, 0 = empty */
    uint32_t *values;
    size_t n_slots;            /* power of two */
    size_t n;                  /* groups */
    int fresh;                 /* the last find created its group */
} hta_op_groups;

/* -1 when out of memory. */
int hta_op_groups_init(hta_op_groups *g, const hta_trace *t);
void hta_op_groups_free(hta_op_groups *g);
/* The per-op tables' row order: by name, Input Dims, Input type, of an op
 * (name id, context index) against another. */
int hta_op_groups_compare(const hta_op_groups *g, const hta_trace *t, uint32_t name_x,
                          uint32_t context_x, uint32_t name_y, uint32_t context_y);
/* The group of a CPU op, created as needed; SIZE_MAX when out of memory. */
size_t hta_op_groups_find(hta_op_groups *g, const hta_event *op);

#endif
