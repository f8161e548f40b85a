/* XML escaping under the XML 1.0 character policy.
 *
 * The hot loop classifies 64 bytes a round with SSE2 compares into one
 * 64-bit mask. Only the bytes that need more than a copy are marked: the
 * five markup characters, controls other than tab, LF and CR, and bytes
 * >= 0x80; tab, LF and CR go out with the plain bytes. A round with no
 * mark is four loads and four stores. Otherwise the mask is walked mark by
 * mark without being computed again: an ASCII mark is one table lookup and
 * one 8-byte store (no branch on which entity), a valid UTF-8 sequence is
 * checked and copied (a run of them at once), and the plain bytes up to
 * the next mark are copied with four 16-byte stores. The end of a string
 * (under 128 bytes left) takes 16 bytes at a time, and its last bytes are
 * classified from the final 16 of the string, or from a padded copy when
 * the whole string is shorter than that. Measured on the thread
 * benchmark's corpus (prose with quotes, apostrophes, code, accents): about
 * twice the speed of a loop that stops at every mark, in cache. CPUs with
 * AVX2 classify 32 bytes per table lookup and walk a list of marks instead
 * (below); a byte-at-a-time loop is the portable fallback and the
 * reference the tests hold the others to. */
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
/* AVX2 (with BMI1 and POPCNT, which every AVX2 CPU has) is used when the
 * CPU has it, chosen at run time: GCC and clang compile the functions
 * that use it for it with a target attribute. */
#if defined(__GNUC__) && defined(__x86_64__)
#define AW_XML_AVX2 1
#include <immintrin.h>
#endif
#endif

#include "agentwire/error.h"
#include "agentwire/xml.h"
#include "internal/utf8.h"
#include "internal/xml.h"

static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */

/* Plain: copied as it is (tab, LF and CR included). */
static inline int plain_byte(unsigned char c) {
    if (c >= 0x20) return c < 0x80 && c != '&' && c != '<' && c != '>' && c != '"' && c != '\'';
    return c == '\t' || c == '\n' || c == '\r';
}

/* Length of the ANSI sequence starting with ESC at s[i] (at least 1). */
static size_t ansi_len(const unsigned char *s, size_t i, size_t n) {
    size_t j = i + 1;
    if (j >= n) return 1;
    if (s[j] == '[') { /* CSI: parameters, intermediates, one final byte */
        j++;
        while (j < n && s[j] >= 0x20 && s[j] <= 0x3F) j++;
        if (j < n && s[j] >= 0x40 && s[j] <= 0x7E) j++;
        return j - i;
    }
    if (s[j] == ']') { /* OSC: up to BEL or ESC \ (string terminator) */
        j++;
        while (j < n) {
            if (s[j] == 0x07) return j + 1 - i;
            if (s[j] == 0x1B && j + 1 < n && s[j + 1] == '\\') return j + 2 - i;
            j++;
        }
        return j - i;
    }
    if (s[j] >= 0x40 && s[j] <= 0x5F) return 2; /* other two-byte escapes */
    return 1;
}

static inline int cont(unsigned char c) { return (c & 0xC0) == 0x80; }

static inline char *put_replacement(char *o) {
    memcpy(o, replacement, 3);
    return o + 3;
}

/* What each ASCII byte becomes, as 8 bytes to store at once: the text in
 * the first 7, its length in the last. Plain bytes (tab, LF and CR among
 * them) stand for themselves, the markup characters for their entities,
 * the other controls for U+FFFD (XML 1.0 forbids them). One table load and
 * one 8-byte store, where a switch would be a jump that the branch
 * predictor misses on prose mixing quotes, ampersands and newlines. */
typedef struct {
    char text[7];
    unsigned char len;
} ascii_out;

