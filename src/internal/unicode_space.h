/* White space as Unicode defines it, for judging whether text is blank.
 *
 * A model's "empty" payload is not always ASCII blanks: a FINAL report of
 * one U+00A0 NO-BREAK SPACE or U+3000 IDEOGRAPHIC SPACE shows nothing and
 * must count as empty. */
#ifndef AW_INTERNAL_UNICODE_SPACE_H
#define AW_INTERNAL_UNICODE_SPACE_H

#include <stddef.h>

#include "internal/utf8.h"

/* The code points with the White_Space property (Unicode 15: U+0009..000D,
 * U+0020, U+0085, U+00A0, U+1680, U+2000..200A, U+2028, U+2029, U+202F,
 * U+205F, U+3000), and the zero-width spaces U+200B, U+2060 and U+FEFF,
 * which show nothing either. */
static inline int aw__is_unicode_space(uint32_t cp) {
    if (cp <= 0x20) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D);
    if (cp < 0x85) return 0;
    return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200B) || cp == 0x2028 ||
           cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x2060 || cp == 0x3000 || cp == 0xFEFF;
}

/* Byte length of the space character at p (n bytes available), or 0 when
 * p does not start with one (bytes that are not UTF-8 are not space). */
static inline size_t aw__unicode_space_len(const char *p, size_t n) {
    const unsigned char *u = (const unsigned char *)p;
    if (n == 0) return 0;
    if (u[0] < 0x80) return aw__is_unicode_space(u[0]) ? 1 : 0;
    size_t len = aw__utf8_seq_len(u, n);
    return len && aw__is_unicode_space(aw__utf8_decode(u, len)) ? len : 0;
}

/* 1 when s[0..n) holds nothing but such spaces (or nothing at all). */
static inline int aw__is_blank_text(const char *s, size_t n) {
    size_t i = 0, k;
    while (i < n && (k = aw__unicode_space_len(s + i, n - i))) i += k;
    return i == n;
}

#endif
