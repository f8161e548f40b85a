/* What the extractor does with a nonce tag: classify it when it opens,
 * validate it when it closes (or the reply ends inside it), and turn its
 * payload into a call or the final report (the seed's three layers:
 * wrapper, format, record). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal/errors.h"
#include "internal/transport_extract.h"
#include "internal/unicode_space.h"
#include "internal/utf8.h"

void aw__extract_tag_reset(aw_extractor *x, int kind) {
    x_tag *g = &x->tag;
    aw_buf_clear(&g->name);
    aw_buf_clear(&g->attrs);
    g->attr_len = 0;
    aw_buf_clear(&g->tool);
    aw_buf_clear(&g->status);
    aw_buf_clear(&g->format);
    g->has_tool = g->has_status = g->has_format = 0;
    g->kind = kind;
    g->slot = AW__X_NO_TEXT;
    g->slot_kind = SLOT_OTHER;
    g->slot_number = 0;
    g->json_payload = 0;
    g->rejected = -1;
    g->cut_string = NO_OFFSET;
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
    size_t n = g->attr_len, i = 0;
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

/* ---- opening ------------------------------------------------------------ */

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

/* Is s[0..n) a numbered slot exactly as the notice writes it (at least
 * four digits, "%04lu": no sign, no extra leading zero)? "1" and "00001"
 * are not slot 0001; "0000" is no slot at all. */
static int is_slot_token(const char *s, size_t n) {
    if (n < 4 || n > 9) return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return 0;
    if (n == 4) return memcmp(s, "0000", 4) != 0;
    return s[0] != '0';
}

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
    } else if (is_slot_token(sl, sn)) {
        g->slot_kind = SLOT_NUMBERED;
        g->json_payload = 1;
        for (size_t i = 0; i < sn; i++) g->slot_number = g->slot_number * 10 + (unsigned long)(sl[i] - '0');
    }
    aw_text tool = aw__x_tag_tool(g);
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
        /* a rejected tag does not use up its slot: only an accepted call does */
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
        if (x->progress_done) {
            pre_reject(x, AW_REJECT_DUPLICATE_SLOT, "The PROGRESS slot was already used in this reply.");
            return;
        }
        if (g->has_tool && !(tool.len == strlen(AW_TOOL_PROGRESS) && !memcmp(tool.ptr, AW_TOOL_PROGRESS, tool.len)))
            pre_reject(x, AW_REJECT_TOOL_NOT_ALLOWED, "The PROGRESS slot takes tool=\"" AW_TOOL_PROGRESS "\" only.");
        return;
    case SLOT_FINAL:
        if (x->final_done) {
            pre_reject(x, AW_REJECT_DUPLICATE_SLOT, "The FINAL slot was already used in this reply; send one final report.");
            return;
        }
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
    if (g->rejected >= 0) return 1;
    int rc = aw__recover_settle(x);
    if (rc) return rc;
    aw_x_event ev = {AW_X_TAG_OPEN, AW__X_NO_TEXT, g->slot, aw__x_tag_tool(g), NULL, NULL, NULL};
    if (g->kind != TAG_NONCE) ev.slot = (aw_text){g->name.data, g->name.len};
    if (x->stopped) return AW_ESTOP;
    if (x->fn(x->ctx, &ev)) {
        x->stopped = 1;
        return AW_ESTOP;
    }
    return 0;
}

/* ---- the final report ------------------------------------------------------ */

/* Layers 2 and 3 of the final report; layer 1 (status and format) was
 * checked by the caller. */
