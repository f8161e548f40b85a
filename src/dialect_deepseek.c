/* DeepSeek's special tokens, V3/R1 and V3.1:
 *
 *   V3.1: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜><｜tool▁calls▁end｜>
 *   V3:   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
 *         ```json
 *         {json}
 *         ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>
 *
 * A section without its closing token runs to the end of the reply; a
 * call whose begin or end token was dropped is still read when its
 * separator is there. */
#include <string.h>

#include "internal/dialect.h"

static const char calls_begin[] = "<｜tool▁calls▁begin｜>";
static const char calls_end[] = "<｜tool▁calls▁end｜>";
static const char call_begin[] = "<｜tool▁call▁begin｜>";
static const char call_end[] = "<｜tool▁call▁end｜>";
static const char sep[] = "<｜tool▁sep｜>";
#define LEN(s) (sizeof(s) - 1)

/* A section ends at its closing token; a lone call (no section token)
 * at its call-end token. */
static long scan(aw_dialect_scan *s, const char *p, size_t n, int at_end) {
    return aw__dialect_scan_section(s, p, n, at_end, calls_begin, calls_end, call_end);
}

/* The JSON of one call, fenced (V3) or not (V3.1). */
static aw_text unfence(aw_text a) {
    a = aw__dialect_trim(a.ptr, a.len);
    if (a.len >= 3 && !memcmp(a.ptr, "```", 3)) {
        const char *nl = memchr(a.ptr, '\n', a.len);
        if (nl) a = (aw_text){nl + 1, a.len - (size_t)(nl + 1 - a.ptr)};
        else a = (aw_text){a.ptr + 3, a.len - 3};
        if (a.len >= 3 && !memcmp(a.ptr + a.len - 3, "```", 3)) a.len -= 3;
        a = aw__dialect_trim(a.ptr, a.len);
    }
    return a;
}

static int one_call(const char *p, size_t n, aw_text raw, aw_dialect_out *out) {
    size_t at = aw__dialect_find(p, n, 0, sep, LEN(sep));
    if (at == SIZE_MAX)
        return out->malformed(out, "deepseek", AW__DIALECT_NO_TEXT, AW_REJECT_MALFORMED_CALL,
                              "A call is written <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{arguments}<｜tool▁call▁end｜>.");
    aw_text head = aw__dialect_trim(p, at);
    aw_text rest = {p + at + LEN(sep), n - at - LEN(sep)};
    aw_text name = head;
    if (head.len == 8 && !memcmp(head.ptr, "function", 8)) {
        /* V3: the name is the first line after the separator */
        rest = aw__dialect_trim(rest.ptr, rest.len);
        const char *nl = memchr(rest.ptr, '\n', rest.len);
        size_t k = nl ? (size_t)(nl - rest.ptr) : rest.len;
        name = aw__dialect_trim(rest.ptr, k);
        rest = (aw_text){rest.ptr + k, rest.len - k};
    }
    if (!name.len)
        return out->malformed(out, "deepseek", AW__DIALECT_NO_TEXT, AW_REJECT_MALFORMED_CALL,
                              "A call names its tool before <｜tool▁sep｜> (V3.1) or on the line after it (V3).");
    return aw__dialect_object_call(out, "deepseek", name, unfence(rest), raw, "after <｜tool▁sep｜>");
}

static int parse(const char *p, size_t n, aw_dialect_out *out) {
    aw_text raw = {p, n};
    size_t i = 0;
    if (n >= LEN(calls_begin) && !memcmp(p, calls_begin, LEN(calls_begin))) i = LEN(calls_begin);
    size_t end = n;
    if (n >= LEN(calls_end) && !memcmp(p + n - LEN(calls_end), calls_end, LEN(calls_end))) end = n - LEN(calls_end);
    int any = 0;
    aw_text seg;
    for (;;) {
        size_t next = aw__dialect_next_span(p, end, i, call_begin, LEN(call_begin), call_end, LEN(call_end), &seg);
        if (next == SIZE_MAX) {
            /* no begin token: what is left is one call, if it is anything */
            seg = aw__dialect_trim(p + i, end - i);
            if (!seg.len) break;
            next = end;
        }
        int rc = one_call(seg.ptr, seg.len, raw, out);
        if (rc < 0) return rc;
        any = 1;
        i = next;
    }
    if (!any)
        return out->malformed(out, "deepseek", AW__DIALECT_NO_TEXT, AW_REJECT_EMPTY_PAYLOAD,
                              "A <｜tool▁calls▁begin｜> section holds no call.");
    return 0;
}

static const aw_dialect_trigger triggers[] = {
    {calls_begin, LEN(calls_begin), AW_DT_ANYWHERE},
    {call_begin, LEN(call_begin), AW_DT_ANYWHERE},
};

const aw_dialect aw__dialect_deepseek = {"deepseek", AW_DIALECT_DEEPSEEK, triggers, 2, NULL, NULL, 0, scan, parse, NULL};
