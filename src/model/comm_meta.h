/* model/comm_meta.h: what a trace says about its collectives.
 *
 * PyTorch writes on NCCL/RCCL kernels, and on the record_param_comms CPU
 * op that launched them, the collective's name, dtype, element counts,
 * split sizes and process group (name, description, member ranks), and
 * newer versions a per-group sequence number "Seq" and a point-to-point
 * op's peer ("Dst Rank" on a send, "Src Rank" on a recv); distributedInfo
 * lists every group (pg_config).  Only communication kernels and CPU ops
 * carrying such metadata get an entry here, so the 32-byte event record
 * does not grow and other events pay nothing.  Entries are sorted by
 * event index like the trace's extras; strings are interned in the set's
 * own table.  The join of a kernel without metadata to its launching CPU
 * op (External id, else the launch's time) is kept local to this concept
 * (analysis/comm_ops.c). */
#ifndef HTA_COMM_META_H
#define HTA_COMM_META_H

#include <stddef.h>
#include <stdint.h>

#include "util/strtab.h"

#define HTA_COMM_NO_STRING UINT32_MAX

typedef struct hta_comm_meta {
    size_t event;              /* index in trace->events */
    int64_t external_id;       /* args["External id"], -1 when absent */
    int64_t in_nelems, out_nelems, group_size, seq; /* -1 when absent */
    int64_t peer;              /* a send's "Dst Rank", a recv's "Src Rank" (global), -1 */
    /* Ids in the set's strings, HTA_COMM_NO_STRING when absent. */
    uint32_t collective, dtype, pg_name, pg_desc, pg_ranks, in_split, out_split;
} hta_comm_meta;

/* One entry of distributedInfo.pg_config (ids in the set's strings;
 * ranks as "[0, 1, 2]"). */
typedef struct hta_pg_config {
    uint32_t name, desc, ranks;
} hta_pg_config;

typedef struct hta_comm_set {
    hta_comm_meta *items;      /* owned, ascending by event */
    size_t n, cap;
    hta_pg_config *groups;     /* owned */
    size_t n_groups, cap_groups;
    hta_strtab strings;
} hta_comm_set;

void hta_comm_set_init(hta_comm_set *s);
void hta_comm_set_free(hta_comm_set *s);
/* Appends an entry (its event after every other's): 0, or -1 when out of
 * memory. */
int hta_comm_set_push(hta_comm_set *s, const hta_comm_meta *m);
int hta_comm_set_push_group(hta_comm_set *s, const hta_pg_config *g);
/* Appends from's entries and groups to into, their events shifted by
 * event_offset, strings re-interned: 0, or -1 when out of memory. */
int hta_comm_set_append(hta_comm_set *into, const hta_comm_set *from, size_t event_offset);
/* The entry of event index `event`, or NULL. */
const hta_comm_meta *hta_comm_set_find(const hta_comm_set *s, size_t event);
/* The string of an id, "" when absent. */
const char *hta_comm_string(const hta_comm_set *s, uint32_t id);

/* Whether the entry carries the collective's metadata (not only an
 * External id). */
static inline int hta_comm_has_metadata(const hta_comm_meta *m)
{
    return m->collective != HTA_COMM_NO_STRING && m->pg_name != HTA_COMM_NO_STRING;
}

/* Bytes of one element of a PyTorch dtype name ("Float", "BFloat16",
 * "Long", ...), 0 when unknown. */
int hta_dtype_size(const char *dtype);

#endif
