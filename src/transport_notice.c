/* The two notices of the XML transport: XML-NEXT (what the model may write
 * this turn) and XML-PAST (what its tool calls of the previous turn
 * returned). Both are plain text the caller sends as a user message; they
 * end without a newline, like every string the library makes. Complete
 * examples: tests/vectors/transport/next_xml.txt, next_xml_final.txt,
 * next_xml_last_turn.txt and past.txt (golden files).
 *
 * XML-NEXT, xml mode (turn 2 of 8, 10 calls a turn, nonce 1a2b3c4d):
 *
 *   # System Notice
 *
 *   Turn 2 of 8. Session nonce: 1a2b3c4d.
 *   [This is the last turn: write your final report in this reply.]
 *
 *   Call tools by writing XML tags in your reply. A tag counts only when ...
 *
 *   ## Slots open this turn
 *
 *   ai-agent-1a2b3c4d-0011 to ai-agent-1a2b3c4d-0020: up to 10 tool calls,
 *   one per slot; use each slot once. Slots of earlier turns are closed.
 *
 *   ## Tools
 *
 *   ### search                                  (one block per tool)
 *   Search the web. Returns titles &amp; URLs.
 *   Arguments (JSON Schema): {"type":"object","properties":{...}}
 *   <ai-agent-1a2b3c4d-0011 tool="search">{…JSON arguments…}</ai-agent-1a2b3c4d-0011>
 *
 *   The templates show the first slot; take the next free slot for ...
 *
 *   ## Progress
 *
 *   To tell the user what you are doing, write:
 *   <ai-agent-1a2b3c4d-PROGRESS tool="agent__progress_report">{"progress": "…"}</ai-agent-1a2b3c4d-PROGRESS>
 *
 *   ## Final report
 *
 *   When the task is done, or cannot be done, write the final report in this tag:
 *   <ai-agent-1a2b3c4d-FINAL tool="agent__final_report" status="success|failure|partial" format="markdown">…</ai-agent-1a2b3c4d-FINAL>
 *
 *   Format markdown: GitHub-flavoured Markdown, written directly inside the tag.
 *   [json: the wrapper schema {status, format, content: <the user's schema,
 *    or {"type":"object"}>}, saying that status and format are attributes]
 *
 *   Checklist for the final report:
 *   - status is one of success, failure or partial (one value, not the list).
 *   - format is "markdown", exactly.
 *   - The whole report is inside the tag, and the tag is closed with </...-FINAL>.
 *   - Write the final report once; it ends the session.
 *
 * In xml-final mode the slot, tool and progress sections give way to one
 * paragraph: tools and progress are called natively, tags for them are
 * rejected, and the final report is the one tag. Native mode: nothing.
 * Tools named agent__final_report or agent__progress_report are not listed
 * (they are the FINAL and PROGRESS slots).
 *
 * XML-PAST:
 *
 *   # System Notice: tool results of the previous turn
 *
 *   Your tool calls of the previous turn returned what follows. Requests
 *   and responses are escaped text: &lt; &gt; &amp; stand for < > &.
 *
 *   <tool_result slot="0011" tool="search" status="ok" duration_ms="412">
 *   <request>{"query":"agentwire"}</request>
 *   <response note="cut to 4096 of 10000 bytes">...</response>
 *   </tool_result>
 *
 * (one tool_result per call; the note only when something was cut.)
 *
 * Why it cannot be forged or broken: everything that comes from outside
 * (tool names, descriptions, schemas, slots, requests, responses) goes
 * through aw_xml_escape, so none of it holds a '<' — a tool's output can
 * never contain a tag, neither one of ours (<ai-agent-…>) nor the
 * </response> that ends its own element — and nothing XML 1.0 forbids
 * (controls, invalid UTF-8) gets through. Two choices keep it cheap for a
 * model to read:
 *   - In free text (descriptions, requests, responses) the quote characters
 *     stay as they are: they end nothing outside an attribute, and &quot;
 *     everywhere would bloat JSON and teach the model to write it.
 *     Attribute values (tool names, slots) are escaped fully.
 *   - Schemas are written with aw_json_write (compact) and their markup
 *     characters become the JSON escapes \u003c, \u003e, \u0026: the same
 *     JSON value, still valid JSON to copy, and free of '<', '>' and '&'.
 * Requests and responses are first cut to 4,096 bytes at a character
 * boundary (aw__utf8_clip), then escaped; ANSI terminal sequences in them
 * are removed. On failure the output buffer is left as it was. */
#include <math.h>
#include <string.h>

#include "agentwire/xml.h"
#include "internal/errors.h"
#include "internal/transport.h"
#include "internal/utf8.h"

#define PAST_MAX_BYTES 4096

/* ---- escaping ------------------------------------------------------------ */

