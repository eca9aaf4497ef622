/* collective_report.c: what the stdout summary says about collectives by
 * process group (docs/crossrank.md).  Two short lists from
 * /collective_summary, one row per (group description, collective, dtype,
 * size bucket): the three with the most waiting for the last rank, and the
 * three whose slowest instance reached the smallest fraction of their
 * median bus bandwidth, when under 90% of it (a kind's own median, so that
 * small messages, slow by nature, are not always at the bottom). */
#include "output/collective_report.h"

#include "crossrank/exchange/collective_groups.h"
#include "crossrank/compare/collective_wait.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/ranked.h"

#define REPORT_ROWS 3
/* Below this fraction of its median an instance is worth a line. */
#define SLOW_FRACTION 0.9

typedef struct columns {
    long desc, collective, dtype, bucket, count, wait, p50, min;
} columns;

static void print_kind(const hta_table *t, const columns *c, const hta_cell *row)
{
    printf("%s %s %s <= %lld B, %lld instances", row[c->desc].s, row[c->collective].s,
           row[c->dtype].s, (long long)row[c->bucket].i, (long long)row[c->count].i);
    (void)t;
}

/* Both lists print how many lines they wrote, so that an empty report
 * can say that nothing stood out rather than print a bare heading. */
static size_t print_most_waiting(const hta_table *t, const columns *c, hta_ranked *r)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_rows; i++)
        if (hta_table_row(t, i)[c->wait].f > 0)
            r[n++] = (hta_ranked){hta_table_row(t, i)[c->wait].f, i};
    hta_rank_descending(r, n);
    for (size_t k = 0; k < n && k < REPORT_ROWS; k++) {
        const hta_cell *row = hta_table_row(t, r[k].row);
        printf("  most waiting: ");
        print_kind(t, c, row);
        printf(": %.1f us waited for the last rank\n", row[c->wait].f);
    }
    return n < REPORT_ROWS ? n : REPORT_ROWS;
}

static size_t print_slowest(const hta_table *t, const columns *c, hta_ranked *r)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_rows; i++) {
        const hta_cell *row = hta_table_row(t, i);
        if (row[c->count].i > 1 && row[c->p50].f > 0 &&
            row[c->min].f < SLOW_FRACTION * row[c->p50].f)
            r[n++] = (hta_ranked){1.0 - row[c->min].f / row[c->p50].f, i};
    }
    hta_rank_descending(r, n);
    for (size_t k = 0; k < n && k < REPORT_ROWS; k++) {
        const hta_cell *row = hta_table_row(t, r[k].row);
        printf("  slowest: ");
        print_kind(t, c, row);
        printf(": busbw %.3g GB/s at worst, %.2fx its median %.3g\n", row[c->min].f,
               row[c->min].f / row[c->p50].f, row[c->p50].f);
    }
    return n < REPORT_ROWS ? n : REPORT_ROWS;
}

static void print_mismatches(const hta_tableset *set)
{
    const hta_table *w = hta_tableset_find(set, hta_collective_wait_table.name);
    size_t ranks = 0;
    for (size_t i = 0; w && i < w->n_rows; i++)
        ranks += hta_table_row(w, i)[HTA_COLLECTIVE_WAIT_METADATA_MISMATCHES].i > 0;
    if (ranks)
        printf("  %zu ranks disagree with their group on a collective's name or size "
               "(mismatched_ranks in /collectives)\n", ranks);
}

void hta_print_collective_report(const hta_tableset *set)
{
    const hta_table *t = hta_tableset_find(set, hta_collective_summary_table.name);
    if (!t || t->n_rows == 0)
        return;
    columns c = {HTA_COLLECTIVE_SUMMARY_GROUP_DESC, HTA_COLLECTIVE_SUMMARY_COLLECTIVE,
                 HTA_COLLECTIVE_SUMMARY_DTYPE, HTA_COLLECTIVE_SUMMARY_BUCKET_MAX_BYTES,
                 HTA_COLLECTIVE_SUMMARY_COUNT, HTA_COLLECTIVE_SUMMARY_TOTAL_WAIT_US,
                 HTA_COLLECTIVE_SUMMARY_BUSBW_P50_GBPS, HTA_COLLECTIVE_SUMMARY_BUSBW_MIN_GBPS};
    hta_ranked *r = malloc(t->n_rows * sizeof *r);
    if (!r)
        return;
    printf("\nCollectives by process group (%zu kinds; see /collective_summary, /collectives):\n",
           t->n_rows);
    if (print_most_waiting(t, &c, r) + print_slowest(t, &c, r) == 0)
        printf("  no rank waited for another, and no instance reached under %.0f%% of its "
               "kind's median bus bandwidth\n", 100 * SLOW_FRACTION);
    print_mismatches(set);
    free(r);
}
