/* The envelopes agentwire serve makes from stored steps (serve_feed.c)
 * and the summary folded from them (serve_summary.c), without a server:
 * the envelope for each kind of stored event, step starts and ends from
 * the accounting rows, ids and cursors, resuming from every point, odd
 * stored rows passed over, and every allocation failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "failalloc.h"
#include "internal/serve_impl.h"

/* Two steps as aw_store_steps gives them: a call that works and one that
 * fails, then the final report. */
static const char steps_text[] =
    "[{\"seq\": 1, \"turn\": 1, \"state\": \"whole\", \"final\": false, \"created_at\": 1768557600070, \"continued\": false,"
    "  \"events\": ["
    "   {\"seq\": 1, \"event\": {\"type\": \"message\", \"iteration\": 0, \"timestamp\": 1768557600000, \"role\": \"user\","
    "    \"content\": \"go\"}},"
    "   {\"seq\": 2, \"event\": {\"type\": \"tool_call\", \"iteration\": 1, \"timestamp\": 1768557600010,"
    "    \"toolName\": \"search\", \"toolCallId\": \"c1\", \"args\": {\"q\": \"a very long query that is cut somewhere\"}}},"
    "   {\"seq\": 3, \"event\": {\"type\": \"tool_call\", \"iteration\": 1, \"timestamp\": 1768557600011,"
    "    \"toolName\": \"fetch\", \"toolCallId\": \"c2\", \"args\": {}}},"
    "   {\"seq\": 4, \"event\": {\"type\": \"tool_result\", \"iteration\": 1, \"timestamp\": 1768557600050,"
    "    \"toolCallId\": \"c1\", \"result\": {\"hits\": 3}, \"durationMs\": 40}},"
    "   {\"seq\": 5, \"event\": {\"type\": \"error\", \"iteration\": 1, \"timestamp\": 1768557600060,"
    "    \"error\": \"boom\", \"recoverable\": true, \"toolCallId\": \"c2\"}}],"
    "  \"accounting\": ["
    "   {\"kind\": \"model\", \"timestamp\": 1768557600008, \"latency_ms\": 6, \"input_tokens\": 100, \"output_tokens\": 20,"
    "    \"stop_reason\": \"tool_calls\"},"
    "   {\"kind\": \"tool\", \"command\": \"search\", \"tool_call_id\": \"c1\", \"status\": \"ok\", \"latency_ms\": 40,"
    "    \"timestamp\": 1768557600050},"
    "   {\"kind\": \"tool\", \"command\": \"fetch\", \"tool_call_id\": \"c2\", \"status\": \"failed\", \"latency_ms\": 49,"
    "    \"timestamp\": 1768557600060}]},"
    " {\"seq\": 2, \"turn\": 2, \"state\": \"whole\", \"final\": true, \"created_at\": 1768557600200, \"continued\": false,"
    "  \"events\": ["
    "   {\"seq\": 6, \"event\": {\"type\": \"message\", \"iteration\": 2, \"timestamp\": 1768557600100,"
    "    \"role\": \"assistant\", \"content\": \"done\"}},"
    "   {\"seq\": 7, \"event\": {\"type\": \"completion\", \"iteration\": 2, \"timestamp\": 1768557600102,"
    "    \"result\": \"the report\", \"status\": \"failure\"}}],"
    "  \"accounting\": ["
    "   {\"kind\": \"model\", \"timestamp\": 1768557600099, \"latency_ms\": 9, \"input_tokens\": 150, \"output_tokens\": 30,"
    "    \"stop_reason\": \"stop\"}]}]";

static const char *const want_ids[] = {"1", "2", "3", "4", "5.1", "5", "6", "7.1", "7"};
static const char *const want_types[] = {"agent.step.started",   "agent.tool.started",   "agent.tool.started",
                                         "agent.tool.completed", "agent.tool.completed", "agent.step.completed",
                                         "agent.step.started",   "agent.step.completed", "agent.status"};
enum { WANT = 9 };

typedef struct seen {
    char ids[32][24];
    char text[32][1024];
    size_t n;
} seen;

static int keep(void *ctx, const char *id, const aw_json_value *env)
{
    seen *s = ctx;
    if (s->n == 32)
        return 1;
    snprintf(s->ids[s->n], sizeof s->ids[0], "%s", id);
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_json_write(env, NULL, &b, NULL), 0);
    snprintf(s->text[s->n++], sizeof s->text[0], "%s", b.data);
    aw_buf_free(&b);
    return 0;
}

