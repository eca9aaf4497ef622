/* test_model.c: interval arithmetic (model/interval.h) and kernel
 * classification (model/classify.h) on inputs whose answers are known by
 * construction. */
#include <stdio.h>

#include "model/classify.h"
#include "model/interval.h"
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

int main(int argc, char **argv)
{
    test_interval_union_and_overlap();
    test_kernel_types();
    (void)argc;
    (void)argv;
    return unit_finish();
}
