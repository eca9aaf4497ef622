/* tracegen_writer.h: hta-tracegen's fast event output (tracegen_writer.c).
 *
 * Output goes through a large buffer into a file, a gzip stream or a
 * byte-counting sink (to size a trace without writing it).  Each event type
 * is a template written once in pretty Kineto layout with $d (integer), $s
 * (raw string) and $f (fixed-point, 6 decimals) holes; --compact derives
 * its templates by stripping all whitespace outside JSON strings, so both
 * layouts come from the same source and cannot drift apart.  Integers are
 * formatted by hand (two digits per step) because printf per field is the
 * bottleneck of a 1 GB trace.
 */
#ifndef TRACEGEN_WRITER_H
#define TRACEGEN_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#define OUT_BUF_SIZE (8u << 20)
#define EVENT_MAX 16384 /* upper bound on one formatted event */

/* A string with its length, so that templates copy it without strlen. */
typedef struct {
    const char *p;
    uint32_t n;
} tg_str;

static inline tg_str str_of(const char *s) { return (tg_str){s, (uint32_t)strlen(s)}; }

typedef enum { SINK_DISCARD, SINK_FILE, SINK_GZIP } tg_sink_kind;

typedef struct {
    tg_sink_kind kind;
    FILE *fp;
    gzFile gz;
    char *buf; /* OUT_BUF_SIZE bytes, the caller's */
    size_t len;
    uint64_t total;  /* bytes handed to the sink (uncompressed) */
    uint64_t events; /* events in traceEvents, to place separators */
    bool failed;
} tg_writer;

/* Hands the buffered bytes to the sink. */
void tg_writer_flush(tg_writer *w);

/* Empties the writer and points it at a sink of this kind (no file). */
void tg_writer_reset(tg_writer *w, tg_sink_kind kind);

/* Opens PATH (gzip level 6 when gzip); false with errno on failure. */
bool tg_writer_open_file(tg_writer *w, const char *path, bool gzip);

/* Flushes and closes; false if anything failed since open. */
bool tg_writer_close(tg_writer *w);

/* Flushes when fewer than EVENT_MAX bytes are free, so one event fits. */
void tg_writer_make_room(tg_writer *w);

typedef enum { SEG_END, SEG_INT, SEG_STR, SEG_FIX6 } tg_seg_kind;

typedef struct {
    const char *lit;
    uint32_t len;
    uint8_t kind;
} tg_seg;

enum { MAX_SEGS = 32, TEMPLATE_TEXT_MAX = 2048 };

typedef struct {
    char text[TEMPLATE_TEXT_MAX];
    tg_seg seg[MAX_SEGS];
} tg_template;

/* One hole's value: i for $d and $f (in millionths), s/n for $s. */
typedef struct {
    int64_t i;
    const char *s;
    uint32_t n;
} tg_arg;

#define AI(v) ((tg_arg){.i = (int64_t)(v)})
#define AS(str) ((tg_arg){.s = (str).p, .n = (str).n})
#define ALIT(lit) ((tg_arg){.s = (lit), .n = (uint32_t)(sizeof(lit) - 1)})

/* Compiles a pretty template (whitespace stripped when compact). */
void tg_template_compile(tg_template *t, const char *src, bool compact);

/* Appends one filled template; the caller guarantees EVENT_MAX free bytes. */
void tg_template_write(tg_writer *w, const tg_template *t, const tg_arg *args);

/* A JSON fragment in the layout: pretty ones are the static literal,
 * compact ones are stripped into buf. */
tg_str tg_json_layout(bool compact, const char *pretty, char *buf, size_t cap);

#endif
