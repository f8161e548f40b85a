/* Hostile replay files: lines that are not JSON or not objects (the error
 * names file:line:col), fields of the wrong type or absurd size, a file
 * that runs out of replies, and a 50 MB reply streamed in 4 KB chunks,
 * which must finish (the time is linear in the reply; no timing is
 * asserted, the ctest timeout bounds it). */
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

static aw_provider *load(rh *h, const char *text)
{
    rh_write(h, "bad.jsonl", text);
    char spec[600];
    snprintf(spec, sizeof spec, "replay:%s", rh_path(h, "bad.jsonl"));
    aw_provider_config pc = {.spec = spec};
    return aw_provider_new(h->loop, &pc, &h->err);
}

static void assert_error_at(rh *h, const char *where, const char *what)
{
    char want[700];
    snprintf(want, sizeof want, "%s:%s", rh_path(h, "bad.jsonl"), where);
    if (!strstr(h->err.message, want) || !strstr(h->err.message, what))
        fail_msg("wanted \"%s\" and \"%s\" in \"%s\"", want, what, h->err.message);
}

static void test_malformed_lines_are_named_by_file_line_and_column(void **state)
{
    (void)state;
    rh h;
    rh_start(&h, NULL);
    assert_null(load(&h, "{\"text\": \"fine\"}\n\n{\"text\": oops}\n"));
    assert_error_at(&h, "3:10:", "unexpected");
    assert_null(load(&h, "{\"text\": \"fine\"}\n[1, 2]\n"));
    assert_error_at(&h, "2:1:", "must be a JSON object");
    assert_null(load(&h, "{\"text\": \"bad \xC3\x28 utf-8\"}\n"));
    assert_error_at(&h, "1:", "UTF-8");
    assert_null(load(&h, "{\"text\": \"unterminated\n"));
    assert_error_at(&h, "1:", "");
    rh_free(&h);
}

static void test_a_missing_file_is_named(void **state)
{
    (void)state;
    rh h;
    rh_start(&h, NULL);
    char spec[600];
    snprintf(spec, sizeof spec, "replay:%s", rh_path(&h, "nowhere.jsonl"));
    aw_provider_config pc = {.spec = spec};
    assert_null(aw_provider_new(h.loop, &pc, &h.err));
    assert_non_null(strstr(h.err.message, "nowhere.jsonl"));
    rh_free(&h);
}

/* A replay that runs out ends the run with the reason, never a hang. */
static void test_running_out_of_replies_ends_the_run(void **state)
{
    (void)state;
    rh h;
    rh_start(&h, NULL);
    rh_script *s = rh_script_new();
    rh_say(s, "no call, no report", NULL);
    rh_ready(&h, s);
    assert_int_equal(rh_go(&h, 20000), 0);
    rh_assert_status(&h, AW_RUN_FAILURE);
    assert_string_equal(h.stop_reason, "error");
    assert_non_null(strstr(h.content, "has no reply left for request 2 (it holds 1)"));
    rh_free(&h);
}

/* Fields of the wrong type or absurd values play as something sane. */
static void test_odd_fields_do_not_break_the_run(void **state)
{
    (void)state;
    rh h;
    rh_start(&h, NULL);
    rh_script *s = rh_script_new();
    rh_raw(s, "{\"text\": 42, \"chunks\": -3, \"delay_ms\": -1e300, \"stop_reason\": [],"
              " \"usage\": {\"input_tokens\": 1e300, \"output_tokens\": -1e300, \"cost_usd\": \"free\"},"
              " \"tool_calls\": {\"not\": \"a list\"}}");
    rh_raw(s, "{\"text\": \"a\", \"chunks\": [1, null, \"b\", {}], \"usage\": 7,"
              " \"tool_calls\": [7, {\"name\": 9, \"arguments\": 3.5}, {\"name\": \"x\", \"arguments\": \"{oops\"}]}");
    rh_raw(s, "{\"text\": \"\", \"chunks\": [], \"expect\": []}");
    rh_say(s, FINAL("success", "still standing"), NULL);
    rh_ready(&h, s);
    assert_int_equal(rh_go(&h, 20000), 0);
    rh_assert_status(&h, AW_RUN_SUCCESS);
    assert_string_equal(h.content, "still standing");
    rh_free(&h);
}

static void test_a_bad_expectation_is_an_error_naming_the_line(void **state)
{
    (void)state;
    rh h;
    rh_start(&h, NULL);
    rh_script *s = rh_script_new();
    rh_raw(s, "{\"text\": \"x\", \"expect\": \"not a list\"}");
    rh_ready(&h, s);
    assert_int_equal(rh_go(&h, 20000), 0);
    rh_assert_status(&h, AW_RUN_FAILURE);
    assert_non_null(strstr(h.content, "model.jsonl:1: \"expect\" and \"absent\" must be arrays of strings"));
    rh_free(&h);
}

/* ---- a 50 MB reply ----------------------------------------------------------------------- */

static void test_a_50_mb_reply_in_4_kb_chunks_finishes(void **state)
{
    (void)state;
    rh h;
    rh_start(&h, NULL);
    enum { BIG = 50 << 20 };
    /* 50 MB of prose with '<' every 100 bytes (each a possible tag the
     * extractor must look at), then the report */
    aw_buf text, json;
    aw_buf_init(&text, NULL);
    aw_buf_init(&json, NULL);
    assert_int_equal(aw_buf_reserve(&text, BIG + 256), 0);
    for (size_t i = 0; i < BIG; i++)
        text.data[i] = i % 100 == 99 ? '<' : (char)('a' + i % 26);
    text.len = BIG;
    assert_int_equal(aw_buf_append_str(&text, FINAL("success", "read it all")), 0);
    assert_int_equal(aw_buf_append_str(&json, "{\"text\": "), 0);
    assert_int_equal(aw_json_write_string(&json, text.data, text.len), 0);
    assert_int_equal(aw_buf_append_str(&json, ", \"chunks\": 4096}\n"), 0);
    aw_buf_free(&text);
    char *line = json.data;
    rh_write(&h, "big.jsonl", line);
    aw_buf_free(&json);
    char spec[600];
    snprintf(spec, sizeof spec, "replay:%s", rh_path(&h, "big.jsonl"));
    aw_provider_config pc = {.spec = spec};
    h.models[h.nmodels++] = aw_provider_new(h.loop, &pc, &h.err);
    if (!h.models[0])
        fail_msg("%s", h.err.message);
    rh_config(&h);
    assert_int_equal(rh_go(&h, 250000), 0);
    rh_assert_status(&h, AW_RUN_SUCCESS);
    assert_string_equal(h.content, "read it all");
    const aw_json_value *row = rh_find(h.accounting, "kind", "model", 0);
    assert_true(rh_num(row, "response_bytes") > BIG);
    rh_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malformed_lines_are_named_by_file_line_and_column),
        cmocka_unit_test(test_a_missing_file_is_named),
        cmocka_unit_test(test_running_out_of_replies_ends_the_run),
        cmocka_unit_test(test_odd_fields_do_not_break_the_run),
        cmocka_unit_test(test_a_bad_expectation_is_an_error_naming_the_line),
        cmocka_unit_test(test_a_50_mb_reply_in_4_kb_chunks_finishes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
