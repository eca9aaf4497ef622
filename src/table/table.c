/* table.c: named result tables, packing and merging (see table/table.h).
 *
 * Packed form, native byte order (all processes of a job share it):
 *   a string dictionary: u32 n_strings, then each as u32 length + bytes;
 *   u32 n_tables, then per table: u32 name id, u32 flags, u32 n_columns, per column
 *   (u32 name id, u32 type), u64 n_rows, then the cells row by row: 8 bytes
 *   for numbers, a u32 dictionary id for strings.
 * The dictionary sends each distinct string once per process: kernel names
 * (hundreds of bytes of C++ templates) repeat in /kernels, /kernels_top and
 * every --detail row, and across the ranks a process holds. */
#include "util/large_alloc.h"
#include "util/ranked.h"
#include "util/strtab.h"
#include "table/table.h"

#include <stdlib.h>
#include <string.h>

static void table_free(hta_table *t)
{
    if (!t)
        return;
    for (size_t c = 0; c < t->n_columns; c++) {
        if (t->columns[c].type == HTA_COL_STR)
            for (size_t r = 0; r < t->n_rows; r++)
                free(t->cells[r * t->n_columns + c].s);
        free((char *)t->columns[c].name);
    }
    free(t->columns);
    free(t->cells);
    free(t->name);
    free(t);
}

void hta_tableset_free(hta_tableset *set)
{
    for (size_t i = 0; i < set->n_tables; i++)
        table_free(set->tables[i]);
    free(set->tables);
    set->tables = NULL;
    set->n_tables = 0;
}

hta_table *hta_tableset_find(const hta_tableset *set, const char *name)
{
    for (size_t i = 0; i < set->n_tables; i++)
        if (strcmp(set->tables[i]->name, name) == 0)
            return set->tables[i];
    return NULL;
}

void hta_tableset_remove(hta_tableset *set, const char *name)
{
    for (size_t i = 0; i < set->n_tables; i++) {
        if (strcmp(set->tables[i]->name, name) != 0)
            continue;
        table_free(set->tables[i]);
        memmove(&set->tables[i], &set->tables[i + 1],
                (set->n_tables - i - 1) * sizeof *set->tables);
        set->n_tables--;
        return;
    }
}

/* Moves the tables whose flags meet flags (any of them) as wanted says. */
static int take_tables(hta_tableset *set, unsigned flags, int wanted, hta_tableset *into)
{
    hta_table **grown =
        realloc(into->tables, (into->n_tables + set->n_tables + 1) * sizeof *into->tables);
    if (!grown)
        return -1;
    into->tables = grown;
    size_t kept = 0;
    for (size_t i = 0; i < set->n_tables; i++) {
        hta_table *t = set->tables[i];
        if (((t->flags & flags) != 0) == wanted)
            into->tables[into->n_tables++] = t;
        else
            set->tables[kept++] = t;
    }
    set->n_tables = kept;
    return 0;
}

int hta_tableset_take(hta_tableset *set, unsigned flags, hta_tableset *into)
{
    return take_tables(set, flags, 1, into);
}

int hta_tableset_take_others(hta_tableset *set, unsigned flags, hta_tableset *into)
{
    return take_tables(set, flags, 0, into);
}

void hta_tableset_keep(hta_tableset *set, unsigned flags)
{
    size_t kept = 0;
    for (size_t i = 0; i < set->n_tables; i++) {
        hta_table *t = set->tables[i];
        if (t->flags & flags)
            set->tables[kept++] = t;
        else
            table_free(t);
    }
    set->n_tables = kept;
}

static int same_columns(const hta_table *t, const hta_table_spec *spec)
{
    if (t->n_columns != spec->n_columns || t->flags != spec->flags)
        return 0;
    for (size_t c = 0; c < spec->n_columns; c++)
        if (t->columns[c].type != spec->columns[c].type ||
            strcmp(t->columns[c].name, spec->columns[c].name) != 0)
            return 0;
    return 1;
}

static hta_table *table_new(const hta_table_spec *spec)
{
    const hta_column *columns = spec->columns;
    size_t n = spec->n_columns;
    hta_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->flags = spec->flags;
    t->name = strdup(spec->name);
    t->columns = calloc(n ? n : 1, sizeof *t->columns);
    if (!t->name || !t->columns) {
        table_free(t);
        return NULL;
    }
    for (size_t c = 0; c < n; c++) {
        t->columns[c].type = columns[c].type;
        t->columns[c].name = strdup(columns[c].name);
        t->n_columns = c + 1;
        if (!t->columns[c].name) {
            table_free(t);
            return NULL;
        }
    }
    return t;
}

