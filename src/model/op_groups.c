/* op_groups.c: (name, signature) -> dense group index (see model/op_groups.h). */
#include "model/op_groups.h"

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/strtab.h"

static int intern_signatures(hta_op_groups *g)
{
    hta_strtab sigs;
    hta_strtab_init(&sigs);
    hta_buf key = {0};
    g->signature = malloc((g->contexts.n + 1) * sizeof *g->signature);
    int rc = g->signature ? 0 : -1;
    for (size_t c = 0; rc == 0 && c <= g->contexts.n; c++) { /* the unknown one too */
        const hta_cpu_context *ctx = &g->contexts.of[c];
        key.len = 0;
        rc = hta_buf_append(&key, ctx->input_dims, strlen(ctx->input_dims)) ||
             hta_buf_putc(&key, '\t') ||
             hta_buf_append(&key, ctx->input_type, strlen(ctx->input_type));
        if (rc == 0)
            g->signature[c] = hta_strtab_intern(&sigs, key.data ? key.data : "", key.len);
        rc = rc || g->signature[c] == UINT32_MAX ? -1 : 0;
    }
    hta_buf_free(&key);
    hta_strtab_free(&sigs);
    return rc;
}

int hta_op_groups_init(hta_op_groups *g, const hta_trace *t)
{
    memset(g, 0, sizeof *g);
    if (hta_cpu_contexts_build(&g->contexts, t) == 0 && intern_signatures(g) == 0)
        return 0;
    hta_op_groups_free(g);
    return -1;
}

void hta_op_groups_free(hta_op_groups *g)
{
    hta_cpu_contexts_free(&g->contexts);
    free(g->signature);
    free(g->keys);
    free(g->values);
    memset(g, 0, sizeof *g);
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static int grow(hta_op_groups *g)
{
    size_t n_slots = g->n_slots ? 2 * g->n_slots : 1024;
    uint64_t *keys = calloc(n_slots, sizeof *keys);
    uint32_t *values = malloc(n_slots * sizeof *values);
    if (!keys || !values) {
        free(keys);
        free(values);
        return -1;
    }
    for (size_t i = 0; i < g->n_slots; i++) {
        if (!g->keys[i])
            continue;
        size_t s = mix(g->keys[i]) & (n_slots - 1);
        while (keys[s])
            s = (s + 1) & (n_slots - 1);
        keys[s] = g->keys[i];
        values[s] = g->values[i];
    }
    free(g->keys);
    free(g->values);
    g->keys = keys;
    g->values = values;
    g->n_slots = n_slots;
    return 0;
}

size_t hta_op_groups_find(hta_op_groups *g, const hta_event *op)
{
    g->fresh = 0;
    if ((g->n + 1) * 2 > g->n_slots && grow(g))
        return SIZE_MAX;
    uint32_t signature = g->signature[hta_cpu_context_index(&g->contexts, op)];
    uint64_t key = ((uint64_t)op->name << 32 | signature) + 1;
    size_t s = mix(key) & (g->n_slots - 1);
    for (; g->keys[s]; s = (s + 1) & (g->n_slots - 1))
        if (g->keys[s] == key)
            return g->values[s];
    g->keys[s] = key;
    g->values[s] = (uint32_t)g->n;
    g->fresh = 1;
    return g->n++;
}

int hta_op_groups_compare(const hta_op_groups *g, const hta_trace *t, uint32_t name_x,
                          uint32_t context_x, uint32_t name_y, uint32_t context_y)
{
    int c = strcmp(hta_strtab_get(&t->names, name_x), hta_strtab_get(&t->names, name_y));
    const hta_cpu_context *cx = &g->contexts.of[context_x], *cy = &g->contexts.of[context_y];
    if (c == 0)
        c = strcmp(cx->input_dims, cy->input_dims);
    return c ? c : strcmp(cx->input_type, cy->input_type);
}
