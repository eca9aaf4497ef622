/* diff_summary.c: the diff's stdout report (see diff/diff_summary.h).
 *
 * It reads only the /diff tables just built, in their order (all-ranks
 * kernel rows first, largest change first), so what it prints is what the
 * file holds.  Kernel names are C++ templates of hundreds of characters:
 * cut to NAME_WIDTH, whole in the file. */
#include "diff/diff_summary.h"

#include "analysis/metrics.h"
#include "crossrank/exchange/collective_groups.h"
#include "diff/collective_diff.h"
#include "diff/kernel_diff.h"
#include "diff/rank_metric_diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/ranked.h"

#define NAME_WIDTH 90

static void print_name(FILE *out, const char *name)
{
    size_t n = strlen(name);
    if (n <= NAME_WIDTH)
        fprintf(out, "%s\n", name);
    else
        fprintf(out, "%.*s...\n", NAME_WIDTH - 3, name);
}

static void print_class_counts(FILE *out, const hta_table *k, double min_change)
{
    static const char *const classes[] = {"slower", "faster", "added", "removed", "unchanged"};
    size_t counts[5] = {0};
    for (size_t r = 0; r < k->n_rows && hta_table_row(k, r)[0].i == HTA_DIFF_ALL_RANKS; r++)
        for (int c = 0; c < 5; c++)
            counts[c] += strcmp(hta_table_row(k, r)[HTA_DIFF_KERNELS_CLASS].s, classes[c]) == 0;
    fprintf(out, "Kernels over all ranks: %zu slower, %zu faster, %zu added, %zu removed, "
                 "%zu unchanged (within %g%%)\n",
            counts[0], counts[1], counts[2], counts[3], counts[4], 100 * min_change);
}

/* The all-ranks rows of class cls, largest change first, at most top. */
static void print_changed(FILE *out, const hta_table *k, const char *cls, const char *title,
                          int top)
{
    fprintf(out, "\n%s (all ranks, total time):\n", title);
    int shown = 0;
    for (size_t r = 0; r < k->n_rows && shown < top; r++) {
        const hta_cell *row = hta_table_row(k, r);
        if (row[0].i != HTA_DIFF_ALL_RANKS || strcmp(row[HTA_DIFF_KERNELS_CLASS].s, cls) != 0)
            continue;
        if (!shown++)
            fprintf(out, "  %12s %8s %12s %12s  %s\n", "change_us", "change", "base_us",
                    "new_us", "kernel");
        fprintf(out, "  %+12.1f %+7.1f%% %12.1f %12.1f  ", row[HTA_DIFF_KERNELS_CHANGE_US].f,
                100 * row[HTA_DIFF_KERNELS_REL_CHANGE].f, row[HTA_DIFF_KERNELS_BASE_TOTAL_US].f,
                row[HTA_DIFF_KERNELS_NEW_TOTAL_US].f);
        print_name(out, row[HTA_DIFF_KERNELS_NAME].s);
    }
    if (!shown)
        fprintf(out, "  none\n");
}

static void print_set(FILE *out, const hta_table *set, const char *run, const char *title,
                      int top)
{
    size_t n = 0;
    for (size_t r = 0; r < set->n_rows; r++) {
        const hta_cell *row = hta_table_row(set, r);
        n += row[0].i == HTA_DIFF_ALL_RANKS && strcmp(row[HTA_DIFF_KERNEL_SET_RUN].s, run) == 0;
    }
    fprintf(out, "\n%s: %zu\n", title, n);
    int shown = 0;
    for (size_t r = 0; r < set->n_rows && shown < top; r++) {
        const hta_cell *row = hta_table_row(set, r);
        if (row[0].i != HTA_DIFF_ALL_RANKS || strcmp(row[HTA_DIFF_KERNEL_SET_RUN].s, run) != 0)
            continue;
        if (!shown++)
            fprintf(out, "  %8s %12s  %s\n", "count", "total_us", "kernel");
        fprintf(out, "  %8lld %12.1f  ", (long long)row[HTA_DIFF_KERNEL_SET_COUNT].i,
                row[HTA_DIFF_KERNEL_SET_TOTAL_US].f);
        print_name(out, row[HTA_DIFF_KERNEL_SET_NAME].s);
    }
    if (n > (size_t)shown)
        fprintf(out, "  ... and %zu more in /diff/kernel_set\n", n - (size_t)shown);
}

typedef struct rank_change {
    int64_t rank;
    double rel[3];             /* compute, non-compute, idle */
    double base_compute, new_compute;
} rank_change;

