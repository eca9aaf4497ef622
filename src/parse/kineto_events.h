/* parse/kineto_events.h: the Kineto events of a trace, decoded from the
 * lexer's position into the trace model (private to parse/; the top level
 * is reader.c).
 *
 * The decoder visits the events the walk reaches: the lexer
 * (parse/json_lexer.h) knows only JSON, and everything the decoder keeps
 * from one event to the next, or across the buffer's refills, is here.
 * The texts an event keeps until it is stored point into the lexer's
 * buffer; the decoder registers them with the lexer (lx->kept), which
 * copies them before a refill overwrites them. */
#ifndef HTA_KINETO_EVENTS_H
#define HTA_KINETO_EVENTS_H

#include "model/trace.h"
#include "parse/json_lexer.h"
#include "util/buf.h"
#include "util/strtab.h"

/* The collective metadata among an event's args (model/comm_meta.h): the
 * strings, in the decoder's comm_text buffers, by index. */
enum {
    COMM_COLLECTIVE, COMM_DTYPE, COMM_PG_NAME, COMM_PG_DESC, COMM_PG_RANKS, COMM_IN_SPLIT,
    COMM_OUT_SPLIT, COMM_N_STRINGS
};
/* ... and its numbers, in the decoder's comm_fields. */
enum { COMM_EXTERNAL_ID, COMM_IN_NELEMS, COMM_OUT_NELEMS, COMM_GROUP_SIZE, COMM_SEQ, COMM_PEER,
       COMM_N_NUMBERS };

/* What of the collective metadata the current event had: in the decoder,
 * not the per-event scratch, so that an event without any costs one
 * store. */
typedef struct comm_fields {
    int64_t number[COMM_N_NUMBERS];
    unsigned strings;          /* bit k: comm_text[k] was read for this event */
    unsigned numbers;          /* bit k: number[k] was read */
} comm_fields;

#define KINETO_KEPT_TEXTS 8

/* The decoder's per-file state. */
typedef struct kineto_decoder {
    hta_trace *trace;          /* where events go; not owned */
    lx_text name, cat, ph;
    lx_text pid, tid;          /* as written: a number's text or a string's */
    lx_text input_dims, input_type, concrete_inputs; /* JSON text as written */
    lx_text *kept[KINETO_KEPT_TEXTS]; /* the texts above, for the lexer's refills */
    hta_buf context_key, last_context_key; /* see cpu_context_of */
    uint32_t last_context;
    hta_buf op_contexts;       /* per name id: an op_context, see cpu_context_of */
    hta_buf kernel_types;      /* per name id: hta_kernel_type + 1, 0 = not yet known */
    hta_strtab_memo names, categories; /* recent ids of the trace's names, categories */
    hta_buf comm_text[COMM_N_STRINGS]; /* collective metadata strings (COMM_*) */
    comm_fields comm;
} kineto_decoder;

/* Starts a decoder of events into t, read from lx: its kept texts are
 * registered with lx, so the decoder must stay where it is while lx
 * reads.  kineto_decoder_free frees what it holds. */
void kineto_decoder_init(kineto_decoder *d, lexer *lx, hta_trace *t);
void kineto_decoder_free(kineto_decoder *d);

/* Decodes the event object at the current token; keeps it when it is a
 * complete event (or a memory sample). */
int kineto_read_event(lexer *lx, kineto_decoder *d);

/* Reads the event array whose '[' is current, or up to the event at or
 * past lx->stop_at (lx->stopped is then set). */
int kineto_read_event_array(lexer *lx, kineto_decoder *d);

#endif
