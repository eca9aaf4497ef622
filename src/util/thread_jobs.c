/* thread_jobs.c: see hta/thread_jobs.h. */
#include "hta/thread_jobs.h"

#include <pthread.h>
#include <stdatomic.h>

void hta_run_jobs(void *(*job)(void *), void *first, size_t stride, int n)
{
    if (n < 1)
        return;
    pthread_t threads[n];
    int started[n];
    for (int k = 1; k < n; k++)
        started[k] =
            pthread_create(&threads[k], NULL, job, (char *)first + (size_t)k * stride) == 0;
    job(first);
    for (int k = 1; k < n; k++) {
        if (started[k])
            pthread_join(threads[k], NULL);
        else
            job((char *)first + (size_t)k * stride);
    }
}

typedef struct task_queue {
    void (*task)(void *ctx, int k);
    void *ctx;
    int n_tasks;
    atomic_int next;
} task_queue;

static void *take_tasks(void *arg)
{
    task_queue *q = arg;
    for (int k; (k = atomic_fetch_add(&q->next, 1)) < q->n_tasks;)
        q->task(q->ctx, k);
    return NULL;
}

void hta_run_tasks(void (*task)(void *ctx, int k), void *ctx, int n_tasks, int threads)
{
    task_queue q = {.task = task, .ctx = ctx, .n_tasks = n_tasks};
    atomic_init(&q.next, 0);
    hta_run_jobs(take_tasks, &q, 0, threads < n_tasks ? threads : n_tasks);
}
