/* hta/thread_jobs.h: one job per thread, side by side.
 *
 * The parse of one plain file in parts and the analyses of one trace both
 * start n - 1 threads, run the first job on the calling thread and wait.
 * A thread that cannot start costs no job: its job runs on the calling
 * thread once the first is done. */
#ifndef HTA_THREAD_JOBS_H
#define HTA_THREAD_JOBS_H

#include <stddef.h>

/* Runs job(arg_k) for k in [0, n), arg_k = (char *)first + k * stride
 * (stride 0: every job gets first), and returns when all have finished. */
void hta_run_jobs(void *(*job)(void *), void *first, size_t stride, int n);

#endif