#define R {"\xEF\xBF\xBD", 3}
static const ascii_out ascii_table[128] = {
    R, R, R, R, R, R, R, R,
    R, {"\t", 1}, {"\n", 1}, R, R, {"\r", 1}, R, R,
    R, R, R, R, R, R, R, R,
    R, R, R, R, R, R, R, R,
    {" ", 1}, {"!", 1}, {"&quot;", 6}, {"#", 1}, {"$", 1}, {"%", 1}, {"&amp;", 5}, {"&apos;", 6},
    {"(", 1}, {")", 1}, {"*", 1}, {"+", 1}, {",", 1}, {"-", 1}, {".", 1}, {"/", 1},
    {"0", 1}, {"1", 1}, {"2", 1}, {"3", 1}, {"4", 1}, {"5", 1}, {"6", 1}, {"7", 1},
    {"8", 1}, {"9", 1}, {":", 1}, {";", 1}, {"&lt;", 4}, {"=", 1}, {"&gt;", 4}, {"?", 1},
    {"@", 1}, {"A", 1}, {"B", 1}, {"C", 1}, {"D", 1}, {"E", 1}, {"F", 1}, {"G", 1},
    {"H", 1}, {"I", 1}, {"J", 1}, {"K", 1}, {"L", 1}, {"M", 1}, {"N", 1}, {"O", 1},
    {"P", 1}, {"Q", 1}, {"R", 1}, {"S", 1}, {"T", 1}, {"U", 1}, {"V", 1}, {"W", 1},
    {"X", 1}, {"Y", 1}, {"Z", 1}, {"[", 1}, {"\\", 1}, {"]", 1}, {"^", 1}, {"_", 1},
    {"`", 1}, {"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}, {"e", 1}, {"f", 1}, {"g", 1},
    {"h", 1}, {"i", 1}, {"j", 1}, {"k", 1}, {"l", 1}, {"m", 1}, {"n", 1}, {"o", 1},
    {"p", 1}, {"q", 1}, {"r", 1}, {"s", 1}, {"t", 1}, {"u", 1}, {"v", 1}, {"w", 1},
    {"x", 1}, {"y", 1}, {"z", 1}, {"{", 1}, {"|", 1}, {"}", 1}, {"~", 1}, {"\x7F", 1},
};
#undef R

/* A byte >= 0x80 at s[*pi]: a valid UTF-8 sequence is copied; not UTF-8
 * is one U+FFFD per unit of aw__utf8_invalid_len (a maximal subpart; a
 * surrogate's 3-byte form, a lone "\udxxx" escape, counts as one); U+FFFE
 * and U+FFFF are not characters either. The checks are aw__utf8_seq_len's. Out of line: rarer than the
 * ASCII marks, and it would crowd the loops it sits in. */
static __attribute__((noinline)) char *escape_utf8(char *o, const unsigned char *s, size_t *pi, size_t n) {
    size_t i = *pi;
    unsigned c = s[i];
    size_t avail = n - i;
    for (;;) {
        if (c < 0xC2) goto bad;
        if (c < 0xE0) {
            if (avail < 2 || !cont(s[i + 1])) goto bad;
            o[0] = (char)c;
            o[1] = (char)s[i + 1];
            o += 2;
            i += 2;
        } else if (c < 0xF0) {
            if (avail < 3 || !cont(s[i + 1]) || !cont(s[i + 2])) goto bad;
            unsigned c1 = s[i + 1], c2 = s[i + 2];
            if (c == 0xE0 && c1 < 0xA0) goto bad; /* overlong */
            if ((c == 0xED && c1 >= 0xA0) || (c == 0xEF && c1 == 0xBF && c2 >= 0xBE)) {
                o = put_replacement(o); /* a surrogate; U+FFFE, U+FFFF */
            } else {
                o[0] = (char)c;
                o[1] = (char)c1;
                o[2] = (char)c2;
                o += 3;
            }
            i += 3;
        } else if (c < 0xF5) {
            if (avail < 4 || !cont(s[i + 1]) || !cont(s[i + 2]) || !cont(s[i + 3])) goto bad;
            if (c == 0xF0 && s[i + 1] < 0x90) goto bad; /* overlong */
            if (c == 0xF4 && s[i + 1] >= 0x90) goto bad; /* above U+10FFFF */
            memcpy(o, s + i, 4);
            o += 4;
            i += 4;
        } else {
            goto bad;
        }
        /* a run of non-ASCII text (accents, CJK, emoji) stays here, for
         * up to 32 bytes: a span's writes must stay near its input */
        if (i >= n || s[i] < 0x80 || i - *pi >= 32) break;
        c = s[i];
        avail = n - i;
        continue;
    bad:
        /* one U+FFFD per maximal subpart (the Unicode Standard's practice),
         * not per byte: E2 82 cut short is one character's worth */
        o = put_replacement(o);
        i += aw__utf8_invalid_len(s + i, n - i);
        break;
    }
    *pi = i;
    return o;
}

/* One character at s[*pi] that is not plain (a plain byte is copied too).
 * Writes at most 6 bytes that count, never more than 6 per input byte it
 * consumes, but stores 8: the output needs 2 bytes of slack. */
static inline __attribute__((always_inline)) char *escape_one(char *o, const unsigned char *s, size_t *pi,
                                                              size_t n, unsigned flags) {
    size_t i = *pi;
    unsigned c = s[i];
    if (__builtin_expect(c >= 0x80, 0)) return escape_utf8(o, s, pi, n);
    if (__builtin_expect(c == 0x1B && (flags & AW_XML_STRIP_ANSI), 0)) {
        *pi = i + ansi_len(s, i, n);
        return o;
    }
    memcpy(o, ascii_table[c].text, 8);
    *pi = i + 1;
    return o + ascii_table[c].len;
}

#if defined(__SSE2__)
/* Copy len < 16 bytes with at most two overlapping loads, reading nothing
 * outside p[0..len). */
static inline void copy_short(char *o, const unsigned char *p, size_t len) {
    if (len >= 8) {
        uint64_t a, b;
        memcpy(&a, p, 8);
        memcpy(&b, p + len - 8, 8);
        memcpy(o, &a, 8);
        memcpy(o + len - 8, &b, 8);
    } else if (len >= 4) {
        uint32_t a, b;
        memcpy(&a, p, 4);
        memcpy(&b, p + len - 4, 4);
        memcpy(o, &a, 4);
        memcpy(o + len - 4, &b, 4);
    } else if (len) {
        o[0] = (char)p[0];
        o[len / 2] = (char)p[len / 2];
        o[len - 1] = (char)p[len - 1];
    }
}

/* Bit i set when byte i needs more than a copy. The markup characters are
 * found in pairs: & (0x26) and ' (0x27) are the bytes with (b | 1) == 0x27,
 * < (0x3C) and > (0x3E) those with (b | 2) == 0x3E; tab (0x09) and CR
 * (0x0D) those with (b | 4) == 0x0D. The signed compare below 0x20 takes
 * the controls and every byte >= 0x80. */
static inline unsigned attention(__m128i v) {
    const __m128i amp_apos = _mm_cmpeq_epi8(_mm_or_si128(v, _mm_set1_epi8(1)), _mm_set1_epi8(0x27));
    const __m128i lt_gt = _mm_cmpeq_epi8(_mm_or_si128(v, _mm_set1_epi8(2)), _mm_set1_epi8(0x3E));
    const __m128i quot = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
    const __m128i tab_cr = _mm_cmpeq_epi8(_mm_or_si128(v, _mm_set1_epi8(4)), _mm_set1_epi8(0x0D));
    const __m128i lf = _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'));
    const __m128i low = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
    const __m128i ctl = _mm_andnot_si128(_mm_or_si128(tab_cr, lf), low);
    return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(amp_apos, lt_gt), _mm_or_si128(quot, ctl)));
}

