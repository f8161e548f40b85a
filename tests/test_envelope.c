/* UI envelopes: summaries, every type, presets, status tracking, stop
 * reasons, continuation resolution, time formats, hostile input,
 * allocation failures. */
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

static aw_json_doc *parse(const char *text) {
    aw_json_doc *d = NULL;
    aw_error err;
    if (aw_json_parse(text, strlen(text), NULL, &d, &err)) fail_msg("bad fixture: %s", err.message);
    return d;
}

static char *summary(int args, const char *json) {
    aw_json_doc *d = parse(json);
    aw_buf b;
    aw_buf_init(&b, NULL);
    int rc = args ? aw_envelope_args_summary(aw_json_doc_root(d), &b) : aw_envelope_result_summary(aw_json_doc_root(d), &b);
    assert_int_equal(rc, 0);
    aw_json_doc_free(d);
    return b.data; /* NULL when nothing was written */
}

static void test_args_summary(void **state) {
    (void)state;
    char *s = summary(1, "{\"q\":\"hi\"}");
    assert_string_equal(s, "q: 'hi'");
    free(s);
    s = summary(1, "{\"query\":\"dbplus\",\"types\":[\"program\"],\"n\":3,\"ignored\":true}");
    assert_string_equal(s, "query: 'dbplus', types: [\"program\"], n: 3");
    free(s);
    /* 30 characters stay; 31 are cut to 27 and "..." (quotes count) */
    s = summary(1, "{\"a\":\"1234567890123456789012345678\",\"b\":\"12345678901234567890123456789\"}");
    assert_string_equal(s, "a: '1234567890123456789012345678', b: '12345678901234567890123456...");
    free(s);
    /* characters, not bytes: 29 "é" + quotes = 31 characters */
    s = summary(1, "{\"e\":\"ééééééééééééééééééééééééééééé\"}");
    assert_string_equal(s, "e: 'éééééééééééééééééééééééééé...");
    free(s);
    s = summary(1, "{\"o\":{\"k\":[1,2,3,4,5,6,7,8,9,10,11,12]}}");
    assert_string_equal(s, "o: {\"k\":[1,2,3,4,5,6,7,8,9,10,...");
    free(s);
    s = summary(1, "[1,2]");
    assert_null(s); /* no named arguments, nothing written */
}

static void test_result_summary(void **state) {
    (void)state;
    char *s = summary(0, "\"Found 3 entities\"");
    assert_string_equal(s, "Found 3 entities");
    free(s);
    char long100[101], json[200];
    memset(long100, 'x', 100);
    long100[100] = '\0';
    snprintf(json, sizeof json, "\"%s\"", long100);
    s = summary(0, json);
    assert_string_equal(s, long100); /* exactly 100: kept */
    free(s);
    snprintf(json, sizeof json, "\"%sy\"", long100);
    s = summary(0, json);
    assert_int_equal(strlen(s), 100);
    assert_string_equal(s + 97, "...");
    free(s);
    s = summary(0, "{\"ok\":true,\"n\":[1,2]}");
    assert_string_equal(s, "{\"ok\":true,\"n\":[1,2]}");
    free(s);
    s = summary(0, "null");
    assert_null(s);
}

typedef struct sink {
    aw_buf lines;
    int count;
} sink;

static int collect(void *ctx, const char *channel, const aw_json_value *env) {
    sink *s = ctx;
    aw_buf_printf(&s->lines, "%s ", channel);
    aw_json_write(env, NULL, &s->lines, NULL);
    aw_buf_putc(&s->lines, '\n');
    s->count++;
    return 0;
}

/* Feed events (one JSON per array item) and return what was broadcast. */
static char *run(aw_envelope_preset preset, const char *events_json, int *count) {
    sink s = {{0}, 0};
    aw_buf_init(&s.lines, NULL);
    aw_envelope_config cfg = {"s1", "x9", preset, NULL};
    aw_envelope_adapter *a = aw_envelope_adapter_new(&cfg, collect, &s);
    assert_non_null(a);
    aw_json_doc *d = parse(events_json);
    for (size_t i = 0; i < aw_json_count(aw_json_doc_root(d)); i++) {
        aw_error err;
        int rc = aw_envelope_adapter_handle(a, aw_json_at(aw_json_doc_root(d), i), 1768557900123LL, &err);
        if (rc) fail_msg("event %zu: %s", i, err.message);
    }
    aw_json_doc_free(d);
    aw_envelope_adapter_free(a);
    aw_buf_reserve(&s.lines, 0);
    if (count) *count = s.count;
    return s.lines.data;
}

