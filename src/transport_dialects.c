/* The tool-call dialects other than the nonce tags, off by default since
 * they carry no nonce: hermes <tool_call>{json}</tool_call>, Anthropic's
 * <function_calls><invoke name=..><parameter name=..>, and fenced
 * {"tool_calls": [...]} in the visible text; and the native calls that came
 * with the reply. */
#include <stdio.h>
#include <string.h>

#include "agentwire/messages.h"
#include "internal/errors.h"
#include "internal/transport_extract.h"
#include "internal/unicode_space.h"

static int dialect_allowed(aw_extractor *x, aw_text tool, const char *source) {
    (void)source;
    if (x->t->mode != AW_TRANSPORT_XML) {
        char msg[160];
        snprintf(msg, sizeof msg, "Call `%.*s` with a native tool call in this session.",
                 (int)(tool.len > 64 ? 64 : tool.len), tool.ptr);
        int rc = aw__extract_reject(x, AW__X_NO_TEXT, tool, AW_REJECT_NOT_ALLOWED_IN_MODE, msg);
        return rc ? rc : 1;
    }
    if (!aw__transport_tool(x->t, tool.ptr, tool.len)) {
        char msg[160];
        snprintf(msg, sizeof msg, "Tool `%.*s` is not available; use one of the tools listed in the notice.",
                 (int)(tool.len > 64 ? 64 : tool.len), tool.ptr);
        int rc = aw__extract_reject(x, AW__X_NO_TEXT, tool, AW_REJECT_TOOL_NOT_ALLOWED, msg);
        return rc ? rc : 1;
    }
    return 0;
}

/* {"name": ..., "arguments": {...} or "{...}"} (also "args", "parameters");
 * `repairs`: what it took to read obj from the payload. */
static int call_from_object(aw_extractor *x, const aw_json_value *obj, aw_text payload, const char *source,
                            unsigned repairs) {
    const aw_json_value *name = aw_json_get(obj, "name");
    if (!aw_json_is_string(name)) {
        return aw__extract_reject(x, AW__X_NO_TEXT, AW__X_NO_TEXT, AW_REJECT_INVALID_JSON,
                                  "A tool call needs a \"name\" string and an \"arguments\" object.");
    }
    aw_text tool = {name->u.str.ptr, name->u.str.len};
    int rc = dialect_allowed(x, tool, source);
    if (rc) return rc < 0 ? rc : 0;
    const aw_json_value *args = aw_json_get(obj, "arguments");
    if (!args) args = aw_json_get(obj, "args");
    if (!args) args = aw_json_get(obj, "parameters");
    if (aw_json_is_string(args)) {
        aw_text inner = {args->u.str.ptr, args->u.str.len};
        rc = aw__extract_tool_call(x, AW__X_NO_TEXT, tool, inner, source, NULL);
        return rc < 0 ? rc : 0;
    }
    if (args && !aw_json_is_object(args)) {
        char msg[160];
        snprintf(msg, sizeof msg, "Tool `%.*s` payload is not valid JSON. Provide a JSON object.",
                 (int)(tool.len > 64 ? 64 : tool.len), tool.ptr);
        return aw__extract_reject(x, AW__X_NO_TEXT, tool, AW_REJECT_INVALID_JSON, msg);
    }
    aw_json_doc *empty = NULL;
    if (!args) {
        aw_json_read_options ro = {x->alloc, 0, false};
        if (aw_json_parse("{}", 2, &ro, &empty, NULL)) return AW_ENOMEM;
        args = aw_json_doc_root(empty);
    }
    rc = aw__extract_emit_call(x, AW__X_NO_TEXT, tool, args, payload, source, repairs);
    aw_json_doc_free(empty);
    return rc;
}

int aw__extract_close_hermes(aw_extractor *x, aw_text payload) {
    if (aw__is_blank_text(payload.ptr, payload.len))
        return aw__extract_reject(x, AW__X_NO_TEXT, AW__X_NO_TEXT, AW_REJECT_EMPTY_PAYLOAD, "A <tool_call> tag is empty.");
    aw_json_doc *doc;
    unsigned repairs;
    if (aw__extract_parse_payload(x, payload.ptr, payload.len, &doc, &repairs)) return AW_ENOMEM;
    if (!doc || !aw_json_is_object(aw_json_doc_root(doc))) {
        aw_json_doc_free(doc);
        return aw__extract_reject(x, AW__X_NO_TEXT, AW__X_NO_TEXT, AW_REJECT_INVALID_JSON,
                                  "A <tool_call> must hold a JSON object with \"name\" and \"arguments\".");
    }
    int rc = call_from_object(x, aw_json_doc_root(doc), payload, "hermes", repairs);
    aw_json_doc_free(doc);
    return rc;
}

