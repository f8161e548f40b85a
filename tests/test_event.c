/* The event model (issue 3): every type of the table with its fields,
 * unknown fields kept and written back unchanged, missing or mistyped
 * required fields named with their line, approval/plan/unknown types kept,
 * JSON lines and JSON array input, allocation failures.
 * A BOM before the array form (a regression: it was once read as JSON
 * lines). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agentwire/agentwire.h"
#include "failalloc.h"

/* ---- helpers --------------------------------------------------------------- */

static aw_event_list *parse_ok(const char *text) {
    aw_event_list *l = NULL;
    aw_error err;
    int rc = aw_event_list_parse(text, strlen(text), NULL, &l, &err);
    if (rc) fail_msg("unexpected error %d at line %zu col %zu: %s", rc, err.line, err.column, err.message);
    assert_non_null(l);
    return l;
}

static void assert_text(aw_text t, const char *want) {
    size_t n = strlen(want);
    if (t.len != n || (n && memcmp(t.ptr, want, n) != 0))
        fail_msg("text '%.*s' != '%s'", (int)t.len, t.ptr ? t.ptr : "", want);
}

static void assert_json(const aw_json_value *v, const char *want) {
    assert_non_null(v);
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_json_write(v, NULL, &b, NULL), 0);
    if (strcmp(b.data, want) != 0) fail_msg("json %s != %s", b.data, want);
    aw_buf_free(&b);
}

/* The compact JSON of ev->json: what a pass-through writes back. */
static void assert_passthrough(const aw_event *ev, const char *line) {
    assert_json(ev->json, line);
}

/* text must be rejected with `code`, err.line == line, and the message
 * must mention every fragment (NULL-terminated list). */
static void expect_error(const char *text, int code, size_t line, ...) {
    aw_event_list *l = (aw_event_list *)1;
    aw_error err;
    memset(&err, 0, sizeof err);
    int rc = aw_event_list_parse(text, strlen(text), NULL, &l, &err);
    if (rc != code) fail_msg("rc %d, want %d (%s) for: %s", rc, code, err.message, text);
    assert_null(l);
    assert_int_equal(err.code, code);
    if (err.line != line) fail_msg("line %zu, want %zu (%s) for: %s", err.line, line, err.message, text);
    va_list ap;
    va_start(ap, line);
    const char *frag;
    while ((frag = va_arg(ap, const char *)))
        if (!strstr(err.message, frag)) fail_msg("'%s' does not mention '%s'", err.message, frag);
    va_end(ap);
}

/* ---- every type of the table ---------------------------------------------------- */

static void test_message_roles(void **state) {
    (void)state;
    const char *text =
        "{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1737000000000,\"iteration\":0}\n"
        "{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"yo\",\"timestamp\":2,\"iteration\":1}\n"
        "{\"type\":\"message\",\"role\":\"system\",\"content\":\"\",\"timestamp\":3.5,\"iteration\":2}\n";
    aw_event_list *l = parse_ok(text);
    assert_int_equal(aw_event_list_count(l), 3);
    const aw_event *e = aw_event_list_items(l);
    static const aw_role roles[] = {AW_ROLE_USER, AW_ROLE_ASSISTANT, AW_ROLE_SYSTEM};
    static const char *const contents[] = {"hi", "yo", ""};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(e[i].kind, AW_EVENT_MESSAGE);
        assert_text(e[i].type, "message");
        assert_int_equal(e[i].role, roles[i]);
        assert_text(e[i].text, contents[i]);
        assert_true(aw_json_is_number(e[i].timestamp));
        assert_true(aw_json_is_number(e[i].iteration));
        assert_true(e[i].iteration->u.num.d == (double)i);
        assert_null(e[i].args);
        assert_null(e[i].result);
    }
    assert_true(e[0].timestamp->u.num.d == 1737000000000.0);
    assert_true(e[2].timestamp->u.num.d == 3.5);
    aw_event_list_free(l);
}