static void test_every_type(void **state) {
    (void)state;
    char *out = run(AW_ENVELOPE_STANDARD,
                    "[{\"event\":\"step_started\",\"step_number\":2,\"message_count\":5,\"available_tools\":[\"A\",\"B\"],\"at\":\"2026-01-16T10:05:00.123Z\"},"
                    "{\"event\":\"step_completed\",\"step_number\":2,\"has_tool_calls\":true,\"errors\":0,\"finish_reason\":\"tool_calls\","
                    "\"usage\":{\"prompt\":500,\"completion\":150,\"total\":650},\"duration_ms\":1250.5,\"continuation\":{\"should_continue\":true}},"
                    "{\"event\":\"tool_started\",\"tool_name\":\"search\",\"tool_call_id\":\"c1\",\"args\":{\"q\":\"hi\"}},"
                    "{\"event\":\"tool_completed\",\"tool_name\":\"search\",\"tool_call_id\":\"c1\",\"duration_ms\":250.0,\"result\":\"Found 3 entities\"},"
                    "{\"event\":\"stream_chunk\",\"chunk\":\"Here\",\"tokens_delta\":5},"
                    "{\"event\":\"status\",\"status\":\"in_progress\",\"step_count\":3}]",
                    NULL);
    const char *want =
        "agent.s1 {\"type\":\"agent.step.started\",\"session_id\":\"s1\",\"execution_id\":\"x9\",\"timestamp\":\"2026-01-16T10:05:00.123Z\","
        "\"payload\":{\"step_number\":2,\"message_count\":5,\"available_tools\":[\"A\",\"B\"]}}\n"
        "agent.s1 {\"type\":\"agent.step.completed\",\"session_id\":\"s1\",\"execution_id\":\"x9\",\"timestamp\":\"2026-01-16T10:05:00.123Z\","
        "\"payload\":{\"step_number\":2,\"has_tool_calls\":true,\"errors\":0,\"finish_reason\":\"tool_calls\",\"usage\":{\"prompt\":500,\"completion\":150,\"total\":650},\"duration_ms\":1250.5}}\n"
        "agent.s1 {\"type\":\"agent.tool.started\",\"session_id\":\"s1\",\"execution_id\":\"x9\",\"timestamp\":\"2026-01-16T10:05:00.123Z\","
        "\"payload\":{\"tool_name\":\"search\",\"tool_call_id\":\"c1\",\"args_summary\":\"q: 'hi'\"}}\n"
        "agent.s1 {\"type\":\"agent.tool.completed\",\"session_id\":\"s1\",\"execution_id\":\"x9\",\"timestamp\":\"2026-01-16T10:05:00.123Z\","
        "\"payload\":{\"tool_name\":\"search\",\"tool_call_id\":\"c1\",\"success\":true,\"error\":null,\"duration_ms\":250,\"result_summary\":\"Found 3 entities\"}}\n"
        "agent.s1 {\"type\":\"agent.stream.chunk\",\"session_id\":\"s1\",\"execution_id\":\"x9\",\"timestamp\":\"2026-01-16T10:05:00.123Z\","
        "\"payload\":{\"chunk\":\"Here\",\"is_complete\":false,\"tokens_delta\":5}}\n"
        "agent.s1 {\"type\":\"agent.status\",\"session_id\":\"s1\",\"execution_id\":\"x9\",\"timestamp\":\"2026-01-16T10:05:00.123Z\","
        "\"payload\":{\"status\":\"in_progress\",\"step_count\":3,\"error_message\":null,\"last_response\":null}}\n";
    /* the first event's "at" and now_ms are the same instant */
    assert_string_equal(out, want);
    free(out);
}

static void test_presets_and_trace(void **state) {
    (void)state;
    const char *events = "[{\"event\":\"stream_chunk\",\"chunk\":\"a\"},{\"event\":\"stream_chunk\",\"chunk\":\"\"},"
                         "{\"event\":\"continuation_evaluated\",\"step_number\":1,\"evaluations\":[]},"
                         "{\"event\":\"step_completed\",\"step_number\":1,\"continuation\":{\"should_continue\":false}},"
                         "{\"event\":\"tool_started\",\"tool_name\":\"t\",\"args\":{\"big\":\"%s\"}}]";
    char big[700], ev[1024];
    memset(big, 'z', 600);
    big[600] = '\0';
    snprintf(ev, sizeof ev, events, big);
    int n;
    char *out = run(AW_ENVELOPE_MINIMAL, ev, &n);
    assert_int_equal(n, 2); /* no chunks, no continuation */
    assert_null(strstr(out, "stream.chunk"));
    assert_null(strstr(out, "\"continuation\""));
    free(out);
    out = run(AW_ENVELOPE_STANDARD, ev, &n);
    assert_int_equal(n, 3); /* the empty chunk never */
    free(out);
    out = run(AW_ENVELOPE_DEBUG, ev, &n);
    assert_int_equal(n, 4);
    assert_non_null(strstr(out, "agent.continuation"));
    assert_non_null(strstr(out, "\"continuation\":{\"should_continue\":false}"));
    const char *args = strstr(out, "\"args\":\"");
    assert_non_null(args);
    const char *end = strstr(args + 8, "...\"");
    assert_non_null(end);
    /* full arguments cut at 500 characters; in this JSON text the three
     * quotes among them are escaped, so 503 bytes */
    assert_int_equal(end - (args + 8), 503);
    free(out);
}

