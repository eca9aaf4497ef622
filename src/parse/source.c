/* source.c: plain or gzip byte stream of a trace file (see hta/source.h).
 *
 * Reads with read(2) in large blocks and inflates with zlib straight into
 * the caller's buffer, so no stage copies the data twice. */
#include "hta/source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define SOURCE_INPUT_BYTES (1u << 20)

struct hta_source {
    int fd;
    const char *path;          /* borrowed from the caller */
    uint64_t file_bytes;
    uint64_t consumed;         /* compressed bytes handed to zlib */
    int is_gzip;
    int input_eof;
    int stream_end;            /* last inflate returned Z_STREAM_END */
    z_stream z;
    unsigned char *input;      /* owned, gzip only */
    unsigned char pending[2];  /* magic bytes read while sniffing */
    size_t n_pending;
};

static long read_fully(int fd, void *buf, size_t cap)
{
    size_t got = 0;
    while (got < cap) {
        ssize_t n = read(fd, (char *)buf + got, cap - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (long)got;
}

int hta_source_open(const char *path, hta_source **out, hta_error *err)
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
    long n = read_fully(s->fd, s->pending, 2);
    if (n < 0) {
        int e = errno;
        close(s->fd);
        free(s);
        return hta_fail(err, "%s: cannot read: %s", path, strerror(e));
    }
    s->n_pending = (size_t)n;
    s->is_gzip = n == 2 && s->pending[0] == 0x1f && s->pending[1] == 0x8b;
    if (s->is_gzip) {
        s->input = malloc(SOURCE_INPUT_BYTES);
        /* 16 + MAX_WBITS: gzip wrapper only, with header checks. */
        if (!s->input || inflateInit2(&s->z, 16 + MAX_WBITS) != Z_OK) {
            free(s->input);
            close(s->fd);
            free(s);
            return hta_fail(err, "%s: cannot start zlib", path);
        }
        memcpy(s->input, s->pending, 2);
        s->z.next_in = s->input;
        s->z.avail_in = 2;
        s->n_pending = 0;
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
    long n = read_fully(s->fd, buf + got, cap - got);
    if (n < 0)
        return hta_fail(err, "%s: read error: %s", s->path, strerror(errno));
    return (long)got + n;
}

static int refill_input(hta_source *s, hta_error *err)
{
    long n = read_fully(s->fd, s->input, SOURCE_INPUT_BYTES);
    if (n < 0)
        return hta_fail(err, "%s: read error: %s", s->path, strerror(errno));
    s->z.next_in = s->input;
    s->z.avail_in = (uInt)n;
    s->input_eof = n == 0;
    return 0;
}

static long read_gzip(hta_source *s, char *buf, size_t cap, hta_error *err)
{
    s->z.next_out = (unsigned char *)buf;
    s->z.avail_out = (uInt)cap;
    while (s->z.avail_out == cap) {
        if (s->z.avail_in == 0 && !s->input_eof && refill_input(s, err))
            return -1;
        if (s->stream_end) {
            /* Another gzip member follows, or the data is over. */
            if (s->z.avail_in == 0 && s->input_eof)
                return 0;
            inflateReset(&s->z);
            s->stream_end = 0;
        }
        if (s->z.avail_in == 0 && s->input_eof)
            return hta_fail(err, "%s: truncated gzip data at compressed byte %llu",
                            s->path, (unsigned long long)s->consumed);
        uInt before = s->z.avail_in;
        int rc = inflate(&s->z, Z_NO_FLUSH);
        s->consumed += before - s->z.avail_in;
        if (rc == Z_STREAM_END)
            s->stream_end = 1;
        else if (rc != Z_OK && rc != Z_BUF_ERROR)
            return hta_fail(err, "%s: corrupt gzip data at compressed byte %llu: %s",
                            s->path, (unsigned long long)s->consumed,
                            s->z.msg ? s->z.msg : "inflate failed");
    }
    return (long)(cap - s->z.avail_out);
}

long hta_source_read(hta_source *s, char *buf, size_t cap, hta_error *err)
{
    if (cap > (1u << 30))
        cap = 1u << 30;
    return s->is_gzip ? read_gzip(s, buf, cap, err) : read_plain(s, buf, cap, err);
}

uint64_t hta_source_file_bytes(const hta_source *s)
{
    return s->file_bytes;
}

void hta_source_close(hta_source *s)
{
    if (!s)
        return;
    if (s->is_gzip) {
        inflateEnd(&s->z);
        free(s->input);
    }
    close(s->fd);
    free(s);
}
