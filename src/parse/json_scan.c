/* json_scan.c: the block classifiers and the skip of unread members (see
 * parse/json_scan.h).  Each classifier is instantiated into its own skip
 * (the walk is inline, compiled once per instruction set), so that the
 * walk's carry-less multiply and bit extraction are single instructions
 * where the CPU has them and plain loops in the reference. */
#include "parse/json_scan.h"

#include <stddef.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define JS_X86 1
#endif

#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define EVEN_BITS 0x5555555555555555ull

/* ---- the reference: one byte at a time ---------------------------------- */

ALWAYS_INLINE void classify_portable(const char *p, js_carry *carry, js_block *out)
{
    js_block k = {0};
    uint64_t escaped = carry->escaped, in_string = carry->in_string & 1;
    for (int i = 0; i < 64; i++) {
        unsigned char c = (unsigned char)p[i];
        uint64_t bit = 1ull << i;
        int is_escaped = (int)escaped;
        escaped = !is_escaped && c == '\\';
        if (c == '"' && !is_escaped) {
            k.quote |= bit;
            in_string ^= 1;
        }
        if (in_string)
            k.in_string |= bit;
        if (c == 'p')
            k.p |= bit;
        if (c == 'h')
            k.h |= bit;
        switch (c) {
        case '"': case ' ': case '\n': case '\r': case '\t': break;
        case '\\': k.backslash |= bit; break;
        case ':': k.colon |= bit; break;
        case ',': k.comma |= bit; break;
        case '}': k.close_brace |= bit; break;
        case '.': k.dot |= bit; break;
        default:
            if (c >= '0' && c <= '9') {
                k.digit |= bit;
                if (c == '0')
                    k.zero |= bit;
            } else {
                k.other |= bit;
            }
        }
    }
    carry->escaped = escaped;
    carry->in_string = in_string ? ~0ull : 0;
    *out = k;
}

/* The bits of x where mask has ones, packed to the low end (BMI2's pext). */
ALWAYS_INLINE uint64_t extract_portable(uint64_t x, uint64_t mask)
{
    uint64_t out = 0;
    for (uint64_t bit = 1; mask; mask &= mask - 1, bit <<= 1)
        if (x & mask & -mask)
            out |= bit;
    return out;
}

#ifdef JS_X86

/* Positions escaped by an odd run of backslashes (simdjson's branchless
 * form): a run starting on an even bit escapes the byte after it when its
 * length is odd, which the sum of the run's odd-bit starts and the run
 * tells; the sum's overflow carries a run into the next block. */
ALWAYS_INLINE uint64_t escaped_bytes(uint64_t backslash, uint64_t *prev_escaped)
{
    backslash &= ~*prev_escaped;
    uint64_t follows_escape = backslash << 1 | *prev_escaped;
    uint64_t odd_starts = backslash & ~EVEN_BITS & ~follows_escape;
    uint64_t sum;
    *prev_escaped = __builtin_add_overflow(odd_starts, backslash, &sum);
    return (EVEN_BITS ^ (sum << 1)) & follows_escape;
}

/* Quotes not escaped, and the bytes inside strings: the prefix XOR of the
 * quotes (a carry-less multiply by all ones) flipped by the carry. */
__attribute__((target("pclmul,sse2"))) ALWAYS_INLINE void find_strings(js_block *k,
                                                                        js_carry *carry,
                                                                        uint64_t quotes)
{
    k->quote = quotes & ~escaped_bytes(k->backslash, &carry->escaped);
    __m128i all = _mm_set1_epi8((char)0xFF);
    uint64_t prefix_xor = (uint64_t)_mm_cvtsi128_si64(
        _mm_clmulepi64_si128(_mm_set_epi64x(0, (long long)k->quote), all, 0));
    k->in_string = prefix_xor ^ carry->in_string;
    carry->in_string = (uint64_t)((int64_t)k->in_string >> 63);
}

