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
#include <stdio.h>
#include <string.h>

#include "internal/dialect.h"

static const char calls_begin[] = "<｜tool▁calls▁begin｜>";
static const char calls_end[] = "<｜tool▁calls▁end｜>";
static const char call_begin[] = "<｜tool▁call▁begin｜>";
static const char call_end[] = "<｜tool▁call▁end｜>";
static const char sep[] = "<｜tool▁sep｜>";
#define LEN(s) (sizeof(s) - 1)

/* A section ends at its closing token; a lone call (no section token)
 * at its call-end token, unless another call follows. */
static long scan(aw_dialect_scan *s, const char *p, size_t n, int at_end) {
    int section = !memcmp(p, calls_begin, n < LEN(calls_begin) ? n : LEN(calls_begin));
    const char *close = section ? calls_end : call_end;
    size_t len = section ? LEN(calls_end) : LEN(call_end);
    size_t from = s->pos ? s->pos : 1;
    size_t at = aw__dialect_find(p, n, from, close, len);
    if (at == SIZE_MAX) {
        s->pos = aw__dialect_resume(n, len) > from ? aw__dialect_resume(n, len) : from;
        return at_end ? (long)n : AW_DIALECT_MORE;
    }
    return (long)(at + len);
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
    aw_text json = unfence(rest);
    if (!json.len) return out->call(out, "deepseek", name, NULL, raw, 0);
    aw_json_doc *doc;
    unsigned repairs;
    int rc = aw__dialect_parse_json(out->alloc, json.ptr, json.len, &doc, &repairs);
    if (rc) return rc;
    if (!aw_json_is_object(aw_json_doc_root(doc))) {
        aw_json_doc_free(doc);
        char msg[240];
        snprintf(msg, sizeof msg, "The arguments of `%.*s` after <｜tool▁sep｜> must be one JSON object.",
                 (int)(name.len > 64 ? 64 : name.len), name.ptr);
        return out->malformed(out, "deepseek", name, AW_REJECT_INVALID_JSON, msg);
    }
    rc = out->call(out, "deepseek", name, aw_json_doc_root(doc), raw, repairs);
    aw_json_doc_free(doc);
    return rc;
}

static int parse(const char *p, size_t n, aw_dialect_out *out) {
    aw_text raw = {p, n};
    size_t i = 0;
    if (n >= LEN(calls_begin) && !memcmp(p, calls_begin, LEN(calls_begin))) i = LEN(calls_begin);
    size_t end = n;
    if (n >= LEN(calls_end) && !memcmp(p + n - LEN(calls_end), calls_end, LEN(calls_end))) end = n - LEN(calls_end);
    int any = 0;
    while (i < end) {
        size_t b = aw__dialect_find(p, end, i, call_begin, LEN(call_begin));
        if (b == SIZE_MAX) {
            /* no begin token: the rest is one call, if it has a separator */
            aw_text t = aw__dialect_trim(p + i, end - i);
            if (!t.len) break;
            b = (size_t)(t.ptr - p) - LEN(call_begin);
        }
        size_t cb = b + LEN(call_begin);
        size_t next = aw__dialect_find(p, end, cb, call_begin, LEN(call_begin));
        size_t limit = next != SIZE_MAX ? next : end;
        size_t ce = aw__dialect_find(p, limit, cb, call_end, LEN(call_end));
        int rc = one_call(p + cb, (ce != SIZE_MAX ? ce : limit) - cb, raw, out);
        if (rc < 0) return rc;
        any = 1;
        i = ce != SIZE_MAX ? ce + LEN(call_end) : limit;
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

const aw_dialect aw__dialect_deepseek = {"deepseek", AW_DIALECT_DEEPSEEK, triggers, 2, NULL, NULL, 0, scan, parse};
