/* trace_writer.c: --write-traces (see written_trace/trace_writer.h).
 *
 * The original document is read whole and copied through, so that
 * nothing hta-mpi does not model is lost; a small scanner finds the
 * traceEvents array's elements and, in each, the members name, ts, dur,
 * pid, tid and args at the object's top level.  An element is on the
 * critical path when its name (as written), ts and dur (in nanoseconds,
 * as the reader converts them) are those of a path event.  Added events
 * go before the array's closing bracket (written_trace/trace_sink.h), the
 * counter tracks from written_trace/counter_tracks.h. */
#define _GNU_SOURCE /* memmem */
#include "written_trace/trace_writer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "analysis/critical_path.h"
#include "numerics/bounds.h"
#include "util/buf.h"
#include "util/grow.h"
#include "written_trace/counter_tracks.h"
#include "written_trace/trace_sink.h"

/* The first added event; what is added later goes after it. */
#define PROCESS_NAME_EVENT \
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":999999,\"tid\":0," \
    "\"args\":{\"name\":\"hta-mpi\"}}"
/* Flow ids far above Kineto's (its ac2g flows count from 1). */
#define FLOW_ID_BASE 1000000000u

/* ---- the critical path's events --------------------------------------- */

typedef struct mark {
    const hta_event *event;
    int64_t ts, dur;
    const char *name;
    size_t name_len;
    /* the element's pid and tid as written, once found */
    const char *pid, *tid;
    size_t pid_len, tid_len;
} mark;

typedef struct flow {
    const hta_event *from, *to;
    int64_t from_ts, to_ts;
} flow;

typedef struct collected {
    const hta_rank_view *v;
    mark *marks;
    size_t n_marks, cap_marks;
    flow *flows;
    size_t n_flows, cap_flows;
    wt_shares shares;
} collected;

/* The mark of event, added when new (marks stay few: one per path event). */
static long mark_of(collected *c, const hta_event *e)
{
    if (c->n_marks && c->marks[c->n_marks - 1].event == e)
        return (long)c->n_marks - 1;
    if (hta_grow_array((void **)&c->marks, &c->cap_marks, c->n_marks + 1, sizeof *c->marks))
        return -1;
    const char *name = hta_event_name(c->v->trace, e);
    c->marks[c->n_marks] = (mark){e, e->ts_ns, e->dur_ns, name, strlen(name), NULL, NULL, 0, 0};
    return (long)c->n_marks++;
}

static int crosses(const hta_event *a, const hta_event *b)
{
    return hta_event_is_gpu(a) != hta_event_is_gpu(b) ||
           (hta_event_is_gpu(a) && a->stream != b->stream);
}

static int collect_path(void *ctx, int64_t step, int64_t start_ns, int64_t end_ns,
                        const hta_cp_point *points, size_t n)
{
    (void)step;
    collected *c = ctx;
    if (wt_shares_add(&c->shares, c->v, start_ns, end_ns))
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (mark_of(c, points[i].event) < 0)
            return -1;
        if (i > 0 && points[i].event != points[i - 1].event &&
            crosses(points[i - 1].event, points[i].event)) {
            if (hta_grow_array((void **)&c->flows, &c->cap_flows, c->n_flows + 1, sizeof *c->flows))
                return -1;
            c->flows[c->n_flows++] = (flow){points[i - 1].event, points[i].event,
                                            points[i - 1].ts_ns, points[i].ts_ns};
        }
    }
    return 0;
}

static int cmp_mark(const void *a, const void *b)
{
    const mark *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->event < y->event ? -1 : x->event > y->event;
}

/* Sorts the marks by (ts, event) and drops repeats (a path passes an op
 * at its start and again at its end). */
static void sort_marks(collected *c)
{
    if (c->n_marks == 0) /* marks is NULL then, which qsort may not take */
        return;
    qsort(c->marks, c->n_marks, sizeof *c->marks, cmp_mark);
    size_t m = 0;
    for (size_t i = 0; i < c->n_marks; i++)
        if (m == 0 || c->marks[m - 1].event != c->marks[i].event)
            c->marks[m++] = c->marks[i];
    c->n_marks = m;
}

