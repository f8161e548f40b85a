/* agentwire — bytes from outside made valid UTF-8.
 *
 * Everything agentwire writes is valid UTF-8. Text that comes in as raw
 * bytes (a model's reply read from a file, a prompt) may not be; this is
 * how it is made so, the Unicode Standard's way (chapter 3, "U+FFFD
 * substitution of maximal subparts", which WHATWG decoders follow): each
 * maximal subpart of an ill-formed sequence becomes one U+FFFD. So
 * E2 82 (a character cut short) is one U+FFFD, and a surrogate encoded in
 * three bytes (ED A0 80), which UTF-8 forbids, is three; two such (CESU-8's
 * form of an astral character) are six, never the astral character. */
#ifndef AGENTWIRE_UTF8_H
#define AGENTWIRE_UTF8_H

#include <stddef.h>

#include "buf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Append s[0..n) to out, each maximal invalid subpart replaced by U+FFFD
 * (EF BF BD). Valid UTF-8 is appended unchanged. */
int aw_utf8_scrub(aw_buf *out, const char *s, size_t n);

/* 1 when s[0..n) is well-formed UTF-8 (no surrogates, overlongs, or code
 * points above U+10FFFF), else 0. */
int aw_utf8_is_valid(const char *s, size_t n);

#ifdef __cplusplus
}
#endif
#endif
