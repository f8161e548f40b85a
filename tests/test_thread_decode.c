/* <thread> XML -> events (issue 3, "Decoder"): every carried field, call_id
 * and pairing by name and position, DOCTYPE refusal, malformed XML and bad
 * structure with line and column, every truncation of a document, XML's own
 * text rules (references, CDATA, line ends), allocation failures.
 *
 * The tests named test_regression_* at the end pin bugs once found in src/
 * (input / expected / wrong result in each comment). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "agentwire/agentwire.h"
#include "failalloc.h"
#include "testutil.h"

/* ---- helpers --------------------------------------------------------------------- */

static aw_json_doc *decode_ok(const char *xml) {
    aw_json_doc *d = NULL;
    aw_error err;
    int rc = aw_thread_decode(xml, strlen(xml), NULL, &d, &err);
    if (rc) fail_msg("decode failed (%d) at %zu:%zu: %s\n%s", rc, err.line, err.column, err.message, xml);
    assert_non_null(d);
    assert_true(aw_json_is_array(aw_json_doc_root(d)));
    return d;
}

static const aw_json_value *event_at(aw_json_doc *d, size_t i) {
    const aw_json_value *e = aw_json_at(aw_json_doc_root(d), i);
    if (!e) fail_msg("no event %zu", i);
    return e;
}

static void has_str(const aw_json_value *obj, const char *key, const char *want) {
    const aw_json_value *v = aw_json_get(obj, key);
    if (!aw_json_is_string(v)) fail_msg("'%s' is not a string", key);
    if (v->u.str.len != strlen(want) || memcmp(v->u.str.ptr, want, v->u.str.len) != 0)
        fail_msg("'%s' is '%.*s', want '%s'", key, (int)v->u.str.len, v->u.str.ptr, want);
}

static void has_num(const aw_json_value *obj, const char *key, double want) {
    const aw_json_value *v = aw_json_get(obj, key);
    if (!aw_json_is_number(v)) fail_msg("'%s' is not a number", key);
    if (!(v->u.num.d == want)) fail_msg("'%s' is %g, want %g", key, v->u.num.d, want);
}

static void has_bool(const aw_json_value *obj, const char *key, bool want) {
    const aw_json_value *v = aw_json_get(obj, key);
    if (!aw_json_is_bool(v)) fail_msg("'%s' is not a boolean", key);
    assert_int_equal(v->u.b, want);
}

static void has_json(const aw_json_value *obj, const char *key, const char *want) {
    const aw_json_value *v = aw_json_get(obj, key);
    if (!v) fail_msg("no '%s'", key);
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_json_write(v, NULL, &b, NULL), 0);
    if (strcmp(b.data, want) != 0) fail_msg("'%s' is %s, want %s", key, b.data, want);
    aw_buf_free(&b);
}

/* xml must be refused with code at line:column (column 0: any), the
 * message holding fragment. */
static void expect_refused(const char *xml, int code, size_t line, size_t column, const char *fragment) {
    aw_json_doc *d = (aw_json_doc *)1;
    aw_error err;
    memset(&err, 0, sizeof err);
    int rc = aw_thread_decode(xml, strlen(xml), NULL, &d, &err);
    if (rc != code) fail_msg("rc %d (%s), want %d, for:\n%s", rc, err.message, code, xml);
    assert_null(d);
    assert_int_equal(err.code, code);
    if (err.line != line || (column && err.column != column))
        fail_msg("at %zu:%zu, want %zu:%zu (%s) for:\n%s", err.line, err.column, line, column, err.message, xml);
    if (column == 0) assert_true(err.column >= 1);
    if (fragment && !strstr(err.message, fragment)) fail_msg("'%s' does not mention '%s'", err.message, fragment);
}

/* ---- every carried field ------------------------------------------------------------------ */

static const char sample[] =
    "<thread>\n"
    "  <event type=\"system\" id=\"0\" iteration=\"0\">Be brief.</event>\n"
    "  <event type=\"human\" id=\"1\" iteration=\"0\">What is 2+2? &lt;b&gt; &amp; &quot;q&quot; &apos;s&apos;</event>\n"
    "  <event type=\"tool_input\" id=\"2\" name=\"calculator\" iteration=\"1\">{&quot;expression&quot;:&quot;2+2&quot;,&quot;n&quot;:[1,2.5]}</event>\n"
    "  <event type=\"tool_output\" id=\"3\" name=\"calculator\" status=\"success\" iteration=\"1\" duration_ms=\"12.5\" parallel_group=\"p1\">4</event>\n"
    "  <event type=\"ai\" id=\"4\" iteration=\"1\">The answer is 4. — ünïcødé 😀</event>\n"
    "  <event type=\"error\" id=\"5\" iteration=\"2\" recoverable=\"true\">Tool failed</event>\n"
    "  <event type=\"error\" id=\"6\" iteration=\"2\" recoverable=\"false\">Fatal</event>\n"
    "  <event type=\"human_input_requested\" id=\"8\" iteration=\"2\">Proceed?</event>\n"
    "  <event type=\"human_input_received\" id=\"9\" iteration=\"3\">yes</event>\n"
    "  <event type=\"summary\" id=\"10\" iteration=\"3\" summarizedIterations=\"1,2,2.5\">Earlier: added numbers.</event>\n"
    "  <event type=\"summary\" id=\"11\" iteration=\"3\" summarizedIterations=\"\">none</event>\n"
    "  <event type=\"completion\" id=\"12\" iteration=\"1e+21\">The answer is 4.</event>\n"
    "</thread>";

