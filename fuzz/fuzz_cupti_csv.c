/* fuzz_cupti_csv.c: libFuzzer entry point for the CUPTI CSV reader (targets.h). */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return hta_fuzz_cupti_csv(data, size);
}
