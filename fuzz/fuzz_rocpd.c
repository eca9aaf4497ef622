/* fuzz_rocpd.c: libFuzzer entry point for the rocpd SQLite reader (targets.h). */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return hta_fuzz_rocpd(data, size);
}