static void test_every_field(void **state) {
    (void)state;
    aw_json_doc *d = decode_ok(sample);
    assert_int_equal(aw_json_count(aw_json_doc_root(d)), 12);
    const aw_json_value *e;

    e = event_at(d, 0);
    has_str(e, "type", "message");
    has_str(e, "role", "system");
    has_str(e, "content", "Be brief.");
    has_num(e, "timestamp", 0);
    has_num(e, "iteration", 0);

    e = event_at(d, 1);
    has_str(e, "role", "user");
    has_str(e, "content", "What is 2+2? <b> & \"q\" 's'");

    e = event_at(d, 2);
    has_str(e, "type", "tool_call");
    has_str(e, "toolName", "calculator");
    has_str(e, "toolCallId", "call_2");
    has_json(e, "args", "{\"expression\":\"2+2\",\"n\":[1,2.5]}");
    has_num(e, "iteration", 1);
    has_num(e, "timestamp", 0);

    e = event_at(d, 3);
    has_str(e, "type", "tool_result");
    has_str(e, "toolCallId", "call_2");
    has_str(e, "result", "4"); /* the text, not the number */
    has_num(e, "durationMs", 12.5);
    has_str(e, "parallelGroup", "p1");
    has_num(e, "iteration", 1);

    e = event_at(d, 4);
    has_str(e, "role", "assistant");
    has_str(e, "content", "The answer is 4. — ünïcødé 😀");

    e = event_at(d, 5);
    has_str(e, "type", "error");
    has_str(e, "error", "Tool failed");
    has_bool(e, "recoverable", true);
    has_num(e, "iteration", 2);
    e = event_at(d, 6);
    has_bool(e, "recoverable", false);

    e = event_at(d, 7);
    has_str(e, "type", "human_input_requested");
    has_str(e, "question", "Proceed?");
    e = event_at(d, 8);
    has_str(e, "type", "human_input_received");
    has_str(e, "response", "yes");
    has_num(e, "iteration", 3);

    e = event_at(d, 9);
    has_str(e, "type", "summary");
    has_str(e, "summary", "Earlier: added numbers.");
    has_json(e, "summarizedIterations", "[1,2,2.5]");
    e = event_at(d, 10);
    has_json(e, "summarizedIterations", "[]");

    e = event_at(d, 11);
    has_str(e, "type", "completion");
    has_str(e, "result", "The answer is 4.");
    has_bool(e, "verified", false); /* not carried by the format */
    has_num(e, "iteration", 1e21);

    /* every decoded event reads back as a valid event */
    for (size_t i = 0; i < 12; i++) {
        aw_event ev;
        aw_error err;
        if (aw_event_from_json(event_at(d, i), &ev, &err)) fail_msg("event %zu: %s", i, err.message);
    }
    aw_json_doc_free(d);
}

