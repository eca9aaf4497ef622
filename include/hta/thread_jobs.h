/* hta/thread_jobs.h: jobs side by side on threads.
 *
 * The parse of one plain file in parts and the analyses of one trace both
 * start n - 1 threads, run the first job on the calling thread and wait.
 * A thread that cannot start costs no job: its job runs on the calling
 * thread once the first is done.  Work of uneven cost (parts of a file,
 * analyses) goes as numbered tasks that the threads take in order as they
 * come free, so that none waits while another has several left. */
#ifndef HTA_THREAD_JOBS_H
#define HTA_THREAD_JOBS_H

#include <stddef.h>

/* Runs job(arg_k) for k in [0, n), arg_k = (char *)first + k * stride
 * (stride 0: every job gets first), and returns when all have finished. */
void hta_run_jobs(void *(*job)(void *), void *first, size_t stride, int n);

/* Runs task(ctx, k) for k in [0, n_tasks) on up to `threads` threads, each
 * taking the next k as it comes free; returns when all have finished. */
void hta_run_tasks(void (*task)(void *ctx, int k), void *ctx, int n_tasks, int threads);

#endif
