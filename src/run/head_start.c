/* head_start.c: a lone process's first trace analysed while MPI starts up
 * (see run/head_start.h).
 *
 * Only a process started alone gets one.  In a launched job MPI_Init may
 * bring up transports (UCX, verbs) that hook the process's memory calls,
 * patching malloc, mmap and munmap while they run; a thread parsing at that
 * moment calls them by the million.  A lone process is told to use no such
 * transport (main.c), and it knows its rank (0) and the job's size (1)
 * before MPI_Init says so.  MPI_Init also sets environment variables, so
 * what the thread's readers take from the environment is taken first. */
#include "parse/sqlite_open.h"
#include "run/analyse_file.h"
#include "run/head_start.h"
#include "run/threads.h"
#include "util/clock.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int hta_started_alone(void)
{
    static const char *const launcher_variables[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK",
                                                     "PMI_RANK", "SLURM_PROCID", NULL};
    for (const char *const *v = launcher_variables; *v; v++)
        if (getenv(*v))
            return 0;
    return 1;
}

/* Alone, the process owns every file and takes them in list order. */
static void *analyse_first_file(void *arg)
{
    hta_head_start *h = arg;
    hta_error unused;
    if (hta_discover(&h->opt, &h->list, &unused) == 0 && h->list.count > 0) {
        h->analysed = 1;
        h->rc = hta_analyse_file(h->list.paths[0], h->list.bytes[0], 0, 0, &h->opt, &h->tables);
    }
    return NULL;
}

void hta_head_start_begin(hta_head_start *h, const hta_settings *opt)
{
    memset(h, 0, sizeof *h);
    /* A run that will refuse its output would wait for the thread first. */
    struct stat st;
    int refused = stat(opt->output.path, &st) == 0 && (!opt->output.force || S_ISDIR(st.st_mode));
    if (refused || !hta_started_alone() || getenv("HTA_MPI_NO_HEAD_START"))
        return;
    h->opt = *opt;
    hta_sqlite_ready();
    if (h->opt.run.threads == 0)
        h->opt.run.threads = hta_threads_alone();
    h->started = pthread_create(&h->thread, NULL, analyse_first_file, h) == 0;
    h->begun_at = h->started ? hta_monotonic_seconds() : 0;
}

static void wait_for_thread(hta_head_start *h)
{
    if (h->started)
        pthread_join(h->thread, NULL);
    h->started = 0;
}

hta_head_start_take_result hta_head_start_take(hta_head_start *h, const hta_file_list *list,
                                               size_t i, int me, hta_tableset *out)
{
    wait_for_thread(h);
    int same = h->analysed && i == 0 && me == 0 && list->count > 0 &&
               h->list.bytes[0] == list->bytes[0] && strcmp(h->list.paths[0], list->paths[0]) == 0;
    if (!same)
        return HTA_HEAD_START_NOT_TAKEN;
    h->analysed = 0;           /* taken */
    if (h->rc)
        return HTA_HEAD_START_FAILED;
    hta_tableset_free(out);
    *out = h->tables;
    memset(&h->tables, 0, sizeof h->tables);
    return HTA_HEAD_START_TAKEN;
}

void hta_head_start_end(hta_head_start *h)
{
    wait_for_thread(h);
    hta_file_list_free(&h->list);
    hta_tableset_free(&h->tables);
}