static aw_json_doc *parse(const char *text)
{
    aw_json_doc *d = NULL;
    aw_error err;
    if (aw_json_parse(text, strlen(text), NULL, &d, &err))
        fail_msg("%s", err.message);
    return d;
}

static void feed(const char *text, aw__serve_cursor *cur, seen *s)
{
    aw_json_doc *d = parse(text);
    aw_error err;
    if (aw__serve_feed(aw_json_doc_root(d), "sess", cur, NULL, keep, s, &err))
        fail_msg("feed: %s", err.message);
    aw_json_doc_free(d);
}

static void test_envelopes_of_each_kind(void **state)
{
    (void)state;
    seen s = {0};
    aw__serve_cursor cur = {0, 0, 0};
    feed(steps_text, &cur, &s);
    assert_int_equal(s.n, WANT);
    for (size_t i = 0; i < WANT; i++) {
        assert_string_equal(s.ids[i], want_ids[i]);
        char type[64];
        snprintf(type, sizeof type, "\"type\":\"%s\"", want_types[i]);
        assert_non_null(strstr(s.text[i], type));
        assert_non_null(strstr(s.text[i], "\"session_id\":\"sess\",\"execution_id\":\"sess\""));
    }
    /* the step began when its model request did: 008 - 6 */
    assert_non_null(strstr(s.text[0], "\"timestamp\":\"2026-01-16T10:00:00.002Z\""));
    /* the seed's summary: the quoted value cut at 27 characters */
    assert_non_null(strstr(s.text[1], "\"args_summary\":\"q: 'a very long query that is ...\""));
    assert_non_null(strstr(s.text[3], "\"success\":true,\"error\":null,\"duration_ms\":40,\"result_summary\":\"{\\\"hits\\\":3}\""));
    assert_non_null(strstr(s.text[4], "\"tool_name\":\"fetch\",\"tool_call_id\":\"c2\",\"success\":false,\"error\":\"boom\","
                                      "\"duration_ms\":49,\"result_summary\":null"));
    assert_non_null(strstr(s.text[5], "\"step_number\":1,\"has_tool_calls\":true,\"errors\":1,\"finish_reason\":\"tool_calls\","
                                      "\"usage\":{\"prompt\":100,\"completion\":20,\"total\":120},\"duration_ms\":58"));
    /* a step without calls; a failed report */
    assert_non_null(strstr(s.text[7], "\"has_tool_calls\":false,\"errors\":0,\"finish_reason\":\"stop\""));
    assert_non_null(strstr(s.text[8], "\"status\":\"failed\",\"step_count\":2,\"error_message\":\"the report\","
                                      "\"last_response\":\"the report\""));
    assert_int_equal(cur.after, 7);
}

/* Resuming from each id gives exactly the rest; the rows a store would
 * give after the point are the events after it (a step begun before is
 * "continued"). */
static void test_resume_from_every_id(void **state)
{
    (void)state;
    seen all = {0};
    aw__serve_cursor cur = {0, 0, 0};
    feed(steps_text, &cur, &all);
    for (size_t from = 0; from < all.n; from++) {
        aw__serve_cursor c;
        assert_int_equal(aw__serve_cursor_parse(all.ids[from], &c), 0);
        aw_json_doc *d = parse(steps_text);
        /* cut the rows as aw_store_steps does */
        aw_json_value *steps = (aw_json_value *)aw_json_doc_root(d);
        aw_json_doc *out = aw_json_doc_new(NULL);
        aw_json_value *list = aw_json_new_array(out);
        for (size_t i = 0; i < aw_json_count(steps); i++) {
            aw_json_value *st = aw_json_copy(out, aw_json_at(steps, i));
            aw_json_value *evs = aw_json_get_mut(st, "events"), *kept = aw_json_new_array(out);
            bool began_before = false;
            for (size_t k = 0; k < aw_json_count(evs); k++) {
                const aw_json_value *e = aw_json_at(evs, k);
                if (aw_json_get(e, "seq")->u.num.d > (double)c.after)
                    aw_json_array_push(out, kept, e);
                else if (aw_json_get(e, "seq")->u.num.d == (double)c.after)
                    began_before = true;
            }
            if (!aw_json_count(kept))
                continue;
            aw_json_object_set(out, st, "events", 6, kept);
            aw_json_object_set_bool(out, st, "continued", began_before);
            aw_json_array_push(out, list, st);
        }
        seen rest = {0};
        aw_error err;
        assert_int_equal(aw__serve_feed(list, "sess", &c, NULL, keep, &rest, &err), 0);
        assert_int_equal(rest.n, all.n - from - 1);
        for (size_t i = 0; i < rest.n; i++) {
            assert_string_equal(rest.ids[i], all.ids[from + 1 + i]);
            assert_string_equal(rest.text[i], all.text[from + 1 + i]);
        }
        aw_json_doc_free(out);
        aw_json_doc_free(d);
    }
}