/* Walk the marked bytes of the 16 at s[base..base+16) from *pi on (every
 * byte before the first mark already written at o); the plain bytes
 * between marks are copied here. Returns with *pi after the last mark's
 * character, which may lie past the 16. */
static inline __attribute__((always_inline)) char *walk_marks(char *o, const unsigned char *s, size_t base,
                                                              unsigned mask, size_t *pi, size_t n,
                                                              unsigned flags) {
    size_t i = *pi;
    for (;;) {
        size_t q = base + (unsigned)__builtin_ctz(mask);
        /* the plain bytes before the mark (often none: stored anyway) */
        if (i + 16 <= n)
            _mm_storeu_si128((__m128i *)o, _mm_loadu_si128((const __m128i *)(s + i)));
        else
            copy_short(o, s + i, q - i);
        o += q - i;
        i = q;
        o = escape_one(o, s, &i, n, flags);
        size_t done = i - base;
        if (done >= 16) break;
        mask &= ~0u << done;
        if (!mask) break;
    }
    *pi = i;
    return o;
}

/* Copy the plain bytes s[0..len), len < 64, as four 16-byte stores
 * whatever len is (a loop would mispredict its count at almost every
 * mark): reads s[0..64) and writes o[0..64). */
static inline void copy64(char *o, const unsigned char *s) {
    const __m128i a = _mm_loadu_si128((const __m128i *)s);
    const __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
    const __m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
    const __m128i d = _mm_loadu_si128((const __m128i *)(s + 48));
    _mm_storeu_si128((__m128i *)o, a);
    _mm_storeu_si128((__m128i *)(o + 16), b);
    _mm_storeu_si128((__m128i *)(o + 32), c);
    _mm_storeu_si128((__m128i *)(o + 48), d);
}

