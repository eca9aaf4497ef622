/* crossrank/exchange/processes.h: the processes the cross-rank stage runs over.
 *
 * In a run they are MPI_COMM_WORLD.  Without MPI (the fuzzer, and
 * libhta's hta_analyse_trace, which analyse in one process) they are this
 * process alone, and each collective below is a copy of its own part: the
 * same code then serves both, so that one process's tables are those a
 * run of one process writes.  Every process makes the same calls in the
 * same order, as MPI's collectives require. */
#ifndef HTA_PROCESSES_H
#define HTA_PROCESSES_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "table/table.h"
#include "util/error.h"

typedef struct hta_processes {
    int me, n;
    int mpi;                   /* 0: this process alone, no MPI call made */
} hta_processes;

#define HTA_ROOT 0

/* MPI_COMM_WORLD once MPI is initialised (and not finalised), else this
 * process alone. */
hta_processes hta_processes_of_job(void);

/* Whether failed is nonzero on any process. */
int hta_processes_any(const hta_processes *p, int failed);
/* all[q] = process q's v. */
void hta_processes_allgather_int(const hta_processes *p, int v, int *all);
/* Process q's len bytes to all + offsets[q], lens[q] of them, everywhere. */
void hta_processes_allgatherv(const hta_processes *p, const void *data, int len, char *all,
                              const int *lens, const int *offsets);
/* Element-wise sum and minimum over the processes, in place. */
void hta_processes_sum(const hta_processes *p, int64_t *v, size_t n);
void hta_processes_min(const hta_processes *p, int64_t *v, size_t n);
/* recv[q] = what process q sent this one. */
void hta_processes_alltoall_int(const hta_processes *p, const int *send, int *recv);
/* displs[q] = counts[0] + ... + counts[q - 1], for an exchange's
 * displacements; -1 when the total passes INT_MAX. */
int hta_processes_displacements(const int *counts, int *displs, int n);
/* MPI_Alltoallv of elements of size bytes. */
void hta_processes_alltoallv(const hta_processes *p, const void *send, const int *counts,
                             const int *displs, void *recv, const int *recv_counts,
                             const int *recv_displs, size_t size);
/* MPI_Allreduce of n elements of size bytes with the reduction fn. */
void hta_processes_reduce(const hta_processes *p, void *v, size_t n, size_t size,
                          MPI_User_function *fn);

/* parts[q] (one tableset per process, freed) packed and sent to process
 * q; what this process receives merged into into, in process order.
 * -1 on every process when any failed (err set where it did). */
int hta_processes_exchange_tables(const hta_processes *p, hta_tableset *parts,
                                  hta_tableset *into, hta_error *err);

/* Every process's tables into into on the root (HTA_ROOT), the root's own
 * moved rather than packed (mine is emptied there), the others' packed
 * and merged in process order.  -1 with err on the root when they do not
 * fit or memory runs out. */
int hta_processes_gather_tables(const hta_processes *p, hta_tableset *mine, hta_tableset *into,
                                hta_error *err);

#endif
