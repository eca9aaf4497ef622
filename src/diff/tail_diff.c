/* tail_diff.c: /diff/tails (see diff/tail_diff.h). */
#include "diff/tail_diff.h"

#include "analysis/activity_categories.h"

#include "diff/row_join.h"

#include <math.h>

#define N_TAILS 3

static const hta_column COLUMNS[HTA_DIFF_TAILS_N_COLUMNS] = {
    [HTA_DIFF_TAILS_RANK] = {"rank", HTA_COL_I64},
    [HTA_DIFF_TAILS_CATEGORY] = {"category", HTA_COL_STR},
    [HTA_DIFF_TAILS_STATUS] = {"status", HTA_COL_STR},
    [HTA_DIFF_TAILS_BASE_COUNT] = {"base_count", HTA_COL_I64},
    [HTA_DIFF_TAILS_NEW_COUNT] = {"new_count", HTA_COL_I64},
    [HTA_DIFF_TAILS_BASE_TOTAL_US] = {"base_total_us", HTA_COL_F64},
    [HTA_DIFF_TAILS_NEW_TOTAL_US] = {"new_total_us", HTA_COL_F64},
    [HTA_DIFF_TAILS_TOTAL_RATIO] = {"total_ratio", HTA_COL_F64},
    [HTA_DIFF_TAILS_BASE_TOP1_MEAN_US] = {"base_top1_mean_us", HTA_COL_F64},
    [HTA_DIFF_TAILS_NEW_TOP1_MEAN_US] = {"new_top1_mean_us", HTA_COL_F64},
    [HTA_DIFF_TAILS_TOP1_MEAN_RATIO] = {"top1_mean_ratio", HTA_COL_F64},
    [HTA_DIFF_TAILS_BASE_TOP1_SHARE] = {"base_top1_share", HTA_COL_F64},
    [HTA_DIFF_TAILS_NEW_TOP1_SHARE] = {"new_top1_share", HTA_COL_F64},
    [HTA_DIFF_TAILS_TOP1_SHARE_RATIO] = {"top1_share_ratio", HTA_COL_F64},
    [HTA_DIFF_TAILS_BASE_TOP5_MEAN_US] = {"base_top5_mean_us", HTA_COL_F64},
    [HTA_DIFF_TAILS_NEW_TOP5_MEAN_US] = {"new_top5_mean_us", HTA_COL_F64},
    [HTA_DIFF_TAILS_TOP5_MEAN_RATIO] = {"top5_mean_ratio", HTA_COL_F64},
    [HTA_DIFF_TAILS_BASE_TOP5_SHARE] = {"base_top5_share", HTA_COL_F64},
    [HTA_DIFF_TAILS_NEW_TOP5_SHARE] = {"new_top5_share", HTA_COL_F64},
    [HTA_DIFF_TAILS_TOP5_SHARE_RATIO] = {"top5_share_ratio", HTA_COL_F64},
    [HTA_DIFF_TAILS_BASE_TOP10_MEAN_US] = {"base_top10_mean_us", HTA_COL_F64},
    [HTA_DIFF_TAILS_NEW_TOP10_MEAN_US] = {"new_top10_mean_us", HTA_COL_F64},
    [HTA_DIFF_TAILS_TOP10_MEAN_RATIO] = {"top10_mean_ratio", HTA_COL_F64},
    [HTA_DIFF_TAILS_BASE_TOP10_SHARE] = {"base_top10_share", HTA_COL_F64},
    [HTA_DIFF_TAILS_NEW_TOP10_SHARE] = {"new_top10_share", HTA_COL_F64},
    [HTA_DIFF_TAILS_TOP10_SHARE_RATIO] = {"top10_share_ratio", HTA_COL_F64},
};
const hta_table_spec hta_diff_tails_table = {"diff/tails", COLUMNS, HTA_DIFF_TAILS_N_COLUMNS, 0};

/* Columns of one file's /activity_categories. */
typedef struct tail_columns {
    long rank, category, count, total, mean[N_TAILS], share[N_TAILS];
} tail_columns;