static void test_bodies_and_values(void **state) {
    (void)state;
    aw_json_doc *d = decode_ok(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<!-- a comment before -->\n"
        "<thread>\n"
        "  <event type=\"tool_input\" id=\"0\" name=\"t\" iteration=\"1\">not json {</event>\n"
        "  <event type=\"tool_input\" id=\"1\" name=\"t\" iteration=\"1\">[1, 2]</event>\n"
        "  <event type=\"tool_input\" id=\"2\" name=\"t\" iteration=\"1\"></event>\n"
        "  <event type=\"tool_output\" id=\"3\" name=\"t\" status=\"success\" iteration=\"1\">{&quot;a&quot;:1}</event>\n"
        "  <event type=\"human\" id=\"4\" iteration=\"0\">&#65;&#x1F600;&amp;<![CDATA[<raw> & ]]>a<!-- gone -->b<?pi ignored?></event>\n"
        "  <event type=\"human\" id=\"5\" iteration=\"0\">a\r\nb\rc&#13;d\te</event>\n"
        "  <event type=\"tool_input\" id=\"6\" name=\"x\ty\r\nz\" extra=\"ignored\" iteration=\"-0\">{}</event>\n"
        "  <event type=\"tool_output\" id=\"7\" name=\"x y z\" status=\"anything\" iteration=\"2\" parallel_group=\"7\"/>\n"
        "</thread>\n"
        "<!-- a comment after -->\n");
    assert_int_equal(aw_json_count(aw_json_doc_root(d)), 8);
    has_str(event_at(d, 0), "args", "not json {"); /* kept as text */
    has_json(event_at(d, 1), "args", "[1,2]");
    has_str(event_at(d, 2), "args", "");
    has_str(event_at(d, 3), "result", "{\"a\":1}"); /* result text stays text */
    has_str(event_at(d, 4), "content", "A😀&<raw> & ab");
    /* XML end-of-line handling: CRLF and CR become LF; &#13; is a real CR */
    has_str(event_at(d, 5), "content", "a\nb\nc\rd\te");
    /* attribute value normalization: tab, CR, LF become spaces (CRLF is one) */
    has_str(event_at(d, 6), "toolName", "x y z");
    has_num(event_at(d, 6), "iteration", 0);
    /* ... so the output named "x y z" pairs with it */
    has_str(event_at(d, 7), "toolCallId", "call_6");
    has_str(event_at(d, 7), "result", "");
    has_str(event_at(d, 7), "parallelGroup", "7");
    aw_json_doc_free(d);

    /* empty threads */
    const char *empties[] = {"<thread></thread>", "<thread/>", "<thread>\n</thread>", "\n  <thread>\n\n  </thread>  \n",
                             "<thread>\n</thread>\n"};
    for (size_t i = 0; i < sizeof empties / sizeof empties[0]; i++) {
        d = decode_ok(empties[i]);
        assert_int_equal(aw_json_count(aw_json_doc_root(d)), 0);
        aw_json_doc_free(d);
    }
}

/* ---- call ids and pairing ----------------------------------------------------------------------- */

static void test_call_id_used(void **state) {
    (void)state;
    aw_json_doc *d = decode_ok(
        "<thread>\n"
        "  <event type=\"tool_input\" id=\"0\" name=\"a\" call_id=\"c9\" iteration=\"1\">{}</event>\n"
        "  <event type=\"tool_input\" id=\"1\" name=\"a\" iteration=\"1\">{}</event>\n"
        "  <event type=\"tool_output\" id=\"2\" name=\"a\" call_id=\"c9\" status=\"success\" iteration=\"1\">r9</event>\n"
        "  <event type=\"tool_output\" id=\"3\" name=\"a\" status=\"success\" iteration=\"1\">r1</event>\n"
        "  <event type=\"tool_output\" id=\"4\" name=\"a\" status=\"success\" iteration=\"1\">orphan</event>\n"
        "  <event type=\"tool_input\" id=\"5\" name=\"b\" call_id=\"\" iteration=\"1\">{}</event>\n"
        "  <event type=\"tool_output\" id=\"6\" name=\"b\" call_id=\"\" status=\"success\" iteration=\"1\">rb</event>\n"
        "  <event type=\"tool_output\" id=\"7\" name=\"zz\" call_id=\"c9\" status=\"success\" iteration=\"1\">by id, any name</event>\n"
        "</thread>");
    has_str(event_at(d, 0), "toolCallId", "c9");
    has_str(event_at(d, 1), "toolCallId", "call_1");
    has_str(event_at(d, 2), "toolCallId", "c9");
    /* the input with a call_id is paired by it, not by position */
    has_str(event_at(d, 3), "toolCallId", "call_1");
    has_str(event_at(d, 4), "toolCallId", "call_4");
    /* an empty call_id (what `messages encode` writes when there is none)
     * counts as absent */
    has_str(event_at(d, 5), "toolCallId", "call_5");
    has_str(event_at(d, 6), "toolCallId", "call_5");
    has_str(event_at(d, 7), "toolCallId", "c9");
    aw_json_doc_free(d);
}

