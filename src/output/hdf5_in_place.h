/* output/hdf5_in_place.h: every process's own rows of the tables flagged
 * HTA_TABLE_IN_PLACE (never gathered), written collectively into the root's temporary
 * results file (output/hdf5_writer.h). */
#ifndef HTA_HDF5_IN_PLACE_H
#define HTA_HDF5_IN_PLACE_H

#include "run/ranks.h"
#include "table/table.h"
#include "util/error.h"

/* Collective over MPI_COMM_WORLD; rows already passed through
 * hta_apply_rank_map; invalid UTF-8 in them is repaired in place. */
int hta_write_in_place_tables(const char *tmp_path, const char *output, hta_tableset *mine,
                              const hta_rank_map *map, hta_error *err);

#endif
