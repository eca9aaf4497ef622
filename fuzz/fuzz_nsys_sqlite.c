/* fuzz_nsys_sqlite.c: libFuzzer entry point for the Nsight Systems SQLite reader (targets.h). */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return hta_fuzz_nsys_sqlite(data, size);
}
