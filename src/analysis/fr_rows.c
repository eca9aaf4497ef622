/* fr_rows.c: one Flight Recorder dump's rows (see analysis/fr_rows.h). */
#include "analysis/fr_rows.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

static const hta_column FR_RANKS_COLUMNS[HTA_FR_RANKS_N_COLUMNS] = {
    [HTA_FR_RANKS_RANK] = {"rank", HTA_COL_I64},
    [HTA_FR_RANKS_FILE] = {"file", HTA_COL_STR},
    [HTA_FR_RANKS_VERSION] = {"version", HTA_COL_STR},
    [HTA_FR_RANKS_ENCODING] = {"encoding", HTA_COL_STR},
    [HTA_FR_RANKS_COMM_LIB_VERSION] = {"comm_lib_version", HTA_COL_STR},
    [HTA_FR_RANKS_ENTRIES] = {"entries", HTA_COL_I64},
    [HTA_FR_RANKS_FIRST_RECORD] = {"first_record", HTA_COL_I64},
    [HTA_FR_RANKS_LAST_RECORD] = {"last_record", HTA_COL_I64},
    [HTA_FR_RANKS_WRAPPED] = {"wrapped", HTA_COL_I64},
    [HTA_FR_RANKS_GROUPS] = {"groups", HTA_COL_STR},
};
const hta_table_spec hta_fr_ranks_table = {"fr_ranks", FR_RANKS_COLUMNS, HTA_FR_RANKS_N_COLUMNS,
                                           HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

static const hta_column FR_ENTRY_COLUMNS[HTA_FR_ENTRY_N_COLUMNS] = {
    [HTA_FR_ENTRY_RANK] = {"rank", HTA_COL_I64},
    [HTA_FR_ENTRY_GROUP] = {"group", HTA_COL_STR},
    [HTA_FR_ENTRY_DESC] = {"desc", HTA_COL_STR},
    [HTA_FR_ENTRY_SEQ] = {"seq", HTA_COL_I64},
    [HTA_FR_ENTRY_P2P_SEQ] = {"p2p_seq", HTA_COL_I64},
    [HTA_FR_ENTRY_IS_P2P] = {"is_p2p", HTA_COL_I64},
    [HTA_FR_ENTRY_OP] = {"op", HTA_COL_STR},
    [HTA_FR_ENTRY_INPUT_SIZES] = {"input_sizes", HTA_COL_STR},
    [HTA_FR_ENTRY_OUTPUT_SIZES] = {"output_sizes", HTA_COL_STR},
    [HTA_FR_ENTRY_INPUT_DTYPES] = {"input_dtypes", HTA_COL_STR},
    [HTA_FR_ENTRY_OUTPUT_DTYPES] = {"output_dtypes", HTA_COL_STR},
    [HTA_FR_ENTRY_STATE] = {"state", HTA_COL_I64},
    [HTA_FR_ENTRY_RECORD_ID] = {"record_id", HTA_COL_I64},
    [HTA_FR_ENTRY_FRAMES] = {"frames", HTA_COL_STR},
};
const hta_table_spec hta_fr_entries_table = {
    "_fr_entries", FR_ENTRY_COLUMNS, HTA_FR_ENTRY_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_EXCHANGED | HTA_TABLE_SCRATCH};

static const hta_column FR_MEMBER_COLUMNS[HTA_FR_MEMBER_N_COLUMNS] = {
    [HTA_FR_MEMBER_RANK] = {"rank", HTA_COL_I64},
    [HTA_FR_MEMBER_GROUP] = {"group", HTA_COL_STR},
    [HTA_FR_MEMBER_DESC] = {"desc", HTA_COL_STR},
    [HTA_FR_MEMBER_RANKS] = {"ranks", HTA_COL_STR},
    [HTA_FR_MEMBER_LAST_ENQUEUED] = {"last_enqueued", HTA_COL_I64},
    [HTA_FR_MEMBER_LAST_STARTED] = {"last_started", HTA_COL_I64},
    [HTA_FR_MEMBER_LAST_COMPLETED] = {"last_completed", HTA_COL_I64},
    [HTA_FR_MEMBER_LAST_ENTRY] = {"last_entry", HTA_COL_STR},
};
const hta_table_spec hta_fr_members_table = {
    "_fr_members", FR_MEMBER_COLUMNS, HTA_FR_MEMBER_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_EXCHANGED | HTA_TABLE_SCRATCH};

int hta_fr_describe(hta_buf *b, const char *op, int64_t seq, const char *group, int64_t state,
                    const char *frames)
{
    char head[256];
    int n = snprintf(head, sizeof head, "%.100s #%" PRId64 " of group %.100s (%s): ", op, seq,
                     group, hta_fr_state_name((hta_fr_state)state));
    return hta_buf_append(b, head, (size_t)n < sizeof head ? (size_t)n : sizeof head - 1) ||
           hta_buf_append(b, frames[0] ? frames : "no frames recorded",
                          strlen(frames[0] ? frames : "no frames recorded"));
}

int64_t hta_fr_claimed_rank(const hta_fr_dump *dump, const char *path)
{
    if (dump && dump->rank >= 0)
        return dump->rank;
    size_t n = strlen(path), end = n;
    while (n > 0 && path[n - 1] >= '0' && path[n - 1] <= '9')
        n--;
    if (n == end || end - n > 9)
        return -1;
    return strtoll(path + n, NULL, 10);
}

static int is_member(const hta_fr_group *g, int64_t rank)
{
    for (size_t i = 0; i < g->n_ranks; i++)
        if (g->ranks[i] == rank)
            return 1;
    return 0;
}

static const hta_fr_group *group_named(const hta_fr_dump *d, const char *name)
{
    for (size_t i = 0; i < d->n_groups; i++)
        if (!strcmp(d->groups[i].name, name))
            return &d->groups[i];
    return NULL;
}

/* The pg_status of the group named name: pg_status is keyed by pg id,
 * which the entries tie to names. */
static const hta_fr_pg_status *status_of(const hta_fr_dump *d, const char *name)
{
    int64_t pg_id = -1;
    for (size_t i = 0; i < d->n_entries && pg_id < 0; i++)
        if (!strcmp(d->entries[i].pg_name, name))
            pg_id = d->entries[i].pg_id;
    if (pg_id < 0) {
        char *end;
        long long id = strtoll(name, &end, 10);   /* torch names groups by their id */
        pg_id = end != name && !*end ? id : -1;
    }
    for (size_t i = 0; i < d->n_status; i++)
        if (d->status[i].pg_id == pg_id && pg_id >= 0)
            return &d->status[i];
    return NULL;
}

static int join_ranks(const hta_fr_group *g, hta_buf *b)
{
    int rc = hta_buf_append(b, "", 0);
    for (size_t i = 0; rc == 0 && g && i < g->n_ranks; i++) {
        char num[32];
        int n = snprintf(num, sizeof num, "%s%" PRId64, i ? "," : "", g->ranks[i]);
        rc = hta_buf_append(b, num, (size_t)n);
    }
    return rc;
}

static int frames_text(const hta_fr_entry *e, hta_buf *b);

/* The rank's newest entry in words, what it was doing last. */
static int last_entry_text(const hta_fr_dump *d, hta_buf *b)
{
    if (!d->n_entries)
        return hta_buf_append(b, "", 0);
    const hta_fr_entry *e = &d->entries[d->n_entries - 1];
    hta_buf frames = {0};
    int rc = frames_text(e, &frames) ||
             hta_fr_describe(b, e->profiling_name, e->is_p2p ? e->p2p_seq_id : e->collective_seq_id,
                             e->pg_name, e->state, frames.data);
    hta_buf_free(&frames);
    return rc;
}

static int put_member(hta_table *t, const hta_fr_dump *d, int64_t file_index, const char *name,
                      const char *desc, const hta_fr_group *g)
{
    hta_buf ranks = {0}, last = {0};
    if (join_ranks(g, &ranks) || last_entry_text(d, &last)) {
        hta_buf_free(&ranks);
        hta_buf_free(&last);
        return -1;
    }
    const hta_fr_pg_status *st = status_of(d, name);
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, file_index);
    hta_row_put_str(&row, name);
    hta_row_put_str(&row, desc);
    hta_row_put_str(&row, ranks.data);
    hta_row_put_i64(&row, st ? st->last_enqueued : -1);
    hta_row_put_i64(&row, st ? st->last_started : -1);
    hta_row_put_i64(&row, st ? st->last_completed : -1);
    hta_row_put_str(&row, last.data);
    hta_buf_free(&ranks);
    hta_buf_free(&last);
    return hta_row_done(&row);
}

