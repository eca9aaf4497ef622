/* source.c: plain or gzip byte stream of a trace file (see parse/source.h).
 *
 * Reads with read(2) in large blocks.  Gzip input is inflated by a reader
 * thread into a small ring of blocks while the caller parses the previous
 * ones, so a .json.gz costs about max(inflate, parse) rather than their sum;
 * memory stays at RING_BLOCKS x BLOCK_BYTES whatever the file size.  A
 * small file is inflated inline, as the parser asks for bytes: starting the
 * thread and handing it blocks costs more than inflating a few megabytes
 * takes.  The inflater is ISA-L's igzip when the build has it, else zlib: both sit
 * behind start_member/inflate_step, the rest is shared. */
#include "util/io_all.h"
#include "util/large_alloc.h"
#include "parse/source.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#ifdef HTA_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

/* Blocks of 256 KB rather than larger: every buffer a trace allocates is
 * faulted in fresh for the first trace of a process, which small blocks
 * keep cheap for small traces, and large traces do not need more. */
#define SOURCE_INPUT_BYTES (256u << 10)
#define RING_BLOCKS 4
#define BLOCK_BYTES (256u << 10)
/* Files below this, compressed and inflated, are inflated inline. */
#define INLINE_BELOW (4u << 20)

/* One inflated block; `last` marks the end of data (or of good data, when
 * `failed`). */
typedef struct block {
    char *data;
    size_t len;
    int last;
    int failed;                /* the inflater's error is in ring.error */
    int resident;              /* data was made resident at its first use */
} block;

typedef struct ring {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    block blocks[RING_BLOCKS];
    size_t head, count;        /* filled blocks waiting for the reader */
    size_t read_pos;           /* offset into blocks[head] */
    int stop;                  /* reader is closing: inflater must quit */
    hta_error error;
} ring;

struct hta_source {
    int fd;
    const char *path;          /* borrowed from the caller */
    uint64_t file_bytes;
    uint64_t consumed;         /* compressed bytes handed to the inflater */
    int is_gzip;
    int use_isal;
    int input_eof;
    int stream_end;            /* the current gzip member is complete */
    unsigned char *input;      /* owned, gzip only */
    unsigned char *in_next;    /* compressed bytes not yet inflated */
    size_t in_avail;
    z_stream z;
#ifdef HTA_HAVE_ISAL
    struct inflate_state isal;
#endif
    unsigned char pending[2];  /* magic bytes read while sniffing */
    size_t n_pending;
    ring *ring;                /* owned; gzip only, NULL if no thread */
};

static void start_ring(hta_source *s);

int hta_inflater_available(hta_inflater which)
{
#ifdef HTA_HAVE_ISAL
    (void)which;
    return 1;
#else
    return which != HTA_INFLATER_ISAL;
#endif
}

/* ---- the two inflaters ------------------------------------------------ */

/* Prepares the chosen library for a gzip member; -1 when it cannot start. */
static int start_member(hta_source *s, int first)
{
#ifdef HTA_HAVE_ISAL
    if (s->use_isal) {
        if (first)
            isal_inflate_init(&s->isal);
        else
            isal_inflate_reset(&s->isal);
        s->isal.crc_flag = ISAL_GZIP;
        return 0;
    }
#endif
    /* 16 + MAX_WBITS: gzip wrapper only, with header checks. */
    return (first ? inflateInit2(&s->z, 16 + MAX_WBITS) : inflateReset(&s->z)) == Z_OK ? 0 : -1;
}

enum { STEP_OK, STEP_MEMBER_END, STEP_ERROR };

/* One inflate call from in_next into [*out, *out + *avail); updates both
 * sides.  On STEP_ERROR *why says what the library found. */
static int inflate_step(hta_source *s, unsigned char **out, size_t *avail, const char **why)
{
#ifdef HTA_HAVE_ISAL
    if (s->use_isal) {
        s->isal.next_in = s->in_next;
        s->isal.avail_in = (uint32_t)s->in_avail;
        s->isal.next_out = *out;
        s->isal.avail_out = (uint32_t)*avail;
        int rc = isal_inflate(&s->isal);
        s->in_next = s->isal.next_in;
        s->in_avail = s->isal.avail_in;
        *avail = s->isal.avail_out;
        *out = s->isal.next_out;
        *why = "invalid deflate data or checksum";
        if (rc != ISAL_DECOMP_OK)
            return STEP_ERROR;
        return s->isal.block_state == ISAL_BLOCK_FINISH ? STEP_MEMBER_END : STEP_OK;
    }
#endif
    s->z.next_in = s->in_next;
    s->z.avail_in = (uInt)s->in_avail;
    s->z.next_out = *out;
    s->z.avail_out = (uInt)*avail;
    int rc = inflate(&s->z, Z_NO_FLUSH);
    s->in_next = s->z.next_in;
    s->in_avail = s->z.avail_in;
    *avail = s->z.avail_out;
    *out = s->z.next_out;
    *why = s->z.msg ? s->z.msg : "inflate failed";
    if (rc == Z_STREAM_END)
        return STEP_MEMBER_END;
    return rc == Z_OK || rc == Z_BUF_ERROR ? STEP_OK : STEP_ERROR;
}

