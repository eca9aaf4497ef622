/* thread_jobs.c: see hta/thread_jobs.h. */
#include "hta/thread_jobs.h"

#include <pthread.h>

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
