/* openai:MODEL against stub_llm on 127.0.0.1: streamed text in any chunks
 * equal to the whole, tool-call fragments joined, usage and stop reasons,
 * the request body (system, history with tool calls and results, tools,
 * ephemeral messages last, temperature, max_tokens) and headers, the
 * history cache equal to a fresh serialization, every fault and its words,
 * a 50 MB reply streamed in bounded memory, the key kept out of errors and
 * traces, stopping and cancelling, allocation failures. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agentwire/json.h"
#include "agentwire/loop.h"
#include "agentwire/provider.h"
#include "failalloc.h"
#include "internal/openai.h"
#include "model_harness.h"
#include "stub_client.h"

#define KEY "sk-test-0123456789-SECRET"

typedef aw_test_fixture fixture;

static aw_provider *make_provider(aw_loop *l, const char *base, bool no_stream, const aw_allocator *a)
{
    return aw_test_provider(l, "openai:gpt-test", base, no_stream, NULL, NULL, a);
}

static void start(fixture *f, const char *script)
{
    aw_test_fixture_start(f, script, "openai:gpt-test", "/v1", "OPENAI_API_KEY", KEY);
}

#define finish aw_test_fixture_finish
#define run aw_test_fixture_run

static aw_model_request simple_request(const char *user)
{
    static aw_chat_msg m;
    memset(&m, 0, sizeof m);
    m.role = AW_CHAT_USER;
    m.content = (aw_text){user, strlen(user)};
    aw_model_request req;
    memset(&req, 0, sizeof req);
    req.ephemeral = &m;
    req.ephemeral_count = 1;
    req.turn = 1;
    return req;
}

/* ---- replies ----------------------------------------------------------------------------- */

#define TEXT "Hello, \\\"world\\\"! Caf\\u00e9 \\u2603 \\ud83d\\ude00 line\\nbreak \\\\ tab\\t end."
#define TEXT_C "Hello, \"world\"! Caf\xC3\xA9 \xE2\x98\x83 \xF0\x9F\x98\x80 line\nbreak \\ tab\t end."

static void test_streamed_text_equals_whole(void **state)
{
    (void)state;
    fixture f;
    start(&f, "{\"text\":\"" TEXT "\",\"chunks\":0,\"piece\":1000}\n"
              "{\"text\":\"" TEXT "\",\"chunks\":\"random\",\"max_chunk\":5,\"piece\":3,\"seed\":11}\n"
              "{\"text\":\"" TEXT "\",\"chunks\":\"random\",\"max_chunk\":2,\"piece\":1,\"seed\":12}\n"
              "{\"text\":\"" TEXT "\"}\n");
    aw_model_request req = simple_request("hi");
    for (int i = 0; i < 3; i++) {
        aw_test_reply r;
        aw_test_reply_init(&r);
        run(&f, NULL, &req, &r);
        assert_int_equal(r.code, 0);
        assert_int_equal(r.dones, 1);
        assert_string_equal(r.text.data, TEXT_C);
        assert_string_equal(r.stop_reason, "stop");
        assert_string_equal(r.model, "gpt-test");
        assert_int_equal(r.http_status, 200);
        aw_test_reply_free(&r);
    }
    /* the same reply asked for whole */
    aw_provider *whole = make_provider(f.loop, f.base, true, NULL);
    aw_test_reply r;
    aw_test_reply_init(&r);
    run(&f, whole, &req, &r);
    assert_int_equal(r.code, 0);
    assert_string_equal(r.text.data, TEXT_C);
    aw_test_reply_free(&r);
    aw_provider_free(whole);
    char *body = aw_stub_log_body(&f.stub, 3, NULL);
    assert_non_null(strstr(body, "\"stream\":false"));
    assert_null(strstr(body, "stream_options"));
    free(body);
    finish(&f);
}

static void test_tool_calls_joined_usage_and_reasoning(void **state)
{
    (void)state;
    fixture f;
    start(&f, "{\"reasoning\":\"Let me think about it.\",\"text\":\"Reading.\",\"piece\":4,\"max_chunk\":7,"
              "\"tool_calls\":[{\"id\":\"call_1\",\"name\":\"read\",\"arguments\":{\"path\":\"a/b.txt\",\"n\":[1,2]}},"
              "{\"id\":\"call_2\",\"name\":\"search\",\"arguments\":\"{\\\"q\\\": \\\"x y\\\"}\"}],"
              "\"usage\":{\"input_tokens\":100,\"output_tokens\":20,\"cache_read_tokens\":30,\"reasoning_tokens\":7},"
              "\"model\":\"gpt-answered\"}\n"
              "{\"text\":\"cut\",\"stop_reason\":\"length\",\"stream\":false,"
              "\"tool_calls\":[{\"id\":\"call_9\",\"name\":\"ls\",\"arguments\":{}}],\"usage\":{\"input_tokens\":1}}\n");
    aw_model_request req = simple_request("go");
    aw_test_reply r;
    aw_test_reply_init(&r);
    run(&f, NULL, &req, &r);
    assert_int_equal(r.code, 0);
    assert_string_equal(r.reasoning.data, "Let me think about it.");
    assert_string_equal(r.text.data, "Reading.");
    assert_string_equal(r.calls.data, "call_1|read|{\"path\":\"a/b.txt\",\"n\":[1,2]}\n"
                                      "call_2|search|{\"q\": \"x y\"}\n");
    assert_string_equal(r.stop_reason, "tool_calls");
    assert_string_equal(r.model, "gpt-answered");
    assert_true(r.has_usage);
    assert_int_equal(r.usage.input_tokens, 100);
    assert_int_equal(r.usage.output_tokens, 20);
    assert_int_equal(r.usage.cache_read_tokens, 30);
    assert_int_equal(r.usage.reasoning_tokens, 7);
    aw_test_reply_free(&r);
    /* a whole reply (the server did not stream) is read the same way */
    aw_test_reply_init(&r);
    run(&f, NULL, &req, &r);
    assert_int_equal(r.code, 0);
    assert_string_equal(r.text.data, "cut");
    assert_string_equal(r.calls.data, "call_9|ls|{}\n");
    assert_string_equal(r.stop_reason, "length");
    assert_int_equal(r.usage.input_tokens, 1);
    aw_test_reply_free(&r);
    finish(&f);
}

