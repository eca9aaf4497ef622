/* head_start.c: a process's first trace analysed while MPI starts up (see
 * hta/head_start.h).
 *
 * The rank and size come from the launcher's environment: none of its
 * variables means a process started alone (rank 0 of 1, as its singleton
 * MPI_Init will say); Open MPI's mpirun exports OMPI_COMM_WORLD_RANK, _SIZE
 * and _LOCAL_SIZE.  Other launchers (srun, other MPIs) get no head start:
 * without the node's process count the thread count could not be the one
 * the run would choose.  A wrong guess costs only the work, never a result,
 * since the run checks the file before it adopts the rows. */
#include "hta/head_start.h"
#include "hta/threads.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* An environment variable holding a whole non-negative int, or -1. */
static int env_int(const char *name)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return -1;
    char *end;
    long v = strtol(s, &end, 10);
    return *end == '\0' && v >= 0 && v <= 1 << 30 ? (int)v : -1;
}

int hta_started_alone(void)
{
    static const char *const launcher_variables[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK",
                                                     "PMI_RANK", "SLURM_PROCID", NULL};
    for (const char *const *v = launcher_variables; *v; v++)
        if (getenv(*v))
            return 0;
    return 1;
}

/* Rank, size and processes on this node as MPI_Init will report them, or
 * 0 when the environment does not say. */
static int place_in_job(int *rank, int *size, int *local_size)
{
    if (hta_started_alone()) {
        *rank = 0;
        *size = *local_size = 1;
        return 1;
    }
    *rank = env_int("OMPI_COMM_WORLD_RANK");
    *size = env_int("OMPI_COMM_WORLD_SIZE");
    *local_size = env_int("OMPI_COMM_WORLD_LOCAL_SIZE");
    return *rank >= 0 && *size > *rank && *local_size > 0;
}

/* The first file assigned to this process, or -1. */
static int64_t first_owned(const hta_file_list *list, int rank, int size)
{
    int *owner = malloc((list->count ? list->count : 1) * sizeof *owner);
    int64_t first = -1;
    if (owner && hta_assign(list, size, owner) == 0)
        for (size_t i = 0; i < list->count && first < 0; i++)
            if (owner[i] == rank)
                first = (int64_t)i;
    free(owner);
    return first;
}

static void *analyze_first_file(void *arg)
{
    hta_head_start *h = arg;
    hta_error unused;
    if (hta_discover(&h->opt, &h->list, &unused) == 0)
        h->file_index = first_owned(&h->list, h->rank, h->size);
    if (h->file_index >= 0) {
        size_t i = (size_t)h->file_index;
        h->rc = hta_analyze_file(h->list.paths[i], h->list.bytes[i], h->file_index, h->rank,
                                 &h->opt, &h->tables);
    }
    return NULL;
}

void hta_head_start_begin(hta_head_start *h, const hta_options *opt)
{
    memset(h, 0, sizeof *h);
    h->file_index = -1;
    /* A run that will refuse its output would wait for the thread first. */
    struct stat st;
    int refused = stat(opt->output, &st) == 0 && (!opt->force || S_ISDIR(st.st_mode));
    if (refused || !place_in_job(&h->rank, &h->size, &h->local_size))
        return;
    h->opt = *opt;
    if (h->opt.threads == 0)
        h->opt.threads = hta_threads_for_share(h->local_size);
    h->started = pthread_create(&h->thread, NULL, analyze_first_file, h) == 0;
}

static void wait_for_thread(hta_head_start *h)
{
    if (h->started)
        pthread_join(h->thread, NULL);
    h->started = 0;
}

int hta_head_start_take(hta_head_start *h, const hta_file_list *list, size_t i, int me,
                        hta_tableset *out)
{
    wait_for_thread(h);
    int same = h->file_index == (int64_t)i && h->rank == me && i < h->list.count &&
               i < list->count && h->list.bytes[i] == list->bytes[i] &&
               strcmp(h->list.paths[i], list->paths[i]) == 0;
    if (!same)
        return 0;
    h->file_index = -1;        /* taken */
    if (h->rc)
        return -1;
    hta_tableset_free(out);
    *out = h->tables;
    memset(&h->tables, 0, sizeof h->tables);
    return 1;
}

void hta_head_start_end(hta_head_start *h)
{
    wait_for_thread(h);
    hta_file_list_free(&h->list);
    hta_tableset_free(&h->tables);
}
