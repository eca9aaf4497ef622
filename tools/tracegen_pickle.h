/* tracegen_pickle.h: hta-tracegen's pickle writer, for Flight Recorder
 * dumps in the byte forms real ones take.
 *
 * Two styles of the same values:
 *  - torch's C++ pickler (protocol 2, as torch/csrc/distributed/c10d's
 *    pickle_str writes a dump): a dict is EMPTY_DICT MARK ... SETITEMS and
 *    a list EMPTY_LIST MARK ... APPENDS even for one item or none, each
 *    memoised (BINPUT) once complete; strings memoised by value; ints in
 *    the smallest of BININT1, BININT2, BININT, else LONG1 of 8 bytes;
 *  - Python's pickle at protocol 2..5: containers memoised when created,
 *    one item by SETITEM or APPEND, none by nothing; from protocol 4
 *    SHORT_BINUNICODE, MEMOIZE and FRAMEs of about 64 KiB; LONG1 of the
 *    fewest bytes.
 * Values shared by identity (torch's frame dicts) are written once and
 * fetched again with BINGET (tg_pk_get). */
#ifndef TRACEGEN_PICKLE_H
#define TRACEGEN_PICKLE_H

#include <stddef.h>
#include <stdint.h>

/* 0: torch's style; 2..5: Python's at that protocol. */
typedef struct tg_pickle tg_pickle;

tg_pickle *tg_pk_new(int style);
/* Containers: begin with the item count (a dict's pairs), then the items
 * (a dict's keys and values alternating), then end. */
void tg_pk_dict_begin(tg_pickle *p, size_t n);
void tg_pk_dict_end(tg_pickle *p);
void tg_pk_list_begin(tg_pickle *p, size_t n);
void tg_pk_list_end(tg_pickle *p);
/* A 2-tuple: its two values, then this. */
void tg_pk_tuple2(tg_pickle *p);
void tg_pk_str(tg_pickle *p, const char *s);
void tg_pk_int(tg_pickle *p, int64_t v);
void tg_pk_float(tg_pickle *p, double v);
void tg_pk_bool(tg_pickle *p, int v);
void tg_pk_none(tg_pickle *p);
/* The memo index of the value just written (a container after its end),
 * for tg_pk_get. */
uint32_t tg_pk_last(const tg_pickle *p);
void tg_pk_get(tg_pickle *p, uint32_t index);
/* Between values: where Python's pickler may close a frame. */
void tg_pk_commit(tg_pickle *p);
/* STOP, the whole pickle written to path, p freed. */
void tg_pk_finish(tg_pickle *p, const char *path);

#endif
