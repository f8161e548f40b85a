/* What the extractor does with a complete tag: classify it when it opens,
 * validate it when it closes, and turn payloads into calls and the final
 * report (the seed's three layers: wrapper, format, record). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "agentwire/messages.h"
#include "internal/errors.h"
#include "internal/transport_extract.h"
#include "internal/utf8.h"

static const aw_text no_text = {"", 0};

aw_extractor *aw_extractor_new(const aw_transport *t, unsigned turn) {
    if (!t || turn == 0) return NULL;
    aw_extractor *x = aw_malloc(t->alloc, sizeof *x);
    if (!x) return NULL;
    memset(x, 0, sizeof *x);
    x->t = t;
    x->turn = turn;
    x->alloc = t->alloc;
    aw_buf *bufs[] = {&x->hold, &x->tag.name, &x->tag.attrs, &x->tag.tool, &x->tag.status,
                      &x->tag.format, &x->payload, &x->feedback, &x->visible};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) aw_buf_init(bufs[i], t->alloc);
    x->used = aw_malloc(t->alloc, t->max_calls);
    if (!x->used) {
        aw_free(t->alloc, x);
        return NULL;
    }
    memset(x->used, 0, t->max_calls);
    return x;
}

void aw_extractor_free(aw_extractor *x) {
    if (!x) return;
    aw_buf *bufs[] = {&x->hold, &x->tag.name, &x->tag.attrs, &x->tag.tool, &x->tag.status,
                      &x->tag.format, &x->payload, &x->feedback, &x->visible};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) aw_buf_free(bufs[i]);
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

void aw__extract_tag_reset(aw_extractor *x, int kind) {
    x_tag *g = &x->tag;
    aw_buf_clear(&g->name);
    aw_buf_clear(&g->attrs);
    aw_buf_clear(&g->tool);
    aw_buf_clear(&g->status);
    aw_buf_clear(&g->format);
    g->has_tool = g->has_status = g->has_format = 0;
    g->kind = kind;
    g->slot = no_text;
    g->slot_kind = SLOT_OTHER;
    g->slot_number = 0;
    g->json_payload = kind == TAG_HERMES;
    g->rejected = -1;
    g->message[0] = '\0';
}

/* ---- attributes --------------------------------------------------------- */

/* Append value with the five XML entities and numeric references decoded;
 * an unknown entity stays as written. */
static int decode_entities(aw_buf *out, const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        const char *amp = memchr(s + i, '&', n - i);
        size_t k = amp ? (size_t)(amp - s) : n;
        if (aw_buf_append(out, s + i, k - i)) return AW_ENOMEM;
        i = k;
        if (i >= n) break;
        const char *semi = memchr(s + i, ';', n - i < 12 ? n - i : 12);
        if (!semi) {
            if (aw_buf_putc(out, '&')) return AW_ENOMEM;
            i++;
            continue;
        }
        size_t len = (size_t)(semi - (s + i)) + 1;
        const char *e = s + i + 1;
        size_t elen = len - 2;
        const char *rep = NULL;
        char tmp[4];
        size_t replen = 0;
        if (elen == 2 && !memcmp(e, "lt", 2)) rep = "<";
        else if (elen == 2 && !memcmp(e, "gt", 2)) rep = ">";
        else if (elen == 3 && !memcmp(e, "amp", 3)) rep = "&";
        else if (elen == 4 && !memcmp(e, "quot", 4)) rep = "\"";
        else if (elen == 4 && !memcmp(e, "apos", 4)) rep = "'";
        else if (elen >= 2 && e[0] == '#') {
            unsigned long cp = 0;
            int hex = e[1] == 'x' || e[1] == 'X';
            size_t j = hex ? 2 : 1;
            int ok = j < elen;
            for (; j < elen && ok; j++) {
                char c = e[j];
                int d = (c >= '0' && c <= '9') ? c - '0'
                        : hex && (c >= 'a' && c <= 'f') ? c - 'a' + 10
                        : hex && (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
                if (d < 0) ok = 0;
                else cp = cp * (hex ? 16 : 10) + (unsigned long)d;
                if (cp > 0x10FFFF) ok = 0;
            }
            if (ok && cp && !(cp >= 0xD800 && cp <= 0xDFFF)) {
                replen = aw__utf8_encode((uint32_t)cp, tmp);
                rep = tmp;
            }
        }
        if (!rep) {
            if (aw_buf_putc(out, '&')) return AW_ENOMEM;
            i++;
            continue;
        }
        if (aw_buf_append(out, rep, replen ? replen : strlen(rep))) return AW_ENOMEM;
        i += len;
    }
    return aw_buf_reserve(out, 0);
}

