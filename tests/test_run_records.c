/* What a run leaves on disk: the <thread> (a whole document after every
 * event, equal to the codec's encoding of the same events), the envelopes
 * (stream chunks only when asked), the accounting rows with every field,
 * the trace, and the recording that plays the same run back. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agentwire/thread.h"
#include "run_harness.h"

static const char tools_json[] =
    "[{\"name\":\"upper\",\"command\":[\"sh\",\"-c\",\"tr a-z A-Z\"]},"
    " {\"name\":\"fail\",\"command\":[\"sh\",\"-c\",\"echo 'no such thing' >&2; exit 2\"]}]";

/* Two turns: two calls (one fails) with usage, then the report. */
static rh_script *two_turns(void)
{
    rh_script *s = rh_script_new();
    aw_json_value *l = rh_say(s, "Checking <both> & more.\n" CALL("0001", "upper", "{\"s\":\"quote \\\" amp & lt <\"}")
                                     CALL("0002", "fail", "{}"),
                              NULL);
    rh_set(s, l, "usage", "{\"input_tokens\":120,\"output_tokens\":30}");
    rh_set(s, l, "chunks", "5");
    l = rh_say(s, FINAL("success", "Report with <markup> & \"quotes\""), "QUOTE", NULL);
    rh_set(s, l, "usage", "{\"input_tokens\":200,\"output_tokens\":10,\"cost_usd\":0.25}");
    rh_set(s, l, "stop_reason", "\"end_turn\"");
    return s;
}

/* The two turns with records kept, to success, the records closed. hook:
 * called after every event (NULL: none). */
static void run_two_turns(rh *h, bool stream_events, aw_context_mode context, void (*hook)(rh *, const aw_json_value *),
                          void *user)
{
    assert_int_equal(rh_init(h, NULL), 0);
    assert_int_equal(rh_tools(h, tools_json), 0);
    assert_int_equal(rh_records(h, stream_events), 0);
    assert_int_equal(rh_model(h, "model.jsonl", two_turns()), 0);
    rh_config(h);
    h->cfg.context = context;
    h->on_event = hook;
    h->user = user;
    assert_int_equal(rh_go(h, 20000), 0);
    rh_assert_status(h, AW_RUN_SUCCESS);
    assert_int_equal(rh_records_close(h), 0);
}

/* ---- the thread ---------------------------------------------------------------------- */

typedef struct thread_check {
    size_t checked;
} thread_check;

/* After every event the file is a whole <thread> holding each event so far. */
static void check_thread_file(rh *h, const aw_json_value *ev)
{
    (void)ev;
    thread_check *tc = h->user;
    size_t len = 0;
    char *xml = rh_read(h, "thread.xml", &len);
    assert_non_null(xml);
    aw_json_doc *doc = NULL;
    aw_error err;
    if (aw_thread_decode(xml, len, NULL, &doc, &err))
        fail_msg("after event %zu the thread does not parse: %s (line %zu): %s", aw_json_count(h->events),
                 err.message, err.line, xml);
    assert_int_equal(aw_json_count(aw_json_doc_root(doc)), aw_json_count(h->events));
    aw_json_doc_free(doc);
    free(xml);
    tc->checked++;
}

static void run_thread_check(aw_context_mode context)
{
    rh h;
    thread_check tc = {0};
    run_two_turns(&h, false, context, check_thread_file, &tc);
    /* task, assistant text, 2 calls, a result, an error, the completion */
    assert_true(tc.checked >= 7);
    assert_int_equal(tc.checked, aw_json_count(h.events));

    /* the file is the codec's encoding of the events the run reported */
    aw_event_list *list = aw_event_list_new(NULL);
    for (size_t i = 0; i < aw_json_count(h.events); i++) {
        aw_event ev;
        aw_error err;
        if (aw_event_from_json(aw_json_at(h.events, i), &ev, &err))
            fail_msg("event %zu: %s", i, err.message);
        assert_int_equal(aw_event_list_add(list, &ev), 0);
    }
    aw_buf want;
    aw_buf_init(&want, NULL);
    assert_int_equal(aw_thread_encode(aw_event_list_items(list), aw_event_list_count(list), NULL, &want, NULL), 0);
    size_t len = 0;
    char *got = rh_read(&h, "thread.xml", &len);
    assert_int_equal(len, want.len);
    assert_memory_equal(got, want.data, len);
    assert_non_null(strstr(got, "tool_output"));
    assert_non_null(strstr(got, "&lt;markup&gt; &amp; &quot;quotes&quot;"));
    free(got);
    aw_buf_free(&want);
    aw_event_list_free(list);
    rh_free(&h);
}

