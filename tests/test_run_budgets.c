#define _GNU_SOURCE
/* A run's budgets with real command tools: turns, calls a turn, tools at
 * once, the context window, the whole run's time, each tool's time, the
 * output a model sees, a tool that prints 100 MB, a tool that fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cmocka.h>

#include "run_harness.h"

static long peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static long read_pid(rh *h, const char *name)
{
    char *s = rh_read(h, name, NULL);
    long pid = s ? atol(s) : 0;
    free(s);
    return pid;
}

/* The result the model saw for call n (0-based) of the run: a tool_result's
 * result or an error event's text. */
static const char *seen_result(rh *h, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < aw_json_count(h->events); i++) {
        const aw_json_value *e = aw_json_at(h->events, i);
        const char *type = rh_str(e, "type");
        if (!strcmp(type, "tool_result") && k++ == n)
            return rh_str(e, "result");
        if (!strcmp(type, "error") && rh_str(e, "toolCallId") && k++ == n)
            return rh_str(e, "error");
    }
    return NULL;
}

static void assert_holds(const char *text, const char *needle)
{
    if (!text || !strstr(text, needle))
        fail_msg("wanted \"%s\" in \"%.300s\"", needle, text ? text : "(nothing)");
}

/* ---- a tool that prints 100 MB (first: the peak RSS of the process is
 * still low) ---------------------------------------------------------------------------- */

static void test_a_tool_printing_100_mb_keeps_memory_bounded(void **state)
{
    (void)state;
    rh h;
    rh_start(&h, "[{\"name\":\"flood\",\"command\":[\"sh\",\"-c\","
                 "\"head -c 104857600 /dev/zero | tr '\\\\000' a\"]}]");
    rh_script *s = rh_script_new();
    rh_say(s, CALL("0001", "flood", "{}"), NULL);
    rh_say(s, FINAL("success", "survived"), "aaaa", "[output cut: 100000 of 104857600 bytes shown]", NULL);
    rh_ready(&h, s);
    /* the thread holds whole results (XML-PAST would show 4 KB of it) */
    h.cfg.context = AW_CONTEXT_XML;
    long before = peak_rss_kb();
    assert_int_equal(rh_go(&h, 60000), 0);
    long grown = peak_rss_kb() - before;
    rh_assert_status(&h, AW_RUN_SUCCESS);
    const char *result = seen_result(&h, 0);
    /* the model sees the default 100 000 bytes and how much there was */
    assert_holds(result, "[output cut: 100000 of 104857600 bytes shown]");
    const aw_json_value *row = rh_find(h.accounting, "command", "flood", 0);
    assert_int_equal((long)rh_num(row, "response_bytes"), 104857600L);
    /* the command tool keeps 8 MB; everything else is small */
    if (grown > 48 * 1024)
        fail_msg("the peak RSS grew by %ld kB reading a 100 MB output", grown);
    rh_free(&h);
}

/* ---- turns -------------------------------------------------------------------------------- */

static void test_max_turns_ends_with_a_synthesized_failure(void **state)
{
    (void)state;
    rh h;
    rh_start(&h, "[{\"name\":\"tick\",\"command\":[\"sh\",\"-c\",\"echo tick >> ticks; echo ok\"]}]");
    rh_script *s = rh_script_new();
    rh_say(s, CALL("0001", "tick", "{}"), "Turn 1 of 2", NULL);
    /* the last turn says so; a call made in it is not run */
    rh_say(s, CALL("0011", "tick", "{}"), "Turn 2 of 2", "This is the last turn", NULL);
    rh_ready(&h, s);
    h.cfg.budgets.max_turns = 2;
    assert_int_equal(rh_go(&h, 20000), 0);
    rh_assert_status(&h, AW_RUN_FAILURE);
    assert_true(h.synthesized);
    assert_string_equal(h.stop_reason, "steps_limit");
    assert_int_equal(h.turns, 2);
    assert_holds(h.content, "turn 2 of 2");
    char *ticks = rh_read(&h, "ticks", NULL);
    assert_non_null(ticks);
    assert_string_equal(ticks, "tick\n");
    free(ticks);
    assert_holds(seen_result(&h, 1), "last turn");
    rh_free(&h);
}