typedef struct join_ctx {
    const hta_diff_input *base, *new_;
    tail_columns cb, cn;
    hta_table *out;
} join_ctx;

static int find_columns(const hta_table *t, tail_columns *c, hta_error *err)
{
    static const int wanted[] = {
        HTA_ACTIVITY_CATEGORIES_RANK,          HTA_ACTIVITY_CATEGORIES_CATEGORY,
        HTA_ACTIVITY_CATEGORIES_COUNT,         HTA_ACTIVITY_CATEGORIES_TOTAL_US,
        HTA_ACTIVITY_CATEGORIES_TOP1_MEAN_US,  HTA_ACTIVITY_CATEGORIES_TOP5_MEAN_US,
        HTA_ACTIVITY_CATEGORIES_TOP10_MEAN_US, HTA_ACTIVITY_CATEGORIES_TOP1_SHARE,
        HTA_ACTIVITY_CATEGORIES_TOP5_SHARE,    HTA_ACTIVITY_CATEGORIES_TOP10_SHARE};
    const hta_table_spec *spec = &hta_activity_categories_table;
    long *out[] = {&c->rank, &c->category, &c->count, &c->total, &c->mean[0], &c->mean[1],
                   &c->mean[2], &c->share[0], &c->share[1], &c->share[2]};
    for (size_t i = 0; t && i < sizeof wanted / sizeof *wanted; i++)
        if ((*out[i] = hta_diff_column(t, spec, wanted[i])) < 0)
            return hta_fail(err, "/activity_categories has no column %s",
                            spec->columns[wanted[i]].name);
    return 0;
}

static double value(const hta_cell *row, long column)
{
    return row ? row[column].f : NAN;
}

static void put_pair(hta_row_builder *row, double base, double new_)
{
    hta_row_put_f64(row, base);
    hta_row_put_f64(row, new_);
    hta_row_put_f64(row, hta_ratio(base, new_));
}

static int join_category(const hta_cell *b, const hta_cell *n, void *ctx)
{
    join_ctx *j = ctx;
    const tail_columns *cb = &j->cb, *cn = &j->cn;
    int64_t rank = b ? b[cb->rank].i : n[cn->rank].i;
    if (!hta_diff_input_has_rank(j->base, rank) || !hta_diff_input_has_rank(j->new_, rank))
        return 0;
    hta_row_builder row = hta_table_add_row(j->out);
    hta_row_put_i64(&row, rank);
    hta_row_put_str(&row, b ? b[cb->category].s : n[cn->category].s);
    hta_row_put_str(&row, b && n ? "both" : b ? "only_in_base" : "only_in_new");
    hta_row_put_i64(&row, b ? b[cb->count].i : 0);
    hta_row_put_i64(&row, n ? n[cn->count].i : 0);
    put_pair(&row, value(b, cb->total), value(n, cn->total));
    for (int p = 0; p < N_TAILS; p++) {
        put_pair(&row, value(b, cb->mean[p]), value(n, cn->mean[p]));
        put_pair(&row, value(b, cb->share[p]), value(n, cn->share[p]));
    }
    return hta_row_done(&row);
}

int hta_diff_tails(const hta_diff_input *base, const hta_diff_input *new_, hta_tableset *out,
                   hta_error *err)
{
    const hta_table_spec *spec = &hta_activity_categories_table;
    const char *const keys[] = {spec->columns[HTA_ACTIVITY_CATEGORIES_RANK].name,
                                spec->columns[HTA_ACTIVITY_CATEGORIES_CATEGORY].name};
    const hta_table *tb = hta_diff_table(base, spec), *tn = hta_diff_table(new_, spec);
    join_ctx j = {
        .base = base, .new_ = new_, .out = hta_tableset_table(out, &hta_diff_tails_table)};
    if (!j.out)
        return hta_fail(err, "out of memory");
    if (find_columns(tb, &j.cb, err) || find_columns(tn, &j.cn, err))
        return -1;
    err->text[0] = '\0';
    if (hta_join_rows(tb, tn, keys, 2, join_category, &j, err))
        return err->text[0] ? -1 : hta_fail(err, "out of memory");
    return 0;
}