/* The vector escaper for every x86-64 CPU. */
static char *escape_span_sse2(char *o, const unsigned char *s, size_t *pi, size_t end, size_t n, unsigned flags) {
    size_t i = *pi;
    /* 64 bytes a round: one mark every 40 bytes or so is common in prose
     * and code, so most rounds have work; walking one 64-bit mask costs
     * fewer mispredicted branches than four 16-bit ones. The rounds step
     * by 64 from where they started whatever the walk did (a character
     * that runs past the round only masks the next one's first bits), so
     * the next round's loads never wait for this round's walk. */
    size_t at = i;
    while (at < end && at + 128 <= n) {
        const __m128i v0 = _mm_loadu_si128((const __m128i *)(s + at));
        const __m128i v1 = _mm_loadu_si128((const __m128i *)(s + at + 16));
        const __m128i v2 = _mm_loadu_si128((const __m128i *)(s + at + 32));
        const __m128i v3 = _mm_loadu_si128((const __m128i *)(s + at + 48));
        uint64_t mask = (uint64_t)attention(v0) | (uint64_t)attention(v1) << 16 |
                        (uint64_t)attention(v2) << 32 | (uint64_t)attention(v3) << 48;
        if (__builtin_expect(i != at, 0)) {
            /* the last round's character ran into this one */
            size_t skip = i - at;
            if (skip >= 64) {
                at = i;
                continue;
            }
            mask &= ~0ull << skip;
            size_t q = mask ? at + (size_t)__builtin_ctzll(mask) : at + 64;
            copy64(o, s + i);
            o += q - i;
            i = q;
        } else {
            _mm_storeu_si128((__m128i *)o, v0);
            _mm_storeu_si128((__m128i *)(o + 16), v1);
            _mm_storeu_si128((__m128i *)(o + 32), v2);
            _mm_storeu_si128((__m128i *)(o + 48), v3);
            size_t k = mask ? (size_t)__builtin_ctzll(mask) : 64;
            i += k;
            o += k;
        }
        while (mask) {
            o = escape_one(o, s, &i, n, flags);
            size_t done = i - at;
            if (done >= 64) break;
            mask &= ~0ull << done;
            size_t q = mask ? at + (size_t)__builtin_ctzll(mask) : at + 64;
            copy64(o, s + i);
            o += q - i;
            i = q;
        }
        at += 64;
    }
    while (i < end && i + 16 <= n) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        unsigned mask = attention(v);
        _mm_storeu_si128((__m128i *)o, v);
        if (!mask) {
            i += 16;
            o += 16;
            continue;
        }
        unsigned k = (unsigned)__builtin_ctz(mask);
        size_t base = i;
        i += k;
        o += k;
        o = walk_marks(o, s, base, mask, &i, n, flags);
    }
    if (i < end && i < n) {
        /* the last bytes (fewer than 16 left): classify the final 16 of
         * the string, or a copy padded with spaces when it is shorter */
        size_t base;
        unsigned mask;
        if (n >= 16) {
            base = n - 16;
            mask = attention(_mm_loadu_si128((const __m128i *)(s + base))) & (~0u << (i - base));
        } else {
            unsigned char tmp[16];
            memset(tmp, ' ', 16);
            copy_short((char *)tmp, s, n);
            base = 0;
            mask = attention(_mm_loadu_si128((const __m128i *)tmp)) & ((1u << n) - 1) & (~0u << i);
        }
        if (mask) o = walk_marks(o, s, base, mask, &i, n, flags);
        if (i < n) {
            copy_short(o, s + i, n - i);
            o += n - i;
            i = n;
        }
    }
    *pi = i;
    return o;
}

