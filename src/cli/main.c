/* main.c: hta-mpi's entry point, a program of the public interface
 * (hta/run.h).  Parses the command line before MPI starts so that --help,
 * --version and usage errors cost nothing, then hands the process to the
 * run and turns its result into the exit code. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "hta/hta.h"

/* Every trace allocates the same read buffers and scratch arrays of a few
 * megabytes and frees them.  By default glibc maps such blocks fresh or
 * returns the heap's top to the system after each trace, so the next one
 * page-faults all of it in again: with thousands of small traces per
 * process that would be most of the run.
 * Keeping blocks below MMAP_THRESHOLD in the heap, and up to
 * TRIM_THRESHOLD of free heap, lets each trace reuse the last one's pages;
 * the large event arrays are still mapped, and grow by remapping.  Every
 * thread allocates from the one main heap (MALLOC_ARENAS): malloc_trim,
 * which a large trace calls after its last analysis (HTA_TRIM_MIN_EVENTS in
 * run/analyse_file.h), returns the free top of the main heap only, and a
 * thread's own arena would keep up to TRIM_THRESHOLD of it between traces.
 * This is the command's policy for its own process, not the library's. */
#define MMAP_THRESHOLD (4 << 20)
#define TRIM_THRESHOLD (16 << 20)
#define MALLOC_ARENAS 1

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "diff") == 0)
        return hta_command_diff(argc - 1, argv + 1);
    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD);
    mallopt(M_ARENA_MAX, MALLOC_ARENAS);
    hta_settings *settings = hta_settings_new();
    if (!settings) {
        fprintf(stderr, "hta-mpi: out of memory\n");
        return HTA_EXIT_INTERNAL;
    }
    hta_error err = {{0}};
    int code = HTA_EXIT_OK;
    switch (hta_command_parse(settings, argc, argv, &err)) {
    case HTA_COMMAND_HELP:
        hta_command_usage(stdout);
        break;
    case HTA_COMMAND_VERSION:
        printf("hta-mpi %s\n", hta_version());
        break;
    case HTA_COMMAND_USAGE_ERROR:
        fprintf(stderr, "hta-mpi: %s\n", err.text);
        code = HTA_EXIT_USAGE;
        break;
    case HTA_COMMAND_RUN:
        code = hta_command_run(settings, &argc, &argv);
        break;
    }
    hta_settings_destroy(settings);
    return code;
}