static void end_inflater(hta_source *s)
{
    if (!s->use_isal)
        inflateEnd(&s->z);
}

static int open_gzip(hta_source *s, hta_inflater which)
{
    s->use_isal = which != HTA_INFLATER_ZLIB && hta_inflater_available(HTA_INFLATER_ISAL);
    s->input = malloc(SOURCE_INPUT_BYTES);
    if (!s->input || start_member(s, 1)) {
        free(s->input);
        return -1;
    }
    hta_populate(s->input, s->file_bytes < SOURCE_INPUT_BYTES ? (size_t)s->file_bytes
                                                               : SOURCE_INPUT_BYTES);
    memcpy(s->input, s->pending, 2);
    s->in_next = s->input;
    s->in_avail = 2;
    s->n_pending = 0;
    if (s->file_bytes >= INLINE_BELOW || hta_source_size_hint(s) >= INLINE_BELOW)
        start_ring(s);
    return 0;
}

int hta_source_open(const char *path, hta_inflater which, hta_source **out, hta_error *err)
{
    hta_source *s = calloc(1, sizeof *s);
    if (!s)
        return hta_fail(err, "%s: out of memory", path);
    s->path = path;
    s->fd = open(path, O_RDONLY);
    struct stat st;
    if (s->fd < 0 || fstat(s->fd, &st) != 0) {
        int e = errno;
        if (s->fd >= 0)
            close(s->fd);
        free(s);
        return hta_fail(err, "%s: cannot open: %s", path, strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        close(s->fd);
        free(s);
        return hta_fail(err, "%s: is a directory, not a trace file", path);
    }
    s->file_bytes = (uint64_t)st.st_size;
    long n = hta_read_all(s->fd, s->pending, 2, -1);
    if (n < 0) {
        int e = errno;
        close(s->fd);
        free(s);
        return hta_fail(err, "%s: cannot read: %s", path, strerror(e));
    }
    s->n_pending = (size_t)n;
    s->is_gzip = hta_is_gzip_magic(s->pending, n);
    if (s->is_gzip && open_gzip(s, which)) {
        close(s->fd);
        free(s);
        return hta_fail(err, "%s: cannot start the gzip inflater", path);
    }
    *out = s;
    return 0;
}

static long read_plain(hta_source *s, char *buf, size_t cap, hta_error *err)
{
    size_t got = 0;
    while (s->n_pending && got < cap) {
        buf[got++] = (char)s->pending[0];
        s->pending[0] = s->pending[1];
        s->n_pending--;
    }
    long n = hta_read_all(s->fd, buf + got, cap - got, -1);
    if (n < 0)
        return hta_fail(err, "%s: read error: %s", s->path, strerror(errno));
    return (long)got + n;
}

static int refill_input(hta_source *s, hta_error *err)
{
    long n = hta_read_all(s->fd, s->input, SOURCE_INPUT_BYTES, -1);
    if (n < 0)
        return hta_fail(err, "%s: read error: %s", s->path, strerror(errno));
    s->in_next = s->input;
    s->in_avail = (size_t)n;
    s->input_eof = n == 0;
    return 0;
}

static long read_gzip(hta_source *s, char *buf, size_t cap, hta_error *err)
{
    unsigned char *out = (unsigned char *)buf;
    size_t avail = cap;
    while (avail == cap) {
        if (s->in_avail == 0 && !s->input_eof && refill_input(s, err))
            return -1;
        if (s->stream_end) {
            /* Another gzip member follows, or the data is over. */
            if (s->in_avail == 0 && s->input_eof)
                return 0;
            if (start_member(s, 0))
                return hta_fail(err, "%s: cannot restart the gzip inflater", s->path);
            s->stream_end = 0;
        }
        if (s->in_avail == 0 && s->input_eof)
            return hta_fail(err, "%s: truncated gzip data at compressed byte %llu",
                            s->path, (unsigned long long)s->consumed);
        size_t before = s->in_avail;
        const char *why;
        int step = inflate_step(s, &out, &avail, &why);
        s->consumed += before - s->in_avail;
        if (step == STEP_MEMBER_END)
            s->stream_end = 1;
        else if (step == STEP_ERROR)
            return hta_fail(err, "%s: corrupt gzip data at compressed byte %llu: %s",
                            s->path, (unsigned long long)s->consumed, why);
    }
    return (long)(cap - avail);
}

/* ---- reader thread ---------------------------------------------------- */

/* Fills a whole block so the consumer wakes once per block.  On an
 * error the block keeps what was inflated before it: the parser sees that
 * data first, as it would reading inline. */
static void inflate_block(hta_source *s, block *b, hta_error *err)
{
    b->len = 0;
    b->failed = b->last = 0;
    if (!b->resident) {
        hta_populate(b->data, BLOCK_BYTES);
        b->resident = 1;
    }
    while (b->len < BLOCK_BYTES) {
        long n = read_gzip(s, b->data + b->len, BLOCK_BYTES - b->len, err);
        if (n <= 0) {
            b->failed = n < 0;
            b->last = 1;
            return;
        }
        b->len += (size_t)n;
    }
}

static void *inflater_main(void *arg)
{
    hta_source *s = arg;
    ring *r = s->ring;
    for (int done = 0; !done;) {
        pthread_mutex_lock(&r->lock);
        while (r->count == RING_BLOCKS && !r->stop)
            pthread_cond_wait(&r->changed, &r->lock);
        int stop = r->stop;
        block *b = &r->blocks[(r->head + r->count) % RING_BLOCKS];
        pthread_mutex_unlock(&r->lock);
        if (stop)
            break;
        hta_error err = {{0}};
        inflate_block(s, b, &err);
        pthread_mutex_lock(&r->lock);
        if (b->failed)
            r->error = err;
        done = b->last;
        r->count++;
        pthread_cond_broadcast(&r->changed);
        pthread_mutex_unlock(&r->lock);
    }
    return NULL;
}

static void ring_free(ring *r)
{
    for (int i = 0; i < RING_BLOCKS; i++)
        free(r->blocks[i].data);
    free(r);
}

/* Starts the inflater; without a thread the source inflates inline. */
static void start_ring(hta_source *s)
{
    ring *r = calloc(1, sizeof *r);
    if (!r)
        return;
    for (int i = 0; i < RING_BLOCKS; i++)
        if (!(r->blocks[i].data = malloc(BLOCK_BYTES))) {
            ring_free(r);
            return;
        }
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->changed, NULL);
    s->ring = r;
    if (pthread_create(&r->thread, NULL, inflater_main, s) != 0) {
        s->ring = NULL;
        pthread_mutex_destroy(&r->lock);
        pthread_cond_destroy(&r->changed);
        ring_free(r);
    }
}

