/* main.c: hta-mpi's entry point.  Parses the command line before MPI
 * starts so that --help, --version and usage errors cost nothing, then hands
 * the run to the pipeline and turns its result into the exit code. */
#include <mpi.h>
#include <stdio.h>

#include "hta/cli.h"
#include "hta/pipeline.h"
#include "hta/threads.h"

#ifndef HTA_VERSION
#define HTA_VERSION "0.0.0"
#endif

int main(int argc, char **argv)
{
    hta_options opt;
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
        hta_options_free(&opt);
        return HTA_EXIT_USAGE;
    }
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "hta-mpi: MPI_Init failed\n");
        return HTA_EXIT_INTERNAL;
    }
    if (opt.threads == 0)
        opt.threads = hta_threads_per_process();
    int code = hta_run(&opt, HTA_VERSION);
    MPI_Finalize();
    hta_options_free(&opt);
    return code;
}