#if AW_XML_AVX2
/* With AVX2 the marks of a whole chunk (up to 1 KB) are listed first and
 * then walked: the walk's loop runs once per mark with no exit at every
 * 64 bytes, whose outcome (another mark in this round or not?) the branch
 * predictor cannot know; plain bytes up to the next mark are copied 128
 * at a time. On the thread benchmark's corpus this is about 40% faster
 * than the SSE2 rounds. */
#define AVX2_TARGET "avx2,bmi,popcnt"
#define AVX2_INLINE static inline __attribute__((always_inline, target(AVX2_TARGET)))
#define CHUNK 1024

/* The same marks as attention(), from two table lookups per byte (AVX2's
 * byte shuffle), 32 bytes at a time. A byte is marked when the classes of
 * its low nibble and of its high nibble share a bit:
 *   bit 0  high nibble 0, low nibble not 9, A or D: controls but tab, LF, CR
 *   bit 1  high nibble 1 or 8 to F, any low nibble: controls, bytes >= 0x80
 *   bit 2  high nibble 2, low nibble 2, 6 or 7: " & '
 *   bit 3  high nibble 3, low nibble C or E: < > */
AVX2_INLINE uint32_t marks32_avx2(__m256i v) {
    const __m256i low_class = _mm256_setr_epi8(3, 3, 7, 3, 3, 3, 7, 7, 3, 2, 2, 3, 11, 2, 11, 3, /* */
                                               3, 3, 7, 3, 3, 3, 7, 7, 3, 2, 2, 3, 11, 2, 11, 3);
    const __m256i high_class = _mm256_setr_epi8(1, 2, 4, 8, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2, /* */
                                                1, 2, 4, 8, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2);
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    const __m256i lo = _mm256_shuffle_epi8(low_class, _mm256_and_si256(v, nibble));
    const __m256i hi = _mm256_shuffle_epi8(high_class, _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble));
    const __m256i plain = _mm256_cmpeq_epi8(_mm256_and_si256(lo, hi), _mm256_setzero_si256());
    return ~(uint32_t)_mm256_movemask_epi8(plain);
}

/* Append to p the positions (base + bit) of the marks of the 64 bytes at
 * s; returns how many. Eight are stored whatever the count (p needs room
 * for them), so a block with up to eight marks costs no branch. */