/* name="value" pairs, single or double quotes or none; later duplicates
 * are ignored. */
static int parse_attrs(aw_extractor *x) {
    x_tag *g = &x->tag;
    const char *s = g->attrs.data ? g->attrs.data : "";
    size_t n = g->attrs.len, i = 0;
    while (i < n) {
        while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
        size_t ns = i;
        while (i < n && s[i] != '=' && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') i++;
        size_t ne = i;
        while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
        if (i >= n || s[i] != '=') {
            if (ne == ns) i++;
            continue; /* a bare word: no value */
        }
        i++;
        while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
        size_t vs, ve;
        if (i < n && (s[i] == '"' || s[i] == '\'')) {
            char q = s[i++];
            vs = i;
            while (i < n && s[i] != q) i++;
            ve = i;
            if (i < n) i++;
        } else {
            vs = i;
            while (i < n && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') i++;
            ve = i;
        }
        size_t nl = ne - ns;
        aw_buf *dst = NULL;
        int *has = NULL;
        if (nl == 4 && !memcmp(s + ns, "tool", 4)) dst = &g->tool, has = &g->has_tool;
        else if (nl == 6 && !memcmp(s + ns, "status", 6)) dst = &g->status, has = &g->has_status;
        else if (nl == 6 && !memcmp(s + ns, "format", 6)) dst = &g->format, has = &g->has_format;
        if (dst && !*has) {
            *has = 1;
            if (decode_entities(dst, s + vs, ve - vs)) return AW_ENOMEM;
        }
    }
    return 0;
}

/* ---- rejections --------------------------------------------------------- */

static int reject(aw_extractor *x, aw_text slot, aw_text tool, aw_reject_reason reason,
                  const char *message) {
    x->rejections++;
    int rc = aw_buf_append(&x->feedback, "- ", 2);
    if (!rc && slot.len) rc = aw_buf_printf(&x->feedback, "slot %.*s: ", (int)(slot.len > 64 ? 64 : slot.len), slot.ptr);
    if (!rc) rc = aw_buf_append_str(&x->feedback, message);
    if (!rc) rc = aw_buf_putc(&x->feedback, '\n');
    if (rc) return AW_ENOMEM;
    aw_x_rejection r = {slot, tool, reason, message};
    aw_x_event ev = {AW_X_REJECTED, no_text, slot, tool, NULL, NULL, &r};
    if (x->stopped) return AW_ESTOP;
    if (x->fn(x->ctx, &ev)) {
        x->stopped = 1;
        return AW_ESTOP;
    }
    return 0;
}

static aw_text tool_text(const x_tag *g) {
    aw_text t = {g->tool.data ? g->tool.data : "", g->tool.len};
    return t;
}

static void slot_range(const aw_extractor *x, char *buf, size_t size) {
    unsigned long first = (unsigned long)(x->turn - 1) * x->t->max_calls + 1;
    unsigned long last = first + x->t->max_calls - 1;
    snprintf(buf, size, "%04lu-%04lu", first, last);
}

/* Decide a rejection when the tag opens; it is reported when the tag ends,
 * so its payload is consumed and never shown as text. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void pre_reject(aw_extractor *x, aw_reject_reason r, const char *fmt, ...) {
    x->tag.rejected = (int)r;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->tag.message, sizeof x->tag.message, fmt, ap);
    va_end(ap);
}

/* ---- opening ------------------------------------------------------------ */

static void classify_nonce_tag(aw_extractor *x) {
    x_tag *g = &x->tag;
    const aw_transport *t = x->t;
    const char *rest = g->name.data + t->prefix_len + 1;
    size_t rest_len = g->name.len - t->prefix_len - 1;
    const char *dash = memchr(rest, '-', rest_len);
    size_t nonce_len = dash ? (size_t)(dash - rest) : rest_len;
    if (dash) {
        g->slot.ptr = dash + 1;
        g->slot.len = rest_len - nonce_len - 1;
    }
    char range[48]; /* two 20-digit numbers and a dash */
    slot_range(x, range, sizeof range);
    if (nonce_len != 8 || memcmp(rest, t->nonce, 8) != 0) {
        pre_reject(x, AW_REJECT_WRONG_NONCE, "Tag <%.80s> does not carry this session's nonce; use the tags of the system notice exactly.",
                   g->name.data);
        return;
    }
    const char *sl = g->slot.ptr;
    size_t sn = g->slot.len;
    if (sn == 5 && !memcmp(sl, "FINAL", 5)) {
        g->slot_kind = SLOT_FINAL;
    } else if (sn == 8 && !memcmp(sl, "PROGRESS", 8)) {
        g->slot_kind = SLOT_PROGRESS;
        g->json_payload = 1;
    } else if (sn >= 1 && sn <= 9 && strspn(sl, "0123456789") >= sn) {
        g->slot_kind = SLOT_NUMBERED;
        g->json_payload = 1;
        for (size_t i = 0; i < sn; i++) g->slot_number = g->slot_number * 10 + (unsigned long)(sl[i] - '0');
    }
    aw_text tool = tool_text(g);
    if (t->mode == AW_TRANSPORT_XML_FINAL && g->slot_kind != SLOT_FINAL) {
        pre_reject(x, AW_REJECT_NOT_ALLOWED_IN_MODE,
                   "Only the final report travels as an XML tag in this session; call `%.*s` with a native tool call.",
                   (int)(tool.len > 64 ? 64 : tool.len), tool.len ? tool.ptr : "the tool");
        return;
    }
    if (t->mode == AW_TRANSPORT_NATIVE) {
        pre_reject(x, AW_REJECT_NOT_ALLOWED_IN_MODE, "XML tags are not used in this session; call tools natively.");
        return;
    }
    unsigned long first = (unsigned long)(x->turn - 1) * t->max_calls + 1;
    unsigned long last = first + t->max_calls - 1;
    switch (g->slot_kind) {
    case SLOT_OTHER:
        pre_reject(x, AW_REJECT_UNKNOWN_SLOT, "Slot %.*s does not exist; use this turn's slots %s, FINAL or PROGRESS.",
                   (int)(sn > 32 ? 32 : sn), sl, range);
        return;
    case SLOT_NUMBERED:
        if (g->slot_number < first) {
            pre_reject(x, AW_REJECT_DEAD_SLOT, "Slot %.*s belongs to an earlier turn; use this turn's slots %s.",
                       (int)sn, sl, range);
            return;
        }
        if (g->slot_number > last) {
            pre_reject(x, AW_REJECT_UNKNOWN_SLOT, "Slot %.*s is not open this turn; use this turn's slots %s.",
                       (int)sn, sl, range);
            return;
        }
        if (x->used[g->slot_number - first]) {
            pre_reject(x, AW_REJECT_DUPLICATE_SLOT, "Slot %.*s was already used in this reply; use each slot once.",
                       (int)sn, sl);
            return;
        }
        x->used[g->slot_number - first] = 1;
        if (!g->has_tool || !aw__transport_tool(t, tool.ptr, tool.len)) {
            if (!g->has_tool)
                pre_reject(x, AW_REJECT_TOOL_NOT_ALLOWED, "The tag has no tool attribute; write tool=\"NAME\" with one of the tools listed in the notice.");
            else
                pre_reject(x, AW_REJECT_TOOL_NOT_ALLOWED, "Tool `%.*s` is not available; use one of the tools listed in the notice.",
                           (int)(tool.len > 64 ? 64 : tool.len), tool.ptr);
        }
        return;
    case SLOT_PROGRESS:
        if (t->mode != AW_TRANSPORT_XML) {
            pre_reject(x, AW_REJECT_NOT_ALLOWED_IN_MODE, "Progress is reported with a native tool call in this session.");
            return;
        }
        if (x->progress_used) {
            pre_reject(x, AW_REJECT_DUPLICATE_SLOT, "The PROGRESS slot was already used in this reply.");
            return;
        }
        x->progress_used = 1;
        if (g->has_tool && !(tool.len == strlen(AW_TOOL_PROGRESS) && !memcmp(tool.ptr, AW_TOOL_PROGRESS, tool.len)))
            pre_reject(x, AW_REJECT_TOOL_NOT_ALLOWED, "The PROGRESS slot takes tool=\"" AW_TOOL_PROGRESS "\" only.");
        return;
    case SLOT_FINAL:
        if (x->final_used) {
            pre_reject(x, AW_REJECT_DUPLICATE_SLOT, "The FINAL slot was already used in this reply; send one final report.");
            return;
        }
        x->final_used = 1;
        if (g->has_tool && !(tool.len == strlen(AW_TOOL_FINAL_REPORT) && !memcmp(tool.ptr, AW_TOOL_FINAL_REPORT, tool.len)))
            pre_reject(x, AW_REJECT_TOOL_NOT_ALLOWED, "The FINAL slot takes tool=\"" AW_TOOL_FINAL_REPORT "\" only.");
        return;
    }
}

int aw__extract_open(aw_extractor *x) {
    x_tag *g = &x->tag;
    if (parse_attrs(x)) return AW_ENOMEM;
    if (g->kind == TAG_NONCE) classify_nonce_tag(x);
    if (g->kind == TAG_REASONING) return 0;
    aw_x_event ev = {AW_X_TAG_OPEN, no_text, g->slot, tool_text(g), NULL, NULL, NULL};
    if (g->kind != TAG_NONCE) ev.slot = (aw_text){g->name.data, g->name.len};
    if (x->stopped) return AW_ESTOP;
    if (x->fn(x->ctx, &ev)) {
        x->stopped = 1;
        return AW_ESTOP;
    }
    return 0;
}

/* ---- payloads ------------------------------------------------------------ */

static int is_blank(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') return 0;
    return 1;
}

/* Parse a payload as JSON, strictly first and then with repair. *doc is
 * NULL when nothing could be recovered. */
static int parse_payload(const aw_extractor *x, const char *s, size_t n, aw_json_doc **doc,
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

static int emit_call(aw_extractor *x, aw_text slot, aw_text tool, const aw_json_value *args,
                     aw_text payload, const char *source, unsigned repairs) {
    aw_x_call call = {slot, tool, args, payload, source, tool, repairs};
    aw_x_event ev = {AW_X_CALL, no_text, slot, tool, &call, NULL, NULL};
    if (x->stopped) return AW_ESTOP;
    if (x->fn(x->ctx, &ev)) {
        x->stopped = 1;
        return AW_ESTOP;
    }
    return 0;
}

/* A JSON-object payload for a tool: a call, or invalid_json. */
static int tool_call_from_payload(aw_extractor *x, aw_text slot, aw_text tool, aw_text payload,
                                  const char *source) {
    aw_json_doc *doc;
    unsigned repairs;
    if (parse_payload(x, payload.ptr, payload.len, &doc, &repairs)) return AW_ENOMEM;
    if (!doc || !aw_json_is_object(aw_json_doc_root(doc))) {
        aw_json_doc_free(doc);
        char msg[160];
        snprintf(msg, sizeof msg, "Tool `%.*s` payload is not valid JSON. Provide a JSON object.",
                 (int)(tool.len > 64 ? 64 : tool.len), tool.ptr);
        return reject(x, slot, tool, AW_REJECT_INVALID_JSON, msg);
    }
    int rc = emit_call(x, slot, tool, aw_json_doc_root(doc), payload, source, repairs);
    aw_json_doc_free(doc);
    return rc;
}

/* Layers 2 and 3 of the final report; layer 1 (status and format) was
 * checked by the caller. */
static int final_report(aw_extractor *x, aw_text status, aw_text content, bool truncated) {
    aw_report_format f = x->t->format;
    aw_json_doc *doc = NULL;
    unsigned repairs = 0;
    const aw_json_value *json = NULL;
    aw_text slot = {"FINAL", 5}, tool = {AW_TOOL_FINAL_REPORT, sizeof AW_TOOL_FINAL_REPORT - 1};
    if (f == AW_FORMAT_JSON || f == AW_FORMAT_SLACK_BLOCK_KIT) {
        if (parse_payload(x, content.ptr, content.len, &doc, &repairs)) return AW_ENOMEM;
        const aw_json_value *root = aw_json_doc_root(doc);
        if (f == AW_FORMAT_JSON && aw_json_is_object(root)) {
            json = root;
        } else if (f == AW_FORMAT_SLACK_BLOCK_KIT) {
            if (aw_json_is_array(root)) json = root;
            else if (aw_json_is_array(aw_json_get(root, "messages"))) json = aw_json_get(root, "messages");
        }
        if (!json) {
            aw_json_doc_free(doc);
            return reject(x, slot, tool, AW_REJECT_INVALID_JSON,
                          f == AW_FORMAT_JSON
                              ? "Final report payload is not valid JSON. Provide a JSON object."
                              : "Final report payload must be a JSON array of Slack messages or {\"messages\": [...]}.");
        }
    }
    aw_x_final fin = {status, f, content, json, truncated, repairs, AW_COMMAND_FINAL_XML};
    aw_x_event ev = {AW_X_FINAL, no_text, slot, tool, NULL, &fin, NULL};
    int rc = 0;
    if (x->stopped) rc = AW_ESTOP;
    else if (x->fn(x->ctx, &ev)) {
        x->stopped = 1;
        rc = AW_ESTOP;
    }
    aw_json_doc_free(doc);
    return rc;
}

static int check_final_wrapper(aw_extractor *x, aw_text *status) {
    x_tag *g = &x->tag;
    aw_text slot = {"FINAL", 5}, tool = {AW_TOOL_FINAL_REPORT, sizeof AW_TOOL_FINAL_REPORT - 1};
    const char *st = g->status.data ? g->status.data : "";
    if (!(g->has_status && (!strcmp(st, "success") || !strcmp(st, "failure") || !strcmp(st, "partial")))) {
        char msg[200];
        snprintf(msg, sizeof msg, "Final report status must be success, failure or partial. Received %.60s%s%s.",
                 g->has_status ? "\"" : "", g->has_status ? st : "nothing", g->has_status ? "\"" : "");
        int rc = reject(x, slot, tool, AW_REJECT_BAD_STATUS, msg);
        return rc ? rc : 1;
    }
    const char *want = aw_report_format_name(x->t->format);
    const char *got = g->format.data ? g->format.data : "";
    if (!g->has_format || strcmp(got, want) != 0) {
        char msg[200];
        snprintf(msg, sizeof msg, "Final report format must be %s. Received %.60s.", want,
                 g->has_format ? got : "nothing");
        int rc = reject(x, slot, tool, AW_REJECT_WRONG_FORMAT, msg);
        return rc ? rc : 1;
    }
    status->ptr = st;
    status->len = g->status.len;
    return 0;
}

/* ---- the other dialects ---------------------------------------------------- */

static int dialect_allowed(aw_extractor *x, aw_text tool, const char *source) {
    (void)source;
    if (x->t->mode != AW_TRANSPORT_XML) {
        char msg[160];
        snprintf(msg, sizeof msg, "Call `%.*s` with a native tool call in this session.",
                 (int)(tool.len > 64 ? 64 : tool.len), tool.ptr);
        int rc = reject(x, no_text, tool, AW_REJECT_NOT_ALLOWED_IN_MODE, msg);
        return rc ? rc : 1;
    }
    if (!aw__transport_tool(x->t, tool.ptr, tool.len)) {
        char msg[160];
        snprintf(msg, sizeof msg, "Tool `%.*s` is not available; use one of the tools listed in the notice.",
                 (int)(tool.len > 64 ? 64 : tool.len), tool.ptr);
        int rc = reject(x, no_text, tool, AW_REJECT_TOOL_NOT_ALLOWED, msg);
        return rc ? rc : 1;
    }
    return 0;
}

/* {"name": ..., "arguments": {...} or "{...}"} (also "args", "parameters") */
static int call_from_object(aw_extractor *x, const aw_json_value *obj, aw_text payload, const char *source) {
    const aw_json_value *name = aw_json_get(obj, "name");
    if (!aw_json_is_string(name)) {
        return reject(x, no_text, no_text, AW_REJECT_INVALID_JSON,
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
        return tool_call_from_payload(x, no_text, tool, inner, source);
    }
    if (args && !aw_json_is_object(args)) {
        char msg[160];
        snprintf(msg, sizeof msg, "Tool `%.*s` payload is not valid JSON. Provide a JSON object.",
                 (int)(tool.len > 64 ? 64 : tool.len), tool.ptr);
        return reject(x, no_text, tool, AW_REJECT_INVALID_JSON, msg);
    }
    aw_json_doc *empty = NULL;
    if (!args) {
        aw_json_read_options ro = {x->alloc, 0, false};
        if (aw_json_parse("{}", 2, &ro, &empty, NULL)) return AW_ENOMEM;
        args = aw_json_doc_root(empty);
    }
    rc = emit_call(x, no_text, tool, args, payload, source, 0);
    aw_json_doc_free(empty);
    return rc;
}

static int close_hermes(aw_extractor *x, aw_text payload) {
    if (is_blank(payload.ptr, payload.len))
        return reject(x, no_text, no_text, AW_REJECT_EMPTY_PAYLOAD, "A <tool_call> tag is empty.");
    aw_json_doc *doc;
    unsigned repairs;
    if (parse_payload(x, payload.ptr, payload.len, &doc, &repairs)) return AW_ENOMEM;
    if (!doc || !aw_json_is_object(aw_json_doc_root(doc))) {
        aw_json_doc_free(doc);
        return reject(x, no_text, no_text, AW_REJECT_INVALID_JSON,
                      "A <tool_call> must hold a JSON object with \"name\" and \"arguments\".");
    }
    int rc = call_from_object(x, aw_json_doc_root(doc), payload, "hermes");
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

static int close_function_calls(aw_extractor *x, aw_text payload) {
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
                rc = emit_call(x, no_text, name, args, raw, "function_calls", 0);
            }
        }
        aw_json_doc_free(doc);
        pos = end_inv ? inv_end + 9 : n;
    }
    if (!rc && !found)
        rc = reject(x, no_text, no_text, AW_REJECT_EMPTY_PAYLOAD,
                    "A <function_calls> block holds no <invoke name=\"...\"> element.");
    return rc;
}

/* ---- closing ---------------------------------------------------------- */

static int report_close(aw_extractor *x) {
    x_tag *g = &x->tag;
    aw_x_event ev = {AW_X_TAG_CLOSE, no_text, g->slot, tool_text(g), NULL, NULL, NULL};
    if (g->kind != TAG_NONCE) ev.slot = (aw_text){g->name.data, g->name.len};
    if (x->stopped) return AW_ESTOP;
    if (x->fn(x->ctx, &ev)) {
        x->stopped = 1;
        return AW_ESTOP;
    }
    return 0;
}

/* Validate and report the tag whose payload is complete (or cut short:
 * truncated). */
static int finish_tag(aw_extractor *x, bool truncated) {
    x_tag *g = &x->tag;
    aw_text payload = {x->payload.data ? x->payload.data : "", x->payload.len};
    aw_text tool = tool_text(g);
    if (g->kind == TAG_REASONING) return 0;
    int rc = report_close(x);
    if (rc) return rc;
    if (g->kind == TAG_HERMES) return close_hermes(x, payload);
    if (g->kind == TAG_FUNCTION_CALLS) return close_function_calls(x, payload);
    if (g->rejected >= 0) return reject(x, g->slot, tool, (aw_reject_reason)g->rejected, g->message);
    if (is_blank(payload.ptr, payload.len)) {
        char msg[160];
        snprintf(msg, sizeof msg, "The tag for slot %.*s is empty; put the %s inside it.", (int)g->slot.len,
                 g->slot.ptr, g->slot_kind == SLOT_FINAL ? "report" : "JSON arguments");
        return reject(x, g->slot, tool, AW_REJECT_EMPTY_PAYLOAD, msg);
    }
    if (g->slot_kind == SLOT_FINAL) {
        aw_text status;
        rc = check_final_wrapper(x, &status);
        if (rc) return rc < 0 ? rc : 0;
        return final_report(x, status, payload, truncated);
    }
    if (g->slot_kind == SLOT_PROGRESS) {
        aw_text progress = {AW_TOOL_PROGRESS, sizeof AW_TOOL_PROGRESS - 1};
        return tool_call_from_payload(x, g->slot, progress, payload, "xml");
    }
    return tool_call_from_payload(x, g->slot, tool, payload, "xml");
}

int aw__extract_close(aw_extractor *x) { return finish_tag(x, false); }

static int stop_kind(const char *r) {
    /* 0 normal, 1 length, 2 unknown */
    if (!r) return 2;
    static const char *const normal[] = {"stop", "end_turn", "end", "eos", "stop_sequence"};
    for (size_t i = 0; i < sizeof normal / sizeof normal[0]; i++)
        if (!strcmp(r, normal[i])) return 0;
    if (!strcmp(r, "length") || !strcmp(r, "max_tokens")) return 1;
    return 2;
}

int aw__extract_unclosed(aw_extractor *x, const char *stop_reason, int in_open_tag) {
    x_tag *g = &x->tag;
    aw_text tool = tool_text(g);
    if (g->kind == TAG_REASONING) return 0;
    if (in_open_tag) {
        /* the tag never got its '>': nothing of it counts */
        if (g->kind == TAG_NONCE) {
            if (parse_attrs(x)) return AW_ENOMEM;
            tool = tool_text(g);
        }
        aw_text slot = g->kind == TAG_NONCE ? g->slot : (aw_text){g->name.data, g->name.len};
        if (g->kind == TAG_NONCE) {
            const char *rest = g->name.data + x->t->prefix_len + 1;
            const char *dash = memchr(rest, '-', g->name.len - x->t->prefix_len - 1);
            if (dash) slot = (aw_text){dash + 1, (size_t)(g->name.data + g->name.len - dash - 1)};
        }
        return reject(x, slot, tool, AW_REJECT_UNCLOSED, "The reply ended inside an opening tag; close it with '>' and its closing tag.");
    }
    if (g->kind == TAG_NONCE && g->rejected >= 0) {
        /* rejected when it opened: that reason, not the missing end, is
         * what the model must fix */
        int rc = report_close(x);
        return rc ? rc : reject(x, g->slot, tool, (aw_reject_reason)g->rejected, g->message);
    }
    if (g->kind == TAG_NONCE && g->slot_kind == SLOT_FINAL) {
        int k = stop_kind(stop_reason);
        int structured = x->t->format == AW_FORMAT_JSON || x->t->format == AW_FORMAT_SLACK_BLOCK_KIT;
        if (k == 2)
            snprintf(x->warning, sizeof x->warning,
                     "unknown stop reason '%.80s': the unclosed final report was accepted as complete",
                     stop_reason ? stop_reason : "(none)");
        if (k == 1 && structured) {
            int rc = report_close(x);
            if (rc) return rc;
            return reject(x, g->slot, tool, AW_REJECT_UNCLOSED,
                          "The final report was cut off by the output limit; send it again, shorter, and close the FINAL tag.");
        }
        return finish_tag(x, k == 1);
    }
    int rc = report_close(x);
    if (rc) return rc;
    char msg[200];
    if (g->kind == TAG_NONCE)
        snprintf(msg, sizeof msg, "The tag for slot %.*s was not closed; end it with </%.100s>.", (int)g->slot.len,
                 g->slot.ptr, g->name.data);
    else
        snprintf(msg, sizeof msg, "The <%.40s> block was not closed.", g->name.data);
    return reject(x, g->kind == TAG_NONCE ? g->slot : no_text, tool, AW_REJECT_UNCLOSED, msg);
}

/* ---- the fenced dialect and native calls ------------------------------ */

int aw__extract_fenced(aw_extractor *x) {
    if (!x->visible.len) return 0;
    aw_json_doc *doc = NULL;
    aw_error err;
    int rc = aw_messages_parse_tool_calls(x->visible.data, x->visible.len, x->alloc, &doc, &err);
    if (rc) return rc == AW_ENOMEM ? AW_ENOMEM : 0;
    const aw_json_value *calls = aw_json_get(aw_json_doc_root(doc), "tool_calls");
    for (size_t i = 0; i < aw_json_count(calls) && !rc; i++)
        rc = call_from_object(x, aw_json_at(calls, i), no_text, "fenced");
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
            rc = reject(x, no_text, tool, AW_REJECT_NOT_ALLOWED_IN_MODE, msg);
            continue;
        }
        if (x->t->mode == AW_TRANSPORT_XML_FINAL && is_final) {
            /* the XML FINAL tag takes precedence: the report travels as XML */
            rc = reject(x, no_text, tool, AW_REJECT_NOT_ALLOWED_IN_MODE,
                        "The final report travels as the FINAL XML tag in this session, not as a native call.");
            continue;
        }
        const aw_json_value *args = aw_json_get(def, "arguments");
        if (!args) args = aw_json_get(def, "args");
        if (!args) args = aw_json_get(def, "input");
        if (aw_json_is_string(args)) {
            aw_text payload = {args->u.str.ptr, args->u.str.len};
            rc = tool_call_from_payload(x, no_text, tool, payload, "native");
        } else if (aw_json_is_object(args)) {
            rc = emit_call(x, no_text, tool, args, no_text, "native", 0);
        } else {
            char msg[160];
            snprintf(msg, sizeof msg, "Tool `%.*s` payload is not valid JSON. Provide a JSON object.",
                     (int)(tool.len > 64 ? 64 : tool.len), tool.ptr);
            rc = reject(x, no_text, tool, AW_REJECT_INVALID_JSON, msg);
        }
    }
    if (rc == AW_ESTOP) return aw__error_set(err, AW_ESTOP, "stopped by the callback");
    if (rc == AW_ENOMEM) return aw__error_set(err, AW_ENOMEM, "out of memory");
    return rc;
}