/* ---- the request ---------------------------------------------------------------------------- */

static const aw_json_value *at(const aw_json_value *v, size_t i) { return aw_json_at(v, i); }

static void test_request_body_and_headers(void **state)
{
    (void)state;
    fixture f;
    start(&f, "{\"text\":\"ok\"}\n");
    aw_chat *chat = aw_chat_new(NULL);
    aw_test_chat_add(chat, AW_CHAT_USER, "List the files.");
    aw_test_chat_call(chat, "", "call_1", "ls", "{\"dir\":\".\"}");
    aw_test_chat_result(chat, "call_1", "ls", "a.txt\nb.txt", false);
    aw_test_chat_add(chat, AW_CHAT_ASSISTANT, "Two files.");
    aw_chat_msg notice;
    memset(&notice, 0, sizeof notice);
    notice.role = AW_CHAT_USER;
    notice.content = (aw_text){"<XML-NEXT nonce=\"abc123\"/>", 26};
    aw_json_doc *schema = NULL;
    const char *schema_text = "{\"type\":\"object\",\"properties\":{\"dir\":{\"type\":\"string\"}}}";
    assert_int_equal(aw_json_parse(schema_text, strlen(schema_text), NULL, &schema, NULL), 0);
    aw_tool_def tools[2] = {{{"ls", 2}, {"List a directory", 16}, aw_json_doc_root(schema)},
                            {{"now", 3}, {"The time", 8}, NULL}};
    aw_model_request req;
    memset(&req, 0, sizeof req);
    req.system = (aw_text){"You are terse.", 14};
    req.history = chat;
    req.ephemeral = &notice;
    req.ephemeral_count = 1;
    req.tools = tools;
    req.tool_count = 2;
    req.max_tokens = 512;
    req.temperature = 0.25;
    req.has_temperature = true;
    aw_test_fixture_ok(&f, NULL, &req);

    aw_json_doc *logged = aw_stub_log_request(&f.stub, 0);
    const aw_json_value *root = aw_json_doc_root(logged);
    assert_string_equal(aw_test_str(root, "path"), "/v1/chat/completions");
    const aw_json_value *h = aw_json_get(root, "headers");
    assert_string_equal(aw_test_str(h, "authorization"), "Bearer " KEY);
    assert_string_equal(aw_test_str(h, "content-type"), "application/json");
    const aw_json_value *b = aw_json_get(root, "body");
    aw_json_doc *body = NULL;
    assert_int_equal(aw_json_parse(b->u.str.ptr, b->u.str.len, NULL, &body, NULL), 0);
    const aw_json_value *j = aw_json_doc_root(body);
    assert_string_equal(aw_test_str(j, "model"), "gpt-test");
    const aw_json_value *msgs = aw_json_get(j, "messages");
    assert_int_equal(aw_json_count(msgs), 6);
    assert_string_equal(aw_test_str(at(msgs, 0), "role"), "system");
    assert_string_equal(aw_test_str(at(msgs, 0), "content"), "You are terse.");
    assert_string_equal(aw_test_str(at(msgs, 1), "role"), "user");
    assert_string_equal(aw_test_str(at(msgs, 1), "content"), "List the files.");
    const aw_json_value *call_msg = at(msgs, 2);
    assert_string_equal(aw_test_str(call_msg, "role"), "assistant");
    assert_true(aw_json_is_null(aw_json_get(call_msg, "content")));
    const aw_json_value *tc = at(aw_json_get(call_msg, "tool_calls"), 0);
    assert_string_equal(aw_test_str(tc, "id"), "call_1");
    assert_string_equal(aw_test_str(tc, "type"), "function");
    assert_string_equal(aw_test_str(aw_json_get(tc, "function"), "name"), "ls");
    assert_string_equal(aw_test_str(aw_json_get(tc, "function"), "arguments"), "{\"dir\":\".\"}");
    assert_string_equal(aw_test_str(at(msgs, 3), "role"), "tool");
    assert_string_equal(aw_test_str(at(msgs, 3), "tool_call_id"), "call_1");
    assert_string_equal(aw_test_str(at(msgs, 3), "content"), "a.txt\nb.txt");
    assert_string_equal(aw_test_str(at(msgs, 4), "content"), "Two files.");
    assert_string_equal(aw_test_str(at(msgs, 5), "content"), "<XML-NEXT nonce=\"abc123\"/>"); /* ephemeral last */
    const aw_json_value *t0 = at(aw_json_get(j, "tools"), 0), *t1 = at(aw_json_get(j, "tools"), 1);
    assert_string_equal(aw_test_str(t0, "type"), "function");
    assert_string_equal(aw_test_str(aw_json_get(t0, "function"), "name"), "ls");
    assert_string_equal(aw_test_str(aw_json_get(t0, "function"), "description"), "List a directory");
    assert_true(aw_json_equal(aw_json_get(aw_json_get(t0, "function"), "parameters"), aw_json_doc_root(schema)));
    assert_string_equal(aw_test_str(aw_json_get(aw_json_get(t1, "function"), "parameters"), "type"), "object");
    assert_true(aw_json_get(j, "stream")->u.b);
    assert_true(aw_json_get(aw_json_get(j, "stream_options"), "include_usage")->u.b);
    assert_int_equal((int)aw_json_get(j, "max_tokens")->u.num.d, 512);
    assert_true(aw_json_get(j, "temperature")->u.num.d == 0.25);
    aw_json_doc_free(body);
    aw_json_doc_free(logged);
    aw_json_doc_free(schema);
    aw_chat_free(chat);
    finish(&f);
}