/* The groups the rank is a member of: those of pg_config listing it, and
 * any its entries name that pg_config does not list. */
static int put_members(const hta_fr_dump *d, int64_t file_index, int64_t rank, hta_tableset *out,
                       hta_buf *names)
{
    hta_table *t = hta_tableset_table(out, &hta_fr_members_table);
    if (!t)
        return -1;
    for (size_t i = 0; i < d->n_groups; i++) {
        const hta_fr_group *g = &d->groups[i];
        if (!is_member(g, rank))
            continue;
        if (put_member(t, d, file_index, g->name, g->desc, g) ||
            (names->len && hta_buf_putc(names, ',')) ||
            hta_buf_append(names, g->name, strlen(g->name)))
            return -1;
    }
    for (size_t i = 0; i < d->n_entries; i++) {
        const hta_fr_entry *e = &d->entries[i];
        const hta_fr_group *g = group_named(d, e->pg_name);
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(d->entries[j].pg_name, e->pg_name);
        if (seen || (g && is_member(g, rank)))
            continue;
        if (put_member(t, d, file_index, e->pg_name, e->pg_desc, g) ||
            (names->len && hta_buf_putc(names, ',')) ||
            hta_buf_append(names, e->pg_name, strlen(e->pg_name)))
            return -1;
    }
    return hta_buf_append(names, "", 0);
}

