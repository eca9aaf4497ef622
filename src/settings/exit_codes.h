/* settings/exit_codes.h: what hta-mpi and hta-mpi diff answer their caller
 * (README, "Exit codes"); the run and the diff return them, main passes
 * them on. */
#ifndef HTA_EXIT_CODES_H
#define HTA_EXIT_CODES_H

enum {
    HTA_EXIT_OK = 0,
    HTA_EXIT_SOME_FAILED = 1,
    HTA_EXIT_USAGE = 2,
    HTA_EXIT_INTERNAL = 3,
};

#endif
