/* parse/json_scan.h: a structural pre-scan of 64-byte blocks (simdjson's
 * first stage) and the one skip it proves safe: the members of an event
 * that nothing reads (private to parse/).
 *
 * A block's bytes become bit masks, one bit per byte: quotes not escaped
 * (the odd-backslash-run rule, carried from block to block), the bytes
 * inside strings (a prefix XOR of those quotes, by carry-less multiply),
 * and the byte classes the JSON between strings is made of.  Three
 * classifiers give the same masks: a byte loop (the reference), AVX2 and
 * AVX-512BW, chosen at run time by what the CPU has.
 *
 * The skip (js_skipper) walks those masks over the rest of an event
 * whose `ph` says nothing reads it (a flow event, say) and finds its
 * closing brace with every member checked by bit arithmetic, not byte by
 * byte.  It answers only when the member-by-member parse would certainly
 * reach the same brace with nothing to report: every member is a plain
 * key and a string or an unsigned number, no backslash anywhere,
 * no nested value, no second "ph", all inside the buffer.  Anything else
 * (NULL) leaves the event to that parse, which stays the reference; so
 * the skip starts at a position the lexer knows is outside any string and
 * never carries state across a refill. */
#ifndef HTA_JSON_SCAN_H
#define HTA_JSON_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* Which classifier a lexer uses; JS_SCAN_OFF parses member by member. */
typedef enum js_scan_level {
    JS_SCAN_BEST,              /* AVX-512BW, else AVX2, else no skip (the byte
                                  loop's classifier) */
    JS_SCAN_AVX2,              /* AVX2 when the CPU has it, else as BEST */
    JS_SCAN_PORTABLE,          /* the byte loop, slower than no skip */
    JS_SCAN_OFF,
} js_scan_level;

/* What a block's classification carries into the next block. */
typedef struct js_carry {
    uint64_t escaped;          /* 1: the next block's first byte is escaped */
    uint64_t in_string;        /* all ones: the next block starts inside a string */
} js_carry;

/* One 64-byte block: bit i is byte i. */
typedef struct js_block {
    uint64_t quote;            /* '"' not escaped */
    uint64_t in_string;        /* opening quote and content, not the closing quote */
    uint64_t backslash, colon, comma, close_brace, digit, zero, dot, p, h;
    uint64_t other;            /* none of '"', '\\', whitespace, ':', ',', '}', '.', digits */
} js_block;

/* Classifies the 64 bytes at p; carry goes in and out. */
typedef void (*js_classify_fn)(const char *p, js_carry *carry, js_block *out);

/* The closing '}' of the event whose members go on at p (right after a
 * member's value), when the members from p to that brace, all before end,
 * are of the plain kind above; else NULL.  Reads up to JS_READ_PAST_BYTES
 * past any byte before end. */
typedef const char *(*js_skip_fn)(const char *p, const char *end);
#define JS_READ_PAST_BYTES 67u

/* The classifier and the skip for level on this CPU (NULL for
 * JS_SCAN_OFF, and the skip NULL without AVX2 unless JS_SCAN_PORTABLE);
 * *used names the classifier's instructions. */
js_classify_fn js_classifier(js_scan_level level, const char **used);
js_skip_fn js_skipper(js_scan_level level);

/* The first of `blocks` 64-byte blocks at bytes (readable for
 * JS_READ_PAST_BYTES more) where level's classifier gives other masks or
 * carries than the byte loop, or -1: what the tests and the fuzzer check. */
long js_first_disagreement(js_scan_level level, const char *bytes, size_t blocks);

#endif
