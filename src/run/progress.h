/* run/progress.h: "analysed k/N traces, X MB/s" on the root's stderr while
 * every process works through its own files (README, "Progress": progress on
 * stderr; in place when stderr is a terminal, else one line per 10%);
 * "analysed k/N traces, F failed" once some file failed. */
#ifndef HTA_PROGRESS_H
#define HTA_PROGRESS_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "run/discover.h"


typedef struct hta_progress {
    int enabled, me, n_processes;
    MPI_Comm comm;               /* private duplicate: no tag can collide */
    const hta_file_list *list;
    /* root */
    size_t done, failed;         /* files finished, of which failed */
    uint64_t done_bytes;
    int ends;                    /* end marks received */
    double start, last_print;
    int tty, last_decile;
    /* other processes: one message per finished file, then one end mark */
    MPI_Request *requests;
    int64_t *sent;
    size_t n_sent;
} hta_progress;

/* Collective over MPI_COMM_WORLD when enabled (which must be the same on
 * every process).  owner[i] is the process of file i; the rate counts from
 * started (MPI_Wtime's scale), when the work on the files began. */
void hta_progress_start(hta_progress *p, const hta_file_list *list, const int *owner,
                       int enabled, double started);
/* After this process has finished file i; failed: the file could not be
 * analysed (the line counts it apart). */
void hta_progress_file_done(hta_progress *p, size_t i, int failed);
/* After this process's last file: the root waits for every other process's
 * reports (printing as they arrive), the others complete their sends. */
void hta_progress_finish(hta_progress *p);

#endif
