/* run/head_start.h: a lone process's first trace analysed while MPI
 * starts up.
 *
 * MPI_Init takes a process started alone tens of milliseconds, in which
 * it could already be parsing.  Such a process (no launcher in its environment) is
 * rank 0 of 1 before MPI_Init says so: a thread lists the inputs and
 * analyses the first file while MPI starts.  The run adopts those rows only
 * if the root's list, once MPI is up, has the same first file (path and
 * size); otherwise they are discarded and the file analysed again, so
 * results never depend on the head start.  The thread writes nothing and
 * makes no MPI call.  Processes of a launched job get none (head_start.c
 * says why). */
#ifndef HTA_HEAD_START_H
#define HTA_HEAD_START_H

#include <pthread.h>

#include "run/discover.h"
#include "settings/settings.h"
#include "table/table.h"

typedef struct hta_head_start {
    int started;               /* the thread runs, or ran */
    pthread_t thread;
    hta_settings opt;           /* a copy: the caller may change its own */
    hta_file_list list;        /* owned: the list as the thread saw it */
    int analysed;              /* its first file was analysed, not yet taken */
    hta_tableset tables;       /* owned: its rows */
    int rc;                    /* hta_analyse_file's result */
    double begun_at;           /* hta_monotonic_seconds() at the start, 0 for none */
} hta_head_start;

/* 1 when no launcher (mpirun, srun, a PMI) started this process: it will
 * be an MPI singleton, alone in its job. */
int hta_started_alone(void);

/* Starts the thread for a process started alone whose run will not refuse
 * its output, unless HTA_MPI_NO_HEAD_START is set (else leaves h->started
 * 0); call before MPI_Init.  opt must outlive hta_head_start_end. */
void hta_head_start_begin(hta_head_start *h, const hta_settings *opt);

typedef enum hta_head_start_take_result {
    HTA_HEAD_START_FAILED = -1, /* it analysed the file but ran out of memory */
    HTA_HEAD_START_NOT_TAKEN = 0, /* the caller analyses the file itself */
    HTA_HEAD_START_TAKEN = 1,  /* its rows were moved into out */
} hta_head_start_take_result;

/* Whether the head start analysed file i of list for process me: waits for
 * it and, when it did, moves its rows into out (empty). */
hta_head_start_take_result hta_head_start_take(hta_head_start *h, const hta_file_list *list,
                                               size_t i, int me, hta_tableset *out);

/* Waits for the thread, if any, and frees what it left. */
void hta_head_start_end(hta_head_start *h);

#endif
