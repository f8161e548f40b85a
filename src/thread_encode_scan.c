/* Finding the lines of JSON-lines text that may be tool_call events,
 * without parsing the others.
 *
 * The streaming encoder must know every toolCallId -> toolName before it
 * writes the first tool_output (a result is named after the last call with
 * its id anywhere in the input), and parsing the whole input twice would
 * cost as much again as the encoding. A tool_call event's "type" value is
 * the JSON string "tool_call": in the text, either those nine bytes, or a
 * spelling with at least one \u escape of one of its ASCII letters
 * (\u0074 't' ... \u005f '_'), which starts with \u00 and a 5, 6 or 7. So
 * a line that holds neither "tool_call" nor such an escape is no tool_call
 * event, and only the others need a parse. The scan looks for the byte
 * pairs "_c" and "\u" (32 bytes a round with AVX2, 16 with SSE2) and
 * checks each pair found; prose and code rarely hold either. */
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#if defined(__GNUC__) && defined(__x86_64__)
#define AW_SCAN_AVX2 1
#include <immintrin.h>
#endif
#endif

#include "internal/thread.h"

/* Does the pair at p[i], p[i + 1] (inside text[0..n)) start or end one of
 * the spellings? "_c" must be the middle of "tool_call"; "\u" must escape
 * a byte from 0x50 to 0x7F. */
static int is_call_mark(const char *p, size_t i, size_t n) {
    if (p[i] == '_') return i >= 4 && i + 5 <= n && memcmp(p + i - 4, "tool_call", 9) == 0;
    return i + 4 < n && p[i + 2] == '0' && p[i + 3] == '0' && p[i + 4] >= '5' && p[i + 4] <= '7';
}

/* The first i in p[0..n) where p[i], p[i + 1] is the pair a1 b1 or the
 * pair a2 b2 and check(p, i, n) holds; n when there is none. */
typedef int (*pair_check)(const char *p, size_t i, size_t n);

static size_t pairs_scalar(const char *p, size_t from, size_t n, char a1, char b1, char a2, char b2,
                           pair_check check) {
    for (size_t i = from; i + 1 < n; i++)
        if (((p[i] == a1 && p[i + 1] == b1) || (p[i] == a2 && p[i + 1] == b2)) && check(p, i, n)) return i;
    return n;
}

#if defined(__SSE2__)
static size_t pairs_sse2(const char *p, size_t n, char a1, char b1, char a2, char b2, pair_check check) {
    const __m128i va1 = _mm_set1_epi8(a1), vb1 = _mm_set1_epi8(b1);
    const __m128i va2 = _mm_set1_epi8(a2), vb2 = _mm_set1_epi8(b2);
    size_t i = 0;
    for (; i + 17 <= n; i += 16) {
        const __m128i a = _mm_loadu_si128((const __m128i *)(p + i));
        const __m128i b = _mm_loadu_si128((const __m128i *)(p + i + 1));
        const __m128i hit = _mm_or_si128(_mm_and_si128(_mm_cmpeq_epi8(a, va1), _mm_cmpeq_epi8(b, vb1)),
                                         _mm_and_si128(_mm_cmpeq_epi8(a, va2), _mm_cmpeq_epi8(b, vb2)));
        unsigned mask = (unsigned)_mm_movemask_epi8(hit);
        while (mask) {
            size_t k = i + (size_t)__builtin_ctz(mask);
            if (check(p, k, n)) return k;
            mask &= mask - 1;
        }
    }
    return pairs_scalar(p, i, n, a1, b1, a2, b2, check);
}
#endif

#if defined(AW_SCAN_AVX2)
__attribute__((target("avx2,bmi"))) static size_t pairs_avx2(const char *p, size_t n, char a1, char b1, char a2,
                                                             char b2, pair_check check) {
    const __m256i va1 = _mm256_set1_epi8(a1), vb1 = _mm256_set1_epi8(b1);
    const __m256i va2 = _mm256_set1_epi8(a2), vb2 = _mm256_set1_epi8(b2);
    size_t i = 0;
    for (; i + 33 <= n; i += 32) {
        const __m256i a = _mm256_loadu_si256((const __m256i *)(p + i));
        const __m256i b = _mm256_loadu_si256((const __m256i *)(p + i + 1));
        const __m256i hit = _mm256_or_si256(_mm256_and_si256(_mm256_cmpeq_epi8(a, va1), _mm256_cmpeq_epi8(b, vb1)),
                                            _mm256_and_si256(_mm256_cmpeq_epi8(a, va2), _mm256_cmpeq_epi8(b, vb2)));
        unsigned mask = (unsigned)_mm256_movemask_epi8(hit);
        while (mask) {
            size_t k = i + (size_t)__builtin_ctz(mask);
            if (check(p, k, n)) return k;
            mask &= mask - 1;
        }
    }
    return pairs_scalar(p, i, n, a1, b1, a2, b2, check);
}
#endif

