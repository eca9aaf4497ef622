/* name_groups.c: rows grouped by name (see crossrank/compare/name_groups.h). */
#include "crossrank/compare/name_groups.h"

#include <stdlib.h>
#include <string.h>

typedef struct named {
    const char *name;          /* borrowed from the groups' string table */
    uint32_t id;
} named;

static int compare_named(const void *a, const void *b)
{
    return strcmp(((const named *)a)->name, ((const named *)b)->name);
}

void hta_name_groups_free(hta_name_groups *g)
{
    hta_strtab_free(&g->names);
    free(g->start);
    free(g->row_of);
    free(g->in_name_order);
}

/* Counting sort of the rows by name id, stable so each group keeps rank
 * order. */
static int group_rows(const hta_table *t, long name_col, hta_name_groups *g)
{
    size_t n = t->n_rows ? t->n_rows : 1;
    uint32_t *id = malloc(n * sizeof *id);
    g->row_of = malloc(n * sizeof *g->row_of);
    int rc = id && g->row_of ? 0 : -1;
    for (size_t r = 0; rc == 0 && r < t->n_rows; r++) {
        const char *s = hta_table_row(t, r)[name_col].s;
        id[r] = hta_strtab_intern(&g->names, s, strlen(s));
        rc = id[r] == UINT32_MAX ? -1 : 0;
    }
    if (rc == 0)
        rc = (g->start = calloc((size_t)g->names.count + 2, sizeof *g->start)) ? 0 : -1;
    for (size_t r = 0; rc == 0 && r < t->n_rows; r++)
        g->start[id[r] + 2]++;
    for (uint32_t k = 0; rc == 0 && k < g->names.count; k++)
        g->start[k + 2] += g->start[k + 1];
    for (size_t r = 0; rc == 0 && r < t->n_rows; r++)
        g->row_of[g->start[id[r] + 1]++] = r;
    free(id);
    return rc;
}

static int sort_names(hta_name_groups *g)
{
    uint32_t count = g->names.count;
    named *order = malloc(((size_t)count + 1) * sizeof *order);
    g->in_name_order = malloc(((size_t)count + 1) * sizeof *g->in_name_order);
    if (!order || !g->in_name_order) {
        free(order);
        return -1;
    }
    for (uint32_t k = 0; k < count; k++)
        order[k] = (named){hta_strtab_get(&g->names, k), k};
    qsort(order, count, sizeof *order, compare_named);
    for (uint32_t i = 0; i < count; i++)
        g->in_name_order[i] = order[i].id;
    free(order);
    return 0;
}

int hta_name_groups_build(const hta_table *t, long name_col, hta_name_groups *g)
{
    memset(g, 0, sizeof *g);
    hta_strtab_init(&g->names);
    return group_rows(t, name_col, g) == 0 && sort_names(g) == 0 ? 0 : -1;
}
