/* critical_path_longest.c: the longest path through a step's graph (see
 * analysis/critical_path_internal.h).
 *
 * Ties between equally long paths are broken as networkx does: the first
 * predecessor with the longest distance, the first node in topological
 * order (Kahn's, generation by generation) with the longest distance. */
#include "analysis/critical_path_internal.h"

#include <string.h>

/* Lists each node's outgoing edges (ids in order of insertion) from
 * first[v] to first[v + 1], and counts its incoming edges in indeg[v]:
 * counted, summed, then placed from the last edge back. */
static void list_out_edges(const graph *g, uint32_t *first, uint32_t *list, uint32_t *indeg)
{
    size_t nv = g->n_nodes, ne = g->n_edges;
    memset(first, 0, (nv + 1) * sizeof *first);
    memset(indeg, 0, nv * sizeof *indeg);
    for (size_t i = 0; i < ne; i++) {
        first[g->edges[i].src]++;
        indeg[g->edges[i].dst]++;
    }
    for (size_t v = 1; v <= nv; v++)
        first[v] += first[v - 1];
    for (size_t i = ne; i-- > 0;)
        list[--first[g->edges[i].src]] = (uint32_t)i;
}

/* Kahn's topological order, generation by generation as networkx visits
 * the nodes, into order; 0 when the graph has a cycle. */
static int kahn_order(rank_state *r, uint32_t *order)
{
    const graph *g = &r->g;
    size_t nv = g->n_nodes;
    uint32_t *out_first = scratch(r, S_OUT_FIRST, nv + 1, sizeof *out_first);
    uint32_t *out_list = scratch(r, S_OUT_LIST, g->n_edges, sizeof *out_list);
    uint32_t *indeg = scratch(r, S_INDEG, nv, sizeof *indeg);
    if (!out_first || !out_list || !indeg)
        return -1;
    list_out_edges(g, out_first, out_list, indeg);
    size_t head = 0, tail = 0;
    for (size_t v = 0; v < nv; v++)
        if (indeg[v] == 0)
            order[tail++] = (uint32_t)v;
    while (head < tail) {
        uint32_t v = order[head++];
        for (uint32_t j = out_first[v]; j < out_first[v + 1]; j++) {
            uint32_t w = g->edges[out_list[j]].dst;
            if (--indeg[w] == 0)
                order[tail++] = w;
        }
    }
    return tail == nv;
}

/* Node v's distance: its longest predecessor's plus the edge (the first
 * such in insertion order), 0 and no edge when none is positive. */
static void relax(const graph *g, int64_t *dist, int64_t *via, uint32_t v)
{
    /* Distances are never negative and weights above -1 us: any candidate
     * beats INT64_MIN. */
    int64_t d = INT64_MIN, from = -1;
    for (uint32_t id = g->in_first[v]; id != UINT32_MAX; id = g->edges[id].next_in) {
        const edge *e = &g->edges[id];
        /* HTA zeroes a weight of -1 us or less before the search. */
        int64_t w = e->weight <= -1000 ? 0 : e->weight;
        int64_t cand = dist[e->src] + w;
        if (cand > d) {
            d = cand;
            from = id;
        }
    }
    if (d < 0) {
        d = 0;
        from = -1;
    }
    dist[v] = d;
    via[v] = from;
}

/* networkx's dag_longest_path on the graph, in O(V + E): distances in
 * topological order, the path ending at the first node of greatest
 * distance in Kahn's order.  Most steps' edges all go forward in node
 * order (time): node order is then topological, and Kahn's order is
 * needed only when several nodes share the greatest distance. */
int cp_longest_path(rank_state *r, path *out)
{
    const graph *g = &r->g;
    size_t nv = g->n_nodes;
    out->n = 0;
    out->ok = 1;
    uint32_t *order = scratch(r, S_ORDER, nv, sizeof *order);
    int64_t *dist = scratch(r, S_DIST, nv, sizeof *dist);
    int64_t *via = scratch(r, S_VIA, nv, sizeof *via); /* edge id, -1 = none */
    if (!order || !dist || !via)
        return -1;
    int have_order = g->backward;
    if (have_order) {
        int acyclic = kahn_order(r, order);
        if (acyclic < 0)
            return -1;
        if (!acyclic) {
            out->ok = 0;
            return 0;
        }
    }
    int64_t best = INT64_MIN;
    long best_v = -1;
    size_t n_best = 0;
    for (size_t i = 0; i < nv; i++) {
        uint32_t v = have_order ? order[i] : (uint32_t)i;
        relax(g, dist, via, v);
        if (dist[v] > best) {
            best = dist[v];
            best_v = v;
            n_best = 0;
        }
        n_best += dist[v] == best;
    }
    if (n_best > 1 && !have_order) {
        if (kahn_order(r, order) < 0)
            return -1;
        for (size_t i = 0; i < nv; i++)
            if (dist[order[i]] == best) {
                best_v = order[i];
                break;
            }
    }
    if (best_v >= 0) {
        if (hta_grow_array((void **)&out->edges, &out->cap, nv + 1, sizeof *out->edges))
            return -1;
        for (long v = best_v; via[v] >= 0; v = g->edges[via[v]].src)
            out->edges[out->n++] = (uint32_t)via[v];
        for (size_t i = 0; i < out->n / 2; i++) {
            uint32_t x = out->edges[i];
            out->edges[i] = out->edges[out->n - 1 - i];
            out->edges[out->n - 1 - i] = x;
        }
    }
    return 0;
}