static void test_thread_is_valid_after_every_event(void **state)
{
    (void)state;
    run_thread_check(AW_CONTEXT_MESSAGES);
}

static void test_thread_is_valid_after_every_event_in_xml_context(void **state)
{
    (void)state;
    run_thread_check(AW_CONTEXT_XML);
}

/* ---- envelopes ---------------------------------------------------------------------------- */

/* The envelopes' types, in order, as one string "a b c". */
static char *envelope_types(rh *h)
{
    char *text = rh_read(h, "events.jsonl", NULL);
    assert_non_null(text);
    aw_buf types;
    aw_buf_init(&types, NULL);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        aw_json_doc *d = NULL;
        aw_error err;
        if (aw_json_parse(line, strlen(line), NULL, &d, &err))
            fail_msg("events.jsonl: %s: %s", err.message, line);
        const aw_json_value *e = aw_json_doc_root(d);
        assert_non_null(rh_str(e, "session_id"));
        assert_non_null(rh_str(e, "execution_id"));
        assert_true(aw_json_is_object(aw_json_get(e, "payload")));
        assert_int_equal(aw_buf_printf(&types, "%s ", rh_str(e, "type")), 0);
        aw_json_doc_free(d);
    }
    free(text);
    return types.data;
}

static char *run_for_envelopes(bool stream_events)
{
    rh h;
    run_two_turns(&h, stream_events, AW_CONTEXT_MESSAGES, NULL, NULL);
    char *types = envelope_types(&h);
    rh_free(&h);
    return types;
}

static void test_envelopes_tell_steps_tools_and_status(void **state)
{
    (void)state;
    char *types = run_for_envelopes(false);
    const char *want[] = {"agent.step.started", "agent.tool.started", "agent.tool.started", "agent.tool.completed",
                          "agent.step.completed", "agent.step.started", "agent.status"};
    const char *at = types;
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const char *hit = strstr(at, want[i]);
        if (!hit)
            fail_msg("no %s (in order) in: %s", want[i], types);
        at = hit + strlen(want[i]);
    }
    assert_null(strstr(types, "agent.stream.chunk"));
    free(types);

    types = run_for_envelopes(true);
    assert_non_null(strstr(types, "agent.stream.chunk"));
    free(types);
}

/* ---- accounting ----------------------------------------------------------------------------- */

static aw_json_doc *accounting_lines(rh *h)
{
    size_t len = 0;
    char *text = rh_read(h, "accounting.jsonl", &len);
    assert_non_null(text);
    /* JSON lines into one array */
    aw_buf arr;
    aw_buf_init(&arr, NULL);
    assert_int_equal(aw_buf_putc(&arr, '['), 0);
    bool first = true;
    size_t destinations = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        /* the rows the records add at their close, one per event destination
         * (what it delivered and dropped), are not the observers' */
        if (strstr(line, "{\"kind\":\"events\",") == line) {
            assert_non_null(strstr(line, "\"sink\":\"file\",\"sent\":"));
            destinations++;
            continue;
        }
        assert_int_equal(aw_buf_printf(&arr, "%s%s", first ? "" : ",", line), 0);
        first = false;
    }
    assert_int_equal(destinations, 1);
    assert_int_equal(aw_buf_putc(&arr, ']'), 0);
    aw_json_doc *d = NULL;
    aw_error err;
    if (aw_json_parse(arr.data, arr.len, NULL, &d, &err))
        fail_msg("accounting.jsonl: %s", err.message);
    aw_buf_free(&arr);
    free(text);
    return d;
}

/* The status goes out once the final step is kept: a store has the run's
 * end before a live destination hears of it (a worker killed between the
 * two otherwise left a run that had said it ended, run again elsewhere). */