static void test_tool_call_and_result(void **state) {
    (void)state;
    const char *text =
        "{\"type\":\"tool_call\",\"toolName\":\"search\",\"toolCallId\":\"c1\",\"args\":{\"q\":\"x\",\"n\":[1,2]},"
        "\"display\":{\"title\":\"Search\"},\"parallelGroup\":\"p1\",\"timestamp\":10,\"iteration\":1}\n"
        "{\"type\":\"tool_call\",\"toolName\":\"read\",\"toolCallId\":\"c2\",\"args\":{},\"parallelGroup\":7,"
        "\"timestamp\":11,\"iteration\":1}\n"
        "{\"type\":\"tool_result\",\"toolCallId\":\"c1\",\"result\":\"found\",\"display\":\"d\",\"durationMs\":12.5,"
        "\"parallelGroup\":\"p1\",\"timestamp\":12,\"iteration\":1}\n"
        "{\"type\":\"tool_result\",\"toolCallId\":\"c2\",\"result\":{\"a\":[true,null]},\"timestamp\":13,\"iteration\":1}\n"
        "{\"type\":\"tool_result\",\"toolCallId\":\"c3\",\"result\":null,\"timestamp\":14,\"iteration\":2}\n";
    aw_event_list *l = parse_ok(text);
    assert_int_equal(aw_event_list_count(l), 5);
    const aw_event *e = aw_event_list_items(l);

    assert_int_equal(e[0].kind, AW_EVENT_TOOL_CALL);
    assert_text(e[0].type, "tool_call");
    assert_text(e[0].tool_name, "search");
    assert_text(e[0].tool_call_id, "c1");
    assert_json(e[0].args, "{\"q\":\"x\",\"n\":[1,2]}");
    assert_json(e[0].parallel_group, "\"p1\"");
    assert_json(aw_json_get(e[0].json, "display"), "{\"title\":\"Search\"}");
    assert_null(e[0].result);

    assert_int_equal(e[1].kind, AW_EVENT_TOOL_CALL);
    assert_json(e[1].args, "{}");
    assert_json(e[1].parallel_group, "7"); /* a number is accepted too */

    assert_int_equal(e[2].kind, AW_EVENT_TOOL_RESULT);
    assert_text(e[2].tool_call_id, "c1");
    assert_json(e[2].result, "\"found\"");
    assert_non_null(e[2].duration_ms);
    assert_true(e[2].duration_ms->u.num.d == 12.5);
    assert_json(e[2].parallel_group, "\"p1\"");
    assert_json(aw_json_get(e[2].json, "display"), "\"d\"");

    assert_json(e[3].result, "{\"a\":[true,null]}");
    assert_null(e[3].duration_ms);
    assert_null(e[3].parallel_group);
    /* result may be any JSON value, null included: present, not missing */
    assert_non_null(e[4].result);
    assert_true(aw_json_is_null(e[4].result));
    aw_event_list_free(l);
}

static void test_error_human_completion_summary(void **state) {
    (void)state;
    const char *text =
        "{\"type\":\"error\",\"error\":\"boom\",\"toolCallId\":\"c1\",\"recoverable\":true,\"timestamp\":1,\"iteration\":2}\n"
        "{\"type\":\"error\",\"error\":\"fatal\",\"recoverable\":false,\"timestamp\":1,\"iteration\":2}\n"
        "{\"type\":\"human_input_requested\",\"question\":\"Go?\",\"kind\":\"approval\",\"context\":\"ctx\","
        "\"urgency\":\"high\",\"format\":\"multiple_choice\",\"choices\":[\"yes\",\"no\"],"
        "\"approvalRequest\":{\"action\":\"publish\"},\"timestamp\":1,\"iteration\":3}\n"
        "{\"type\":\"human_input_received\",\"response\":\"yes\",\"decision\":\"approved\",\"timestamp\":1,\"iteration\":3}\n"
        "{\"type\":\"completion\",\"result\":\"done\",\"verified\":true,\"timestamp\":1,\"iteration\":4}\n"
        "{\"type\":\"completion\",\"result\":\"meh\",\"verified\":false,\"timestamp\":1,\"iteration\":4}\n"
        "{\"type\":\"summary\",\"summarizedIterations\":[1,2,3],\"summary\":\"s\",\"timestamp\":1,\"iteration\":5}\n"
        "{\"type\":\"summary\",\"summarizedIterations\":[],\"summary\":\"\",\"timestamp\":1,\"iteration\":5}\n";
    aw_event_list *l = parse_ok(text);
    assert_int_equal(aw_event_list_count(l), 8);
    const aw_event *e = aw_event_list_items(l);

    assert_int_equal(e[0].kind, AW_EVENT_ERROR);
    assert_text(e[0].text, "boom");
    assert_text(e[0].tool_call_id, "c1");
    assert_true(e[0].recoverable);
    assert_int_equal(e[1].kind, AW_EVENT_ERROR);
    assert_false(e[1].recoverable);
    assert_int_equal(e[1].tool_call_id.len, 0);

    assert_int_equal(e[2].kind, AW_EVENT_HUMAN_INPUT_REQUESTED);
    assert_text(e[2].text, "Go?");
    assert_json(aw_json_get(e[2].json, "choices"), "[\"yes\",\"no\"]");
    assert_json(aw_json_get(e[2].json, "approvalRequest"), "{\"action\":\"publish\"}");
    assert_json(aw_json_get(e[2].json, "urgency"), "\"high\"");

    assert_int_equal(e[3].kind, AW_EVENT_HUMAN_INPUT_RECEIVED);
    assert_text(e[3].text, "yes");
    assert_json(aw_json_get(e[3].json, "decision"), "\"approved\"");

    assert_int_equal(e[4].kind, AW_EVENT_COMPLETION);
    assert_text(e[4].text, "done");
    assert_true(e[4].verified);
    assert_false(e[5].verified);

    assert_int_equal(e[6].kind, AW_EVENT_SUMMARY);
    assert_text(e[6].text, "s");
    assert_json(e[6].summarized_iterations, "[1,2,3]");
    assert_json(e[7].summarized_iterations, "[]");
    assert_text(e[7].text, "");
    aw_event_list_free(l);
}

/* approval and plan: read and kept (not written into the thread); unknown
 * types: kept as they are, not checked. */
