/* spill_file.c: an unlinked temporary file to append to and read back (see
 * table/spill_file.h).
 *
 * O_TMPFILE creates a file that never has a name, so not even a crash
 * leaves it behind; where the file system or kernel lacks it, mkostemp
 * makes a named one that is unlinked at once.  Writes and reads go by
 * offset (pwrite, pread), so the file position never matters. */
#define _GNU_SOURCE /* O_TMPFILE, mkostemp */
#include "table/spill_file.h"

#include "util/io_all.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Writing past the file size limit would raise SIGXFSZ, which ends the
 * process: such bytes are refused instead, as on a full disk. */
static int within_size_limit(uint64_t end)
{
    struct rlimit limit;
    return getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
           end <= (uint64_t)limit.rlim_cur;
}

static int open_unlinked(const char *dir)
{
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/hta-mpi-spill.XXXXXX", dir) >= (int)sizeof path)
        return -1;
    fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0)
        unlink(path);
    return fd;
}

const char *hta_spill_file_dir(void)
{
    const char *dir = getenv("TMPDIR");
    return dir && *dir ? dir : "/tmp";
}

/* Marks the file unusable for the reason error (an errno value). */
static int give_up(hta_spill_file *file, int error)
{
    file->unusable = 1;
    file->error = error;
    return -1;
}

int hta_spill_file_append(hta_spill_file *file, const void *data, size_t len, uint64_t *at)
{
    if (file->unusable)
        return -1;
    if (!within_size_limit(file->len + len))
        return give_up(file, EFBIG);
    if (!file->open) {
        file->fd = open_unlinked(hta_spill_file_dir());
        file->open = file->fd >= 0;
        if (!file->open)
            return give_up(file, errno);
    }
    /* A failed write may leave bytes past file->len; the next append, if
     * any, would overwrite them, and nothing reads them. */
    if (hta_write_all(file->fd, data, len, (int64_t)file->len))
        return give_up(file, errno);
    *at = file->len;
    file->len += len;
    return 0;
}

int hta_spill_file_read(const hta_spill_file *file, uint64_t at, size_t len, hta_buf *into,
                        hta_error *err)
{
    into->len = 0;
    if (hta_buf_reserve(into, len))
        return hta_fail(err, "out of memory reading back a temporary file");
    long n = hta_read_all(file->fd, into->data, len, (int64_t)at);
    if (n < 0 || (size_t)n < len)
        return hta_fail(err, "cannot read back a temporary file ($TMPDIR, else /tmp): %s",
                        n < 0 ? strerror(errno) : "it is shorter than was written");
    into->len = len;
    return 0;
}

void hta_spill_file_close(hta_spill_file *file)
{
    if (file->open)
        close(file->fd);
    *file = (hta_spill_file){0};
}
