/* util/thread_jobs.h: numbered tasks shared out among threads.
 *
 * The parse of one plain file in parts, the merge of those parts, the rank
 * view's two halves and the analyses of one trace are tasks of uneven
 * cost; the threads take them in order as they come free, so that none
 * waits while another has several left.  The calling thread is one of
 * them; a thread that cannot start costs no task, its share falls to the
 * others. */
#ifndef HTA_THREAD_JOBS_H
#define HTA_THREAD_JOBS_H

/* Runs task(ctx, k) for k in [0, n_tasks) on up to `threads` threads, each
 * taking the next k as it comes free; returns when all have finished. */
void hta_run_tasks(void (*task)(void *ctx, int k), void *ctx, int n_tasks, int threads);

#endif
