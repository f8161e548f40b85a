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

static size_t scan_scalar(const char *p, size_t from, size_t n) {
    for (size_t i = from; i + 1 < n; i++)
        if (((p[i] == '_' && p[i + 1] == 'c') || (p[i] == '\\' && p[i + 1] == 'u')) && is_call_mark(p, i, n))
            return i;
    return n;
}

#if defined(__SSE2__)
static size_t scan_sse2(const char *p, size_t n) {
    const __m128i under = _mm_set1_epi8('_'), c = _mm_set1_epi8('c');
    const __m128i bslash = _mm_set1_epi8('\\'), u = _mm_set1_epi8('u');
    size_t i = 0;
    for (; i + 17 <= n; i += 16) {
        const __m128i a = _mm_loadu_si128((const __m128i *)(p + i));
        const __m128i b = _mm_loadu_si128((const __m128i *)(p + i + 1));
        const __m128i hit = _mm_or_si128(_mm_and_si128(_mm_cmpeq_epi8(a, under), _mm_cmpeq_epi8(b, c)),
                                         _mm_and_si128(_mm_cmpeq_epi8(a, bslash), _mm_cmpeq_epi8(b, u)));
        unsigned mask = (unsigned)_mm_movemask_epi8(hit);
        while (mask) {
            size_t k = i + (size_t)__builtin_ctz(mask);
            if (is_call_mark(p, k, n)) return k;
            mask &= mask - 1;
        }
    }
    return scan_scalar(p, i, n);
}
#endif

#if defined(AW_SCAN_AVX2)
__attribute__((target("avx2,bmi"))) static size_t scan_avx2(const char *p, size_t n) {
    const __m256i under = _mm256_set1_epi8('_'), c = _mm256_set1_epi8('c');
    const __m256i bslash = _mm256_set1_epi8('\\'), u = _mm256_set1_epi8('u');
    size_t i = 0;
    for (; i + 33 <= n; i += 32) {
        const __m256i a = _mm256_loadu_si256((const __m256i *)(p + i));
        const __m256i b = _mm256_loadu_si256((const __m256i *)(p + i + 1));
        const __m256i hit =
            _mm256_or_si256(_mm256_and_si256(_mm256_cmpeq_epi8(a, under), _mm256_cmpeq_epi8(b, c)),
                            _mm256_and_si256(_mm256_cmpeq_epi8(a, bslash), _mm256_cmpeq_epi8(b, u)));
        unsigned mask = (unsigned)_mm256_movemask_epi8(hit);
        while (mask) {
            size_t k = i + (size_t)__builtin_ctz(mask);
            if (is_call_mark(p, k, n)) return k;
            mask &= mask - 1;
        }
    }
    return scan_scalar(p, i, n);
}
#endif

size_t aw__thread_scan_call(const char *p, size_t n, int isa) {
#if defined(AW_SCAN_AVX2)
    if (isa >= 2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi")) return scan_avx2(p, n);
#endif
#if defined(__SSE2__)
    if (isa >= 1) return scan_sse2(p, n);
#endif
    (void)isa;
    return scan_scalar(p, 0, n);
}
