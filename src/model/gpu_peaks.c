/* gpu_peaks.c: the built-in peak table and the --gpu-spec reader
 * (model/gpu_peaks.h).
 *
 * Dense TFLOPS of the matrix units (tensor / matrix cores) and HBM
 * bandwidth in TB/s, from the vendors' datasheets.  Where a datasheet
 * quotes "with sparsity" only, the dense value is half of it.  A device
 * matches an entry when its name contains every pattern of the entry
 * (case-insensitive); the first match wins, so variants come before their
 * family.  An MI250X shows PyTorch two devices, one per GCD: its entry
 * holds one GCD's half of the module's figures. */
#include "model/gpu_peaks.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct peak_entry {
    const char *name;
    const char *patterns[3];
    double fp8, bf16, fp16, tf32, fp32, fp64, int8, memory_tbps;
} peak_entry;

#define NONE NAN

static const peak_entry TABLE[] = {
    /* NVIDIA A100 datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4):
     * BF16/FP16 312, TF32 156, FP32 19.5, FP64 tensor 19.5, INT8 624;
     * 40GB 1555 GB/s, 80GB SXM 2039, 80GB PCIe 1935. */
    {"A100 SXM4 40GB", {"A100", "SXM4-40GB"}, NONE, 312, 312, 156, 19.5, 19.5, 624, 1.555},
    {"A100 PCIe 80GB", {"A100", "PCIE", "80GB"}, NONE, 312, 312, 156, 19.5, 19.5, 624, 1.935},
    {"A100 PCIe 40GB", {"A100", "PCIE"}, NONE, 312, 312, 156, 19.5, 19.5, 624, 1.555},
    {"A100 SXM4 80GB", {"A100"}, NONE, 312, 312, 156, 19.5, 19.5, 624, 2.039},
    /* NVIDIA H100 datasheet (nvidia-h100-datasheet-2430615), sparse
     * figures halved: SXM FP8 1979, BF16/FP16 989.5, TF32 494.5, FP32 67,
     * FP64 tensor 67, INT8 1979, 3.35 TB/s; PCIe FP8 1513, BF16 756,
     * TF32 378, FP32 51, FP64 51, INT8 1513, 2.0 TB/s; NVL FP8 1670.5,
     * BF16 835.5, TF32 417.5, FP32 60, FP64 60, INT8 1670.5, 3.9 TB/s. */
    {"H100 PCIe", {"H100", "PCIE"}, 1513, 756, 756, 378, 51, 51, 1513, 2.0},
    {"H100 NVL", {"H100", "NVL"}, 1670.5, 835.5, 835.5, 417.5, 60, 60, 1670.5, 3.9},
    {"H100 SXM", {"H100"}, 1979, 989.5, 989.5, 494.5, 67, 67, 1979, 3.35},
    /* NVIDIA H200 datasheet (hpc-datasheet-sc23-h200): H100 SXM's compute,
     * 4.8 TB/s. */
    {"H200", {"H200"}, 1979, 989.5, 989.5, 494.5, 67, 67, 1979, 4.8},
    /* NVIDIA DGX B200 datasheet, per GPU (the 8-GPU system's sparse
     * figures / 8 / 2): FP8 4500, BF16/FP16 2250, TF32 1125, FP32 75,
     * FP64 37, INT8 4500, 8 TB/s. */
    {"B200", {"B200"}, 4500, 2250, 2250, 1125, 75, 37, 4500, 8.0},
    /* AMD Instinct MI250X product page, per GCD (half the module):
     * BF16/FP16 191.5, FP32 matrix 47.9, FP64 matrix 47.9, INT8 191.5,
     * 1.6384 TB/s; no FP8. */
    {"MI250X (one GCD)", {"MI250X"}, NONE, 191.5, 191.5, NONE, 47.9, 47.9, 191.5, 1.6384},
    /* AMD Instinct MI300X data sheet: FP8 2614.9, BF16/FP16 1307.4,
     * TF32 653.7, FP32 matrix 163.4, FP64 matrix 163.4, INT8 2614.9,
     * 5.3 TB/s. */
    {"MI300X", {"MI300X"}, 2614.9, 1307.4, 1307.4, 653.7, 163.4, 163.4, 2614.9, 5.3},
    /* AMD Instinct MI325X data sheet: MI300X's compute, 6.0 TB/s. */
    {"MI325X", {"MI325X"}, 2614.9, 1307.4, 1307.4, 653.7, 163.4, 163.4, 2614.9, 6.0},
};

