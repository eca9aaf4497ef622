/* comm_catalog.c: the process groups and collective kinds of a job,
 * numbered the same way on every process, so that a rank's communication
 * kernels travel as compact ops (rank_ops.c) to the owners of their
 * instances (crossrank/collective_exchange.c).
 *
 * Each process lists the distinct (group, description, members) variants
 * and kinds of its ranks' "_comm_ops" rows (hta_comm_catalog_part); once
 * every process has every list, each builds the same catalog: groups
 * numbered by first appearance in rank order (the order instances are
 * listed in, as when one process matched them all), variants and kinds
 * sorted by their fields.  A group's members, those that miss an
 * instance they take no part in, are the ones listed by the lowest rank
 * of the group's first instance. */
#define _GNU_SOURCE /* qsort_r */
#include "crossrank/exchange/comm_catalog.h"

#include "analysis/comm_ops.h"

#include <stdlib.h>
#include <string.h>

/* The catalog's parts: a process's groups (with where they first appear)
 * and kinds. */
static const hta_column GROUP_PART_COLUMNS[HTA_CATALOG_GROUPS_N_COLUMNS] = {
    [HTA_CATALOG_GROUPS_RANK] = {"rank", HTA_COL_I64},
    [HTA_CATALOG_GROUPS_ROW] = {"row", HTA_COL_I64},
    [HTA_CATALOG_GROUPS_GROUP] = {"group", HTA_COL_STR},
    [HTA_CATALOG_GROUPS_GROUP_DESC] = {"group_desc", HTA_COL_STR},
    [HTA_CATALOG_GROUPS_GROUP_RANKS] = {"group_ranks", HTA_COL_STR},
};
const hta_table_spec hta_catalog_groups_table = {
    "_catalog_groups", GROUP_PART_COLUMNS, HTA_CATALOG_GROUPS_N_COLUMNS,
    HTA_TABLE_EXCHANGED | HTA_TABLE_SCRATCH};
static const hta_column KIND_PART_COLUMNS[HTA_CATALOG_KINDS_N_COLUMNS] = {
    [HTA_CATALOG_KINDS_COLLECTIVE] = {"collective", HTA_COL_STR},
    [HTA_CATALOG_KINDS_DTYPE] = {"dtype", HTA_COL_STR},
    [HTA_CATALOG_KINDS_IN] = {"in", HTA_COL_I64},
    [HTA_CATALOG_KINDS_OUT] = {"out", HTA_COL_I64},
    [HTA_CATALOG_KINDS_SIZE] = {"size", HTA_COL_I64},
    [HTA_CATALOG_KINDS_PEER] = {"peer", HTA_COL_I64},
};
const hta_table_spec hta_catalog_kinds_table = {
    "_catalog_kinds", KIND_PART_COLUMNS, HTA_CATALOG_KINDS_N_COLUMNS,
    HTA_TABLE_EXCHANGED | HTA_TABLE_SCRATCH};

long hta_parse_int_list(const char *text, int64_t **out)
{
    size_t n = 0, cap = 0;
    int64_t *r = NULL;
    for (const char *p = text; *p;) {
        if (*p < '0' || *p > '9') {
            p++;
            continue;
        }
        char *end;
        long long v = strtoll(p, &end, 10);
        p = end;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            int64_t *grown = realloc(r, cap * sizeof *r);
            if (!grown) {
                free(r);
                return -1;
            }
            r = grown;
        }
        r[n++] = v;
    }
    *out = r;
    return (long)n;
}
/* ---- catalog ------------------------------------------------------------ */

/* What a collective's name makes it: a send, a recv, an all-to-all (by
 * PyTorch's names: send, recv, all_to_all, all_to_allv, alltoall_base)
 * or another collective. */
static int role_of(const char *collective)
{
    if (strcmp(collective, "send") == 0)
        return HTA_KIND_SEND;
    if (strcmp(collective, "recv") == 0)
        return HTA_KIND_RECV;
    if (strstr(collective, "alltoall") || strstr(collective, "all_to_all"))
        return HTA_KIND_ALL_TO_ALL;
    return HTA_KIND_COLLECTIVE;
}

/* A row's kinds ("collective TAB dtype TAB in TAB out TAB size TAB peer"
 * lines),
 * split in place in text; the count, or -1 when malformed or out of
 * memory. */
