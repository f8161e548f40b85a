/* Mistral's [TOOL_CALLS] token, in its three generations:
 *
 *   [TOOL_CALLS][{"name": "add", "arguments": {"a": 3.5, "b": 4}}]
 *   [TOOL_CALLS]get_current_weather{"city": "San Francisco"}
 *   [TOOL_CALLS]get_current_weather[ARGS]{"city": "San Francisco"}
 *   (also [CALL_ID]id before [ARGS], as Magistral writes it)
 *
 * The candidate ends where the JSON closes (each [TOOL_CALLS] of several
 * is a candidate of its own) or at the end of the reply. */
#include <stdio.h>
#include <string.h>

#include "internal/dialect.h"

static const char marker[] = "[TOOL_CALLS]";
#define MARKER_LEN (sizeof marker - 1)

/* After NAME: [CALL_ID]... and [ARGS] may come before the object. */
static size_t skip_tags(const char *p, size_t n, size_t i) {
    for (;;) {
        while (i < n && (p[i] == ' ' || p[i] == '\t')) i++;
        if (i + 6 <= n && !memcmp(p + i, "[ARGS]", 6)) {
            i += 6;
            continue;
        }
        if (i + 9 <= n && !memcmp(p + i, "[CALL_ID]", 9)) {
            i += 9;
            while (i < n && p[i] != '[' && p[i] != '{' && i < n) i++;
            continue;
        }
        return i;
    }
}

static long scan(aw_dialect_scan *s, const char *p, size_t n, int at_end) {
    if (!s->phase) {
        size_t i = MARKER_LEN;
        while (i < n && aw__dialect_is_space((unsigned char)p[i])) i++;
        if (i >= n) return at_end ? AW_DIALECT_NONE : AW_DIALECT_MORE;
        if (p[i] != '[' && p[i] != '{') {
            /* NAME, then (after its tags) the object; within a short span */
            size_t b = i;
            while (i < n && (aw__dialect_is_ident((unsigned char)p[i], i == b) || p[i] == '.' || p[i] == '-')) i++;
            if (i == b || i - b > 128) return AW_DIALECT_NONE;
            size_t k = skip_tags(p, n, i);
            if (k >= n || (n - k < 9 && p[k] == '[' && !at_end)) {
                if (at_end) return AW_DIALECT_NONE;
                return n - b > 512 ? AW_DIALECT_NONE : AW_DIALECT_MORE;
            }
            if (p[k] != '{') return AW_DIALECT_NONE;
            i = k;
        }
        s->phase = 1;
        s->pos = i;
    }
    return aw__dialect_scan_value(s, p, n, at_end, 0);
}

static int parse(const char *p, size_t n, aw_dialect_out *out) {
    aw_text raw = {p, n};
    aw_text body = aw__dialect_trim(p + MARKER_LEN, n - MARKER_LEN);
    aw_text name = AW__DIALECT_NO_TEXT;
    if (body.len && body.ptr[0] != '[' && body.ptr[0] != '{') {
        size_t i = 0;
        while (i < body.len && (aw__dialect_is_ident((unsigned char)body.ptr[i], i == 0) || body.ptr[i] == '.' ||
                                body.ptr[i] == '-'))
            i++;
        name = (aw_text){body.ptr, i};
        size_t k = skip_tags(body.ptr, body.len, i);
        body = (aw_text){body.ptr + k, body.len - k};
    }
    const char *fix = name.len ? "Write [TOOL_CALLS]NAME[ARGS]{...} with one complete JSON object of arguments."
                               : "After [TOOL_CALLS] write one complete JSON list: "
                                 "[{\"name\": \"NAME\", \"arguments\": {...}}].";
    aw_json_doc *doc;
    unsigned repairs;
    int rc = aw__dialect_marked_json(out, "mistral", body, 0, fix, &doc, &repairs);
    if (rc) return rc == AW_DIALECT_REPORTED ? 0 : rc;
    const aw_json_value *root = aw_json_doc_root(doc);
    if (name.len && !aw_json_is_object(root)) {
        aw_json_doc_free(doc);
        return out->malformed(out, "mistral", name, AW_REJECT_INVALID_JSON, fix);
    }
    if (name.len) rc = out->call(out, "mistral", name, root, raw, repairs);
    else rc = aw__dialect_json_calls(out, "mistral", root, raw, repairs, 0);
    aw_json_doc_free(doc);
    if (rc == AW_DIALECT_NOT_A_CALL)
        return out->malformed(out, "mistral", AW__DIALECT_NO_TEXT, AW_REJECT_INVALID_JSON,
                              "After [TOOL_CALLS] write [{\"name\": \"NAME\", \"arguments\": {...}}].");
    return rc;
}

static const aw_dialect_trigger triggers[] = {{marker, MARKER_LEN, AW_DT_ANYWHERE}};

const aw_dialect aw__dialect_mistral = {"mistral", AW_DIALECT_MISTRAL, triggers, 1, NULL, NULL, 0, scan, parse, NULL};
