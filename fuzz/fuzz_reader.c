/* fuzz_reader.c: libFuzzer entry point for the trace reader (targets.h). */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return hta_fuzz_reader(data, size);
}