static int frames_text(const hta_fr_entry *e, hta_buf *b)
{
    int rc = hta_buf_append(b, "", 0);
    for (size_t i = 0; rc == 0 && i < e->n_frames; i++) {
        char line[32];
        snprintf(line, sizeof line, ":%" PRId64 ")", e->frames[i].line);
        rc = (i && hta_buf_append(b, " <- ", 4)) ||
             hta_buf_append(b, e->frames[i].name, strlen(e->frames[i].name)) ||
             hta_buf_append(b, " (", 2) ||
             hta_buf_append(b, e->frames[i].filename, strlen(e->frames[i].filename)) ||
             hta_buf_append(b, line, strlen(line));
    }
    return rc;
}

static int put_entries(const hta_fr_dump *d, int64_t file_index, hta_tableset *out)
{
    hta_table *t = hta_tableset_table(out, &hta_fr_entries_table);
    if (!t)
        return -1;
    for (size_t i = 0; i < d->n_entries; i++) {
        const hta_fr_entry *e = &d->entries[i];
        hta_buf frames = {0};
        if (frames_text(e, &frames))
            return -1;
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, file_index);
        hta_row_put_str(&row, e->pg_name);
        hta_row_put_str(&row, e->pg_desc);
        hta_row_put_i64(&row, e->collective_seq_id);
        hta_row_put_i64(&row, e->p2p_seq_id);
        hta_row_put_i64(&row, e->is_p2p);
        hta_row_put_str(&row, e->profiling_name);
        hta_row_put_str(&row, e->input_sizes);
        hta_row_put_str(&row, e->output_sizes);
        hta_row_put_str(&row, e->input_dtypes);
        hta_row_put_str(&row, e->output_dtypes);
        hta_row_put_i64(&row, (int64_t)e->state);
        hta_row_put_i64(&row, e->record_id);
        hta_row_put_str(&row, frames.data);
        hta_buf_free(&frames);
        if (hta_row_done(&row))
            return -1;
    }
    return 0;
}

int hta_fr_put_rows(const hta_fr_dump *d, const char *path, int64_t file_index, int64_t rank,
                    hta_tableset *out)
{
    hta_buf groups = {0};
    hta_table *t = hta_tableset_table(out, &hta_fr_ranks_table);
    if (!t || put_members(d, file_index, rank, out, &groups) || put_entries(d, file_index, out)) {
        hta_buf_free(&groups);
        return -1;
    }
    char encoding[32];
    if (d->encoding == HTA_FR_JSON)
        snprintf(encoding, sizeof encoding, "json");
    else
        snprintf(encoding, sizeof encoding, "pickle %d", d->pickle_protocol);
    int64_t first = d->n_entries ? d->entries[0].record_id : -1;
    int64_t last = d->n_entries ? d->entries[d->n_entries - 1].record_id : -1;
    hta_row_builder row = hta_table_add_row(t);
    hta_row_put_i64(&row, file_index);
    hta_row_put_str(&row, path);
    hta_row_put_str(&row, d->version);
    hta_row_put_str(&row, encoding);
    hta_row_put_str(&row, d->comm_lib_version);
    hta_row_put_i64(&row, (int64_t)d->n_entries);
    hta_row_put_i64(&row, first);
    hta_row_put_i64(&row, last);
    /* Record ids count from 0: a ring whose oldest entry is later has
     * overwritten the ones before. */
    hta_row_put_i64(&row, first > 0);
    hta_row_put_str(&row, groups.data);
    hta_buf_free(&groups);
    return hta_row_done(&row);
}
