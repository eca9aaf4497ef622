/* hosts.c: the node of every analysed rank (definitions, "Nodes").
 *
 * Ranks of one node share its NIC, its power and cooling and its clock,
 * so a fault of the node shows on all of them at once.  The trace does
 * not say which node it came from, but PyTorch's tensorboard_trace_handler
 * names its files HOST_PID.TIMESTAMP.pt.trace.json, the host being
 * socket.gethostname(); --gpus-per-node N says it for any file names
 * (ranks 0..N-1 on the first node, as launchers place them).  When
 * neither applies to every analysed rank, no node is known: a partial
 * map would put the unnamed ranks on a node of their own. */
#include "crossrank/hosts.h"

#include "analysis/ranks_table.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const TRACE_SUFFIXES[] = {".pt.trace.json.gz", ".pt.trace.json"};

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* Whether [s, end) is one or more digits. */
static int all_digits(const char *s, const char *end)
{
    if (s >= end)
        return 0;
    for (; s < end; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

const char *hta_host_from_file_name(const char *path, size_t *len)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    size_t stem = 0;
    for (size_t i = 0; i < sizeof TRACE_SUFFIXES / sizeof *TRACE_SUFFIXES && !stem; i++)
        if (ends_with(base, n, TRACE_SUFFIXES[i]))
            stem = n - strlen(TRACE_SUFFIXES[i]);
    if (!stem)
        return NULL;
    const char *end = base + stem, *dot = end;
    while (dot > base && dot[-1] != '.')
        dot--;
    if (dot == base || !all_digits(dot, end))
        return NULL;
    const char *pid_end = dot - 1, *under = pid_end;
    while (under > base && under[-1] != '_')
        under--;
    if (under == base || !all_digits(under, pid_end) || under - 1 == base)
        return NULL;
    *len = (size_t)(under - 1 - base);
    return base;
}

void hta_rank_hosts_free(hta_rank_hosts *h)
{
    free(h->rank);
    free(h->node);
    hta_strtab_free(&h->names);
    *h = (hta_rank_hosts){0};
}

/* The node name of row's rank; -1 when it has none, -2 out of memory. */
static int64_t node_of(const hta_cell *row, long file, int gpus_per_node, hta_strtab *names)
{
    char name[32];
    const char *host = name;
    size_t len;
    if (gpus_per_node > 0)
        len = (size_t)snprintf(name, sizeof name, "node%lld",
                               (long long)(row[0].i / gpus_per_node));
    else if (!(host = hta_host_from_file_name(row[file].s, &len)))
        return -1;
    uint32_t id = hta_strtab_intern(names, host, len);
    return id == UINT32_MAX ? -2 : (int64_t)id;
}

int hta_rank_hosts_find(const hta_tableset *set, int gpus_per_node, hta_rank_hosts *out)
{
    *out = (hta_rank_hosts){0};
    hta_strtab_init(&out->names);
    const hta_table *ranks = hta_tableset_find(set, hta_ranks_table.name);
    const long file = HTA_RANKS_FILE, status = HTA_RANKS_STATUS;
    if (!ranks || ranks->n_rows == 0)
        return 0;
    out->rank = malloc(ranks->n_rows * sizeof *out->rank);
    out->node = malloc(ranks->n_rows * sizeof *out->node);
    if (!out->rank || !out->node)
        return -1;
    size_t n = 0;
    for (size_t r = 0; r < ranks->n_rows; r++) {
        const hta_cell *row = hta_table_row(ranks, r);
        if (strcmp(row[status].s, "failed") == 0)
            continue;
        int64_t node = node_of(row, file, gpus_per_node, &out->names);
        if (node == -2)
            return -1;
        if (node < 0) {
            hta_rank_hosts_free(out);
            hta_strtab_init(&out->names);
            return 0;
        }
        out->rank[n] = row[0].i;
        out->node[n++] = (uint32_t)node;
    }
    out->n_ranks = n;
    return 0;
}