/* The body logged for req, sent by the fixture's provider or a fresh one. */
static char *cached_body(fixture *f, const aw_model_request *req, size_t i) { return aw_test_fixture_body(f, NULL, false, req, i); }
static char *fresh_body(fixture *f, const aw_model_request *req, size_t i) { return aw_test_fixture_body(f, NULL, true, req, i); }

static void test_history_cache_equals_fresh(void **state)
{
    (void)state;
    fixture f;
    start(&f, "{\"text\":\"ok\",\"times\":0}\n");
    aw_chat *chat = aw_chat_new(NULL);
    aw_test_chat_add(chat, AW_CHAT_USER, "first \xE2\x98\x83");
    aw_test_chat_call(chat, "calling", "c1", "read", "{\"p\":1}");
    aw_model_request req;
    memset(&req, 0, sizeof req);
    req.system = (aw_text){"sys", 3};
    req.history = chat;
    aw_chat_msg eph;
    memset(&eph, 0, sizeof eph);
    eph.role = AW_CHAT_USER;
    eph.content = (aw_text){"notice 1", 8};
    req.ephemeral = &eph;
    req.ephemeral_count = 1;
    size_t n = 0;
    free(cached_body(&f, &req, n++));
    /* appended since: only these are written; the whole equals a fresh one */
    aw_test_chat_result(chat, "c1", "read", "contents \"quoted\"", false);
    aw_test_chat_add(chat, AW_CHAT_ASSISTANT, "done");
    eph.content = (aw_text){"notice 2", 8};
    char *a = cached_body(&f, &req, n++);
    aw_test_same_and_free(a, fresh_body(&f, &req, n++));
    /* no system prompt: the first cached message loses its comma */
    req.system = (aw_text){"", 0};
    a = cached_body(&f, &req, n++);
    aw_test_same_and_free(a, fresh_body(&f, &req, n++));
    /* another chat of the same length, then a shorter one: started over */
    aw_chat *other = aw_chat_new(NULL);
    for (int i = 0; i < 4; i++)
        aw_test_chat_add(other, i % 2 ? AW_CHAT_ASSISTANT : AW_CHAT_USER, i % 2 ? "other reply" : "other ask");
    req.history = other;
    a = cached_body(&f, &req, n++);
    aw_test_same_and_free(a, fresh_body(&f, &req, n++));
    assert_non_null(strstr(a = aw_stub_log_body(&f.stub, n - 1, NULL), "other ask"));
    assert_null(strstr(a, "first"));
    free(a);
    aw_chat *shorter = aw_chat_new(NULL);
    aw_test_chat_add(shorter, AW_CHAT_USER, "only one");
    req.history = shorter;
    a = cached_body(&f, &req, n++);
    aw_test_same_and_free(a, fresh_body(&f, &req, n++));
    aw_chat_free(chat);
    aw_chat_free(other);
    aw_chat_free(shorter);
    finish(&f);
}

static void test_thread_cache_equals_fresh(void **state)
{
    (void)state;
    fixture f;
    start(&f, "{\"text\":\"ok\",\"times\":0}\n");
    /* the thread grows by whole events and, once, stops inside a character */
    const char thread[] = "<thread>\n  <message role=\"user\">caf\xC3\xA9 \"q\" &amp; \xF0\x9F\x98\x80</message>\n"
                          "  <tool_call name=\"ls\">{\"a\":1}</tool_call>\n  <tool_result>\xE2\x98\x83 ok</tool_result>\n";
    size_t cuts[] = {9, 40, 42, 60, sizeof thread - 1};
    aw_model_request req;
    memset(&req, 0, sizeof req);
    req.system = (aw_text){"sys", 3};
    req.thread_tail = (aw_text){"</thread>\nBased on the thread above, my next step is", 50};
    size_t n = 0;
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        req.thread_stable = (aw_text){thread, cuts[i]};
        char *a = cached_body(&f, &req, n++);
        aw_test_same_and_free(a, fresh_body(&f, &req, n++));
    }
    /* a thread that is not the old one grown: escaped afresh */
    req.thread_stable = (aw_text){"<thread>\n  <other/>\n", 20};
    char *a = cached_body(&f, &req, n++);
    aw_test_same_and_free(a, fresh_body(&f, &req, n++));
    finish(&f);
}

