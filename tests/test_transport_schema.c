/* Tool calls checked against their tool's schema, and json final reports
 * against the final schema (issue 11): an invalid_arguments rejection for
 * each kind of wrong argument, in xml mode, in the hermes dialect and for
 * native calls in xml-final; the slot of a rejected call stays open; the
 * errors reach the TURN-FAILED feedback; a json final report carries its
 * verdict and errors; a schema that does not compile fails the session. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agentwire/agentwire.h"

#define NONCE "1a2b3c4d"
#define TAG(slot, tool, body) "<ai-agent-" NONCE "-" slot " tool=\"" tool "\">" body "</ai-agent-" NONCE "-" slot ">"

static const char tools_json[] =
    "[{\"name\":\"read_file\",\"description\":\"Read a file.\",\"inputSchema\":{\"type\":\"object\","
    "\"properties\":{\"path\":{\"type\":\"string\",\"pattern\":\"^/\"},\"head\":{\"type\":\"integer\",\"minimum\":1},"
    "\"encoding\":{\"enum\":[\"utf-8\",\"latin1\"]},\"when\":{\"type\":\"string\",\"format\":\"date-time\"}},"
    "\"required\":[\"path\"],\"additionalProperties\":false}},"
    "{\"type\":\"function\",\"function\":{\"name\":\"search\",\"description\":\"Search.\",\"parameters\":"
    "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\","
    "\"minLength\":1,\"maxLength\":20},\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"uniqueItems\":true},"
    "\"limit\":{\"type\":\"integer\",\"maximum\":50}},\"required\":[\"query\"]}}},"
    "{\"name\":\"free\",\"description\":\"No schema.\"}]";

static const char final_schema_json[] =
    "{\"type\":\"object\",\"properties\":{\"summary\":{\"type\":\"string\"},\"score\":{\"type\":\"number\",\"maximum\":1}},"
    "\"required\":[\"summary\"]}";

typedef struct session {
    aw_json_doc *tools_doc, *schema_doc;
    aw_tool_def *defs;
    aw_transport *t;
} session;

static void open_session(session *s, aw_transport_mode mode, aw_report_format format) {
    memset(s, 0, sizeof *s);
    aw_error err;
    assert_int_equal(aw_json_parse(tools_json, sizeof tools_json - 1, NULL, &s->tools_doc, &err), 0);
    assert_int_equal(aw_json_parse(final_schema_json, sizeof final_schema_json - 1, NULL, &s->schema_doc, &err), 0);
    size_t n;
    assert_int_equal(aw_tools_from_json(aw_json_doc_root(s->tools_doc), NULL, &s->defs, &n, &err), 0);
    aw_transport_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.mode = mode;
    cfg.nonce = NONCE;
    cfg.format = format;
    cfg.final_schema = format == AW_FORMAT_JSON ? aw_json_doc_root(s->schema_doc) : NULL;
    cfg.tools = s->defs;
    cfg.tool_count = n;
    cfg.dialects = AW_DIALECT_HERMES;
    s->t = aw_transport_new(&cfg, &err);
    if (!s->t) fail_msg("session: %s", err.message);
}

static void close_session(session *s) {
    aw_transport_free(s->t);
    aw_free(NULL, s->defs);
    aw_json_doc_free(s->tools_doc);
    aw_json_doc_free(s->schema_doc);
}

/* What one reply produced: the calls (tool names), the rejections (reason,
 * message, first error's locations), and the final report's layer 2. */
typedef struct record {
    int calls, rejections;
    char call_tools[8][32];
    aw_reject_reason reasons[8];
    char messages[8][1600];
    char instance_locations[8][64], keyword_locations[8][96];
    size_t error_counts[8];
    int finals;
    bool schema_checked, schema_valid;
    size_t schema_error_count;
    char schema_message[512], schema_first_location[64];
} record;

static int on_event(void *ctx, const aw_x_event *ev) {
    record *r = ctx;
    if (ev->kind == AW_X_CALL && r->calls < 8) {
        snprintf(r->call_tools[r->calls++], 32, "%.*s", (int)ev->call->tool.len, ev->call->tool.ptr);
    } else if (ev->kind == AW_X_REJECTED && r->rejections < 8) {
        int i = r->rejections++;
        const aw_x_rejection *x = ev->rejection;
        r->reasons[i] = x->reason;
        snprintf(r->messages[i], sizeof r->messages[i], "%s", x->message);
        r->error_counts[i] = x->error_count;
        if (x->error_count) {
            snprintf(r->instance_locations[i], 64, "%s", x->errors[0].instance_location);
            snprintf(r->keyword_locations[i], 96, "%s", x->errors[0].keyword_location);
        }
    } else if (ev->kind == AW_X_FINAL) {
        const aw_x_final *f = ev->final;
        r->finals++;
        r->schema_checked = f->schema_checked;
        r->schema_valid = f->schema_valid;
        r->schema_error_count = f->schema_error_count;
        if (f->schema_message) snprintf(r->schema_message, sizeof r->schema_message, "%s", f->schema_message);
        if (f->schema_error_count) snprintf(r->schema_first_location, 64, "%s", f->schema_errors[0].instance_location);
    }
    return 0;
}