static void stop_ring(hta_source *s)
{
    ring *r = s->ring;
    pthread_mutex_lock(&r->lock);
    r->stop = 1;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    pthread_join(r->thread, NULL);
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->changed);
    ring_free(r);
    s->ring = NULL;
}

static long read_ring(ring *r, char *buf, size_t cap, hta_error *err)
{
    pthread_mutex_lock(&r->lock);
    while (r->count == 0)
        pthread_cond_wait(&r->changed, &r->lock);
    block *b = &r->blocks[r->head];
    pthread_mutex_unlock(&r->lock);
    if (b->failed && r->read_pos == b->len) {
        if (err)
            *err = r->error;
        return -1;
    }
    size_t n = b->len - r->read_pos < cap ? b->len - r->read_pos : cap;
    memcpy(buf, b->data + r->read_pos, n);
    r->read_pos += n;
    if (r->read_pos == b->len && !b->last) {
        /* Block consumed: hand it back to the inflater. */
        pthread_mutex_lock(&r->lock);
        r->head = (r->head + 1) % RING_BLOCKS;
        r->count--;
        r->read_pos = 0;
        pthread_cond_broadcast(&r->changed);
        pthread_mutex_unlock(&r->lock);
    }
    return (long)n;
}

long hta_source_read(hta_source *s, char *buf, size_t cap, hta_error *err)
{
    if (cap > (1u << 30))
        cap = 1u << 30;
    if (s->ring) {
        long n;
        /* An empty non-final block can only come from a zero-length read. */
        while ((n = read_ring(s->ring, buf, cap, err)) == 0 && !s->ring->blocks[s->ring->head].last)
            ;
        return n;
    }
    return s->is_gzip ? read_gzip(s, buf, cap, err) : read_plain(s, buf, cap, err);
}

/* Deflate expands at most about 1032-fold, which bounds a forged trailer. */
#define DEFLATE_MAX_RATIO 1032u

uint64_t hta_source_size_hint(const hta_source *s)
{
    if (!s->is_gzip)
        return s->file_bytes;
    unsigned char isize[4];
    if (s->file_bytes < 18 || pread(s->fd, isize, 4, (off_t)(s->file_bytes - 4)) != 4)
        return 0;              /* 18: the smallest gzip member */
    uint64_t n = (uint64_t)isize[0] | (uint64_t)isize[1] << 8 | (uint64_t)isize[2] << 16 |
                 (uint64_t)isize[3] << 24;
    return n < s->file_bytes * DEFLATE_MAX_RATIO ? n : s->file_bytes * DEFLATE_MAX_RATIO;
}

void hta_source_close(hta_source *s)
{
    if (!s)
        return;
    if (s->ring)
        stop_ring(s);
    if (s->is_gzip) {
        end_inflater(s);
        free(s->input);
    }
    close(s->fd);
    free(s);
}