static int by_compute_change(const void *x, const void *y)
{
    const rank_change *a = x, *b = y;
    double ka = fabs(a->rel[0]), kb = fabs(b->rel[0]);
    if (ka != kb)
        return ka > kb ? -1 : 1;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

/* One entry per rank in both runs, from /diff/rank_metrics's rows of the
 * temporal breakdown (sorted by rank, so a rank's rows are adjacent). */
static size_t collect_rank_changes(const hta_table *m, rank_change *out)
{
    static const hta_metric_id metrics[3] = {
        HTA_METRIC_COMPUTE_TIME_US, HTA_METRIC_NON_COMPUTE_TIME_US, HTA_METRIC_IDLE_TIME_US};
    size_t n = 0;
    for (size_t r = 0; r < m->n_rows; r++) {
        const hta_cell *row = hta_table_row(m, r);
        if (strcmp(row[HTA_DIFF_RANK_METRICS_STATUS].s, "both") != 0)
            continue;
        for (int k = 0; k < 3; k++) {
            if (!hta_metric_is(row[HTA_DIFF_RANK_METRICS_METRIC].s, metrics[k]))
                continue;
            if (!n || out[n - 1].rank != row[0].i)
                out[n++] = (rank_change){row[0].i, {NAN, NAN, NAN}, NAN, NAN};
            out[n - 1].rel[k] = row[HTA_DIFF_RANK_METRICS_REL_CHANGE].f;
            if (k == 0) {
                out[n - 1].base_compute = row[HTA_DIFF_RANK_METRICS_BASE].f;
                out[n - 1].new_compute = row[HTA_DIFF_RANK_METRICS_NEW].f;
            }
        }
    }
    return n;
}

static void print_ranks(FILE *out, const hta_table *m, int top, double min_change)
{
    rank_change *changes = malloc((m->n_rows ? m->n_rows : 1) * sizeof *changes);
    if (!changes)
        return;
    size_t n = collect_rank_changes(m, changes);
    qsort(changes, n, sizeof *changes, by_compute_change);
    fprintf(out, "\nRanks whose compute time changed most (beyond %g%%):\n", 100 * min_change);
    int shown = 0;
    for (size_t i = 0; i < n && shown < top; i++) {
        const rank_change *c = &changes[i];
        if (!(fabs(c->rel[0]) > min_change))
            break;
        if (!shown++)
            fprintf(out, "  %6s %14s %14s %9s %12s %8s\n", "rank", "base_compute", "new_compute",
                    "compute", "non-compute", "idle");
        fprintf(out, "  %6lld %14.1f %14.1f %+8.1f%% %+11.1f%% %+7.1f%%\n", (long long)c->rank,
                c->base_compute, c->new_compute, 100 * c->rel[0], 100 * c->rel[1],
                100 * c->rel[2]);
    }
    if (!shown)
        fprintf(out, "  none\n");
    free(changes);
}

/* The collectives in both runs whose median transfer time moved beyond
 * min_change, most first, with their bus bandwidth beside it. */
static void print_collectives(FILE *out, const hta_table *c, int top, double min_change)
{
    long transfer = hta_diff_collectives_ratio(c, HTA_COLLECTIVE_SUMMARY_TRANSFER_P50_US);
    long busbw = hta_diff_collectives_ratio(c, HTA_COLLECTIVE_SUMMARY_BUSBW_P50_GBPS);
    hta_ranked *order = malloc((c->n_rows ? c->n_rows : 1) * sizeof *order);
    if (!order || transfer < 0) {
        free(order);
        return;
    }
    size_t n = 0;
    for (size_t r = 0; r < c->n_rows; r++) {
        const hta_cell *row = hta_table_row(c, r);
        double ratio = row[transfer].f;
        if (strcmp(row[HTA_DIFF_COLLECTIVES_STATUS].s, "both") == 0 && fabs(ratio - 1) > min_change)
            order[n++] = (hta_ranked){fabs(log(ratio)), r};
    }
    hta_rank_descending(order, n);
    fprintf(out, "\nCollectives whose median transfer time changed (beyond %g%%): %zu\n",
            100 * min_change, n);
    for (size_t i = 0; i < n && i < (size_t)top; i++) {
        const hta_cell *row = hta_table_row(c, order[i].row);
        if (i == 0)
            fprintf(out, "  %9s %9s  %s\n", "transfer", "busbw", "group collective dtype bucket");
        fprintf(out, "  %8.3fx %8.3fx  %s %s %s %lld\n", row[transfer].f,
                busbw >= 0 ? row[busbw].f : NAN, row[0].s, row[1].s, row[2].s,
                (long long)row[3].i);
    }
    free(order);
}

static void print_lone_ranks(FILE *out, const hta_diff_input *in, const hta_diff_input *other,
                             const char *which)
{
    size_t n = 0;
    for (size_t i = 0; i < in->n_ranks; i++) {
        if (hta_diff_input_has_rank(other, in->ranks[i]))
            continue;
        if (!n++)
            fprintf(out, "\nRanks only in %s:", which);
        fprintf(out, " %lld", (long long)in->ranks[i]);
    }
    if (n)
        fprintf(out, "\n");
}

void hta_diff_print_summary(FILE *out, const hta_tableset *tables, const hta_diff_input *base,
                            const hta_diff_input *new_, int top, double min_change)
{
    fprintf(out, "BASE %s: %zu rank%s (schema %lld)\nNEW  %s: %zu rank%s (schema %lld)\n\n",
            base->file.path, base->n_ranks, base->n_ranks == 1 ? "" : "s",
            (long long)base->file.schema_version, new_->file.path, new_->n_ranks,
            new_->n_ranks == 1 ? "" : "s", (long long)new_->file.schema_version);
    const hta_table *k = hta_tableset_find(tables, hta_diff_kernels_table.name);
    const hta_table *set = hta_tableset_find(tables, hta_diff_kernel_set_table.name);
    const hta_table *m = hta_tableset_find(tables, hta_diff_rank_metrics_table.name);
    print_class_counts(out, k, min_change);
    print_changed(out, k, "slower", "Top regressions", top);
    print_changed(out, k, "faster", "Top improvements", top);
    print_set(out, set, "new", "New kernels (only in NEW)", top);
    print_set(out, set, "base", "Vanished kernels (only in BASE)", top);
    print_ranks(out, m, top, min_change);
    const hta_table *c = hta_tableset_find(tables, hta_diff_collectives_table.name);
    if (c)
        print_collectives(out, c, top, min_change);
    print_lone_ranks(out, base, new_, "BASE");
    print_lone_ranks(out, new_, base, "NEW");
}