static void test_pairing_by_name_and_position(void **state) {
    (void)state;
    aw_json_doc *d = decode_ok(
        "<thread>\n"
        "  <event type=\"tool_input\" id=\"0\" name=\"a\" iteration=\"1\">{}</event>\n"
        "  <event type=\"tool_input\" id=\"1\" name=\"a\" iteration=\"1\">{}</event>\n"
        "  <event type=\"tool_input\" id=\"2\" name=\"b\" iteration=\"1\">{}</event>\n"
        "  <event type=\"tool_output\" id=\"3\" name=\"a\" status=\"success\" iteration=\"1\">a1</event>\n"
        "  <event type=\"tool_output\" id=\"4\" name=\"a\" status=\"success\" iteration=\"1\">a0</event>\n"
        "  <event type=\"tool_output\" id=\"5\" name=\"b\" status=\"success\" iteration=\"1\">b2</event>\n"
        "  <event type=\"tool_output\" id=\"6\" name=\"a\" status=\"success\" iteration=\"1\">none left</event>\n"
        "  <event type=\"tool_input\" id=\"7\" name=\"a\" iteration=\"2\">{}</event>\n"
        "  <event type=\"tool_output\" id=\"8\" name=\"c\" status=\"success\" iteration=\"2\">no input named c</event>\n"
        "  <event type=\"tool_output\" id=\"9\" name=\"A\" status=\"success\" iteration=\"2\">names are case-sensitive</event>\n"
        "  <event type=\"tool_output\" id=\"10\" name=\"a\" status=\"success\" iteration=\"2\">a7</event>\n"
        "  <event type=\"tool_output\" id=\"11\" name=\"unknown\" status=\"success\" iteration=\"2\">unknown</event>\n"
        "  <event type=\"tool_output\" id=\"12\" status=\"success\" iteration=\"2\">no name</event>\n"
        "  <event type=\"human\" id=\"13\" iteration=\"2\">a message between does not matter</event>\n"
        "  <event type=\"tool_output\" id=\"14\" name=\"a\" status=\"success\" iteration=\"2\">a output before input</event>\n"
        "  <event type=\"tool_input\" id=\"15\" name=\"a\" iteration=\"2\">{}</event>\n"
        "</thread>");
    static const char *const want[] = {"call_0", "call_1", "call_2", "call_1", "call_0", "call_2", "call_6", "call_7",
                                       "call_8", "call_9", "call_7", "call_11", "call_12", NULL, "call_14", "call_15"};
    for (size_t i = 0; i < 16; i++)
        if (want[i]) has_str(event_at(d, i), "toolCallId", want[i]);
    aw_json_doc_free(d);

    /* pairing as the issue states it: both get call_<id of the input>, and
     * ids are the id attributes, not positions */
    d = decode_ok("<thread>"
                  "<event type=\"tool_input\" id=\"40\" name=\"s\" iteration=\"1\">{}</event>"
                  "<event type=\"tool_output\" id=\"41\" name=\"s\" status=\"success\" iteration=\"1\">x</event>"
                  "</thread>");
    has_str(event_at(d, 0), "toolCallId", "call_40");
    has_str(event_at(d, 1), "toolCallId", "call_40");
    aw_json_doc_free(d);
}

/* The thread the encoder writes for examples/session.jsonl (parallel calls
 * whose results come back in the other order) pairs back as it was: each
 * result gets call_<position of its original call>. */
static void test_encoded_session_pairs(void **state) {
    (void)state;
    size_t len;
    char *text = aw_test_read_file(AW_SOURCE_DIR "/examples/session.jsonl", &len);
    assert_non_null(text);
    aw_event_list *l = NULL;
    aw_error err;
    assert_int_equal(aw_event_list_parse(text, len, NULL, &l, &err), 0);
    aw_buf xml;
    aw_buf_init(&xml, NULL);
    assert_int_equal(aw_thread_encode(aw_event_list_items(l), aw_event_list_count(l), NULL, &xml, &err), 0);
    aw_json_doc *d = decode_ok(xml.data);
    const aw_event *ev = aw_event_list_items(l);
    size_t j = 0, results = 0;
    for (size_t i = 0; i < aw_event_list_count(l); i++) {
        if (ev[i].kind > AW_EVENT_SUMMARY) continue; /* not written */
        const aw_json_value *e = event_at(d, j++);
        if (ev[i].kind != AW_EVENT_TOOL_RESULT && ev[i].kind != AW_EVENT_TOOL_CALL) continue;
        size_t call = i;
        if (ev[i].kind == AW_EVENT_TOOL_RESULT) {
            results++;
            for (call = 0; call < aw_event_list_count(l); call++)
                if (ev[call].kind == AW_EVENT_TOOL_CALL && ev[call].tool_call_id.len == ev[i].tool_call_id.len &&
                    memcmp(ev[call].tool_call_id.ptr, ev[i].tool_call_id.ptr, ev[i].tool_call_id.len) == 0)
                    break;
            assert_true(call < aw_event_list_count(l));
        }
        char want[32];
        snprintf(want, sizeof want, "call_%zu", call);
        has_str(e, "toolCallId", want);
    }
    assert_int_equal(j, aw_json_count(aw_json_doc_root(d)));
    assert_true(results >= 3);
    aw_json_doc_free(d);
    aw_buf_free(&xml);
    aw_event_list_free(l);
    free(text);
}

/* ---- refusals ------------------------------------------------------------------------------------ */

