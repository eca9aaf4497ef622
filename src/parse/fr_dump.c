/* fr_dump.c: a Flight Recorder dump into hta_fr_dump (see parse/fr_dump.h).
 *
 * Both encodings become the same tree of values first (parse/pickle.h,
 * parse/json_values.h); one walk over the tree then fills the struct, so
 * the two forms cannot disagree on a field.  The JSON form writes a few
 * fields differently (pg_status numbers as text, 0 for a time not yet
 * discovered, no frames); the walk accepts both spellings. */
#define _GNU_SOURCE
#include "parse/fr_dump.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse/json_values.h"
#include "parse/pickle.h"
#include "util/buf.h"
#include "util/io_all.h"

#define SNIFF_BYTES 16384
#define MAX_DUMP_BYTES (UINT64_C(1) << 32)

const char *hta_fr_state_name(hta_fr_state state)
{
    static const char *const names[] = {"scheduled", "started", "completed"};
    return state <= HTA_FR_COMPLETED ? names[state] : "?";
}

/* ---- recognising a dump ------------------------------------------------ */

static int has(const unsigned char *head, size_t n, const char *text)
{
    return memmem(head, n, text, strlen(text)) != NULL;
}

int hta_fr_dump_sniff(const unsigned char *head, size_t n)
{
    if (n >= 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5)
        return (has(head, n, "version") || has(head, n, "entries")) &&
               (has(head, n, "pg_config") || has(head, n, "collective_seq_id"));
    size_t i = 0;
    while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
        i++;
    /* A Kineto trace's distributedInfo holds a pg_config too. */
    return i < n && head[i] == '{' && !has(head, n, "\"traceEvents\"") &&
           !has(head, n, "\"schemaVersion\"") && !has(head, n, "\"distributedInfo\"") &&
           (has(head, n, "\"collective_seq_id\"") || has(head, n, "\"comm_lib_version\""));
}