/* The mark of a path event. */
static const mark *mark_for(const collected *c, const hta_event *e)
{
    mark key = {.event = e, .ts = e->ts_ns};
    return bsearch(&key, c->marks, c->n_marks, sizeof *c->marks, cmp_mark);
}

/* ---- scanning the document -------------------------------------------- */

typedef struct scanner {
    const char *p, *end;
} scanner;

static void skip_ws(scanner *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
        s->p++;
}

/* Past a string whose opening quote is current; its text in *text. */
static int skip_string(scanner *s, const char **text, size_t *len)
{
    const char *q = ++s->p;
    while (s->p < s->end && *s->p != '"')
        s->p += *s->p == '\\' ? 2 : 1;
    if (s->p >= s->end)
        return -1;
    if (text) {
        *text = q;
        *len = (size_t)(s->p - q);
    }
    s->p++;
    return 0;
}

/* Past any value. */
static int skip_value(scanner *s)
{
    skip_ws(s);
    if (s->p >= s->end)
        return -1;
    if (*s->p == '"')
        return skip_string(s, NULL, NULL);
    if (*s->p != '{' && *s->p != '[') {
        while (s->p < s->end && !strchr(",}] \n\r\t", *s->p))
            s->p++;
        return 0;
    }
    int depth = 0;
    while (s->p < s->end) {
        char ch = *s->p;
        if (ch == '"') {
            if (skip_string(s, NULL, NULL))
                return -1;
            continue;
        }
        depth += (ch == '{' || ch == '[') - (ch == '}' || ch == ']');
        s->p++;
        if (depth == 0)
            return 0;
    }
    return -1;
}

/* A number's text in nanoseconds, as the reader converts (thousandths). */
static int64_t text_ns(const char *p, size_t len)
{
    int neg = len && *p == '-';
    size_t i = (size_t)neg;
    int64_t whole = 0, frac = 0;
    for (; i < len && *p != '.' && p[i] >= '0' && p[i] <= '9'; i++)
        whole = whole * 10 + (p[i] - '0');
    int digits = 0;
    if (i < len && p[i] == '.')
        for (i++; i < len && p[i] >= '0' && p[i] <= '9'; i++)
            if (digits < 3) {
                frac = frac * 10 + (p[i] - '0');
                digits++;
            }
    while (digits++ < 3)
        frac *= 10;
    int64_t ns = whole * 1000 + frac;
    return neg ? -ns : ns;
}

typedef struct element {
    const char *open;          /* the object's '{' */
    const char *args_open;     /* its args' '{', or NULL */
    int args_empty;
    const char *name, *ts, *dur, *pid, *tid;
    size_t name_len, ts_len, dur_len, pid_len, tid_len;
} element;

/* Reads the top-level members of the object at s->p. */
static int scan_element(scanner *s, element *el)
{
    memset(el, 0, sizeof *el);
    el->open = s->p++;
    for (;;) {
        skip_ws(s);
        if (s->p >= s->end)
            return -1;
        if (*s->p == '}') {
            s->p++;
            return 0;
        }
        if (*s->p == ',') {
            s->p++;
            continue;
        }
        const char *key;
        size_t klen;
        if (*s->p != '"' || skip_string(s, &key, &klen))
            return -1;
        skip_ws(s);
        if (s->p >= s->end || *s->p++ != ':')
            return -1;
        skip_ws(s);
        const char *v = s->p;
        if (skip_value(s))
            return -1;
        size_t vlen = (size_t)(s->p - v);
#define KEY(k) (klen == sizeof k - 1 && memcmp(key, k, klen) == 0)
        if (KEY("name") && *v == '"') {
            el->name = v + 1;
            el->name_len = vlen - 2;
        } else if (KEY("ts")) {
            el->ts = v;
            el->ts_len = vlen;
        } else if (KEY("dur")) {
            el->dur = v;
            el->dur_len = vlen;
        } else if (KEY("pid")) {
            el->pid = v;
            el->pid_len = vlen;
        } else if (KEY("tid")) {
            el->tid = v;
            el->tid_len = vlen;
        } else if (KEY("args") && *v == '{') {
            el->args_open = v;
            scanner in = {v + 1, s->p};
            skip_ws(&in);
            el->args_empty = *in.p == '}';
        }
#undef KEY
    }
}

