/* fuzz_analyses.c: libFuzzer entry point for a trace's way from the file
 * to the results tables (targets.h).  The summary the target prints goes
 * to /dev/null so that libFuzzer's own report stays readable. */
#include <stdio.h>

#include "targets.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return freopen("/dev/null", "w", stdout) ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return hta_fuzz_analyses(data, size);
}
