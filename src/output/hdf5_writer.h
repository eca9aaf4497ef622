/* output/hdf5_writer.h: the results file, written under a temporary name
 * in the output's directory so that it appears complete or not at all:
 *  1. root: hta_write_root_tables writes the gathered and cross-rank tables
 *     and returns the temporary's path (owned by the caller);
 *  2. every process: hta_write_in_place_tables (output/hdf5_in_place.h)
 *     adds its own rows of the tables that were never gathered;
 *  3. root: hta_publish_results syncs and renames it when complete, else
 *     removes it. */
#ifndef HTA_HDF5_WRITER_H
#define HTA_HDF5_WRITER_H

#include "cli/options.h"
#include "output/run_info.h"
#include "table/table.h"
#include "util/error.h"

int hta_write_root_tables(const hta_tableset *set, const hta_options *opt,
                          const hta_run_info *info, char **tmp_path, hta_error *err);
int hta_publish_results(const char *tmp_path, const char *output, int complete,
                        hta_error *err);

#endif