hta_table *hta_tableset_table(hta_tableset *set, const hta_table_spec *spec)
{
    hta_table *t = hta_tableset_find(set, spec->name);
    if (t)
        return same_columns(t, spec) ? t : NULL;
    hta_table **tables = realloc(set->tables, (set->n_tables + 1) * sizeof *tables);
    if (!tables)
        return NULL;
    set->tables = tables;
    t = table_new(spec);
    if (!t)
        return NULL;
    set->tables[set->n_tables++] = t;
    return t;
}

hta_table *hta_tableset_find_or_create(hta_tableset *set, const char *name,
                              const hta_column *columns, size_t n_columns)
{
    return hta_tableset_table(set, &(hta_table_spec){name, columns, n_columns, 0});
}

hta_table_spec hta_table_spec_of(const hta_table *table)
{
    return (hta_table_spec){table->name, table->columns, table->n_columns, table->flags};
}

hta_cell *hta_table_row(const hta_table *table, size_t i)
{
    return &table->cells[i * table->n_columns];
}

long hta_table_column(const hta_table *table, const char *name)
{
    for (size_t c = 0; c < table->n_columns; c++)
        if (strcmp(table->columns[c].name, name) == 0)
            return (long)c;
    return -1;
}

/* Room for n more rows, growing by doubling as hta_table_add_row does. */
static int reserve_rows(hta_table *t, size_t n)
{
    if (t->n_rows + n <= t->cap_rows)
        return 0;
    size_t cap = t->cap_rows ? t->cap_rows : 16;
    while (cap < t->n_rows + n)
        cap *= 2;
    hta_cell *cells = hta_large_realloc(t->cells, cap * t->n_columns * sizeof *cells);
    if (!cells)
        return -1;
    t->cells = cells;
    t->cap_rows = cap;
    return 0;
}

hta_row_builder hta_table_add_row(hta_table *table)
{
    hta_row_builder row = {.table = table};
    if (reserve_rows(table, 1)) {
        row.failed = 1;
        return row;
    }
    row.cells = hta_table_row(table, table->n_rows++);
    memset(row.cells, 0, table->n_columns * sizeof *row.cells);
    return row;
}

static hta_cell *row_next(hta_row_builder *row, hta_column_type type)
{
    if (row->failed || row->next >= row->table->n_columns ||
        row->table->columns[row->next].type != type) {
        row->failed = 1;
        return NULL;
    }
    return &row->cells[row->next++];
}

void hta_row_put_i64(hta_row_builder *row, int64_t v)
{
    hta_cell *c = row_next(row, HTA_COL_I64);
    if (c)
        c->i = v;
}

void hta_row_put_f64(hta_row_builder *row, double v)
{
    hta_cell *c = row_next(row, HTA_COL_F64);
    if (c)
        c->f = v;
}

void hta_row_put_str(hta_row_builder *row, const char *s)
{
    hta_cell *c = row_next(row, HTA_COL_STR);
    if (c && !(c->s = strdup(s ? s : "")))
        row->failed = 1;
}

int hta_row_done(hta_row_builder *row)
{
    if (!row->failed && row->next == row->table->n_columns)
        return 0;
    /* Leave no half row behind: the table stays consistent. */
    if (row->cells) {
        for (size_t c = 0; c < row->next; c++)
            if (row->table->columns[c].type == HTA_COL_STR)
                free(row->cells[c].s);
        row->table->n_rows--;
    }
    return -1;
}

int hta_tableset_move_rows(hta_tableset *into, hta_tableset *from)
{
    for (size_t i = 0; i < from->n_tables; i++) {
        hta_table *src = from->tables[i];
        hta_table_spec spec = hta_table_spec_of(src);
        hta_table *dst = hta_tableset_table(into, &spec);
        if (!dst || reserve_rows(dst, src->n_rows))
            return -1;
        if (src->n_rows == 0) /* the table exists in into, as after a serial run */
            continue;
        /* String cells move with their pointers: into owns them now. */
        memcpy(hta_table_row(dst, dst->n_rows), src->cells,
               src->n_rows * src->n_columns * sizeof *src->cells);
        dst->n_rows += src->n_rows;
        src->n_rows = 0;
    }
    hta_tableset_free(from);
    return 0;
}

/* Whether the rows are already in order: the usual case (a process's
 * traces come in file order, and most tables hold one rank's rows), where
 * a sort would only copy the rows. */
static int sorted_by_first_column(const hta_table *table)
{
    for (size_t r = 1; r < table->n_rows; r++)
        if (hta_table_row(table, r)[0].i < hta_table_row(table, r - 1)[0].i)
            return 0;
    return 1;
}

