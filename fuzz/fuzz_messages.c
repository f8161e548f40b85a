/* Fuzz the messages reader and both encodings: the bytes as JSON, encoded
 * with every format (detected and forced) in XML and text; and the bytes as
 * a model's text, through the fenced tool-call parser.
 *
 * Checked beyond "no crash": a failure carries a message; XML output that
 * is not a pass-through decodes as a thread (so it is well-formed whatever
 * the input held); every output is valid UTF-8; the text form's calls read
 * back without error; the tool-call result has its three members, its
 * visible text valid UTF-8, and every error a position; the streamed
 * encoder (aw_messages_encode_json) gives the same bytes or error. */
#include <stdlib.h>
#include <string.h>

#include "agentwire/agentwire.h"

/* A single message could be passed through as it is: not checked as XML. */
static int may_pass_through(const aw_json_value *root) {
    const aw_json_value *msgs = aw_json_is_object(root) ? aw_json_get(root, "messages") : root;
    return aw_json_count(msgs) == 1;
}

static void check_text_calls(const aw_buf *out) {
    aw_json_doc *doc = NULL;
    aw_error err;
    if (aw_messages_parse_tool_calls(out->data, out->len, NULL, &doc, &err)) abort();
    aw_json_doc_free(doc);
}

static void encode_all(const aw_json_value *root, int strip) {
    static const aw_messages_format formats[] = {AW_MESSAGES_AUTO, AW_MESSAGES_OPENAI, AW_MESSAGES_ANTHROPIC,
                                                 AW_MESSAGES_LANGCHAIN};
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++)
        for (int enc = 0; enc < 2; enc++) {
            aw_messages_options o = {formats[f], enc ? AW_MESSAGES_TEXT : AW_MESSAGES_XML, strip != 0, NULL};
            aw_buf out;
            aw_buf_init(&out, NULL);
            aw_error err;
            if (aw_messages_encode(root, &o, &out, &err)) {
                if (err.code == 0 || err.message[0] == '\0' || out.len != 0) abort();
            } else if (!aw_utf8_is_valid(out.data, out.len)) {
                abort(); /* every form, the pass-through too, is valid UTF-8 */
            } else if (enc) {
                check_text_calls(&out);
            } else if (!may_pass_through(root)) {
                aw_json_doc *events = NULL;
                if (aw_thread_decode(out.data, out.len, NULL, &events, &err)) abort();
                aw_json_doc_free(events);
            }
            aw_buf_free(&out);
        }
}

static void parse_calls(const char *text, size_t len) {
    aw_json_doc *doc = NULL;
    aw_error err;
    if (aw_messages_parse_tool_calls(text, len, NULL, &doc, &err)) abort();
    const aw_json_value *root = aw_json_doc_root(doc);
    const aw_json_value *calls = aw_json_get(root, "tool_calls");
    const aw_json_value *visible = aw_json_get(root, "text");
    const aw_json_value *errors = aw_json_get(root, "errors");
    if (!aw_json_is_array(calls) || !aw_json_is_string(visible) || !aw_json_is_array(errors)) abort();
    /* blocks are only ever removed; bytes that are not UTF-8 become
     * U+FFFD (3 bytes for at least one), so the text is valid UTF-8 */
    if (visible->u.str.len > 3 * len) abort();
    if (!aw_utf8_is_valid(visible->u.str.ptr, visible->u.str.len)) abort();
    for (size_t i = 0; i < aw_json_count(errors); i++) {
        const aw_json_value *line = aw_json_get(aw_json_at(errors, i), "line");
        if (!aw_json_is_number(line) || line->u.num.d < 1) abort();
    }
    for (size_t i = 0; i < aw_json_count(calls); i++) {
        const aw_json_value *c = aw_json_at(calls, i);
        if (!aw_json_is_string(aw_json_get(c, "id")) || !aw_json_is_string(aw_json_get(c, "name")) ||
            !aw_json_is_object(aw_json_get(c, "args")))
            abort();
    }
    aw_json_doc_free(doc);
}

static int to_buf(void *ctx, const char *p, size_t n) { return aw_buf_append(ctx, p, n); }

/* The streamed encoder gives the bytes, or the error, of parse + encode. */
static void check_stream(const char *text, size_t size) {
    for (int enc = 0; enc < 2; enc++) {
        aw_messages_options o = {AW_MESSAGES_AUTO, enc ? AW_MESSAGES_TEXT : AW_MESSAGES_XML, false, NULL};
        aw_buf whole, streamed;
        aw_buf_init(&whole, NULL);
        aw_buf_init(&streamed, NULL);
        aw_error we, se;
        aw_json_doc *doc = NULL;
        int wrc = aw_json_parse(text, size, NULL, &doc, &we);
        if (!wrc) wrc = aw_messages_encode(aw_json_doc_root(doc), &o, &whole, &we);
        aw_json_doc_free(doc);
        int src = aw_messages_encode_json(text, size, &o, to_buf, &streamed, &se);
        if (wrc != src) abort();
        if (wrc && (strcmp(we.message, se.message) || streamed.len)) abort();
        if (!wrc && (whole.len != streamed.len || (whole.len && memcmp(whole.data, streamed.data, whole.len)))) abort();
        aw_buf_free(&whole);
        aw_buf_free(&streamed);
    }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    const char *text = (const char *)data;
    parse_calls(text, size);
    check_stream(text, size);
    aw_json_doc *doc = NULL;
    aw_error err;
    if (aw_json_parse(text, size, NULL, &doc, &err)) return 0;
    encode_all(aw_json_doc_root(doc), size % 2);
    aw_json_doc_free(doc);
    return 0;
}