static void status_after_final_step(rh *h, const aw_json_value *ev)
{
    if (strcmp(rh_str(ev, "event"), "status") != 0)
        return;
    size_t n = aw_json_count(h->steps);
    assert_true(n > 0);
    const aw_json_value *last = aw_json_at(h->steps, n - 1);
    assert_true(aw_json_get(last, "final")->u.b);
    assert_string_equal(rh_str(last, "stop_reason"), rh_str(ev, "stop_reason"));
    *(int *)h->user += 1;
}

static void test_the_status_follows_the_final_step(void **state)
{
    (void)state;
    rh h;
    int statuses = 0;
    assert_int_equal(rh_init(&h, NULL), 0);
    assert_int_equal(rh_tools(&h, tools_json), 0);
    assert_int_equal(rh_model(&h, "model.jsonl", two_turns()), 0);
    rh_config(&h);
    h.on_runtime = status_after_final_step;
    h.user = &statuses;
    assert_int_equal(rh_go(&h, 20000), 0);
    rh_assert_status(&h, AW_RUN_SUCCESS);
    assert_int_equal(statuses, 1);
    rh_free(&h);
}

static void test_accounting_rows_have_every_field(void **state)
{
    (void)state;
    rh h;
    run_two_turns(&h, false, AW_CONTEXT_MESSAGES, NULL, NULL);
    aw_json_doc *d = accounting_lines(&h);
    const aw_json_value *rows = aw_json_doc_root(d);
    /* the file holds what the observers were told */
    assert_true(aw_json_equal(rows, h.accounting));

    const aw_json_value *m1 = rh_find(rows, "kind", "model", 0), *m2 = rh_find(rows, "kind", "model", 1);
    assert_string_equal(rh_str(m1, "provider"), "replay");
    assert_non_null(strstr(rh_str(m1, "model"), "model.jsonl"));
    assert_int_equal((int)rh_num(m1, "turn"), 1);
    assert_string_equal(rh_str(m1, "status"), "ok");
    assert_true(rh_num(m1, "latency_ms") >= 0);
    assert_int_equal((int)rh_num(m1, "input_tokens"), 120);
    assert_int_equal((int)rh_num(m1, "output_tokens"), 30);
    assert_string_equal(rh_str(m1, "stop_reason"), "stop");
    assert_int_equal((int)rh_num(m2, "turn"), 2);
    assert_string_equal(rh_str(m2, "stop_reason"), "end_turn");
    assert_true(rh_num(m2, "cost_usd") == 0.25);
    assert_non_null(rh_str(m1, "session_id"));

    const aw_json_value *up = rh_find(rows, "command", "upper", 0);
    assert_string_equal(rh_str(up, "kind"), "tool");
    assert_string_equal(rh_str(up, "source"), "xml");
    assert_string_equal(rh_str(up, "slot"), "0001");
    assert_string_equal(rh_str(up, "status"), "ok");
    assert_true(rh_num(up, "latency_ms") >= 0);
    assert_int_equal((int)rh_num(up, "request_bytes"), (int)strlen("{\"s\":\"quote \\\" amp & lt <\"}"));
    assert_int_equal((int)rh_num(up, "response_bytes"), (int)strlen("{\"S\":\"QUOTE \\\" AMP & LT <\"}"));
    const aw_json_value *failed = rh_find(rows, "command", "fail", 0);
    assert_string_equal(rh_str(failed, "status"), "failed");
    assert_string_equal(rh_str(failed, "slot"), "0002");
    const aw_json_value *fin = rh_find(rows, "command", "agent__final_report_xml", 0);
    assert_string_equal(rh_str(fin, "source"), "xml");
    assert_string_equal(rh_str(fin, "slot"), "FINAL");
    assert_string_equal(rh_str(fin, "status"), "success");
    aw_json_doc_free(d);
    rh_free(&h);
}

/* ---- trace and recording ----------------------------------------------------------------------- */

static void test_trace_holds_requests_and_replies(void **state)
{
    (void)state;
    rh h;
    run_two_turns(&h, false, AW_CONTEXT_MESSAGES, NULL, NULL);
    char *trace = rh_read(&h, "trace.txt", NULL);
    assert_non_null(trace);
    assert_non_null(strstr(trace, "=== replay request"));
    assert_non_null(strstr(trace, "=== replay reply"));
    assert_non_null(strstr(trace, "Session nonce: " RH_NONCE)); /* the notice went out */
    assert_non_null(strstr(trace, "QUOTE"));                    /* a tool's result went out */
    free(trace);
    rh_free(&h);
}

