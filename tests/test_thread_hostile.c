/* Hostile input for the event reader and the thread codec (issue 3, "Hostile
 * input"): invalid UTF-8 and NUL bytes, a 100 MB content, 1,000,000 events,
 * deeply nested args (up to and beyond the depth limit), truncated
 * JSON-lines files. Everything is built in memory; the whole file runs in
 * well under a minute under ASan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <expat.h>

#include "agentwire/agentwire.h"
#include "testutil.h"

#define FFFD "\xEF\xBF\xBD"

/* ---- helpers ------------------------------------------------------------------- */

typedef struct counter {
    int depth, events;
    size_t text_bytes; /* character data inside events */
    size_t nul_or_bad; /* characters XML forbids (expat would have refused them) */
} counter;

static void XMLCALL c_start(void *ud, const XML_Char *name, const XML_Char **atts) {
    (void)name;
    (void)atts;
    counter *c = ud;
    if (++c->depth == 2) c->events++;
}

static void XMLCALL c_end(void *ud, const XML_Char *name) {
    (void)name;
    ((counter *)ud)->depth--;
}

static void XMLCALL c_text(void *ud, const XML_Char *s, int len) {
    counter *c = ud;
    if (c->depth == 2) c->text_bytes += (size_t)len;
    for (int i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x20 && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') c->nul_or_bad++;
}

/* The document must parse with expat; returns what it saw. */
static counter xml_count(const char *doc, size_t len) {
    counter c;
    memset(&c, 0, sizeof c);
    XML_Parser p = XML_ParserCreate("UTF-8");
    XML_SetUserData(p, &c);
    XML_SetElementHandler(p, c_start, c_end);
    XML_SetCharacterDataHandler(p, c_text);
    size_t pos = 0;
    enum XML_Status st = XML_STATUS_OK;
    do { /* in pieces: XML_Parse takes an int length */
        size_t n = len - pos > (1u << 28) ? (1u << 28) : len - pos;
        st = XML_Parse(p, doc + pos, (int)n, pos + n == len);
        pos += n;
    } while (st == XML_STATUS_OK && pos < len);
    if (st != XML_STATUS_OK)
        fail_msg("expat: %s at %lu:%lu", XML_ErrorString(XML_GetErrorCode(p)), (unsigned long)XML_GetCurrentLineNumber(p),
                 (unsigned long)XML_GetCurrentColumnNumber(p));
    XML_ParserFree(p);
    return c;
}

static aw_event_list *events_of(const char *text, size_t len) {
    aw_event_list *l = NULL;
    aw_error err;
    if (aw_event_list_parse(text, len, NULL, &l, &err))
        fail_msg("parse failed at line %zu col %zu: %s", err.line, err.column, err.message);
    return l;
}

static void encode_list(aw_event_list *l, const aw_thread_options *o, aw_buf *out) {
    aw_error err;
    if (aw_thread_encode(aw_event_list_items(l), aw_event_list_count(l), o, out, &err)) fail_msg("encode: %s", err.message);
}

/* ---- invalid UTF-8 and NUL bytes --------------------------------------------------------------- */

/* A message event with content bytes, built (the JSON reader refuses raw
 * invalid UTF-8). */
static aw_event built_event(aw_json_doc *doc, const char *type, const char *field, const char *bytes, size_t n) {
    aw_json_value *o = aw_json_new_object(doc);
    aw_json_object_set_string(doc, o, "type", type, strlen(type));
    if (!strcmp(type, "message")) aw_json_object_set_string(doc, o, "role", "user", 4);
    if (!strcmp(type, "tool_call")) {
        aw_json_object_set_string(doc, o, "toolCallId", "c", 1);
        aw_json_value *args = aw_json_new_object(doc);
        aw_json_object_set_string(doc, args, "k", bytes, n);
        aw_json_object_set(doc, o, "args", 4, args);
    }
    if (!strcmp(type, "tool_result")) aw_json_object_set_string(doc, o, "toolCallId", "c", 1);
    if (!strcmp(type, "error")) aw_json_object_set_bool(doc, o, "recoverable", true);
    if (!strcmp(type, "completion")) aw_json_object_set_bool(doc, o, "verified", false);
    if (!strcmp(type, "summary")) {
        aw_json_value *its = aw_json_new_array(doc);
        aw_json_array_push(doc, its, aw_json_new_int(doc, 1));
        aw_json_object_set(doc, o, "summarizedIterations", 20, its);
    }
    aw_json_object_set_string(doc, o, field, bytes, n);
    aw_json_object_set_int(doc, o, "timestamp", 1);
    aw_json_object_set_int(doc, o, "iteration", 1);
    aw_event ev;
    aw_error err;
    if (aw_event_from_json(o, &ev, &err)) fail_msg("built event: %s", err.message);
    return ev;
}

static void test_invalid_utf8_and_nul(void **state) {
    (void)state;
    /* 256 KiB of every byte value in a shuffled order, in every body and in
     * the tool name */
    size_t n = 256 * 1024;
    char *bytes = malloc(n);
    uint64_t s = 42;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        bytes[i] = (char)(i % 7 == 0 ? (char)(i & 0xFF) : (char)(s >> 56));
    }
    aw_json_doc *doc = aw_json_doc_new(NULL);
    aw_event ev[6];
    ev[0] = built_event(doc, "message", "content", bytes, n);
    ev[1] = built_event(doc, "tool_call", "toolName", bytes, 4096);
    ev[2] = built_event(doc, "tool_result", "result", bytes, n);
    ev[3] = built_event(doc, "error", "error", bytes + 1, n - 1);
    ev[4] = built_event(doc, "completion", "result", bytes + 2, n - 2);
    ev[5] = built_event(doc, "summary", "summary", bytes + 3, n - 3);
    aw_error err;
    for (int strip = 0; strip < 2; strip++) {
        aw_thread_options o = {NULL, 0, strip, NULL};
        aw_buf out;
        aw_buf_init(&out, NULL);
        assert_int_equal(aw_thread_encode(ev, 6, &o, &out, &err), 0);
        assert_null(memchr(out.data, '\0', out.len)); /* no NUL survives */
        counter c = xml_count(out.data, out.len);
        assert_int_equal(c.events, 6);
        assert_int_equal(c.nul_or_bad, 0);
        /* and it decodes */
        aw_json_doc *back = NULL;
        if (aw_thread_decode(out.data, out.len, NULL, &back, &err)) fail_msg("decode: %s", err.message);
        assert_int_equal(aw_json_count(aw_json_doc_root(back)), 6);
        aw_json_doc_free(back);
        aw_buf_free(&out);
    }
    aw_json_doc_free(doc);
    free(bytes);

    /* NUL in the middle of short text */
    doc = aw_json_doc_new(NULL);
    ev[0] = built_event(doc, "message", "content", "a\0b\0\0c", 6);
    aw_buf out;
    aw_buf_init(&out, NULL);
    assert_int_equal(aw_thread_encode(ev, 1, NULL, &out, &err), 0);
    assert_string_equal(out.data, "<thread>\n  <event type=\"human\" id=\"0\" iteration=\"1\">a" FFFD "b" FFFD FFFD "c</event>\n</thread>");
    aw_buf_free(&out);
    aw_json_doc_free(doc);

    /* the JSON reader: raw bytes that are not UTF-8, raw NUL and raw
     * controls are refused with the line */
    static const char bad_utf8[] = "{\"type\":\"plan\",\"timestamp\":1,\"iteration\":1}\n"
                                   "{\"type\":\"message\",\"role\":\"user\",\"content\":\"a\xff\xfe\",\"timestamp\":1,\"iteration\":1}\n";
    static const char raw_nul[] = "{\"type\":\"plan\",\"timestamp\":1,\"iteration\":1}\n\n"
                                  "{\"type\":\"message\",\"role\":\"user\",\"content\":\"a\0b\",\"timestamp\":1,\"iteration\":1}\n";
    static const char nul_outside[] = "{\"type\":\"plan\",\"timestamp\":1,\"iteration\":1}\0\n";
    static const char overlong[] = "\n{\"type\":\"plan\",\"x\":\"\xc0\xaf\",\"timestamp\":1,\"iteration\":1}";
    static const char surrogate_bytes[] = "\n\n\n{\"type\":\"plan\",\"x\":\"\xed\xa0\x80\",\"timestamp\":1,\"iteration\":1}";
    struct {
        const char *text;
        size_t len, line;
    } cases[] = {
        {bad_utf8, sizeof bad_utf8 - 1, 2},
        {raw_nul, sizeof raw_nul - 1, 3},
        {nul_outside, sizeof nul_outside - 1, 1},
        {overlong, sizeof overlong - 1, 2},
        {surrogate_bytes, sizeof surrogate_bytes - 1, 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        aw_event_list *l = (aw_event_list *)1;
        int rc = aw_event_list_parse(cases[i].text, cases[i].len, NULL, &l, &err);
        if (rc >= 0) fail_msg("case %zu accepted", i);
        assert_null(l);
        if (err.line != cases[i].line) fail_msg("case %zu: line %zu, want %zu (%s)", i, err.line, cases[i].line, err.message);
        assert_true(err.column >= 1);
    }
}

/* ---- 100 MB of content ----------------------------------------------------------------------------- */

/* One repetition: as JSON string text, as the decoded bytes, and as the
 * encoder must write it. */
#define REP_JSON "Lorem ipsum <b>dolor</b> & sit 'amet' \\\"q\\\" caf\xC3\xA9 \xF0\x9F\x98\x80 \\u0007\\t"
#define REP_TEXT "Lorem ipsum <b>dolor</b> & sit 'amet' \"q\" caf\xC3\xA9 \xF0\x9F\x98\x80 \x07\t"
#define REP_XML                                                                                      \
    "Lorem ipsum &lt;b&gt;dolor&lt;/b&gt; &amp; sit &apos;amet&apos; &quot;q&quot; caf\xC3\xA9 \xF0\x9F\x98\x80 " FFFD "\t"

static void test_100mb_content(void **state) {
    (void)state;
    const size_t rep_json = sizeof REP_JSON - 1, rep_text = sizeof REP_TEXT - 1, rep_xml = sizeof REP_XML - 1;
    const size_t reps = (100u << 20) / rep_json + 1; /* a little over 100 MB of JSON */
    static const char head[] = "{\"type\":\"tool_result\",\"toolCallId\":\"big\",\"result\":\"";
    static const char tail[] = "\",\"durationMs\":1,\"timestamp\":1,\"iteration\":7}\n";
    size_t len = sizeof head - 1 + reps * rep_json + sizeof tail - 1;
    char *json = malloc(len + 1);
    assert_non_null(json);
    char *p = json;
    memcpy(p, head, sizeof head - 1);
    p += sizeof head - 1;
    for (size_t i = 0; i < reps; i++, p += rep_json) memcpy(p, REP_JSON, rep_json);
    memcpy(p, tail, sizeof tail - 1);
    assert_true(len > (100u << 20));

    aw_event_list *l = events_of(json, len);
    free(json);
    const aw_event *ev = aw_event_list_items(l);
    assert_int_equal(ev[0].result->u.str.len, reps * rep_text);

    aw_buf out;
    aw_buf_init(&out, NULL);
    encode_list(l, NULL, &out);
    aw_event_list_free(l);
    static const char xhead[] = "<thread>\n  <event type=\"tool_output\" id=\"0\" name=\"unknown\" status=\"success\" iteration=\"7\" duration_ms=\"1\">";
    static const char xtail[] = "</event>\n</thread>";
    assert_int_equal(out.len, sizeof xhead - 1 + reps * rep_xml + sizeof xtail - 1);
    assert_memory_equal(out.data, xhead, sizeof xhead - 1);
    for (size_t i = 0; i < reps; i++)
        if (memcmp(out.data + sizeof xhead - 1 + i * rep_xml, REP_XML, rep_xml) != 0) fail_msg("repetition %zu differs", i);
    assert_memory_equal(out.data + out.len - (sizeof xtail - 1), xtail, sizeof xtail - 1);

    /* expat reads it back: the text is the content with U+FFFD for BEL */
    counter c = xml_count(out.data, out.len);
    assert_int_equal(c.events, 1);
    assert_int_equal(c.text_bytes, reps * (rep_text + 2)); /* BEL (1 byte) became U+FFFD (3 bytes) */

    /* and so does the decoder */
    aw_json_doc *back = NULL;
    aw_error err;
    assert_int_equal(aw_thread_decode(out.data, out.len, NULL, &back, &err), 0);
    aw_buf_free(&out);
    const aw_json_value *r = aw_json_get(aw_json_at(aw_json_doc_root(back), 0), "result");
    assert_true(aw_json_is_string(r));
    assert_int_equal(r->u.str.len, reps * (rep_text + 2));
    aw_json_doc_free(back);
}

/* ---- 1,000,000 events ------------------------------------------------------------------------------- */

#define MILLION 1000000

static void test_million_events(void **state) {
    (void)state;
    aw_buf in;
    aw_buf_init(&in, NULL);
    aw_buf_reserve(&in, (size_t)MILLION * 80);
    for (int i = 0; i < MILLION; i++) {
        switch (i % 5) {
        case 0: aw_buf_printf(&in, "{\"type\":\"message\",\"role\":\"user\",\"content\":\"m%d\",\"timestamp\":%d,\"iteration\":%d}\n", i, i, i / 5); break;
        case 1: aw_buf_printf(&in, "{\"type\":\"tool_call\",\"toolName\":\"t%d\",\"toolCallId\":\"c%d\",\"args\":{},\"timestamp\":0,\"iteration\":%d}\n", i % 7, i, i / 5); break;
        case 2: aw_buf_printf(&in, "{\"type\":\"tool_result\",\"toolCallId\":\"c%d\",\"result\":\"r\",\"timestamp\":0,\"iteration\":%d}\n", i - 1, i / 5); break;
        case 3: aw_buf_printf(&in, "{\"type\":\"plan\",\"timestamp\":0,\"iteration\":%d}\n", i / 5); break;
        default: aw_buf_printf(&in, "{\"type\":\"error\",\"error\":\"e\",\"recoverable\":false,\"timestamp\":0,\"iteration\":%d}\n", i / 5); break;
        }
    }
    aw_event_list *l = events_of(in.data, in.len);
    aw_buf_free(&in);
    assert_int_equal(aw_event_list_count(l), MILLION);

    aw_buf out;
    aw_buf_init(&out, NULL);
    encode_list(l, NULL, &out);
    size_t lines = 0;
    for (const char *q = out.data; (q = memchr(q, '\n', out.len - (size_t)(q - out.data))); q++) lines++;
    assert_int_equal(lines, MILLION / 5 * 4 + 1); /* plans are not written; "<thread>" ... "</thread>" */
    const char *last = "\n  <event type=\"error\" id=\"999999\" iteration=\"199999\" recoverable=\"false\">e</event>\n</thread>";
    assert_memory_equal(out.data + out.len - strlen(last), last, strlen(last));
    assert_non_null(strstr(out.data + out.len - 400,
                           "<event type=\"tool_output\" id=\"999997\" name=\"t4\" status=\"success\" iteration=\"199999\">r</event>"));
    counter c = xml_count(out.data, out.len);
    assert_int_equal(c.events, MILLION / 5 * 4);

    /* the append writer gives the same document */
    aw_thread_writer *w = aw_thread_writer_new(NULL);
    aw_buf doc;
    aw_buf_init(&doc, NULL);
    assert_int_equal(aw_thread_writer_start(w, &doc), 0);
    const aw_event *ev = aw_event_list_items(l);
    for (size_t i = 0; i < MILLION; i++) assert_int_equal(aw_thread_writer_append(w, &ev[i], &doc, NULL), 0);
    assert_int_equal(aw_thread_writer_count(w), MILLION);
    assert_int_equal(doc.len, out.len);
    assert_memory_equal(doc.data, out.data, out.len);
    aw_thread_writer_free(w);
    aw_buf_free(&doc);
    aw_buf_free(&out);

    /* the decoder reads back the thread of the first 250,000 events (kept
     * smaller for time and memory), pairing 50,000 calls with their results */
    const size_t part = MILLION / 4;
    aw_buf_init(&out, NULL);
    aw_error err;
    assert_int_equal(aw_thread_encode(ev, part, NULL, &out, &err), 0);
    aw_event_list_free(l);
    aw_json_doc *back = NULL;
    assert_int_equal(aw_thread_decode(out.data, out.len, NULL, &back, &err), 0);
    const aw_json_value *evs = aw_json_doc_root(back);
    assert_int_equal(aw_json_count(evs), part / 5 * 4);
    const aw_json_value *res = aw_json_at(evs, aw_json_count(evs) - 2); /* the last tool_result */
    const aw_json_value *cid = aw_json_get(res, "toolCallId");
    assert_true(aw_json_is_string(cid));
    assert_string_equal(cid->u.str.ptr, "call_249996");
    aw_json_doc_free(back);
    aw_buf_free(&out);
}

/* ---- deep nesting ------------------------------------------------------------------------------------------ */

/* args nested `levels` objects deep ({"a":{"a":...{}}}), on line `line`. */
static void nested_line(aw_buf *b, int levels, int arrays) {
    aw_buf_append_str(b, "{\"type\":\"tool_call\",\"toolName\":\"deep\",\"toolCallId\":\"d\",\"timestamp\":1,\"iteration\":1,\"args\":");
    if (arrays) {
        aw_buf_append_str(b, "{\"a\":");
        for (int i = 1; i < levels; i++) aw_buf_putc(b, '[');
        for (int i = 1; i < levels; i++) aw_buf_putc(b, ']');
        aw_buf_putc(b, '}');
    } else {
        for (int i = 1; i < levels; i++) aw_buf_append_str(b, "{\"a\":");
        aw_buf_append_str(b, "{}");
        for (int i = 1; i < levels; i++) aw_buf_putc(b, '}');
    }
    aw_buf_append_str(b, "}\n");
}

static void test_deep_args(void **state) {
    (void)state;
    for (int arrays = 0; arrays < 2; arrays++) {
        aw_buf in;
        aw_buf_init(&in, NULL);
        nested_line(&in, 900, arrays);
        aw_event_list *l = events_of(in.data, in.len);
        aw_buf out, want;
        aw_buf_init(&out, NULL);
        aw_buf_init(&want, NULL);
        encode_list(l, NULL, &out);
        aw_buf_append_str(&want, "<thread>\n  <event type=\"tool_input\" id=\"0\" name=\"deep\" iteration=\"1\">");
        if (arrays) {
            aw_buf_append_str(&want, "{&quot;a&quot;:");
            for (int i = 1; i < 900; i++) aw_buf_putc(&want, '[');
            for (int i = 1; i < 900; i++) aw_buf_putc(&want, ']');
            aw_buf_putc(&want, '}');
        } else {
            for (int i = 1; i < 900; i++) aw_buf_append_str(&want, "{&quot;a&quot;:");
            aw_buf_append_str(&want, "{}");
            for (int i = 1; i < 900; i++) aw_buf_putc(&want, '}');
        }
        aw_buf_append_str(&want, "</event>\n</thread>");
        assert_int_equal(out.len, want.len);
        assert_memory_equal(out.data, want.data, want.len);
        /* round trip: the decoder parses the 900 levels back */
        aw_json_doc *back = NULL;
        aw_error err;
        assert_int_equal(aw_thread_decode(out.data, out.len, NULL, &back, &err), 0);
        const aw_json_value *args = aw_json_get(aw_json_at(aw_json_doc_root(back), 0), "args");
        assert_true(aw_json_is_object(args));
        assert_true(aw_json_equal(args, aw_event_list_items(l)[0].args));
        aw_json_doc_free(back);
        aw_buf_free(&out);
        aw_buf_free(&want);
        aw_event_list_free(l);
        aw_buf_free(&in);
    }

    /* beyond the limit (1000 levels in all, the event object included): a
     * clear error naming the line, at once */
    int too_deep[] = {1000, 5000, 200000};
    for (size_t k = 0; k < sizeof too_deep / sizeof too_deep[0]; k++) {
        for (int arrays = 0; arrays < 2; arrays++) {
            aw_buf in;
            aw_buf_init(&in, NULL);
            aw_buf_append_str(&in, "{\"type\":\"plan\",\"timestamp\":1,\"iteration\":1}\n\n");
            nested_line(&in, too_deep[k], arrays);
            aw_event_list *l = (aw_event_list *)1;
            aw_error err;
            assert_int_equal(aw_event_list_parse(in.data, in.len, NULL, &l, &err), AW_ELIMIT);
            assert_null(l);
            assert_int_equal(err.line, 3);
            assert_true(err.column > 1);
            if (!strstr(err.message, "1000")) fail_msg("message does not give the limit: %s", err.message);
            aw_buf_free(&in);
        }
    }
    /* exactly at the limit: args 999 deep + the event = 1000 */
    aw_buf in;
    aw_buf_init(&in, NULL);
    nested_line(&in, 999, 0);
    aw_event_list_free(events_of(in.data, in.len));
    aw_buf_free(&in);

    /* the decoder, given a tool_input whose body is nested past the limit,
     * keeps it as text */
    aw_buf xml;
    aw_buf_init(&xml, NULL);
    aw_buf_append_str(&xml, "<thread><event type=\"tool_input\" id=\"0\" name=\"d\" iteration=\"1\">");
    for (int i = 0; i < 3000; i++) aw_buf_putc(&xml, '[');
    for (int i = 0; i < 3000; i++) aw_buf_putc(&xml, ']');
    aw_buf_append_str(&xml, "</event></thread>");
    aw_json_doc *back = NULL;
    aw_error err;
    assert_int_equal(aw_thread_decode(xml.data, xml.len, NULL, &back, &err), 0);
    const aw_json_value *args = aw_json_get(aw_json_at(aw_json_doc_root(back), 0), "args");
    assert_true(aw_json_is_string(args));
    assert_int_equal(args->u.str.len, 6000);
    aw_json_doc_free(back);
    aw_buf_free(&xml);

    /* deeply nested XML elements are refused at the first one */
    aw_buf_init(&xml, NULL);
    aw_buf_append_str(&xml, "<thread><event type=\"human\" id=\"0\" iteration=\"0\">");
    for (int i = 0; i < 100000; i++) aw_buf_append_str(&xml, "<a>");
    back = (aw_json_doc *)1;
    assert_int_equal(aw_thread_decode(xml.data, xml.len, NULL, &back, &err), AW_EVALID);
    assert_null(back);
    assert_int_equal(err.line, 1);
    assert_int_equal(err.column, 50);
    aw_buf_free(&xml);
}

/* ---- truncated files ------------------------------------------------------------------------------------------ */

/* Every cut of examples/session.jsonl: a cut inside a line is an error on
 * that line (with a column); a cut at the end of a line reads the lines
 * before it. The same file as one JSON array, cut anywhere, is an error. */
static void test_truncated_jsonl(void **state) {
    (void)state;
    size_t len;
    char *text = aw_test_read_file(AW_SOURCE_DIR "/examples/session.jsonl", &len);
    assert_non_null(text);
    size_t line = 1, line_start = 0, complete = 0;
    for (size_t k = 0; k <= len; k++) {
        aw_event_list *l = NULL;
        aw_error err;
        memset(&err, 0, sizeof err);
        int rc = aw_event_list_parse(text, k, NULL, &l, &err);
        int mid_line = k > line_start; /* some of the current line is in */
        if (mid_line && k < len && text[k] == '\n') mid_line = 0; /* the whole line is in, without its newline */
        if (mid_line && k == len) mid_line = 0;
        if (mid_line) {
            if (rc != AW_ESYNTAX && rc != AW_EUTF8)
                fail_msg("cut at %zu (line %zu): rc %d (%s)", k, line, rc, rc ? err.message : "accepted");
            assert_null(l);
            if (err.line != line) fail_msg("cut at %zu: line %zu, want %zu", k, err.line, line);
            assert_true(err.column >= 1);
        } else {
            if (rc) fail_msg("cut at %zu (line end): %s", k, err.message);
            size_t want = complete + (k > line_start ? 1 : 0);
            assert_int_equal(aw_event_list_count(l), want);
            aw_event_list_free(l);
        }
        if (k < len && text[k] == '\n') {
            complete++;
            line++;
            line_start = k + 1;
        }
    }

    /* as one JSON array */
    aw_buf arr;
    aw_buf_init(&arr, NULL);
    aw_buf_append_str(&arr, "[\n");
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n') {
            if (i + 1 < len) aw_buf_append_str(&arr, ",\n");
        } else {
            aw_buf_putc(&arr, text[i]);
        }
    }
    aw_buf_append_str(&arr, "\n]");
    aw_event_list *l = events_of(arr.data, arr.len);
    assert_int_equal(aw_event_list_count(l), complete);
    aw_event_list_free(l);
    size_t lines_so_far = 1;
    for (size_t k = 1; k < arr.len; k++) {
        aw_error err;
        l = NULL;
        int rc = aw_event_list_parse(arr.data, k, NULL, &l, &err);
        if (rc >= 0) fail_msg("array cut at %zu accepted", k);
        assert_null(l);
        assert_true(err.line >= 1 && err.line <= lines_so_far + 1);
        if (arr.data[k] == '\n') lines_so_far++;
    }
    aw_buf_free(&arr);
    free(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_invalid_utf8_and_nul),
        cmocka_unit_test(test_100mb_content),
        cmocka_unit_test(test_million_events),
        cmocka_unit_test(test_deep_args),
        cmocka_unit_test(test_truncated_jsonl),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