static void test_status_tracking(void **state) {
    (void)state;
    int n;
    char *out = run(AW_ENVELOPE_STANDARD,
                    "[{\"event\":\"status\",\"status\":\"in_progress\"},{\"event\":\"status\",\"status\":\"in_progress\"},"
                    "{\"event\":\"status\",\"stop_reason\":\"completed\"},{\"event\":\"status\",\"status\":\"completed\"},"
                    "{\"event\":\"status\",\"stop_reason\":\"error\",\"error_message\":\"boom\"}]",
                    &n);
    assert_int_equal(n, 3);
    assert_non_null(strstr(out, "\"status\":\"completed\""));
    assert_non_null(strstr(out, "\"status\":\"failed\",\"step_count\":null,\"error_message\":\"boom\""));
    free(out);
    assert_string_equal(aw_envelope_status_for_stop("completed"), "completed");
    assert_string_equal(aw_envelope_status_for_stop("error"), "failed");
    assert_string_equal(aw_envelope_status_for_stop("user_requested"), "cancelled");
    for (int i = 0; aw_stop_reasons[i]; i++) {
        const char *r = aw_stop_reasons[i];
        if (strcmp(r, "completed") && strcmp(r, "error") && strcmp(r, "user_requested"))
            assert_string_equal(aw_envelope_status_for_stop(r), "stopped");
    }
}

static void test_continuation_table(void **state) {
    (void)state;
    struct {
        aw_decision d[3];
        size_t n;
        bool go;
        long decider;
    } rows[] = {
        {{AW_DECISION_ALLOW, AW_DECISION_FORBID, AW_DECISION_REQUEST}, 3, false, 1},
        {{AW_DECISION_REQUEST, AW_DECISION_STOP}, 2, true, 0},
        {{AW_DECISION_ALLOW, AW_DECISION_STOP}, 2, false, 1},
        {{AW_DECISION_ALLOW, AW_DECISION_ALLOW}, 2, true, 0},
        {{AW_DECISION_STOP, AW_DECISION_FORBID}, 2, false, 1},
        {{0}, 0, true, -1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        long who = 99;
        assert_int_equal(aw_continuation_resolve(rows[i].d, rows[i].n, &who), rows[i].go);
        assert_int_equal(who, rows[i].decider);
    }
    assert_int_equal(aw_decision_parse("request", 7), AW_DECISION_REQUEST);
    assert_int_equal(aw_decision_parse("maybe", 5), -1);
    char *out = run(AW_ENVELOPE_DEBUG,
                    "[{\"event\":\"continuation_evaluated\",\"step_number\":2,\"stop_reason\":\"steps_limit\",\"evaluations\":["
                    "{\"criterion\":\"App\\\\Guards\\\\StepsLimit\",\"decision\":\"forbid\",\"reason\":\"Step 20 exceeded limit 20\"},"
                    "{\"criterion\":\"ToolCallPresenceCheck\",\"decision\":\"request\",\"reason\":\"Tool calls present\"}]}]",
                    NULL);
    assert_non_null(strstr(out, "\"payload\":{\"step_number\":2,\"should_continue\":false,\"stop_reason\":\"steps_limit\","
                                "\"resolved_by\":\"StepsLimit\",\"evaluations\":[{\"criterion\":\"StepsLimit\",\"decision\":\"forbid\","
                                "\"reason\":\"Step 20 exceeded limit 20\"},{\"criterion\":\"ToolCallPresenceCheck\",\"decision\":\"request\","
                                "\"reason\":\"Tool calls present\"}]}"));
    free(out);
}

static void test_time(void **state) {
    (void)state;
    int64_t ms;
    assert_int_equal(aw_time_parse_rfc3339("2026-01-16T10:05:00.123Z", 24, &ms), 0);
    assert_int_equal(ms, 1768557900123LL);
    assert_int_equal(aw_time_parse_rfc3339("2026-01-16T11:05:00.123456+01:00", 32, &ms), 0);
    assert_int_equal(ms, 1768557900123LL);
    assert_int_equal(aw_time_parse_rfc3339("1970-01-01T00:00:00Z", 20, &ms), 0);
    assert_int_equal(ms, 0);
    assert_int_equal(aw_time_parse_rfc3339("2024-02-29T00:00:00Z", 20, &ms), 0);
    assert_int_not_equal(aw_time_parse_rfc3339("2023-02-29T00:00:00Z", 20, &ms), 0);
    assert_int_not_equal(aw_time_parse_rfc3339("2026-13-01T00:00:00Z", 20, &ms), 0);
    assert_int_not_equal(aw_time_parse_rfc3339("2026-01-16T10:05:00", 19, &ms), 0); /* no zone */
    assert_int_not_equal(aw_time_parse_rfc3339("yesterday", 9, &ms), 0);
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_time_format_rfc3339(1768557900123LL, true, &b), 0);
    assert_string_equal(b.data, "2026-01-16T10:05:00.123Z");
    aw_buf_clear(&b);
    assert_int_equal(aw_time_format_rfc3339(-1, true, &b), 0);
    assert_string_equal(b.data, "1969-12-31T23:59:59.999Z");
    aw_buf_free(&b);
}