static long split_kinds(char *text, hta_kind_info **out)
{
    size_t lines = 0;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    hta_kind_info *k = calloc(lines ? lines : 1, sizeof *k);
    if (!k)
        return -1;
    size_t n = 0;
    for (char *line = text, *next; *line; line = next) {
        char *end = strchr(line, '\n'), *field[6];
        if (!end)
            goto malformed;
        *end = '\0';
        next = end + 1;
        field[0] = line;
        for (int f = 1; f < 6; f++) {
            char *tab = strchr(field[f - 1], '\t');
            if (!tab)
                goto malformed;
            *tab = '\0';
            field[f] = tab + 1;
        }
        k[n++] = (hta_kind_info){field[0], field[1], strtoll(field[2], NULL, 10),
                                 strtoll(field[3], NULL, 10), strtoll(field[4], NULL, 10),
                                 strtoll(field[5], NULL, 10), role_of(field[0])};
    }
    *out = k;
    return (long)n;
malformed:
    free(k);
    return -1;
}

static int compare_kind(const void *a, const void *b)
{
    const hta_kind_info *x = a, *y = b;
    int c = strcmp(x->collective, y->collective);
    if (!c)
        c = strcmp(x->dtype, y->dtype);
    if (!c)
        c = (x->in > y->in) - (x->in < y->in);
    if (!c)
        c = (x->out > y->out) - (x->out < y->out);
    if (!c)
        c = (x->size > y->size) - (x->size < y->size);
    if (!c)
        c = (x->peer > y->peer) - (x->peer < y->peer);
    return c;
}

/* name, desc and ranks as one string (no NUL: strtab keys). */
static int variant_key(hta_buf *key, const char *name, const char *desc, const char *ranks)
{
    return hta_buf_append(key, name, strlen(name)) || hta_buf_putc(key, '\x01') ||
           hta_buf_append(key, desc, strlen(desc)) || hta_buf_putc(key, '\x01') ||
           hta_buf_append(key, ranks, strlen(ranks));
}

int hta_comm_catalog_part(const hta_table *comm_ops, hta_tableset *parts)
{
    hta_table *g = hta_tableset_table(parts, &hta_catalog_groups_table);
    hta_table *k = hta_tableset_table(parts, &hta_catalog_kinds_table);
    if (!g || !k)
        return -1;
    /* Rows come in rank order: a variant's first row here is the one
     * that can be the job's first; later ones need not travel. */
    hta_strtab seen;
    hta_strtab_init(&seen);
    hta_buf key = {0};
    int64_t rank = INT64_MIN, row_in_rank = 0;
    for (size_t r = 0; comm_ops && r < comm_ops->n_rows; r++) {
        const hta_cell *row = hta_table_row(comm_ops, r);
        row_in_rank = row[HTA_COMM_OPS_RANK].i == rank ? row_in_rank + 1 : 0;
        rank = row[HTA_COMM_OPS_RANK].i;
        uint32_t before = seen.count, id = UINT32_MAX;
        key.len = 0;
        if (variant_key(&key, row[HTA_COMM_OPS_GROUP].s, row[HTA_COMM_OPS_GROUP_DESC].s,
                        row[HTA_COMM_OPS_GROUP_RANKS].s) == 0)
            id = hta_strtab_intern(&seen, key.data, key.len);
        if (id == UINT32_MAX) {
            hta_buf_free(&key);
            hta_strtab_free(&seen);
            return -1;
        }
        int rc = 0;
        if (id == before) {
            hta_row_builder b = hta_table_add_row(g);
            hta_row_put_i64(&b, rank);
            hta_row_put_i64(&b, row_in_rank);
            hta_row_put_str(&b, row[HTA_COMM_OPS_GROUP].s);
            hta_row_put_str(&b, row[HTA_COMM_OPS_GROUP_DESC].s);
            hta_row_put_str(&b, row[HTA_COMM_OPS_GROUP_RANKS].s);
            rc = hta_row_done(&b);
        }
        char *text = strdup(row[HTA_COMM_OPS_KINDS].s);
        hta_kind_info *kinds = NULL;
        long n = text ? split_kinds(text, &kinds) : -1;
        for (long i = 0; rc == 0 && i < n; i++) {
            hta_row_builder kb = hta_table_add_row(k);
            hta_row_put_str(&kb, kinds[i].collective);
            hta_row_put_str(&kb, kinds[i].dtype);
            hta_row_put_i64(&kb, kinds[i].in);
            hta_row_put_i64(&kb, kinds[i].out);
            hta_row_put_i64(&kb, kinds[i].size);
            hta_row_put_i64(&kb, kinds[i].peer);
            rc = hta_row_done(&kb);
        }
        free(kinds);
        free(text);
        if (rc || n < 0) {
            hta_buf_free(&key);
            hta_strtab_free(&seen);
            return -1;
        }
    }
    hta_buf_free(&key);
    hta_strtab_free(&seen);
    return 0;
}

