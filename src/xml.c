/* XML escaping under the XML 1.0 character policy.
 *
 * The hot loop copies runs of bytes that need nothing (printable ASCII other
 * than the five markup characters) 16 at a time; everything else is looked
 * at one character at a time. */
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "agentwire/error.h"
#include "agentwire/xml.h"
#include "internal/utf8.h"

static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */

static inline int plain_byte(unsigned char c) {
    return c >= 0x20 && c < 0x80 && c != '&' && c != '<' && c != '>' && c != '"' && c != '\'';
}

/* Index of the first byte at or after i that is not plain: markup
 * characters, controls, and every byte >= 0x80. */
static inline size_t plain_run(const unsigned char *s, size_t i, size_t n) {
    while (i < n && plain_byte(s[i])) i++;
    return i;
}

#if defined(__SSE2__)
static inline unsigned special_mask(const unsigned char *p, __m128i *out) {
    const __m128i v = _mm_loadu_si128((const __m128i *)p);
    __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('&')), _mm_cmpeq_epi8(v, _mm_set1_epi8('<'))),
                             _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('>')), _mm_cmpeq_epi8(v, _mm_set1_epi8('"'))));
    m = _mm_or_si128(m, _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\'')), _mm_cmplt_epi8(v, _mm_set1_epi8(0x20))));
    *out = v;
    return (unsigned)_mm_movemask_epi8(m);
}
#endif

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

/* Worst case growth: one input byte becomes at most 6 output bytes
 * ("&quot;"); input is taken in blocks so that one reservation per block
 * covers every write in it, plus 16 bytes of slack for vector stores that
 * run past the bytes they keep. */
#define BLOCK 4096
#define GROWTH 6

int aw_xml_escape(aw_buf *out, const char *str, size_t n, unsigned flags) {
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    if (aw_buf_reserve(out, 0)) return AW_ENOMEM;
    while (i < n) {
        size_t block_end = n - i > BLOCK ? i + BLOCK : n;
        if (aw_buf_reserve(out, (block_end - i) * GROWTH + 16)) return AW_ENOMEM;
        char *o = out->data + out->len;
        while (i < block_end) {
#if defined(__SSE2__)
            if (i + 16 <= n) {
                __m128i v;
                unsigned mask = special_mask(s + i, &v);
                _mm_storeu_si128((__m128i *)o, v);
                if (!mask) {
                    i += 16;
                    o += 16;
                    continue;
                }
                unsigned k = (unsigned)__builtin_ctz(mask);
                i += k;
                o += k;
            } else {
                while (i < n && plain_byte(s[i])) *o++ = (char)s[i++];
                if (i == n) break;
            }
#else
            while (i < n && plain_byte(s[i])) *o++ = (char)s[i++];
            if (i == n) break;
#endif
            unsigned char c = s[i];
            switch (c) {
            case '&': memcpy(o, "&amp;", 5); o += 5; i++; continue;
            case '<': memcpy(o, "&lt;", 4); o += 4; i++; continue;
            case '>': memcpy(o, "&gt;", 4); o += 4; i++; continue;
            case '"': memcpy(o, "&quot;", 6); o += 6; i++; continue;
            case '\'': memcpy(o, "&apos;", 6); o += 6; i++; continue;
            case '\t': case '\n': case '\r': *o++ = (char)c; i++; continue;
            default: break;
            }
            if (c == 0x1B && (flags & AW_XML_STRIP_ANSI)) {
                i += ansi_len(s, i, n);
                continue;
            }
            if (c < 0x20) { /* forbidden in XML 1.0 */
                memcpy(o, replacement, 3);
                o += 3;
                i++;
                continue;
            }
            size_t len = aw__utf8_seq_len(s + i, n - i);
            if (len == 0) {
                /* not UTF-8 (or a surrogate form): one U+FFFD per bad
                 * sequence, a surrogate's three bytes counting as one */
                memcpy(o, replacement, 3);
                o += 3;
                i += aw__utf8_is_surrogate(s + i, n - i) ? 3 : 1;
                continue;
            }
            if (len == 3 && c == 0xEF && s[i + 1] == 0xBF && (s[i + 2] == 0xBE || s[i + 2] == 0xBF))
                memcpy(o, replacement, 3); /* U+FFFE, U+FFFF are not characters */
            else
                memcpy(o, s + i, len);
            o += len;
            i += len;
        }
        out->len = (size_t)(o - out->data);
    }
    out->data[out->len] = '\0';
    return 0;
}

int aw_xml_is_clean(const char *str, size_t n) {
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        i = plain_run(s, i, n);
        if (i == n) return 1;
        unsigned char c = s[i];
        if (c == '\t' || c == '\n' || c == '\r') {
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