/* ---- faults ---------------------------------------------------------------------------------- */

static void check_faults(const aw_test_fault *cases, size_t n)
{
    for (size_t i = 0; i < n; i++)
        aw_test_fault_check(&cases[i], "openai:gpt-test", "/v1", "OPENAI_API_KEY", KEY);
}

static void test_rate_limit_and_server_errors(void **state)
{
    (void)state;
    static const aw_test_fault cases[] = {
        {.script = "{\"status\":429,\"headers\":{\"Retry-After\":\"3\"},\"error\":\"Rate limit reached for gpt-test\"}\n",
         .code = AW_EIO, .error = "openai: 429 Too Many Requests: Rate limit reached for gpt-test", .retryable = true,
         .check_retry_after = true, .retry_after_ms = 3000, .http_status = 429},
        {.script = "{\"status\":500,\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\"}}\n",
         .code = AW_EIO, .error = "openai: 500 Internal Server Error: The server had an error", .retryable = true,
         .check_retry_after = true, .retry_after_ms = -1, .http_status = 500},
        /* a body that is not the API's error document still says something */
        {.script = "{\"status\":502,\"body\":\"<html>\\n<body>Bad   gateway</body></html>\",\"content_type\":\"text/html\"}\n",
         .code = AW_EIO, .error = "openai: 502 Bad Gateway: <html> <body>Bad gateway</body></html>", .retryable = true},
        {.script = "{\"status\":400,\"error\":{\"message\":\"Unknown parameter\",\"type\":\"invalid_request_error\"}}\n",
         .code = AW_EIO, .error = "openai: 400 Bad Request: Unknown parameter", .retryable = false, .http_status = 400},
        /* the server quotes the key back: it must not reach the message */
        {.script = "{\"status\":401,\"error\":{\"message\":\"Incorrect API key provided: " KEY
                   ".\",\"type\":\"invalid_request_error\"}}\n",
         .code = AW_EIO, .error = "openai: 401 Unauthorized: Incorrect API key provided: [redacted].",
         .retryable = false, .http_status = 401},
    };
    check_faults(cases, sizeof cases / sizeof *cases);
}

static void test_broken_streams(void **state)
{
    (void)state;
    static const aw_test_fault cases[] = {
        /* what came before the reset was passed on */
        {.script = "{\"text\":\"0123456789abcdefghij\",\"piece\":2,\"fault\":\"reset\",\"after_events\":4}\n",
         .code = AW_EIO, .has = {"openai: the connection to 127.0.0.1:", "failed while receiving the reply: connection reset by peer"},
         .retryable = true, .text = "012345"},
        {.script = "{\"text\":\"abc\",\"fault\":\"malformed\",\"after_events\":1}\n", .code = AW_ESYNTAX,
         .has = {"openai: bad stream event at byte ", ": not JSON: "}, .retryable = false},
        {.script = "{\"text\":\"abcdefgh\",\"piece\":1,\"fault\":\"truncate\",\"after_events\":3}\n", .code = AW_EIO,
         .error = "openai: the stream ended before the reply did (no finish_reason, no [DONE])", .retryable = true,
         .text = "ab"},
        {.script = "{\"text\":\"abcdefgh\",\"fault\":\"stall\",\"stall_ms\":30000}\n", .idle_ms = 300, .code = AW_EIO,
         .error = "openai: timed out after 300 ms waiting for the next piece of the reply", .retryable = true},
        {.script = "{\"body\":\"data: {\\\"error\\\":{\\\"message\\\":\\\"overloaded\\\",\\\"type\\\":\\\"server_error\\\"}}\\n\\n\","
                   "\"stream\":true}\n",
         .code = AW_EIO, .error = "openai: the server reported an error server_error: overloaded", .retryable = true},
        {.script = "{\"body\":\"data: {\\\"choices\\\":[]}\\n\\nwhat: is this\\n\\n\",\"stream\":true}\n",
         .code = AW_ESYNTAX, .error = "openai: bad stream event at byte 22: unknown field \"what\"", .retryable = false},
    };
    check_faults(cases, sizeof cases / sizeof *cases);
}

static void test_connection_refused_is_retryable(void **state)
{
    (void)state;
    setenv("OPENAI_API_KEY", KEY, 1);
    aw_stub s;
    aw_stub_start(&s, "");
    char base[128];
    snprintf(base, sizeof base, "%s/v1", s.base_url);
    aw_stub_wait(&s, 10000); /* an empty script: gone at once, the port closed */
    aw_stub_stop(&s);
    aw_loop *l = aw_loop_new(NULL, NULL);
    aw_provider *p = make_provider(l, base, false, NULL);
    aw_model_request req = simple_request("hi");
    aw_test_reply r;
    aw_test_reply_init(&r);
    aw_error err;
    assert_int_equal(aw_test_model_run(l, p, &req, &r, &err), 0);
    assert_int_equal(r.code, AW_EIO);
    assert_true(r.retryable);
    assert_non_null(strstr(r.error, "openai: could not connect to 127.0.0.1:"));
    assert_non_null(strstr(r.error, ": connection refused"));
    aw_test_reply_free(&r);
    aw_provider_free(p);
    aw_loop_free(l);
}

