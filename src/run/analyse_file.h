/* run/analyse_file.h: one trace file, from bytes to result rows. */
#ifndef HTA_ANALYSE_FILE_H
#define HTA_ANALYSE_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "settings/settings.h"
#include "table/table.h"

/* A trace with fewer events is viewed and analysed on one thread: its
 * analyses take a few milliseconds, and starting threads would cost more
 * than they save (opt->run.threaded_min_events overrides it for tests). */
#define HTA_THREADED_MIN_EVENTS 32768

/* A trace this large frees megabytes of scratch, which glibc keeps as
 * free heap (up to TRIM_THRESHOLD in main.c) for reuse.  Between its
 * analyses it is reused: handed back after each, it was faulted in again
 * by the next (a third of a large trace's page faults, at 12-15 us each
 * on a VM, for 7 MB of peak).  Between traces it would sit under the next
 * trace's peak, so it is handed back after the trace.  A small trace
 * keeps it: re-faulting pages for thousands of small traces is what the
 * threshold avoids. */
#define HTA_TRIM_MIN_EVENTS (1u << 20)

/* Parses and analyses one file, appending its rows (rank column = file
 * index) and one row of the "ranks" table.  Never fails for bad input: the
 * failure is recorded in the ranks row.  Returns -1 only when out of memory. */
int hta_analyse_file(const char *path, uint64_t bytes, int64_t file_index,
                     int process, const hta_settings *opt, hta_tableset *out);

/* Whether the last file analysed into set failed (its ranks row says so). */
int hta_analysed_file_failed(const hta_tableset *set);

#endif