static void test_doctype_refused(void **state) {
    (void)state;
    expect_refused("<!DOCTYPE thread>\n<thread></thread>", AW_ESYNTAX, 1, 0, "DOCTYPE");
    expect_refused("<?xml version=\"1.0\"?>\n<!DOCTYPE thread [<!ENTITY e \"boom\">]>\n<thread>&e;</thread>", AW_ESYNTAX, 2, 0,
                   NULL);
    /* billion laughs */
    expect_refused("<!DOCTYPE thread [\n"
                   " <!ENTITY a \"aaaaaaaaaa\">\n"
                   " <!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">\n"
                   " <!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">\n"
                   "]>\n"
                   "<thread><event type=\"human\" id=\"0\" iteration=\"0\">&c;</event></thread>",
                   AW_ESYNTAX, 1, 0, NULL);
    /* external entity: never read */
    expect_refused("<!DOCTYPE thread SYSTEM \"file:///etc/passwd\">\n<thread>&x;</thread>", AW_ESYNTAX, 1, 0, "DOCTYPE");
    expect_refused("<!DOCTYPE thread [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><thread><event type=\"human\" id=\"0\" iteration=\"0\">&x;</event></thread>",
                   AW_ESYNTAX, 1, 0, NULL);
    /* an entity that was never declared */
    expect_refused("<thread>\n<event type=\"human\" id=\"0\" iteration=\"0\">&xxe;</event>\n</thread>", AW_ESYNTAX, 2, 0, NULL);
}

static void test_malformed_xml_positions(void **state) {
    (void)state;
    /* mismatched end tag: expat points at its name (after "</", column 49
     * + 2); the column counts characters (é is one, so not 52) */
    expect_refused("<thread>\n  <event type=\"human\" id=\"0\" iteration=\"0\">héllo</evnt>\n</thread>", AW_ESYNTAX, 2, 51,
                   "malformed XML");
    expect_refused("<thread>\n<event type=human id=\"0\" iteration=\"0\">x</event>\n</thread>", AW_ESYNTAX, 2, 0, NULL);
    expect_refused("<thread>\n<event type=\"human\" type=\"ai\" id=\"0\" iteration=\"0\">x</event>\n</thread>", AW_ESYNTAX, 2, 0,
                   NULL);
    expect_refused("<thread>\n\n<event type=\"human\" id=\"0\" iteration=\"0\">a & b</event>\n</thread>", AW_ESYNTAX, 3, 0, NULL);
    expect_refused("<thread>\n<event type=\"human\" id=\"0\" iteration=\"0\">&#0;</event>\n</thread>", AW_ESYNTAX, 2, 0, NULL);
    expect_refused("<thread>\n<event type=\"human\" id=\"0\" iteration=\"0\">\x01</event>\n</thread>", AW_ESYNTAX, 2, 0, NULL);
    expect_refused("<thread></thread>\n<thread></thread>", AW_ESYNTAX, 2, 1, NULL);
    expect_refused("<thread></thread>\ntext after", AW_ESYNTAX, 2, 1, NULL);
    /* bytes that are not UTF-8 */
    expect_refused("<thread>\n<event type=\"human\" id=\"0\" iteration=\"0\">ab\xff</event>\n</thread>", AW_EUTF8, 2, 0, NULL);
    /* nothing at all */
    aw_json_doc *d = (aw_json_doc *)1;
    aw_error err;
    assert_true(aw_thread_decode("", 0, NULL, &d, &err) < 0);
    assert_null(d);
    assert_true(aw_thread_decode(NULL, 0, NULL, &d, &err) < 0);
    assert_true(aw_thread_decode("   \n", 4, NULL, &d, &err) < 0);
    assert_int_equal(aw_thread_decode("<thread/>", 9, NULL, NULL, &err), AW_EINVAL);
    assert_int_equal(aw_thread_decode(NULL, 3, NULL, &d, &err), AW_EINVAL);
    /* err may be NULL */
    assert_true(aw_thread_decode("<x/>", 4, NULL, &d, NULL) < 0);
}

