/* Failed model requests (retried with backoff and Retry-After, handed to a
 * fallback model, or ending the run with the reason) and contract runs
 * (a reply that must be a contract's document: typed on success, every
 * issue on failure, the issues sent back when retries are allowed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agentwire/contract.h"
#include "run_harness.h"

static const char mark_tool[] = "[{\"name\":\"mark\",\"command\":[\"sh\",\"-c\",\"touch marked; echo marked\"]}]";

static const aw_json_value *model_row(rh *h, size_t nth) { return rh_find(h->accounting, "kind", "model", nth); }

static void assert_holds(const char *text, const char *needle)
{
    if (!text || !strstr(text, needle))
        fail_msg("wanted \"%s\" in \"%.400s\"", needle, text ? text : "(nothing)");
}

/* ---- retries ------------------------------------------------------------------------------ */

static void test_retryable_errors_are_retried_then_succeed(void **state)
{
    (void)state;
    rh h;
    rh_start(&h, mark_tool);
    rh_script *s = rh_script_new();
    /* the first attempt streams a call and breaks off: nothing of it runs */
    aw_json_value *l = rh_say(s, CALL("0001", "mark", "{}"), NULL);
    rh_set(s, l, "error", "\"connection reset\"");
    rh_set(s, l, "retryable", "true");
    l = rh_raw(s, "{\"error\": \"429 Too Many Requests\", \"http_status\": 429, \"retryable\": true, "
                  "\"retry_after_ms\": 150}");
    rh_say(s, FINAL("success", "third time lucky"), NULL);
    rh_ready(&h, s);
    assert_int_equal(rh_go(&h, 20000), 0);
    rh_assert_status(&h, AW_RUN_SUCCESS);
    assert_string_equal(h.content, "third time lucky");
    assert_false(access(rh_path(&h, "marked"), F_OK) == 0);
    assert_int_equal(rh_count(h.events, "type", "tool_call"), 0);
    /* three rows for turn 1: two failures with their waits, then the reply */
    assert_int_equal(rh_count(h.accounting, "kind", "model"), 3);
    const aw_json_value *first = model_row(&h, 0), *second = model_row(&h, 1), *third = model_row(&h, 2);
    assert_string_equal(rh_str(first, "status"), "failed");
    assert_int_equal((int)rh_num(first, "attempt"), 1);
    assert_holds(rh_str(first, "error"), "connection reset");
    assert_true(rh_num(first, "retry_in_ms") >= 0 && rh_num(first, "retry_in_ms") < 150);
    assert_string_equal(rh_str(second, "status"), "failed");
    assert_int_equal((int)rh_num(second, "attempt"), 2);
    assert_int_equal((int)rh_num(second, "http_status"), 429);
    /* Retry-After is longer than the backoff (2 ms base): it wins */
    assert_true(rh_num(second, "retry_in_ms") >= 150);
    assert_string_equal(rh_str(third, "status"), "ok");
    assert_int_equal((int)rh_num(third, "attempt"), 3);
    rh_free(&h);
}

static void test_retries_run_out_with_retry_limit(void **state)
{
    (void)state;
    rh h;
    rh_start(&h, NULL);
    rh_script *s = rh_script_new();
    for (int i = 0; i < 3; i++)
        rh_raw(s, "{\"error\": \"503 Service Unavailable: overloaded\", \"retryable\": true}");
    rh_say(s, FINAL("success", "never reached"), NULL);
    rh_ready(&h, s);
    h.cfg.budgets.max_retries = 2;
    assert_int_equal(rh_go(&h, 20000), 0);
    rh_assert_status(&h, AW_RUN_FAILURE);
    assert_true(h.synthesized);
    assert_string_equal(h.stop_reason, "retry_limit");
    assert_holds(h.content, "503 Service Unavailable: overloaded");
    assert_int_equal(rh_count(h.accounting, "kind", "model"), 3);
    assert_null(aw_json_get(model_row(&h, 2), "retry_in_ms"));
    rh_free(&h);
}

static void test_a_non_retryable_error_goes_to_the_fallback(void **state)
{
    (void)state;
    rh h;
    rh_start(&h, NULL);
    rh_script *first = rh_script_new();
    rh_raw(first, "{\"error\": \"401 Unauthorized: bad key\", \"http_status\": 401, \"retryable\": false}");
    assert_int_equal(rh_model(&h, "first.jsonl", first), 0);
    rh_script *second = rh_script_new();
    rh_say(second, FINAL("success", "from the fallback"), "Session nonce: " RH_NONCE, NULL);
    assert_int_equal(rh_model(&h, "second.jsonl", second), 0);
    rh_config(&h);
    assert_int_equal(rh_go(&h, 20000), 0);
    rh_assert_status(&h, AW_RUN_SUCCESS);
    assert_string_equal(h.content, "from the fallback");
    assert_int_equal(rh_count(h.accounting, "kind", "model"), 2);
    assert_non_null(strstr(rh_str(model_row(&h, 0), "model"), "first.jsonl"));
    assert_null(aw_json_get(model_row(&h, 0), "retry_in_ms")); /* not retried */
    assert_non_null(strstr(rh_str(model_row(&h, 1), "model"), "second.jsonl"));
    assert_true(rh_any_holds(h.logs, "falling back to replay:"));
    rh_free(&h);
}