static void test_big_reply_streamed_in_bounded_memory(void **state)
{
    (void)state;
    setenv("OPENAI_API_KEY", KEY, 1);
    fixture f;
    aw_stub_start(&f.stub, "{\"big_mb\":50}\n");
    snprintf(f.base, sizeof f.base, "%s/v1", f.stub.base_url);
    aw_test_counting counting;
    const aw_allocator *a = aw_test_counting_init(&counting);
    f.loop = aw_loop_new(a, NULL);
    f.p = make_provider(f.loop, f.base, false, a);
    aw_model_request req = simple_request("a lot, please");
    aw_test_reply r;
    aw_test_reply_init(&r);
    r.count_only = true;
    run(&f, NULL, &req, &r);
    assert_int_equal(r.code, 0);
    assert_int_equal(r.text_bytes, (size_t)50 << 20);
    uint64_t want = AW_TEST_FNV_START;
    const char line[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+\n";
    for (size_t i = 0; i < ((size_t)50 << 20) / 64; i++)
        want = aw_test_fnv(want, line, 64);
    assert_true(r.text_hash == want);
    /* the reply went through, not into memory */
    if (counting.peak > ((size_t)8 << 20))
        fail_msg("peak %zu bytes held for a 50 MB reply", counting.peak);
    aw_test_reply_free(&r);
    finish(&f);
    assert_int_equal(counting.live, 0);
}

/* ---- keys --------------------------------------------------------------------------------------- */

static void test_trace_redacts_the_key(void **state)
{
    (void)state;
    setenv("OPENAI_API_KEY", KEY, 1);
    fixture f;
    /* the reply holds the key too, arriving in pieces of 7 bytes */
    aw_stub_start(&f.stub, "{\"text\":\"echo " KEY " back\",\"piece\":1000,\"chunks\":7,\"chunk_delay_ms\":2}\n");
    snprintf(f.base, sizeof f.base, "%s/v1", f.stub.base_url);
    f.loop = aw_loop_new(NULL, NULL);
    aw_test_trace trace;
    aw_test_trace_init(&trace);
    aw_provider_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.spec = "openai:gpt-test";
    cfg.base_url = f.base;
    cfg.trace = aw_test_trace_fn;
    cfg.trace_ctx = &trace;
    f.p = aw_provider_new(f.loop, &cfg, NULL);
    /* and the conversation mentions it */
    aw_model_request req = simple_request("my key is " KEY);
    aw_test_reply r;
    aw_test_reply_init(&r);
    run(&f, NULL, &req, &r);
    assert_int_equal(r.code, 0);
    aw_buf_putc(&trace.text, 0);
    assert_null(strstr(trace.text.data, KEY));
    assert_non_null(strstr(trace.text.data, "== request headers\nPOST "));
    assert_non_null(strstr(trace.text.data, "Authorization: [redacted]"));
    assert_non_null(strstr(trace.text.data, "== request body\n{\"model\":\"gpt-test\""));
    assert_non_null(strstr(trace.text.data, "my key is [redacted]"));
    assert_non_null(strstr(trace.text.data, "echo [redacted] back"));
    assert_non_null(strstr(trace.text.data, "== response headers\nHTTP 200"));
    assert_non_null(strstr(trace.text.data, "== response body\n"));
    assert_non_null(strstr(trace.text.data, "data: [DONE]"));
    /* the key really went, as a header */
    aw_json_doc *logged = aw_stub_log_request(&f.stub, 0);
    assert_string_equal(aw_test_str(aw_json_get(aw_json_doc_root(logged), "headers"), "authorization"), "Bearer " KEY);
    aw_json_doc_free(logged);
    aw_test_reply_free(&r);
    aw_buf_free(&trace.text);
    finish(&f);
}

static void test_key_and_base_url_from_the_environment(void **state)
{
    (void)state;
    aw_loop *l = aw_loop_new(NULL, NULL);
    aw_provider_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.spec = "openai:gpt-test";
    aw_error err;
    unsetenv("OPENAI_API_KEY");
    unsetenv("OPENAI_BASE_URL");
    assert_null(aw_provider_new(l, &cfg, &err));
    assert_string_equal(err.message, "openai: OPENAI_API_KEY is not set");
    cfg.api_key_env = "AW_TEST_OTHER_KEY";
    unsetenv("AW_TEST_OTHER_KEY");
    assert_null(aw_provider_new(l, &cfg, &err));
    assert_string_equal(err.message, "openai: AW_TEST_OTHER_KEY is not set");
    setenv("AW_TEST_OTHER_KEY", "sk-abc\r\nX-Injected: yes", 1);
    assert_null(aw_provider_new(l, &cfg, &err));
    assert_string_equal(err.message, "openai: AW_TEST_OTHER_KEY holds a control character");
    unsetenv("AW_TEST_OTHER_KEY");

    /* a server on this machine needs no key; OPENAI_BASE_URL names it */
    aw_stub s;
    aw_stub_start(&s, "{\"text\":\"local\"}\n{\"text\":\"keyed\"}\n");
    char base[128];
    snprintf(base, sizeof base, "%s/v1/", s.base_url); /* a trailing slash is fine */
    setenv("OPENAI_BASE_URL", base, 1);
    cfg.api_key_env = NULL;
    aw_provider *p = aw_provider_new(l, &cfg, &err);
    assert_non_null(p);
    aw_model_request req = simple_request("hi");
    aw_test_reply r;
    aw_test_reply_init(&r);
    assert_int_equal(aw_test_model_run(l, p, &req, &r, &err), 0);
    assert_string_equal(r.text.data, "local");
    aw_test_reply_free(&r);
    aw_provider_free(p);
    /* the key from another variable */
    setenv("AW_TEST_OTHER_KEY", "sk-other", 1);
    cfg.api_key_env = "AW_TEST_OTHER_KEY";
    p = aw_provider_new(l, &cfg, &err);
    aw_test_reply_init(&r);
    assert_int_equal(aw_test_model_run(l, p, &req, &r, &err), 0);
    assert_string_equal(r.text.data, "keyed");
    aw_test_reply_free(&r);
    aw_provider_free(p);
    aw_stub_wait(&s, 10000);
    aw_json_doc *first = aw_stub_log_request(&s, 0), *second = aw_stub_log_request(&s, 1);
    assert_string_equal(aw_test_str(aw_json_doc_root(first), "path"), "/v1/chat/completions");
    assert_null(aw_json_get(aw_json_get(aw_json_doc_root(first), "headers"), "authorization"));
    assert_string_equal(aw_test_str(aw_json_get(aw_json_doc_root(second), "headers"), "authorization"), "Bearer sk-other");
    aw_json_doc_free(first);
    aw_json_doc_free(second);
    aw_stub_stop(&s);
    unsetenv("OPENAI_BASE_URL");
    unsetenv("AW_TEST_OTHER_KEY");
    aw_loop_free(l);
}

/* ---- stopping and cancelling ----------------------------------------------------------------- */

typedef struct canceller {
    aw_model_call *call;
    aw_test_reply *reply;
} canceller;

static void cancel_later(void *ctx)
{
    canceller *c = ctx;
    c->reply->stopped = true; /* from here on, nothing may arrive */
    aw_model_call_cancel(c->call);
}

static void test_stop_and_cancel_mid_stream(void **state)
{
    (void)state;
    fixture f;
    start(&f, "{\"text\":\"0123456789abcdefghijklmnopqrstuvwxyz\",\"piece\":2,\"chunks\":64,\"chunk_delay_ms\":15,"
              "\"tool_calls\":[{\"id\":\"x\",\"name\":\"never\",\"arguments\":{}}]}\n"
              "{\"text\":\"0123456789abcdefghijklmnopqrstuvwxyz\",\"piece\":2,\"chunks\":64,\"chunk_delay_ms\":15,"
              "\"tool_calls\":[{\"id\":\"x\",\"name\":\"never\",\"arguments\":{}}],\"times\":2}\n");
    aw_model_request req = simple_request("hi");
    /* the caller's on_text asks to stop */
    aw_test_reply r;
    aw_test_reply_init(&r);
    r.stop_after_text = 4;
    run(&f, NULL, &req, &r);
    assert_true(r.stopped);
    assert_int_equal(r.dones, 0);
    assert_int_equal(r.after_stop, 0);
    assert_int_equal(r.calls.len, 0);
    aw_test_reply_free(&r);
    /* cancelled from inside on_text */
    aw_test_reply_init(&r);
    r.stop_after_text = 4;
    r.cancel_instead = true;
    run(&f, NULL, &req, &r);
    assert_true(r.stopped);
    assert_int_equal(r.dones, 0);
    assert_int_equal(r.after_stop, 0);
    assert_int_equal(r.calls.len, 0);
    aw_test_reply_free(&r);
    /* cancelled from outside, while it streams */
    aw_test_reply_init(&r);
    canceller c = {NULL, &r};
    aw_error err;
    assert_int_equal(aw_provider_send(f.p, &req, aw_test_reply_fns(), &r, &c.call, &err), 0);
    aw_timer *t = aw_loop_timer(f.loop, 100, cancel_later, &c);
    for (int i = 0; i < 100 && !r.stopped; i++)
        aw_loop_once(f.loop, 1000);
    for (int i = 0; i < 30; i++)
        aw_loop_once(f.loop, 10);
    assert_true(r.stopped);
    assert_int_equal(r.dones, 0);
    assert_int_equal(r.after_stop, 0);
    aw_timer_free(t);
    aw_test_reply_free(&r);
    finish(&f);
}

/* Two requests at once on one provider: the second cannot use the cache
 * the first is still sending from, and writes its own copy. */
static void test_two_requests_at_once(void **state)
{
    (void)state;
    fixture f;
    start(&f, "{\"text\":\"first\",\"delay_ms\":300}\n{\"text\":\"second\"}\n{\"text\":\"third\"}\n");
    aw_chat *chat = aw_chat_new(NULL);
    aw_test_chat_add(chat, AW_CHAT_USER, "shared history");
    aw_model_request req;
    memset(&req, 0, sizeof req);
    req.history = chat;
    aw_test_reply a, b;
    aw_test_reply_init(&a);
    aw_test_reply_init(&b);
    aw_model_call *ca, *cb;
    aw_error err;
    assert_int_equal(aw_provider_send(f.p, &req, aw_test_reply_fns(), &a, &ca, &err), 0);
    aw_test_chat_add(chat, AW_CHAT_ASSISTANT, "grown meanwhile");
    assert_int_equal(aw_provider_send(f.p, &req, aw_test_reply_fns(), &b, &cb, &err), 0);
    while (!a.dones || !b.dones)
        assert_int_equal(aw_loop_once(f.loop, 1000), 0);
    assert_int_equal(a.code, 0);
    assert_int_equal(b.code, 0);
    char *one = aw_stub_log_body(&f.stub, 0, NULL), *two = aw_stub_log_body(&f.stub, 1, NULL);
    /* whichever arrived first, one holds the history before, one after */
    char *longer = strstr(one, "grown meanwhile") ? one : two, *shorter = longer == one ? two : one;
    assert_non_null(strstr(longer, "grown meanwhile"));
    assert_null(strstr(shorter, "grown meanwhile"));
    assert_non_null(strstr(shorter, "shared history"));
    /* and the cache serves a third request as a fresh provider would */
    aw_test_reply_free(&a);
    aw_test_reply_init(&a);
    run(&f, NULL, &req, &a);
    char *three = aw_stub_log_body(&f.stub, 2, NULL);
    assert_string_equal(three, longer);
    free(one);
    free(two);
    free(three);
    aw_test_reply_free(&a);
    aw_test_reply_free(&b);
    aw_chat_free(chat);
    finish(&f);
}

/* Freeing the provider ends the calls it still runs, reporting nothing. */
static void test_free_provider_with_a_call_running(void **state)
{
    (void)state;
    fixture f;
    start(&f, "{\"text\":\"slow\",\"delay_ms\":20000}\n");
    aw_model_request req = simple_request("hi");
    aw_test_reply r;
    aw_test_reply_init(&r);
    aw_model_call *call;
    aw_error err;
    assert_int_equal(aw_provider_send(f.p, &req, aw_test_reply_fns(), &r, &call, &err), 0);
    for (int i = 0; i < 5; i++)
        aw_loop_once(f.loop, 20);
    aw_provider_free(f.p);
    f.p = NULL;
    for (int i = 0; i < 5; i++)
        aw_loop_once(f.loop, 20);
    assert_int_equal(r.dones, 0);
    aw_test_reply_free(&r);
    aw_loop_free(f.loop);
    aw_stub_stop(&f.stub);
}

/* ---- allocation failures ------------------------------------------------------------------------ */

static aw_chat *sweep_chat;

static int build_run(const aw_allocator *a, void *ctx)
{
    bool cached = ctx != NULL;
    aw_wire_cache cache;
    aw_wire_cache_init(&cache, a);
    aw_model_request req;
    memset(&req, 0, sizeof req);
    req.system = (aw_text){"sys", 3};
    req.history = sweep_chat;
    req.thread_stable = (aw_text){"<thread>\xC3", 9};
    req.thread_tail = (aw_text){"\xA9</thread>", 10};
    aw_tool_def tool = {{"t", 1}, {"d", 1}, NULL};
    req.tools = &tool;
    req.tool_count = 1;
    req.has_temperature = true;
    req.temperature = 1;
    int rc = 0;
    for (int round = 0; round < 2 && rc == 0; round++) {
        aw_body body;
        aw_body_init(&body, a);
        rc = aw_wire_request(aw_openai_request, cached ? &cache : NULL, "m", &req, true, &body, a);
        aw_buf joined;
        aw_buf_init(&joined, a);
        if (rc == 0 && (rc = aw_body_join(&body, &joined)) == 0 &&
            !strstr(joined.data, "\"content\":\"<thread>\xC3\xA9</thread>\""))
            rc = AW_EINVAL;
        aw_buf_free(&joined);
        aw_body_release(&body);
    }
    aw_wire_cache_release(&cache);
    return rc;
}

static int read_run(const aw_allocator *a, void *ctx)
{
    aw_reply_info info;
    int rc = aw_test_read_reply(&aw_openai_reader_ops, a, ctx, 7, &info);
    return rc == 0 && strcmp(info.stop_reason, "tool_calls") != 0 ? AW_EINVAL : rc;
}

static const char *sweep_base;

/* Usage counts beyond sense (1e400 reads as infinity) are held at the most
 * one reply may count, negative ones at zero: converting them was undefined
 * behaviour. */
static void test_absurd_usage_counts_are_held(void **state)
{
    (void)state;
    const char *stream =
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}],"
        "\"usage\":{\"prompt_tokens\":1e400,\"completion_tokens\":-1e400,"
        "\"prompt_tokens_details\":{\"cached_tokens\":3.5},\"completion_tokens_details\":{\"reasoning_tokens\":-2}}}\n\n"
        "data: [DONE]\n\n";
    aw_reply_info info;
    assert_int_equal(aw_test_read_reply(&aw_openai_reader_ops, NULL, stream, 5, &info), 0);
    assert_true(info.has_usage);
    assert_true(info.usage.input_tokens == (int64_t)1 << 40);
    assert_int_equal(info.usage.output_tokens, 0);
    assert_int_equal(info.usage.cache_read_tokens, 3);
    assert_int_equal(info.usage.reasoning_tokens, 0);
}