/* The mark of an element, or NULL (marks sorted by ts). */
static mark *find_mark(collected *c, const element *el)
{
    if (!el->ts || !el->dur || !el->name)
        return NULL;
    int64_t ts = text_ns(el->ts, el->ts_len), dur = text_ns(el->dur, el->dur_len);
    size_t lo = HTA_LOWER_BOUND(c->marks, c->n_marks, ts, ts);
    for (; lo < c->n_marks && c->marks[lo].ts == ts; lo++) {
        mark *m = &c->marks[lo];
        if (m->dur == dur && m->name_len == el->name_len &&
            memcmp(m->name, el->name, el->name_len) == 0)
            return m;
    }
    return NULL;
}

/* ---- output ----------------------------------------------------------- */

/* The document with marked elements, up to the array's closing bracket
 * (returned), or NULL when the document has no traceEvents array. */
static const char *copy_events(collected *c, const char *doc, size_t len, wt_sink *o, int *any)
{
    const char *key = strstr(doc, "\"traceEvents\"");
    if (!key)
        return NULL;
    scanner s = {key + 13, doc + len};
    skip_ws(&s);
    if (s.p >= s.end || *s.p++ != ':')
        return NULL;
    skip_ws(&s);
    if (s.p >= s.end || *s.p != '[')
        return NULL;
    s.p++;
    const char *copied = doc;
    *any = 0;
    for (;;) {
        skip_ws(&s);
        if (s.p >= s.end)
            return NULL;
        if (*s.p == ']')
            break;
        if (*s.p == ',') {
            s.p++;
            continue;
        }
        *any = 1;
        if (*s.p != '{') {
            if (skip_value(&s))
                return NULL;
            continue;
        }
        element el;
        if (scan_element(&s, &el))
            return NULL;
        mark *m = find_mark(c, &el);
        if (!m)
            continue;
        m->pid = el.pid;
        m->pid_len = el.pid_len;
        m->tid = el.tid;
        m->tid_len = el.tid_len;
        const char *at = el.args_open ? el.args_open + 1 : el.open + 1;
        wt_put(o, copied, (size_t)(at - copied));
        wt_puts(o, el.args_open ? (el.args_empty ? "\"critical\":1" : "\"critical\":1,")
                              : "\"args\":{\"critical\":1},");
        copied = at;
    }
    wt_put(o, copied, (size_t)(s.p - copied));
    return s.p;
}

static void put_flows(wt_sink *o, int *first, const collected *c)
{
    for (size_t i = 0; i < c->n_flows; i++) {
        const mark *a = mark_for(c, c->flows[i].from), *b = mark_for(c, c->flows[i].to);
        if (!a || !b || !a->pid || !a->tid || !b->pid || !b->tid)
            continue;          /* an end not found in the document */
        char text[512];
        snprintf(text, sizeof text,
                 "{\"ph\":\"s\",\"cat\":\"critical_path\",\"name\":\"critical path\",\"id\":%zu,"
                 "\"pid\":%.*s,\"tid\":%.*s,\"ts\":%.3f}",
                 FLOW_ID_BASE + i, (int)a->pid_len, a->pid, (int)a->tid_len, a->tid,
                 hta_ns_to_us(c->flows[i].from_ts));
        wt_put_event(o, first, text);
        snprintf(text, sizeof text,
                 "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"critical_path\",\"name\":\"critical path\","
                 "\"id\":%zu,\"pid\":%.*s,\"tid\":%.*s,\"ts\":%.3f}",
                 FLOW_ID_BASE + i, (int)b->pid_len, b->pid, (int)b->tid_len, b->tid,
                 hta_ns_to_us(c->flows[i].to_ts));
        wt_put_event(o, first, text);
    }
}