/* The tool calls of a run as "tool args" lines. */
static char *calls_of(rh *h)
{
    aw_buf b;
    aw_buf_init(&b, NULL);
    for (size_t i = 0; i < aw_json_count(h->events); i++) {
        const aw_json_value *e = aw_json_at(h->events, i);
        if (strcmp(rh_str(e, "type"), "tool_call") != 0)
            continue;
        char *args = rh_json(aw_json_get(e, "args"));
        assert_int_equal(aw_buf_printf(&b, "%s %s\n", rh_str(e, "toolName"), args), 0);
        free(args);
    }
    assert_int_equal(aw_buf_putc(&b, 0), 0);
    return b.data;
}

static void test_a_recording_plays_the_same_run_back(void **state)
{
    (void)state;
    static const aw_transport_mode modes[] = {AW_TRANSPORT_XML, AW_TRANSPORT_NATIVE};
    for (size_t m = 0; m < 2; m++) {
        rh first;
        assert_int_equal(rh_init(&first, NULL), 0);
        assert_int_equal(rh_tools(&first, tools_json), 0);
        assert_int_equal(rh_records(&first, false), 0);
        rh_script *s;
        if (modes[m] == AW_TRANSPORT_XML) {
            s = two_turns();
        } else {
            s = rh_script_new();
            aw_json_value *l = rh_say(s, "calling", NULL);
            rh_set(s, l, "tool_calls",
                   "[{\"id\":\"c1\",\"name\":\"upper\",\"arguments\":\"{\\\"s\\\":\\\"x\\\"}\"},"
                   "{\"id\":\"c2\",\"name\":\"fail\",\"arguments\":{}}]");
            rh_set(s, l, "usage", "{\"input_tokens\":7,\"output_tokens\":3}");
            rh_say(s, "native answer", NULL);
        }
        assert_int_equal(rh_model(&first, "model.jsonl", s), 0);
        rh_config(&first);
        first.cfg.transport = modes[m];
        assert_int_equal(rh_go(&first, 20000), 0);
        rh_assert_status(&first, AW_RUN_SUCCESS);
        assert_int_equal(rh_records_close(&first), 0);
        char *recording = rh_read(&first, "record.jsonl", NULL);
        assert_non_null(recording);

        rh again;
        assert_int_equal(rh_init(&again, NULL), 0);
        assert_int_equal(rh_tools(&again, tools_json), 0);
        rh_write(&again, "recorded.jsonl", recording);
        free(recording);
        char spec[600];
        snprintf(spec, sizeof spec, "replay:%s", rh_path(&again, "recorded.jsonl"));
        aw_provider_config pc = {.spec = spec};
        again.models[again.nmodels++] = aw_provider_new(again.loop, &pc, &again.err);
        assert_non_null(again.models[0]);
        rh_config(&again);
        again.cfg.transport = modes[m];
        assert_int_equal(rh_go(&again, 20000), 0);
        rh_assert_status(&again, AW_RUN_SUCCESS);

        assert_string_equal(again.content, first.content);
        assert_int_equal(again.turns, first.turns);
        char *c1 = calls_of(&first), *c2 = calls_of(&again);
        assert_true(strlen(c1) > 0);
        assert_string_equal(c2, c1);
        free(c1);
        free(c2);
        /* the usage came back too */
        assert_true(aw_json_equal(aw_json_get(rh_find(again.accounting, "kind", "model", 0), "input_tokens"),
                                  aw_json_get(rh_find(first.accounting, "kind", "model", 0), "input_tokens")));
        rh_free(&again);
        rh_free(&first);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thread_is_valid_after_every_event),
        cmocka_unit_test(test_thread_is_valid_after_every_event_in_xml_context),
        cmocka_unit_test(test_envelopes_tell_steps_tools_and_status),
        cmocka_unit_test(test_the_status_follows_the_final_step),
        cmocka_unit_test(test_accounting_rows_have_every_field),
        cmocka_unit_test(test_trace_holds_requests_and_replies),
        cmocka_unit_test(test_a_recording_plays_the_same_run_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