static void test_max_turns_in_native_offers_only_the_final_report(void **state)
{
    (void)state;
    rh h;
    rh_start(&h, "[{\"name\":\"tally\",\"command\":[\"sh\",\"-c\",\"echo x >> ticks; echo ok\"]}]");
    rh_script *s = rh_script_new();
    aw_json_value *l = rh_say(s, "", "tally", NULL);
    rh_set(s, l, "absent", "[\"This is the last turn\"]");
    rh_set(s, l, "tool_calls", "[{\"id\":\"a\",\"name\":\"tally\",\"arguments\":{}}]");
    l = rh_say(s, "", "This is the last turn", "agent__final_report", NULL);
    rh_set(s, l, "absent", "[\"tally\"]");
    rh_set(s, l, "tool_calls", "[{\"id\":\"b\",\"name\":\"tally\",\"arguments\":{}}]");
    rh_ready(&h, s);
    h.cfg.transport = AW_TRANSPORT_NATIVE;
    h.cfg.budgets.max_turns = 2;
    assert_int_equal(rh_go(&h, 20000), 0);
    rh_assert_status(&h, AW_RUN_FAILURE);
    assert_string_equal(h.stop_reason, "steps_limit");
    char *ticks = rh_read(&h, "ticks", NULL);
    assert_string_equal(ticks, "x\n");
    free(ticks);
    rh_free(&h);
}

/* ---- calls a turn ------------------------------------------------------------------------------ */

static const char count_tool[] =
    "[{\"name\":\"count\",\"command\":[\"sh\",\"-c\",\"echo x >> counted; echo counted\"]}]";

static size_t lines_in(rh *h, const char *name)
{
    char *s = rh_read(h, name, NULL);
    size_t n = 0;
    for (char *p = s; p && *p; p++)
        n += *p == '\n';
    free(s);
    return n;
}

static void test_max_calls_in_xml_closes_the_slots_past_it(void **state)
{
    (void)state;
    rh h;
    rh_start(&h, count_tool);
    rh_script *s = rh_script_new();
    rh_say(s, CALL("0001", "count", "{}") CALL("0002", "count", "{}") CALL("0003", "count", "{}"),
           "up to 2 tool calls", NULL);
    rh_say(s, FINAL("success", "ok"), "TURN-FAILED", NULL);
    rh_ready(&h, s);
    h.cfg.budgets.max_calls_per_turn = 2;
    assert_int_equal(rh_go(&h, 20000), 0);
    rh_assert_status(&h, AW_RUN_SUCCESS);
    assert_int_equal(lines_in(&h, "counted"), 2);
    rh_free(&h);
}

static void test_max_calls_in_native_runs_no_more(void **state)
{
    (void)state;
    rh h;
    rh_start(&h, count_tool);
    rh_script *s = rh_script_new();
    aw_json_value *l = rh_say(s, "", NULL);
    rh_set(s, l, "tool_calls",
           "[{\"id\":\"a\",\"name\":\"count\",\"arguments\":{}},{\"id\":\"b\",\"name\":\"count\",\"arguments\":{}},"
           "{\"id\":\"c\",\"name\":\"count\",\"arguments\":{}}]");
    rh_say(s, "done", "more than 2 tool calls", NULL);
    rh_ready(&h, s);
    h.cfg.transport = AW_TRANSPORT_NATIVE;
    h.cfg.budgets.max_calls_per_turn = 2;
    assert_int_equal(rh_go(&h, 20000), 0);
    rh_assert_status(&h, AW_RUN_SUCCESS);
    assert_int_equal(lines_in(&h, "counted"), 2);
    rh_free(&h);
}

/* ---- tools at once ------------------------------------------------------------------------------- */

/* Each call logs S when it starts and E when it ends; it waits (at most
 * 10 s) until PAR calls have started, so calls that are meant to overlap
 * really do, and says "alone" when they never did. */
static const char barrier_tool[] =
    "[{\"name\":\"meet\",\"env\":{\"PAR\":\"3\"},\"command\":[\"sh\",\"-c\","
    "\"echo S >> meet.log; i=0; while [ $(grep -c S meet.log) -lt $PAR ] && [ $i -lt 200 ]; do sleep 0.05; "
    "i=$((i+1)); done; [ $i -lt 200 ] && echo met || echo alone; echo E >> meet.log\"]}]";

static void test_parallel_runs_n_tools_at_once_and_no_more(void **state)
{
    (void)state;
    rh h;
    rh_start(&h, barrier_tool);
    rh_script *s = rh_script_new();
    rh_say(s,
           CALL("0001", "meet", "{}") CALL("0002", "meet", "{}") CALL("0003", "meet", "{}") CALL("0004", "meet", "{}")
               CALL("0005", "meet", "{}") CALL("0006", "meet", "{}"),
           NULL);
    rh_say(s, FINAL("success", "met"), NULL);
    rh_ready(&h, s);
    h.cfg.budgets.parallel = 3;
    assert_int_equal(rh_go(&h, 30000), 0);
    rh_assert_status(&h, AW_RUN_SUCCESS);
    for (size_t i = 0; i < 6; i++)
        assert_holds(seen_result(&h, i), "met");
    /* never more than 3 started and not ended */
    char *log = rh_read(&h, "meet.log", NULL);
    assert_non_null(log);
    int running = 0, most = 0, starts = 0;
    for (char *p = log; *p; p++) {
        if (*p == 'S')
            running++, starts++;
        else if (*p == 'E')
            running--;
        if (running > most)
            most = running;
    }
    free(log);
    assert_int_equal(starts, 6);
    assert_int_equal(most, 3);
    rh_free(&h);
}