#define MASK2(lo, hi) ((uint64_t)(uint32_t)_mm256_movemask_epi8(lo) | \
                       (uint64_t)(uint32_t)_mm256_movemask_epi8(hi) << 32)
#define TARGET_AVX2 __attribute__((target("avx2,bmi,bmi2,pclmul,popcnt")))

TARGET_AVX2 ALWAYS_INLINE __m256i eq32(__m256i v, char c)
{
    return _mm256_cmpeq_epi8(v, _mm256_set1_epi8(c));
}

TARGET_AVX2 ALWAYS_INLINE uint64_t eq_avx2(__m256i lo, __m256i hi, char c)
{
    return MASK2(eq32(lo, c), eq32(hi, c));
}

/* Whitespace by a table on the low nibble: only ' ', '\t', '\n' and '\r'
 * equal their own entry (simdjson's lookup). */
TARGET_AVX2 ALWAYS_INLINE __m256i space32(__m256i v)
{
    const __m256i table =
        _mm256_setr_epi8(' ', 0, 0, 0, 0, 0, 0, 0, 0, '\t', '\n', 0, 0, '\r', 0, 0,
                         ' ', 0, 0, 0, 0, 0, 0, 0, 0, '\t', '\n', 0, 0, '\r', 0, 0);
    return _mm256_cmpeq_epi8(_mm256_shuffle_epi8(table, v), v);
}

TARGET_AVX2 ALWAYS_INLINE void classify_avx2(const char *p, js_carry *carry, js_block *out)
{
    js_block k;
    __m256i lo = _mm256_loadu_si256((const __m256i *)p);
    __m256i hi = _mm256_loadu_si256((const __m256i *)(p + 32));
    uint64_t quotes = eq_avx2(lo, hi, '"');
    k.backslash = eq_avx2(lo, hi, '\\');
    k.colon = eq_avx2(lo, hi, ':');
    k.comma = eq_avx2(lo, hi, ',');
    k.close_brace = eq_avx2(lo, hi, '}');
    k.zero = eq_avx2(lo, hi, '0');
    k.p = eq_avx2(lo, hi, 'p');
    k.h = eq_avx2(lo, hi, 'h');
    k.dot = eq_avx2(lo, hi, '.');
    __m256i nine = _mm256_set1_epi8(9), zero = _mm256_set1_epi8('0');
    __m256i dl = _mm256_sub_epi8(lo, zero), dh = _mm256_sub_epi8(hi, zero);
    k.digit = MASK2(_mm256_cmpeq_epi8(_mm256_min_epu8(dl, nine), dl),
                    _mm256_cmpeq_epi8(_mm256_min_epu8(dh, nine), dh));
    uint64_t space = MASK2(space32(lo), space32(hi));
    k.other = ~(quotes | k.backslash | k.colon | k.comma | k.close_brace | k.digit | k.dot | space);
    find_strings(&k, carry, quotes);
    *out = k;
}

#define TARGET_AVX512 __attribute__((target("avx512f,avx512bw,bmi,bmi2,pclmul,popcnt")))

TARGET_AVX512 ALWAYS_INLINE uint64_t eq_avx512(__m512i v, char c)
{
    return _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(c));
}

TARGET_AVX512 ALWAYS_INLINE void classify_avx512(const char *p, js_carry *carry, js_block *out)
{
    js_block k;
    __m512i v = _mm512_loadu_si512((const void *)p);
    uint64_t quotes = eq_avx512(v, '"');
    k.backslash = eq_avx512(v, '\\');
    k.colon = eq_avx512(v, ':');
    k.comma = eq_avx512(v, ',');
    k.close_brace = eq_avx512(v, '}');
    k.zero = eq_avx512(v, '0');
    k.p = eq_avx512(v, 'p');
    k.h = eq_avx512(v, 'h');
    k.dot = eq_avx512(v, '.');
    k.digit = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8('0')),
                                     _mm512_set1_epi8(10));
    uint64_t space = eq_avx512(v, ' ') | eq_avx512(v, '\n') | eq_avx512(v, '\r') |
                     eq_avx512(v, '\t');
    k.other = ~(quotes | k.backslash | k.colon | k.comma | k.close_brace | k.digit | k.dot | space);
    find_strings(&k, carry, quotes);
    *out = k;
}

