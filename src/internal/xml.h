/* XML escaping into memory the caller has already reserved, for writers
 * that build a whole element with one reservation (see aw_xml_escape for
 * the policy: the five entities; forbidden characters and invalid UTF-8
 * become U+FFFD). */
#ifndef AW_INTERNAL_XML_H
#define AW_INTERNAL_XML_H

#include <stddef.h>

/* Bytes to have available at the output to escape k input bytes with
 * aw__xml_escape_span: 6 per byte ("&quot;"), plus what a span may do
 * past its end (finish the 64-byte round and the character it is in) and
 * what vector stores write past the bytes they keep. */
#define AW__XML_ESCAPE_ROOM(k) ((k) * 6 + 1024)

/* Escape str[*pi..end) into o, and possibly a little more: the round of
 * 64 bytes (or 16) that starts before end is finished, and so is the
 * character it ends in, so *pi may stop up to about 100 bytes past end,
 * never past n. n is the length of the whole string, which the UTF-8
 * checks and ANSI sequences may look into. o needs
 * AW__XML_ESCAPE_ROOM(end - *pi) bytes. Returns the new end of the output
 * and moves *pi. No NUL is written. */
char *aw__xml_escape_span(char *o, const char *str, size_t *pi, size_t end, size_t n, unsigned flags);

/* The instruction sets the escaper has a version for. */
typedef enum aw__xml_isa { AW__XML_SCALAR = 0, AW__XML_SSE2, AW__XML_AVX2 } aw__xml_isa;

/* The best one this build and this CPU have: aw__xml_escape_span's. */
aw__xml_isa aw__xml_isa_best(void);

/* aw__xml_escape_span with the given instruction set, which must not be
 * above aw__xml_isa_best() (one that was not built falls back to scalar):
 * for the tests that hold every version to the same output. */
char *aw__xml_escape_span_isa(aw__xml_isa isa, char *o, const char *str, size_t *pi, size_t end, size_t n,
                              unsigned flags);

/* The whole of s[0..n): o needs AW__XML_ESCAPE_ROOM(n) bytes. */
static inline char *aw__xml_escape_to(char *o, const char *s, size_t n, unsigned flags) {
    size_t i = 0;
    return aw__xml_escape_span(o, s, &i, n, n, flags);
}

#endif