static void test_approval_plan_unknown_kept(void **state) {
    (void)state;
    const char *lines[] = {
        "{\"type\":\"approval\",\"decision\":\"pending\",\"timestamp\":1,\"iteration\":2}",
        "{\"type\":\"plan\",\"steps\":[\"a\",\"b\"],\"timestamp\":1,\"iteration\":2}",
        "{\"type\":\"custom_thing\",\"whatever\":[1,{\"x\":null}]}",
        "{\"type\":\"\"}",
    };
    char text[1024];
    snprintf(text, sizeof text, "%s\n%s\n%s\n%s\n", lines[0], lines[1], lines[2], lines[3]);
    aw_event_list *l = parse_ok(text);
    assert_int_equal(aw_event_list_count(l), 4);
    const aw_event *e = aw_event_list_items(l);
    assert_int_equal(e[0].kind, AW_EVENT_APPROVAL);
    assert_int_equal(e[1].kind, AW_EVENT_PLAN);
    assert_int_equal(e[2].kind, AW_EVENT_OTHER);
    assert_int_equal(e[3].kind, AW_EVENT_OTHER);
    assert_text(e[2].type, "custom_thing");
    assert_text(e[3].type, "");
    for (int i = 0; i < 4; i++) assert_passthrough(&e[i], lines[i]);
    aw_event_list_free(l);

    /* approval and plan are not written: their common fields are
     * optional, but checked when present */
    expect_error("{\"type\":\"plan\",\"timestamp\":\"1\"}", AW_ETYPE, 1, "'timestamp'", NULL);
    expect_error("{\"type\":\"approval\",\"timestamp\":1,\"iteration\":\"1\"}", AW_ETYPE, 1, "'iteration'", NULL);
}

/* ---- fields the format never writes: optional, typed when present ----------------- */

/* Each event lacks one optional field (and only that one, so the case
 * proves that very field optional); the event reads with the field's
 * "absent" value. Their mistyped forms are in test_missing_and_mistyped. */