static int compare_first_appearance(const void *a, const void *b)
{
    const hta_cell *x = *(const hta_cell *const *)a, *y = *(const hta_cell *const *)b;
    if (x[HTA_CATALOG_GROUPS_RANK].i != y[HTA_CATALOG_GROUPS_RANK].i)
        return (x[HTA_CATALOG_GROUPS_RANK].i > y[HTA_CATALOG_GROUPS_RANK].i) -
               (x[HTA_CATALOG_GROUPS_RANK].i < y[HTA_CATALOG_GROUPS_RANK].i);
    return (x[HTA_CATALOG_GROUPS_ROW].i > y[HTA_CATALOG_GROUPS_ROW].i) -
           (x[HTA_CATALOG_GROUPS_ROW].i < y[HTA_CATALOG_GROUPS_ROW].i);
}

static int compare_variant(const void *a, const void *b)
{
    const hta_group_variant *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (!c)
        c = strcmp(x->desc, y->desc);
    return c ? c : strcmp(x->ranks, y->ranks);
}

/* Groups numbered by first appearance in rank order: the numbering the
 * instance order follows, whatever process sent which part.  Variants
 * sorted, without repeats. */
static int build_groups(hta_comm_catalog *c, const hta_table *g)
{
    size_t n = g ? g->n_rows : 0;
    const hta_cell **rows = malloc((n ? n : 1) * sizeof *rows);
    c->groups = calloc(n ? n : 1, sizeof *c->groups);
    c->variants = malloc((n ? n : 1) * sizeof *c->variants);
    if (!rows || !c->groups || !c->variants) {
        free(rows);
        return -1;
    }
    for (size_t r = 0; r < n; r++)
        rows[r] = hta_table_row(g, r);
    qsort(rows, n, sizeof *rows, compare_first_appearance);
    int rc = 0;
    for (size_t r = 0; rc == 0 && r < n; r++) {
        const char *name = rows[r][HTA_CATALOG_GROUPS_GROUP].s;
        uint32_t before = c->names.count;
        uint32_t id = hta_strtab_intern(&c->names, name, strlen(name));
        if (id == UINT32_MAX)
            rc = -1;
        else if (id == before)
            c->groups[c->n_groups++] = (hta_group_info){name, NULL, 0};
        c->variants[r] = (hta_group_variant){name, rows[r][HTA_CATALOG_GROUPS_GROUP_DESC].s,
                                             rows[r][HTA_CATALOG_GROUPS_GROUP_RANKS].s};
    }
    free(rows);
    qsort(c->variants, n, sizeof *c->variants, compare_variant);
    for (size_t r = 0; r < n; r++)
        if (c->n_variants == 0 || compare_variant(&c->variants[c->n_variants - 1], &c->variants[r]))
            c->variants[c->n_variants++] = c->variants[r];
    return rc;
}

void hta_group_firsts_init(hta_group_first *firsts, size_t n_groups)
{
    for (size_t g = 0; g < n_groups; g++)
        firsts[g] = (hta_group_first){INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX};
}

static int first_before(const hta_group_first *a, const hta_group_first *b)
{
    if (a->by_seq != b->by_seq)
        return a->by_seq < b->by_seq;
    if (a->key != b->key)
        return a->key < b->key;
    return a->rank < b->rank;
}

void hta_group_firsts_lower(hta_group_first *firsts, const hta_group_op *ops, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const hta_group_op *o = &ops[i];
        hta_group_first f = {o->by_seq, o->key, o->rank, o->variant};
        if (first_before(&f, &firsts[o->group]))
            firsts[o->group] = f;
    }
}

void hta_group_first_merge(const hta_group_first *a, hta_group_first *b)
{
    if (first_before(a, b))
        *b = *a;
}

int hta_comm_catalog_set_members(hta_comm_catalog *c, const hta_group_first *firsts)
{
    for (size_t g = 0; g < c->n_groups; g++) {
        hta_group_info *info = &c->groups[g];
        free(info->members);
        info->members = NULL;
        info->n_members = 0;
        if (firsts[g].variant < 0 || (size_t)firsts[g].variant >= c->n_variants)
            continue;
        info->n_members = hta_parse_int_list(c->variants[firsts[g].variant].ranks, &info->members);
        if (info->n_members < 0)
            return -1;
    }
    return 0;
}

