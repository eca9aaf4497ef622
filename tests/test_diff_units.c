/* test_diff_units.c: unit tests of hta-mpi diff's building blocks on
 * inputs whose answers are known by construction: the outer join of two
 * tables (keys in any order, keys in one table only, a missing table, bad
 * key columns), the kernel classes at the --min-change boundary, and the
 * relative changes and ratios that must never be infinite. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "diff/diff_input.h"
#include "diff/kernel_diff.h"
#include "diff/row_join.h"
#include "unit.h"

static const hta_column COLUMNS[] = {
    {"rank", HTA_COL_I64}, {"name", HTA_COL_STR}, {"value", HTA_COL_F64}};

static void add(hta_table *t, int64_t rank, const char *name, double value)
{
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, rank);
    hta_row_put_str(&row, name);
    hta_row_put_f64(&row, value);
    CHECK(hta_row_done(&row) == 0, "row");
}

/* What the join saw, one line per pair: "rank name base new". */
typedef struct seen {
    char lines[16][64];
    int n;
} seen;

static int record(const hta_cell *b, const hta_cell *n, void *ctx)
{
    seen *s = ctx;
    const hta_cell *any = b ? b : n;
    if (s->n < 16)
        snprintf(s->lines[s->n], sizeof s->lines[0], "%lld %s %g %g", (long long)any[0].i,
                 any[1].s, b ? b[2].f : -1.0, n ? n[2].f : -1.0);
    s->n++;
    return 0;
}

static void test_join_pairs_rows_in_key_order(void)
{
    hta_tableset set = {0};
    hta_table *base = hta_tableset_find_or_create(&set, "base", COLUMNS, 3);
    hta_table *new_ = hta_tableset_find_or_create(&set, "new", COLUMNS, 3);
    add(base, 1, "b", 1);
    add(base, 0, "z", 2);
    add(base, 0, "a", 3);
    add(base, 2, "only_base", 4);
    add(new_, 0, "a", 30);
    add(new_, 1, "b", 10);
    add(new_, 1, "only_new", 50);
    add(new_, 0, "z", 20);
    static const char *const keys[] = {"rank", "name"};
    seen s = {0};
    hta_error err = {{0}};
    CHECK(hta_join_rows(base, new_, keys, 2, record, &s, &err) == 0, "join: %s", err.text);
    static const char *const want[] = {"0 a 3 30", "0 z 2 20", "1 b 1 10", "1 only_new -1 50",
                                       "2 only_base 4 -1"};
    CHECK(s.n == 5, "%d pairs", s.n);
    for (int i = 0; i < 5 && i < s.n; i++)
        CHECK(strcmp(s.lines[i], want[i]) == 0, "pair %d: '%s', want '%s'", i, s.lines[i],
              want[i]);

    seen one = {0};
    CHECK(hta_join_rows(NULL, new_, keys, 2, record, &one, &err) == 0, "no base table");
    CHECK(one.n == 4 && strcmp(one.lines[0], "0 a -1 30") == 0, "%d: %s", one.n, one.lines[0]);
    seen none = {0};
    CHECK(hta_join_rows(NULL, NULL, keys, 2, record, &none, &err) == 0 && none.n == 0,
          "no tables");

    static const char *const bad[] = {"rank", "kernel"};
    CHECK(hta_join_rows(base, new_, bad, 2, record, &none, &err) != 0 &&
              strstr(err.text, "no column kernel"),
          "missing key: %s", err.text);
    static const hta_column other_types[] = {
        {"rank", HTA_COL_F64}, {"name", HTA_COL_STR}, {"value", HTA_COL_F64}};
    hta_table *odd = hta_tableset_find_or_create(&set, "odd", other_types, 3);
    CHECK(hta_join_rows(base, odd, keys, 2, record, &none, &err) != 0 &&
              strstr(err.text, "different types"),
          "key types: %s", err.text);
    hta_tableset_free(&set);
}

static int stop_at_second(const hta_cell *b, const hta_cell *n, void *ctx)
{
    (void)b, (void)n;
    return ++*(int *)ctx == 2 ? 7 : 0;
}

static void test_join_stops_when_asked(void)
{
    hta_tableset set = {0};
    hta_table *t = hta_tableset_find_or_create(&set, "t", COLUMNS, 3);
    for (int i = 0; i < 5; i++)
        add(t, i, "k", i);
    static const char *const keys[] = {"rank"};
    int calls = 0;
    hta_error err = {{0}};
    CHECK(hta_join_rows(t, t, keys, 1, stop_at_second, &calls, &err) == 7 && calls == 2,
          "stopped after %d calls", calls);
    hta_tableset_free(&set);
}

static void test_kernel_classes(void)
{
    CHECK(!strcmp(hta_diff_kernel_class(0, 1, 0, 5, 0.05), "added"), "added");
    CHECK(!strcmp(hta_diff_kernel_class(1, 0, 5, 0, 0.05), "removed"), "removed");
    CHECK(!strcmp(hta_diff_kernel_class(1, 1, 100, 105, 0.05), "unchanged"), "+5%% is within");
    CHECK(!strcmp(hta_diff_kernel_class(1, 1, 100, 95, 0.05), "unchanged"), "-5%% is within");
    CHECK(!strcmp(hta_diff_kernel_class(1, 1, 100, 105.01, 0.05), "slower"), "+5.01%%");
    CHECK(!strcmp(hta_diff_kernel_class(1, 1, 100, 94.99, 0.05), "faster"), "-5.01%%");
    CHECK(!strcmp(hta_diff_kernel_class(1, 1, 100, 100.5, 0), "slower"), "min change 0");
    CHECK(!strcmp(hta_diff_kernel_class(1, 1, 0, 0, 0.05), "unchanged"), "0 -> 0");
    CHECK(!strcmp(hta_diff_kernel_class(1, 1, 0, 3, 0.05), "slower"), "0 -> 3");
}

static void test_changes_are_never_infinite(void)
{
    CHECK(hta_rel_change(200, 250) == 0.25 && hta_rel_change(-4, -2) == 0.5, "rel");
    CHECK(hta_ratio(200, 250) == 1.25, "ratio");
    CHECK(isnan(hta_rel_change(0, 3)) && isnan(hta_ratio(0, 3)), "base 0");
    CHECK(isnan(hta_rel_change(NAN, 3)) && isnan(hta_ratio(2, NAN)), "NaN in");
}

int main(void)
{
    test_join_pairs_rows_in_key_order();
    test_join_stops_when_asked();
    test_kernel_classes();
    test_changes_are_never_infinite();
    return unit_finish();
}