static size_t first_pair(const char *p, size_t n, char a1, char b1, char a2, char b2, pair_check check, int isa) {
#if defined(AW_SCAN_AVX2)
    if (isa >= 2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi"))
        return pairs_avx2(p, n, a1, b1, a2, b2, check);
#endif
#if defined(__SSE2__)
    if (isa >= 1) return pairs_sse2(p, n, a1, b1, a2, b2, check);
#endif
    (void)isa;
    return pairs_scalar(p, 0, n, a1, b1, a2, b2, check);
}

size_t aw__thread_scan_call(const char *p, size_t n, int isa) {
    return first_pair(p, n, '_', 'c', '\\', 'u', is_call_mark, isa);
}

/* ---- reading a candidate line's type, toolCallId and toolName ------------ */

/* The streaming encoder needs only those three strings of each line the
 * scan finds, and the line's other values (the arguments, code and JSON in
 * strings) are most of its bytes. So the line is skimmed: the top-level
 * object's members are walked, values skipped by their structure alone
 * (strings to their closing quote, containers by depth), nothing decoded
 * and nothing checked. For a line that is a valid event the strings found
 * are the parser's (the last member of a name wins, as in look-ups: the
 * walk stops early only where the rest of the line holds no such name, not
 * even escaped);
 * whatever is not plain enough to be sure of (a backslash in a key or in
 * one of the three values, a structure that does not close) is left to
 * the parser. A line that is not valid JSON may be misread: the encoding
 * pass stops with its error there, so no complete output depends on it. */

static size_t skip_ws(const char *p, size_t i, size_t n) {
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n')) i++;
    return i;
}

/* p[i] is the opening quote: the index of the closing one, or n. */
static size_t string_end(const char *p, size_t i, size_t n) {
    for (size_t j = i + 1; j < n;) {
        const char *q = memchr(p + j, '"', n - j);
        if (!q) return n;
        size_t k = (size_t)(q - p), bs = 0;
        while (k - bs > i + 1 && p[k - bs - 1] == '\\') bs++;
        if (bs % 2 == 0) return k;
        j = k + 1;
    }
    return n;
}

/* The index after the value starting at p[i], or n when it does not end. */
static size_t value_end(const char *p, size_t i, size_t n) {
    if (p[i] == '"') {
        size_t e = string_end(p, i, n);
        return e < n ? e + 1 : n;
    }
    if (p[i] != '{' && p[i] != '[') {
        while (i < n && p[i] != ',' && p[i] != '}' && p[i] != ']' && p[i] != ' ' && p[i] != '\t' && p[i] != '\r' &&
               p[i] != '\n')
            i++;
        return i;
    }
    size_t depth = 0;
    while (i < n) {
        char c = p[i];
        if (c == '"') {
            i = string_end(p, i, n);
            if (i >= n) return n;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (--depth == 0) return i + 1;
        }
        i++;
    }
    return n;
}

/* A key that matters, or an escape that could spell one of its letters:
 * "type", "toolCallId", "toolName", or \u and a byte from 0x40 to 0x7F
 * (the keys have capitals, 'C', 'I', 'N'). */
static int is_key_mark(const char *p, size_t i, size_t n) {
    if (p[i] == '\\') return i + 4 < n && p[i + 2] == '0' && p[i + 3] == '0' && p[i + 4] >= '4' && p[i + 4] <= '7';
    size_t left = n - i;
    return (left >= 6 && memcmp(p + i, "\"type\"", 6) == 0) || (left >= 12 && memcmp(p + i, "\"toolCallId\"", 12) == 0) ||
           (left >= 10 && memcmp(p + i, "\"toolName\"", 10) == 0);
}

typedef struct skimmed {
    int found;  /* the member was there */
    int string; /* ... and its value a string */
    int plain;  /* ... without a backslash */
    aw_text text;
} skimmed;

int aw__thread_skim_call(const char *p, size_t n, int allow_bom, aw_text *id, aw_text *name) {
    static const char *const names[3] = {"type", "toolCallId", "toolName"};
    skimmed f[3] = {{0}, {0}, {0}};
    size_t i = 0;
    if (allow_bom && n >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) i = 3;
    i = skip_ws(p, i, n);
    if (i >= n || p[i] != '{') return -1;
    i = skip_ws(p, i + 1, n);
    if (i < n && p[i] == '}') return 0; /* {}: no type */
    for (;;) {
        if (i >= n || p[i] != '"') return -1;
        size_t kend = string_end(p, i, n);
        if (kend >= n || memchr(p + i + 1, '\\', kend - i - 1)) return -1;
        const char *key = p + i + 1;
        size_t klen = kend - i - 1;
        i = skip_ws(p, kend + 1, n);
        if (i >= n || p[i] != ':') return -1;
        i = skip_ws(p, i + 1, n);
        if (i >= n) return -1;
        size_t vend = value_end(p, i, n);
        if (vend >= n && (p[i] == '"' || p[i] == '{' || p[i] == '[')) return -1;
        for (int k = 0; k < 3; k++) {
            if (strlen(names[k]) != klen || memcmp(names[k], key, klen) != 0) continue;
            f[k].found = 1;
            f[k].string = p[i] == '"';
            f[k].plain = f[k].string && !memchr(p + i + 1, '\\', vend - i - 2);
            f[k].text.ptr = p + i + 1;
            f[k].text.len = f[k].string ? vend - i - 2 : 0;
        }
        /* once the three are found, the walk may stop where nothing after
         * could name them again (a later member of the same name wins) */
        if (f[0].found && f[1].found && f[2].found &&
            first_pair(p + vend, n - vend, '"', 't', '\\', 'u', is_key_mark, 2) == n - vend)
            break;
        i = skip_ws(p, vend, n);
        if (i < n && p[i] == ',') {
            i = skip_ws(p, i + 1, n);
            continue;
        }
        if (i < n && p[i] == '}') break;
        return -1;
    }
    if (!f[0].found || !f[0].string) return 0; /* no event: the parser's error */
    if (!f[0].plain) return -1;
    if (f[0].text.len != 9 || memcmp(f[0].text.ptr, "tool_call", 9) != 0) return 0;
    for (int k = 1; k < 3; k++) {
        if (!f[k].found || !f[k].string) return 0; /* not a valid tool_call */
        if (!f[k].plain) return -1;
    }
    *id = f[1].text;
    *name = f[2].text;
    return 1;
}
