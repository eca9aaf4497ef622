/* model/gpu_peaks.h: what a GPU can do at most: dense matrix TFLOPS per
 * element type and memory bandwidth, the roofs of the roofline.
 *
 * A built-in table (gpu_peaks.c, each value with its datasheet) knows the
 * data-centre GPUs by the name the trace's deviceProperties gives them;
 * --gpu-spec FILE reads TraceLens's architecture JSON ({"name",
 * "mem_bw_gbps", "max_achievable_tflops": {"matrix_bf16": ...}}) for any
 * other GPU, or for measured maximum-achievable rates instead of the
 * datasheet's.  Peaks are dense: datasheets quote 2:4-sparsity figures
 * twice as high, which no dense GEMM reaches. */
#ifndef HTA_GPU_PEAKS_H
#define HTA_GPU_PEAKS_H

#include "model/op_flops.h"
#include "util/error.h"

typedef struct hta_gpu_peaks {
    char name[96];             /* the table's or the spec's name; "" when unknown */
    double tflops[HTA_N_DTYPES]; /* dense matrix peaks; NaN when not known */
    double memory_tbps;        /* TB/s; NaN when not known */
} hta_gpu_peaks;

/* Peaks all NaN, name "". */
void hta_gpu_peaks_unknown(hta_gpu_peaks *p);
/* The built-in peaks of a device name (case-insensitive match of the
 * table's patterns): 0, or -1 with *p unknown when the table lacks it. */
int hta_gpu_peaks_builtin(const char *device_name, hta_gpu_peaks *p);
/* Reads a TraceLens architecture JSON file; -1 with one line naming the
 * file in err when it cannot be read or holds no rate. */
int hta_gpu_spec_read(const char *path, hta_gpu_peaks *p, hta_error *err);

#endif
