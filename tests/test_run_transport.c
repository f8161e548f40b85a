/* Whole runs in each transport (xml, xml-final, native) and context mode
 * (messages, xml): replay models whose `expect` checks what each request
 * holds, and real command tools whose outputs must reach the model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "run_harness.h"

/* upper: the arguments in capitals, so the result is told apart from the
 * call the model wrote; mark: leaves a file named by "file"; each logs
 * its call to calls.log. */
static const char tools_json[] =
    "[{\"name\":\"upper\",\"description\":\"the arguments in capitals\","
    "\"input_schema\":{\"type\":\"object\"},"
    "\"command\":[\"sh\",\"-c\",\"tr a-z A-Z; echo upper >> calls.log\"]},"
    " {\"name\":\"mark\",\"description\":\"leaves a file\","
    "\"command\":[\"sh\",\"-c\",\"touch marked; echo mark >> calls.log; echo marked\"]}]";

static void setup(rh *h)
{
    rh_start(h, tools_json);
}

static size_t calls_logged(rh *h, const char *tool)
{
    char *log = rh_read(h, "calls.log", NULL);
    size_t n = 0;
    for (const char *p = log; p && (p = strstr(p, tool)); p += strlen(tool))
        n++;
    free(log);
    return n;
}

static bool file_exists(rh *h, const char *name) { return access(rh_path(h, name), F_OK) == 0; }

/* A chat message of any step whose content holds needle; its role, or NULL. */
static const char *chat_role_holding(rh *h, const char *needle)
{
    for (size_t i = 0; i < aw_json_count(h->steps); i++) {
        const aw_json_value *chat = aw_json_get(aw_json_at(h->steps, i), "chat");
        for (size_t k = 0; k < aw_json_count(chat); k++) {
            const char *content = rh_str(aw_json_at(chat, k), "content");
            if (content && strstr(content, needle))
                return rh_str(aw_json_at(chat, k), "role");
        }
    }
    return NULL;
}

static void assert_success(rh *h, const char *content)
{
    rh_assert_status(h, AW_RUN_SUCCESS);
    assert_string_equal(h->stop_reason, "completed");
    assert_false(h->synthesized);
    if (content)
        assert_string_equal(h->content, content);
}

/* ---- xml transport ------------------------------------------------------------------ */

static void test_xml_calls_run_and_every_request_has_the_notice(void **state)
{
    (void)state;
    rh h;
    setup(&h);
    rh_script *s = rh_script_new();
    rh_say(s, "Looking.\n" CALL("0001", "upper", "{\"n\":\"first-call\"}") CALL("0002", "upper", "{\"n\":\"second\"}"),
           "Session nonce: " RH_NONCE, "Turn 1 of 10", "the task", NULL);
    rh_say(s, CALL("0011", "upper", "{\"n\":\"third\"}"), "Session nonce: " RH_NONCE, "Turn 2 of 10",
           "tool results of the previous turn", "FIRST-CALL", "SECOND", NULL);
    /* turn 1's results are still there: XML-PAST is permanent */
    rh_say(s, FINAL("success", "all done"), "Session nonce: " RH_NONCE, "Turn 3 of 10", "FIRST-CALL", "THIRD", NULL);
    rh_ready(&h, s);
    assert_int_equal(rh_go(&h, 20000), 0);
    assert_success(&h, "all done");
    assert_int_equal(h.turns, 3);
    assert_int_equal(calls_logged(&h, "upper"), 3);
    /* XML-PAST is a user message kept in the history; XML-NEXT is not kept */
    const char *role = chat_role_holding(&h, "tool results of the previous turn");
    assert_non_null(role);
    assert_string_equal(role, "user");
    assert_null(chat_role_holding(&h, "Session nonce:"));
    /* accounting: xml source, the real tool name, the slot (the calls of
     * a turn end in any order) */
    char slots[64] = "";
    for (size_t i = 0; i < 3; i++) {
        const aw_json_value *row = rh_find(h.accounting, "command", "upper", i);
        assert_non_null(row);
        assert_string_equal(rh_str(row, "source"), "xml");
        strcat(slots, rh_str(row, "slot"));
        strcat(slots, " ");
    }
    assert_true(strstr(slots, "0001 ") && strstr(slots, "0002 ") && strstr(slots, "0011 "));
    assert_int_equal(rh_count(h.accounting, "command", "agent__final_report_xml"), 1);
    rh_free(&h);
}

static void test_xml_native_calls_in_a_reply_are_not_run(void **state)
{
    (void)state;
    rh h;
    setup(&h);
    rh_script *s = rh_script_new();
    aw_json_value *l = rh_say(s, "I will call natively.", NULL);
    rh_set(s, l, "tool_calls", "[{\"id\":\"n1\",\"name\":\"mark\",\"arguments\":{}}]");
    rh_say(s, FINAL("success", "ok"), "Native tool calls are ignored in this session", NULL);
    rh_ready(&h, s);
    assert_int_equal(rh_go(&h, 20000), 0);
    assert_success(&h, "ok");
    assert_false(file_exists(&h, "marked"));
    assert_int_equal(calls_logged(&h, "mark"), 0);
    rh_free(&h);
}

/* ---- xml-final transport --------------------------------------------------------------- */