static void expect_reject(const char *event, const char *fragment) {
    sink s = {{0}, 0};
    aw_buf_init(&s.lines, NULL);
    aw_envelope_config cfg = {"s", NULL, AW_ENVELOPE_DEBUG, NULL};
    aw_envelope_adapter *a = aw_envelope_adapter_new(&cfg, collect, &s);
    aw_json_doc *d = parse(event);
    aw_error err;
    assert_int_not_equal(aw_envelope_adapter_handle(a, aw_json_doc_root(d), 0, &err), 0);
    if (!strstr(err.message, fragment)) fail_msg("'%s' lacks '%s'", err.message, fragment);
    assert_int_equal(s.count, 0);
    aw_json_doc_free(d);
    aw_envelope_adapter_free(a);
    aw_buf_free(&s.lines);
}

static void test_hostile(void **state) {
    (void)state;
    expect_reject("[]", "object");
    expect_reject("{}", "event");
    expect_reject("{\"event\":\"nope\"}", "unknown event");
    expect_reject("{\"event\":\"tool_started\"}", "tool_name");
    expect_reject("{\"event\":\"tool_started\",\"tool_name\":1}", "tool_name");
    expect_reject("{\"event\":\"step_started\",\"step_number\":\"2\"}", "step_number");
    expect_reject("{\"event\":\"status\"}", "status");
    expect_reject("{\"event\":\"stream_chunk\",\"chunk\":5}", "chunk");
    expect_reject("{\"event\":\"continuation_evaluated\",\"evaluations\":[{\"decision\":\"maybe\"}]}", "decision");
    expect_reject("{\"event\":\"status\",\"status\":\"x\",\"at\":\"noon\"}", "at");
}

typedef struct sweep {
    aw_json_doc *events;
} sweep;

static int quiet(void *ctx, const char *channel, const aw_json_value *env) {
    (void)ctx;
    (void)channel;
    (void)env;
    return 0;
}

static int adapter_with(const aw_allocator *alloc, void *ctx) {
    sweep *s = ctx;
    aw_envelope_config cfg = {"s", "e", AW_ENVELOPE_DEBUG, alloc};
    aw_envelope_adapter *a = aw_envelope_adapter_new(&cfg, quiet, NULL);
    if (!a) return AW_ENOMEM;
    int rc = 0;
    for (size_t i = 0; !rc && i < aw_json_count(aw_json_doc_root(s->events)); i++)
        rc = aw_envelope_adapter_handle(a, aw_json_at(aw_json_doc_root(s->events), i), 5, NULL);
    aw_envelope_adapter_free(a);
    return rc;
}

static void test_allocation_failures(void **state) {
    (void)state;
    sweep s = {parse("[{\"event\":\"tool_started\",\"tool_name\":\"t\",\"args\":{\"a\":\"b\",\"c\":[1]}},"
                     "{\"event\":\"tool_completed\",\"tool_name\":\"t\",\"result\":{\"x\":1}},"
                     "{\"event\":\"continuation_evaluated\",\"evaluations\":[{\"criterion\":\"A\",\"decision\":\"allow\"}]},"
                     "{\"event\":\"status\",\"status\":\"in_progress\"}]")};
    assert_true(aw_failalloc_run(adapter_with, &s, 0) > 5);
    aw_json_doc_free(s.events);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_args_summary),      cmocka_unit_test(test_result_summary),
        cmocka_unit_test(test_every_type),        cmocka_unit_test(test_presets_and_trace),
        cmocka_unit_test(test_status_tracking),   cmocka_unit_test(test_continuation_table),
        cmocka_unit_test(test_time),              cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
