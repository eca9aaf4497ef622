/* parse/json_values.h: a small JSON document as a tree of pickle values.
 *
 * For inputs whose JSON and pickle forms hold the same content (Flight
 * Recorder dumps), one reader of the tree serves both.  Objects become
 * dicts, arrays lists; a number without fraction or exponent that fits an
 * int64 stays an exact integer (nanosecond times exceed a double's 53
 * bits), others are floats.  Nesting is bounded (HTA_JSON_VALUES_DEPTH) so
 * the recursion cannot exhaust the stack. */
#ifndef HTA_JSON_VALUES_H
#define HTA_JSON_VALUES_H

#include <stddef.h>

#include "parse/pickle.h"

#define HTA_JSON_VALUES_DEPTH 64

/* Reads the JSON text in bytes[0, len) into doc; on error doc is empty and
 * err says "NAME: byte N: what". */
int hta_json_values_read(const unsigned char *bytes, size_t len, const char *name,
                         hta_pickle_doc *doc, hta_error *err);

#endif