/* ---- the context window ------------------------------------------------------------------------------ */

static void test_an_output_over_the_context_window_fails(void **state)
{
    (void)state;
    rh h;
    rh_start(&h, "[{\"name\":\"big\",\"command\":[\"sh\",\"-c\",\"head -c 8000 /dev/zero | tr '\\\\000' "
                 "b\"]},{\"name\":\"small\",\"command\":[\"echo\",\"tiny\"]}]");
    rh_script *s = rh_script_new();
    rh_say(s, CALL("0001", "small", "{}") CALL("0002", "big", "{}"), NULL);
    rh_say(s, FINAL("success", "ok"), "context window budget exceeded", "tiny", NULL);
    rh_ready(&h, s);
    h.cfg.budgets.context_window = 1000; /* tokens: about 4000 bytes */
    assert_int_equal(rh_go(&h, 20000), 0);
    rh_assert_status(&h, AW_RUN_SUCCESS);
    const aw_json_value *ok = rh_find(h.events, "type", "tool_result", 0);
    assert_string_equal(rh_str(ok, "result"), "tiny\n");
    assert_true(rh_any_holds(h.events, "(tool failed: context window budget exceeded)"));
    assert_false(rh_any_holds(h.events, "bbbbbbbb"));
    rh_free(&h);
}

/* ---- time ------------------------------------------------------------------------------------------- */

static void test_the_run_timeout_stops_a_slow_model(void **state)
{
    (void)state;
    rh h;
    rh_start(&h, NULL);
    rh_script *s = rh_script_new();
    aw_json_value *l = rh_say(s, FINAL("success", "too late"), NULL);
    rh_set(s, l, "delay_ms", "30000");
    rh_ready(&h, s);
    h.cfg.budgets.timeout_ms = 200;
    assert_int_equal(rh_go(&h, 10000), 0);
    rh_assert_status(&h, AW_RUN_FAILURE);
    assert_string_equal(h.stop_reason, "time_limit");
    assert_true(h.synthesized);
    assert_holds(h.content, "time limit");
    rh_free(&h);
}

static void test_the_run_timeout_kills_running_tools(void **state)
{
    (void)state;
    rh h;
    rh_start(&h, "[{\"name\":\"hang\",\"command\":[\"sh\",\"-c\",\"sleep 30 & echo $! > hang.pid; wait\"]}]");
    rh_script *s = rh_script_new();
    rh_say(s, CALL("0001", "hang", "{}"), NULL);
    rh_ready(&h, s);
    h.cfg.budgets.timeout_ms = 500;
    assert_int_equal(rh_go(&h, 10000), 0);
    assert_string_equal(h.stop_reason, "time_limit");
    long pid = read_pid(&h, "hang.pid");
    assert_true(pid > 0);
    assert_true(rh_pid_gone(pid, 2000));
    rh_free(&h);
}

static void test_a_hanging_tool_is_killed_at_its_timeout(void **state)
{
    (void)state;
    rh h;
    rh_start(&h, "[{\"name\":\"hang\",\"command\":[\"sh\",\"-c\",\"sleep 30 & echo $! > hang.pid; wait\"]}]");
    rh_script *s = rh_script_new();
    rh_say(s, CALL("0001", "hang", "{}"), NULL);
    rh_say(s, FINAL("success", "went on"), "timed out", NULL);
    rh_ready(&h, s);
    h.cfg.budgets.tool_timeout_ms = 300;
    assert_int_equal(rh_go(&h, 20000), 0);
    rh_assert_status(&h, AW_RUN_SUCCESS);
    assert_holds(seen_result(&h, 0), "timed out");
    const aw_json_value *row = rh_find(h.accounting, "command", "hang", 0);
    assert_string_equal(rh_str(row, "status"), "timeout");
    long pid = read_pid(&h, "hang.pid");
    assert_true(pid > 0);
    assert_true(rh_pid_gone(pid, 2000));
    rh_free(&h);
}

/* A command tool's own "timeout_ms" ends it with no run-wide tool timeout;
 * one beyond any sense (1e300) is held at about 35 years, not converted
 * into undefined behaviour, and the tool runs. */