static int provider_run(const aw_allocator *a, void *ctx)
{
    (void)ctx;
    aw_loop *l = aw_loop_new(a, NULL);
    if (!l)
        return AW_ENOMEM;
    aw_provider_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.spec = "openai:gpt-test";
    cfg.base_url = sweep_base;
    cfg.alloc = a;
    aw_error err;
    aw_provider *p = aw_provider_new(l, &cfg, &err);
    if (!p) {
        aw_loop_free(l);
        return err.code;
    }
    aw_model_request req = simple_request("hi");
    aw_test_reply r;
    aw_test_reply_init(&r);
    int rc = aw_test_model_run(l, p, &req, &r, &err);
    if (rc == 0)
        rc = r.dones == 1 ? r.code : AW_EINVAL;
    if (rc == 0 && (strcmp(r.text.data, "swept") != 0 || strcmp(r.calls.data, "k|f|{\"a\":1}\n") != 0))
        rc = AW_EINVAL;
    aw_test_reply_free(&r);
    aw_provider_free(p);
    aw_loop_free(l);
    return rc;
}

/* The second request writes only what was appended: a byte changed in
 * the cached form of the first messages shows up in it. */
static void test_cache_writes_only_new_messages(void **state)
{
    (void)state;
    aw_chat *chat = aw_chat_new(NULL);
    aw_test_chat_add(chat, AW_CHAT_USER, "alpha");
    aw_model_request req;
    memset(&req, 0, sizeof req);
    req.history = chat;
    req.thread_stable = (aw_text){"<thread>beta", 12};
    aw_wire_cache cache;
    aw_wire_cache_init(&cache, NULL);
    aw_body body;
    aw_body_init(&body, NULL);
    assert_int_equal(aw_openai_request(&cache, "m", &req, true, &body, NULL), 0);
    aw_body_release(&body);
    assert_int_equal(cache.count, 1);
    char *alpha = memmem(cache.history.data, cache.history.len, "alpha", 5);
    char *beta = memmem(cache.thread.escaped.data, cache.thread.escaped.len, "beta", 4);
    assert_non_null(alpha);
    assert_non_null(beta);
    alpha[0] = 'A';
    beta[0] = 'B';
    aw_test_chat_add(chat, AW_CHAT_ASSISTANT, "gamma");
    req.thread_stable = (aw_text){"<thread>beta delta", 18};
    aw_body_init(&body, NULL);
    assert_int_equal(aw_openai_request(&cache, "m", &req, true, &body, NULL), 0);
    aw_buf joined;
    aw_buf_init(&joined, NULL);
    assert_int_equal(aw_body_join(&body, &joined), 0);
    assert_non_null(strstr(joined.data, "\"content\":\"Alpha\"}"));
    assert_non_null(strstr(joined.data, "\"content\":\"gamma\"}"));
    assert_non_null(strstr(joined.data, "<thread>Beta delta"));
    assert_int_equal(cache.count, 2);
    aw_buf_free(&joined);
    aw_body_release(&body);
    aw_wire_cache_release(&cache);
    aw_chat_free(chat);
}

