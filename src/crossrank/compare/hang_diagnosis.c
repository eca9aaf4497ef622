/* hang_diagnosis.c: the hang findings from Flight Recorder dumps (see
 * crossrank/compare/hang_diagnosis.h).
 *
 * Each group is diagnosed by the process that owns it
 * (crossrank/exchange/group_owners.h), which receives every member's
 * entries and pg_status rows of the group; the findings are then gathered
 * to the root and put in group order.  On the owner the collective
 * entries are sorted once by (group, rank, seq); a group's members then
 * each see their own entries as one sorted run, and a seq is found by
 * bisection.  A finding's culprits are the members outside a
 * strict majority of those that recorded the seq, so the answer is the
 * same whatever order the dumps were read in. */
#include "crossrank/compare/hang_diagnosis.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/fr_rows.h"
#include "crossrank/exchange/comm_catalog.h"
#include "crossrank/exchange/group_owners.h"
#include "util/buf.h"

static const hta_column GROUP_COLUMNS[HTA_FR_GROUPS_N_COLUMNS] = {
    [HTA_FR_GROUPS_GROUP] = {"group", HTA_COL_STR},
    [HTA_FR_GROUPS_RANK] = {"rank", HTA_COL_I64},
    [HTA_FR_GROUPS_DESC] = {"desc", HTA_COL_STR},
    [HTA_FR_GROUPS_HAS_DUMP] = {"has_dump", HTA_COL_I64},
    [HTA_FR_GROUPS_FIRST_RECORDED] = {"first_recorded_seq", HTA_COL_I64},
    [HTA_FR_GROUPS_LAST_ENQUEUED] = {"last_enqueued_seq", HTA_COL_I64},
    [HTA_FR_GROUPS_LAST_STARTED] = {"last_started_seq", HTA_COL_I64},
    [HTA_FR_GROUPS_LAST_COMPLETED] = {"last_completed_seq", HTA_COL_I64},
};
const hta_table_spec hta_fr_groups_table = {"fr_groups", GROUP_COLUMNS, HTA_FR_GROUPS_N_COLUMNS,
                                            HTA_TABLE_GATHERED};

static const hta_column COLLECTIVE_COLUMNS[HTA_FR_COLL_N_COLUMNS] = {
    [HTA_FR_COLL_GROUP] = {"group", HTA_COL_STR},
    [HTA_FR_COLL_SEQ] = {"seq", HTA_COL_I64},
    [HTA_FR_COLL_OP] = {"op", HTA_COL_STR},
    [HTA_FR_COLL_MEMBERS] = {"members", HTA_COL_I64},
    [HTA_FR_COLL_RECORDED] = {"recorded_ranks", HTA_COL_STR},
    [HTA_FR_COLL_NOT_RECORDED] = {"not_recorded_ranks", HTA_COL_STR},
    [HTA_FR_COLL_SCHEDULED] = {"scheduled", HTA_COL_I64},
    [HTA_FR_COLL_STARTED] = {"started", HTA_COL_I64},
    [HTA_FR_COLL_COMPLETED] = {"completed", HTA_COL_I64},
    [HTA_FR_COLL_SIZES_AGREE] = {"sizes_agree", HTA_COL_I64},
    [HTA_FR_COLL_DTYPES_AGREE] = {"dtypes_agree", HTA_COL_I64},
    [HTA_FR_COLL_MATCH_STATE] = {"match_state", HTA_COL_STR},
};
const hta_table_spec hta_fr_collectives_table = {"fr_collectives", COLLECTIVE_COLUMNS,
                                                 HTA_FR_COLL_N_COLUMNS, HTA_TABLE_GATHERED};

static const hta_column FINDING_COLUMNS[HTA_FR_FINDINGS_N_COLUMNS] = {
    [HTA_FR_FINDINGS_KIND] = {"kind", HTA_COL_STR},
    [HTA_FR_FINDINGS_GROUP] = {"group", HTA_COL_STR},
    [HTA_FR_FINDINGS_DESC] = {"desc", HTA_COL_STR},
    [HTA_FR_FINDINGS_SEQ] = {"seq", HTA_COL_I64},
    [HTA_FR_FINDINGS_OP] = {"op", HTA_COL_STR},
    [HTA_FR_FINDINGS_CULPRIT_RANKS] = {"culprit_ranks", HTA_COL_STR},
    [HTA_FR_FINDINGS_WAITING_RANKS] = {"waiting_ranks", HTA_COL_STR},
    [HTA_FR_FINDINGS_DETAIL] = {"detail", HTA_COL_STR},
    [HTA_FR_FINDINGS_CULPRIT_FRAMES] = {"culprit_frames", HTA_COL_STR},
};
const hta_table_spec hta_fr_findings_table = {"fr_findings", FINDING_COLUMNS,
                                              HTA_FR_FINDINGS_N_COLUMNS, HTA_TABLE_GATHERED};

/* One member of a group as its dump shows it. */
typedef struct member {
    int64_t rank;
    int present;               /* its dump was read */
    const hta_cell **e;        /* its collective entries in the group, by seq */
    size_t n;
    const hta_cell **p2p;      /* its point-to-point entries, in record order */
    size_t n_p2p;
    int64_t first_seq, last_enqueued, last_started, last_completed;
    int desynced;              /* skipped a collective: left out from there on */
} member;

