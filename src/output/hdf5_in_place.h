/* output/hdf5_in_place.h: every process's own rows of the tables flagged
 * HTA_TABLE_IN_PLACE (never gathered), written collectively into the root's temporary
 * results file (output/hdf5_writer.h). */
#ifndef HTA_HDF5_IN_PLACE_H
#define HTA_HDF5_IN_PLACE_H

#include <stddef.h>
#include <stdint.h>

#include "table/table.h"
#include "util/error.h"

/* Collective over MPI_COMM_WORLD; rows already passed through
 * hta_apply_rank_map; invalid UTF-8 in them is repaired in place.  ranks:
 * every rank the map keeps, ascending (the same on every process). */
int hta_write_in_place_tables(const char *tmp_path, const char *output, hta_tableset *mine,
                              const int64_t *ranks, size_t n_ranks, hta_error *err);

#endif
