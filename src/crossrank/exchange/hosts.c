/* hosts.c: the node of every analysed rank (definitions, "Nodes").
 *
 * Ranks of one node share its NIC, its power and cooling and its clock,
 * so a fault of the node shows on all of them at once.  A Kineto trace
 * does not say which node it came from, but PyTorch's
 * tensorboard_trace_handler names its files HOST_PID.TIMESTAMP.pt.trace.json,
 * the host being socket.gethostname(), and an Nsight Systems export
 * records the HOSTNAME of the profiled process: run/analyse_file.c puts
 * either into /ranks.host.  --hostfile (Open MPI's) and --gpus-per-node N
 * say it for any traces (ranks 0..N-1 on the first node, as launchers
 * place them) and come first.  When none applies to every analysed rank,
 * no node is known: a partial map would put the unnamed ranks on a node
 * of their own. */
#include "crossrank/exchange/hosts.h"

#include "analysis/ranks_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hta_rank_hosts_free(hta_rank_hosts *h)
{
    free(h->rank);
    free(h->node);
    hta_strtab_free(&h->names);
    *h = (hta_rank_hosts){0};
}

void hta_hostfile_free(hta_hostfile *hf)
{
    hta_strtab_free(&hf->hosts);
    free(hf->slots);
    hf->slots = NULL;
}

/* One line: its host and slots into hf; 0, or -1 when malformed. */
static int read_hostfile_line(char *line, hta_hostfile *hf)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    char *save = NULL, *host = strtok_r(line, " \t\r\n", &save);
    if (!host)
        return 0;
    long long slots = 1;
    for (char *word = strtok_r(NULL, " \t\r\n", &save); word;
         word = strtok_r(NULL, " \t\r\n", &save)) {
        char *end;
        if (strncmp(word, "slots=", 6) == 0 &&
            ((slots = strtoll(word + 6, &end, 10)) < 1 || *end))
            return -1;
    }
    uint32_t before = hf->hosts.count, id = hta_strtab_intern(&hf->hosts, host, strlen(host));
    if (id == UINT32_MAX || id < before)
        return -1;             /* out of memory, or a host listed twice */
    int64_t *grown = realloc(hf->slots, hf->hosts.count * sizeof *grown);
    if (!grown)
        return -1;
    hf->slots = grown;
    hf->slots[id] = slots;
    return 0;
}

int hta_hostfile_read(const char *path, hta_hostfile *hf, hta_error *err)
{
    hta_strtab_init(&hf->hosts);
    hf->slots = NULL;
    FILE *f = fopen(path, "r");
    if (!f)
        return hta_fail(err, "--hostfile %s: cannot be read", path);
    char line[4096];
    int rc = 0;
    for (long n = 1; rc == 0 && fgets(line, sizeof line, f); n++)
        if (read_hostfile_line(line, hf))
            rc = hta_fail(err, "--hostfile %s: line %ld is not HOST [slots=N] (or the host is "
                          "listed twice)", path, n);
    fclose(f);
    if (rc == 0 && hf->hosts.count == 0)
        rc = hta_fail(err, "--hostfile %s: no host", path);
    if (rc)
        hta_hostfile_free(hf);
    return rc;
}

/* The host of rank by the hostfile's slots in order; NULL past them. */
static const char *hostfile_host(const hta_hostfile *hf, int64_t rank)
{
    for (uint32_t h = 0; h < hf->hosts.count; h++) {
        if (rank < hf->slots[h])
            return hta_strtab_get(&hf->hosts, h);
        rank -= hf->slots[h];
    }
    return NULL;
}

/* The node name of row's rank; -1 when it has none, -2 out of memory. */
static int64_t node_of(const hta_cell *row, int gpus_per_node, const hta_hostfile *hf,
                       hta_strtab *names)
{
    char name[32];
    const char *host = name;
    size_t len;
    if (hf) {
        if (!(host = hostfile_host(hf, row[0].i)))
            return -1;
        len = strlen(host);
    } else if (gpus_per_node > 0) {
        len = (size_t)snprintf(name, sizeof name, "node%lld",
                               (long long)(row[0].i / gpus_per_node));
    } else if (!*(host = row[HTA_RANKS_HOST].s)) {
        return -1;
    } else {
        len = strlen(host);
    }
    uint32_t id = hta_strtab_intern(names, host, len);
    return id == UINT32_MAX ? -2 : (int64_t)id;
}

/* The ranks' nodes into out, with hf when given. */
static int place_ranks(const hta_table *ranks, int gpus_per_node, const hta_hostfile *hf,
                       hta_rank_hosts *out)
{
    out->rank = malloc(ranks->n_rows * sizeof *out->rank);
    out->node = malloc(ranks->n_rows * sizeof *out->node);
    if (!out->rank || !out->node)
        return -1;
    size_t n = 0;
    for (size_t r = 0; r < ranks->n_rows; r++) {
        const hta_cell *row = hta_table_row(ranks, r);
        if (strcmp(row[HTA_RANKS_STATUS].s, "failed") == 0)
            continue;
        int64_t node = node_of(row, gpus_per_node, hf, &out->names);
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

int hta_rank_hosts_find(const hta_tableset *set, const hta_crossrank_settings *opt,
                        hta_rank_hosts *out, hta_error *err)
{
    *out = (hta_rank_hosts){0};
    hta_strtab_init(&out->names);
    const hta_table *ranks = hta_tableset_find(set, hta_ranks_table.name);
    if (!ranks || ranks->n_rows == 0)
        return 0;
    hta_hostfile hf;
    if (opt->hostfile && hta_hostfile_read(opt->hostfile, &hf, err))
        return -1;
    int rc = place_ranks(ranks, opt->gpus_per_node, opt->hostfile ? &hf : NULL, out);
    if (opt->hostfile)
        hta_hostfile_free(&hf);
    return rc ? hta_fail(err, "out of memory finding the ranks' nodes") : 0;
}
