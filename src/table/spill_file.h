/* table/spill_file.h: bytes kept on disk rather than in memory, in an
 * unlinked temporary file that only this process can reach.
 *
 * The file is created on the first append, in $TMPDIR (else /tmp), and is
 * gone when it is closed or the process ends, however it ends.  Appending
 * is best effort: when no file can be created there, a write fails (a
 * full disk) or would pass the file size limit, the append says so and the
 * caller keeps its bytes itself; nothing more is appended after that.
 * Reading back what was appended must not fail, so a failure there is an
 * error. */
#ifndef HTA_SPILL_FILE_H
#define HTA_SPILL_FILE_H

#include <stdint.h>

#include "util/buf.h"
#include "util/error.h"

typedef struct hta_spill_file {
    int fd;        /* owned, when open */
    int open;      /* 0 until the first append creates the file */
    int unusable;  /* set when creating or writing failed: no more appends */
    int error;     /* why it became unusable (an errno value), else 0 */
    uint64_t len;  /* bytes appended */
} hta_spill_file;

/* Where the file is made: $TMPDIR, else /tmp. */
const char *hta_spill_file_dir(void);

/* Appends len bytes and puts their offset in *at: 0, or -1 when the file
 * cannot take them (then it holds nothing more than before). */
int hta_spill_file_append(hta_spill_file *file, const void *data, size_t len, uint64_t *at);
/* Reads the len bytes appended at `at` into `into` (replacing its bytes). */
int hta_spill_file_read(const hta_spill_file *file, uint64_t at, size_t len, hta_buf *into,
                        hta_error *err);
void hta_spill_file_close(hta_spill_file *file);

#endif
