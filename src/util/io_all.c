/* io_all.c: see util/io_all.h. */
#define _POSIX_C_SOURCE 200809L
#include "util/io_all.h"

#include <errno.h>
#include <sys/types.h>
#include <unistd.h>

int hta_write_all(int fd, const void *data, size_t len, int64_t offset)
{
    const char *p = data;
    for (size_t done = 0; done < len;) {
        ssize_t n = offset < 0 ? write(fd, p + done, len - done)
                               : pwrite(fd, p + done, len - done, (off_t)(offset + (int64_t)done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = ENOSPC;
            return -1;
        }
        done += (size_t)n;
    }
    return 0;
}

long hta_read_all(int fd, void *buf, size_t cap, int64_t offset)
{
    char *p = buf;
    size_t got = 0;
    while (got < cap) {
        ssize_t n = offset < 0 ? read(fd, p + got, cap - got)
                               : pread(fd, p + got, cap - got, (off_t)(offset + (int64_t)got));
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