/* Feed the reply whole and byte by byte: the same record both ways. */
static void extract(const session *s, const char *reply, record *r, char *feedback, size_t fb_size) {
    for (int pass = 0; pass < 2; pass++) {
        record rec;
        memset(&rec, 0, sizeof rec);
        aw_extractor *x = aw_extractor_new(s->t, 1);
        aw_error err;
        size_t n = strlen(reply), step = pass ? 1 : n;
        for (size_t i = 0; i < n; i += step)
            assert_int_equal(aw_extractor_feed(x, reply + i, n - i < step ? n - i : step, on_event, &rec, &err), 0);
        assert_int_equal(aw_extractor_finish(x, "stop", on_event, &rec, &err), 0);
        if (pass == 0) {
            *r = rec;
            aw_buf fb;
            aw_buf_init(&fb, NULL);
            assert_int_equal(aw_extractor_feedback(x, &fb), 0);
            snprintf(feedback, fb_size, "%s", fb.data ? fb.data : "");
            aw_buf_free(&fb);
        } else {
            assert_memory_equal(&rec, r, sizeof rec);
        }
        aw_extractor_free(x);
    }
}

/* One call with wrong arguments: rejected, with the error where expected. */
static void expect_rejected(const session *s, const char *reply, const char *message_part, const char *instance_location,
                            const char *keyword_location) {
    record r;
    char feedback[4096];
    extract(s, reply, &r, feedback, sizeof feedback);
    assert_int_equal(r.calls, 0);
    assert_int_equal(r.rejections, 1);
    assert_int_equal(r.reasons[0], AW_REJECT_INVALID_ARGUMENTS);
    if (!strstr(r.messages[0], message_part)) fail_msg("message %s lacks %s", r.messages[0], message_part);
    assert_true(r.error_counts[0] >= 1);
    assert_string_equal(r.instance_locations[0], instance_location);
    assert_string_equal(r.keyword_locations[0], keyword_location);
    /* the model reads the errors in the next turn's feedback */
    assert_non_null(strstr(feedback, "TURN-FAILED"));
    assert_non_null(strstr(feedback, message_part));
}

static void test_each_kind_of_wrong_argument(void **state) {
    (void)state;
    session s;
    open_session(&s, AW_TRANSPORT_XML, AW_FORMAT_MARKDOWN);
    expect_rejected(&s, TAG("0001", "read_file", "{\"path\": 7}"), "/path: expected string, got number 7", "/path",
                    "/properties/path/type");
    expect_rejected(&s, TAG("0001", "read_file", "{\"head\": 2}"), "(root): missing required property \"path\"", "",
                    "/required");
    expect_rejected(&s, TAG("0001", "read_file", "{\"path\": \"/a\", \"mode\": \"r\"}"), "/mode: property \"mode\" is not allowed",
                    "/mode", "/additionalProperties");
    expect_rejected(&s, TAG("0001", "read_file", "{\"path\": \"/a\", \"encoding\": \"ascii\"}"),
                    "/encoding: string \"ascii\" is not one of \"utf-8\", \"latin1\"", "/encoding", "/properties/encoding/enum");
    expect_rejected(&s, TAG("0001", "read_file", "{\"path\": \"etc/passwd\"}"),
                    "/path: string \"etc/passwd\" does not match the pattern \"^/\"", "/path", "/properties/path/pattern");
    expect_rejected(&s, TAG("0001", "read_file", "{\"path\": \"/a\", \"head\": 0}"), "/head: number 0 is below the minimum 1",
                    "/head", "/properties/head/minimum");
    expect_rejected(&s, TAG("0001", "read_file", "{\"path\": \"/a\", \"head\": 2.5}"), "/head: expected integer, got number 2.5",
                    "/head", "/properties/head/type");
    /* draft-07 by the tool's $schema */
    expect_rejected(&s, TAG("0001", "search", "{\"query\": \"\"}"), "/query: string is 0 characters long; at least 1 expected",
                    "/query", "/properties/query/minLength");
    expect_rejected(&s, TAG("0001", "search", "{\"query\": \"aaaaaaaaaaaaaaaaaaaaaaaaa\"}"),
                    "/query: string is 25 characters long; at most 20 allowed", "/query", "/properties/query/maxLength");
    expect_rejected(&s, TAG("0001", "search", "{\"query\": \"x\", \"tags\": [\"a\", 2]}"), "/tags/1: expected string, got number 2",
                    "/tags/1", "/properties/tags/items/type");
    expect_rejected(&s, TAG("0001", "search", "{\"query\": \"x\", \"tags\": [\"a\", \"a\"]}"), "/tags: items 0 and 1 are equal",
                    "/tags", "/properties/tags/uniqueItems");
    expect_rejected(&s, TAG("0001", "search", "{\"query\": \"x\", \"limit\": 51}"), "/limit: number 51 is above the maximum 50",
                    "/limit", "/properties/limit/maximum");
    /* after JSON repair: single quotes and a trailing comma, then the schema */
    expect_rejected(&s, TAG("0001", "read_file", "{path: 'etc', }"), "does not match the pattern", "/path",
                    "/properties/path/pattern");
    /* every error, in one message */
    record r;
    char feedback[4096];
    extract(&s, TAG("0001", "read_file", "{\"path\": 1, \"head\": \"3\", \"x\": null}"), &r, feedback, sizeof feedback);
    assert_int_equal(r.error_counts[0], 3);
    assert_string_equal(r.messages[0], "Tool `read_file` arguments do not match its schema: /path: expected string, got number 1; "
                                       "/head: expected integer, got string \"3\"; /x: property \"x\" is not allowed. Fix the "
                                       "arguments and call again.");
    close_session(&s);
}