/* ---- files ------------------------------------------------------------ */

/* mkdir -p: 0, or -1 with errno. */
static int make_dirs(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0777) && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(path, 0777) && errno != EEXIST ? -1 : 0;
}

int hta_read_trace_text(const char *path, hta_buf *out)
{
    gzFile in = gzopen(path, "rb"); /* reads plain files as they are */
    if (!in)
        return -1;
    char chunk[1 << 16];
    int got;
    while ((got = gzread(in, chunk, sizeof chunk)) > 0)
        if (hta_buf_append(out, chunk, (size_t)got)) {
            gzclose(in);
            return -1;
        }
    return gzclose(in) == Z_OK && got == 0 ? 0 : -1;
}

static int write_document(collected *c, const hta_buf *doc, wt_sink *o)
{
    int any;
    const char *close = copy_events(c, doc->data, doc->len, o, &any);
    if (!close)
        return -1;
    int first = !any;
    wt_put_event(o, &first, PROCESS_NAME_EVENT);
    wt_put_shares(o, &first, &c->shares);
    put_flows(o, &first, c);
    if (wt_put_queue_lengths(o, &first, c->v) || wt_put_bandwidths(o, &first, c->v))
        return -1;
    wt_puts(o, "\n");
    wt_put(o, close, (size_t)(doc->data + doc->len - close));
    return o->failed ? -1 : 0;
}

int hta_write_trace(const char *path, const hta_rank_view *view, const char *dir,
                    hta_error *err)
{
    hta_buf doc = {0};
    size_t path_len = strlen(path);
    int is_gz = path_len > 3 && strcmp(path + path_len - 3, ".gz") == 0;
    if (hta_read_trace_text(path, &doc)) {
        hta_buf_free(&doc);
        return hta_fail(err, "%s: cannot read it again to write it back", path);
    }
    collected c = {.v = view};
    int rc = hta_critical_path_each(view, collect_path, &c);
    if (rc == 0)
        sort_marks(&c);
    const char *base = strrchr(path, '/');
    char out_path[4096];
    snprintf(out_path, sizeof out_path, "%s/%s", dir, base ? base + 1 : path);
    wt_sink o = {0};
    if (make_dirs(dir))
        rc = hta_fail(err, "%s: %s", dir, strerror(errno));
    else if (rc == 0) {
        if (is_gz)
            o.gz = gzopen(out_path, "wb1");
        else
            o.file = fopen(out_path, "wb");
        if (!o.gz && !o.file)
            rc = hta_fail(err, "%s: %s", out_path, strerror(errno));
        else if (write_document(&c, &doc, &o))
            rc = hta_fail(err, "%s: could not write it (%s)", out_path,
                          o.failed ? "write failed" : "no traceEvents array");
        if ((o.gz && gzclose(o.gz) != Z_OK) || (o.file && fclose(o.file)))
            rc = rc ? rc : hta_fail(err, "%s: could not write it", out_path);
    } else if (rc) {
        rc = hta_fail(err, "%s: out of memory computing the critical path to write", path);
    }
    hta_buf_free(&doc);
    free(c.marks);
    free(c.flows);
    free(c.shares.items);
    return rc ? -1 : 0;
}

size_t hta_written_trace_insert_at(const hta_buf *doc)
{
    const char *at = memmem(doc->data, doc->len, PROCESS_NAME_EVENT, strlen(PROCESS_NAME_EVENT));
    return at ? (size_t)(at - doc->data) + strlen(PROCESS_NAME_EVENT) : 0;
}
