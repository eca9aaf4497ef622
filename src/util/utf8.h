/* util/utf8.h: making text valid UTF-8.
 *
 * The reader keeps a trace's strings byte for byte, so a kernel name may
 * hold bytes that are not UTF-8 (a tool writing Latin-1, a damaged file),
 * and file paths are whatever the file system holds.  The HDF5 file
 * declares every string UTF-8 and readers decode it strictly, so the writer
 * repairs strings on the way out (docs/robustness.md): each maximal invalid
 * sequence becomes one U+FFFD, exactly as Python's
 * bytes.decode("utf-8", errors="replace") does. */
#ifndef HTA_UTF8_H
#define HTA_UTF8_H

/* Whether the NUL-terminated s is valid UTF-8 (no overlong forms, no
 * surrogates, nothing above U+10FFFF). */
int hta_utf8_valid(const char *s);

/* A malloc'd valid copy of s, invalid sequences replaced by U+FFFD; NULL
 * when out of memory. */
char *hta_utf8_repair(const char *s);

#endif