typedef struct group {
    const char *name, *desc;
    member *m;
    size_t n;
    int64_t max_seq;
    int64_t *ranks;            /* the group's ranks by group rank, as pg_config lists them */
    long n_ranks;
} group;

/* What the diagnosis reads (the rows of the groups this process owns),
 * sorted for it. */
typedef struct inputs {
    const hta_cell **coll;     /* collective entries by (group, rank, seq) */
    size_t n_coll;
    const hta_cell **p2p;      /* point-to-point entries by (group, rank, record) */
    size_t n_p2p;
    const hta_table *entries, *members;
    hta_table *findings;
} inputs;

static int compare_i64_cells(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}

/* Entries by (group, rank), then by column (-1: none), then record. */
static int compare_entry_rows(const hta_cell *a, const hta_cell *b, int column)
{
    int c = strcmp(a[HTA_FR_ENTRY_GROUP].s, b[HTA_FR_ENTRY_GROUP].s);
    if (!c)
        c = compare_i64_cells(a[HTA_FR_ENTRY_RANK].i, b[HTA_FR_ENTRY_RANK].i);
    if (!c && column >= 0)
        c = compare_i64_cells(a[column].i, b[column].i);
    return c ? c : compare_i64_cells(a[HTA_FR_ENTRY_RECORD_ID].i, b[HTA_FR_ENTRY_RECORD_ID].i);
}

/* Collective entries by (group, rank, seq). */
static int compare_entries(const void *pa, const void *pb)
{
    return compare_entry_rows(*(const hta_cell *const *)pa, *(const hta_cell *const *)pb,
                              HTA_FR_ENTRY_SEQ);
}

/* Point-to-point entries by (group, rank), in the order recorded. */
static int compare_by_record(const void *pa, const void *pb)
{
    return compare_entry_rows(*(const hta_cell *const *)pa, *(const hta_cell *const *)pb, -1);
}

/* The member's run of entries among the sorted ones. */
static void find_run(const hta_cell **rows, size_t n, const char *g, int64_t rank,
                     const hta_cell ***run, size_t *n_run)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const hta_cell *row = rows[mid];
        int c = strcmp(row[HTA_FR_ENTRY_GROUP].s, g);
        if (c < 0 || (c == 0 && row[HTA_FR_ENTRY_RANK].i < rank))
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < n && !strcmp(rows[end][HTA_FR_ENTRY_GROUP].s, g) &&
           rows[end][HTA_FR_ENTRY_RANK].i == rank)
        end++;
    *run = rows + lo;
    *n_run = end - lo;
}

/* The member's entry at seq (the first of a coalesced seq), NULL when none. */
static const hta_cell *entry_at(const member *m, int64_t seq)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->e[mid][HTA_FR_ENTRY_SEQ].i < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->n && m->e[lo][HTA_FR_ENTRY_SEQ].i == seq ? m->e[lo] : NULL;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* The rank's row of the group in "_fr_members": a member with a dump has
 * one (its pg_config lists it); NULL for a member without. */
static const hta_cell *member_row(const inputs *in, const char *name, int64_t rank)
{
    for (size_t i = 0; i < in->members->n_rows; i++) {
        const hta_cell *row = hta_table_row(in->members, i);
        if (row[HTA_FR_MEMBER_RANK].i == rank && !strcmp(row[HTA_FR_MEMBER_GROUP].s, name))
            return row;
    }
    return NULL;
}

/* The member's sequence numbers from its entries and its pg_status. */
static void describe_member(const inputs *in, const group *g, member *m)
{
    find_run(in->coll, in->n_coll, g->name, m->rank, &m->e, &m->n);
    find_run(in->p2p, in->n_p2p, g->name, m->rank, &m->p2p, &m->n_p2p);
    m->first_seq = m->n ? m->e[0][HTA_FR_ENTRY_SEQ].i : -1;
    m->last_enqueued = m->last_started = m->last_completed = -1;
    for (size_t i = 0; i < m->n; i++) {
        int64_t seq = m->e[i][HTA_FR_ENTRY_SEQ].i, state = m->e[i][HTA_FR_ENTRY_STATE].i;
        m->last_enqueued = max64(m->last_enqueued, seq);
        if (state >= HTA_FR_STARTED)
            m->last_started = max64(m->last_started, seq);
        if (state == HTA_FR_COMPLETED)
            m->last_completed = max64(m->last_completed, seq);
    }
    const hta_cell *row = member_row(in, g->name, m->rank);
    if (row) {
        m->last_enqueued = max64(m->last_enqueued, row[HTA_FR_MEMBER_LAST_ENQUEUED].i);
        m->last_started = max64(m->last_started, row[HTA_FR_MEMBER_LAST_STARTED].i);
        m->last_completed = max64(m->last_completed, row[HTA_FR_MEMBER_LAST_COMPLETED].i);
    }
}

static int add_rank(int64_t **ranks, size_t *n, int64_t rank)
{
    for (size_t i = 0; i < *n; i++)
        if ((*ranks)[i] == rank)
            return 0;
    int64_t *grown = realloc(*ranks, (*n + 1) * sizeof **ranks);
    if (!grown)
        return -1;
    *ranks = grown;
    (*ranks)[(*n)++] = rank;
    return 0;
}

static int compare_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The group's members: the ranks pg_config lists for it, and every rank
 * whose dump names it. */
