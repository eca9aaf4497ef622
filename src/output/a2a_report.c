/* a2a_report.c: what the stdout summary says about all-to-all traffic
 * (docs/crossrank.md, "All-to-all").  The hottest rank, the one that
 * received the most bytes (a hot expert), against the median rank, with
 * the wait the others spent on it at collectives (/collective_wait), so a
 * hot expert that holds the job up reads in one line; then the instances
 * whose split sizes disagree between senders and receivers. */
#include "output/a2a_report.h"

#include "crossrank/exchange/all_to_all.h"
#include "crossrank/compare/collective_wait.h"
#include "numerics/stats.h"

#include <stdio.h>
#include <stdlib.h>

static double caused_wait_of(const hta_tableset *set, int64_t rank)
{
    const hta_table *w = hta_tableset_find(set, hta_collective_wait_table.name);
    long row = w ? hta_table_find_sorted(w, rank) : -1;
    return row >= 0 ? hta_table_row(w, (size_t)row)[HTA_COLLECTIVE_WAIT_CAUSED_WAIT_US].f : 0.0;
}

static void print_hottest(const hta_tableset *set, const hta_table *ranks)
{
    size_t n = ranks->n_rows, hottest = 0;
    double *received = malloc(n * sizeof *received);
    if (!received)
        return;
    for (size_t r = 0; r < n; r++) {
        received[r] = (double)hta_table_row(ranks, r)[HTA_A2A_RANKS_RECEIVED_BYTES].i;
        if (received[r] > received[hottest])
            hottest = r;
    }
    const hta_cell *h = hta_table_row(ranks, hottest);
    double most = received[hottest];
    hta_sort_doubles(received, n);
    double median = hta_quantile_sorted(received, n, 0.5);
    free(received);
    printf("  hottest rank: %lld received %.1f MB (%.2fx the median rank), sent %.1f MB; the "
           "others waited %.1f us for it at collectives (see /a2a_matrix, /a2a)\n",
           (long long)h[HTA_A2A_RANKS_RANK].i, most / 1e6, median > 0 ? most / median : 0.0,
           (double)h[HTA_A2A_RANKS_SENT_BYTES].i / 1e6,
           caused_wait_of(set, h[HTA_A2A_RANKS_RANK].i));
}

void hta_print_a2a_report(const hta_tableset *set)
{
    const hta_table *ranks = hta_tableset_find(set, hta_a2a_ranks_table.name);
    const hta_table *mismatches = hta_tableset_find(set, hta_a2a_mismatches_table.name);
    if ((!ranks || ranks->n_rows == 0) && !mismatches)
        return;
    printf("\nAll-to-all:\n");
    if (ranks && ranks->n_rows)
        print_hottest(set, ranks);
    if (mismatches && mismatches->n_rows)
        printf("  %zu instances whose split sizes disagree: a rank expected other sizes than its "
               "peers sent (split_mismatch in /a2a)\n", mismatches->n_rows);
}