AVX2_INLINE size_t list_marks(uint16_t *p, unsigned base, const unsigned char *s) {
    const __m256i a = _mm256_loadu_si256((const __m256i *)s);
    const __m256i b = _mm256_loadu_si256((const __m256i *)(s + 32));
    uint64_t m = (uint64_t)marks32_avx2(a) | (uint64_t)marks32_avx2(b) << 32;
    size_t count = (size_t)_mm_popcnt_u64(m);
    for (int j = 0; j < 8; j++) {
        p[j] = (uint16_t)(base + _tzcnt_u64(m));
        m = _blsr_u64(m);
    }
    for (p += 8; m; m = _blsr_u64(m)) *p++ = (uint16_t)(base + _tzcnt_u64(m));
    return count;
}

/* Copy len bytes 128 at a time: reads and writes up to 127 bytes more. */
AVX2_INLINE char *copy_gap(char *o, const unsigned char *p, size_t len) {
    size_t k = 0;
    do {
        const __m256i a = _mm256_loadu_si256((const __m256i *)(p + k));
        const __m256i b = _mm256_loadu_si256((const __m256i *)(p + k + 32));
        const __m256i c = _mm256_loadu_si256((const __m256i *)(p + k + 64));
        const __m256i d = _mm256_loadu_si256((const __m256i *)(p + k + 96));
        _mm256_storeu_si256((__m256i *)(o + k), a);
        _mm256_storeu_si256((__m256i *)(o + k + 32), b);
        _mm256_storeu_si256((__m256i *)(o + k + 64), c);
        _mm256_storeu_si256((__m256i *)(o + k + 96), d);
        k += 128;
    } while (k < len);
    return o + len;
}

/* Escape the chunk s[*pi..*pi+len), len a multiple of 64 up to CHUNK,
 * stopping at n if that comes first. Copies read up to 128 bytes past
 * the chunk, which must be there. */
AVX2_INLINE char *escape_chunk(char *o, const unsigned char *s, size_t *pi, size_t len, size_t n,
                               unsigned flags) {
    uint16_t pos[CHUNK + 8];
    size_t i = *pi, at = i, stop = at + len < n ? at + len : n, count = 0;
    for (unsigned b = 0; b < len; b += 64) count += list_marks(pos + count, b, s + at + b);
    for (size_t k = 0; k < count; k++) {
        size_t q = at + pos[k];
        if (q < i) continue; /* inside the character before */
        o = copy_gap(o, s + i, q - i);
        i = q;
        o = escape_one(o, s, &i, n, flags);
    }
    if (i < stop) {
        o = copy_gap(o, s + i, stop - i);
        i = stop;
    }
    *pi = i;
    return o;
}

/* Chunks that end at least 128 bytes before the end of the string (for
 * the copies) and not after `end` (the caller's reservation covers up to
 * there). When the span goes to the end of the string, its last bytes
 * (under 192) are escaped from a copy padded with spaces, which are plain;
 * otherwise the rest is the SSE2 escaper's. */
__attribute__((target(AVX2_TARGET))) static char *escape_span_avx2(char *o, const unsigned char *s, size_t *pi,
                                                                   size_t end, size_t n, unsigned flags) {
    size_t i = *pi;
    while (i < end) {
        size_t len = end - i;
        if (n - i < 128 + len) len = n - i >= 128 ? n - i - 128 : 0;
        if (len > CHUNK) len = CHUNK;
        len &= ~(size_t)63;
        if (len == 0) break;
        o = escape_chunk(o, s, &i, len, n, flags);
    }
    if (i < end && end == n) {
        unsigned char tail[192 + 128];
        size_t t = n - i, j = 0;
        memcpy(tail, s + i, t);
        memset(tail + t, ' ', sizeof tail - t);
        o = escape_chunk(o, tail, &j, (t + 63) & ~(size_t)63, t, flags);
        i = n;
    }
    *pi = i;
    return escape_span_sse2(o, s, pi, end, n, flags);
}
#endif
#endif /* __SSE2__ */