#endif

/* ---- the skip --------------------------------------------------------- */

static inline uint64_t shifted(uint64_t x, uint64_t *carry)
{
    uint64_t r = x << 1 | *carry;
    *carry = x >> 63;
    return r;
}

/* For each bit of starts (each the first byte of a run in run), the byte
 * just past its run: the sum carries through the run. */
static inline uint64_t past_runs(uint64_t starts, uint64_t run, uint64_t *carry)
{
    uint64_t sum;
    uint64_t c1 = __builtin_add_overflow(starts, run, &sum);
    uint64_t c2 = __builtin_add_overflow(sum, *carry, &sum);
    *carry = c1 | c2;
    return sum & ~run;
}

/* What the walk carries from one block to the next. */
typedef struct walk {
    js_carry strings;
    uint64_t digit_shift, zero_shift, dot_shift, fraction_end;
    unsigned tokens;           /* tokens so far, modulo 4 */
} walk;

/* Token k of the members is `,` `"key"` `:` value for k = 0, 1, 2, 3 modulo
 * 4, and the closing brace comes where a comma would; these are the
 * tokens of each kind in one block whose first token is number `first`. */
#define EVERY_FOURTH 0x1111111111111111ull
static inline uint64_t tokens_of_kind(unsigned kind, unsigned first)
{
    return EVERY_FOURTH << ((kind - first) & 3);
}

/* Whether a string opening at bit i of the block at b, too near its end
 * for the masks to tell, is "ph" (the padding keeps the reads in bounds). */
static inline int opens_ph_at_end(const char *b, uint64_t opening)
{
    for (opening >>= 61; opening; opening &= opening - 1)
        if (memcmp(b + 61 + __builtin_ctzll(opening), "\"ph\"", 4) == 0)
            return 1;
    return 0;
}

/* The members as tokens, each classified from the masks: whitespace
 * between tokens only, plain strings (no backslash anywhere), numbers of
 * the form (0|[1-9][0-9]*)(\.[0-9]+)?, no key "ph"; the kinds in the
 * order of the grammar above, read off by extracting each kind's bits at
 * the tokens' first bytes.  A sum carries each run of digits after a '.'
 * to the byte past it, which must not be another '.'. */
ALWAYS_INLINE const char *skip_members(const char *p, const char *end,
                                       void (*classify)(const char *, js_carry *, js_block *),
                                       uint64_t (*extract)(uint64_t, uint64_t))
{
    walk w = {0};
    for (const char *b = p; b < end; b += 64) {
        js_block k;
        classify(b, &w.strings, &k);
        uint64_t outside = ~(k.in_string | k.quote);
        uint64_t brace = k.close_brace & outside, close = brace & -brace;
        uint64_t live = close ? close | (close - 1) : ~0ull;
        if (close ? end - b <= __builtin_ctzll(close) : end - b <= 64)
            return NULL;       /* the event goes on past the buffer */
        outside &= live;
        uint64_t opening = k.quote & k.in_string & live;
        if ((k.backslash & live) || (k.other & outside) ||
            (opening & k.p >> 1 & k.h >> 2 & k.quote >> 3) || opens_ph_at_end(b, opening))
            return NULL;
        uint64_t digit = k.digit & outside, dot = k.dot & outside, bytes = digit | dot;
        uint64_t number = bytes & ~shifted(bytes, &w.digit_shift);
        uint64_t fraction = shifted(dot, &w.dot_shift);
        if ((number & dot) || (shifted(k.zero & number, &w.zero_shift) & digit) ||
            (fraction & ~digit) || (past_runs(fraction, digit, &w.fraction_end) & dot))
            return NULL;
        uint64_t comma = k.comma & outside, colon = k.colon & outside;
        uint64_t tokens = opening | number | comma | colon | close;
        unsigned n = (unsigned)__builtin_popcountll(tokens), first = w.tokens;
        uint64_t all = n == 64 ? ~0ull : (1ull << n) - 1;
        if (extract(comma | close, tokens) != (tokens_of_kind(0, first) & all) ||
            (tokens_of_kind(1, first) & all & ~extract(opening, tokens)) ||
            extract(colon, tokens) != (tokens_of_kind(2, first) & all) ||
            (tokens_of_kind(3, first) & all & ~extract(opening | number, tokens)))
            return NULL;
        w.tokens = (first + n) & 3;
        if (close)
            return b + __builtin_ctzll(close);
    }
    return NULL;
}