static void test_allocation_failures(void **state)
{
    (void)state;
    sweep_chat = aw_chat_new(NULL);
    aw_test_chat_add(sweep_chat, AW_CHAT_USER, "u");
    aw_test_chat_call(sweep_chat, "", "c", "t", "{}");
    aw_test_chat_result(sweep_chat, "c", "t", "r", true);
    assert_true(aw_failalloc_run(build_run, (void *)1, 0) > 0);
    assert_true(aw_failalloc_run(build_run, NULL, 0) > 0);
    aw_chat_free(sweep_chat);
    const char *stream =
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\",\"tool_calls\":[{\"index\":0,\"id\":\"a\","
        "\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"x\\\"\"}}]}}]}\n\n"
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\":1}\"}}]},"
        "\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":1}}\n\ndata: [DONE]\n\n";
    assert_true(aw_failalloc_run(read_run, (void *)stream, 0) > 0);

    setenv("OPENAI_API_KEY", KEY, 1);
    aw_stub s;
    aw_stub_start(&s, "{\"text\":\"swept\",\"tool_calls\":[{\"id\":\"k\",\"name\":\"f\",\"arguments\":{\"a\":1}}],"
                      "\"times\":0}\n");
    char base[128];
    snprintf(base, sizeof base, "%s/v1", s.base_url);
    sweep_base = base;
    assert_true(aw_failalloc_run(provider_run, NULL, 0) > 10);
    aw_stub_stop(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_streamed_text_equals_whole),
        cmocka_unit_test(test_tool_calls_joined_usage_and_reasoning),
        cmocka_unit_test(test_absurd_usage_counts_are_held),
        cmocka_unit_test(test_request_body_and_headers),
        cmocka_unit_test(test_history_cache_equals_fresh),
        cmocka_unit_test(test_thread_cache_equals_fresh),
        cmocka_unit_test(test_rate_limit_and_server_errors),
        cmocka_unit_test(test_broken_streams),
        cmocka_unit_test(test_connection_refused_is_retryable),
        cmocka_unit_test(test_big_reply_streamed_in_bounded_memory),
        cmocka_unit_test(test_trace_redacts_the_key),
        cmocka_unit_test(test_key_and_base_url_from_the_environment),
        cmocka_unit_test(test_stop_and_cancel_mid_stream),
        cmocka_unit_test(test_two_requests_at_once),
        cmocka_unit_test(test_free_provider_with_a_call_running),
        cmocka_unit_test(test_cache_writes_only_new_messages),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
