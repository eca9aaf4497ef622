/* fuzz_fr_dump.c: libFuzzer entry point for the Flight Recorder dump reader (targets.h). */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return hta_fuzz_fr_dump(data, size);
}