static void test_valid_calls_and_open_slots(void **state) {
    (void)state;
    session s;
    open_session(&s, AW_TRANSPORT_XML, AW_FORMAT_MARKDOWN);
    record r;
    char feedback[4096];
    /* a rejected call leaves its slot open: the corrected one in the same slot runs */
    extract(&s,
            TAG("0001", "read_file", "{\"path\": \"etc\"}") "\n" TAG("0001", "read_file", "{\"path\": \"/etc\", \"head\": 3}") "\n"
            TAG("0002", "read_file", "{\"path\": \"/a\", \"when\": \"not a date\"}") "\n" TAG("0003", "free", "{\"anything\": [1]}")
            "\n<tool_call>{\"name\": \"search\", \"arguments\": {\"query\": 5}}</tool_call>\n"
            "<tool_call>{\"name\": \"search\", \"arguments\": \"{\\\"query\\\": \\\"ok\\\"}\"}</tool_call>",
            &r, feedback, sizeof feedback);
    /* formats are annotations unless asserted: "not a date" passes */
    assert_int_equal(r.calls, 4);
    assert_string_equal(r.call_tools[0], "read_file");
    assert_string_equal(r.call_tools[1], "read_file");
    assert_string_equal(r.call_tools[2], "free");
    assert_string_equal(r.call_tools[3], "search");
    assert_int_equal(r.rejections, 2);
    assert_int_equal(r.reasons[0], AW_REJECT_INVALID_ARGUMENTS);
    assert_int_equal(r.reasons[1], AW_REJECT_INVALID_ARGUMENTS);
    assert_string_equal(r.instance_locations[1], "/query");
    assert_string_equal(aw_reject_reason_name(AW_REJECT_INVALID_ARGUMENTS), "invalid_arguments");
    close_session(&s);
}

static void test_native_calls(void **state) {
    (void)state;
    session s;
    open_session(&s, AW_TRANSPORT_XML_FINAL, AW_FORMAT_MARKDOWN);
    aw_json_doc *calls = NULL;
    aw_error err;
    const char *native =
        "[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{\\\"path\\\":\\\"/x\\\"}\"}},"
        "{\"id\":\"c2\",\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{\\\"path\\\":\\\"x\\\",\\\"head\\\":-1}\"}},"
        "{\"id\":\"c3\",\"name\":\"search\",\"arguments\":{\"limit\":3}},"
        "{\"id\":\"c4\",\"name\":\"unknown_tool\",\"arguments\":{\"q\":1}}]";
    assert_int_equal(aw_json_parse(native, strlen(native), NULL, &calls, &err), 0);
    record r;
    memset(&r, 0, sizeof r);
    aw_extractor *x = aw_extractor_new(s.t, 1);
    assert_int_equal(aw_extractor_finish(x, "stop", on_event, &r, &err), 0);
    assert_int_equal(aw_extractor_native_calls(x, aw_json_doc_root(calls), on_event, &r, &err), 0);
    assert_int_equal(r.calls, 2);
    assert_string_equal(r.call_tools[0], "read_file");
    assert_string_equal(r.call_tools[1], "unknown_tool"); /* no schema known: not ours to judge */
    assert_int_equal(r.rejections, 2);
    assert_int_equal(r.reasons[0], AW_REJECT_INVALID_ARGUMENTS);
    assert_int_equal(r.error_counts[0], 2);
    assert_string_equal(r.instance_locations[0], "/path");
    assert_int_equal(r.reasons[1], AW_REJECT_INVALID_ARGUMENTS);
    assert_non_null(strstr(r.messages[1], "missing required property \"query\""));
    aw_buf fb;
    aw_buf_init(&fb, NULL);
    assert_int_equal(aw_extractor_feedback(x, &fb), 0);
    assert_non_null(strstr(fb.data, "/head: number -1 is below the minimum 1"));
    aw_buf_free(&fb);
    aw_extractor_free(x);
    aw_json_doc_free(calls);
    close_session(&s);
}

