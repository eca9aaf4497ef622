/* parse/rocpd_sqlite.h: a rocpd database (rocprofv3's default output from
 * ROCm 7, <host>/<pid>_results.db) as one rank's trace.
 *
 * The database holds rocpd schema 3 (ROCm/rocprofiler-sdk,
 * source/share/rocprofiler-sdk-rocpd/rocpd_tables.sql): base tables named
 * with a _<uuid> suffix (rocpd_string_<uuid>, rocpd_info_process_...,
 * rocpd_info_agent_..., rocpd_info_kernel_symbol_...,
 * rocpd_kernel_dispatch_..., rocpd_memory_copy_..., rocpd_region_...,
 * rocpd_event_...) and unsuffixed views over them.  The views changed
 * their columns between releases, so the base tables are read; a database
 * that `rocpd merge` filled from several runs holds one set of tables per
 * uuid, and each is read.  Records map as parse/rocprof_records.h says:
 *   rocpd_kernel_dispatch      -> "kernel": rocpd_info_kernel_symbol's
 *                                 extdata formatted_kernel_name, else its
 *                                 display_name, else kernel_name
 *   rocpd_memory_copy          -> "gpu_memcpy", named by its direction
 *   rocpd_region               -> by its event's category (rocpd_string):
 *                                 HIP runtime calls, markers, RCCL calls
 * joined by rocpd_event.correlation_id.  Each GPU agent with work (with
 * its process) is a rank: discovery lists a database of several as
 * "FILE@device=N", N the agent's row id (parse/device_entry.h).  The rank
 * comes from the launcher's variables in the process's recorded
 * environment or command. */
#ifndef HTA_ROCPD_SQLITE_H
#define HTA_ROCPD_SQLITE_H

#include <stddef.h>

#include "util/error.h"
#include "model/trace.h"
#include "parse/trace_builder.h"

/* 1 when path is an SQLite file holding rocpd tables, or a file named
 * *.db whose content cannot tell (not SQLite, or damaged): its read then
 * fails naming the rocpd form. */
int hta_is_rocpd(const char *path);

/* Reads the database at path into out (initialised by the callee); with
 * how->one_device only agent how->device and its process.  On error out
 * is freed and err names the file and the table. */
int hta_read_rocpd(const char *path, const hta_builder_options *how, hta_trace *out,
                   hta_error *notes, hta_error *err);

/* The GPU agents with kernel dispatches, ascending, up to cap; -1 when
 * the file cannot be opened. */
int hta_rocpd_devices(const char *path, long long *devices, size_t cap, size_t *n);

#endif