static int build_kinds(hta_comm_catalog *c, const hta_table *k)
{
    size_t n = k ? k->n_rows : 0;
    c->kinds = malloc((n ? n : 1) * sizeof *c->kinds);
    if (!c->kinds)
        return -1;
    for (size_t r = 0; r < n; r++) {
        const hta_cell *row = hta_table_row(k, r);
        c->kinds[r] = (hta_kind_info){row[HTA_CATALOG_KINDS_COLLECTIVE].s,
                                      row[HTA_CATALOG_KINDS_DTYPE].s,
                                      row[HTA_CATALOG_KINDS_IN].i,
                                      row[HTA_CATALOG_KINDS_OUT].i,
                                      row[HTA_CATALOG_KINDS_SIZE].i,
                                      row[HTA_CATALOG_KINDS_PEER].i,
                                      role_of(row[HTA_CATALOG_KINDS_COLLECTIVE].s)};
    }
    qsort(c->kinds, n, sizeof *c->kinds, compare_kind);
    for (size_t r = 0; r < n; r++)
        if (c->n_kinds == 0 || compare_kind(&c->kinds[c->n_kinds - 1], &c->kinds[r]) != 0)
            c->kinds[c->n_kinds++] = c->kinds[r];
    return 0;
}

int hta_comm_catalog_build(hta_comm_catalog *c, hta_tableset *parts)
{
    *c = (hta_comm_catalog){.parts = *parts};
    *parts = (hta_tableset){0};
    hta_strtab_init(&c->names);
    if (build_groups(c, hta_tableset_find(&c->parts, hta_catalog_groups_table.name)) ||
        build_kinds(c, hta_tableset_find(&c->parts, hta_catalog_kinds_table.name)))
        return -1;
    return 0;
}

void hta_comm_catalog_free(hta_comm_catalog *c)
{
    for (size_t g = 0; c->groups && g < c->n_groups; g++)
        free(c->groups[g].members);
    free(c->groups);
    free(c->variants);
    free(c->kinds);
    hta_strtab_free(&c->names);
    hta_tableset_free(&c->parts);
    *c = (hta_comm_catalog){0};
}

/* ---- lookups ----------------------------------------------------------- */

int64_t hta_pair_key(int64_t src, int64_t dst, int64_t k)
{
    return (src << (2 * HTA_PAIR_BITS)) | (dst << HTA_PAIR_BITS) | k;
}

int64_t hta_pair_src(int64_t key)
{
    return key >> (2 * HTA_PAIR_BITS);
}

int64_t hta_pair_dst(int64_t key)
{
    return (key >> HTA_PAIR_BITS) & HTA_PAIR_MASK;
}

int64_t hta_pair_index(int64_t key)
{
    return key & HTA_PAIR_MASK;
}

int hta_comm_catalog_kind_ids(const hta_comm_catalog *c, const char *kinds, uint32_t **ids,
                              size_t *n_ids)
{
    char *text = strdup(kinds);
    hta_kind_info *k = NULL;
    long n = text ? split_kinds(text, &k) : -1;
    *ids = malloc((n > 0 ? (size_t)n : 1) * sizeof **ids);
    int rc = n < 0 || !*ids ? -1 : 0;
    for (long i = 0; rc == 0 && i < n; i++) {
        const hta_kind_info *hit = bsearch(&k[i], c->kinds, c->n_kinds, sizeof *c->kinds,
                                           compare_kind);
        rc = hit ? 0 : -1;
        (*ids)[i] = hit ? (uint32_t)(hit - c->kinds) : 0;
    }
    *n_ids = n > 0 ? (size_t)n : 0;
    free(k);
    free(text);
    return rc;
}

long hta_comm_catalog_variant(const hta_comm_catalog *c, const char *name, const char *desc,
                              const char *ranks)
{
    hta_group_variant v = {name, desc, ranks};
    const hta_group_variant *hit = bsearch(&v, c->variants, c->n_variants, sizeof *c->variants,
                                           compare_variant);
    return hit ? (long)(hit - c->variants) : -1;
}

int hta_group_op_compare_rank_start(const void *a, const void *b, void *ctx)
{
    const hta_group_op *ops = ctx, *x = &ops[*(const size_t *)a], *y = &ops[*(const size_t *)b];
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b);
}