static void test_a_tool_is_killed_at_its_own_timeout(void **state)
{
    (void)state;
    rh h;
    rh_start(&h, "[{\"name\":\"hang\",\"command\":[\"sleep\",\"30\"],\"timeout_ms\":300},"
                 "{\"name\":\"slow_ok\",\"command\":[\"echo\",\"fine\"],\"timeout_ms\":1e300}]");
    rh_script *s = rh_script_new();
    rh_say(s, CALL("0001", "hang", "{}"), NULL);
    rh_say(s, CALL("0011", "slow_ok", "{}"), "timed out after 300 ms", NULL);
    rh_say(s, FINAL("success", "went on"), "fine", NULL);
    rh_ready(&h, s);
    assert_int_equal(rh_go(&h, 20000), 0);
    rh_assert_status(&h, AW_RUN_SUCCESS);
    assert_holds(seen_result(&h, 0), "timed out after 300 ms");
    assert_holds(seen_result(&h, 1), "fine");
    assert_string_equal(rh_str(rh_find(h.accounting, "command", "hang", 0), "status"), "timeout");
    rh_free(&h);
}

/* ---- outputs ------------------------------------------------------------------------------------------ */

static bool valid_utf8(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (!len || i + len > n)
            return false;
        for (size_t k = 1; k < len; k++)
            if (((unsigned char)s[i + k] & 0xC0) != 0x80)
                return false;
        i += len;
    }
    return true;
}

static void test_output_is_cut_at_a_character_boundary(void **state)
{
    (void)state;
    rh h;
    /* 100 two-byte characters and a newline: 201 bytes */
    rh_start(&h, "[{\"name\":\"accents\",\"command\":[\"sh\",\"-c\",\"i=0; while [ $i -lt 100 ]; do "
                 "printf '\\\\303\\\\251'; i=$((i+1)); done; echo\"]}]");
    rh_script *s = rh_script_new();
    rh_say(s, CALL("0001", "accents", "{}"), NULL);
    rh_say(s, FINAL("success", "ok"), "[output cut: 100 of 201 bytes shown]", NULL);
    rh_ready(&h, s);
    h.cfg.budgets.max_tool_output = 101; /* the 51st character would be split */
    assert_int_equal(rh_go(&h, 20000), 0);
    rh_assert_status(&h, AW_RUN_SUCCESS);
    const char *result = seen_result(&h, 0);
    assert_non_null(result);
    assert_true(valid_utf8(result, strlen(result)));
    assert_int_equal(strncmp(result, "\xC3\xA9\xC3\xA9", 4), 0);
    const char *marker = strstr(result, "\n[output cut:");
    assert_non_null(marker);
    assert_int_equal(marker - result, 100);
    rh_free(&h);
}

static void test_a_failing_tool_reports_its_stderr_tail(void **state)
{
    (void)state;
    rh h;
    /* 5000 bytes of noise on stderr, then the line that says why */
    rh_start(&h, "[{\"name\":\"broken\",\"command\":[\"sh\",\"-c\",\"head -c 5000 /dev/zero | tr "
                 "'\\\\000' n >&2; echo >&2; echo 'disk on fire' >&2; exit 7\"]}]");
    rh_script *s = rh_script_new();
    rh_say(s, CALL("0001", "broken", "{}"), NULL);
    rh_say(s, FINAL("success", "noted"), "exited with status 7", "disk on fire", NULL);
    rh_ready(&h, s);
    assert_int_equal(rh_go(&h, 20000), 0);
    rh_assert_status(&h, AW_RUN_SUCCESS);
    const char *result = seen_result(&h, 0);
    assert_holds(result, "exited with status 7");
    assert_holds(result, "stderr ends: ");
    assert_holds(result, "disk on fire");
    assert_true(strlen(result) < 3000); /* the tail, not the whole stderr */
    const aw_json_value *row = rh_find(h.accounting, "command", "broken", 0);
    assert_string_equal(rh_str(row, "status"), "failed");
    rh_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_tool_printing_100_mb_keeps_memory_bounded),
        cmocka_unit_test(test_max_turns_ends_with_a_synthesized_failure),
        cmocka_unit_test(test_max_turns_in_native_offers_only_the_final_report),
        cmocka_unit_test(test_max_calls_in_xml_closes_the_slots_past_it),
        cmocka_unit_test(test_max_calls_in_native_runs_no_more),
        cmocka_unit_test(test_parallel_runs_n_tools_at_once_and_no_more),
        cmocka_unit_test(test_an_output_over_the_context_window_fails),
        cmocka_unit_test(test_the_run_timeout_stops_a_slow_model),
        cmocka_unit_test(test_the_run_timeout_kills_running_tools),
        cmocka_unit_test(test_a_hanging_tool_is_killed_at_its_timeout),
        cmocka_unit_test(test_a_tool_is_killed_at_its_own_timeout),
        cmocka_unit_test(test_output_is_cut_at_a_character_boundary),
        cmocka_unit_test(test_a_failing_tool_reports_its_stderr_tail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