static int final_report(aw_extractor *x, aw_text status, aw_text content, bool truncated) {
    aw_report_format f = x->t->format;
    aw_json_doc *doc = NULL;
    unsigned repairs = 0;
    const aw_json_value *json = NULL;
    aw_text slot = {"FINAL", 5}, tool = {AW_TOOL_FINAL_REPORT, sizeof AW_TOOL_FINAL_REPORT - 1};
    if (f == AW_FORMAT_JSON || f == AW_FORMAT_SLACK_BLOCK_KIT) {
        if (aw__extract_parse_payload(x, content.ptr, content.len, &doc, &repairs)) return AW_ENOMEM;
        const aw_json_value *root = aw_json_doc_root(doc);
        if (f == AW_FORMAT_JSON && aw_json_is_object(root)) {
            json = root;
        } else if (f == AW_FORMAT_SLACK_BLOCK_KIT) {
            if (aw_json_is_array(root)) json = root;
            else if (aw_json_is_array(aw_json_get(root, "messages"))) json = aw_json_get(root, "messages");
        }
        if (!json) {
            aw_json_doc_free(doc);
            return aw__extract_reject(x, slot, tool, AW_REJECT_INVALID_JSON,
                                      f == AW_FORMAT_JSON
                                          ? "Final report payload is not valid JSON. Provide a JSON object."
                                          : "Final report payload must be a JSON array of Slack messages or {\"messages\": [...]}.");
        }
    }
    aw_x_final fin = {status, f, content, json, truncated, repairs, AW_COMMAND_FINAL_XML, false, true, NULL, 0, NULL};
    int rc = aw__recover_settle(x);
    if (rc) {
        aw_json_doc_free(doc);
        return rc;
    }
    /* layer 2: a json report is checked against the user's schema; the
     * verdict and the errors travel with the report */
    aw_schema_result sr;
    aw_schema_result_init(&sr, x->alloc);
    aw_buf summary;
    aw_buf_init(&summary, x->alloc);
    if (f == AW_FORMAT_JSON && x->t->final_compiled) {
        aw_schema_validate_options vo = {20, 0};
        rc = aw_schema_validate(x->t->final_compiled, json, &vo, &sr, NULL);
        if (rc == AW_ELIMIT) {
            sr.valid = false;
            sr.truncated = true;
            rc = 0;
        }
        fin.schema_checked = true;
        fin.schema_valid = sr.valid;
        if (!rc && !sr.valid) {
            rc = aw_schema_result_summary(&sr, 0, &summary);
            fin.schema_errors = sr.errors;
            fin.schema_error_count = sr.error_count;
            fin.schema_message = summary.data;
        }
    }
    aw_x_event ev = {AW_X_FINAL, AW__X_NO_TEXT, slot, tool, NULL, &fin, NULL};
    if (rc) rc = AW_ENOMEM;
    else if (x->stopped) rc = AW_ESTOP;
    else if (x->fn(x->ctx, &ev)) {
        x->stopped = 1;
        rc = AW_ESTOP;
    }
    aw_buf_free(&summary);
    aw_schema_result_free(&sr);
    aw_json_doc_free(doc);
    return rc ? rc : 1;
}

/* s[0..n) without the white space around it (Unicode's, as for an empty
 * payload). */
static aw_text trimmed(const char *s, size_t n) {
    size_t b = 0, e = 0, i = 0, k;
    while (i < n) {
        if ((k = aw__unicode_space_len(s + i, n - i))) {
            i += k;
            continue;
        }
        if (e == 0) b = i;
        i++;
        e = i;
    }
    aw_text t = {s + b, e > b ? e - b : 0};
    return t;
}

/* Is the attribute value, trimmed, the keyword `word` in any case? */
static int is_keyword(const aw_buf *value, const char *word) {
    aw_text v = trimmed(value->data ? value->data : "", value->len);
    if (v.len != strlen(word)) return 0;
    for (size_t i = 0; i < v.len; i++) {
        char c = v.ptr[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != word[i]) return 0;
    }
    return 1;
}

/* Layer 1 of the final report: the wrapper's status and format. Their
 * values are read as keywords (" Success " is success); a missing format
 * is the expected one, but a missing or unknown status is an error, since a
 * failure must never read as a success. */
