/* targets.h: the fuzz targets as plain functions.
 *
 * The libFuzzer entry points (generated, fuzz/harnesses) and the
 * regression replay in the normal test suite (tests/test_fuzz_regressions.c)
 * call the same functions, so a saved reproducer runs through exactly the
 * code that once failed on it.  Each returns 0; a violated invariant aborts. */
#ifndef HTA_FUZZ_TARGETS_H
#define HTA_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

/* Byte 0 is the reader's refill size (1-255 bytes; 0 = its normal buffer),
 * modulo 6 the parser threads (2-7) of a second parse as a file, and its
 * low bit whether a third parse goes without the pre-scan or with its
 * byte-loop classifier; the rest is the JSON.  The result must depend on
 * none of them. */
int hta_fuzz_reader(const uint8_t *data, size_t size);

/* Byte 0 selects options (see targets.c), the rest is the trace file.  The
 * file goes through hta_analyse_file (parse, step filter, rank view, every
 * entry of hta_analyses[]), the timeline binning, the pack/merge of the
 * gather and the root's rank resolution, cross-rank statistics and summary. */
int hta_fuzz_analyses(const uint8_t *data, size_t size);

/* Byte 0 selects options (bit 0 --step-regex, bit 1 each device alone),
 * the rest is an Nsight Systems SQLite export (fuzz/input_targets.c). */
int hta_fuzz_nsys_sqlite(const uint8_t *data, size_t size);

/* Byte 0 selects options (bit 0 --step-regex, bit 1 the kernels in
 * conc_kernel.csv), the rest is a CUPTI CSV folder: its files' texts in
 * the order kernel.csv, cuda_runtime.csv, gpu_memcpy.csv, gpu_memset.csv,
 * cuda_sync.csv, user_annotation.csv, cuda_driver.csv, separated by
 * HTA_FUZZ_CSV_SEPARATOR (fewer parts: fewer files). */
#define HTA_FUZZ_CSV_SEPARATOR "\n=====\n"
int hta_fuzz_cupti_csv(const uint8_t *data, size_t size);

/* Byte 0 selects options (bit 0 --step-regex), the rest is rocprofv3's
 * JSON results (fuzz/input_targets.c). */
int hta_fuzz_rocprof_json(const uint8_t *data, size_t size);

/* The bytes are a Flight Recorder dump, pickle or JSON
 * (fuzz/fr_dump_target.c). */
int hta_fuzz_fr_dump(const uint8_t *data, size_t size);

/* Byte 0 selects options (bit 0 --step-regex, bit 1 each agent alone),
 * the rest is a rocpd SQLite database (fuzz/input_targets.c). */
int hta_fuzz_rocpd(const uint8_t *data, size_t size);

/* Byte 0 selects options (bit 0 --step-regex), the rest is rocprofv3's
 * CSV files: kernel_trace.csv, hip_api_trace.csv, memory_copy_trace.csv,
 * marker_api_trace.csv, rccl_api_trace.csv, separated by
 * HTA_FUZZ_CSV_SEPARATOR (fuzz/input_targets.c). */
int hta_fuzz_rocprof_csv(const uint8_t *data, size_t size);

#endif