int hta_fr_dump_file_sniff(const char *path)
{
    /* Non-blocking, and regular files only: a FIFO among the inputs must
     * not stop the listing. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0)
        return 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return 0;
    }
    unsigned char *head = malloc(SNIFF_BYTES);
    long n = head ? hta_read_all(fd, head, SNIFF_BYTES, 0) : -1;
    close(fd);
    int yes = n > 0 && hta_fr_dump_sniff(head, (size_t)n);
    free(head);
    return yes;
}

/* ---- fields of the tree ------------------------------------------------ */

typedef struct walk {
    const char *name;     /* the file */
    size_t entry;         /* the entry being read, for errors; SIZE_MAX: none */
    hta_error *err;
} walk;

static int bad_field(walk *w, const char *key, const hta_pvalue *v, const char *want)
{
    if (w->entry != SIZE_MAX)
        return hta_fail(w->err, "%s: entry %zu: %s is a %s, not %s", w->name, w->entry, key,
                        hta_pvalue_kind_name(v->kind), want);
    return hta_fail(w->err, "%s: %s is a %s, not %s", w->name, key,
                    hta_pvalue_kind_name(v->kind), want);
}

static int oom(walk *w)
{
    return hta_fail(w->err, "%s: out of memory", w->name);
}

static int dup_text(walk *w, const char *s, char **out)
{
    return (*out = strdup(s ? s : "")) ? 0 : oom(w);
}

/* An integer: an int or a bool, or (as the JSON form writes pg_status) a
 * decimal string; absent or None gives dflt. */
static int as_int(walk *w, const hta_pvalue *v, const char *key, int64_t dflt, int64_t *out)
{
    *out = dflt;
    if (!v || v->kind == HTA_PV_NONE)
        return 0;
    if (v->kind == HTA_PV_INT || v->kind == HTA_PV_BOOL) {
        *out = v->i;
        return 0;
    }
    if (v->kind == HTA_PV_STR) {
        char *end;
        errno = 0;
        long long i = strtoll(v->s, &end, 10);
        if (errno == 0 && end != v->s && *end == '\0') {
            *out = i;
            return 0;
        }
    }
    return bad_field(w, key, v, "an integer");
}

static int get_int(walk *w, const hta_pvalue *d, const char *key, int64_t dflt, int64_t *out)
{
    return as_int(w, hta_pdict_get(d, key), key, dflt, out);
}

static int get_text(walk *w, const hta_pvalue *d, const char *key, char **out)
{
    const hta_pvalue *v = hta_pdict_get(d, key);
    if (v && v->kind != HTA_PV_STR && v->kind != HTA_PV_NONE)
        return bad_field(w, key, v, "a string");
    return dup_text(w, v && v->kind == HTA_PV_STR ? v->s : "", out);
}

static int get_bool(walk *w, const hta_pvalue *d, const char *key, bool *out)
{
    int64_t i;
    if (get_int(w, d, key, 0, &i))
        return -1;
    *out = i != 0;
    return 0;
}

/* A time that was discovered: None (pickle) or 0 (JSON) when it was not. */
static int get_time(walk *w, const hta_pvalue *d, const char *key, int64_t *out)
{
    if (get_int(w, d, key, -1, out))
        return -1;
    if (*out == 0)
        *out = -1;
    return 0;
}

static int is_sequence(const hta_pvalue *v)
{
    return v && (v->kind == HTA_PV_LIST || v->kind == HTA_PV_TUPLE);
}

/* input_sizes / output_sizes (a list of lists of ints) as Python prints it. */
static int get_sizes(walk *w, const hta_pvalue *d, const char *key, char **out)
{
    const hta_pvalue *v = hta_pdict_get(d, key);
    hta_buf b = {0};
    int rc = hta_buf_putc(&b, '[');
    if (v && v->kind != HTA_PV_NONE && !is_sequence(v))
        rc = bad_field(w, key, v, "a list");
    for (size_t t = 0; rc == 0 && v && is_sequence(v) && t < v->n; t++) {
        const hta_pvalue *dims = v->items[t];
        if (!is_sequence(dims)) {
            rc = bad_field(w, key, dims, "a list of lists");
            break;
        }
        rc = hta_buf_append(&b, t ? ", [" : "[", t ? 3 : 1);
        for (size_t k = 0; rc == 0 && k < dims->n; k++) {
            if (dims->items[k]->kind != HTA_PV_INT) {
                rc = bad_field(w, key, dims->items[k], "a list of lists of ints");
                break;
            }
            char num[32];
            int len = snprintf(num, sizeof num, "%s%lld", k ? ", " : "",
                               (long long)dims->items[k]->i);
            rc = hta_buf_append(&b, num, (size_t)len);
        }
        rc = rc ? rc : hta_buf_putc(&b, ']');
    }
    rc = rc ? rc : hta_buf_putc(&b, ']');
    if (rc) {
        hta_buf_free(&b);
        return w->err->text[0] ? -1 : oom(w);
    }
    *out = b.data;
    return 0;
}

/* input_dtypes / output_dtypes (a list of strings), joined by commas. */
static int get_dtypes(walk *w, const hta_pvalue *d, const char *key, char **out)
{
    const hta_pvalue *v = hta_pdict_get(d, key);
    if (v && v->kind != HTA_PV_NONE && !is_sequence(v))
        return bad_field(w, key, v, "a list");
    hta_buf b = {0};
    int rc = hta_buf_append(&b, "", 0);
    for (size_t t = 0; rc == 0 && is_sequence(v) && t < v->n; t++) {
        if (v->items[t]->kind != HTA_PV_STR) {
            hta_buf_free(&b);
            return bad_field(w, key, v->items[t], "a list of strings");
        }
        rc = (t && hta_buf_putc(&b, ',')) || hta_buf_append(&b, v->items[t]->s, v->items[t]->s_len);
    }
    if (rc || !b.data) {
        hta_buf_free(&b);
        return oom(w);
    }
    *out = b.data;
    return 0;
}

static int get_state(walk *w, const hta_pvalue *d, hta_fr_state *out)
{
    char *s;
    if (get_text(w, d, "state", &s))
        return -1;
    *out = !strcmp(s, "completed") ? HTA_FR_COMPLETED
         : !strcmp(s, "started")   ? HTA_FR_STARTED : HTA_FR_SCHEDULED;
    int rc = 0;
    if (s[0] && strcmp(s, "completed") && strcmp(s, "started") && strcmp(s, "scheduled"))
        rc = hta_fail(w->err, "%s: entry %zu: unknown state '%.40s'", w->name, w->entry, s);
    free(s);
    return rc;
}

/* process_group: (name, desc), a tuple in pickles, a list in JSON. */
static int get_group_name(walk *w, const hta_pvalue *d, hta_fr_entry *e)
{
    const hta_pvalue *v = hta_pdict_get(d, "process_group");
    const char *name = "", *desc = "";
    if (v && !(is_sequence(v) && v->n == 2 && v->items[0]->kind == HTA_PV_STR &&
               v->items[1]->kind == HTA_PV_STR))
        return bad_field(w, "process_group", v, "a (name, desc) pair");
    if (v) {
        name = v->items[0]->s;
        desc = v->items[1]->s;
    }
    return dup_text(w, name, &e->pg_name) || dup_text(w, desc, &e->pg_desc) ? -1 : 0;
}

static int get_frames(walk *w, const hta_pvalue *d, hta_fr_entry *e)
{
    const hta_pvalue *v = hta_pdict_get(d, "frames");
    if (!v || v->kind == HTA_PV_NONE)
        return 0;
    if (!is_sequence(v))
        return bad_field(w, "frames", v, "a list");
    if (v->n && !(e->frames = calloc(v->n, sizeof *e->frames)))
        return oom(w);
    for (size_t i = 0; i < v->n; i++) {
        const hta_pvalue *f = v->items[i];
        hta_fr_frame *out = &e->frames[e->n_frames++];
        if (f->kind != HTA_PV_DICT)
            return bad_field(w, "frames", f, "a list of dicts");
        if (get_text(w, f, "name", &out->name) || get_text(w, f, "filename", &out->filename) ||
            get_int(w, f, "line", 0, &out->line))
            return -1;
    }
    return 0;
}

static int get_duration(walk *w, const hta_pvalue *d, double *out)
{
    const hta_pvalue *v = hta_pdict_get(d, "duration_ms");
    *out = NAN;
    if (!v || v->kind == HTA_PV_NONE)
        return 0;
    if (v->kind == HTA_PV_FLOAT)
        *out = v->f;
    else if (v->kind == HTA_PV_INT)
        *out = (double)v->i;
    else
        return bad_field(w, "duration_ms", v, "a number");
    return 0;
}

static int read_entry(walk *w, const hta_pvalue *d, hta_fr_entry *e)
{
    if (d->kind != HTA_PV_DICT)
        return bad_field(w, "the entry", d, "a dict");
    return get_int(w, d, "record_id", -1, &e->record_id) ||
           get_int(w, d, "pg_id", -1, &e->pg_id) ||
           get_int(w, d, "collective_seq_id", 0, &e->collective_seq_id) ||
           get_int(w, d, "p2p_seq_id", 0, &e->p2p_seq_id) ||
           get_int(w, d, "op_id", -1, &e->op_id) || get_group_name(w, d, e) ||
           get_text(w, d, "profiling_name", &e->profiling_name) ||
           get_int(w, d, "time_created_ns", -1, &e->time_created_ns) ||
           get_time(w, d, "time_discovered_started_ns", &e->time_started_ns) ||
           get_time(w, d, "time_discovered_completed_ns", &e->time_completed_ns) ||
           get_duration(w, d, &e->duration_ms) ||
           get_int(w, d, "timeout_ms", -1, &e->timeout_ms) ||
           get_sizes(w, d, "input_sizes", &e->input_sizes) ||
           get_sizes(w, d, "output_sizes", &e->output_sizes) ||
           get_dtypes(w, d, "input_dtypes", &e->input_dtypes) ||
           get_dtypes(w, d, "output_dtypes", &e->output_dtypes) || get_state(w, d, &e->state) ||
           get_bool(w, d, "is_p2p", &e->is_p2p) || get_bool(w, d, "retired", &e->retired) ||
           get_text(w, d, "thread_name", &e->thread_name) ||
           get_text(w, d, "thread_id", &e->thread_id) || get_frames(w, d, e)
               ? -1 : 0;
}

static int read_entries(walk *w, const hta_pvalue *root, hta_fr_dump *out)
{
    const hta_pvalue *v = hta_pdict_get(root, "entries");
    if (!v || v->kind == HTA_PV_NONE)
        return 0;
    if (!is_sequence(v))
        return bad_field(w, "entries", v, "a list");
    if (v->n && !(out->entries = calloc(v->n, sizeof *out->entries)))
        return oom(w);
    for (size_t i = 0; i < v->n; i++) {
        w->entry = i;
        if (read_entry(w, v->items[i], &out->entries[out->n_entries++]))
            return -1;
    }
    w->entry = SIZE_MAX;
    return 0;
}

/* pg_config's ranks of group dict d: "[0, 1, 2]" as torch writes it, or a
 * list. */
static int parse_ranks(walk *w, const hta_pvalue *d, hta_fr_group *g)
{
    const hta_pvalue *v = hta_pdict_get(d, "ranks");
    if (!v || v->kind == HTA_PV_NONE)
        return 0;
    size_t cap = is_sequence(v) ? v->n : v->kind == HTA_PV_STR ? v->s_len / 2 + 1 : 0;
    if (!cap)
        return v->kind == HTA_PV_STR || is_sequence(v)
                   ? 0
                   : bad_field(w, "a group's member list", v, "a list");
    if (!(g->ranks = calloc(cap, sizeof *g->ranks)))
        return oom(w);
    if (is_sequence(v)) {
        for (size_t i = 0; i < v->n; i++)
            if (as_int(w, v->items[i], "a group's member", 0, &g->ranks[g->n_ranks++]))
                return -1;
        return 0;
    }
    const char *p = v->s;
    while (*p) {
        if (*p >= '0' && *p <= '9') {
            char *end;
            long long r = strtoll(p, &end, 10);
            if (g->n_ranks < cap)
                g->ranks[g->n_ranks++] = r;
            p = end;
        } else if (strchr("[], ", *p))
            p++;
        else
            return hta_fail(w->err, "%s: group %s: ranks '%.40s' is not a list of ranks",
                            w->name, g->name, v->s);
    }
    return 0;
}

static int read_groups(walk *w, const hta_pvalue *root, hta_fr_dump *out)
{
    const hta_pvalue *v = hta_pdict_get(root, "pg_config");
    if (!v || v->kind == HTA_PV_NONE)
        return 0;
    if (v->kind != HTA_PV_DICT)
        return bad_field(w, "pg_config", v, "a dict");
    if (v->n && !(out->groups = calloc(v->n / 2, sizeof *out->groups)))
        return oom(w);
    for (size_t i = 0; i + 1 < v->n; i += 2) {
        const hta_pvalue *key = v->items[i], *g = v->items[i + 1];
        hta_fr_group *group = &out->groups[out->n_groups++];
        if (g->kind != HTA_PV_DICT)
            return bad_field(w, "a pg_config group", g, "a dict");
        if (get_text(w, g, "name", &group->name) || get_text(w, g, "desc", &group->desc))
            return -1;
        if (!group->name[0] && key->kind == HTA_PV_STR) {
            free(group->name);
            if (dup_text(w, key->s, &group->name))
                return -1;
        }
        if (parse_ranks(w, g, group))
            return -1;
    }
    return 0;
}

static int read_status(walk *w, const hta_pvalue *root, hta_fr_dump *out)
{
    const hta_pvalue *v = hta_pdict_get(root, "pg_status");
    if (!v || v->kind == HTA_PV_NONE)
        return 0;
    if (v->kind != HTA_PV_DICT)
        return bad_field(w, "pg_status", v, "a dict");
    if (v->n && !(out->status = calloc(v->n / 2, sizeof *out->status)))
        return oom(w);
    for (size_t i = 0; i + 1 < v->n; i += 2) {
        const hta_pvalue *s = v->items[i + 1];
        hta_fr_pg_status *st = &out->status[out->n_status++];
        if (s->kind != HTA_PV_DICT)
            return bad_field(w, "a pg_status value", s, "a dict");
        if (as_int(w, v->items[i], "a pg_status key", -1, &st->pg_id) ||
            get_int(w, s, "last_enqueued_collective", -1, &st->last_enqueued) ||
            get_int(w, s, "last_started_collective", -1, &st->last_started) ||
            get_int(w, s, "last_completed_collective", -1, &st->last_completed))
            return -1;
    }
    return 0;
}

/* version "2.x": the major this reader knows. */
static int check_version(walk *w, const hta_pvalue *root, hta_fr_dump *out)
{
    const hta_pvalue *v = hta_pdict_get(root, "version");
    if (!v || (!hta_pdict_get(root, "entries") && !hta_pdict_get(root, "pg_config")))
        return hta_fail(w->err, "%s: not a Flight Recorder dump (no version, entries or "
                        "pg_config)", w->name);
    if (v->kind != HTA_PV_STR)
        return bad_field(w, "version", v, "a string");
    char *end;
    long major = strtol(v->s, &end, 10);
    if (end == v->s || (*end && *end != '.') || major != 2)
        return hta_fail(w->err, "%s: unsupported Flight Recorder dump version '%.20s' "
                        "(versions 2.x are read)", w->name, v->s);
    return dup_text(w, v->s, &out->version);
}

static int read_tree(walk *w, const hta_pvalue *root, hta_fr_dump *out)
{
    if (root->kind != HTA_PV_DICT)
        return hta_fail(w->err, "%s: not a Flight Recorder dump (a %s, not a dict)", w->name,
                        hta_pvalue_kind_name(root->kind));
    return check_version(w, root, out) ||
           get_text(w, root, "comm_lib_version", &out->comm_lib_version) ||
           get_int(w, root, "rank", -1, &out->rank) || read_groups(w, root, out) ||
           read_status(w, root, out) || read_entries(w, root, out)
               ? -1 : 0;
}

int hta_fr_dump_parse(const unsigned char *bytes, size_t len, const char *name,
                      hta_fr_dump *out, hta_error *err)
{
    memset(out, 0, sizeof *out);
    out->rank = -1;
    hta_pickle_doc doc;
    size_t i = 0;
    while (i < len && (bytes[i] == ' ' || bytes[i] == '\n' || bytes[i] == '\r' || bytes[i] == '\t'))
        i++;
    int rc;
    if (len >= 1 && bytes[0] == 0x80) {
        out->encoding = HTA_FR_PICKLE;
        out->pickle_protocol = len >= 2 ? bytes[1] : 0;
        rc = hta_pickle_read(bytes, len, name, &doc, err);
    } else if (i < len && bytes[i] == '{') {
        out->encoding = HTA_FR_JSON;
        rc = hta_json_values_read(bytes, len, name, &doc, err);
    } else
        return hta_fail(err, "%s: not a Flight Recorder dump (neither a pickle nor JSON)",
                        name);
    if (rc)
        return -1;
    walk w = {.name = name, .entry = SIZE_MAX, .err = err};
    err->text[0] = '\0';
    rc = read_tree(&w, doc.root, out);
    hta_pickle_doc_free(&doc);
    if (rc)
        hta_fr_dump_free(out);
    return rc;
}

int hta_fr_dump_read(const char *path, hta_fr_dump *out, hta_error *err)
{
    memset(out, 0, sizeof *out);
    out->rank = -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return hta_fail(err, "%s: %s", path, strerror(e));
    }
    if ((uint64_t)st.st_size > MAX_DUMP_BYTES) {
        close(fd);
        return hta_fail(err, "%s: %lld bytes, more than a Flight Recorder dump holds", path,
                        (long long)st.st_size);
    }
    size_t len = (size_t)st.st_size;
    unsigned char *bytes = malloc(len ? len : 1);
    long got = bytes ? hta_read_all(fd, bytes, len, 0) : -1;
    int e = errno;
    close(fd);
    if (got < 0 || (size_t)got != len) {
        free(bytes);
        return hta_fail(err, "%s: %s", path, got < 0 ? strerror(e) : "changed while read");
    }
    int rc = hta_fr_dump_parse(bytes, len, path, out, err);
    free(bytes);
    return rc;
}

static void free_entry(hta_fr_entry *e)
{
    free(e->pg_name);
    free(e->pg_desc);
    free(e->profiling_name);
    free(e->input_sizes);
    free(e->output_sizes);
    free(e->input_dtypes);
    free(e->output_dtypes);
    free(e->thread_name);
    free(e->thread_id);
    for (size_t i = 0; i < e->n_frames; i++) {
        free(e->frames[i].name);
        free(e->frames[i].filename);
    }
    free(e->frames);
}

void hta_fr_dump_free(hta_fr_dump *dump)
{
    for (size_t i = 0; i < dump->n_entries; i++)
        free_entry(&dump->entries[i]);
    for (size_t i = 0; i < dump->n_groups; i++) {
        free(dump->groups[i].name);
        free(dump->groups[i].desc);
        free(dump->groups[i].ranks);
    }
    free(dump->entries);
    free(dump->groups);
    free(dump->status);
    free(dump->version);
    free(dump->comm_lib_version);
    memset(dump, 0, sizeof *dump);
    dump->rank = -1;
}