int hta_table_copy_row(hta_table *into, const hta_table *from, size_t i)
{
    const hta_cell *cells = hta_table_row(from, i);
    hta_row_builder row = hta_table_add_row(into);
    for (size_t c = 0; c < from->n_columns; c++) {
        if (from->columns[c].type == HTA_COL_I64)
            hta_row_put_i64(&row, cells[c].i);
        else if (from->columns[c].type == HTA_COL_F64)
            hta_row_put_f64(&row, cells[c].f);
        else
            hta_row_put_str(&row, cells[c].s);
    }
    return hta_row_done(&row);
}

static int64_t first_column(const hta_cell *row, void *ctx)
{
    (void)ctx;
    return row[0].i;
}

int hta_table_sort_by_first_column(hta_table *table)
{
    if (sorted_by_first_column(table))
        return 0;
    return hta_table_sort_by_key(table, first_column, NULL);
}

int hta_table_sort_by_key(hta_table *table, int64_t (*key)(const hta_cell *row, void *ctx),
                          void *ctx)
{
    size_t n = table->n_rows, w = table->n_columns;
    if (n < 2 || w == 0)
        return 0;
    hta_ranked_i64 *keys = malloc(n * sizeof *keys);
    hta_cell *sorted = malloc(n * w * sizeof *sorted);
    if (!keys || !sorted) {
        free(keys);
        free(sorted);
        return -1;
    }
    for (size_t r = 0; r < n; r++)
        keys[r] = (hta_ranked_i64){key(hta_table_row(table, r), ctx), r};
    hta_rank_ascending_i64(keys, n);
    for (size_t r = 0; r < n; r++)
        memcpy(&sorted[r * w], hta_table_row(table, keys[r].row), w * sizeof *sorted);
    free(table->cells);
    table->cells = sorted;
    table->cap_rows = n;
    free(keys);
    return 0;
}

