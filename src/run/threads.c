/* threads.c: the automatic thread count (see hta/threads.h).
 *
 * MPI_Comm_split_type with MPI_COMM_TYPE_SHARED groups the processes that
 * can share memory, i.e. those on this node; its size is how many ways the
 * node's cores are shared.  Collective over MPI_COMM_WORLD, so every
 * process calls it at the same point. */
#include "hta/threads.h"

#include <mpi.h>
#include <unistd.h>

static int processes_on_node(void)
{
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) !=
        MPI_SUCCESS)
        return 1;
    int size = 1;
    MPI_Comm_size(node, &size);
    MPI_Comm_free(&node);
    return size;
}

int hta_threads_per_process(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long per_process = cores / processes_on_node();
    return per_process > 1 ? (int)per_process : 1;
}
