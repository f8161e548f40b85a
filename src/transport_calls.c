/* What the extractor reports about a reply, whatever the dialect: the
 * extractor's life, rejections (each one also a line of the TURN-FAILED
 * feedback), and tool calls made from JSON payloads: parsed strictly,
 * then with repair, and accepted when they give an object. */
#include <stdio.h>
#include <string.h>

#include "internal/errors.h"
#include "internal/transport_extract.h"
#include "internal/utf8.h"

aw_extractor *aw_extractor_new(const aw_transport *t, unsigned turn) {
    if (!t || turn == 0) return NULL;
    aw_extractor *x = aw_malloc(t->alloc, sizeof *x);
    if (!x) return NULL;
    memset(x, 0, sizeof *x);
    x->t = t;
    x->turn = turn;
    x->alloc = t->alloc;
    aw_buf *bufs[] = {&x->hold, &x->tag.name, &x->tag.attrs, &x->tag.tool, &x->tag.status,
                      &x->tag.format, &x->payload, &x->replay, &x->feedback};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) aw_buf_init(bufs[i], t->alloc);
    x->used = aw_malloc(t->alloc, t->max_calls);
    if (!x->used || aw__recover_new(x)) {
        aw_free(t->alloc, x->used);
        aw_free(t->alloc, x);
        return NULL;
    }
    memset(x->used, 0, t->max_calls);
    return x;
}

void aw_extractor_free(aw_extractor *x) {
    if (!x) return;
    aw_buf *bufs[] = {&x->hold, &x->tag.name, &x->tag.attrs, &x->tag.tool, &x->tag.status,
                      &x->tag.format, &x->payload, &x->replay, &x->feedback};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) aw_buf_free(bufs[i]);
    aw__recover_free(x);
    aw_free(x->alloc, x->used);
    aw_free(x->alloc, x);
}

const char *aw_extractor_warning(const aw_extractor *x) {
    return (x && x->warning[0]) ? x->warning : NULL;
}

int aw_extractor_feedback(const aw_extractor *x, aw_buf *out) {
    if (!x || !out) return AW_EINVAL;
    if (!x->rejections) return 0;
    int rc = aw_buf_printf(out, "TURN-FAILED: %zu tag%s rejected; nothing from %s was executed. Fix and resend:\n",
                           x->rejections, x->rejections == 1 ? " was" : "s were",
                           x->rejections == 1 ? "it" : "them");
    if (!rc) rc = aw_buf_append(out, x->feedback.data, x->feedback.len);
    /* no trailing newline: library strings do not end with one */
    if (!rc && out->len && out->data[out->len - 1] == '\n') out->data[--out->len] = '\0';
    return rc;
}

/* ---- rejections --------------------------------------------------------- */

int aw__extract_reject(aw_extractor *x, aw_text slot, aw_text tool, aw_reject_reason reason,
                       const char *message) {
    return aw__extract_reject_with(x, slot, tool, reason, message, NULL);
}

int aw__extract_reject_with(aw_extractor *x, aw_text slot, aw_text tool, aw_reject_reason reason,
                            const char *message, const aw_schema_result *errors) {
    int rc = aw__recover_settle(x);
    if (rc) return rc;
    x->rejections++;
    rc = aw_buf_append(&x->feedback, "- ", 2);
    if (!rc && slot.len) rc = aw_buf_printf(&x->feedback, "slot %.*s: ", (int)(slot.len > 64 ? 64 : slot.len), slot.ptr);
    if (!rc) rc = aw_buf_append_str(&x->feedback, message);
    if (!rc) rc = aw_buf_putc(&x->feedback, '\n');
    if (rc) return AW_ENOMEM;
    aw_x_rejection r = {slot, tool, reason, message, errors ? errors->errors : NULL, errors ? errors->error_count : 0};
    aw_x_event ev = {AW_X_REJECTED, AW__X_NO_TEXT, slot, tool, NULL, NULL, &r};
    if (x->stopped) return AW_ESTOP;
    if (x->fn(x->ctx, &ev)) {
        x->stopped = 1;
        return AW_ESTOP;
    }
    return 0;
}

/* ---- calls from JSON payloads ------------------------------------------- */

/* Parse a payload as JSON, strictly first and then with repair. *doc is
 * NULL when nothing could be recovered. */
int aw__extract_parse_payload(const aw_extractor *x, const char *s, size_t n, aw_json_doc **doc,
                              unsigned *repairs) {
    aw_json_read_options ro = {x->alloc, 0, false};
    aw_error err;
    *repairs = 0;
    *doc = NULL;
    int rc = aw_json_parse(s, n, &ro, doc, &err);
    if (rc != AW_ENOMEM && rc != 0) {
        aw_buf fixed;
        aw_buf_init(&fixed, x->alloc);
        rc = aw_json_repair(s, n, x->alloc, &fixed, repairs, &err);
        if (rc == 0) rc = aw_json_parse(fixed.data, fixed.len, &ro, doc, &err);
        aw_buf_free(&fixed);
        if (rc && rc != AW_ENOMEM) {
            *doc = NULL;
            rc = 0;
        }
    }
    return rc == AW_ENOMEM ? AW_ENOMEM : 0;
}