static void test_json_final_report(void **state) {
    (void)state;
    session s;
    open_session(&s, AW_TRANSPORT_XML, AW_FORMAT_JSON);
    record r;
    char feedback[4096];
#define FINAL(body) "<ai-agent-" NONCE "-FINAL tool=\"agent__final_report\" status=\"success\" format=\"json\">" body "</ai-agent-" NONCE "-FINAL>"
    extract(&s, FINAL("{\"summary\": \"done\", \"score\": 0.5}"), &r, feedback, sizeof feedback);
    assert_int_equal(r.finals, 1);
    assert_true(r.schema_checked);
    assert_true(r.schema_valid);
    assert_int_equal(r.schema_error_count, 0);
    /* layer 2 failure: reported with the report, errors and all */
    extract(&s, FINAL("{'score': 2,}"), &r, feedback, sizeof feedback);
    assert_int_equal(r.finals, 1);
    assert_true(r.schema_checked);
    assert_false(r.schema_valid);
    assert_int_equal(r.schema_error_count, 2);
    assert_string_equal(r.schema_first_location, "");
    assert_string_equal(r.schema_message, "(root): missing required property \"summary\"; /score: number 2 is above the maximum 1");
    close_session(&s);
    /* no final schema, or not json: nothing checked */
    open_session(&s, AW_TRANSPORT_XML, AW_FORMAT_MARKDOWN);
    extract(&s, "<ai-agent-" NONCE "-FINAL tool=\"agent__final_report\" status=\"success\">text</ai-agent-" NONCE "-FINAL>", &r,
            feedback, sizeof feedback);
    assert_int_equal(r.finals, 1);
    assert_false(r.schema_checked);
    assert_true(r.schema_valid);
    close_session(&s);
}

static void test_schema_that_does_not_compile(void **state) {
    (void)state;
    const char *tools = "[{\"name\":\"ok\",\"inputSchema\":{\"type\":\"object\"}},"
                        "{\"name\":\"broken\",\"inputSchema\":{\"properties\":{\"x\":{\"pattern\":\"(\"}}}}]";
    aw_json_doc *doc = NULL;
    aw_error err;
    assert_int_equal(aw_json_parse(tools, strlen(tools), NULL, &doc, &err), 0);
    aw_tool_def *defs;
    size_t n;
    assert_int_equal(aw_tools_from_json(aw_json_doc_root(doc), NULL, &defs, &n, &err), 0);
    aw_transport_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.mode = AW_TRANSPORT_XML;
    cfg.nonce = NONCE;
    cfg.tools = defs;
    cfg.tool_count = n;
    assert_null(aw_transport_new(&cfg, &err));
    assert_int_equal(err.code, AW_ESYNTAX);
    assert_non_null(strstr(err.message, "tool `broken`: /properties/x/pattern: invalid regular expression"));
    /* and the final schema */
    aw_json_doc *fs = NULL;
    assert_int_equal(aw_json_parse("{\"$ref\":\"#/nowhere\"}", 20, NULL, &fs, &err), 0);
    cfg.tool_count = 1;
    cfg.format = AW_FORMAT_JSON;
    cfg.final_schema = aw_json_doc_root(fs);
    assert_null(aw_transport_new(&cfg, &err));
    assert_string_equal(err.message, "final schema: /$ref: cannot resolve \"#/nowhere\"");
    aw_json_doc_free(fs);
    aw_free(NULL, defs);
    aw_json_doc_free(doc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_kind_of_wrong_argument),
        cmocka_unit_test(test_valid_calls_and_open_slots),
        cmocka_unit_test(test_native_calls),
        cmocka_unit_test(test_json_final_report),
        cmocka_unit_test(test_schema_that_does_not_compile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
