/* written_trace/trace_outliers.h: the outlier flags in the traces written back.
 *
 * --write-traces writes each trace as its process analyses it, before
 * any rank is compared with the others; once the root has the outliers,
 * it adds each written trace's own flags to the document's top level
 * ("hta_mpi": {"rank", "outliers": [{metric, value, z, robust_z,
 * classification}]}), where the viewers keep unknown keys as metadata. */
#ifndef HTA_TRACE_OUTLIERS_H
#define HTA_TRACE_OUTLIERS_H

#include "table/table.h"
#include "util/error.h"

/* For every analysed trace of all's "ranks" table written into dir: 0, or
 * -1 with err naming the first file that could not be rewritten. */
int hta_add_outliers_to_written_traces(const hta_tableset *all, const char *dir,
                                       hta_error *err);

#endif
