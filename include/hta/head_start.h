/* hta/head_start.h: a process's first trace analysed while MPI starts up.
 *
 * MPI_Init costs a lone process 0.05 s here and a large job seconds of
 * launch and wire-up, in which the process could already be parsing.  When
 * the environment tells a process its rank, the job's size and how many
 * processes share its node before MPI_Init (a process started alone, or by
 * Open MPI's mpirun), a thread lists the inputs, assigns them as the run
 * will, and analyses the first file this process owns.  Once MPI is up the
 * run adopts that analysis only if the root's list gives this process the
 * same first file (same index, path and size); otherwise it is discarded
 * and the file analysed again, so results never depend on the head start.
 * The thread writes nothing and makes no MPI call. */
#ifndef HTA_HEAD_START_H
#define HTA_HEAD_START_H

#include <pthread.h>
#include <stdint.h>

#include "hta/options.h"
#include "hta/run.h"
#include "hta/table.h"

typedef struct hta_head_start {
    int started;               /* the thread runs, or ran */
    pthread_t thread;
    hta_options opt;           /* a copy: the caller may change its own */
    int rank, size, local_size;
    hta_file_list list;        /* owned: the list as this process saw it */
    int64_t file_index;        /* the file analysed, -1 for none */
    hta_tableset tables;       /* owned: its rows */
    int rc;                    /* hta_analyze_file's result */
} hta_head_start;

/* 1 when no launcher (mpirun, srun, a PMI) started this process: it will
 * be an MPI singleton, alone in its job. */
int hta_started_alone(void);

/* Starts the thread when the environment gives rank, size and node share
 * (else leaves h->started 0); call before MPI_Init.  opt must outlive
 * hta_head_start_end. */
void hta_head_start_begin(hta_head_start *h, const hta_options *opt);

/* When the head start analysed file i of list for process me: waits for
 * it, moves its rows into out (empty) and returns 1, or -1 when it ran out
 * of memory.  Else 0, and the caller analyses the file itself. */
int hta_head_start_take(hta_head_start *h, const hta_file_list *list, size_t i, int me,
                        hta_tableset *out);

/* Waits for the thread, if any, and frees what it left. */
void hta_head_start_end(hta_head_start *h);

#endif
