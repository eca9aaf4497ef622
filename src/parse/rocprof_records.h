/* parse/rocprof_records.h: what the three rocprofv3 readers share.
 *
 * rocprofv3 (ROCm's profiler, rocprofiler-sdk) writes the same records in
 * three forms: its JSON results (parse/rocprof_json.c), its CSV files
 * (parse/rocprof_csv.c) and the rocpd SQLite database
 * (parse/rocpd_sqlite.c).  Each reader collects them as rp_records, one
 * array per kind, then hands them to hta_rocprof_emit, which builds the
 * trace the Kineto reader would, with Kineto's categories:
 *   kernel dispatch          -> "kernel" on its stream (else its queue)
 *   memory copy              -> "gpu_memcpy", "Memcpy HtoD (Host -> Device)", ...
 *   HIP runtime call         -> "cuda_runtime", the call's name
 *   marker (roctx) range     -> "user_annotation", its message
 *   RCCL API call            -> "cpu_op", the call's name
 * A dispatch or copy is joined to its call by the internal correlation id.
 * RCCL kernels (ncclDevKernel_*) are COMMUNICATION by HTA's name rules.
 * An RCCL call whose record keeps its arguments (rocprofv3's RCCL_API_EXT
 * records: JSON `args`, rocpd's rocpd_arg rows; its CSV has none) carries
 * the collective's metadata as Kineto's record_param_comms op does
 * (model/comm_meta.h): the collective from the call's name
 * (ncclAllReduce -> "allreduce", ...), the dtype (ncclFloat32 or 7 ->
 * "Float", ...), the element count (count; an all-gather's sendcount is
 * its input, a reduce-scatter's recvcount its output) and the
 * communicator.  A communicator's handle is an address in its process,
 * the same on no two ranks, so the group is named by the order of the
 * communicators' first calls on the rank ("rccl0", "rccl1", ...): ranks
 * that first use their communicators in the same order name each alike;
 * the trace cannot tell two disjoint groups numbered alike apart (two
 * tensor-parallel groups), whose instances then match together, as by
 * stream order.  A kernel gets the metadata of the
 * RCCL call its launch ran in (analysis/comm_ops.h); without any,
 * collectives are matched across ranks by their order on each stream. */
#ifndef HTA_ROCPROF_RECORDS_H
#define HTA_ROCPROF_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "parse/trace_builder.h"
#include "util/strtab.h"

/* One record of any kind; names are texts in the reader's own store. */
typedef struct rp_record {
    int64_t start, end;        /* ns */
    int64_t correlation;       /* the internal id, HTA_NO_CORRELATION when none */
    int64_t agent;             /* dispatches and copies: the GPU, -1 unknown */
    int64_t process;           /* -1 unknown */
    int64_t stream;            /* dispatches and copies */
    const char *name;          /* borrowed from the reader */
    int64_t bytes;             /* copies, -1 when unknown */
    /* RCCL calls: their arguments as written (borrowed from the reader),
     * NULL when absent; counts -1 when absent. */
    const char *comm, *dtype;
    int64_t in_count, out_count;
} rp_record;

typedef enum { RP_KERNELS, RP_COPIES, RP_CALLS, RP_MARKERS, RP_RCCL, RP_N_KINDS } rp_kind;

typedef struct rp_records {
    rp_record *items[RP_N_KINDS];
    size_t n[RP_N_KINDS], cap[RP_N_KINDS];
} rp_records;

/* Appends r to its kind's array; -1 when out of memory. */
int hta_rp_push(rp_records *all, rp_kind kind, const rp_record *r);
void hta_rp_free(rp_records *all);

/* Takes an RCCL call's argument `name` = value into r (the arguments
 * that describe its collective; others are ignored), value kept in
 * store.  -1 when out of memory. */
int hta_rp_take_arg(rp_record *r, const char *name, const char *value, hta_strtab *store);

/* Kineto's name of a copy from rocprofv3's direction
 * ("MEMORY_COPY_HOST_TO_DEVICE" -> "Memcpy HtoD (Host -> Device)");
 * unknown directions keep their text after "Memcpy ". */
void hta_rocprof_copy_name(const char *direction, char *out, size_t cap);

/* The reader's kind of an API record by its domain ("HIP_RUNTIME_API",
 * "MARKER_CORE_RANGE_API", "RCCL_API", ...); -1 for domains not carried
 * (HSA, ...). */
int hta_rocprof_api_kind(const char *domain);

/* The rank rocprofv3's output path encodes: template is the path as
 * configured (its placeholders %rank%, %env{VAR}%, $ENV{VAR} or %q{VAR}%
 * with VAR a launcher's rank variable, parse/launcher_env.h), expanded
 * the path it became.  -1 when the template holds no rank or does not
 * match. */
int64_t hta_rocprof_rank_from_path(const char *template_path, const char *expanded);

/* 1 when the dispatches and copies of `process` (-1: of records without
 * one) ran on more than one agent: the process's recorded rank is then no
 * rank of one of them. */
int hta_rp_several_agents(const rp_records *all, int64_t process);

/* Builds the trace from the records (each kind in its array's order);
 * with how->one_device only the dispatches and copies of agent `device`
 * and the calls and markers of its process.  Notes what the form lacks.
 * -1 with err set (naming path) when out of memory. */
int hta_rocprof_emit(const rp_records *all, const char *path, const hta_builder_options *how,
                     hta_trace_builder *b, hta_error *notes, hta_error *err);

#endif
