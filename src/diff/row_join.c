/* row_join.c: full outer join of two tables on key columns (see
 * diff/row_join.h).  A merge of the two key-sorted index arrays: tables of
 * tens of thousands of rows (every kernel of every rank) join in
 * milliseconds, with no hash table to size. */
#define _GNU_SOURCE /* qsort_r */
#include "diff/row_join.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_KEYS = 8 };

typedef struct key_spec {
    const hta_table *table;
    long columns[MAX_KEYS];
    size_t n;
} key_spec;

static int compare_cells(const hta_table *ta, const hta_cell *a, long ca, const hta_cell *b,
                         long cb)
{
    switch (ta->columns[ca].type) {
    case HTA_COL_I64: return (a[ca].i > b[cb].i) - (a[ca].i < b[cb].i);
    case HTA_COL_F64: return (a[ca].f > b[cb].f) - (a[ca].f < b[cb].f);
    default: return strcmp(a[ca].s, b[cb].s);
    }
}

static int compare_keys(const key_spec *ka, const hta_cell *a, const key_spec *kb,
                        const hta_cell *b)
{
    for (size_t k = 0; k < ka->n; k++) {
        int c = compare_cells(ka->table, a, ka->columns[k], b, kb->columns[k]);
        if (c)
            return c;
    }
    return 0;
}

static int compare_indices(const void *x, const void *y, void *ctx)
{
    const key_spec *ks = ctx;
    size_t i = *(const size_t *)x, j = *(const size_t *)y;
    int c = compare_keys(ks, hta_table_row(ks->table, i), ks, hta_table_row(ks->table, j));
    return c ? c : (i > j) - (i < j);
}

static int find_keys(const hta_table *t, const char *const *keys, size_t n_keys, key_spec *ks,
                     hta_error *err)
{
    ks->table = t;
    ks->n = n_keys;
    for (size_t k = 0; t && k < n_keys; k++)
        if ((ks->columns[k] = hta_table_column(t, keys[k])) < 0)
            return hta_fail(err, "table /%s has no column %s", t->name, keys[k]);
    return 0;
}

static size_t *sorted_order(key_spec *ks)
{
    size_t n = ks->table ? ks->table->n_rows : 0;
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!order)
        return NULL;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    if (n)
        qsort_r(order, n, sizeof *order, compare_indices, ks);
    return order;
}

static int same_key_types(const key_spec *a, const key_spec *b)
{
    for (size_t k = 0; a->table && b->table && k < a->n; k++)
        if (a->table->columns[a->columns[k]].type != b->table->columns[b->columns[k]].type)
            return 0;
    return 1;
}

int hta_join_rows(const hta_table *base, const hta_table *new_, const char *const *keys,
                  size_t n_keys, hta_join_fn fn, void *ctx, hta_error *err)
{
    key_spec kb, kn;
    if (n_keys > MAX_KEYS)
        return hta_fail(err, "too many key columns");
    if (find_keys(base, keys, n_keys, &kb, err) || find_keys(new_, keys, n_keys, &kn, err))
        return -1;
    if (!same_key_types(&kb, &kn))
        return hta_fail(err, "/%s: key columns of different types in the two files",
                        base->name);
    size_t *ob = sorted_order(&kb), *on = sorted_order(&kn);
    int rc = ob && on ? 0 : hta_fail(err, "out of memory");
    size_t nb = base ? base->n_rows : 0, nn = new_ ? new_->n_rows : 0, i = 0, j = 0;
    while (rc == 0 && (i < nb || j < nn)) {
        const hta_cell *a = i < nb ? hta_table_row(base, ob[i]) : NULL;
        const hta_cell *b = j < nn ? hta_table_row(new_, on[j]) : NULL;
        int c = !a ? 1 : !b ? -1 : compare_keys(&kb, a, &kn, b);
        rc = fn(c <= 0 ? a : NULL, c >= 0 ? b : NULL, ctx);
        i += c <= 0;
        j += c >= 0;
    }
    free(ob);
    free(on);
    return rc;
}
