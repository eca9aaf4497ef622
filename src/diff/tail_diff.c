/* tail_diff.c: /diff/tails (see diff/tail_diff.h). */
#include "diff/tail_diff.h"

#include "diff/row_join.h"

#include <math.h>

#define N_TAILS 3

static const hta_column COLUMNS[] = {
    {"rank", HTA_COL_I64},           {"category", HTA_COL_STR},
    {"status", HTA_COL_STR},         {"base_count", HTA_COL_I64},
    {"new_count", HTA_COL_I64},      {"base_total_us", HTA_COL_F64},
    {"new_total_us", HTA_COL_F64},   {"total_ratio", HTA_COL_F64},
    {"base_top1_mean_us", HTA_COL_F64}, {"new_top1_mean_us", HTA_COL_F64},
    {"top1_mean_ratio", HTA_COL_F64},   {"base_top1_share", HTA_COL_F64},
    {"new_top1_share", HTA_COL_F64},    {"top1_share_ratio", HTA_COL_F64},
    {"base_top5_mean_us", HTA_COL_F64}, {"new_top5_mean_us", HTA_COL_F64},
    {"top5_mean_ratio", HTA_COL_F64},   {"base_top5_share", HTA_COL_F64},
    {"new_top5_share", HTA_COL_F64},    {"top5_share_ratio", HTA_COL_F64},
    {"base_top10_mean_us", HTA_COL_F64}, {"new_top10_mean_us", HTA_COL_F64},
    {"top10_mean_ratio", HTA_COL_F64},  {"base_top10_share", HTA_COL_F64},
    {"new_top10_share", HTA_COL_F64},   {"top10_share_ratio", HTA_COL_F64},
};

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
    static const char *const names[] = {
        "rank", "category", "count", "total_us", "top1_mean_us", "top5_mean_us",
        "top10_mean_us", "top1_share", "top5_share", "top10_share"};
    long *out[] = {&c->rank, &c->category, &c->count, &c->total, &c->mean[0], &c->mean[1],
                   &c->mean[2], &c->share[0], &c->share[1], &c->share[2]};
    for (size_t i = 0; t && i < sizeof names / sizeof *names; i++)
        if ((*out[i] = hta_table_column(t, names[i])) < 0)
            return hta_fail(err, "/activity_categories has no column %s", names[i]);
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
    static const char *const keys[] = {"rank", "category"};
    const hta_table *tb = hta_diff_table(base, "activity_categories");
    const hta_table *tn = hta_diff_table(new_, "activity_categories");
    join_ctx j = {.base = base, .new_ = new_, .out = HTA_TABLE(out, "diff/tails", COLUMNS)};
    if (!j.out)
        return hta_fail(err, "out of memory");
    if (find_columns(tb, &j.cb, err) || find_columns(tn, &j.cn, err))
        return -1;
    err->text[0] = '\0';
    if (hta_join_rows(tb, tn, keys, 2, join_category, &j, err))
        return err->text[0] ? -1 : hta_fail(err, "out of memory");
    return 0;
}
