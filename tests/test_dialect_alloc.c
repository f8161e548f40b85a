/* Allocation failures in the dialect readers and the recovery filter
 * (issue 18): a session with every dialect on reads a reply holding a
 * call in each dialect, malformed calls, a fence, a mention and a tag of
 * ours, whole and in chunks of 7 bytes, while each allocation fails in
 * turn (aw_failalloc_run), and again with the allocator out of memory for
 * good from the N-th call on. Every run must free everything and return
 * AW_ENOMEM, or, when it recovered, give exactly the events of a run
 * without failures: a failure must never become a different answer (a
 * call lost, an argument left untyped, a candidate shown as text). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agentwire/agentwire.h"
#include "failalloc.h"

#define NONCE "1a2b3c4d"
#define WRONG_RESULT 1

static const char tools_json[] =
    "[{\"name\":\"get_weather\",\"input_schema\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"},"
    "\"days\":{\"type\":\"integer\"},\"tags\":{\"type\":\"array\"}}}},"
    "{\"name\":\"search\",\"input_schema\":{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\"}}}}]";

static const char reply[] =
    "I'll look.\n"
    "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"query\": \"hermes\"}}\n</tool_call>\n"
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\n"
    "<function=get_weather>\n<parameter=tags>[\"a\", \"b\"]</parameter>\n</function>\n</tool_call>\n"
    "<tool_call>get_weather\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>\n"
    "<|tool_call|>[{\"name\": \"search\", \"arguments\": {\"query\": \"granite\"}}]\n"
    "{\"name\": \"search\", \"parameters\": {\"query\": \"llama\"}}\n"
    "<|python_tag|>brave_search.call(query=\"x\")<|eom_id|>\n"
    "<function=get_weather>{\"days\": \"5\"}</function>\n"
    "[get_weather(city='Nice', days=2), search(query=\"py\")]\n"
    "[TOOL_CALLS]search[ARGS]{\"query\": \"mistral\"}\n"
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>{\"query\": \"ds\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>\n"
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>{\"query\": \"kimi\"}"
    "<|tool_call_end|><|tool_calls_section_end|>\n"
    "<minimax:tool_call><invoke name=\"get_weather\"><parameter name=\"days\">7</parameter></invoke></minimax:tool_call>\n"
    "<function_calls><invoke name=\"search\"><parameter name=\"query\">fc</parameter></invoke></function_calls>\n"
    "<|start|>assistant<|channel|>commentary to=functions.search <|constrain|>json<|message|>{\"query\":\"oss\"}<|call|>\n"
    "```json\n{\"tool_calls\": [{\"name\": \"search\", \"arguments\": {\"query\": \"fenced\"}}]}\n```\n"
    "Write `<tool_call>{}</tool_call>` to call; <ai-agent-" NONCE "-0001 tool=\"search\">{\"query\": \"xml\"}</ai-agent-" NONCE "-0001>\n"
    "<tool_call>\n<function=search>\n<parameter=query=x</parameter>\n</function>\n</tool_call>\n"
    "<tool_call>{\"name\": \"nope\", \"arguments\": {}}</tool_call>\n"
    "<tool_call>{\"name\": \"search\", \"arguments\": {\"query\": \"cut";

typedef struct trace {
    aw_buf out; /* default allocator: not counted */
    int failed;
} trace;

static int on_event(void *ctx, const aw_x_event *ev) {
    trace *t = ctx;
    int rc = 0;
    if (ev->kind == AW_X_TEXT) {
        rc = aw_buf_append(&t->out, ev->text.ptr, ev->text.len);
    } else if (ev->kind == AW_X_CALL) {
        rc = aw_buf_printf(&t->out, "\n[CALL %.*s %s %s ", (int)ev->call->tool.len, ev->call->tool.ptr,
                           ev->call->source, ev->call->dialect ? ev->call->dialect : "-");
        if (!rc) rc = aw_json_write(ev->call->args, NULL, &t->out, NULL);
        if (!rc) rc = aw_buf_append_str(&t->out, "]\n");
    } else if (ev->kind == AW_X_REJECTED) {
        rc = aw_buf_printf(&t->out, "\n[REJECTED %s %s]\n", aw_reject_reason_name(ev->rejection->reason),
                           ev->rejection->message);
    }
    if (rc) t->failed = 1;
    return 0;
}

