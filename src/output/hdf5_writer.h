/* output/hdf5_writer.h: the root's part of the results file (the file's
 * life: output/results_file.h). */
#ifndef HTA_HDF5_WRITER_H
#define HTA_HDF5_WRITER_H

#include "output/run_info.h"
#include "settings/settings.h"
#include "table/table.h"
#include "util/error.h"

/* Root: writes the gathered and cross-rank tables and the run's attributes
 * into a new temporary beside opt->output.path and returns its path (owned by
 * the caller); on failure nothing is left behind. */
int hta_write_root_tables(const hta_tableset *set, const hta_settings *opt,
                          const hta_run_info *info, char **tmp_path, hta_error *err);

#endif
