/* ranks.c: from file indices to rank numbers, on the root after the
 * gather (definitions section 1).
 *
 * Until now the "rank" column of every table flagged HTA_TABLE_PER_RANK
 * (table/table.h) held the file's index in the sorted file list, because
 * a trace's rank is only known once it has been parsed and fallback
 * numbers depend on every other file.  Here, in file order: a
 * claimed rank (distributedInfo, else file name) is taken unless an earlier
 * file holds it, in which case this file fails with an error naming both;
 * unclaimed files get the lowest numbers nobody claimed.  Rows of failed
 * files and of ranks outside --ranks are dropped from the analysis tables.
 * The outcome is a map from file index to rank, which the root applies to
 * the gathered tables and every process to the tables it writes in place
 * (output/hdf5_in_place.c). */

#include "run/ranks.h"

#include "analysis/ranks_table.h"
#include "crossrank/exchange/hosts.h"
#include "numerics/bounds.h"
#include "parse/fr_dump.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* A Flight Recorder dump holds the same rank as that rank's trace beside
 * it: dumps and traces claim ranks apart. */
static int is_dump_row(const hta_cell *row)
{
    return strcmp(row[HTA_RANKS_INPUT_FORMAT].s, HTA_FR_INPUT_FORMAT) == 0;
}

static int claimed_before(const hta_table *ranks, size_t upto, long claimed_col,
                          int64_t rank, int dump, size_t *holder)
{
    for (size_t j = 0; j < upto; j++) {
        const hta_cell *row = hta_table_row(ranks, j);
        if (row[claimed_col].i == rank && is_dump_row(row) == dump) {
            *holder = j;
            return 1;
        }
    }
    return 0;
}

static int rank_is_claimed(const hta_table *ranks, long claimed_col, int64_t rank, int dump)
{
    size_t unused;
    return claimed_before(ranks, ranks->n_rows, claimed_col, rank, dump, &unused);
}

static void set_failed(hta_cell *row, long status_col, long error_col, const char *error)
{
    free(row[status_col].s);
    free(row[error_col].s);
    row[status_col].s = strdup("failed");
    row[error_col].s = strdup(error);
}

/* Duplicate detection scans earlier rows: quadratic in the number of files,
 * which stays well under a second for the thousands of ranks of real jobs. */
static int assign_ranks(hta_table *ranks, hta_rank_map *map)
{
    int64_t next_free = 0;
    for (size_t i = 0; i < ranks->n_rows; i++) {
        hta_cell *row = hta_table_row(ranks, i);
        int64_t file_index = row[0].i;
        size_t holder;
        int dump = is_dump_row(row);
        if (row[HTA_RANKS_CLAIMED_RANK].i >= 0 &&
            claimed_before(ranks, i, HTA_RANKS_CLAIMED_RANK, row[HTA_RANKS_CLAIMED_RANK].i, dump,
                           &holder)) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s: rank %lld is also claimed by %s", row[HTA_RANKS_FILE].s,
                     (long long)row[HTA_RANKS_CLAIMED_RANK].i,
                     hta_table_row(ranks, holder)[HTA_RANKS_FILE].s);
            set_failed(row, HTA_RANKS_STATUS, HTA_RANKS_ERROR, msg);
            row[0].i = row[HTA_RANKS_CLAIMED_RANK].i;
            map->rank_of_file[file_index] = -1;
            continue;
        }
        if (row[HTA_RANKS_CLAIMED_RANK].i < 0) {
            while (rank_is_claimed(ranks, HTA_RANKS_CLAIMED_RANK, next_free, dump))
                next_free++;
            row[0].i = next_free++;
            free(row[HTA_RANKS_RANK_SOURCE].s);
            row[HTA_RANKS_RANK_SOURCE].s = strdup("fallback");
        } else {
            row[0].i = row[HTA_RANKS_CLAIMED_RANK].i;
        }
        int ok = strcmp(row[HTA_RANKS_STATUS].s, "failed") != 0;
        map->rank_of_file[file_index] = ok ? row[0].i : -1;
    }
    return 0;
}

static int keep_mapped(const hta_cell *row, void *ctx)
{
    const hta_rank_map *map = ctx;
    return row[0].i >= 0 && (size_t)row[0].i < map->n_files &&
           map->rank_of_file[row[0].i] >= 0;
}

static int is_wanted(const void *ctx, int64_t rank)
{
    return hta_rank_list_has(ctx, rank);
}

static int keep_wanted(const hta_cell *row, void *ctx)
{
    return hta_rank_list_has(ctx, row[0].i);
}

void hta_rank_map_free(hta_rank_map *map)
{
    free(map->rank_of_file);
    free(map->node_of_file);
    hta_rank_hosts_free(&map->hosts);
    map->rank_of_file = NULL;
    map->node_of_file = NULL;
    map->n_files = 0;
}