/* One read of the reply, everything through the allocator under test. */
static int read_once(const aw_allocator *a, size_t chunk, trace *tr) {
    aw_json_read_options ro = {.alloc = a};
    aw_json_doc *doc = NULL;
    aw_tool_def *defs = NULL;
    size_t n = 0;
    aw_transport *t = NULL;
    aw_extractor *x = NULL;
    aw_error err;
    int rc = aw_json_parse(tools_json, sizeof tools_json - 1, &ro, &doc, &err);
    if (!rc) rc = aw_tools_from_json(aw_json_doc_root(doc), a, &defs, &n, &err);
    if (!rc) {
        aw_transport_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.mode = AW_TRANSPORT_XML;
        cfg.nonce = NONCE;
        cfg.tools = defs;
        cfg.tool_count = n;
        cfg.dialects = AW_DIALECT_AUTO;
        cfg.alloc = a;
        t = aw_transport_new(&cfg, &err);
        if (!t) rc = err.code;
    }
    if (!rc && !(x = aw_extractor_new(t, 1))) rc = AW_ENOMEM;
    size_t len = sizeof reply - 1;
    for (size_t i = 0; !rc && i < len; i += chunk) {
        size_t k = len - i < chunk ? len - i : chunk;
        rc = aw_extractor_feed(x, reply + i, k, on_event, tr, &err);
    }
    if (!rc) rc = aw_extractor_finish(x, "stop", on_event, tr, &err);
    if (!rc) {
        aw_buf fb;
        aw_buf_init(&fb, a);
        rc = aw_extractor_feedback(x, &fb);
        if (!rc && aw_buf_append(&tr->out, fb.data ? fb.data : "", fb.len)) tr->failed = 1;
        aw_buf_free(&fb);
    }
    aw_extractor_free(x);
    aw_transport_free(t);
    aw_free(a, defs);
    aw_json_doc_free(doc);
    return rc;
}

typedef struct expected {
    aw_buf text;
    int have;
} expected;

static int read_reply(const aw_allocator *a, void *ctx) {
    expected *e = ctx;
    static const size_t chunks[] = {sizeof reply - 1, 7};
    trace tr = {{0}, 0};
    aw_buf_init(&tr.out, NULL);
    int rc = 0;
    for (int c = 0; c < 2 && !rc; c++) {
        rc = read_once(a, chunks[c], &tr);
        if (!rc && aw_buf_append_str(&tr.out, "\n=====\n")) tr.failed = 1;
    }
    if (rc) {
        aw_buf_free(&tr.out);
        return rc == AW_ENOMEM ? rc : WRONG_RESULT;
    }
    if (tr.failed) rc = WRONG_RESULT;
    else if (!e->have) {
        e->have = 1;
        rc = aw_buf_append(&e->text, tr.out.data, tr.out.len) ? WRONG_RESULT : 0;
    } else if (tr.out.len != e->text.len || memcmp(tr.out.data, e->text.data, tr.out.len)) {
        fprintf(stderr, "result differs from the reference:\n--- want\n%s\n--- got\n%s\n", e->text.data, tr.out.data);
        rc = WRONG_RESULT;
    }
    aw_buf_free(&tr.out);
    return rc;
}

static void test_every_allocation_fails_in_turn(void **state) {
    (void)state;
    expected e = {{0}, 0};
    aw_buf_init(&e.text, NULL);
    long calls = aw_failalloc_run(read_reply, &e, 0);
    printf("dialects: each of %ld allocations failed in turn\n", calls);
    assert_true(calls > 100);
    /* the reference holds what the reply means */
    const char *want[] = {"[CALL search hermes hermes {\"query\":\"hermes\"}]",
                          "[CALL get_weather qwen3_coder qwen3_coder {\"city\":\"Paris\",\"days\":3}]",
                          "[CALL get_weather qwen3_coder qwen3_coder {\"tags\":[\"a\",\"b\"]}]",
                          "[CALL get_weather glm45 glm45 {\"days\":2}]",
                          "[CALL search granite granite {\"query\":\"granite\"}]",
                          "[CALL search llama3 llama3 {\"query\":\"llama\"}]",
                          "[CALL get_weather llama3 llama3 {\"days\":5}]",
                          "[CALL get_weather pythonic pythonic {\"city\":\"Nice\",\"days\":2}]",
                          "[CALL search mistral mistral {\"query\":\"mistral\"}]",
                          "[CALL search deepseek deepseek {\"query\":\"ds\"}]",
                          "[CALL search kimi_k2 kimi_k2 {\"query\":\"kimi\"}]",
                          "[CALL get_weather minimax minimax {\"days\":7}]",
                          "[CALL search function_calls function_calls {\"query\":\"fc\"}]",
                          "[CALL search harmony harmony {\"query\":\"oss\"}]",
                          "[CALL search fenced fenced {\"query\":\"fenced\"}]",
                          "[CALL search xml - {\"query\":\"xml\"}]",
                          "[REJECTED malformed_call",
                          "[REJECTED tool_not_allowed",
                          "[REJECTED unclosed",
                          "[REJECTED tool_not_allowed Tool `brave_search`",
                          "Write `<tool_call>{}</tool_call>` to call; "};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (!strstr(e.text.data, want[i])) fail_msg("missing %s in:\n%s", want[i], e.text.data);
    }
    aw_buf_free(&e.text);
}

static void test_out_of_memory_for_good(void **state) {
    (void)state;
    expected e = {{0}, 0};
    aw_buf_init(&e.text, NULL);
    assert_int_equal(read_reply(NULL, &e), 0);
    for (long n = 1;; n++) {
        aw_failalloc fa;
        aw_failalloc_init(&fa, n);
        fa.sticky = true;
        int rc = read_reply(aw_failalloc_allocator(&fa), &e);
        if (fa.live != 0) fail_msg("allocation %ld failed for good: %ld block(s) leaked", n, fa.live);
        if (!fa.failed) {
            assert_int_equal(rc, 0);
            break;
        }
        assert_int_equal(rc, AW_ENOMEM);
    }
    aw_buf_free(&e.text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_allocation_fails_in_turn),
        cmocka_unit_test(test_out_of_memory_for_good),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
