/* run/threads.h: how many threads one process may use.
 *
 * A process may run on the CPUs of its affinity mask (mpirun binds each
 * process to one core by default when it starts at most two; Slurm
 * confines a job to its cpuset), and the processes on one node whose masks
 * overlap share those CPUs.  The automatic --threads is therefore the
 * CPUs in this process's mask divided by the processes on this node whose
 * masks overlap it: 1 under mpirun's default binding, every core for one
 * unbound process. */
#ifndef HTA_THREADS_H
#define HTA_THREADS_H

/* max(1, CPUs in the mask / node processes sharing them); collective over
 * MPI_COMM_WORLD, call after MPI_Init. */
int hta_threads_per_process(void);

/* The same for a process started alone, before MPI_Init: the CPUs in its
 * mask. */
int hta_threads_alone(void);

#endif