static void test_optional_fields_absent(void **state) {
    (void)state;
    static const struct {
        const char *event;
        const char *field;
    } cases[] = {
        {"{\"type\":\"message\",\"role\":\"user\",\"content\":\"a\",\"iteration\":1}", "timestamp"},
        {"{\"type\":\"tool_call\",\"toolName\":\"t\",\"toolCallId\":\"c\",\"args\":{},\"iteration\":1}", "timestamp"},
        {"{\"type\":\"tool_result\",\"toolCallId\":\"c\",\"result\":1,\"iteration\":1}", "timestamp"},
        {"{\"type\":\"error\",\"error\":\"x\",\"recoverable\":true,\"iteration\":1}", "timestamp"},
        {"{\"type\":\"human_input_requested\",\"question\":\"q\",\"iteration\":1}", "timestamp"},
        {"{\"type\":\"human_input_received\",\"response\":\"r\",\"iteration\":1}", "timestamp"},
        {"{\"type\":\"completion\",\"result\":\"r\",\"verified\":true,\"iteration\":1}", "timestamp"},
        {"{\"type\":\"summary\",\"summarizedIterations\":[1],\"summary\":\"s\",\"iteration\":1}", "timestamp"},
        {"{\"type\":\"approval\",\"iteration\":1}", "timestamp"},
        {"{\"type\":\"plan\",\"timestamp\":1}", "iteration"},
        {"{\"type\":\"approval\",\"timestamp\":1}", "iteration"},
        {"{\"type\":\"completion\",\"result\":\"r\",\"timestamp\":1,\"iteration\":1}", "verified"},
        {"{\"type\":\"error\",\"error\":\"x\",\"recoverable\":true,\"timestamp\":1,\"iteration\":1}", "toolCallId"},
        {"{\"type\":\"tool_result\",\"toolCallId\":\"c\",\"result\":1,\"timestamp\":1,\"iteration\":1}", "durationMs"},
        {"{\"type\":\"tool_call\",\"toolName\":\"t\",\"toolCallId\":\"c\",\"args\":{},\"timestamp\":1,\"iteration\":1}",
         "parallelGroup"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        aw_event_list *l = parse_ok(cases[i].event);
        const aw_event *e = aw_event_list_items(l);
        assert_int_equal(aw_event_list_count(l), 1);
        assert_null(aw_json_get(e->json, cases[i].field));
        const char *f = cases[i].field;
        if (!strcmp(f, "timestamp")) assert_null(e->timestamp);
        else if (!strcmp(f, "iteration")) assert_null(e->iteration);
        else if (!strcmp(f, "verified")) assert_false(e->verified);
        else if (!strcmp(f, "toolCallId")) assert_int_equal(e->tool_call_id.len, 0);
        else if (!strcmp(f, "durationMs")) assert_null(e->duration_ms);
        else assert_null(e->parallel_group);
        aw_event_list_free(l);
    }
}

/* Field errors name a column too: the opening quote of a mistyped field's
 * key (the last of that name, the one read), or where the event starts
 * when a field is missing; in the array form, the place in the whole text
 * (the event's first key when a field is missing). */
static void expect_place(const char *text, size_t line, size_t column, const char *field) {
    aw_event_list *l = NULL;
    aw_error err;
    int rc = aw_event_list_parse(text, strlen(text), NULL, &l, &err);
    if (rc != AW_ETYPE) fail_msg("rc %d for: %s", rc, text);
    if (err.line != line || err.column != column)
        fail_msg("%zu:%zu, want %zu:%zu (%s) for: %s", err.line, err.column, line, column, err.message, text);
    if (!strstr(err.message, field)) fail_msg("'%s' does not name %s", err.message, field);
}

static void test_error_columns(void **state) {
    (void)state;
    const char *good = "{\"type\":\"plan\"}\n";
    char text[512];
    /* mistyped: the key's quote; "é" is one column */
    snprintf(text, sizeof text, "%s{\"type\":\"tool_call\",\"toolName\":\"é\",\"toolCallId\":\"c\",\"args\":[],\"iteration\":1}\n", good);
    expect_place(text, 2, 53, "'args'");
    /* a duplicate key: the one whose value is read */
    snprintf(text, sizeof text, "%s%s{\"type\":\"plan\",\"iteration\":1,\"iteration\":\"x\"}", good, good);
    expect_place(text, 3, 30, "'iteration'");
    /* missing: where the event starts, after blanks */
    snprintf(text, sizeof text, "%s   {\"type\":\"message\",\"role\":\"user\",\"iteration\":1}\r\n", good);
    expect_place(text, 2, 4, "'content'");
    expect_place("{\"type\":7}", 1, 2, "'type'");
    expect_place("\t{\"role\":\"user\"}", 1, 2, "'type'");
    /* the array form */
    expect_place("[{\"type\":\"plan\"},\n {\"type\":\"error\",\"iteration\":1,\"error\":5}]", 2, 32, "'error'");
    expect_place("[\n\n  {\"type\":\"completion\",\"iteration\":1}]", 3, 4, "'result'");
}

static void test_kind_names(void **state) {
    (void)state;
    static const char *const names[] = {"message", "tool_call", "tool_result", "error",
                                        "human_input_requested", "human_input_received",
                                        "completion", "summary", "approval", "plan"};
    for (int k = AW_EVENT_MESSAGE; k <= AW_EVENT_PLAN; k++)
        assert_string_equal(aw_event_kind_name((aw_event_kind)k), names[k]);
    assert_null(aw_event_kind_name(AW_EVENT_OTHER));
}

/* ---- unknown fields pass through unchanged ----------------------------------------- */

static void test_unknown_fields_pass_through(void **state) {
    (void)state;
    /* compact lines in JSON.stringify's own key order, so writing ev->json
     * gives the line back byte for byte */
    const char *lines[] = {
        "{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi \\u0001 \\ud800 \\\"q\\\"\",\"timestamp\":1,"
        "\"iteration\":0,\"metadata\":{\"source\":\"cli\",\"tags\":[\"a\",1.5,null,false]},\"x-custom\":\"\\u001b[1m\"}",
        "{\"type\":\"tool_call\",\"toolName\":\"t\",\"toolCallId\":\"c\",\"args\":{\"deep\":{\"er\":[[],{}]}},"
        "\"display\":{\"icon\":\"🔍\"},\"timestamp\":1e+21,\"iteration\":1,\"extra\":12345678901234567000}",
        "{\"type\":\"tool_result\",\"toolCallId\":\"c\",\"result\":[1,\"two\"],\"durationMs\":0.001,"
        "\"timestamp\":5,\"iteration\":1,\"cost\":{\"usd\":0.25}}",
        "{\"type\":\"completion\",\"result\":\"ok\",\"verified\":true,\"timestamp\":5,\"iteration\":1,\"score\":-0.5}",
    };
    aw_buf all;
    aw_buf_init(&all, NULL);
    for (int i = 0; i < 4; i++) {
        aw_buf_append_str(&all, lines[i]);
        aw_buf_putc(&all, '\n');
    }
    aw_event_list *l = parse_ok(all.data);
    assert_int_equal(aw_event_list_count(l), 4);
    for (int i = 0; i < 4; i++) assert_passthrough(&aw_event_list_items(l)[i], lines[i]);
    assert_json(aw_json_get(aw_event_list_items(l)[0].json, "metadata"),
                "{\"source\":\"cli\",\"tags\":[\"a\",1.5,null,false]}");
    aw_event_list_free(l);
    aw_buf_free(&all);

    /* written back as JSON.stringify would: number spelling normalized,
     * duplicate keys collapsed, everything else kept */
    l = parse_ok("{\"type\":\"plan\", \"timestamp\":1.0, \"iteration\":1E0, \"n\":1, \"n\":2, \"z\":\"\\/\"}");
    assert_passthrough(&aw_event_list_items(l)[0], "{\"type\":\"plan\",\"timestamp\":1,\"iteration\":1,\"n\":2,\"z\":\"/\"}");
    aw_event_list_free(l);
}

/* ---- missing or mistyped required fields, mistyped optional ones ---------------------------------------------- */

#define TS "\"timestamp\":1,\"iteration\":1"

static void test_missing_and_mistyped(void **state) {
    (void)state;
    /* each bad event sits on line 3 after two good lines and a blank one */
    const char *good = "{\"type\":\"message\",\"role\":\"user\",\"content\":\"a\"," TS "}\n\n";
    struct {
        const char *event;
        const char *field;
    } cases[] = {
        {"{\"role\":\"user\",\"content\":\"a\"," TS "}", "'type'"},
        {"{\"type\":5,\"role\":\"user\",\"content\":\"a\"," TS "}", "'type'"},
        {"{\"type\":\"message\",\"role\":\"user\",\"content\":\"a\",\"timestamp\":\"1\",\"iteration\":1}", "'timestamp'"},
        {"{\"type\":\"summary\",\"summarizedIterations\":[],\"summary\":\"\",\"timestamp\":null,\"iteration\":1}", "'timestamp'"},
        {"{\"type\":\"message\",\"role\":\"user\",\"content\":\"a\",\"timestamp\":1}", "'iteration'"},
        {"{\"type\":\"message\",\"role\":\"user\",\"content\":\"a\",\"timestamp\":1,\"iteration\":null}", "'iteration'"},
        {"{\"type\":\"message\",\"content\":\"a\"," TS "}", "'role'"},
        {"{\"type\":\"message\",\"role\":\"tool\",\"content\":\"a\"," TS "}", "'role'"},
        {"{\"type\":\"message\",\"role\":[\"user\"],\"content\":\"a\"," TS "}", "'role'"},
        {"{\"type\":\"message\",\"role\":\"user\"," TS "}", "'content'"},
        {"{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"text\"}]," TS "}", "'content'"},
        {"{\"type\":\"tool_call\",\"toolCallId\":\"c\",\"args\":{}," TS "}", "'toolName'"},
        {"{\"type\":\"tool_call\",\"toolName\":1,\"toolCallId\":\"c\",\"args\":{}," TS "}", "'toolName'"},
        {"{\"type\":\"tool_call\",\"toolName\":\"t\",\"args\":{}," TS "}", "'toolCallId'"},
        {"{\"type\":\"tool_call\",\"toolName\":\"t\",\"toolCallId\":2,\"args\":{}," TS "}", "'toolCallId'"},
        {"{\"type\":\"tool_call\",\"toolName\":\"t\",\"toolCallId\":\"c\"," TS "}", "'args'"},
        {"{\"type\":\"tool_call\",\"toolName\":\"t\",\"toolCallId\":\"c\",\"args\":\"{}\"," TS "}", "'args'"},
        {"{\"type\":\"tool_call\",\"toolName\":\"t\",\"toolCallId\":\"c\",\"args\":[]," TS "}", "'args'"},
        {"{\"type\":\"tool_call\",\"toolName\":\"t\",\"toolCallId\":\"c\",\"args\":{},\"parallelGroup\":[1]," TS "}", "'parallelGroup'"},
        {"{\"type\":\"tool_result\",\"result\":\"r\"," TS "}", "'toolCallId'"},
        {"{\"type\":\"tool_result\",\"toolCallId\":null,\"result\":\"r\"," TS "}", "'toolCallId'"},
        {"{\"type\":\"tool_result\",\"toolCallId\":\"c\"," TS "}", "'result'"},
        {"{\"type\":\"tool_result\",\"toolCallId\":\"c\",\"result\":\"r\",\"durationMs\":\"12\"," TS "}", "'durationMs'"},
        {"{\"type\":\"tool_result\",\"toolCallId\":\"c\",\"result\":\"r\",\"parallelGroup\":true," TS "}", "'parallelGroup'"},
        {"{\"type\":\"error\",\"recoverable\":true," TS "}", "'error'"},
        {"{\"type\":\"error\",\"error\":{\"message\":\"x\"},\"recoverable\":true," TS "}", "'error'"},
        {"{\"type\":\"error\",\"error\":\"x\"," TS "}", "'recoverable'"},
        {"{\"type\":\"error\",\"error\":\"x\",\"recoverable\":\"true\"," TS "}", "'recoverable'"},
        {"{\"type\":\"error\",\"error\":\"x\",\"recoverable\":true,\"toolCallId\":3," TS "}", "'toolCallId'"},
        {"{\"type\":\"human_input_requested\"," TS "}", "'question'"},
        {"{\"type\":\"human_input_requested\",\"question\":1," TS "}", "'question'"},
        {"{\"type\":\"human_input_received\"," TS "}", "'response'"},
        {"{\"type\":\"human_input_received\",\"response\":false," TS "}", "'response'"},
        {"{\"type\":\"completion\",\"verified\":true," TS "}", "'result'"},
        {"{\"type\":\"completion\",\"result\":{},\"verified\":true," TS "}", "'result'"},
        {"{\"type\":\"completion\",\"result\":\"r\",\"verified\":1," TS "}", "'verified'"},
        {"{\"type\":\"summary\",\"summary\":\"s\"," TS "}", "'summarizedIterations'"},
        {"{\"type\":\"summary\",\"summarizedIterations\":\"1,2\",\"summary\":\"s\"," TS "}", "'summarizedIterations'"},
        {"{\"type\":\"summary\",\"summarizedIterations\":[1,\"2\"],\"summary\":\"s\"," TS "}", "'summarizedIterations'"},
        {"{\"type\":\"summary\",\"summarizedIterations\":[1]," TS "}", "'summary'"},
        {"{\"type\":\"summary\",\"summarizedIterations\":[1],\"summary\":null," TS "}", "'summary'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, "%s%s\n%s", good, cases[i].event, good);
        expect_error(text, AW_ETYPE, 3, cases[i].field, NULL);
        /* CRLF line ends count the same */
        snprintf(text, sizeof text, "%s\r\n\r\n%s\r\n", good, cases[i].event);
        /* lines: good (1), blank (2), two blank CRLF lines (3, 4), the bad
         * event (5) */
        expect_error(text, AW_ETYPE, 5, cases[i].field, NULL);
    }
    /* the message says what is wrong, not just which field */
    expect_error("{\"type\":\"tool_call\",\"toolName\":\"t\",\"toolCallId\":\"c\",\"args\":[]," TS "}", AW_ETYPE, 1,
                 "'args'", "object", NULL);
    expect_error("{\"type\":\"tool_call\",\"toolCallId\":\"c\",\"args\":{}," TS "}", AW_ETYPE, 1, "'toolName'", "missing",
                 NULL);
    /* a line that is JSON but not an object */
    expect_error("{\"type\":\"plan\"," TS "}\n[1,2]\n", AW_ETYPE, 2, "object", NULL);
    expect_error("\"message\"\n", AW_ETYPE, 1, "object", NULL);
}

/* JSON syntax errors: line and column of the problem. */
static void test_syntax_errors_have_position(void **state) {
    (void)state;
    aw_event_list *l = NULL;
    aw_error err;
    const char *text = "{\"type\":\"plan\"," TS "}\n"
                       "\n"
                       "{\"type\":\"plan\",\"timestamp\":1,,\"iteration\":1}\n";
    assert_int_equal(aw_event_list_parse(text, strlen(text), NULL, &l, &err), AW_ESYNTAX);
    assert_null(l);
    assert_int_equal(err.line, 3);
    assert_int_equal(err.column, 30); /* the second ',' */
    assert_int_equal(err.offset, strlen("{\"type\":\"plan\"," TS "}\n\n") + 29);

    /* columns count characters, not bytes */
    text = "{\"type\":\"plan\",\"x\":\"日本\" \"iteration\":1}";
    assert_int_equal(aw_event_list_parse(text, strlen(text), NULL, &l, &err), AW_ESYNTAX);
    assert_int_equal(err.line, 1);
    assert_int_equal(err.column, 25);

    /* invalid UTF-8 inside a line */
    text = "{\"type\":\"plan\"," TS "}\n{\"type\":\"plan\",\"x\":\"\xff\"," TS "}\n";
    assert_true(aw_event_list_parse(text, strlen(text), NULL, &l, &err) < 0);
    assert_null(l);
    assert_int_equal(err.line, 2);
    assert_true(err.column > 0);

    /* a JSON array with an error in it: position within the document */
    text = "[\n  {\"type\":\"plan\"," TS "},\n  {\"type\":\"plan\" " TS "}\n]";
    assert_int_equal(aw_event_list_parse(text, strlen(text), NULL, &l, &err), AW_ESYNTAX);
    assert_int_equal(err.line, 3);
    assert_int_equal(err.column, 18);
}

/* ---- JSON lines and JSON array ---------------------------------------------------------- */

static const char *const three[] = {
    "{\"type\":\"message\",\"role\":\"user\",\"content\":\"q\",\"timestamp\":1,\"iteration\":0}",
    "{\"type\":\"tool_call\",\"toolName\":\"t\",\"toolCallId\":\"c\",\"args\":{\"a\":1},\"timestamp\":2,\"iteration\":1}",
    "{\"type\":\"tool_result\",\"toolCallId\":\"c\",\"result\":\"r\",\"timestamp\":3,\"iteration\":1}",
};

static void check_three(aw_event_list *l) {
    assert_int_equal(aw_event_list_count(l), 3);
    const aw_event *e = aw_event_list_items(l);
    assert_int_equal(e[0].kind, AW_EVENT_MESSAGE);
    assert_int_equal(e[1].kind, AW_EVENT_TOOL_CALL);
    assert_int_equal(e[2].kind, AW_EVENT_TOOL_RESULT);
    for (int i = 0; i < 3; i++) assert_passthrough(&e[i], three[i]);
}

static void test_lines_and_array(void **state) {
    (void)state;
    char text[2048];
    /* plain lines, no final newline */
    snprintf(text, sizeof text, "%s\n%s\n%s", three[0], three[1], three[2]);
    aw_event_list *l = parse_ok(text);
    check_three(l);
    aw_event_list_free(l);
    /* CRLF, blank and whitespace-only lines, indentation */
    snprintf(text, sizeof text, "\r\n  \t\r\n%s\r\n\n   %s\r\n \t \n%s\r\n\r\n", three[0], three[1], three[2]);
    l = parse_ok(text);
    check_three(l);
    aw_event_list_free(l);
    /* one JSON array, compact */
    snprintf(text, sizeof text, "[%s,%s,%s]", three[0], three[1], three[2]);
    l = parse_ok(text);
    check_three(l);
    aw_event_list_free(l);
    /* one JSON array, pretty and after blank lines */
    snprintf(text, sizeof text, "\n \n\t[\n  %s,\n  %s,\n  %s\n]\n", three[0], three[1], three[2]);
    l = parse_ok(text);
    check_three(l);
    aw_event_list_free(l);

    /* empty inputs: no events */
    const char *empties[] = {"", "\n\n", "  \r\n\t", "[]", " [ ] \n"};
    for (size_t i = 0; i < sizeof empties / sizeof empties[0]; i++) {
        l = parse_ok(empties[i]);
        assert_int_equal(aw_event_list_count(l), 0);
        aw_event_list_free(l);
    }
    /* NULL text with length 0 is an empty input */
    aw_error err;
    assert_int_equal(aw_event_list_parse(NULL, 0, NULL, &l, &err), 0);
    assert_int_equal(aw_event_list_count(l), 0);
    aw_event_list_free(l);

    /* array elements are checked too; the error names the element */
    snprintf(text, sizeof text, "[%s,%s,{\"type\":\"tool_call\"," TS "}]", three[0], three[1]);
    l = (aw_event_list *)1;
    assert_int_equal(aw_event_list_parse(text, strlen(text), NULL, &l, &err), AW_ETYPE);
    assert_null(l);
    assert_non_null(strstr(err.message, "event 2"));
    assert_non_null(strstr(err.message, "'toolName'"));
    assert_int_equal(aw_event_list_parse("[1]", 3, NULL, &l, &err), AW_ETYPE);
    assert_non_null(strstr(err.message, "object"));
    /* two values on one line, or text after the array */
    snprintf(text, sizeof text, "%s %s\n", three[0], three[1]);
    assert_int_equal(aw_event_list_parse(text, strlen(text), NULL, &l, &err), AW_ESYNTAX);
    assert_int_equal(err.line, 1);
    snprintf(text, sizeof text, "[%s]\n%s\n", three[0], three[1]);
    assert_int_equal(aw_event_list_parse(text, strlen(text), NULL, &l, &err), AW_ESYNTAX);
    assert_int_equal(err.line, 2);
    /* impossible arguments */
    assert_int_equal(aw_event_list_parse(text, strlen(text), NULL, NULL, &err), AW_EINVAL);
    assert_int_equal(aw_event_list_parse(NULL, 5, NULL, &l, &err), AW_EINVAL);
    /* err may be NULL */
    assert_int_equal(aw_event_list_parse("{}", 2, NULL, &l, NULL), AW_ETYPE);
}

/* Reading one event from a JSON value, and building a list by hand. */
static void test_from_json_and_manual_list(void **state) {
    (void)state;
    aw_json_doc *doc = NULL;
    aw_error err;
    const char *src = "[{\"type\":\"error\",\"error\":\"e\",\"recoverable\":false," TS "},3,{\"type\":7}]";
    assert_int_equal(aw_json_parse(src, strlen(src), NULL, &doc, &err), 0);
    const aw_json_value *root = aw_json_doc_root(doc);
    aw_event ev;
    assert_int_equal(aw_event_from_json(aw_json_at(root, 0), &ev, &err), 0);
    assert_int_equal(ev.kind, AW_EVENT_ERROR);
    assert_ptr_equal(ev.json, aw_json_at(root, 0));
    assert_int_equal(aw_event_from_json(aw_json_at(root, 1), &ev, &err), AW_ETYPE);
    assert_non_null(strstr(err.message, "object"));
    assert_int_equal(aw_event_from_json(aw_json_at(root, 2), &ev, &err), AW_ETYPE);
    assert_non_null(strstr(err.message, "'type'"));
    assert_int_equal(aw_event_from_json(NULL, &ev, &err), AW_ETYPE);

    aw_event_list *l = aw_event_list_new(NULL);
    assert_non_null(l);
    assert_int_equal(aw_event_list_count(l), 0);
    assert_int_equal(aw_event_from_json(aw_json_at(root, 0), &ev, &err), 0);
    for (int i = 0; i < 200; i++) assert_int_equal(aw_event_list_add(l, &ev), 0);
    assert_int_equal(aw_event_list_count(l), 200);
    assert_int_equal(aw_event_list_items(l)[199].kind, AW_EVENT_ERROR);
    assert_int_equal(aw_event_list_add(l, NULL), AW_EINVAL);
    assert_int_equal(aw_event_list_add(NULL, &ev), AW_EINVAL);
    aw_event_list_free(l);
    aw_event_list_free(NULL);
    assert_int_equal(aw_event_list_count(NULL), 0);
    assert_null(aw_event_list_items(NULL));
    aw_json_doc_free(doc);
}

/* The read options reach the JSON reader: depth limit and BOM. */
static void test_read_options(void **state) {
    (void)state;
    aw_event_list *l = NULL;
    aw_error err;
    const char *deep = "{\"type\":\"tool_call\",\"toolName\":\"t\",\"toolCallId\":\"c\",\"args\":{\"a\":{\"b\":{}}}," TS "}";
    aw_json_read_options o = {NULL, 3, false};
    assert_int_equal(aw_event_list_parse(deep, strlen(deep), &o, &l, &err), AW_ELIMIT);
    assert_int_equal(err.line, 1);
    o.max_depth = 4;
    assert_int_equal(aw_event_list_parse(deep, strlen(deep), &o, &l, &err), 0);
    aw_event_list_free(l);

    const char *bom = "\xEF\xBB\xBF{\"type\":\"plan\"," TS "}";
    assert_true(aw_event_list_parse(bom, strlen(bom), NULL, &l, &err) < 0);
    o.max_depth = 0;
    o.allow_bom = true;
    assert_int_equal(aw_event_list_parse(bom, strlen(bom), &o, &l, &err), 0);
    assert_int_equal(aw_event_list_count(l), 1);
    aw_event_list_free(l);
}

/* ---- allocation failures -------------------------------------------------------------- */

typedef struct sweep_input {
    const char *text;
    size_t len;
    int want; /* 0, or the error the input gives with enough memory */
} sweep_input;

static int parse_with(const aw_allocator *a, void *ctx) {
    sweep_input *in = ctx;
    aw_json_read_options o = {a, 0, false};
    aw_event_list *l = NULL;
    aw_error err;
    int rc = aw_event_list_parse(in->text, in->len, &o, &l, &err);
    if (rc == 0) {
        assert_non_null(l);
        aw_event_list_free(l);
    } else {
        assert_null(l);
        if (rc != AW_ENOMEM) assert_int_equal(rc, in->want);
        if (rc == AW_ENOMEM) assert_int_equal(err.code, AW_ENOMEM);
    }
    /* the sweep expects 0 from a clean run: report the expected error as 0 */
    return rc == in->want && rc != 0 ? 0 : rc;
}

static void sweep(const char *text, int want) {
    sweep_input in = {text, strlen(text), want};
    long calls = aw_failalloc_run(parse_with, &in, 0);
    assert_true(calls > 0);
}

static void test_allocation_failures(void **state) {
    (void)state;
    /* enough events to grow the item array past its first block */
    aw_buf lines, array;
    aw_buf_init(&lines, NULL);
    aw_buf_init(&array, NULL);
    aw_buf_putc(&array, '[');
    for (int i = 0; i < 150; i++) {
        const char *t = three[i % 3];
        aw_buf_append_str(&lines, t);
        aw_buf_putc(&lines, '\n');
        if (i) aw_buf_putc(&array, ',');
        aw_buf_append_str(&array, t);
    }
    aw_buf_putc(&array, ']');
    sweep(lines.data, 0);
    sweep(array.data, 0);
    /* failing inputs free what they built */
    aw_buf_append_str(&lines, "{\"type\":\"tool_call\"," TS "}\n");
    sweep(lines.data, AW_ETYPE);
    sweep("{\"type\":\"plan\"," TS "}\n{\"broken\"\n", AW_ESYNTAX);
    aw_buf_free(&lines);
    aw_buf_free(&array);

    /* aw_event_list_new / add under failing allocators */
    for (long n = 1; n <= 3; n++) {
        aw_failalloc fa;
        aw_failalloc_init(&fa, n);
        aw_event_list *l = aw_event_list_new(aw_failalloc_allocator(&fa));
        if (l) {
            aw_event ev;
            memset(&ev, 0, sizeof ev);
            int rc = 0;
            for (int i = 0; i < 100 && rc == 0; i++) rc = aw_event_list_add(l, &ev);
            if (fa.failed) assert_int_equal(rc, AW_ENOMEM);
            aw_event_list_free(l);
        }
        assert_int_equal(fa.live, 0);
    }
}

/* ---- regressions ------------------------------------------------------------ */

/* src/event_list.c once read a BOM-prefixed JSON array of events as JSON
 * lines (the '[' check did not skip the BOM): "unexpected end of input" for a
 * pretty array, "event must be a JSON object" for a one-line one. */
static void test_regression_bom_before_array(void **state) {
    (void)state;
    aw_json_read_options o = {NULL, 0, true};
    const char *texts[] = {"\xEF\xBB\xBF[\n{\"type\":\"plan\"," TS "}\n]",
                           "\xEF\xBB\xBF[{\"type\":\"plan\"," TS "},{\"type\":\"plan\"," TS "}]"};
    for (int i = 0; i < 2; i++) {
        aw_event_list *l = NULL;
        aw_error err;
        int rc = aw_event_list_parse(texts[i], strlen(texts[i]), &o, &l, &err);
        if (rc) fail_msg("BOM + JSON array refused with allow_bom: line %zu: %s", err.line, err.message);
        assert_int_equal(aw_event_list_count(l), (size_t)(i + 1));
        aw_event_list_free(l);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_message_roles),
        cmocka_unit_test(test_tool_call_and_result),
        cmocka_unit_test(test_error_human_completion_summary),
        cmocka_unit_test(test_approval_plan_unknown_kept),
        cmocka_unit_test(test_optional_fields_absent),
        cmocka_unit_test(test_error_columns),
        cmocka_unit_test(test_kind_names),
        cmocka_unit_test(test_unknown_fields_pass_through),
        cmocka_unit_test(test_missing_and_mistyped),
        cmocka_unit_test(test_syntax_errors_have_position),
        cmocka_unit_test(test_lines_and_array),
        cmocka_unit_test(test_from_json_and_manual_list),
        cmocka_unit_test(test_read_options),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_regression_bom_before_array),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