size_t hta_table_lower_bound(const hta_table *table, size_t column, int64_t key)
{
    size_t lo = 0, hi = table->n_rows;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (hta_table_row(table, mid)[column].i < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

long hta_table_find_sorted(const hta_table *table, int64_t key)
{
    size_t lo = hta_table_lower_bound(table, 0, key);
    return lo < table->n_rows && hta_table_row(table, lo)[0].i == key ? (long)lo : -1;
}

void hta_table_filter(hta_table *table, int (*keep)(const hta_cell *row, void *ctx), void *ctx)
{
    size_t w = table->n_columns, out = 0;
    for (size_t r = 0; r < table->n_rows; r++) {
        hta_cell *row = hta_table_row(table, r);
        if (keep(row, ctx)) {
            memmove(hta_table_row(table, out++), row, w * sizeof *row);
            continue;
        }
        for (size_t c = 0; c < w; c++)
            if (table->columns[c].type == HTA_COL_STR)
                free(row[c].s);
    }
    table->n_rows = out;
}

/* ---- packing ---------------------------------------------------------- */

static int intern_all(const hta_tableset *set, hta_strtab *dict)
{
    for (size_t i = 0; i < set->n_tables; i++) {
        const hta_table *t = set->tables[i];
        if (hta_strtab_intern(dict, t->name, strlen(t->name)) == UINT32_MAX)
            return -1;
        for (size_t c = 0; c < t->n_columns; c++) {
            const char *col = t->columns[c].name;
            if (hta_strtab_intern(dict, col, strlen(col)) == UINT32_MAX)
                return -1;
            if (t->columns[c].type != HTA_COL_STR)
                continue;
            for (size_t r = 0; r < t->n_rows; r++) {
                const char *v = hta_table_row(t, r)[c].s;
                if (hta_strtab_intern(dict, v, strlen(v)) == UINT32_MAX)
                    return -1;
            }
        }
    }
    return 0;
}

static int put_id(hta_buf *out, const hta_strtab *dict, const char *s)
{
    return hta_buf_put_u32(out, hta_strtab_find(dict, s, strlen(s)));
}

static int put_table(hta_buf *out, const hta_strtab *dict, const hta_table *t)
{
    if (put_id(out, dict, t->name) || hta_buf_put_u32(out, t->flags) ||
        hta_buf_put_u32(out, (uint32_t)t->n_columns))
        return -1;
    for (size_t c = 0; c < t->n_columns; c++)
        if (put_id(out, dict, t->columns[c].name) ||
            hta_buf_put_u32(out, (uint32_t)t->columns[c].type))
            return -1;
    if (hta_buf_put_u64(out, t->n_rows))
        return -1;
    for (size_t r = 0; r < t->n_rows; r++) {
        const hta_cell *row = hta_table_row(t, r);
        for (size_t c = 0; c < t->n_columns; c++) {
            int rc = t->columns[c].type == HTA_COL_STR
                         ? put_id(out, dict, row[c].s)
                         : hta_buf_append(out, &row[c], sizeof row[c]);
            if (rc)
                return -1;
        }
    }
    return 0;
}

int hta_tableset_pack(const hta_tableset *set, hta_buf *out)
{
    hta_strtab dict;
    hta_strtab_init(&dict);
    int rc = intern_all(set, &dict) || hta_buf_put_u32(out, dict.count);
    for (uint32_t id = 0; rc == 0 && id < dict.count; id++)
        rc = hta_buf_put_u32(out, dict.lengths[id]) ||
             hta_buf_append(out, dict.strings[id], dict.lengths[id]);
    rc = rc || hta_buf_put_u32(out, (uint32_t)set->n_tables);
    for (size_t i = 0; rc == 0 && i < set->n_tables; i++)
        rc = put_table(out, &dict, set->tables[i]);
    hta_strtab_free(&dict);
    return rc ? -1 : 0;
}

typedef struct packed_string {
    const char *text;          /* into the packed buffer, not terminated */
    uint32_t len;
} packed_string;

typedef struct unpacker {
    const char *p, *end;
    packed_string *dict;       /* owned */
    uint32_t n_dict;
    int failed;
} unpacker;

static uint32_t take_u32(unpacker *u)
{
    uint32_t v = 0;
    if ((size_t)(u->end - u->p) < sizeof v) {
        u->failed = 1;
        return 0;
    }
    memcpy(&v, u->p, sizeof v);
    u->p += sizeof v;
    return v;
}

static int take_dictionary(unpacker *u)
{
    uint32_t n = take_u32(u);
    if (u->failed || n > (size_t)(u->end - u->p) / sizeof(uint32_t))
        return -1;             /* every entry needs at least its length */
    u->dict = malloc((n ? n : 1) * sizeof *u->dict);
    if (!u->dict)
        return -1;
    u->n_dict = n;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t len = take_u32(u);
        if (u->failed || (size_t)(u->end - u->p) < len)
            return -1;
        u->dict[i] = (packed_string){u->p, len};
        u->p += len;
    }
    return 0;
}

/* A new copy of the dictionary string the next id names. */
static char *take_string(unpacker *u)
{
    uint32_t id = take_u32(u);
    if (u->failed || id >= u->n_dict) {
        u->failed = 1;
        return NULL;
    }
    char *s = strndup(u->dict[id].text, u->dict[id].len);
    if (!s)
        u->failed = 1;
    return s;
}

static int merge_rows(unpacker *u, hta_table *t, uint64_t n_rows)
{
    for (uint64_t r = 0; r < n_rows && !u->failed; r++) {
        hta_row_builder row = hta_table_add_row(t);
        if (row.failed)
            return -1;
        for (size_t c = 0; c < t->n_columns; c++) {
            if (t->columns[c].type == HTA_COL_STR) {
                row.cells[c].s = take_string(u);
            } else if ((size_t)(u->end - u->p) >= sizeof(hta_cell)) {
                memcpy(&row.cells[c], u->p, sizeof(hta_cell));
                u->p += sizeof(hta_cell);
            } else {
                u->failed = 1;
            }
        }
    }
    return u->failed ? -1 : 0;
}

static int merge_table(unpacker *u, hta_tableset *set)
{
    char *name = take_string(u);
    uint32_t flags = take_u32(u);
    uint32_t n_columns = take_u32(u);
    hta_column *columns = calloc(n_columns ? n_columns : 1, sizeof *columns);
    int rc = -1;
    if (!name || u->failed || !columns)
        goto done;
    for (uint32_t c = 0; c < n_columns; c++) {
        columns[c].name = take_string(u);
        columns[c].type = (hta_column_type)take_u32(u);
    }
    uint64_t n_rows = 0;
    if ((size_t)(u->end - u->p) >= sizeof n_rows) {
        memcpy(&n_rows, u->p, sizeof n_rows);
        u->p += sizeof n_rows;
    } else {
        u->failed = 1;
    }
    if (u->failed)
        goto done;
    hta_table *t = hta_tableset_table(set, &(hta_table_spec){name, columns, n_columns, flags});
    if (t)
        rc = merge_rows(u, t, n_rows);
done:
    if (columns)
        for (uint32_t c = 0; c < n_columns; c++)
            free((char *)columns[c].name);
    free(columns);
    free(name);
    return rc;
}

int hta_tableset_merge(hta_tableset *set, const char *data, size_t len, hta_error *err)
{
    unpacker u = {.p = data, .end = data + len};
    int rc = take_dictionary(&u) ? -1 : 0;
    uint32_t n_tables = take_u32(&u);
    for (uint32_t i = 0; i < n_tables && rc == 0 && !u.failed; i++)
        rc = merge_table(&u, set);
    free(u.dict);
    if (rc)
        return hta_fail(err, "corrupt or mismatched result tables from a process");
    return u.failed ? hta_fail(err, "truncated result tables from a process") : 0;
}
