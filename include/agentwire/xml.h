/* agentwire — XML text: escaping under the XML 1.0 character policy.
 *
 * Everything agentwire writes as XML goes through aw_xml_escape, so the
 * output always parses: the five markup characters become entities, and
 * what XML 1.0 forbids (controls other than tab, LF and CR; U+FFFE; U+FFFF;
 * surrogates) and bytes that are not UTF-8 become U+FFFD. */
#ifndef AGENTWIRE_XML_H
#define AGENTWIRE_XML_H

#include <stddef.h>

#include "buf.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    /* Remove ANSI terminal sequences (ESC [ ... final byte, and OSC
     * sequences ESC ] ... BEL or ESC \) instead of replacing their ESC. */
    AW_XML_STRIP_ANSI = 1 << 0
};

/* Append s[0..n) escaped for XML text and attribute values alike:
 * & < > " ' become &amp; &lt; &gt; &quot; &apos;. */
int aw_xml_escape(aw_buf *out, const char *s, size_t n, unsigned flags);

/* 1 when s[0..n) can be written as XML text as it is (no markup
 * characters, nothing forbidden, valid UTF-8). */
int aw_xml_is_clean(const char *s, size_t n);

#ifdef __cplusplus
}
#endif
#endif
