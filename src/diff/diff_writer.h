/* diff/diff_writer.h: the diff's HDF5 file.
 *
 * Every /diff/... table as a 1-D compound dataset, as in a results file
 * (strings variable-length UTF-8), and root attributes naming both inputs:
 * their paths, command lines, schema versions and creation times, the
 * diff's own command line and --min-change, and file_kind = "diff", which
 * tells a diff file from a results file.  Written under a temporary name
 * beside the output and renamed when complete, as the results file is. */
#ifndef HTA_DIFF_WRITER_H
#define HTA_DIFF_WRITER_H

#include "diff/diff_input.h"

typedef struct hta_diff_provenance {
    const char *tool_version;
    const char *command_line;
    double min_change;
} hta_diff_provenance;

int hta_diff_write(const char *output, const hta_tableset *tables, const hta_diff_input *base,
                   const hta_diff_input *new_, const hta_diff_provenance *p, hta_error *err);

#endif
