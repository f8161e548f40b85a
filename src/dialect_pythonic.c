/* The pythonic dialect (Llama 3.2 and 4, OLMo, LFM): a Python list of
 * calls with keyword arguments and Python literals.
 *
 *   [get_weather(city='San Francisco', metric='celsius'), get_time()]
 *
 * Nothing announces it, so it is a candidate only at the start of a line,
 * as "[NAME(", and a call only when it names a declared tool: Markdown
 * links, citations and prose in brackets are not calls. */
#include <stdio.h>
#include <string.h>

#include "internal/dialect.h"

static int starts(const char *p, size_t n, int at_end) {
    size_t lim = n < AW_DIALECT_LOOKAHEAD ? n : AW_DIALECT_LOOKAHEAD;
    int more = !at_end && lim == n;
    if (p[0] != '[') return 0;
    size_t i = 1;
    while (i < lim && aw__dialect_is_space((unsigned char)p[i])) i++;
    if (i >= lim) return more ? -1 : 0;
    if (!aw__dialect_is_ident((unsigned char)p[i], 1)) return 0;
    while (i < lim && (aw__dialect_is_ident((unsigned char)p[i], 0) || p[i] == '.')) i++;
    while (i < lim && (p[i] == ' ' || p[i] == '\t')) i++;
    if (i >= lim) return more ? -1 : 0;
    return p[i] == '(';
}

static long scan(aw_dialect_scan *s, const char *p, size_t n, int at_end) {
    return aw__dialect_scan_value(s, p, n, at_end, 1);
}

static int parse(const char *p, size_t n, aw_dialect_out *out) {
    aw_text raw = {p, n};
    aw_json_doc *doc = aw_json_doc_new(out->alloc);
    if (!doc) return AW_ENOMEM;
    /* first pass: read every call; the list is calls when one of them
     * names a declared tool */
    enum { MAX_CALLS = 64 };
    aw_text names[MAX_CALLS];
    aw_json_value *args[MAX_CALLS];
    size_t count = 0, pos = 1, declared = 0;
    const char *why = NULL;
    int rc = 0;
    for (;;) {
        while (pos < n && aw__dialect_is_space((unsigned char)p[pos])) pos++;
        if (pos < n && p[pos] == ']') break;
        if (count == MAX_CALLS) {
            why = "there are more calls than one reply may make";
            rc = AW_ESYNTAX;
            break;
        }
        rc = aw__pylit_call(p, n, &pos, out->alloc, doc, &names[count], &args[count], &why);
        if (rc) break;
        if (out->tool(out, names[count])) declared++;
        count++;
        while (pos < n && aw__dialect_is_space((unsigned char)p[pos])) pos++;
        if (pos < n && p[pos] == ',') pos++;
        else if (pos >= n || p[pos] != ']') {
            why = "calls in the list must be separated by ','";
            rc = AW_ESYNTAX;
            break;
        }
    }
    if (rc == AW_ENOMEM) {
        aw_json_doc_free(doc);
        return rc;
    }
    if (!declared) {
        aw_json_doc_free(doc);
        return AW_DIALECT_NOT_A_CALL;
    }
    if (rc) {
        char msg[240];
        snprintf(msg, sizeof msg, "Write calls as [NAME(key=value, ...), ...] with Python literals; here %s.", why);
        rc = out->malformed(out, "pythonic", AW__DIALECT_NO_TEXT, AW_REJECT_MALFORMED_CALL, msg);
    }
    for (size_t i = 0; !rc && i < count; i++) rc = out->call(out, "pythonic", names[i], args[i], raw, 0);
    aw_json_doc_free(doc);
    return rc;
}

const aw_dialect aw__dialect_pythonic = {"pythonic", AW_DIALECT_PYTHONIC, NULL, 0, starts, "[", 1, scan, parse, NULL};
