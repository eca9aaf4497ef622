/* unit.h: what the C unit tests share: CHECK, which counts and reports
 * without stopping, and the walk over the real traces in
 * ../shared/traces/hta (the test's first argument). */
#ifndef HTA_TESTS_UNIT_H
#define HTA_TESTS_UNIT_H

#include <stddef.h>
#include <stdio.h>

extern int unit_failures, unit_checks;

#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        unit_checks++;                                                    \
        if (!(cond)) {                                                    \
            unit_failures++;                                              \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                   \
            printf(__VA_ARGS__);                                          \
            printf("\n");                                                 \
        }                                                                 \
    } while (0)

/* The real traces folder given as argv[1], or NULL, having said on stdout
 * that the checks on real traces are skipped and why. */
const char *unit_real_traces(int argc, char **argv);

typedef void (*real_trace_check)(const char *path, char *data, size_t len);

/* Runs check on every real trace under traces/hta with its decompressed
 * bytes, NUL-terminated; returns how many traces there were. */
int for_each_real_trace(const char *traces, real_trace_check check);

/* Prints "N passed, M failed"; the exit status. */
int unit_finish(void);

#endif