static void test_cursors(void **state)
{
    (void)state;
    aw__serve_cursor c;
    assert_int_equal(aw__serve_cursor_parse("0", &c), 0);
    assert_true(c.after == 0 && c.part == 0);
    assert_int_equal(aw__serve_cursor_parse("12", &c), 0);
    assert_true(c.after == 12 && c.part == 0);
    assert_int_equal(aw__serve_cursor_parse("12.3", &c), 0);
    assert_true(c.after == 11 && c.part_seq == 12 && c.part == 3);
    assert_int_equal(aw__serve_cursor_parse("999999999999999999", &c), 0);
    static const char *const bad[] = {"", "-1", "+1", "1.", ".1", "0.1", "1.0", "1.2.3", "1x", " 1", "1 ", "0x10",
                                      "9999999999999999999", "1.1001", "\xc2\xb9"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (aw__serve_cursor_parse(bad[i], &c) == 0)
            fail_msg("'%s' was taken", bad[i]);
}

/* Rows that are not what a run writes give no envelope, never a failure. */
static void test_odd_rows_passed_over(void **state)
{
    (void)state;
    const char *odd =
        "[{\"seq\": 1, \"turn\": 1, \"events\": ["
        " {\"seq\": 1, \"event\": {\"type\": \"tool_call\", \"toolCallId\": 5}},"
        " {\"seq\": 2, \"event\": {\"type\": \"tool_result\"}},"
        " {\"seq\": 3, \"event\": \"not an object\"},"
        " {\"seq\": 4, \"event\": {\"type\": \"completion\", \"result\": 7}},"
        " {\"seq\": 5}],"
        " \"accounting\": [1, {\"kind\": \"model\", \"latency_ms\": \"x\"}, {\"kind\": \"tool\"}]},"
        " {\"seq\": 2}, 3]";
    seen s = {0};
    aw__serve_cursor cur = {0, 0, 0};
    feed(odd, &cur, &s);
    assert_true(s.n >= 2); /* the step's start and end, a status */
    assert_non_null(strstr(s.text[0], "agent.step.started"));
    assert_int_equal(cur.after, 5);
}

/* ---- the summary ------------------------------------------------------------------ */

static int summarize(const aw_allocator *a, void *ctx)
{
    (void)ctx;
    aw_json_read_options ro = {.alloc = a};
    aw_json_doc *d = NULL, *out = NULL;
    int rc = aw_json_parse(steps_text, strlen(steps_text), &ro, &d, NULL);
    aw__serve_summary sum;
    if (!rc && !(out = aw_json_doc_new(a)))
        rc = AW_ENOMEM;
    if (!rc)
        rc = aw__serve_summary_init(&sum, out);
    aw__serve_cursor cur = {0, 0, 0};
    aw_error err;
    if (!rc)
        rc = aw__serve_feed(aw_json_doc_root(d), "sess", &cur, a, aw__serve_summary_add, &sum, &err);
    if (!rc && sum.oom)
        rc = AW_ENOMEM;
    if (!rc && !aw__serve_accounting_summary(out, aw_json_get(aw_json_at(aw_json_doc_root(d), 0), "accounting")))
        rc = AW_ENOMEM;
    if (!rc && ctx) {
        const aw_json_value *steps = sum.steps, *one = aw_json_at(steps, 0), *tools = aw_json_get(one, "tools");
        assert_int_equal(aw_json_count(steps), 2);
        assert_int_equal((int)aw_json_get(one, "duration_ms")->u.num.d, 58);
        assert_int_equal(aw_json_count(tools), 2);
        assert_int_equal((int)aw_json_get(aw_json_at(tools, 1), "duration_ms")->u.num.d, 49);
        assert_int_equal(aw_json_count(aw_json_get(aw_json_at(steps, 1), "tools")), 0);
    }
    aw_json_doc_free(out);
    aw_json_doc_free(d);
    return rc;
}

static void test_summary(void **state)
{
    (void)state;
    int check = 1;
    assert_int_equal(summarize(NULL, &check), 0);
}

static void test_allocation_failures(void **state)
{
    (void)state;
    long calls = aw_failalloc_run(summarize, NULL, 0);
    assert_true(calls > 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_envelopes_of_each_kind), cmocka_unit_test(test_resume_from_every_id),
        cmocka_unit_test(test_cursors),                cmocka_unit_test(test_odd_rows_passed_over),
        cmocka_unit_test(test_summary),                cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
