/* parse/device_entry.h: one GPU of a trace file that holds several.
 *
 * A reader with a `devices` function (parse/input_reader.h) can read one
 * device of its file alone; discovery then lists such a file as
 * "FILE@device=N", one trace per device, and /ranks shows that name. */
#ifndef HTA_DEVICE_ENTRY_H
#define HTA_DEVICE_ENTRY_H

#include <stddef.h>

/* Returns 1 and fills base (the file's path) and *device when path is
 * such an entry of an existing file, else 0. */
int hta_device_entry_parse(const char *path, char *base, size_t cap, long long *device);

/* Writes the entry name of a file's device into out (of cap bytes);
 * -1 when it does not fit. */
int hta_device_entry_name(const char *file_path, long long device, char *out, size_t cap);

#endif