static int compare_rank(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t *hta_rank_map_kept_ranks(const hta_rank_map *map, size_t *n)
{
    int64_t *kept = malloc((map->n_files ? map->n_files : 1) * sizeof *kept);
    *n = 0;
    if (!kept)
        return NULL;
    for (size_t f = 0; f < map->n_files; f++)
        if (map->rank_of_file[f] >= 0)
            kept[(*n)++] = map->rank_of_file[f];
    qsort(kept, *n, sizeof *kept, compare_rank);
    size_t unique = 0;   /* a rank's trace and its Flight Recorder dump */
    for (size_t i = 0; i < *n; i++)
        if (unique == 0 || kept[unique - 1] != kept[i])
            kept[unique++] = kept[i];
    *n = unique;
    return kept;
}

int hta_apply_rank_map(hta_tableset *set, const hta_rank_map *map, hta_error *err)
{
    for (size_t i = 0; i < set->n_tables; i++) {
        hta_table *t = set->tables[i];
        if (!(t->flags & HTA_TABLE_PER_RANK) || strcmp(t->name, hta_ranks_table.name) == 0)
            continue;
        hta_table_filter(t, keep_mapped, (void *)map);
        for (size_t r = 0; r < t->n_rows; r++) {
            hta_cell *row = hta_table_row(t, r);
            row[0].i = map->rank_of_file[row[0].i];
        }
        if (hta_table_sort_by_first_column(t))
            return hta_fail(err, "out of memory");
    }
    return 0;
}

/* The map covers every file index that appears in the ranks table. */
static int alloc_rank_map(const hta_table *ranks, hta_rank_map *map)
{
    size_t n = 0;
    for (size_t r = 0; r < ranks->n_rows; r++) {
        int64_t file_index = hta_table_row(ranks, r)[0].i;
        if (file_index >= 0 && (size_t)file_index >= n)
            n = (size_t)file_index + 1;
    }
    map->n_files = n;
    map->rank_of_file = malloc((n ? n : 1) * sizeof *map->rank_of_file);
    for (size_t f = 0; map->rank_of_file && f < n; f++)
        map->rank_of_file[f] = -1;
    return map->rank_of_file ? 0 : -1;
}

/* Rows of ranks outside --ranks go from every table ("ranks" itself is
 * filtered by its rank column). */
static void drop_unwanted(hta_rank_map *map, const hta_rank_list *wanted)
{
    for (size_t f = 0; wanted->ranges && f < map->n_files; f++)
        if (map->rank_of_file[f] >= 0 && !hta_rank_list_has(wanted, map->rank_of_file[f]))
            map->rank_of_file[f] = -1;
}

int hta_resolve_ranks(hta_tableset *set, const hta_rank_list *wanted, hta_rank_map *map,
                      hta_error *err)
{
    *map = (hta_rank_map){0};
    hta_table *ranks = hta_tableset_find(set, hta_ranks_table.name);
    if (!ranks)
        return hta_fail(err, "no results came back from the processes");
    /* Rows arrive grouped by process; file order makes the result
     * independent of the number of processes. */
    if (hta_table_sort_by_first_column(ranks) || alloc_rank_map(ranks, map))
        return hta_fail(err, "out of memory");
    assign_ranks(ranks, map);
    drop_unwanted(map, wanted);
    if (wanted->ranges)
        hta_table_filter(ranks, keep_wanted, (void *)wanted);
    if (hta_table_sort_by_first_column(ranks) ||
        hta_ranks_find_missing(set, is_wanted, wanted))
        return hta_fail(err, "out of memory");
    return hta_apply_rank_map(set, map, err);
}

int hta_rank_map_find_nodes(hta_rank_map *map, const hta_tableset *set,
                            const hta_crossrank_settings *opt, hta_error *err)
{
    hta_rank_hosts_free(&map->hosts);
    int rc = hta_rank_hosts_find(set, opt, &map->hosts, err);
    const hta_rank_hosts *h = &map->hosts;
    if (rc == 0 && h->n_ranks > 0) {
        map->node_of_file = malloc((map->n_files ? map->n_files : 1) * sizeof *map->node_of_file);
        rc = map->node_of_file ? 0 : hta_fail(err, "out of memory finding the ranks' nodes");
    }
    for (size_t f = 0; rc == 0 && h->n_ranks > 0 && f < map->n_files; f++) {
        size_t i = hta_lower_bound_i64(h->rank, h->n_ranks, map->rank_of_file[f]);
        int found = map->rank_of_file[f] >= 0 && i < h->n_ranks &&
                    h->rank[i] == map->rank_of_file[f];
        map->node_of_file[f] = found ? (int64_t)h->node[i] : -1;
    }
    return rc;
}

int hta_rank_map_kept_nodes(const hta_rank_map *map, const int64_t *kept, size_t n,
                            int64_t **nodes)
{
    *nodes = NULL;
    if (!map->node_of_file)
        return 0;
    if (!(*nodes = malloc((n ? n : 1) * sizeof **nodes)))
        return -1;
    for (size_t i = 0; i < n; i++)
        (*nodes)[i] = -1;
    for (size_t f = 0; f < map->n_files; f++) {
        size_t i = hta_lower_bound_i64(kept, n, map->rank_of_file[f]);
        if (map->rank_of_file[f] >= 0 && i < n && kept[i] == map->rank_of_file[f])
            (*nodes)[i] = map->node_of_file[f];
    }
    return 0;
}
