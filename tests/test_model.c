/* test_model.c: interval arithmetic (model/interval.h) and kernel
 * classification (model/classify.h) on inputs whose answers are known by
 * construction. */
#include <stdio.h>

#include "model/classify.h"
#include "model/interval.h"
#include "util/corrmap.h"
#include "unit.h"

static void test_interval_union_and_overlap(void)
{
    hta_interval a[] = {{10, 20}, {0, 5}, {5, 7}, {15, 30}, {40, 41}};
    size_t n = hta_intervals_union(a, 5);
    CHECK(n == 3, "touching intervals merge: %zu", n);
    CHECK(a[0].start == 0 && a[0].end == 7 && a[1].start == 10 && a[1].end == 30, "merged");
    CHECK(hta_intervals_length(a, n) == 7 + 20 + 1, "length");
    hta_interval b[] = {{6, 12}, {29, 45}};
    CHECK(hta_intervals_overlap(a, n, b, 2) == 1 + 2 + 1 + 1, "overlap %lld",
          (long long)hta_intervals_overlap(a, n, b, 2));
}

static void test_kernel_types(void)
{
    CHECK(hta_classify_kernel("ncclDevKernel_AllReduce_Sum_f32") == HTA_KT_COMMUNICATION, "nccl");
    CHECK(hta_classify_kernel("void foo<ncclKernel_x>") == HTA_KT_COMMUNICATION, "ncclKernel");
    CHECK(hta_classify_kernel("Memcpy HtoD (Pinned -> Device)") == HTA_KT_MEMORY, "memcpy");
    CHECK(hta_classify_kernel("Memset (Device)") == HTA_KT_MEMORY, "memset");
    CHECK(hta_classify_kernel("ampere_sgemm_128x64_tn") == HTA_KT_COMPUTATION, "gemm");
    CHECK(hta_classify_kernel("Context Sync") == HTA_KT_OTHER, "sync");
    CHECK(hta_classify_kernel("cudaLaunchKernel") == HTA_KT_OTHER, "launch");
    CHECK(hta_classify_kernel("void copyMemcpyKernel") == HTA_KT_OTHER, "contains Memcpy");
}

/* Both layouts of the correlation map: the first value stays, a later
 * put replaces it, and a removed value reads as absent while the other
 * keys (and, hashed, the probe chains through the removed slot) stay. */
static void test_corrmap_layouts(void)
{
    /* Dense keys take the direct array; keys 2^33 apart the hash. */
    const int64_t spacing[2] = {1, 1LL << 33};
    for (int k = 0; k < 2; k++) {
        hta_corrmap m;
        CHECK(hta_corrmap_init(&m, 100, 0, 99 * spacing[k]) == 0, "init %d", k);
        CHECK((m.direct != NULL) == (k == 0), "layout %d", k);
        for (int64_t i = 0; i < 100; i++)
            CHECK(hta_corrmap_put_first(&m, i * spacing[k], (uint32_t)(i % 3)), "put %d", k);
        CHECK(!hta_corrmap_put_first(&m, 5 * spacing[k], 9), "first value kept %d", k);
        hta_corrmap_put(&m, 4 * spacing[k], 7);
        hta_corrmap_remove_value(&m, 1);
        int right = 1;
        for (int64_t i = 0; i < 100; i++) {
            uint32_t v = UINT32_MAX;
            int present = hta_corrmap_get(&m, i * spacing[k], &v);
            uint32_t want = i == 4 ? 7 : (uint32_t)(i % 3);
            right &= want == 1 ? !present : present && v == want;
        }
        CHECK(right, "values after put and removal %d", k);
        CHECK(hta_corrmap_put_first(&m, 1 * spacing[k], 5), "a removed key goes in again %d", k);
        uint32_t v = 0;
        CHECK(hta_corrmap_get(&m, 1 * spacing[k], &v) && v == 5, "re-added value %d", k);
        CHECK(!hta_corrmap_get(&m, 100 * spacing[k] + 1, &v), "absent key %d", k);
        hta_corrmap_free(&m);
    }
}

int main(int argc, char **argv)
{
    test_interval_union_and_overlap();
    test_kernel_types();
    test_corrmap_layouts();
    (void)argc;
    (void)argv;
    return unit_finish();
}