static int check_final_wrapper(aw_extractor *x, aw_text *status) {
    static const char *const statuses[] = {"success", "failure", "partial"};
    x_tag *g = &x->tag;
    aw_text slot = {"FINAL", 5}, tool = {AW_TOOL_FINAL_REPORT, sizeof AW_TOOL_FINAL_REPORT - 1};
    const char *st = g->status.data ? g->status.data : "";
    const char *known = NULL;
    for (size_t i = 0; g->has_status && !known && i < sizeof statuses / sizeof statuses[0]; i++)
        if (is_keyword(&g->status, statuses[i])) known = statuses[i];
    if (!known) {
        char msg[200];
        snprintf(msg, sizeof msg, "Final report status must be success, failure or partial. Received %.60s%s%s.",
                 g->has_status ? "\"" : "", g->has_status ? st : "nothing", g->has_status ? "\"" : "");
        int rc = aw__extract_reject(x, slot, tool, AW_REJECT_BAD_STATUS, msg);
        return rc ? rc : 1;
    }
    const char *want = aw_report_format_name(x->t->format);
    if (g->has_format && !is_keyword(&g->format, want)) {
        char msg[200];
        snprintf(msg, sizeof msg, "Final report format must be %s. Received %.60s.", want,
                 g->format.data ? g->format.data : "");
        int rc = aw__extract_reject(x, slot, tool, AW_REJECT_WRONG_FORMAT, msg);
        return rc ? rc : 1;
    }
    status->ptr = known;
    status->len = strlen(known);
    return 0;
}

/* ---- closing ---------------------------------------------------------- */

static int report_close(aw_extractor *x) {
    x_tag *g = &x->tag;
    aw_x_event ev = {AW_X_TAG_CLOSE, AW__X_NO_TEXT, g->slot, aw__x_tag_tool(g), NULL, NULL, NULL};
    if (g->kind != TAG_NONCE) ev.slot = (aw_text){g->name.data, g->name.len};
    if (x->stopped) return AW_ESTOP;
    if (x->fn(x->ctx, &ev)) {
        x->stopped = 1;
        return AW_ESTOP;
    }
    return 0;
}

/* The slot of the nonce tag being closed has an accepted call now: a later
 * tag in it is a duplicate. Rejected tags never get here, so they leave
 * their slot open for the model's next try in the same reply. */
static void claim_slot(aw_extractor *x) {
    x_tag *g = &x->tag;
    if (g->slot_kind == SLOT_FINAL) x->final_done = 1;
    else if (g->slot_kind == SLOT_PROGRESS) x->progress_done = 1;
    else if (g->slot_kind == SLOT_NUMBERED)
        x->used[g->slot_number - ((unsigned long)(x->turn - 1) * x->t->max_calls + 1)] = 1;
}

/* Validate and report the nonce tag whose payload is complete (or cut
 * short: truncated). 1 when accepted, 0 when rejected, or a negative code. */
static int finish_nonce_tag(aw_extractor *x, aw_text payload, bool truncated) {
    x_tag *g = &x->tag;
    aw_text tool = aw__x_tag_tool(g);
    /* empty whatever the white space: U+00A0 or U+3000 is no more a report
     * than blanks are */
    if (aw__is_blank_text(payload.ptr, payload.len)) {
        char msg[160];
        snprintf(msg, sizeof msg, "The tag for slot %.*s is empty; put the %s inside it.", (int)g->slot.len,
                 g->slot.ptr, g->slot_kind == SLOT_FINAL ? "report" : "JSON arguments");
        return aw__extract_reject(x, g->slot, tool, AW_REJECT_EMPTY_PAYLOAD, msg);
    }
    if (g->slot_kind == SLOT_FINAL) {
        aw_text status = {"", 0}; /* set by check_final_wrapper when it returns 0 */
        int rc = check_final_wrapper(x, &status);
        if (rc) return rc < 0 ? rc : 0;
        return final_report(x, status, payload, truncated);
    }
    char why[160];
    if (g->cut_string != NO_OFFSET) {
        /* the closing tag was lost in a string the model left open */
        char what[120];
        aw__extract_describe_string(payload.ptr, payload.len, g->cut_string, what, sizeof what);
        snprintf(why, sizeof why, "%s is never closed", what);
    }
    if (g->slot_kind == SLOT_PROGRESS) tool = (aw_text){AW_TOOL_PROGRESS, sizeof AW_TOOL_PROGRESS - 1};
    return aw__extract_tool_call(x, g->slot, tool, payload, "xml", g->cut_string != NO_OFFSET ? why : NULL);
}