void hta_gpu_peaks_unknown(hta_gpu_peaks *p)
{
    p->name[0] = '\0';
    for (int d = 0; d < HTA_N_DTYPES; d++)
        p->tflops[d] = NAN;
    p->memory_tbps = NAN;
}

static int matches(const peak_entry *e, const char *device)
{
    for (int i = 0; i < 3 && e->patterns[i]; i++) {
        size_t n = strlen(e->patterns[i]);
        const char *p = device;
        while (*p && strncasecmp(p, e->patterns[i], n) != 0)
            p++;
        if (!*p)
            return 0;
    }
    return 1;
}

int hta_gpu_peaks_builtin(const char *device, hta_gpu_peaks *p)
{
    hta_gpu_peaks_unknown(p);
    for (size_t i = 0; device && *device && i < sizeof TABLE / sizeof *TABLE; i++) {
        const peak_entry *e = &TABLE[i];
        if (!matches(e, device))
            continue;
        snprintf(p->name, sizeof p->name, "%s", e->name);
        p->tflops[HTA_DTYPE_FP8] = e->fp8;
        p->tflops[HTA_DTYPE_BF16] = e->bf16;
        p->tflops[HTA_DTYPE_FP16] = e->fp16;
        p->tflops[HTA_DTYPE_TF32] = e->tf32;
        p->tflops[HTA_DTYPE_FP32] = e->fp32;
        p->tflops[HTA_DTYPE_FP64] = e->fp64;
        p->tflops[HTA_DTYPE_INT8] = e->int8;
        p->memory_tbps = e->memory_tbps;
        return 0;
    }
    return -1;
}

static char *read_whole_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = NULL;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (size >= 0 && size < (1L << 24) && fseek(f, 0, SEEK_SET) == 0 &&
        (text = malloc((size_t)size + 1)) != NULL) {
        if (fread(text, 1, (size_t)size, f) == (size_t)size) {
            text[size] = '\0';
        } else {
            free(text);
            text = NULL;
        }
    }
    fclose(f);
    return text;
}

/* max_achievable_tflops's matrix_<dtype> members; how many were numbers. */
static int read_rates(const cJSON *rates, hta_gpu_peaks *p)
{
    int found = 0;
    for (int d = HTA_DTYPE_UNKNOWN + 1; d < HTA_N_DTYPES; d++) {
        char key[32];
        snprintf(key, sizeof key, "matrix_%s", hta_dtype_name((hta_dtype)d));
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(rates, key);
        if (cJSON_IsNumber(v) && v->valuedouble > 0) {
            p->tflops[d] = v->valuedouble;
            found++;
        }
    }
    return found;
}

int hta_gpu_spec_read(const char *path, hta_gpu_peaks *p, hta_error *err)
{
    hta_gpu_peaks_unknown(p);
    char *text = read_whole_file(path);
    if (!text)
        return hta_fail(err, "%s: cannot read the GPU spec", path);
    cJSON *root = cJSON_Parse(text);
    free(text);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return hta_fail(err, "%s: not a JSON object (TraceLens's GPU architecture format)", path);
    }
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
    const cJSON *bw = cJSON_GetObjectItemCaseSensitive(root, "mem_bw_gbps");
    snprintf(p->name, sizeof p->name, "%s", cJSON_IsString(name) ? name->valuestring : path);
    if (cJSON_IsNumber(bw) && bw->valuedouble > 0)
        p->memory_tbps = bw->valuedouble / 1000.0;
    int rates = read_rates(cJSON_GetObjectItemCaseSensitive(root, "max_achievable_tflops"), p);
    cJSON_Delete(root);
    if (rates == 0 && !(p->memory_tbps > 0))
        return hta_fail(err, "%s: no max_achievable_tflops.matrix_* rate nor mem_bw_gbps", path);
    return 0;
}