/* Find `<tag name="VALUE"` at or after *pos in s; VALUE is returned and
 * *pos moves past the '>' of that tag. */
static int find_named(const char *s, size_t n, size_t *pos, const char *tag, aw_text *value) {
    size_t tlen = strlen(tag);
    size_t i = *pos;
    while (i + tlen + 1 < n) {
        const char *lt = memchr(s + i, '<', n - i);
        if (!lt) return 0;
        i = (size_t)(lt - s) + 1;
        if (i + tlen > n || memcmp(s + i, tag, tlen) != 0) continue;
        size_t j = i + tlen;
        const char *gt = memchr(s + j, '>', n - j);
        if (!gt) return 0;
        size_t end = (size_t)(gt - s);
        const char *name = NULL;
        for (size_t k = j; k + 5 < end; k++)
            if (!memcmp(s + k, "name=", 5)) {
                name = s + k + 5;
                break;
            }
        if (!name || (*name != '"' && *name != '\'')) {
            *pos = end + 1;
            continue;
        }
        char q = *name++;
        const char *qe = memchr(name, q, (size_t)(s + end - name));
        if (!qe) {
            *pos = end + 1;
            continue;
        }
        value->ptr = name;
        value->len = (size_t)(qe - name);
        *pos = end + 1;
        return 1;
    }
    return 0;
}

int aw__extract_close_function_calls(aw_extractor *x, aw_text payload) {
    const char *s = payload.ptr;
    size_t n = payload.len, pos = 0;
    aw_text name;
    int rc = 0, found = 0;
    while (!rc && find_named(s, n, &pos, "invoke", &name)) {
        found = 1;
        const char *end_inv = NULL;
        for (size_t k = pos; k + 9 <= n; k++)
            if (!memcmp(s + k, "</invoke>", 9)) {
                end_inv = s + k;
                break;
            }
        size_t inv_end = end_inv ? (size_t)(end_inv - s) : n;
        aw_json_doc *doc = aw_json_doc_new(x->alloc);
        aw_json_value *args = doc ? aw_json_new_object(doc) : NULL;
        if (!args) {
            aw_json_doc_free(doc);
            return AW_ENOMEM;
        }
        size_t p = pos;
        aw_text pname;
        while (!rc && find_named(s, inv_end, &p, "parameter", &pname)) {
            const char *close = NULL;
            for (size_t k = p; k + 12 <= inv_end; k++)
                if (!memcmp(s + k, "</parameter>", 12)) {
                    close = s + k;
                    break;
                }
            size_t vend = close ? (size_t)(close - s) : inv_end;
            aw_json_read_options ro = {x->alloc, 0, false};
            aw_json_doc *vdoc = NULL;
            aw_json_value *v;
            int prc = aw_json_parse(s + p, vend - p, &ro, &vdoc, NULL);
            if (prc == AW_ENOMEM) rc = AW_ENOMEM;
            v = prc == 0 ? aw_json_copy(doc, aw_json_doc_root(vdoc)) : aw_json_new_string(doc, s + p, vend - p);
            aw_json_doc_free(vdoc);
            if (!rc && (!v || aw_json_object_set(doc, args, pname.ptr, pname.len, v))) rc = AW_ENOMEM;
            p = close ? vend + 12 : inv_end;
        }
        if (!rc) {
            int allowed = dialect_allowed(x, name, "function_calls");
            if (allowed < 0) rc = allowed;
            else if (allowed == 0) {
                aw_text raw = {s + pos, inv_end - pos};
                rc = aw__extract_emit_call(x, AW__X_NO_TEXT, name, args, raw, "function_calls", 0);
            }
        }
        aw_json_doc_free(doc);
        pos = end_inv ? inv_end + 9 : n;
    }
    if (!rc && !found)
        rc = aw__extract_reject(x, AW__X_NO_TEXT, AW__X_NO_TEXT, AW_REJECT_EMPTY_PAYLOAD,
                                "A <function_calls> block holds no <invoke name=\"...\"> element.");
    return rc;
}

