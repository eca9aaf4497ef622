/* hta/threads.h: how many threads one process may use.
 *
 * Processes sharing a node share its cores, so the automatic --threads is
 * the node's online cores divided by the processes MPI placed on it. */
#ifndef HTA_THREADS_H
#define HTA_THREADS_H

/* max(1, online cores / processes on this node); call after MPI_Init. */
int hta_threads_per_process(void);

#endif