static const char *skip_portable(const char *p, const char *end)
{
    return skip_members(p, end, classify_portable, extract_portable);
}

static void classify_portable_fn(const char *p, js_carry *carry, js_block *out)
{
    classify_portable(p, carry, out);
}

#ifdef JS_X86
TARGET_AVX2 ALWAYS_INLINE uint64_t extract_bmi2(uint64_t x, uint64_t mask)
{
    return _pext_u64(x, mask);
}

TARGET_AVX2 static const char *skip_avx2(const char *p, const char *end)
{
    return skip_members(p, end, classify_avx2, extract_bmi2);
}

TARGET_AVX2 static void classify_avx2_fn(const char *p, js_carry *carry, js_block *out)
{
    classify_avx2(p, carry, out);
}

TARGET_AVX512 static const char *skip_avx512(const char *p, const char *end)
{
    return skip_members(p, end, classify_avx512, extract_bmi2);
}

TARGET_AVX512 static void classify_avx512_fn(const char *p, js_carry *carry, js_block *out)
{
    classify_avx512(p, carry, out);
}

/* 2: AVX-512BW, 1: AVX2, 0: neither (each with BMI2 and PCLMULQDQ). */
static int simd_level(js_scan_level level)
{
    __builtin_cpu_init();
    if (level == JS_SCAN_PORTABLE || !__builtin_cpu_supports("pclmul") ||
        !__builtin_cpu_supports("bmi2") || !__builtin_cpu_supports("avx2"))
        return 0;
    return level == JS_SCAN_BEST && __builtin_cpu_supports("avx512bw") ? 2 : 1;
}
#else
static int simd_level(js_scan_level level)
{
    (void)level;
    return 0;
}
#endif

js_classify_fn js_classifier(js_scan_level level, const char **used)
{
    static const char *const names[] = {"portable", "avx2", "avx512bw"};
    int simd = level == JS_SCAN_OFF ? -1 : simd_level(level);
    if (used)
        *used = simd < 0 ? "off" : names[simd];
#ifdef JS_X86
    if (simd == 2)
        return classify_avx512_fn;
    if (simd == 1)
        return classify_avx2_fn;
#endif
    return simd < 0 ? NULL : classify_portable_fn;
}

long js_first_disagreement(js_scan_level level, const char *bytes, size_t blocks)
{
    js_classify_fn simd = js_classifier(level, NULL);
    js_carry a = {0}, b = {0};
    for (size_t i = 0; simd && i < blocks; i++) {
        js_block x, y;
        classify_portable(bytes + 64 * i, &a, &x);
        simd(bytes + 64 * i, &b, &y);
        if (memcmp(&x, &y, sizeof x) != 0 || memcmp(&a, &b, sizeof a) != 0)
            return (long)i;
    }
    return -1;
}

js_skip_fn js_skipper(js_scan_level level)
{
    if (level == JS_SCAN_OFF)
        return NULL;
#ifdef JS_X86
    int simd = simd_level(level);
    if (simd == 2)
        return skip_avx512;
    if (simd == 1)
        return skip_avx2;
#endif
    /* The byte loop costs more than the members it skips: only tests and
     * the fuzzer ask for it. */
    return level == JS_SCAN_PORTABLE ? skip_portable : NULL;
}