static void test_xml_final_runs_native_calls_and_takes_only_the_final_tag(void **state)
{
    (void)state;
    rh h;
    setup(&h);
    rh_script *s = rh_script_new();
    aw_json_value *l = rh_say(s, "", "Session nonce: " RH_NONCE, NULL);
    rh_set(s, l, "tool_calls", "[{\"id\":\"c1\",\"name\":\"upper\",\"arguments\":\"{\\\"n\\\":\\\"native-arg\\\"}\"}]");
    /* a tag for a non-final tool is refused in xml-final */
    rh_say(s, CALL("0011", "mark", "{}"), "NATIVE-ARG", NULL);
    rh_say(s, FINAL("success", "final via xml"), "call `mark` with a native tool call", NULL);
    rh_ready(&h, s);
    h.cfg.transport = AW_TRANSPORT_XML_FINAL;
    assert_int_equal(rh_go(&h, 20000), 0);
    assert_success(&h, "final via xml");
    assert_int_equal(calls_logged(&h, "upper"), 1);
    assert_false(file_exists(&h, "marked"));
    /* the native call is answered with a tool message */
    const char *role = chat_role_holding(&h, "NATIVE-ARG");
    assert_non_null(role);
    assert_string_equal(role, "tool");
    const aw_json_value *row = rh_find(h.accounting, "command", "upper", 0);
    assert_string_equal(rh_str(row, "source"), "native");
    assert_int_equal(rh_count(h.accounting, "command", "agent__final_report_xml"), 1);
    rh_free(&h);
}

/* ---- native transport ------------------------------------------------------------------- */

static void test_native_calls_then_final_report_call(void **state)
{
    (void)state;
    rh h;
    setup(&h);
    rh_script *s = rh_script_new();
    aw_json_value *l = rh_say(s, "", NULL);
    rh_set(s, l, "tool_calls", "[{\"id\":\"c1\",\"name\":\"upper\",\"arguments\":{\"n\":\"abc\"}}]");
    l = rh_say(s, "", "ABC", NULL);
    rh_set(s, l, "tool_calls",
           "[{\"id\":\"c2\",\"name\":\"agent__final_report\","
           "\"arguments\":{\"status\":\"success\",\"content\":\"native report\"}}]");
    rh_ready(&h, s);
    h.cfg.transport = AW_TRANSPORT_NATIVE;
    assert_int_equal(rh_go(&h, 20000), 0);
    assert_success(&h, "native report");
    assert_int_equal(h.turns, 2);
    assert_int_equal(calls_logged(&h, "upper"), 1);
    /* no notice in native mode */
    assert_null(chat_role_holding(&h, "Session nonce"));
    rh_free(&h);
}

static void test_native_text_reply_is_the_answer(void **state)
{
    (void)state;
    rh h;
    setup(&h);
    rh_script *s = rh_script_new();
    rh_say(s, "The answer is 4.", NULL);
    rh_say(s, "never asked", NULL);
    rh_ready(&h, s);
    h.cfg.transport = AW_TRANSPORT_NATIVE;
    assert_int_equal(rh_go(&h, 20000), 0);
    assert_success(&h, "The answer is 4.");
    assert_int_equal(h.turns, 1);
    rh_free(&h);
}

/* ---- xml context ----------------------------------------------------------------------- */

static void test_xml_context_sends_one_growing_thread(void **state)
{
    (void)state;
    rh h;
    setup(&h);
    rh_script *s = rh_script_new();
    rh_say(s, CALL("0001", "upper", "{\"n\":\"turn-one\"}"), "<thread>", "<event type=\"human\" id=\"0\"",
           "the task", "</thread>\nPREFILL-TEXT", NULL);
    rh_say(s, CALL("0011", "upper", "{\"n\":\"turn-two\"}"), "TURN-ONE", NULL);
    /* turn 3 holds the events of turns 1 and 2: calls and results */
    rh_say(s, FINAL("success", "threaded"), "tool_input", "TURN-ONE", "TURN-TWO", "iteration=\"2\"",
           "</thread>\nPREFILL-TEXT", NULL);
    rh_ready(&h, s);
    h.cfg.context = AW_CONTEXT_XML;
    h.cfg.prefill = "PREFILL-TEXT";
    assert_int_equal(rh_go(&h, 20000), 0);
    assert_success(&h, "threaded");
    /* nothing goes into a chat history in this mode */
    assert_null(chat_role_holding(&h, "TURN-ONE"));
    rh_free(&h);
}

static void test_xml_context_with_native_transport_is_refused(void **state)
{
    (void)state;
    rh h;
    setup(&h);
    rh_script *s = rh_script_new();
    rh_say(s, "x", NULL);
    rh_ready(&h, s);
    h.cfg.context = AW_CONTEXT_XML;
    h.cfg.transport = AW_TRANSPORT_NATIVE;
    assert_int_equal(rh_go(&h, 1000), AW_EINVAL);
    assert_non_null(strstr(h.err.message, "xml context"));
    rh_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xml_calls_run_and_every_request_has_the_notice),
        cmocka_unit_test(test_xml_native_calls_in_a_reply_are_not_run),
        cmocka_unit_test(test_xml_final_runs_native_calls_and_takes_only_the_final_tag),
        cmocka_unit_test(test_native_calls_then_final_report_call),
        cmocka_unit_test(test_native_text_reply_is_the_answer),
        cmocka_unit_test(test_xml_context_sends_one_growing_thread),
        cmocka_unit_test(test_xml_context_with_native_transport_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