static int finish_tag(aw_extractor *x, bool truncated) {
    x_tag *g = &x->tag;
    aw_text payload = {x->payload.data ? x->payload.data : "", x->payload.len};
    if (g->kind == TAG_REASONING) return 0;
    int rc = report_close(x);
    if (rc) return rc;
    rc = finish_nonce_tag(x, payload, truncated);
    if (rc == 1) claim_slot(x);
    return rc < 0 ? rc : 0;
}

int aw__extract_close(aw_extractor *x) { return finish_tag(x, false); }

int aw__extract_reject_open(aw_extractor *x) {
    x_tag *g = &x->tag;
    return aw__extract_reject(x, g->slot, aw__x_tag_tool(g), (aw_reject_reason)g->rejected, g->message);
}

static int stop_kind(const char *r) {
    /* 0 normal, 1 length, 2 unknown */
    if (!r) return 2;
    static const char *const normal[] = {"stop", "end_turn", "end", "eos", "stop_sequence"};
    for (size_t i = 0; i < sizeof normal / sizeof normal[0]; i++)
        if (!strcmp(r, normal[i])) return 0;
    if (!strcmp(r, "length") || !strcmp(r, "max_tokens")) return 1;
    return 2;
}

/* Report the open tag as unclosed. For a nonce tag, `detail` follows "was
 * not closed"; or, when `open_string` names the string left open, the
 * model is told to close that first. */
static int reject_unclosed(aw_extractor *x, const char *detail, const char *open_string) {
    x_tag *g = &x->tag;
    int rc = report_close(x);
    if (rc) return rc;
    char msg[320];
    if (g->kind != TAG_NONCE) {
        snprintf(msg, sizeof msg, "The <%.40s> block was not closed.", g->name.data);
        return aw__extract_reject(x, AW__X_NO_TEXT, aw__x_tag_tool(g), AW_REJECT_UNCLOSED, msg);
    }
    int slot_len = (int)(g->slot.len > 32 ? 32 : g->slot.len);
    if (open_string)
        snprintf(msg, sizeof msg,
                 "The tag for slot %.*s was not closed: %s never ends. Close the string, then end the tag with </%.100s>.",
                 slot_len, g->slot.ptr, open_string, g->name.data);
    else
        snprintf(msg, sizeof msg, "The tag for slot %.*s was not closed%s; end it with </%.100s>.", slot_len,
                 g->slot.ptr, detail, g->name.data);
    return aw__extract_reject(x, g->slot, aw__x_tag_tool(g), AW_REJECT_UNCLOSED, msg);
}

int aw__extract_unclosed(aw_extractor *x, const char *stop_reason) {
    x_tag *g = &x->tag;
    if (g->kind == TAG_REASONING) return 0;
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
            return aw__extract_reject(x, g->slot, aw__x_tag_tool(g), AW_REJECT_UNCLOSED,
                                      "The final report was cut off by the output limit; send it again, shorter, and close the FINAL tag.");
        }
        return finish_tag(x, k == 1);
    }
    if (!x->in_string) return reject_unclosed(x, "", NULL);
    /* a string left open is the likelier fault: name it */
    char what[120];
    aw__extract_describe_string(x->payload.data, x->payload.len, x->str_start, what, sizeof what);
    return reject_unclosed(x, "", what);
}

int aw__extract_unclosed_before_tag(aw_extractor *x) {
    return reject_unclosed(x, " before the next tag began", NULL);
}

int aw__extract_open_unended(aw_extractor *x, int at_end) {
    x_tag *g = &x->tag;
    if (g->kind != TAG_NONCE) return 0; /* a reasoning tag is only ever passed over */
    if (parse_attrs(x)) return AW_ENOMEM;
    /* the slot as named; the tag was never classified */
    const char *rest = g->name.data + x->t->prefix_len + 1;
    const char *dash = memchr(rest, '-', g->name.len - x->t->prefix_len - 1);
    aw_text slot = dash ? (aw_text){dash + 1, (size_t)(g->name.data + g->name.len - dash - 1)} : AW__X_NO_TEXT;
    return aw__extract_reject(x, slot, aw__x_tag_tool(g), AW_REJECT_UNCLOSED,
                              at_end ? "The reply ended inside an opening tag; close it with '>' and its closing tag."
                              : "An opening tag was not ended with '>' before the next '<'; end it with '>'.");
}
