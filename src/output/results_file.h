/* output/results_file.h: the results file's life, from the checks before
 * any work to its publication.
 *
 * The file appears complete under its final name or not at all:
 *  1. before any work, the root checks the target (hta_results_file_check)
 *     and every process checks that it sees the same directory
 *     (hta_results_file_check_shared);
 *  2. the root writes its tables into a temporary beside the output
 *     (hta_results_file_temporary_name; output/hdf5_writer.h), then every
 *     process adds its own rows (output/hdf5_in_place.h);
 *  3. the root publishes the temporary (synced, then renamed) when
 *     everything was written, else discards it. */
#ifndef HTA_RESULTS_FILE_H
#define HTA_RESULTS_FILE_H

#include "util/error.h"

/* Root: refuses to clobber results (unless force) or to write to a
 * directory, and fails early on an unwritable target directory. */
int hta_results_file_check(const char *output, int force, hta_error *err);

/* Every process (collective over MPI_COMM_WORLD): whether the output's
 * directory is one that every process sees under the same path.  -1 on
 * every process when not; err is set on the root. */
int hta_results_file_check_shared(const char *output, hta_error *err);

/* The temporary's path beside output (malloc'd; NULL when out of memory). */
char *hta_results_file_temporary_name(const char *output);

/* Syncs the complete temporary and renames it to output; on failure it is
 * removed. */
int hta_results_file_publish(const char *tmp_path, const char *output, hta_error *err);

/* Removes the temporary (tmp_path may be NULL: nothing was created). */
void hta_results_file_discard(const char *tmp_path);

#endif
