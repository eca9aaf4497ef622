/* parse/pickle.h: the subset of Python's pickle format that PyTorch's
 * Flight Recorder dumps use, read into a tree of values.
 *
 * A pickle is a program for a stack machine; this reads the opcodes that
 * dicts, lists, tuples, strings, integers, floats, booleans and None need,
 * as torch's C++ pickler (protocol 2) and Python's pickle (protocols 2 to
 * 5, with frames and MEMOIZE) write them.  Anything else (classes, globals,
 * persistent ids, protocol 0 text opcodes) is an error naming the byte
 * offset and the opcode: a dump never holds them, and a file that does is
 * not a dump.  The memo shares values by identity, as pickle does, so one
 * value may sit in several containers; every value belongs to the
 * document and is freed with it. */
#ifndef HTA_PICKLE_H
#define HTA_PICKLE_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef enum hta_pvalue_kind {
    HTA_PV_NONE,
    HTA_PV_BOOL,
    HTA_PV_INT,
    HTA_PV_FLOAT,
    HTA_PV_STR,
    HTA_PV_LIST,
    HTA_PV_TUPLE,
    HTA_PV_DICT,
} hta_pvalue_kind;

typedef struct hta_pvalue hta_pvalue;
struct hta_pvalue {
    hta_pvalue_kind kind;
    int64_t i;           /* BOOL, INT */
    double f;            /* FLOAT */
    char *s;             /* STR: UTF-8, NUL-terminated, s_len bytes */
    size_t s_len;
    hta_pvalue **items;  /* LIST, TUPLE: n values; DICT: n keys and values, alternating */
    size_t n, cap;
};

/* Every value of one pickle; root is what STOP returned. */
typedef struct hta_pickle_doc {
    hta_pvalue *root;
    hta_pvalue **all;    /* owned, each value once */
    size_t n_all, cap_all;
} hta_pickle_doc;

/* Reads the pickle in bytes[0, len) into doc.  On error, doc is empty and
 * err says "NAME: byte N: ..." with the opcode where one is at fault. */
int hta_pickle_read(const unsigned char *bytes, size_t len, const char *name,
                    hta_pickle_doc *doc, hta_error *err);

void hta_pickle_doc_free(hta_pickle_doc *doc);

/* Adds a value of `kind` to doc (to build a tree from another format);
 * NULL when out of memory. */
hta_pvalue *hta_pvalue_new(hta_pickle_doc *doc, hta_pvalue_kind kind);

/* Appends v to a LIST, TUPLE or DICT's items; -1 when out of memory. */
int hta_pvalue_push(hta_pvalue *container, hta_pvalue *v);

/* The value of key in a DICT (string keys), NULL when absent or when d is
 * not a dict.  The last one wins, as in Python. */
const hta_pvalue *hta_pdict_get(const hta_pvalue *d, const char *key);

/* "none", "bool", ...: for errors. */
const char *hta_pvalue_kind_name(hta_pvalue_kind kind);

#endif
