/* thread_jobs.c: see util/thread_jobs.h. */
#include "util/thread_jobs.h"

#include <pthread.h>
#include <stdatomic.h>

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
    int n = threads < n_tasks ? threads : n_tasks;
    if (n < 1)
        n = 1;                 /* the calling thread, which runs them all */
    pthread_t helpers[n];
    int started[n];
    for (int k = 1; k < n; k++)
        started[k] = pthread_create(&helpers[k], NULL, take_tasks, &q) == 0;
    take_tasks(&q);
    for (int k = 1; k < n; k++)
        if (started[k])
            pthread_join(helpers[k], NULL);
}