/* Free text: aw_xml_escape, then the quote entities turned back into the
 * quote characters. Exact, because every '&' in escaped text starts an
 * entity (an '&' of the input became "&amp;"). Escaping the whole text at
 * once keeps ANSI sequences that hold quotes whole for AW_XML_STRIP_ANSI. */
static int put_text(aw_buf *out, const char *s, size_t n, unsigned flags) {
    size_t start = out->len;
    if (aw_xml_escape(out, s, n, flags)) return AW_ENOMEM;
    char *d = out->data;
    char *amp = memchr(d + start, '&', out->len - start);
    if (!amp) return 0;
    size_t r = (size_t)(amp - d), w = r;
    while (r < out->len) {
        if (d[r] == '&' && r + 6 <= out->len && (memcmp(d + r, "&quot;", 6) == 0 || memcmp(d + r, "&apos;", 6) == 0)) {
            d[w++] = d[r + 1] == 'q' ? '"' : '\'';
            r += 6;
        } else {
            d[w++] = d[r++];
        }
    }
    out->len = w;
    d[w] = '\0';
    return 0;
}

/* An attribute value or a name: fully escaped. */
static int put_attr(aw_buf *out, const char *s, size_t n) {
    return aw_xml_escape(out, s ? s : "", s ? n : 0, 0);
}

/* A schema: compact JSON with '<', '>' and '&' as \u escapes (they can only
 * occur inside strings, so this is the same value). */
static int put_schema(aw_buf *out, const aw_json_value *v) {
    aw_buf tmp;
    aw_buf_init(&tmp, out->alloc);
    int rc = aw_json_write(v, NULL, &tmp, NULL);
    size_t run = 0;
    for (size_t i = 0; !rc && i < tmp.len; i++) {
        const char *esc = tmp.data[i] == '<' ? "\\u003c" : tmp.data[i] == '>' ? "\\u003e"
                        : tmp.data[i] == '&' ? "\\u0026" : NULL;
        if (!esc) continue;
        if (aw_buf_append(out, tmp.data + run, i - run) || aw_buf_append(out, esc, 6)) rc = AW_ENOMEM;
        run = i + 1;
    }
    if (!rc && aw_buf_append(out, tmp.data + run, tmp.len - run)) rc = AW_ENOMEM;
    aw_buf_free(&tmp);
    return rc ? AW_ENOMEM : 0;
}

/* ---- XML-NEXT ------------------------------------------------------------ */

/* "ai-agent-1a2b3c4d-" + what */
static int put_tag_name(aw_buf *out, const aw_transport *t, const char *what) {
    return aw_buf_printf(out, "%s-%s-%s", t->prefix, t->nonce, what);
}

static int put_slot_name(aw_buf *out, const aw_transport *t, unsigned long long n) {
    return aw_buf_printf(out, "%s-%s-%04llu", t->prefix, t->nonce, n);
}

static const char *format_meaning(aw_report_format f) {
    switch (f) {
    case AW_FORMAT_MARKDOWN:
        return "GitHub-flavoured Markdown, written directly inside the tag.";
    case AW_FORMAT_TEXT:
        return "plain text without markup, written directly inside the tag.";
    case AW_FORMAT_TTY:
        return "text for a terminal, written directly inside the tag; ANSI colours are allowed, "
               "Markdown is not rendered.";
    case AW_FORMAT_PIPE:
        return "plain text for another program to read, written directly inside the tag: no "
               "decoration, no markup, no commentary.";
    case AW_FORMAT_JSON:
        return "one JSON object inside the tag: no code fence, no text around it.";
    case AW_FORMAT_SLACK_BLOCK_KIT:
        return "Slack Block Kit messages as JSON inside the tag: an array of messages, each "
               "{\"blocks\": [...]}, or an object {\"messages\": [...]}; no code fence, no text "
               "around it.";
    case AW_FORMAT_SUB_AGENT:
        return "your answer for the agent that called you, passed on exactly as you write it "
               "(text or JSON).";
    }
    return "";
}

/* For json: the whole report as a schema. status and format travel as the
 * tag's attributes; the tag's content is the JSON of "content". */
static int put_json_wrapper(aw_buf *out, const aw_transport *t) {
    int rc = aw_buf_append_str(out,
                               "The final report as a JSON Schema; status and format are the tag's "
                               "attributes and the tag's content is the JSON of \"content\":\n"
                               "{\"type\":\"object\",\"properties\":{\"status\":{\"type\":\"string\","
                               "\"enum\":[\"success\",\"failure\",\"partial\"]},\"format\":{\"type\":"
                               "\"string\",\"const\":\"json\"},\"content\":");
    if (!rc) rc = t->final_schema ? put_schema(out, t->final_schema) : aw_buf_append_str(out, "{\"type\":\"object\"}");
    if (!rc) rc = aw_buf_append_str(out, "},\"required\":[\"status\",\"format\",\"content\"]}\n");
    return rc;
}

