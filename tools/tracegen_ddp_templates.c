/* tracegen_ddp_templates.c: see tracegen_ddp_templates.h. */
#include "tracegen_ddp_templates.h"

#define BASE_TIME_NS "1683560000000000000"

const char *const TEMPLATE_SOURCE[TPL_COUNT] = {
    [TPL_HEADER] =
        "{\n"
        "  \"schemaVersion\": 1,\n"
        "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": $d, \"world_size\": $d},\n"
        "  \"deviceProperties\": [\n"
        "    {\n"
        "      \"id\": 0, \"name\": \"NVIDIA A100-SXM4-80GB\", \"totalGlobalMem\": 85051572224,\n"
        "      \"computeMajor\": 8, \"computeMinor\": 0,\n"
        "      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
        "      \"regsPerBlock\": 65536, \"regsPerMultiprocessor\": 65536, \"warpSize\": 32,\n"
        "      \"sharedMemPerBlock\": 49152, \"sharedMemPerMultiprocessor\": 167936,\n"
        "      \"numSms\": 108, \"sharedMemPerBlockOptin\": 166912\n"
        "    }\n"
        "  ],\n"
        "  \"traceEvents\": [\n",
    [TPL_TRAILER] =
        "\n"
        "  ],\n"
        "  \"displayTimeUnit\": \"ms\",\n"
        "  \"baseTimeNanoseconds\": " BASE_TIME_NS "\n"
        "}\n",
    [TPL_SEPARATOR] = ",\n",
    [TPL_ANNOTATION] =
        "  {\n"
        "    \"ph\": \"X\", \"cat\": \"$s\", \"name\": \"$s\", \"pid\": $d, \"tid\": $d,\n"
        "    \"ts\": $d, \"dur\": $d,\n"
        "    \"args\": {\n"
        "      \"External id\": $d\n"
        "    }\n"
        "  }",
    [TPL_CPU_OP] =
        "  {\n"
        "    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"$s\", \"pid\": $d, \"tid\": $d,\n"
        "    \"ts\": $d, \"dur\": $d,\n"
        "    \"args\": {\n"
        "      \"External id\": $d,\"Sequence number\": $d, \"Fwd thread id\": 0, "
        "\"Input Dims\": $s, \"Input type\": $s\n"
        "    }\n"
        "  }",
    [TPL_COMM_OP] =
        "  {\n"
        "    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"$s\", \"pid\": $d, \"tid\": $d,\n"
        "    \"ts\": $d, \"dur\": $d,\n"
        "    \"args\": {\n"
        "      \"External id\": $d,\"Sequence number\": $d, \"Fwd thread id\": 0, "
        "\"Collective name\": \"allreduce\", \"In msg nelems\": $d, \"Out msg nelems\": $d, "
        "\"Group size\": $d, \"dtype\": \"Float\", \"Process Group Name\": \"0\", "
        "\"Process Group Description\": \"default_pg\", \"Process Group Ranks\": \"$s\", "
        "\"Input Dims\": $s, \"Input type\": $s\n"
        "    }\n"
        "  }",
    [TPL_RUNTIME] =
        "  {\n"
        "    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"$s\", "
        "\"pid\": $d, \"tid\": $d,\n"
        "    \"ts\": $d, \"dur\": $d,\n"
        "    \"args\": {\n"
        "      \"External id\": $d,\n"
        "      \"cbid\": $d, \"correlation\": $d\n"
        "    }\n"
        "  }",
    [TPL_FLOW_START] =
        "  {\n"
        "    \"ph\": \"s\", \"id\": $d, \"pid\": $d, \"tid\": $d, \"ts\": $d,\n"
        "    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n"
        "  }",
    [TPL_FLOW_FINISH] =
        "  {\n"
        "    \"ph\": \"f\", \"id\": $d, \"pid\": 0, \"tid\": $d, \"ts\": $d,\n"
        "    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n"
        "  }",
    [TPL_KERNEL] =
        "  {\n"
        "    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"$s\", \"pid\": 0, \"tid\": $d,\n"
        "    \"ts\": $d, \"dur\": $d,\n"
        "    \"args\": {\n"
        "      \"queued\": 0, \"device\": 0, \"context\": 1,\n"
        "      \"stream\": $d, \"correlation\": $d, \"registers per thread\": $d,\n"
        "      \"shared memory\": $d, \"blocks per SM\": $s,\n"
        "      \"warps per SM\": $s,\n"
        "      \"grid\": $s, \"block\": $s,\n"
        "      \"est. achieved occupancy %\": $d\n"
        "    }\n"
        "  }",
    [TPL_NCCL_KERNEL] =
        "  {\n"
        "    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"$s\", \"pid\": 0, \"tid\": $d,\n"
        "    \"ts\": $d, \"dur\": $d,\n"
        "    \"args\": {\n"
        "      \"queued\": 0, \"device\": 0, \"context\": 1,\n"
        "      \"stream\": $d, \"correlation\": $d, \"registers per thread\": $d,\n"
        "      \"shared memory\": $d, \"blocks per SM\": $s,\n"
        "      \"warps per SM\": $s,\n"
        "      \"grid\": $s, \"block\": $s,\n"
        "      \"est. achieved occupancy %\": $d,\n"
        "      \"Collective name\": \"allreduce\", \"In msg nelems\": $d, \"Out msg nelems\": $d, "
        "\"Group size\": $d, \"dtype\": \"Float\", \"Process Group Name\": \"0\", "
        "\"Process Group Description\": \"default_pg\", \"Process Group Ranks\": \"$s\"\n"
        "    }\n"
        "  }",
    [TPL_MEMORY] =
        "  {\n"
        "    \"ph\": \"X\", \"cat\": \"$s\", \"name\": \"$s\", \"pid\": 0, \"tid\": $d,\n"
        "    \"ts\": $d, \"dur\": $d,\n"
        "    \"args\": {\n"
        "      \"device\": 0, \"context\": 1,\n"
        "      \"stream\": $d, \"correlation\": $d,\n"
        "      \"bytes\": $d, \"memory bandwidth (GB/s)\": $f\n"
        "    }\n"
        "  }",
    [TPL_META_STR] =
        "  {\n"
        "    \"name\": \"$s\", \"ph\": \"M\", \"ts\": $d, \"pid\": $d, \"tid\": $d,\n"
        "    \"args\": {\n"
        "      \"$s\": \"$s\"\n"
        "    }\n"
        "  }",
    [TPL_META_INT] =
        "  {\n"
        "    \"name\": \"$s\", \"ph\": \"M\", \"ts\": $d, \"pid\": $d, \"tid\": $d,\n"
        "    \"args\": {\n"
        "      \"$s\": $d\n"
        "    }\n"
        "  }",
    [TPL_TRACE_SPAN] =
        "  {\n"
        "    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": $d, \"dur\": $d,\n"
        "    \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n"
        "    \"name\": \"PyTorch Profiler (0)\",\n"
        "    \"args\": {\n"
        "      \"Op count\": 0\n"
        "    }\n"
        "  }",
    [TPL_ITERATION_START] =
        "  {\n"
        "    \"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\",\n"
        "    \"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\", \"ts\": $d\n"
        "  }",
    [TPL_WINDOW_END] =
        "  {\n"
        "    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n"
        "    \"pid\": \"\", \"tid\": \"\", \"ts\": $d\n"
        "  }",
};
