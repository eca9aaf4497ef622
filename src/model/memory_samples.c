/* memory_samples.c: the [memory] sample array (see model/memory_samples.h). */
#include "model/memory_samples.h"

#include <stdlib.h>
#include <string.h>

void hta_memory_samples_free(hta_memory_samples *m)
{
    free(m->of);
    memset(m, 0, sizeof *m);
}

static int make_room(hta_memory_samples *m, size_t more)
{
    if (m->n + more <= m->cap)
        return 0;
    size_t cap = m->cap ? m->cap : 256;
    while (cap < m->n + more)
        cap *= 2;
    hta_memory_sample *grown = realloc(m->of, cap * sizeof *grown);
    if (!grown)
        return -1;
    m->of = grown;
    m->cap = cap;
    return 0;
}

int hta_memory_samples_push(hta_memory_samples *m, hta_memory_sample s)
{
    if (make_room(m, 1))
        return -1;
    m->of[m->n++] = s;
    return 0;
}

int hta_memory_samples_append(hta_memory_samples *into, const hta_memory_samples *from)
{
    if (from->n == 0)
        return 0;
    if (make_room(into, from->n))
        return -1;
    memcpy(into->of + into->n, from->of, from->n * sizeof *from->of);
    into->n += from->n;
    return 0;
}