static void test_bad_structure(void **state) {
    (void)state;
    expect_refused("<threads></threads>", AW_EVALID, 1, 1, "<thread>");
    expect_refused("<thread>\n  <event type=\"human\" id=\"0\" iteration=\"0\">a<b/></event>\n</thread>", AW_EVALID, 2, 45, "<b>");
    expect_refused("<thread>\n  <message/>\n</thread>", AW_EVALID, 2, 3, "<message>");
    expect_refused("<thread>\n  stray text\n</thread>", AW_EVALID, 2, 0, "text");
    expect_refused("<thread>\n  <event id=\"0\" iteration=\"0\">a</event>\n</thread>", AW_EVALID, 2, 3, "type");
    expect_refused("<thread>\n  <event type=\"tool_call\" id=\"0\" iteration=\"0\">a</event>\n</thread>", AW_EVALID, 2, 0,
                   "tool_call");
    expect_refused("<thread>\n  <event type=\"human\" id=\"0\">a</event>\n</thread>", AW_EVALID, 2, 0, "iteration");
    expect_refused("<thread>\n  <event type=\"human\" id=\"0\" iteration=\"one\">a</event>\n</thread>", AW_EVALID, 2, 0, "iteration");
    expect_refused("<thread>\n  <event type=\"human\" id=\"0\" iteration=\"\">a</event>\n</thread>", AW_EVALID, 2, 0, "iteration");
    expect_refused("<thread>\n  <event type=\"human\" id=\"0\" iteration=\" 1\">a</event>\n</thread>", AW_EVALID, 2, 0, "iteration");
    expect_refused("<thread>\n  <event type=\"human\" id=\"0\" iteration=\"0x10\">a</event>\n</thread>", AW_EVALID, 2, 0, "iteration");
    expect_refused("<thread>\n  <event type=\"tool_output\" id=\"0\" name=\"t\" iteration=\"1\" duration_ms=\"fast\">a</event>\n</thread>",
                   AW_EVALID, 2, 0, "duration_ms");
    expect_refused("<thread>\n  <event type=\"summary\" id=\"0\" iteration=\"1\" summarizedIterations=\"1,,2\">a</event>\n</thread>",
                   AW_EVALID, 2, 0, "summarizedIterations");
    expect_refused("<thread>\n  <event type=\"summary\" id=\"0\" iteration=\"1\" summarizedIterations=\"1, 2\">a</event>\n</thread>",
                   AW_EVALID, 2, 0, "summarizedIterations");
    expect_refused("<thread>\n  <event type=\"human\" id=\"0\" iteration=\"0\"><event type=\"ai\" id=\"1\" iteration=\"0\">x</event></event>\n</thread>",
                   AW_EVALID, 2, 0, NULL);
}

/* ---- truncation ----------------------------------------------------------------------------------- */

/* Every proper prefix of a document is refused cleanly: an error code that
 * is not "out of memory", no document, a position inside the prefix. */
static void test_every_prefix_refused(void **state) {
    (void)state;
    size_t len = sizeof sample - 1;
    for (size_t k = 0; k < len; k++) {
        aw_json_doc *d = (aw_json_doc *)1;
        aw_error err;
        memset(&err, 0, sizeof err);
        int rc = aw_thread_decode(sample, k, NULL, &d, &err);
        if (rc >= 0 || rc == AW_ENOMEM) fail_msg("prefix of %zu bytes: rc %d", k, rc);
        assert_null(d);
        assert_int_equal(err.code, rc);
        assert_true(err.message[0] != '\0');
        size_t lines = 1;
        for (size_t i = 0; i < k; i++) lines += sample[i] == '\n';
        if (err.line < 1 || err.line > lines) fail_msg("prefix of %zu bytes: line %zu of %zu", k, err.line, lines);
        assert_true(err.offset <= k);
    }
    aw_json_doc_free(decode_ok(sample));
}

/* ---- allocation failures ---------------------------------------------------------------------------- */

typedef struct sweep_ctx {
    const char *xml;
    size_t len;
    int want_rc;
    const char *want_json; /* compact JSON of the result when want_rc is 0 */
} sweep_ctx;

static int decode_with(const aw_allocator *a, void *p) {
    sweep_ctx *s = p;
    aw_thread_decode_options o = {a};
    aw_json_doc *d = NULL;
    aw_error err;
    int rc = aw_thread_decode(s->xml, s->len, &o, &d, &err);
    if (rc == 0) {
        aw_buf b;
        aw_buf_init(&b, NULL);
        assert_int_equal(aw_json_write(aw_json_doc_root(d), NULL, &b, NULL), 0);
        assert_string_equal(b.data, s->want_json);
        aw_buf_free(&b);
        aw_json_doc_free(d);
    } else {
        assert_null(d);
        if (rc != AW_ENOMEM) assert_int_equal(rc, s->want_rc);
    }
    return rc == s->want_rc ? 0 : rc;
}

