/* model/cpu_context.h: what a CPU event's context id stands for.
 *
 * The reader interns each CPU event's pid, tid, Input Dims, Input type
 * and, for the ops whose work depends on them (model/op_flops.h), Concrete
 * Inputs together as one key (model/trace.h), so that the record needs no room for
 * them.  The analyses that follow CPU threads decode the few distinct keys
 * once: each context's thread (a dense index over the distinct (pid, tid)
 * pairs, in first-seen order), its tid as a number when it is one (a GPU
 * annotation's tid is its stream), and its argument texts.  A reader that
 * records no contexts (the SQLite and CSV readers) leaves every CPU event
 * at an id the set does not have: those all share one unknown context,
 * on a thread of its own, so that no id is ever out of bounds. */
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
    const char *concrete_inputs; /* as written; "" when absent or not kept */
} hta_cpu_context;

typedef struct hta_cpu_contexts {
    hta_cpu_context *of;       /* owned, by context id; of[n] is the unknown one */
    size_t n;
    uint32_t n_threads;        /* the unknown context's thread included */
    char *text;                /* owned: the keys, fields NUL-separated */
} hta_cpu_contexts;

/* -1 when out of memory. */
int hta_cpu_contexts_build(hta_cpu_contexts *c, const hta_trace *t);
void hta_cpu_contexts_free(hta_cpu_contexts *c);

/* A CPU event's index in c->of: its context id, or n for the unknown one. */
static inline size_t hta_cpu_context_index(const hta_cpu_contexts *c, const hta_event *e)
{
    uint32_t id = hta_event_cpu_context(e);
    return id < c->n ? id : c->n;
}

static inline const hta_cpu_context *hta_cpu_context_of(const hta_cpu_contexts *c,
                                                        const hta_event *e)
{
    return &c->of[hta_cpu_context_index(c, e)];
}

#endif
