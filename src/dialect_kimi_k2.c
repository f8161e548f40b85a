/* Kimi K2's special tokens:
 *
 *   <|tool_calls_section_begin|>
 *   <|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|>
 *   <|tool_calls_section_end|>
 *
 * The id is functions.NAME:INDEX (or NAME:INDEX); a call with another id
 * is malformed and named so. A section without its closing token runs to
 * the end of the reply. */
#include <stdio.h>
#include <string.h>

#include "internal/dialect.h"

static const char section_begin[] = "<|tool_calls_section_begin|>";
static const char section_end[] = "<|tool_calls_section_end|>";
static const char call_begin[] = "<|tool_call_begin|>";
static const char call_end[] = "<|tool_call_end|>";
static const char arg_begin[] = "<|tool_call_argument_begin|>";
#define LEN(s) (sizeof(s) - 1)

static long scan(aw_dialect_scan *s, const char *p, size_t n, int at_end) {
    int section = !memcmp(p, section_begin, n < LEN(section_begin) ? n : LEN(section_begin));
    const char *close = section ? section_end : call_end;
    size_t len = section ? LEN(section_end) : LEN(call_end);
    size_t from = s->pos ? s->pos : 1;
    size_t at = aw__dialect_find(p, n, from, close, len);
    if (at == SIZE_MAX) {
        s->pos = aw__dialect_resume(n, len) > from ? aw__dialect_resume(n, len) : from;
        return at_end ? (long)n : AW_DIALECT_MORE;
    }
    return (long)(at + len);
}

static int one_call(const char *p, size_t n, aw_text raw, aw_dialect_out *out) {
    size_t at = aw__dialect_find(p, n, 0, arg_begin, LEN(arg_begin));
    aw_text id = aw__dialect_trim(p, at == SIZE_MAX ? n : at);
    /* functions.NAME:INDEX */
    aw_text name = id;
    if (name.len > 10 && !memcmp(name.ptr, "functions.", 10)) name = (aw_text){name.ptr + 10, name.len - 10};
    const char *colon = memchr(name.ptr, ':', name.len);
    int ok = colon && colon > name.ptr && colon + 1 < name.ptr + name.len;
    for (const char *c = colon ? colon + 1 : NULL; ok && c < name.ptr + name.len; c++) ok = *c >= '0' && *c <= '9';
    if (ok) name.len = (size_t)(colon - name.ptr);
    for (size_t i = 0; ok && i < name.len; i++)
        ok = aw__dialect_is_ident((unsigned char)name.ptr[i], 0) || name.ptr[i] == '-' || name.ptr[i] == '.';
    if (!ok || at == SIZE_MAX) {
        char msg[320];
        snprintf(msg, sizeof msg,
                 "The call `%.*s` is not written <|tool_call_begin|>functions.NAME:INDEX<|tool_call_argument_begin|>"
                 "{arguments}<|tool_call_end|>.",
                 (int)(id.len > 64 ? 64 : id.len), id.ptr);
        return out->malformed(out, "kimi_k2", AW__DIALECT_NO_TEXT, AW_REJECT_MALFORMED_CALL, msg);
    }
    aw_text json = aw__dialect_trim(p + at + LEN(arg_begin), n - at - LEN(arg_begin));
    if (!json.len) return out->call(out, "kimi_k2", name, NULL, raw, 0);
    aw_json_doc *doc;
    unsigned repairs;
    int rc = aw__dialect_parse_json(out->alloc, json.ptr, json.len, &doc, &repairs);
    if (rc) return rc;
    if (!aw_json_is_object(aw_json_doc_root(doc))) {
        aw_json_doc_free(doc);
        char msg[240];
        snprintf(msg, sizeof msg, "The arguments of `%.*s` after <|tool_call_argument_begin|> must be one JSON object.",
                 (int)(name.len > 64 ? 64 : name.len), name.ptr);
        return out->malformed(out, "kimi_k2", name, AW_REJECT_INVALID_JSON, msg);
    }
    rc = out->call(out, "kimi_k2", name, aw_json_doc_root(doc), raw, repairs);
    aw_json_doc_free(doc);
    return rc;
}

static int parse(const char *p, size_t n, aw_dialect_out *out) {
    aw_text raw = {p, n};
    size_t end = n;
    if (n >= LEN(section_end) && !memcmp(p + n - LEN(section_end), section_end, LEN(section_end)))
        end = n - LEN(section_end);
    size_t i = aw__dialect_find(p, end, 0, call_begin, LEN(call_begin));
    if (i == SIZE_MAX)
        return out->malformed(out, "kimi_k2", AW__DIALECT_NO_TEXT, AW_REJECT_EMPTY_PAYLOAD,
                              "A <|tool_calls_section_begin|> section holds no <|tool_call_begin|>.");
    while (i != SIZE_MAX) {
        size_t b = i + LEN(call_begin);
        size_t next = aw__dialect_find(p, end, b, call_begin, LEN(call_begin));
        size_t limit = next != SIZE_MAX ? next : end;
        size_t e = aw__dialect_find(p, limit, b, call_end, LEN(call_end));
        int rc = one_call(p + b, (e != SIZE_MAX ? e : limit) - b, raw, out);
        if (rc < 0) return rc;
        i = next;
    }
    return 0;
}

static const aw_dialect_trigger triggers[] = {
    {section_begin, LEN(section_begin), AW_DT_ANYWHERE},
    {call_begin, LEN(call_begin), AW_DT_ANYWHERE},
};

const aw_dialect aw__dialect_kimi_k2 = {"kimi_k2", AW_DIALECT_KIMI_K2, triggers, 2, NULL, NULL, 0, scan, parse};
