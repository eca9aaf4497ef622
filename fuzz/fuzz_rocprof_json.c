/* fuzz_rocprof_json.c: libFuzzer entry point for the rocprofv3 JSON reader (targets.h). */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return hta_fuzz_rocprof_json(data, size);
}
