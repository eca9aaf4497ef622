/* test_analyses.c: the analyses' machinery: the registry is complete and
 * its schedule runs each analysis once, activity category tails equal a
 * full sort's, and on every real trace the analyses give the same tables
 * on any number of threads. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/activity_categories.h"
#include "analysis/registry.h"
#include "run/analyse_file.h"
#include "util/buf.h"
#include "unit.h"

/* Every id has its entry, and the schedule names every id once: the
 * registry is keyed by id, so a gap or a duplicate is the only way to get
 * it wrong. */
static void test_registry_is_complete(void)
{
    CHECK(hta_n_analyses == HTA_N_ANALYSES, "%zu analyses", hta_n_analyses);
    int scheduled[HTA_N_ANALYSES] = {0};
    for (size_t i = 0; i < HTA_N_ANALYSES; i++) {
        CHECK(hta_analyses[i].name && !hta_analyses[i].run != !hta_analyses[i].run_fixed,
              "analysis %zu has one entry point", i);
        CHECK(hta_analysis_schedule[i] < HTA_N_ANALYSES, "schedule slot %zu", i);
        if (hta_analysis_schedule[i] < HTA_N_ANALYSES)
            scheduled[hta_analysis_schedule[i]]++;
    }
    for (size_t i = 0; i < HTA_N_ANALYSES; i++)
        CHECK(scheduled[i] == 1, "%s scheduled %d times", hta_analyses[i].name, scheduled[i]);
}

/* One trace's tables as bytes, analysed on `threads` threads whatever its
 * size, with --detail; the ranks table (timings, thread count) left out. */
static hta_buf analysed_tables(const char *path, int threads)
{
    hta_settings opt;
    hta_settings_defaults(&opt);
    opt.analysis.detail = 1;
    opt.run.threads = threads;
    opt.run.threaded_min_events = 1;
    hta_tableset set = {0};
    hta_buf packed = {0};
    CHECK(hta_analyse_file(path, 0, 0, 0, &opt, &set) == 0, "%s: out of memory", path);
    hta_tableset_remove(&set, "ranks");
    CHECK(hta_tableset_pack(&set, &packed) == 0, "%s: cannot pack", path);
    hta_tableset_free(&set);
    return packed;
}

/* Every real trace gives the same tables with 1 to 4 analysis threads. */
static void check_analysis_threads_never_change_tables(const char *path, char *data,
                                                       size_t len)
{
    (void)data;
    (void)len;
    hta_buf serial = analysed_tables(path, 1);
    for (int threads = 2; threads <= 4; threads++) {
        hta_buf threaded = analysed_tables(path, threads);
        CHECK(threaded.len == serial.len && memcmp(threaded.data, serial.data, serial.len) == 0,
              "%s: %d analysis threads change the tables", path, threads);
        hta_buf_free(&threaded);
    }
    hta_buf_free(&serial);
}

static int compare_longest_first(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x < y) - (x > y);
}

/* The activity_categories row of n durations as the definitions give it,
 * from a sorted copy: count, total, share, max, min, the three tail shares
 * and the three tail means, formed as the analysis forms them. */
static void sorted_tail_row(const int64_t *durs, size_t n, int64_t grand_total, double row[11])
{
    static int64_t longest[20000];
    memcpy(longest, durs, n * sizeof *durs);
    qsort(longest, n, sizeof *longest, compare_longest_first);
    int64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += longest[i];
    row[0] = (double)n;
    row[1] = hta_ns_to_us(total);
    row[2] = grand_total ? (double)total / (double)grand_total : NAN;
    row[3] = hta_ns_to_us(longest[0]);
    row[4] = hta_ns_to_us(longest[n - 1]);
    static const size_t percents[3] = {1, 5, 10};
    for (size_t p = 0; p < 3; p++) {
        size_t k = n * percents[p] / 100;
        int64_t top = 0;
        for (size_t i = 0; i < k; i++)
            top += longest[i];
        row[5 + p] = !k ? 0.0 : total ? (double)top / (double)total : NAN;
        row[8 + p] = k ? hta_ns_to_us(top) / (double)k : NAN;
    }
}

/* Category "a" holds durs in order and "b" the same reversed, interleaved
 * in one trace; both rows must be the sorted definition's, bit for bit. */
