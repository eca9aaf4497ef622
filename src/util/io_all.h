/* util/io_all.h: whole reads and writes on a file descriptor.
 *
 * read(2) and write(2) may move fewer bytes than asked and fail with
 * EINTR when a signal arrives (MPI runtimes install handlers); every
 * caller that wants all of its bytes loops the same way, here.  An offset
 * of -1 means the descriptor's position (read, write), any other the
 * file offset (pread, pwrite), which leaves the position alone. */
#ifndef HTA_IO_ALL_H
#define HTA_IO_ALL_H

#include <stddef.h>
#include <stdint.h>

/* Writes all len bytes: 0, or -1 with errno (ENOSPC when the file takes
 * no more bytes without saying why). */
int hta_write_all(int fd, const void *data, size_t len, int64_t offset);

/* Reads up to cap bytes, fewer only at the end of the file: their count,
 * or -1 with errno. */
long hta_read_all(int fd, void *buf, size_t cap, int64_t offset);

#endif
