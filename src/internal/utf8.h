/* UTF-8 helpers shared by every module that reads or writes text. */
#ifndef AW_INTERNAL_UTF8_H
#define AW_INTERNAL_UTF8_H

#include <stddef.h>
#include <stdint.h>

#include "agentwire/buf.h"

/* Length (1..4) of the well-formed UTF-8 sequence at p (n bytes available),
 * or 0 when the bytes there are not well-formed UTF-8: overlong forms,
 * surrogates (ED A0..BF ..), code points above U+10FFFF, stray continuation
 * bytes and truncated sequences are all rejected. Inline: the readers and
 * writers call it for every non-ASCII character. */
static inline size_t aw__utf8_seq_len(const unsigned char *p, size_t n) {
    if (n == 0) return 0;
    unsigned c = p[0];
    if (c < 0x80) return 1;
    if (c < 0xC2) return 0; /* continuation byte or overlong 2-byte lead */
    if (c < 0xE0) return n >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c < 0xF0) {
        if (n < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
        if (c == 0xE0 && p[1] < 0xA0) return 0;  /* overlong */
        if (c == 0xED && p[1] >= 0xA0) return 0; /* surrogate */
        return 3;
    }
    if (c < 0xF5) {
        if (n < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
        if (c == 0xF0 && p[1] < 0x90) return 0; /* overlong */
        if (c == 0xF4 && p[1] >= 0x90) return 0; /* above U+10FFFF */
        return 4;
    }
    return 0;
}

/* 1 when p starts with the 3-byte generalized form of a surrogate code point
 * (ED A0..BF 80..BF), which is how a lone "\udxxx" escape is kept. */
static inline int aw__utf8_is_surrogate(const unsigned char *p, size_t n) {
    return n >= 3 && p[0] == 0xED && p[1] >= 0xA0 && p[1] <= 0xBF && (p[2] & 0xC0) == 0x80;
}

/* Length (1..3) of the maximal subpart at p, where the bytes at p (n > 0
 * available) are not well-formed UTF-8: the longest run that starts a
 * well-formed sequence without completing it, or 1 when not even p[0]
 * does. This is the unit the Unicode Standard (chapter 3, "U+FFFD
 * substitution of maximal subparts") replaces by one U+FFFD, and what
 * WHATWG decoders do: E2 82 is one, ED A0 80 (a surrogate's form, whose
 * ED cannot go on with A0) is three, F0 80 is two, 80 is one. */
size_t aw__utf8_subpart_len(const unsigned char *p, size_t n);

/* The bytes one U+FFFD replaces at p, where the bytes are not well-formed
 * UTF-8, in a string out of the JSON reader (a "decoded" string): there a
 * surrogate's 3-byte form stands for one lone "\udxxx" escape, one UTF-16
 * code unit, which is one U+FFFD as JavaScript's TextEncoder makes it;
 * anything else is its maximal subpart. Raw bytes from outside are not
 * decoded strings: they are scrubbed with aw__utf8_subpart_len first
 * (aw_utf8_scrub), so that a surrogate form in them counts three. */
static inline size_t aw__utf8_invalid_len(const unsigned char *p, size_t n) {
    return aw__utf8_is_surrogate(p, n) ? 3 : aw__utf8_subpart_len(p, n);
}

/* Append s[0..n) to out with each invalid unit replaced by U+FFFD: units
 * of aw__utf8_invalid_len when `decoded`, else maximal subparts. The one
 * place that makes text valid UTF-8; every writer that can meet invalid
 * bytes uses it or the two length functions above. */
int aw__utf8_scrub(aw_buf *out, const char *s, size_t n, int decoded);

/* Length of the longest well-formed prefix of s[0..n). */
size_t aw__utf8_valid_prefix(const char *s, size_t n);

/* Decode the sequence at p of length len (as returned by aw__utf8_seq_len, or
 * 3 for a surrogate form). */
uint32_t aw__utf8_decode(const unsigned char *p, size_t len);

/* Encode cp (any value below 0x110000, surrogates included) into out (at
 * least 4 bytes); returns the number of bytes written. */
size_t aw__utf8_encode(uint32_t cp, char *out);

/* Count code points in s[0..n); each invalid byte counts as one. */
size_t aw__utf8_count(const char *s, size_t n);

/* Byte length of the longest prefix of s[0..n) holding at most max_chars code
 * points, never ending inside a well-formed sequence. */
size_t aw__utf8_prefix(const char *s, size_t n, size_t max_chars);

/* Byte length of the longest prefix of s[0..n) of at most max_bytes bytes
 * that does not end inside a well-formed multi-byte sequence. */
size_t aw__utf8_clip(const char *s, size_t n, size_t max_bytes);

/* Index of the first byte at or after i that is >= 0x80 (n if none); the
 * ASCII fast path for validators. */
size_t aw__utf8_skip_ascii(const unsigned char *s, size_t i, size_t n);

#endif
