/* written_trace/trace_waits.h: each collective's wait in the traces written back.
 *
 * --write-traces writes a trace as its process analyses it, before the
 * collectives are matched across ranks; once they are, the process holding
 * the rank adds to its written trace, on hta-mpi's track ("collective
 * wait", pid 999999, tid 1), an instant event at the start of every
 * collective kernel that waited for its peers ("wait for peers") or that
 * the others waited for ("arrived last"), with the wait, the wait it caused
 * and the group and collective in its args.  Instant events are not read
 * back as events, so the written trace still gives the same tables. */
#ifndef HTA_TRACE_WAITS_H
#define HTA_TRACE_WAITS_H

#include <stddef.h>
#include <stdint.h>

#include "table/table.h"
#include "util/error.h"

/* Adds rank's rows of waits ("_kernel_waits",
 * crossrank/exchange/collective_groups.h) to the trace written at path: 0, or -1
 * with err naming the file. */
int hta_add_waits_to_written_trace(const char *path, const hta_table *waits, int64_t rank,
                                   hta_error *err);
/* The same for every rank waits has rows of, in the trace written for it
 * in dir (named as the file it came from, paths[f] for the rank
 * rank_of_file[f]; a trace not written is left out): 0, or -1 with err
 * naming the first that failed, the others still tried. */
int hta_add_waits_to_written_traces(const char *dir, char *const *paths,
                                    const int64_t *rank_of_file, size_t n_files,
                                    const hta_table *waits, hta_error *err);

#endif