static void test_allocation_failures(void **state) {
    (void)state;
    aw_json_doc *d = decode_ok(sample);
    aw_buf want;
    aw_buf_init(&want, NULL);
    assert_int_equal(aw_json_write(aw_json_doc_root(d), NULL, &want, NULL), 0);
    aw_json_doc_free(d);
    sweep_ctx s = {sample, sizeof sample - 1, 0, want.data};
    assert_true(aw_failalloc_run(decode_with, &s, 0) > 5);

    /* a pairing-heavy document */
    const char *pairs =
        "<thread>"
        "<event type=\"tool_input\" id=\"0\" name=\"a\" iteration=\"1\">{\"x\":[1,{\"y\":null}]}</event>"
        "<event type=\"tool_input\" id=\"1\" name=\"b\" iteration=\"1\">{}</event>"
        "<event type=\"tool_input\" id=\"2\" name=\"a\" call_id=\"k\" iteration=\"1\">not json</event>"
        "<event type=\"tool_output\" id=\"3\" name=\"a\" status=\"success\" iteration=\"1\">r</event>"
        "<event type=\"tool_output\" id=\"4\" name=\"b\" status=\"success\" iteration=\"1\" duration_ms=\"3\">r</event>"
        "<event type=\"tool_output\" id=\"5\" name=\"a\" call_id=\"k\" status=\"success\" iteration=\"1\">r</event>"
        "</thread>";
    d = decode_ok(pairs);
    aw_buf_clear(&want);
    assert_int_equal(aw_json_write(aw_json_doc_root(d), NULL, &want, NULL), 0);
    aw_json_doc_free(d);
    sweep_ctx s2 = {pairs, strlen(pairs), 0, want.data};
    aw_failalloc_run(decode_with, &s2, 0);

    /* documents refused part way free what they built */
    const char *bad = "<thread>"
                      "<event type=\"human\" id=\"0\" iteration=\"0\">fine</event>"
                      "<event type=\"tool_input\" id=\"1\" name=\"a\" iteration=\"1\">{}</event>"
                      "<event type=\"nope\" id=\"2\" iteration=\"0\">x</event>"
                      "</thread>";
    sweep_ctx s3 = {bad, strlen(bad), AW_EVALID, NULL};
    aw_failalloc_run(decode_with, &s3, 0);
    const char *doctype = "<!DOCTYPE thread [<!ENTITY e \"x\">]><thread>&e;</thread>";
    sweep_ctx s4 = {doctype, strlen(doctype), AW_ESYNTAX, NULL};
    aw_failalloc_run(decode_with, &s4, 0);
    const char *cut = "<thread><event type=\"human\" id=\"0\" iteration=\"0\">unfinished";
    sweep_ctx s5 = {cut, strlen(cut), AW_ESYNTAX, NULL};
    aw_failalloc_run(decode_with, &s5, 0);
    aw_buf_free(&want);
}

/* ---- regressions ------------------------------------------------------------ */

/* Once wrong (src/thread_decode.c): the encoder writes numbers as JavaScript prints
 * them, so a number the JSON reader took as +-Infinity (1e400, as JSON.parse
 * does) is written "Infinity" / "-Infinity"; the decoder then refuses its own
 * encoder's output ("attribute 'duration_ms' must be a number, not
 * 'Infinity'"). decode(encode(x)) must give the numbers back. */
static void test_regression_infinity_round_trip(void **state) {
    (void)state;
    const char *in =
        "{\"type\":\"tool_result\",\"toolCallId\":\"x\",\"result\":\"r\",\"durationMs\":1e400,\"parallelGroup\":-1e400,"
        "\"timestamp\":1,\"iteration\":-1e400}\n"
        "{\"type\":\"summary\",\"summarizedIterations\":[1,1e400],\"summary\":\"s\",\"timestamp\":1,\"iteration\":1e999}\n";
    aw_event_list *l = NULL;
    aw_error err;
    assert_int_equal(aw_event_list_parse(in, strlen(in), NULL, &l, &err), 0);
    aw_buf xml;
    aw_buf_init(&xml, NULL);
    assert_int_equal(aw_thread_encode(aw_event_list_items(l), aw_event_list_count(l), NULL, &xml, &err), 0);
    aw_event_list_free(l);
    /* the reference's spelling: `${Infinity}` */
    assert_non_null(strstr(xml.data, "iteration=\"-Infinity\" duration_ms=\"Infinity\" parallel_group=\"-Infinity\""));
    assert_non_null(strstr(xml.data, "iteration=\"Infinity\" summarizedIterations=\"1,Infinity\""));
    aw_json_doc *d = NULL;
    int rc = aw_thread_decode(xml.data, xml.len, NULL, &d, &err);
    aw_buf_free(&xml);
    if (rc) fail_msg("the decoder refuses the encoder's output: %zu:%zu: %s", err.line, err.column, err.message);
    const aw_json_value *e0 = event_at(d, 0), *e1 = event_at(d, 1);
    const aw_json_value *it = aw_json_get(e0, "iteration"), *dur = aw_json_get(e0, "durationMs");
    assert_true(aw_json_is_number(it) && isinf(it->u.num.d) && it->u.num.d < 0);
    assert_true(aw_json_is_number(dur) && isinf(dur->u.num.d) && dur->u.num.d > 0);
    has_str(e0, "parallelGroup", "-Infinity");
    const aw_json_value *its = aw_json_get(e1, "summarizedIterations");
    assert_int_equal(aw_json_count(its), 2);
    assert_true(isinf(aw_json_at(its, 1)->u.num.d));
    assert_true(isinf(aw_json_get(e1, "iteration")->u.num.d));
    aw_json_doc_free(d);
}

