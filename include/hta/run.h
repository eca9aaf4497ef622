/* hta/run.h: the hta-mpi command, over MPI.
 *
 * The run is part of the library (docs/design.md says why): a program
 * parses its command line into settings, then hands the process to
 * hta_command_run, which starts MPI, analyses this process's share of the
 * traces, writes the results file and stops MPI.  The hta-mpi command is
 * exactly that (src/cli/main.c). */
#ifndef HTA_PUBLIC_RUN_H
#define HTA_PUBLIC_RUN_H

#include <stdio.h>

#include "hta/api.h"
#include "hta/error.h"
#include "hta/settings.h"

typedef enum hta_command_action {
    HTA_COMMAND_RUN,
    HTA_COMMAND_HELP,
    HTA_COMMAND_VERSION,
    HTA_COMMAND_USAGE_ERROR,
} hta_command_action;

/* Fills s from hta-mpi's command line (argv[0] is the program); argv must
 * outlive s.  HTA_COMMAND_USAGE_ERROR with err set on a bad option. */
HTA_API hta_command_action hta_command_parse(hta_settings *s, int argc, char **argv,
                                             hta_error *err);
HTA_API void hta_command_usage(FILE *out);

/* The whole run, MPI_Init to MPI_Finalize (argc and argv go to MPI_Init);
 * returns the exit code, the same on every process. */
HTA_API int hta_command_run(hta_settings *s, int *argc, char ***argv);

/* `hta-mpi diff BASE.h5 NEW.h5 ...` (argv[0] is "diff"): its exit code. */
HTA_API int hta_command_diff(int argc, char **argv);

#endif