static void test_every_model_failing_ends_with_the_error(void **state)
{
    (void)state;
    rh h;
    rh_start(&h, NULL);
    rh_script *first = rh_script_new();
    rh_raw(first, "{\"error\": \"401 Unauthorized: bad key\", \"retryable\": false}");
    assert_int_equal(rh_model(&h, "first.jsonl", first), 0);
    rh_script *second = rh_script_new();
    rh_raw(second, "{\"error\": \"400 Bad Request: context too long\", \"retryable\": false}");
    assert_int_equal(rh_model(&h, "second.jsonl", second), 0);
    rh_config(&h);
    assert_int_equal(rh_go(&h, 20000), 0);
    rh_assert_status(&h, AW_RUN_FAILURE);
    assert_true(h.synthesized);
    assert_string_equal(h.stop_reason, "error");
    assert_holds(h.content, "400 Bad Request: context too long");
    rh_free(&h);
}

/* ---- contracts ---------------------------------------------------------------------------- */

#define GOOD_RESPONSE                                                                                             \
    "<llmResponse><response>Saving for college</response><analysis>"                                              \
    "<subject name=\"college-savings\" description=\"saving for school\" isNew=\"true\">"                         \
    "<keyword term=\"529-plan\" confidence=\"0.9\"/></subject>"                                                   \
    "<summaryUpdate>The user asked about saving.</summaryUpdate></analysis></llmResponse>"
/* three issues: isNew not a boolean, confidence out of range, no <summaryUpdate> */
#define BAD_RESPONSE                                                                                              \
    "<llmResponse><response>Hi</response><analysis><subject name=\"x\" description=\"y\" isNew=\"maybe\">"        \
    "<keyword term=\"k\" confidence=\"7\"/></subject></analysis></llmResponse>"

static void contract_run(rh *h, rh_script *s, unsigned retries)
{
    assert_int_equal(rh_init(h, NULL), 0);
    assert_int_equal(rh_model(h, "model.jsonl", s), 0);
    rh_config(h);
    aw_contract *c = NULL;
    aw_error err;
    assert_int_equal(aw_contract_builtin("llmResponse", NULL, &c, &err), 0);
    h->cfg.contract = c;
    h->cfg.contract_retries = retries;
    assert_int_equal(rh_go(h, 20000), 0);
    aw_contract_free(c);
}

static void test_a_valid_contract_reply_gives_typed_json(void **state)
{
    (void)state;
    rh h;
    rh_script *s = rh_script_new();
    rh_say(s, FINAL("success", GOOD_RESPONSE), NULL);
    contract_run(&h, s, 0);
    rh_assert_status(&h, AW_RUN_SUCCESS);
    assert_non_null(h.json);
    char *typed = rh_json(aw_json_doc_root(h.json));
    assert_holds(typed, "Saving for college");
    assert_holds(typed, "\"confidence\":0.9");
    assert_holds(typed, "\"isNew\":true");
    free(typed);
    rh_free(&h);
}

static void test_an_invalid_contract_reply_fails_fast_with_every_issue(void **state)
{
    (void)state;
    rh h;
    rh_script *s = rh_script_new();
    rh_say(s, FINAL("success", BAD_RESPONSE), NULL);
    rh_say(s, FINAL("success", GOOD_RESPONSE), NULL); /* never asked: no fallbacks */
    contract_run(&h, s, 0);
    rh_assert_status(&h, AW_RUN_FAILURE);
    assert_string_equal(h.stop_reason, "error");
    assert_int_equal(h.turns, 1);
    assert_holds(h.content, "not a valid <llmResponse>");
    assert_holds(h.content, "isNew");
    assert_holds(h.content, "confidence");
    assert_holds(h.content, "summaryUpdate");
    /* one line per issue */
    size_t lines = 0;
    for (const char *p = h.content; (p = strstr(p, "\n- ")); p++)
        lines++;
    assert_int_equal(lines, 3);
    assert_null(h.json);
    rh_free(&h);
}

static void test_contract_retries_send_the_issues_back(void **state)
{
    (void)state;
    rh h;
    rh_script *s = rh_script_new();
    rh_say(s, FINAL("success", BAD_RESPONSE), NULL);
    rh_say(s, FINAL("success", GOOD_RESPONSE), "Your reply is not a valid <llmResponse> document", "summaryUpdate",
           "confidence", NULL);
    contract_run(&h, s, 1);
    rh_assert_status(&h, AW_RUN_SUCCESS);
    assert_int_equal(h.turns, 2);
    assert_non_null(h.json);
    rh_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_retryable_errors_are_retried_then_succeed),
        cmocka_unit_test(test_retries_run_out_with_retry_limit),
        cmocka_unit_test(test_a_non_retryable_error_goes_to_the_fallback),
        cmocka_unit_test(test_every_model_failing_ends_with_the_error),
        cmocka_unit_test(test_a_valid_contract_reply_gives_typed_json),
        cmocka_unit_test(test_an_invalid_contract_reply_fails_fast_with_every_issue),
        cmocka_unit_test(test_contract_retries_send_the_issues_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