/* The longest list of schema errors put in one rejection message (the
 * model reads it; the record holds them all). */
#define ARGUMENT_ERRORS_MAX 1200

/* Check a call's arguments against its tool's schema: 1 when they pass
 * (or the tool has none), 0 when the call was rejected as
 * invalid_arguments, or a negative code. */
static int check_arguments(aw_extractor *x, aw_text slot, aw_text tool, const aw_json_value *args) {
    const aw_schema *schema = aw__transport_tool_schema(x->t, tool.ptr, tool.len);
    if (!schema) return 1;
    aw_schema_result r;
    aw_schema_result_init(&r, x->alloc);
    aw_schema_validate_options vo = {20, 0};
    aw_error err;
    int rc = aw_schema_validate(schema, args, &vo, &r, &err);
    if (rc == AW_ELIMIT) {
        /* arguments nested past what validation follows: not acceptable */
        r.valid = false;
        r.error_count = 0;
        r.truncated = true;
    } else if (rc) {
        aw_schema_result_free(&r);
        return rc;
    }
    if (r.valid) {
        aw_schema_result_free(&r);
        return 1;
    }
    aw_buf msg;
    aw_buf_init(&msg, x->alloc);
    rc = aw_buf_printf(&msg, "Tool `%.*s` arguments do not match its schema: ", (int)(tool.len > 64 ? 64 : tool.len), tool.ptr);
    if (!rc) rc = aw_schema_result_summary(&r, ARGUMENT_ERRORS_MAX, &msg);
    if (!rc) rc = aw_buf_append_str(&msg, ". Fix the arguments and call again.");
    if (!rc) rc = aw__extract_reject_with(x, slot, tool, AW_REJECT_INVALID_ARGUMENTS, msg.data, &r);
    aw_buf_free(&msg);
    aw_schema_result_free(&r);
    return rc ? (rc < 0 ? rc : AW_ENOMEM) : 0;
}

int aw__extract_emit_call(aw_extractor *x, aw_text slot, aw_text tool, const aw_json_value *args,
                          aw_text payload, const char *source, unsigned repairs) {
    int rc = aw__extract_checked_call(x, slot, tool, args, payload, source, repairs);
    return rc < 0 ? rc : 0;
}

int aw__extract_checked_call(aw_extractor *x, aw_text slot, aw_text tool, const aw_json_value *args,
                             aw_text payload, const char *source, unsigned repairs) {
    int rc = aw__recover_settle(x);
    if (rc) return rc;
    int checked = check_arguments(x, slot, tool, args);
    if (checked <= 0) return checked;
    aw_x_call call = {slot, tool, args, payload, source, tool, repairs, x->emit_dialect};
    aw_x_event ev = {AW_X_CALL, AW__X_NO_TEXT, slot, tool, &call, NULL, NULL};
    if (x->stopped) return AW_ESTOP;
    if (x->fn(x->ctx, &ev)) {
        x->stopped = 1;
        return AW_ESTOP;
    }
    return 1;
}

/* A JSON-object payload for a tool: a call (1), or invalid_json or
 * invalid_arguments (0);
 * `why`, when not NULL, says what is wrong with the JSON. */
int aw__extract_tool_call(aw_extractor *x, aw_text slot, aw_text tool, aw_text payload,
                          const char *source, const char *why) {
    aw_json_doc *doc;
    unsigned repairs;
    if (aw__extract_parse_payload(x, payload.ptr, payload.len, &doc, &repairs)) return AW_ENOMEM;
    if (!doc || !aw_json_is_object(aw_json_doc_root(doc))) {
        aw_json_doc_free(doc);
        char msg[320];
        snprintf(msg, sizeof msg, "Tool `%.*s` payload is not valid JSON%s%s. Provide a JSON object.",
                 (int)(tool.len > 64 ? 64 : tool.len), tool.ptr, why ? ": " : "", why ? why : "");
        return aw__extract_reject(x, slot, tool, AW_REJECT_INVALID_JSON, msg);
    }
    int rc = aw__extract_checked_call(x, slot, tool, aw_json_doc_root(doc), payload, source, repairs);
    aw_json_doc_free(doc);
    return rc;
}

/* "the string starting "hello} (1:11)": the JSON string whose quote is at
 * offset `at` of the payload p[0..n), shown up to 40 bytes (and the end
 * of its line), with its line and column (in characters) in the payload. */
void aw__extract_describe_string(const char *p, size_t n, size_t at, char *out, size_t size) {
    size_t line = 1, line_start = 0;
    for (size_t i = 0; i < at; i++)
        if (p[i] == '\n') {
            line++;
            line_start = i + 1;
        }
    size_t col = aw__utf8_count(p + line_start, at - line_start) + 1;
    size_t len = 0;
    while (at + len < n && (unsigned char)p[at + len] >= 0x20) len++;
    size_t shown = aw__utf8_clip(p + at, len, 40);
    snprintf(out, size, "the string starting %.*s%s (%zu:%zu)", (int)shown, p + at,
             shown < n - at ? "..." : "", line, col);
}