/* Once wrong (src/expat_glue.c, aw__expat_parse): when a handler stops the parse,
 * the code returned is read back from err, so with err == NULL every such
 * error becomes AW_ESYNTAX: a structure error (AW_EVALID) and an allocation
 * failure inside a handler (AW_ENOMEM) are misreported. The code returned
 * must not depend on whether an aw_error was passed. */
static void test_regression_code_without_err(void **state) {
    (void)state;
    aw_json_doc *d = NULL;
    aw_error err;
    const char *docs[] = {"<threads/>", "<thread><event type=\"nope\" id=\"0\" iteration=\"0\">x</event></thread>",
                          "<thread><event type=\"human\" id=\"0\">x</event></thread>"};
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        int with = aw_thread_decode(docs[i], strlen(docs[i]), NULL, &d, &err);
        int without = aw_thread_decode(docs[i], strlen(docs[i]), NULL, &d, NULL);
        assert_int_equal(with, AW_EVALID);
        if (without != with) fail_msg("'%s' gives %d with an aw_error and %d without", docs[i], with, without);
    }
    /* allocation failures inside handlers, no aw_error: AW_ENOMEM */
    for (long n = 1;; n++) {
        aw_failalloc fa;
        aw_failalloc_init(&fa, n);
        aw_thread_decode_options o = {aw_failalloc_allocator(&fa)};
        d = NULL;
        int rc = aw_thread_decode(sample, sizeof sample - 1, &o, &d, NULL);
        aw_json_doc_free(d);
        assert_int_equal(fa.live, 0);
        if (!fa.failed) break;
        if (rc != 0 && rc != AW_ENOMEM) fail_msg("allocation failure %ld without an aw_error gave %d, not AW_ENOMEM", n, rc);
    }
}

/* Once wrong (src/thread_decode.c, pop_input): taking an input off its name's
 * stack updates the name map with aw__strmap_set, which may grow the map
 * and fail; pop_input then returns NULL as if there were no input, so the
 * decode "succeeds" with the output paired to nothing (call_<its own id>)
 * instead of returning AW_ENOMEM. Here 8 names fill the map to its growth
 * point (16 slots, half full), so the first output's update grows it. */
static void test_regression_pairing_under_memory_failure(void **state) {
    (void)state;
    aw_buf doc;
    aw_buf_init(&doc, NULL);
    aw_buf_append_str(&doc, "<thread>");
    for (int i = 0; i < 8; i++)
        aw_buf_printf(&doc, "<event type=\"tool_input\" id=\"%d\" name=\"n%d\" iteration=\"1\">{}</event>", i, i);
    for (int i = 8; i < 16; i++)
        aw_buf_printf(&doc, "<event type=\"tool_output\" id=\"%d\" name=\"n%d\" status=\"success\" iteration=\"1\">r</event>", i, (i * 3) % 8);
    aw_buf_append_str(&doc, "</thread>");
    aw_json_doc *d = decode_ok(doc.data);
    aw_buf want, got;
    aw_buf_init(&want, NULL);
    aw_buf_init(&got, NULL);
    assert_int_equal(aw_json_write(aw_json_doc_root(d), NULL, &want, NULL), 0);
    aw_json_doc_free(d);
    long bad = 0;
    for (long n = 1;; n++) {
        aw_failalloc fa;
        aw_failalloc_init(&fa, n);
        aw_thread_decode_options o = {aw_failalloc_allocator(&fa)};
        aw_error err;
        d = NULL;
        int rc = aw_thread_decode(doc.data, doc.len, &o, &d, &err);
        if (rc == 0) {
            aw_buf_clear(&got);
            aw_json_write(aw_json_doc_root(d), NULL, &got, NULL);
            if (strcmp(got.data, want.data) != 0 && !bad) bad = n;
        }
        aw_json_doc_free(d);
        assert_int_equal(fa.live, 0);
        if (!fa.failed) break;
    }
    aw_buf_free(&want);
    aw_buf_free(&got);
    aw_buf_free(&doc);
    if (bad) fail_msg("allocation failure %ld was ignored: the decode succeeded with different pairings", bad);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_field),
        cmocka_unit_test(test_bodies_and_values),
        cmocka_unit_test(test_call_id_used),
        cmocka_unit_test(test_pairing_by_name_and_position),
        cmocka_unit_test(test_encoded_session_pairs),
        cmocka_unit_test(test_doctype_refused),
        cmocka_unit_test(test_malformed_xml_positions),
        cmocka_unit_test(test_bad_structure),
        cmocka_unit_test(test_every_prefix_refused),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_regression_infinity_round_trip),
        cmocka_unit_test(test_regression_code_without_err),
        cmocka_unit_test(test_regression_pairing_under_memory_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