static int build_group(const inputs *in, const char *name, group *g)
{
    int64_t *ranks = NULL;
    size_t n = 0;
    g->name = name;
    g->desc = "";
    for (size_t i = 0; i < in->members->n_rows; i++) {
        const hta_cell *row = hta_table_row(in->members, i);
        if (strcmp(row[HTA_FR_MEMBER_GROUP].s, name))
            continue;
        g->desc = row[HTA_FR_MEMBER_DESC].s;
        int64_t *listed = NULL;
        long k = hta_parse_int_list(row[HTA_FR_MEMBER_RANKS].s, &listed);
        int rc = k < 0 || add_rank(&ranks, &n, row[HTA_FR_MEMBER_RANK].i);
        for (long j = 0; rc == 0 && j < k; j++)
            rc = add_rank(&ranks, &n, listed[j]);
        if (rc == 0 && k > g->n_ranks) {
            free(g->ranks);            /* the group ranks' global ones, in order */
            g->ranks = listed;
            g->n_ranks = k;
            listed = NULL;
        }
        free(listed);
        if (rc) {
            free(ranks);
            return -1;
        }
    }
    qsort(ranks, n, sizeof *ranks, compare_i64);
    g->m = calloc(n ? n : 1, sizeof *g->m);
    if (!g->m) {
        free(ranks);
        return -1;
    }
    g->n = n;
    g->max_seq = -1;
    for (size_t i = 0; i < n; i++) {
        member *m = &g->m[i];
        m->rank = ranks[i];
        m->present = member_row(in, name, m->rank) != NULL;
        describe_member(in, g, m);
        g->max_seq = max64(g->max_seq, m->last_enqueued);
    }
    free(ranks);
    return 0;
}

/* ---- texts ---------------------------------------------------------------- */

static int list_rank(hta_buf *b, int64_t rank)
{
    char num[32];
    int n = snprintf(num, sizeof num, "%s%" PRId64, b->len ? "," : "", rank);
    return hta_buf_append(b, num, (size_t)n);
}

static const char *text_of(const hta_buf *b)
{
    return b->data ? b->data : "";
}

/* ---- the comparison at one seq ------------------------------------------- */

/* The column's value that more than half of the entries hold, or NULL. */
static const char *majority(const hta_cell *const *rows, size_t n, int column)
{
    for (size_t i = 0; i < n; i++) {
        size_t count = 0;
        for (size_t j = 0; j < n; j++)
            count += !strcmp(rows[i][column].s, rows[j][column].s);
        if (2 * count > n)
            return rows[i][column].s;
    }
    return NULL;
}

static const int SIGNATURE[] = {HTA_FR_ENTRY_OP, HTA_FR_ENTRY_INPUT_SIZES,
                                HTA_FR_ENTRY_OUTPUT_SIZES, HTA_FR_ENTRY_INPUT_DTYPES,
                                HTA_FR_ENTRY_OUTPUT_DTYPES};
#define N_SIGNATURE (sizeof SIGNATURE / sizeof SIGNATURE[0])

/* The entries of the group's members at seq (those left in the comparison;
 * skip: a member left out too), and who they belong to. */
static size_t entries_at(const group *g, int64_t seq, size_t skip, const hta_cell **rows,
                         size_t *who)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n; i++) {
        const hta_cell *e = i == skip || g->m[i].desynced ? NULL : entry_at(&g->m[i], seq);
        if (e) {
            rows[n] = e;
            who[n++] = i;
        }
    }
    return n;
}

/* Whether member i's entry at seq is what the others hold at seq + 1. */
static int is_next_collective(const group *g, size_t i, const hta_cell *e, int64_t seq,
                              const hta_cell **rows, size_t *who)
{
    size_t n = entries_at(g, seq + 1, i, rows, who);
    if (n == 0)
        return 0;
    for (size_t k = 0; k < N_SIGNATURE; k++) {
        const char *v = majority(rows, n, SIGNATURE[k]);
        if (!v || strcmp(v, e[SIGNATURE[k]].s))
            return 0;
    }
    return 1;
}

typedef struct finding {
    const char *kind;
    int64_t seq;
    const char *op;
    hta_buf culprits, waiting, detail, frames;
} finding;

static void finding_free(finding *f)
{
    hta_buf_free(&f->culprits);
    hta_buf_free(&f->waiting);
    hta_buf_free(&f->detail);
    hta_buf_free(&f->frames);
}

static int put_finding(const inputs *in, const group *g, finding *f)
{
    hta_row_builder row = hta_table_add_row(in->findings);
    hta_row_put_str(&row, f->kind);
    hta_row_put_str(&row, g->name);
    hta_row_put_str(&row, g->desc);
    hta_row_put_i64(&row, f->seq);
    hta_row_put_str(&row, f->op ? f->op : "");
    hta_row_put_str(&row, text_of(&f->culprits));
    hta_row_put_str(&row, text_of(&f->waiting));
    hta_row_put_str(&row, text_of(&f->detail));
    hta_row_put_str(&row, text_of(&f->frames));
    int rc = hta_row_done(&row);
    finding_free(f);
    return rc;
}

