/* main.c: hta-mpi's entry point.  Parses the command line before MPI
 * starts so that --help, --version and usage errors cost nothing, then hands
 * the run to the pipeline and turns its result into the exit code. */
#include <malloc.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "diff/diff_command.h"
#include "run/head_start.h"
#include "run/pipeline.h"
#include "run/threads.h"
#include "settings/exit_codes.h"

#ifndef HTA_VERSION
#define HTA_VERSION "0.0.0"
#endif

/* Every trace allocates the same read buffers and scratch arrays of a few
 * megabytes and frees them.  By default glibc maps such blocks fresh or
 * returns the heap's top to the system after each trace, so the next one
 * page-faults all of it in again: with thousands of small traces per
 * process that would be most of the run.
 * Keeping blocks below MMAP_THRESHOLD in the heap, and up to
 * TRIM_THRESHOLD of free heap, lets each trace reuse the last one's pages;
 * the large event arrays are still mapped, and grow by remapping.  Every
 * thread allocates from the one main heap (MALLOC_ARENAS): malloc_trim,
 * which a large trace calls after each analysis (HTA_TRIM_MIN_EVENTS),
 * returns the free top of the main heap only, and a thread's own arena
 * would keep up to TRIM_THRESHOLD of it between traces. */
#define MMAP_THRESHOLD (4 << 20)
#define TRIM_THRESHOLD (16 << 20)
#define MALLOC_ARENAS 1

/* A process started directly, not by mpirun or srun, is alone and sends
 * no message, yet Open MPI's singleton MPI_Init is slow: it starts a
 * helper daemon (orted) to serve as its runtime, and probes every network
 * transport it was built with (UCX, libfabric, PSM) to choose a
 * point-to-point layer.  Such a process runs isolated (no daemon) on the
 * plain ob1 layer, unless the user set either; processes of a
 * launched job keep whatever the cluster configures.  Isolated singletons
 * would all share one session directory, which the first to finish
 * removes: with several lone processes at once, another's MPI_Init then
 * failed to create it, or MPI-IO printed an error when its "sm"
 * shared-file-pointer component found its file gone.  A lone process
 * needs no session directory and hta-mpi no shared file pointer, so it
 * creates none and leaves that component out.  It talks to nobody but
 * itself, so it brings up no network transport either (btl "self", no UCX
 * one-sided layer): besides their start-up time, verbs and UCX hook the
 * process's memory calls, which the head start's thread (head_start.c)
 * makes while MPI_Init runs. */
static void prefer_quick_start_when_alone(void)
{
    if (!hta_started_alone())
        return;
    setenv("OMPI_MCA_pml", "ob1", 0);
    setenv("OMPI_MCA_btl", "self", 0);
    setenv("OMPI_MCA_osc", "^ucx", 0);
    setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
    setenv("OMPI_MCA_orte_create_session_dirs", "0", 0);
    setenv("OMPI_MCA_sharedfp", "^sm", 0);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "diff") == 0)
        return hta_diff_main(argc - 1, argv + 1, HTA_VERSION);
    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD);
    mallopt(M_ARENA_MAX, MALLOC_ARENAS);
    hta_settings opt;
    hta_error err = {{0}};
    hta_cli_action action = hta_parse_options(argc, argv, &opt, &err);
    if (action == HTA_CLI_HELP) {
        hta_print_usage(stdout);
        return HTA_EXIT_OK;
    }
    if (action == HTA_CLI_VERSION) {
        printf("hta-mpi %s\n", HTA_VERSION);
        return HTA_EXIT_OK;
    }
    if (action == HTA_CLI_USAGE_ERROR) {
        fprintf(stderr, "hta-mpi: %s\n", err.text);
        hta_settings_free(&opt);
        return HTA_EXIT_USAGE;
    }
    prefer_quick_start_when_alone();
    hta_head_start head;
    hta_head_start_begin(&head, &opt);
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "hta-mpi: MPI_Init failed\n");
        hta_head_start_end(&head);
        return HTA_EXIT_INTERNAL;
    }
    if (opt.run.threads == 0)
        opt.run.threads = hta_threads_per_process();
    int code = hta_run(&opt, HTA_VERSION, &head);
    hta_head_start_end(&head);
    MPI_Finalize();
    hta_settings_free(&opt);
    return code;
}