static int is_reserved(const aw_text *name) {
    return (name->len == strlen(AW_TOOL_FINAL_REPORT) && memcmp(name->ptr, AW_TOOL_FINAL_REPORT, name->len) == 0) ||
           (name->len == strlen(AW_TOOL_PROGRESS) && memcmp(name->ptr, AW_TOOL_PROGRESS, name->len) == 0);
}

static int put_slots_and_tools(aw_buf *out, const aw_transport *t, unsigned turn) {
    unsigned long long first = (unsigned long long)(turn - 1) * t->max_calls + 1;
    unsigned long long last = (unsigned long long)turn * t->max_calls;
    int rc = aw_buf_append_str(out,
                               "Call tools by writing XML tags in your reply. A tag counts only when "
                               "its name carries this session's nonce and an open slot; anything else "
                               "is ignored.\n\n## Slots open this turn\n\n");
    if (rc) return rc;
    if (t->max_calls == 1) {
        rc = put_slot_name(out, t, first);
        if (!rc) rc = aw_buf_append_str(out, ": one tool call.");
    } else {
        rc = put_slot_name(out, t, first);
        if (!rc) rc = aw_buf_append_str(out, " to ");
        if (!rc) rc = put_slot_name(out, t, last);
        if (!rc)
            rc = aw_buf_printf(out, ": up to %u tool calls, one per slot; use each slot once.", t->max_calls);
    }
    if (!rc)
        rc = aw_buf_append_str(out, turn > 1 ? " Slots of earlier turns are closed.\n\n## Tools\n"
                                             : "\n\n## Tools\n");
    size_t shown = 0;
    for (size_t i = 0; !rc && i < t->tool_count; i++) {
        const aw_tool_def *d = &t->tools[i];
        if (is_reserved(&d->name)) continue;
        shown++;
        rc = aw_buf_append_str(out, "\n### ");
        if (!rc) rc = put_attr(out, d->name.ptr, d->name.len);
        if (!rc && d->description.len) {
            rc = aw_buf_putc(out, '\n');
            if (!rc) rc = put_text(out, d->description.ptr, d->description.len, 0);
        }
        if (!rc) rc = aw_buf_append_str(out, "\nArguments (JSON Schema): ");
        if (!rc) rc = d->schema ? put_schema(out, d->schema) : aw_buf_append_str(out, "{\"type\":\"object\"}");
        if (!rc) rc = aw_buf_putc(out, '\n');
        if (!rc) rc = aw_buf_putc(out, '<');
        if (!rc) rc = put_slot_name(out, t, first);
        if (!rc) rc = aw_buf_append_str(out, " tool=\"");
        if (!rc) rc = put_attr(out, d->name.ptr, d->name.len);
        if (!rc) rc = aw_buf_append_str(out, "\">{\xE2\x80\xA6JSON arguments\xE2\x80\xA6}</");
        if (!rc) rc = put_slot_name(out, t, first);
        if (!rc) rc = aw_buf_append_str(out, ">\n");
    }
    if (!rc && !shown) rc = aw_buf_append_str(out, "\nNo tools this session.\n");
    if (!rc && shown)
        rc = aw_buf_append_str(out, t->max_calls > 1 ? "\nThe templates show the first slot; take the next "
                                                       "free slot for each further call. The payload is the "
                                                       "tool's arguments as one JSON object.\n"
                                                     : "\nThe payload is the tool's arguments as one JSON object.\n");
    if (rc) return rc;
    /* progress */
    rc = aw_buf_append_str(out, "\n## Progress\n\nTo tell the user what you are doing, write:\n<");
    if (!rc) rc = put_tag_name(out, t, "PROGRESS");
    if (!rc) rc = aw_buf_append_str(out, " tool=\"" AW_TOOL_PROGRESS "\">{\"progress\": \"\xE2\x80\xA6\"}</");
    if (!rc) rc = put_tag_name(out, t, "PROGRESS");
    if (!rc) rc = aw_buf_append_str(out, ">\n");
    return rc;
}