int aw__extract_fenced(aw_extractor *x) {
    if (!x->visible.len) return 0;
    aw_json_doc *doc = NULL;
    aw_error err;
    int rc = aw_messages_parse_tool_calls(x->visible.data, x->visible.len, x->alloc, &doc, &err);
    if (rc) return rc == AW_ENOMEM ? AW_ENOMEM : 0;
    const aw_json_value *calls = aw_json_get(aw_json_doc_root(doc), "tool_calls");
    for (size_t i = 0; i < aw_json_count(calls) && !rc; i++)
        rc = call_from_object(x, aw_json_at(calls, i), AW__X_NO_TEXT, "fenced", 0);
    aw_json_doc_free(doc);
    return rc;
}

int aw_extractor_native_calls(aw_extractor *x, const aw_json_value *calls, aw_x_fn fn, void *ctx,
                              aw_error *err) {
    if (!x || !fn) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    if (!aw_json_is_array(calls)) return aw__error_set(err, AW_ETYPE, "native calls must be a JSON array");
    x->fn = fn;
    x->ctx = ctx;
    int rc = 0;
    for (size_t i = 0; i < calls->u.arr.count && !rc; i++) {
        const aw_json_value *c = &calls->u.arr.items[i];
        const aw_json_value *f = aw_json_get(c, "function");
        const aw_json_value *def = aw_json_is_object(f) ? f : c;
        const aw_json_value *name = aw_json_get(def, "name");
        if (!aw_json_is_string(name)) {
            rc = aw__error_set(err, AW_ETYPE, "native call %zu: 'name' must be a string", i);
            break;
        }
        aw_text tool = {name->u.str.ptr, name->u.str.len};
        int is_final = tool.len == strlen(AW_TOOL_FINAL_REPORT) && !memcmp(tool.ptr, AW_TOOL_FINAL_REPORT, tool.len);
        if (x->t->mode == AW_TRANSPORT_XML) {
            char msg[200];
            snprintf(msg, sizeof msg, "Native tool calls are ignored in this session; call `%.*s` with an XML tag in one of this turn's slots.",
                     (int)(tool.len > 64 ? 64 : tool.len), tool.ptr);
            rc = aw__extract_reject(x, AW__X_NO_TEXT, tool, AW_REJECT_NOT_ALLOWED_IN_MODE, msg);
            continue;
        }
        if (x->t->mode == AW_TRANSPORT_XML_FINAL && is_final) {
            /* the XML FINAL tag takes precedence: the report travels as XML */
            rc = aw__extract_reject(x, AW__X_NO_TEXT, tool, AW_REJECT_NOT_ALLOWED_IN_MODE,
                                    "The final report travels as the FINAL XML tag in this session, not as a native call.");
            continue;
        }
        const aw_json_value *args = aw_json_get(def, "arguments");
        if (!args) args = aw_json_get(def, "args");
        if (!args) args = aw_json_get(def, "input");
        if (aw_json_is_string(args)) {
            aw_text payload = {args->u.str.ptr, args->u.str.len};
            rc = aw__extract_tool_call(x, AW__X_NO_TEXT, tool, payload, "native", NULL);
            if (rc > 0) rc = 0;
        } else if (aw_json_is_object(args)) {
            rc = aw__extract_emit_call(x, AW__X_NO_TEXT, tool, args, AW__X_NO_TEXT, "native", 0);
        } else {
            char msg[160];
            snprintf(msg, sizeof msg, "Tool `%.*s` payload is not valid JSON. Provide a JSON object.",
                     (int)(tool.len > 64 ? 64 : tool.len), tool.ptr);
            rc = aw__extract_reject(x, AW__X_NO_TEXT, tool, AW_REJECT_INVALID_JSON, msg);
        }
    }
    if (rc == AW_ESTOP) return aw__error_set(err, AW_ESTOP, "stopped by the callback");
    if (rc == AW_ENOMEM) return aw__error_set(err, AW_ENOMEM, "out of memory");
    return rc;
}