static int appendf(hta_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int appendf(hta_buf *b, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    return hta_buf_append(b, text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
}

/* The members blocked in seq: enqueued it and not completed it, as their
 * entries (or, where the ring no longer holds it, pg_status) say; not the
 * culprits. */
static int list_waiting(const group *g, int64_t seq, const int *culprit, hta_buf *b)
{
    int rc = hta_buf_append(b, "", 0);
    for (size_t i = 0; rc == 0 && i < g->n; i++) {
        const member *m = &g->m[i];
        if (!m->present || culprit[i] || m->desynced)
            continue;
        const hta_cell *e = entry_at(m, seq);
        int blocked = e ? e[HTA_FR_ENTRY_STATE].i != HTA_FR_COMPLETED
                        : m->last_enqueued >= seq && m->last_completed < seq;
        if (blocked)
            rc = list_rank(b, m->rank);
    }
    return rc;
}

static int list_missing(const group *g, hta_buf *b)
{
    int rc = hta_buf_append(b, "", 0);
    for (size_t i = 0; rc == 0 && i < g->n; i++)
        if (!g->m[i].present)
            rc = list_rank(b, g->m[i].rank);
    return rc;
}

/* "rank R: " and the culprit's entry e in words. */
static int describe_frames(hta_buf *b, int64_t rank, const hta_cell *e)
{
    return appendf(b, "%srank %" PRId64 ": ", b->len ? "; " : "", rank) ||
           hta_fr_describe(b, e[HTA_FR_ENTRY_OP].s, e[HTA_FR_ENTRY_SEQ].i,
                           e[HTA_FR_ENTRY_GROUP].s, e[HTA_FR_ENTRY_STATE].i,
                           e[HTA_FR_ENTRY_FRAMES].s);
}

/* "rank R: " and its newest entry over all its groups, what it was doing
 * last (as its dump's "_fr_members" rows carry it). */
static int describe_last_entry(const inputs *in, const group *g, int64_t rank, hta_buf *b)
{
    const hta_cell *row = member_row(in, g->name, rank);
    if (!row || !row[HTA_FR_MEMBER_LAST_ENTRY].s[0])
        return 0;
    return appendf(b, "%srank %" PRId64 ": ", b->len ? "; " : "", rank) ||
           hta_buf_append(b, row[HTA_FR_MEMBER_LAST_ENTRY].s,
                          strlen(row[HTA_FR_MEMBER_LAST_ENTRY].s));
}

/* One kind of disagreement at seq (an op, the sizes, the dtypes): the
 * members outside the majority are its culprits. */
static int mismatch(const inputs *in, const group *g, int64_t seq, const hta_cell **rows,
                    const size_t *who, size_t n, const int *columns, size_t n_columns,
                    const char *kind, int *done, int *culprit_out)
{
    int any = 0, no_majority = 0;
    int *culprit = calloc(g->n, sizeof *culprit);
    if (!culprit)
        return -1;
    finding f = {.kind = kind, .seq = seq, .op = majority(rows, n, HTA_FR_ENTRY_OP)};
    for (size_t c = 0; c < n_columns; c++) {
        const char *major = majority(rows, n, columns[c]);
        for (size_t k = 0; k < n; k++) {
            if (done[who[k]] || (major && !strcmp(rows[k][columns[c]].s, major)))
                continue;
            any = 1;
            if (major)
                culprit[who[k]] = 1;
            else
                no_majority = 1;
        }
    }
    int rc = 0;
    if (any) {
        for (size_t k = 0; rc == 0 && k < n; k++)
            if (culprit[who[k]]) {
                const hta_cell *e = rows[k];
                rc = list_rank(&f.culprits, g->m[who[k]].rank) ||
                     appendf(&f.detail, "%srank %" PRId64 ": %s %s -> %s %s",
                             f.detail.len ? "; " : "", g->m[who[k]].rank, e[HTA_FR_ENTRY_OP].s,
                             e[HTA_FR_ENTRY_INPUT_SIZES].s, e[HTA_FR_ENTRY_OUTPUT_SIZES].s,
                             e[HTA_FR_ENTRY_INPUT_DTYPES].s) ||
                     describe_frames(&f.frames, g->m[who[k]].rank, e);
            }
        const hta_cell *first = NULL;
        size_t others = 0;
        for (size_t k = 0; k < n; k++)
            if (!culprit[who[k]]) {
                first = first ? first : rows[k];
                others++;
            }
        if (rc == 0 && no_majority)
            rc = appendf(&f.detail, "%sno majority among the %zu members that recorded it: the "
                         "dumps cannot tell whose is wrong", f.detail.len ? "; " : "", n);
        else if (rc == 0 && first)
            rc = appendf(&f.detail, "; the others (%zu of %zu): %s %s -> %s %s", others,
                         n, first[HTA_FR_ENTRY_OP].s, first[HTA_FR_ENTRY_INPUT_SIZES].s,
                         first[HTA_FR_ENTRY_OUTPUT_SIZES].s, first[HTA_FR_ENTRY_INPUT_DTYPES].s);
        rc = rc || list_waiting(g, seq, culprit, &f.waiting) || put_finding(in, g, &f);
    }
    for (size_t i = 0; i < g->n; i++) {
        done[i] |= culprit[i];
        culprit_out[i] |= culprit[i];
    }
    finding_free(&f);
    free(culprit);
    return rc ? -1 : any;
}

static int skipped(const inputs *in, const group *g, int64_t seq, const hta_cell **rows,
                   size_t *who, size_t n, const hta_cell **scratch, size_t *scratch_who,
                   int *done, int *culprit)
{
    int any = 0;
    for (size_t k = 0; k < n; k++) {
        int differs = 0;
        for (size_t c = 0; c < N_SIGNATURE; c++) {
            const char *major = majority(rows, n, SIGNATURE[c]);
            differs |= major && strcmp(major, rows[k][SIGNATURE[c]].s);
        }
        if (!differs || !is_next_collective(g, who[k], rows[k], seq, scratch, scratch_who))
            continue;
        any = done[who[k]] = culprit[who[k]] = 1;
        finding f = {.kind = "skipped", .seq = seq, .op = majority(rows, n, HTA_FR_ENTRY_OP)};
        int rc = list_rank(&f.culprits, g->m[who[k]].rank) ||
                 appendf(&f.detail, "rank %" PRId64 "'s entry at #%" PRId64 " is the others' #%"
                         PRId64 " (%s %s): its sequence runs one collective short from here",
                         g->m[who[k]].rank, seq, seq + 1, rows[k][HTA_FR_ENTRY_OP].s,
                         rows[k][HTA_FR_ENTRY_INPUT_SIZES].s) ||
                 describe_frames(&f.frames, g->m[who[k]].rank, rows[k]);
        int *only = calloc(g->n, sizeof *only);
        rc = rc || !only || (memcpy(only, culprit, g->n * sizeof *only), 0) ||
             list_waiting(g, seq, only, &f.waiting) || put_finding(in, g, &f);
        free(only);
        finding_free(&f);
        if (rc)
            return -1;
    }
    return any;
}

/* ---- one group ----------------------------------------------------------- */

static int put_collective(hta_table *t, const group *g, int64_t seq, const hta_cell **rows,
                          size_t n, const char *state)
{
    hta_buf recorded = {0}, not_recorded = {0};
    int64_t counts[3] = {0, 0, 0};
    int rc = hta_buf_append(&recorded, "", 0) || hta_buf_append(&not_recorded, "", 0);
    for (size_t i = 0; rc == 0 && i < g->n; i++) {
        const member *m = &g->m[i];
        const hta_cell *e = entry_at(m, seq);
        if (e) {
            counts[e[HTA_FR_ENTRY_STATE].i <= 2 ? e[HTA_FR_ENTRY_STATE].i : 0]++;
            rc = list_rank(&recorded, m->rank);
        } else if (m->present && m->first_seq > seq)
            rc = list_rank(&not_recorded, m->rank);   /* its ring wrapped past it */
    }
    int sizes_agree = 1, dtypes_agree = 1;
    for (size_t k = 0; k < n; k++) {
        sizes_agree &=
            !strcmp(rows[k][HTA_FR_ENTRY_INPUT_SIZES].s, rows[0][HTA_FR_ENTRY_INPUT_SIZES].s) &&
            !strcmp(rows[k][HTA_FR_ENTRY_OUTPUT_SIZES].s, rows[0][HTA_FR_ENTRY_OUTPUT_SIZES].s);
        dtypes_agree &=
            !strcmp(rows[k][HTA_FR_ENTRY_INPUT_DTYPES].s, rows[0][HTA_FR_ENTRY_INPUT_DTYPES].s) &&
            !strcmp(rows[k][HTA_FR_ENTRY_OUTPUT_DTYPES].s, rows[0][HTA_FR_ENTRY_OUTPUT_DTYPES].s);
    }
    const char *op = majority(rows, n, HTA_FR_ENTRY_OP);
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_str(&row, g->name);
    hta_row_put_i64(&row, seq);
    hta_row_put_str(&row, op ? op : n ? rows[0][HTA_FR_ENTRY_OP].s : "");
    hta_row_put_i64(&row, (int64_t)g->n);
    hta_row_put_str(&row, text_of(&recorded));
    hta_row_put_str(&row, text_of(&not_recorded));
    hta_row_put_i64(&row, counts[HTA_FR_SCHEDULED]);
    hta_row_put_i64(&row, counts[HTA_FR_STARTED]);
    hta_row_put_i64(&row, counts[HTA_FR_COMPLETED]);
    hta_row_put_i64(&row, n > 1 ? sizes_agree : -1);
    hta_row_put_i64(&row, n > 1 ? dtypes_agree : -1);
    hta_row_put_str(&row, state);
    rc = rc || hta_row_done(&row);
    hta_buf_free(&recorded);
    hta_buf_free(&not_recorded);
    return rc;
}

/* The members behind the others: their last enqueued seq is below one
 * that another member enqueued.  One finding per seq they stopped short of. */
static int not_joined(const inputs *in, const group *g, int64_t seq, int *culprit)
{
    finding f = {.kind = "not_joined", .seq = seq};
    int any = 0, rc = 0;
    int64_t ahead = -1;
    for (size_t i = 0; i < g->n; i++)
        if (g->m[i].present && !g->m[i].desynced && g->m[i].last_enqueued >= seq)
            ahead = g->m[i].rank;
    for (size_t i = 0; rc == 0 && ahead >= 0 && i < g->n; i++) {
        const member *m = &g->m[i];
        if (!m->present || m->desynced || max64(m->last_enqueued, 0) + 1 != seq)
            continue;
        any = culprit[i] = 1;
        rc = list_rank(&f.culprits, m->rank) || describe_last_entry(in, g, m->rank, &f.frames);
    }
    if (!any || rc)
        return rc ? -1 : 0;
    for (size_t i = 0; !f.op && i < g->n; i++) {
        const hta_cell *e = g->m[i].desynced ? NULL : entry_at(&g->m[i], seq);
        f.op = e ? e[HTA_FR_ENTRY_OP].s : NULL;
    }
    rc = list_waiting(g, seq, culprit, &f.waiting) ||
         appendf(&f.detail, "ranks %s enqueued #%" PRId64 " (%s) and rank(s) %s never did: "
                 "behind the others", text_of(&f.waiting), seq, f.op ? f.op : "not recorded",
                 text_of(&f.culprits)) ||
         put_finding(in, g, &f);
    finding_free(&f);
    return rc ? -1 : 1;
}

/* Every member started seq and none completed it, nothing else explains
 * it: the network or NCCL; undecided when a member's dump is absent. */
static int stuck(const inputs *in, const group *g, int64_t seq, int missing)
{
    size_t started = 0, present = 0;
    for (size_t i = 0; i < g->n; i++) {
        const member *m = &g->m[i];
        if (!m->present)
            continue;
        present++;
        const hta_cell *e = m->desynced ? NULL : entry_at(m, seq);
        started += e && e[HTA_FR_ENTRY_STATE].i == HTA_FR_STARTED;
    }
    if (present == 0 || started != present)
        return 0;
    int *no_culprit = calloc(g->n, sizeof *no_culprit);
    if (!no_culprit)
        return -1;
    finding f = {.kind = missing ? "undecided" : "stuck", .seq = seq};
    for (size_t i = 0; !f.op && i < g->n; i++) {
        const hta_cell *e = entry_at(&g->m[i], seq);
        f.op = e ? e[HTA_FR_ENTRY_OP].s : NULL;
    }
    hta_buf absent = {0};
    int rc = list_waiting(g, seq, no_culprit, &f.waiting) || list_missing(g, &absent);
    if (rc == 0 && missing)
        rc = appendf(&f.detail, "ranks %s started #%" PRId64 " and none completed it; the dump "
                     "of rank(s) %s is absent, so the dumps cannot tell whether it never joined "
                     "or the network is stuck", text_of(&f.waiting), seq, text_of(&absent));
    else if (rc == 0)
        rc = appendf(&f.detail, "every member started #%" PRId64 " and none completed it: a "
                     "network or NCCL fault, not a rank", seq);
    rc = rc || put_finding(in, g, &f);
    hta_buf_free(&absent);
    finding_free(&f);
    free(no_culprit);
    return rc ? -1 : 1;
}

static int diagnose_group(const inputs *in, group *g, hta_table *collectives)
{
    size_t cap = g->n ? g->n : 1;
    const hta_cell **rows = calloc(cap, sizeof *rows), **scratch = calloc(cap, sizeof *scratch);
    size_t *who = calloc(cap, sizeof *who), *scratch_who = calloc(cap, sizeof *scratch_who);
    int *done = calloc(cap, sizeof *done), *culprit = calloc(cap, sizeof *culprit);
    int rc = rows && scratch && who && scratch_who && done && culprit ? 0 : -1;
    int missing = 0;
    int64_t first = -1;
    for (size_t i = 0; i < g->n; i++) {
        missing |= !g->m[i].present;
        if (g->m[i].first_seq >= 0 && (first < 0 || g->m[i].first_seq < first))
            first = g->m[i].first_seq;
    }
    if (first < 0)
        first = g->max_seq >= 0 ? g->max_seq : 0;
    for (int64_t seq = first; rc == 0 && seq <= g->max_seq; seq++) {
        memset(done, 0, cap * sizeof *done);
        memset(culprit, 0, cap * sizeof *culprit);
        size_t n = entries_at(g, seq, SIZE_MAX, rows, who);
        static const int op[] = {HTA_FR_ENTRY_OP};
        static const int sizes[] = {HTA_FR_ENTRY_INPUT_SIZES, HTA_FR_ENTRY_OUTPUT_SIZES};
        static const int dtypes[] = {HTA_FR_ENTRY_INPUT_DTYPES, HTA_FR_ENTRY_OUTPUT_DTYPES};
        int k_skip = skipped(in, g, seq, rows, who, n, scratch, scratch_who, done, culprit);
        /* The ones that skipped are out of every comparison from here. */
        for (size_t i = 0; k_skip > 0 && i < g->n; i++)
            g->m[i].desynced |= culprit[i];
        int k_op = k_skip < 0 ? -1 : mismatch(in, g, seq, rows, who, n, op, 1, "op_mismatch",
                                              done, culprit);
        int k_size = k_op < 0 ? -1 : mismatch(in, g, seq, rows, who, n, sizes, 2,
                                              "size_mismatch", done, culprit);
        int k_dtype = k_size < 0 ? -1 : mismatch(in, g, seq, rows, who, n, dtypes, 2,
                                                 "dtype_mismatch", done, culprit);
        int k_join = k_dtype < 0 ? -1 : not_joined(in, g, seq, culprit);
        int any = k_skip > 0 || k_op > 0 || k_size > 0 || k_dtype > 0 || k_join > 0;
        int k_stuck = k_join < 0 ? -1 : any ? 0 : stuck(in, g, seq, missing);
        if (k_join < 0 || k_stuck < 0) {
            rc = -1;
            break;
        }
        const char *state = k_skip > 0    ? "skipped"
                            : k_op > 0    ? "op_mismatch"
                            : k_size > 0  ? "size_mismatch"
                            : k_dtype > 0 ? "dtype_mismatch"
                            : k_join > 0  ? "not_joined"
                            : k_stuck > 0 ? (missing ? "undecided" : "stuck")
                            : n < g->n    ? "partial"
                                          : "matched";
        rc = put_collective(collectives, g, seq, rows, n, state);
    }
    if (rc == 0 && missing) {
        finding f = {.kind = "dump_missing", .seq = -1, .op = ""};
        rc = list_missing(g, &f.culprits) ||
             appendf(&f.detail, "no dump of rank(s) %s: their entries cannot be compared",
                     text_of(&f.culprits)) ||
             hta_buf_append(&f.waiting, "", 0) || put_finding(in, g, &f);
        finding_free(&f);
    }
    free(rows);
    free(scratch);
    free(who);
    free(scratch_who);
    free(done);
    free(culprit);
    return rc;
}

static int put_members(hta_table *t, const group *g)
{
    for (size_t i = 0; i < g->n; i++) {
        const member *m = &g->m[i];
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_str(&row, g->name);
        hta_row_put_i64(&row, m->rank);
        hta_row_put_str(&row, g->desc);
        hta_row_put_i64(&row, m->present);
        hta_row_put_i64(&row, m->first_seq);
        hta_row_put_i64(&row, m->last_enqueued);
        hta_row_put_i64(&row, m->last_started);
        hta_row_put_i64(&row, m->last_completed);
        if (hta_row_done(&row))
            return -1;
    }
    return 0;
}

/* Group names in the order a user reads them: numbers by value. */
static int compare_names(const void *pa, const void *pb)
{
    const char *a = *(const char *const *)pa, *b = *(const char *const *)pb;
    char *ea, *eb;
    long long x = strtoll(a, &ea, 10), y = strtoll(b, &eb, 10);
    if (ea != a && !*ea && eb != b && !*eb)
        return (x > y) - (x < y);
    return strcmp(a, b);
}

static int group_names(const hta_table *members, const char ***names, size_t *n)
{
    *names = calloc(members->n_rows ? members->n_rows : 1, sizeof **names);
    *n = 0;
    if (!*names)
        return -1;
    for (size_t i = 0; i < members->n_rows; i++) {
        const char *g = hta_table_row(members, i)[HTA_FR_MEMBER_GROUP].s;
        int seen = 0;
        for (size_t j = 0; j < *n && !seen; j++)
            seen = !strcmp((*names)[j], g);
        if (!seen)
            (*names)[(*n)++] = g;
    }
    qsort(*names, *n, sizeof **names, compare_names);
    return 0;
}

/* A point-to-point entry's op: "PREFIXsend A->B" or "PREFIXrecv A<-B" (A
 * this rank, B its peer, group ranks); the op the peer posts for it into
 * peer_op.  0 when the name is neither. */
static int p2p_pair(const char *op, int64_t *me, int64_t *peer, char *peer_op, size_t cap)
{
    const char *send = strstr(op, "send "), *recv = strstr(op, "recv ");
    const char *at = send ? send : recv;
    long long a, b;
    char arrow[3] = {0};
    if (!at || sscanf(at + 5, "%lld%2[-<>]%lld", &a, arrow, &b) != 3 ||
        strcmp(arrow, send ? "->" : "<-"))
        return 0;
    *me = a;
    *peer = b;
    int n = snprintf(peer_op, cap, "%.*s%s %lld%s%lld", (int)(at - op), op,
                     send ? "recv" : "send", b, send ? "<-" : "->", a);
    return n > 0 && (size_t)n < cap;
}

static const member *member_of(const group *g, int64_t group_rank)
{
    int64_t rank = group_rank >= 0 && group_rank < g->n_ranks ? g->ranks[group_rank] : group_rank;
    for (size_t i = 0; i < g->n; i++)
        if (g->m[i].rank == rank)
            return &g->m[i];
    return NULL;
}

static int posted_unfinished(const member *m, const char *op)
{
    for (size_t k = 0; k < m->n_p2p; k++)
        if (m->p2p[k][HTA_FR_ENTRY_STATE].i != HTA_FR_COMPLETED &&
            !strcmp(m->p2p[k][HTA_FR_ENTRY_OP].s, op))
            return 1;
    return 0;
}

/* A send or receive that has not completed while its peer has no
 * unfinished receive or send to match it: the peer never posted it
 * (matched by the peer and the direction; the p2p_seq_id counts each
 * rank's own point-to-point ops, so it cannot pair them across ranks). */
static int p2p_not_joined(const inputs *in, const group *g)
{
    for (size_t i = 0; i < g->n; i++) {
        const member *m = &g->m[i];
        for (size_t k = 0; m->present && k < m->n_p2p; k++) {
            const hta_cell *e = m->p2p[k];
            int64_t me, peer_rank;
            char peer_op[256];
            if (e[HTA_FR_ENTRY_STATE].i == HTA_FR_COMPLETED ||
                !p2p_pair(e[HTA_FR_ENTRY_OP].s, &me, &peer_rank, peer_op, sizeof peer_op))
                continue;
            const member *peer = member_of(g, peer_rank);
            if (!peer || !peer->present || posted_unfinished(peer, peer_op))
                continue;
            finding f = {.kind = "p2p_not_joined", .seq = e[HTA_FR_ENTRY_P2P_SEQ].i,
                         .op = e[HTA_FR_ENTRY_OP].s};
            int rc = list_rank(&f.culprits, peer->rank) || list_rank(&f.waiting, m->rank) ||
                     appendf(&f.detail, "rank %" PRId64 " posted %s (p2p #%" PRId64 ", %s) and "
                             "rank %" PRId64 " never posted the matching %s", m->rank,
                             e[HTA_FR_ENTRY_OP].s, e[HTA_FR_ENTRY_P2P_SEQ].i,
                             hta_fr_state_name((hta_fr_state)e[HTA_FR_ENTRY_STATE].i),
                             peer->rank, peer_op) ||
                     describe_last_entry(in, g, peer->rank, &f.frames) || put_finding(in, g, &f);
            finding_free(&f);
            if (rc)
                return -1;
        }
    }
    return 0;
}

/* The groups whose rows this process holds (owned), into out. */
static int diagnose_owned(const hta_tableset *owned, hta_tableset *out)
{
    inputs in = {.entries = hta_tableset_find(owned, hta_fr_entries_table.name),
                 .members = hta_tableset_find(owned, hta_fr_members_table.name)};
    if (!in.members)
        return 0;
    hta_table *groups = hta_tableset_table(out, &hta_fr_groups_table);
    hta_table *collectives = hta_tableset_table(out, &hta_fr_collectives_table);
    in.findings = hta_tableset_table(out, &hta_fr_findings_table);
    size_t n_rows = in.entries ? in.entries->n_rows : 0;
    in.coll = calloc(n_rows ? n_rows : 1, sizeof *in.coll);
    in.p2p = calloc(n_rows ? n_rows : 1, sizeof *in.p2p);
    const char **names = NULL;
    size_t n_names = 0;
    int rc = groups && collectives && in.findings && in.coll && in.p2p ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n_rows; i++) {
        const hta_cell *row = hta_table_row(in.entries, i);
        if (row[HTA_FR_ENTRY_IS_P2P].i)
            in.p2p[in.n_p2p++] = row;
        else
            in.coll[in.n_coll++] = row;
    }
    if (rc == 0) {
        qsort(in.coll, in.n_coll, sizeof *in.coll, compare_entries);
        qsort(in.p2p, in.n_p2p, sizeof *in.p2p, compare_by_record);
        rc = group_names(in.members, &names, &n_names);
    }
    for (size_t i = 0; rc == 0 && i < n_names; i++) {
        group g = {0};
        rc = build_group(&in, names[i], &g) || put_members(groups, &g) ||
             diagnose_group(&in, &g, collectives) || p2p_not_joined(&in, &g);
        free(g.m);
        free(g.ranks);
    }
    free(names);
    free(in.coll);
    free(in.p2p);
    return rc;
}

/* A row's place in group order: its group's among the names sorted. */
typedef struct group_order {
    const char **names;
    size_t n, column;
} group_order;

static int64_t group_position(const hta_cell *row, void *ctx)
{
    const group_order *o = ctx;
    const char *name = row[o->column].s;
    size_t lo = 0, hi = o->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (compare_names(&o->names[mid], &name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (int64_t)lo;
}

/* t's rows in group order, each group's rows as its owner wrote them: the
 * same whatever process diagnosed which group. */
static int sort_by_group(hta_table *t, size_t column)
{
    if (!t || t->n_rows < 2)
        return 0;
    group_order o = {.names = malloc(t->n_rows * sizeof *o.names), .column = column};
    if (!o.names)
        return -1;
    for (size_t r = 0; r < t->n_rows; r++)
        o.names[o.n++] = hta_table_row(t, r)[column].s;
    qsort(o.names, o.n, sizeof *o.names, compare_names);
    int rc = hta_table_sort_by_key(t, group_position, &o);
    free(o.names);
    return rc;
}

int hta_hang_diagnosis(const hta_processes *pr, hta_crossrank_tables *t,
                       const hta_crossrank_settings *opt, hta_error *err)
{
    (void)opt;
    static const hta_group_keyed keyed[] = {{&hta_fr_entries_table, HTA_FR_ENTRY_GROUP},
                                            {&hta_fr_members_table, HTA_FR_MEMBER_GROUP}};
    int mine = hta_tableset_find(t->exchanged, hta_fr_members_table.name) != NULL;
    if (!hta_processes_any(pr, mine))
        return 0;                  /* no process read a dump */
    hta_tableset owned = {0}, results = {0};
    int failed = hta_send_to_group_owners(pr, t->exchanged, keyed, 2, &owned, err) != 0;
    hta_tableset_remove(t->exchanged, hta_fr_entries_table.name);
    hta_tableset_remove(t->exchanged, hta_fr_members_table.name);
    if (!failed && diagnose_owned(&owned, &results))
        failed = hta_fail(err, "out of memory diagnosing the Flight Recorder dumps") != 0;
    hta_tableset_free(&owned);
    failed = hta_processes_any(pr, failed);
    if (!failed && hta_processes_gather_tables(pr, &results, t->all, err))
        failed = 1;
    hta_tableset_free(&results);
    if (!failed && pr->me == HTA_ROOT &&
        (sort_by_group(hta_tableset_find(t->all, hta_fr_groups_table.name), HTA_FR_GROUPS_GROUP) ||
         sort_by_group(hta_tableset_find(t->all, hta_fr_collectives_table.name),
                       HTA_FR_COLL_GROUP) ||
         sort_by_group(hta_tableset_find(t->all, hta_fr_findings_table.name),
                       HTA_FR_FINDINGS_GROUP)))
        failed = hta_fail(err, "out of memory ordering the hang diagnosis") != 0;
    return hta_processes_any(pr, failed) ? -1 : 0;
}
