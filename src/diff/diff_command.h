/* diff/diff_command.h: `hta-mpi diff BASE.h5 NEW.h5`, comparing two runs.
 *
 * A lone process that reads two results files (never the traces) and
 * writes the comparison tables (diff/kernel_diff.h, rank_metric_diff.h,
 * tail_diff.h, collective_diff.h) to one HDF5 file, with a summary on
 * stdout.  It needs no MPI. */
#ifndef HTA_DIFF_COMMAND_H
#define HTA_DIFF_COMMAND_H

/* argv[0] is "diff".  Returns the exit code: 0 done, 2 usage error or an
 * input that is not a results file this hta-mpi reads, 3 the diff file
 * could not be written. */
int hta_diff_main(int argc, char **argv, const char *version);

#endif
