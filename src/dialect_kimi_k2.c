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
    return aw__dialect_scan_section(s, p, n, at_end, section_begin, section_end, call_end);
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
    aw_text json = {p + at + LEN(arg_begin), n - at - LEN(arg_begin)};
    return aw__dialect_object_call(out, "kimi_k2", name, json, raw, "after <|tool_call_argument_begin|>");
}

static int parse(const char *p, size_t n, aw_dialect_out *out) {
    aw_text raw = {p, n};
    size_t end = n;
    if (n >= LEN(section_end) && !memcmp(p + n - LEN(section_end), section_end, LEN(section_end)))
        end = n - LEN(section_end);
    aw_text seg;
    size_t i = aw__dialect_next_span(p, end, 0, call_begin, LEN(call_begin), call_end, LEN(call_end), &seg);
    if (i == SIZE_MAX)
        return out->malformed(out, "kimi_k2", AW__DIALECT_NO_TEXT, AW_REJECT_EMPTY_PAYLOAD,
                              "A <|tool_calls_section_begin|> section holds no <|tool_call_begin|>.");
    while (i != SIZE_MAX) {
        int rc = one_call(seg.ptr, seg.len, raw, out);
        if (rc < 0) return rc;
        i = aw__dialect_next_span(p, end, i, call_begin, LEN(call_begin), call_end, LEN(call_end), &seg);
    }
    return 0;
}

static const aw_dialect_trigger triggers[] = {
    {section_begin, LEN(section_begin), AW_DT_ANYWHERE},
    {call_begin, LEN(call_begin), AW_DT_ANYWHERE},
};

const aw_dialect aw__dialect_kimi_k2 = {"kimi_k2", AW_DIALECT_KIMI_K2, triggers, 2, NULL, NULL, 0, scan, parse, NULL};