/* A byte at a time: the portable escaper, and the reference the vector
 * ones are tested against. */
static char *escape_span_scalar(char *o, const unsigned char *s, size_t *pi, size_t end, size_t n,
                                unsigned flags) {
    size_t i = *pi;
    while (i < end) {
        if (plain_byte(s[i])) *o++ = (char)s[i++];
        else o = escape_one(o, s, &i, n, flags);
    }
    *pi = i;
    return o;
}

aw__xml_isa aw__xml_isa_best(void) {
#if AW_XML_AVX2
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("popcnt"))
        return AW__XML_AVX2;
#endif
#if defined(__SSE2__)
    return AW__XML_SSE2;
#else
    return AW__XML_SCALAR;
#endif
}

char *aw__xml_escape_span_isa(aw__xml_isa isa, char *o, const char *str, size_t *pi, size_t end, size_t n,
                              unsigned flags) {
    const unsigned char *s = (const unsigned char *)str;
    switch (isa) {
#if AW_XML_AVX2
    case AW__XML_AVX2: return escape_span_avx2(o, s, pi, end, n, flags);
#endif
#if defined(__SSE2__)
    case AW__XML_SSE2: return escape_span_sse2(o, s, pi, end, n, flags);
#endif
    default: return escape_span_scalar(o, s, pi, end, n, flags);
    }
}

char *aw__xml_escape_span(char *o, const char *str, size_t *pi, size_t end, size_t n, unsigned flags) {
    return aw__xml_escape_span_isa(aw__xml_isa_best(), o, str, pi, end, n, flags);
}

/* Worst case growth: one input byte becomes at most 6 output bytes
 * ("&quot;"). Input is taken in blocks so that one reservation per block
 * covers every write in it: AW__XML_ESCAPE_ROOM allows for the walk of a
 * block's last round finishing a character past the block and for vector
 * stores running past the bytes they keep. */
#define BLOCK 4096

int aw_xml_escape(aw_buf *out, const char *str, size_t n, unsigned flags) {
    size_t i = 0;
    for (;;) {
        size_t end = n - i > BLOCK ? i + BLOCK : n;
        size_t room = AW__XML_ESCAPE_ROOM(end - i);
        /* the common case (room already there) costs no call */
        if ((!out->data || out->cap - out->len <= room) && aw_buf_reserve(out, room)) {
            if (out->data) out->data[out->len] = '\0';
            return AW_ENOMEM;
        }
        if (i >= n) break;
        char *o = aw__xml_escape_span(out->data + out->len, str, &i, end, n, flags);
        out->len = (size_t)(o - out->data);
        if (i >= n) break;
    }
    out->data[out->len] = '\0';
    return 0;
}

int aw_xml_is_clean(const char *str, size_t n) {
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
#if defined(__SSE2__)
    while (i + 16 <= n) {
        unsigned mask = attention(_mm_loadu_si128((const __m128i *)(s + i)));
        if (!mask) {
            i += 16;
            continue;
        }
        i += (unsigned)__builtin_ctz(mask);
        unsigned char c = s[i];
        if (c < 0x80) return 0;
        size_t len = aw__utf8_seq_len(s + i, n - i);
        if (len == 0) return 0;
        if (len == 3 && c == 0xEF && s[i + 1] == 0xBF && (s[i + 2] == 0xBE || s[i + 2] == 0xBF)) return 0;
        i += len;
    }
#endif
    while (i < n) {
        unsigned char c = s[i];
        if (plain_byte(c)) {
            i++;
            continue;
        }
        if (c < 0x80) return 0;
        size_t len = aw__utf8_seq_len(s + i, n - i);
        if (len == 0) return 0;
        if (len == 3 && c == 0xEF && s[i + 1] == 0xBF && (s[i + 2] == 0xBE || s[i + 2] == 0xBF)) return 0;
        i += len;
    }
    return 1;
}
