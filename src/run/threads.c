/* threads.c: the automatic thread count (see run/threads.h).
 *
 * MPI_Comm_split_type with MPI_COMM_TYPE_SHARED groups the processes that
 * can share memory, i.e. those on this node; they exchange affinity masks
 * and each counts those overlapping its own. */
#define _GNU_SOURCE
#include "run/threads.h"

#include <mpi.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

/* This process's affinity mask; every online CPU when the mask cannot be
 * read (more CPUs than a cpu_set_t holds). */
static void my_cpus(cpu_set_t *mask)
{
    if (sched_getaffinity(0, sizeof *mask, mask) == 0 && CPU_COUNT(mask) > 0)
        return;
    CPU_ZERO(mask);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < online && c < CPU_SETSIZE; c++)
        CPU_SET((int)c, mask);
}

/* How many processes of the node (this one included) may run on a CPU of
 * mine; 1 when the masks cannot be exchanged. */
static int processes_sharing(const cpu_set_t *mine)
{
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) !=
        MPI_SUCCESS)
        return 1;
    int size = 1;
    MPI_Comm_size(node, &size);
    cpu_set_t *all = malloc((size_t)size * sizeof *all);
    /* Every process joins the exchange, even one without memory for the
     * answer, or the others would wait for it. */
    int ok = all != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, node);
    int sharing = 1;
    if (ok && MPI_Allgather(mine, sizeof *mine, MPI_BYTE, all, sizeof *mine, MPI_BYTE, node) ==
                  MPI_SUCCESS) {
        sharing = 0;
        for (int p = 0; p < size; p++) {
            cpu_set_t common;
            CPU_AND(&common, mine, &all[p]);
            sharing += CPU_COUNT(&common) > 0;
        }
    }
    free(all);
    MPI_Comm_free(&node);
    return sharing > 0 ? sharing : 1;
}

int hta_threads_per_process(void)
{
    cpu_set_t mine;
    my_cpus(&mine);
    int threads = CPU_COUNT(&mine) / processes_sharing(&mine);
    return threads > 1 ? threads : 1;
}

int hta_threads_alone(void)
{
    cpu_set_t mine;
    my_cpus(&mine);
    return CPU_COUNT(&mine) > 1 ? CPU_COUNT(&mine) : 1;
}
