/* parse/kineto_events.h: the Kineto events of a trace, decoded from the
 * lexer's position into the trace model (private to parse/; the top level
 * is reader.c). */
#ifndef HTA_KINETO_EVENTS_H
#define HTA_KINETO_EVENTS_H

#include "model/trace.h"
#include "parse/json_lexer.h"

/* Decodes the event object at the current token; keeps it when it is a
 * complete event (or a memory sample). */
int kineto_read_event(lexer *lx, hta_trace *t);

/* Reads the event array whose '[' is current, or up to the event at or
 * past lx->stop_at (lx->stopped is then set). */
int kineto_read_event_array(lexer *lx, hta_trace *t);

/* Frees the decoder's per-file state in the lexer. */
void kineto_events_free(lexer *lx);

#endif