static void check_tails_match_sorting(const char *what, const int64_t *durs, size_t n)
{
    hta_trace t;
    hta_trace_init(&t);
    uint32_t a = hta_strtab_intern(&t.categories, "a", 1);
    uint32_t b = hta_strtab_intern(&t.categories, "b", 1);
    int64_t grand_total = 0;
    for (size_t i = 0; i < n; i++) {
        hta_event *ea = hta_trace_push_event(&t), *eb = hta_trace_push_event(&t);
        if (!ea || !eb)
            return;
        ea->cat = (uint16_t)a, ea->dur_ns = durs[i], ea->ts_ns = (int64_t)i * 1000000;
        eb->cat = (uint16_t)b, eb->dur_ns = durs[n - 1 - i], eb->ts_ns = ea->ts_ns;
        grand_total += 2 * durs[i];
    }
    hta_rank_view view = {.trace = &t};
    hta_tableset set = {0};
    hta_error err;
    CHECK(hta_activity_categories(&view, &set, &err) == 0, "%s: %s", what, err.text);
    hta_table *table = hta_tableset_find(&set, "activity_categories");
    CHECK(table && table->n_rows == 2, "%s: two rows", what);
    double want[11];
    sorted_tail_row(durs, n, grand_total, want);
    for (size_t r = 0; table && r < table->n_rows; r++) {
        const hta_cell *row = hta_table_row(table, r);
        CHECK(row[2].i == (int64_t)n, "%s: count %lld", what, (long long)row[2].i);
        for (size_t c = 1; c < 11; c++)
            CHECK(memcmp(&row[2 + c].f, &want[c], sizeof want[c]) == 0,
                  "%s row %zu column %s: %.17g, sorted %.17g", what, r,
                  table->columns[2 + c].name, row[2 + c].f, want[c]);
    }
    hta_tableset_free(&set);
    hta_trace_free(&t);
}

/* Activity categories keep only each category's longest 10%: against a full
 * sort on the orders and values that could trip that up.  Fewer than 10
 * events (no tails), tails of exactly 1, 5 and 10 events, durations only
 * ever entering the kept set (ascending, also all within one power of two),
 * ties where the kept set ends, zeros, the negative durations of
 * --round-like-hta, and a wide random spread with repeats. */
static void test_activity_tails_match_sorting(void)
{
    enum { N = 20000 };
    static int64_t d[N];
    static const size_t few[] = {9, 10, 20, 100};
    for (size_t f = 0; f < sizeof few / sizeof few[0]; f++) {
        size_t n = few[f];
        for (size_t i = 0; i < n; i++)
            d[i] = (int64_t)((i * 7 + 3) % n + 1) * 1000;
        char what[32];
        snprintf(what, sizeof what, "%zu distinct", n);
        check_tails_match_sorting(what, d, n);
    }
    for (size_t i = 0; i < 5000; i++)
        d[i] = 37 * (int64_t)(i + 1);
    check_tails_match_sorting("ascending", d, 5000);
    for (size_t i = 0; i < 3000; i++)
        d[i] = 4096 + (int64_t)i;
    check_tails_match_sorting("ascending in one power of two", d, 3000);
    for (size_t i = 0; i < 1000; i++)
        d[i] = i < 950 ? 6000 : 7000;
    check_tails_match_sorting("ties at the end of the kept set", d, 1000);
    for (size_t i = 0; i < 100; i++)
        d[i] = 5000;
    check_tails_match_sorting("all equal", d, 100);
    for (size_t i = 0; i < 30; i++)
        d[i] = 0;
    check_tails_match_sorting("zeros", d, 30);
    for (size_t i = 0; i < 1000; i++)
        d[i] = (int64_t)(i * 7919 % 2001) - 1000;
    check_tails_match_sorting("negative, zero and positive", d, 1000);
    for (size_t i = 0; i < 40; i++)
        d[i] = -1000 + (int64_t)(i % 3);
    check_tails_match_sorting("all negative", d, 40);
    uint64_t state = 88172645463325252ULL;
    for (size_t i = 0; i < N; i++) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        d[i] = i % 4 == 3 ? d[state % i] : (int64_t)((state >> 20) >> (state % 44));
    }
    check_tails_match_sorting("random spread with repeats", d, N);
}

int main(int argc, char **argv)
{
    test_registry_is_complete();
    test_activity_tails_match_sorting();
    const char *traces = unit_real_traces(argc, argv);
    if (traces) {
        int n = for_each_real_trace(traces, check_analysis_threads_never_change_tables);
        CHECK(n >= 10, "only %d real traces under %s", n, traces);
    }
    return unit_finish();
}
