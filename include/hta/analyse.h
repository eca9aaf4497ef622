/* hta/analyse.h: one rank's trace analysed in this process, without MPI.
 *
 * What a one-trace run of `hta-mpi` writes into its results file, as
 * tables: the per-rank analyses, /ranks with the trace's row, and the
 * cross-rank tables over that one rank, the rank resolved as the run
 * resolves it.  The run's /timeline array (not a table) and
 * its files (--write-traces) are not produced. */
#ifndef HTA_PUBLIC_ANALYSE_H
#define HTA_PUBLIC_ANALYSE_H

#include "hta/api.h"
#include "hta/error.h"
#include "hta/settings.h"
#include "hta/table.h"

/* Reads and analyses path with the settings s (NULL: the defaults), on
 * the settings' "threads" (0: the CPUs this process may run on).  NULL
 * with err naming the file when the trace cannot be read or analysed, or
 * memory runs out. */
HTA_API hta_tableset *hta_analyse_trace(const char *path, const hta_settings *s,
                                        hta_error *err);

#endif
