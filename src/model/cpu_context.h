/* model/cpu_context.h: what a CPU event's context id stands for.
 *
 * The reader interns each CPU event's pid, tid, Input Dims and Input type
 * together as one key (model/trace.h), so that the record needs no room for
 * them.  The analyses that follow CPU threads decode the few distinct keys
 * once: each context's thread (a dense index over the distinct (pid, tid)
 * pairs, in first-seen order), its tid as a number when it is one (a GPU
 * annotation's tid is its stream), and its argument texts. */
#ifndef HTA_CPU_CONTEXT_H
#define HTA_CPU_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "model/trace.h"

typedef struct hta_cpu_context {
    uint32_t thread;           /* dense (pid, tid) index */
    int64_t tid;               /* -1 when not a whole number */
    const char *input_dims;    /* "" when absent; owned by the set */
    const char *input_type;
} hta_cpu_context;

typedef struct hta_cpu_contexts {
    hta_cpu_context *of;       /* owned, by context id */
    size_t n;
    uint32_t n_threads;
    char *text;                /* owned: the keys, fields NUL-separated */
} hta_cpu_contexts;

/* -1 when out of memory. */
int hta_cpu_contexts_build(hta_cpu_contexts *c, const hta_trace *t);
void hta_cpu_contexts_free(hta_cpu_contexts *c);

static inline const hta_cpu_context *hta_cpu_context_of(const hta_cpu_contexts *c,
                                                        const hta_event *e)
{
    return &c->of[hta_event_cpu_context(e)];
}

#endif
