/* run/discover.h: which trace files a run reads, and which process reads
 * each (the first two stages of run/pipeline.c). */
#ifndef HTA_DISCOVER_H
#define HTA_DISCOVER_H

#include <stddef.h>
#include <stdint.h>

#include "run/file_list.h"
#include "settings/settings.h"
#include "util/error.h"

/* Lists the trace files named by the inputs (directories are scanned for
 * *.json, *.json.gz, *.sqlite and CUPTI CSV folders, recursively with
 * opt->read.recursive; --input-format narrows it to one form), an Nsight
 * export holding several GPUs as one entry per GPU (EXPORT@device=N)
 * unless opt->read.merge_devices.  Fails with a usage-class error when an
 * input does not exist or nothing is found. */
int hta_discover(const hta_settings *opt, hta_file_list *out, hta_error *err);

/* Assigns files to processes, largest first to the least loaded process, so
 * that every process computes the same assignment from the same list.
 * owner[i] receives the process of file i. */
int hta_assign(const hta_file_list *list, int n_processes, int *owner);

#endif