static int put_final(aw_buf *out, const aw_transport *t) {
    const char *fmt = aw_report_format_name(t->format);
    int rc = aw_buf_append_str(out, "\n## Final report\n\nWhen the task is done, or cannot be done, "
                                    "write the final report in this tag:\n<");
    if (!rc) rc = put_tag_name(out, t, "FINAL");
    if (!rc) rc = aw_buf_printf(out, " tool=\"" AW_TOOL_FINAL_REPORT "\" status=\"success|failure|partial\" "
                                     "format=\"%s\">%s</",
                                fmt, t->format == AW_FORMAT_JSON ? "{\xE2\x80\xA6}" : "\xE2\x80\xA6");
    if (!rc) rc = put_tag_name(out, t, "FINAL");
    if (!rc) rc = aw_buf_printf(out, ">\n\nFormat %s: %s\n", fmt, format_meaning(t->format));
    if (!rc && t->format == AW_FORMAT_JSON) rc = put_json_wrapper(out, t);
    if (!rc)
        rc = aw_buf_printf(out,
                           "\nChecklist for the final report:\n"
                           "- status is one of success, failure or partial (one value, not the list).\n"
                           "- format is \"%s\", exactly.\n"
                           "- The whole report is inside the tag, and the tag is closed with </",
                           fmt);
    if (!rc) rc = put_tag_name(out, t, "FINAL");
    if (!rc) rc = aw_buf_append_str(out, ">.\n- Write the final report once; it ends the session.");
    return rc;
}

int aw_transport_render_next(const aw_transport *t, unsigned turn, unsigned max_turns, aw_buf *out) {
    if (!t || !out || turn == 0 || max_turns == 0 || turn > max_turns) return AW_EINVAL;
    if (t->mode == AW_TRANSPORT_NATIVE) return 0;
    size_t start = out->len;
    int rc = aw_buf_printf(out, "# System Notice\n\nTurn %u of %u. Session nonce: %s.\n", turn, max_turns,
                           t->nonce);
    if (!rc && turn == max_turns)
        rc = aw_buf_append_str(out, "This is the last turn: write your final report in this reply.\n");
    if (!rc) rc = aw_buf_putc(out, '\n');
    if (!rc) {
        if (t->mode == AW_TRANSPORT_XML)
            rc = put_slots_and_tools(out, t, turn);
        else
            rc = aw_buf_append_str(out,
                                   "Call your tools with native tool calls, as usual; progress reports "
                                   "too. Do not write tags for them: such tags are rejected. The final "
                                   "report is the exception: write it as the XML tag below, not as a "
                                   "native tool call.\n");
    }
    if (!rc) rc = put_final(out, t);
    if (rc) {
        out->len = start;
        if (out->data) out->data[start] = '\0';
        return AW_ENOMEM;
    }
    return 0;
}

/* ---- XML-PAST ------------------------------------------------------------ */

static int put_past_part(aw_buf *out, const char *name, aw_text v, size_t max_bytes) {
    const char *s = v.ptr ? v.ptr : "";
    size_t n = v.ptr ? v.len : 0;
    size_t keep = aw__utf8_clip(s, n, max_bytes);
    int rc = aw_buf_printf(out, "<%s", name);
    if (!rc && keep < n) rc = aw_buf_printf(out, " note=\"cut to %zu of %zu bytes\"", keep, n);
    if (!rc) rc = aw_buf_putc(out, '>');
    if (!rc) rc = put_text(out, s, keep, AW_XML_STRIP_ANSI);
    if (!rc) rc = aw_buf_printf(out, "</%s>\n", name);
    return rc;
}

int aw_transport_render_past(const aw_past_call *calls, size_t n, aw_buf *out) {
    return aw_transport_render_past_limit(calls, n, PAST_MAX_BYTES, out);
}

int aw_transport_render_past_limit(const aw_past_call *calls, size_t n, size_t max_bytes, aw_buf *out) {
    if (!out || (n && !calls)) return AW_EINVAL;
    if (max_bytes == 0) max_bytes = PAST_MAX_BYTES;
    if (n == 0) return 0;
    size_t start = out->len;
    int rc = aw_buf_append_str(out,
                               "# System Notice: tool results of the previous turn\n\n"
                               "Your tool calls of the previous turn returned what follows. Requests "
                               "and responses are escaped text: &lt; &gt; &amp; stand for < > &.\n");
    for (size_t i = 0; !rc && i < n; i++) {
        const aw_past_call *c = &calls[i];
        double ms = c->duration_ms;
        if (!(ms >= 0)) ms = 0; /* negative or NaN */
        if (ms > 1e15) ms = 1e15;
        rc = aw_buf_append_str(out, "\n<tool_result slot=\"");
        if (!rc) rc = put_attr(out, c->slot.ptr, c->slot.len);
        if (!rc) rc = aw_buf_append_str(out, "\" tool=\"");
        if (!rc) rc = put_attr(out, c->tool.ptr, c->tool.len);
        if (!rc) rc = aw_buf_printf(out, "\" status=\"%s\" duration_ms=\"%.0f\">\n", c->ok ? "ok" : "failed",
                                    floor(ms + 0.5));
        if (!rc) rc = put_past_part(out, "request", c->request, max_bytes);
        if (!rc) rc = put_past_part(out, "response", c->response, max_bytes);
        if (!rc) rc = aw_buf_append_str(out, "</tool_result>");
    }
    if (rc) {
        out->len = start;
        if (out->data) out->data[start] = '\0';
        return AW_ENOMEM;
    }
    return 0;
}
