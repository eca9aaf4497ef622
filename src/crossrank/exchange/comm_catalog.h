/* crossrank/exchange/comm_catalog.h: a job's process groups and
 * collective kinds numbered alike on every process, and the op every
 * communication kernel becomes (crossrank/exchange/comm_catalog.c). */
#ifndef HTA_COMM_CATALOG_H
#define HTA_COMM_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#include "table/table.h"
#include "util/error.h"
#include "util/strtab.h"

/* A process group, and the member ranks that miss its instances when
 * they do not take part: those listed by the rank running its first
 * instance (the lowest rank there). */
typedef struct hta_group_info {
    const char *name;
    int64_t *members;          /* owned: ranks parsed */
    long n_members;
} hta_group_info;

/* A group as one rank describes it: ranks may disagree on the
 * description or members, and each instance shows its lowest rank's. */
typedef struct hta_group_variant {
    const char *name, *desc, *ranks;
} hta_group_variant;

/* A (collective, dtype, element counts, group size, peer) some rank ran;
 * peer: a send's destination or a recv's source (global rank), else -1. */
typedef struct hta_kind_info {
    const char *collective, *dtype;
    int64_t in, out, size, peer;
    int role;                  /* HTA_KIND_*, from the collective's name */
} hta_kind_info;

enum { HTA_KIND_COLLECTIVE, HTA_KIND_SEND, HTA_KIND_RECV, HTA_KIND_ALL_TO_ALL };

/* Whether a kind of the catalog is a point-to-point send or recv. */
static inline int hta_kind_is_send(const hta_kind_info *k)
{
    return k->role == HTA_KIND_SEND;
}

static inline int hta_kind_is_recv(const hta_kind_info *k)
{
    return k->role == HTA_KIND_RECV;
}

static inline int hta_kind_is_all_to_all(const hta_kind_info *k)
{
    return k->role == HTA_KIND_ALL_TO_ALL;
}

/* Point-to-point ops are not instances of their group: a send and the
 * recv it pairs with are one instance (group, HTA_BY_PAIR, key), the key
 * packing (src, dst, k) for the k-th send from src to dst and the k-th
 * recv at dst from src, in start order (NCCL keeps order per peer pair).
 * An op whose peer is unknown gets src = dst = its rank, which pairs with
 * nothing. */
#define HTA_BY_PAIR 2
#define HTA_PAIR_BITS 21
#define HTA_PAIR_MASK ((INT64_C(1) << HTA_PAIR_BITS) - 1)
int64_t hta_pair_key(int64_t src, int64_t dst, int64_t k);
int64_t hta_pair_src(int64_t key);
int64_t hta_pair_dst(int64_t key);
int64_t hta_pair_index(int64_t key);

/* Every group and kind of the job, numbered the same on every process:
 * groups in the order of their first appearance in rank order, variants
 * and kinds sorted by their fields. */
typedef struct hta_comm_catalog {
    hta_tableset parts;        /* owned: the rows the strings belong to */
    hta_group_info *groups;    /* owned */
    size_t n_groups;
    hta_group_variant *variants; /* owned */
    size_t n_variants;
    hta_kind_info *kinds;      /* owned */
    size_t n_kinds;
    hta_strtab names;          /* group name -> index in groups */
} hta_comm_catalog;

/* Adds this process's groups and kinds (from "_comm_ops", rank-mapped)
 * to parts, to be merged with every other process's. */
int hta_comm_catalog_part(const hta_table *comm_ops, hta_tableset *parts);
/* Builds the catalog from every process's parts (moved in, in any
 * order); -1 when out of memory. */
int hta_comm_catalog_build(hta_comm_catalog *c, hta_tableset *parts);
void hta_comm_catalog_free(hta_comm_catalog *c);

/* A communication kernel as the owner of its instance sees it; one
 * instance = (group, by_seq, key). */
typedef struct hta_group_op {
    uint32_t group, kind;
    int32_t by_seq;            /* 1: key is Seq; 0: the ordinal; HTA_BY_PAIR */
    uint32_t variant;          /* how its rank describes the group */
    int64_t key, rank, start, end;
    int64_t a2a_bytes;         /* all-to-all: bytes the rank sent, -1 unknown or other */
    uint64_t a2a_check;        /* all-to-all: its split rows' fingerprint (all_to_all.c) */
} hta_group_op;

/* qsort_r's order of indices into ops (ctx): by rank, then start, then
 * index. */
int hta_group_op_compare_rank_start(const void *a, const void *b, void *ops);

/* A group's first op in instance order: (by_seq, key, rank) smallest. */
typedef struct hta_group_first {
    int64_t by_seq, key, rank, variant;
} hta_group_first;

/* firsts[0..n_groups) with nothing yet. */
void hta_group_firsts_init(hta_group_first *firsts, size_t n_groups);
/* Lowers each group's first to the earliest of ops[0..n). */
void hta_group_firsts_lower(hta_group_first *firsts, const hta_group_op *ops, size_t n);
/* The earlier of a and b, into b (an MPI reduction's order). */
void hta_group_first_merge(const hta_group_first *a, hta_group_first *b);
/* Gives every group the members its first op's rank lists; -1 when out
 * of memory. */
int hta_comm_catalog_set_members(hta_comm_catalog *c, const hta_group_first *firsts);

/* Parses "[0, 1, 2]" (or "0,1,2") into values; the count, or -1 when out
 * of memory. */
long hta_parse_int_list(const char *text, int64_t **out);

/* The catalog's numbers of the kinds a "_comm_ops" row lists (its
 * "kinds" text), into *ids (owned, *n_ids of them); -1 when a kind is
 * malformed or not in the catalog, or out of memory. */
int hta_comm_catalog_kind_ids(const hta_comm_catalog *c, const char *kinds, uint32_t **ids,
                              size_t *n_ids);
/* The catalog's number of a group variant, or -1 when it has none. */
long hta_comm_catalog_variant(const hta_comm_catalog *c, const char *name, const char *desc,
                              const char *ranks);

/* The columns of _catalog_groups (scratch between stages, never written). */
enum {
    HTA_CATALOG_GROUPS_RANK,
    HTA_CATALOG_GROUPS_ROW,
    HTA_CATALOG_GROUPS_GROUP,
    HTA_CATALOG_GROUPS_GROUP_DESC,
    HTA_CATALOG_GROUPS_GROUP_RANKS,
    HTA_CATALOG_GROUPS_N_COLUMNS
};
extern const hta_table_spec hta_catalog_groups_table;

/* The columns of _catalog_kinds (scratch between stages, never written). */
enum {
    HTA_CATALOG_KINDS_COLLECTIVE,
    HTA_CATALOG_KINDS_DTYPE,
    HTA_CATALOG_KINDS_IN,
    HTA_CATALOG_KINDS_OUT,
    HTA_CATALOG_KINDS_SIZE,
    HTA_CATALOG_KINDS_PEER,
    HTA_CATALOG_KINDS_N_COLUMNS
};
extern const hta_table_spec hta_catalog_kinds_table;

#endif
