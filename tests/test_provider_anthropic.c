/* anthropic:MODEL against stub_llm on 127.0.0.1: streamed text in any
 * chunks equal to the whole, thinking as reasoning, tool_use input joined,
 * usage with the cache counts, stop reasons; the request (top-level system,
 * max_tokens, tools, the history converted: tool_use from the arguments,
 * repaired or wrapped, tool results merged into one user message with
 * is_error, the notice joined to it, cache_control at the history's end),
 * headers, the cache equal to a fresh serialization, errors and their
 * words, the key kept out of traces, allocation failures. */
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
#include "internal/anthropic.h"
#include "model_harness.h"
#include "stub_client.h"

#define KEY "sk-ant-test-0123456789-SECRET"

typedef aw_test_fixture fixture;

static aw_provider *make_provider(aw_loop *l, const char *base, bool no_stream, aw_trace_fn trace, void *trace_ctx)
{
    return aw_test_provider(l, "anthropic:claude-test", base, no_stream, trace, trace_ctx, NULL);
}

static void start(fixture *f, const char *script)
{
    aw_test_fixture_start(f, script, "anthropic:claude-test", "", "ANTHROPIC_API_KEY", KEY);
}

#define finish aw_test_fixture_finish
#define run aw_test_fixture_run

static aw_chat_msg user_msg(const char *text)
{
    aw_chat_msg m;
    memset(&m, 0, sizeof m);
    m.role = AW_CHAT_USER;
    m.content = (aw_text){text, strlen(text)};
    return m;
}

/* ---- replies ------------------------------------------------------------------------------- */

#define REPLY_TEXT "Fine, \\\"quoted\\\" \\u00e9\\u2603\\ud83d\\ude00\\nnext line."
#define REPLY_TEXT_C "Fine, \"quoted\" \xC3\xA9\xE2\x98\x83\xF0\x9F\x98\x80\nnext line."

static void test_stream_thinking_tools_usage(void **state)
{
    (void)state;
    fixture f;
    const char *line = "\"reasoning\":\"Consider the files.\",\"text\":\"" REPLY_TEXT "\","
                       "\"tool_calls\":[{\"id\":\"toolu_1\",\"name\":\"read\",\"arguments\":{\"path\":\"a b\",\"lines\":[1,2]}},"
                       "{\"id\":\"toolu_2\",\"name\":\"now\",\"arguments\":{}}],"
                       "\"usage\":{\"input_tokens\":50,\"output_tokens\":12,\"cache_read_tokens\":40,\"cache_write_tokens\":9},"
                       "\"model\":\"claude-answered\"";
    char script[2048];
    snprintf(script, sizeof script,
             "{%s,\"chunks\":0,\"piece\":1000}\n{%s,\"max_chunk\":4,\"piece\":3,\"seed\":5}\n{%s,\"piece\":1,\"max_chunk\":9}\n{%s}\n",
             line, line, line, line);
    start(&f, script);
    aw_chat_msg m = user_msg("go");
    aw_model_request req;
    memset(&req, 0, sizeof req);
    req.ephemeral = &m;
    req.ephemeral_count = 1;
    aw_provider *whole = make_provider(f.loop, f.stub.base_url, true, NULL, NULL);
    for (int i = 0; i < 4; i++) {
        aw_test_reply r;
        aw_test_reply_init(&r);
        run(&f, i == 3 ? whole : NULL, &req, &r);
        assert_int_equal(r.code, 0);
        assert_string_equal(r.text.data, REPLY_TEXT_C);
        assert_string_equal(r.reasoning.data, "Consider the files.");
        assert_string_equal(r.calls.data, "toolu_1|read|{\"path\":\"a b\",\"lines\":[1,2]}\ntoolu_2|now|{}\n");
        assert_string_equal(r.stop_reason, "tool_use");
        assert_string_equal(r.model, "claude-answered");
        assert_true(r.has_usage);
        assert_int_equal(r.usage.input_tokens, 50);
        assert_int_equal(r.usage.output_tokens, 12);
        assert_int_equal(r.usage.cache_read_tokens, 40);
        assert_int_equal(r.usage.cache_write_tokens, 9);
        aw_test_reply_free(&r);
    }
    aw_provider_free(whole);
    char *body = aw_stub_log_body(&f.stub, 3, NULL);
    assert_non_null(strstr(body, "\"stream\":false"));
    free(body);
    finish(&f);
}

/* ---- the request ------------------------------------------------------------------------------- */

static const aw_json_value *msg_at(const aw_json_value *msgs, size_t i) { return aw_json_at(msgs, i); }
static const aw_json_value *block(const aw_json_value *msg, size_t i)
{
    return aw_json_at(aw_json_get(msg, "content"), i);
}

static void test_request_body_and_headers(void **state)
{
    (void)state;
    fixture f;
    start(&f, "{\"text\":\"ok\"}\n{\"text\":\"ok\"}\n");
    aw_chat *chat = aw_chat_new(NULL);
    aw_test_chat_add(chat, AW_CHAT_USER, "List and read.");
    aw_test_chat_call(chat, "Listing.", "toolu_1", "ls", "{\"dir\": \".\"}");
    aw_test_chat_call(chat, "", "toolu_2", "read", "{'path': 'a.txt',}");  /* repaired */
    aw_test_chat_call(chat, "", "toolu_3", "sum", "[1, 2]");                /* JSON, not an object */
    aw_test_chat_call(chat, "", "toolu_4", "say", "");                      /* nothing */
    aw_test_chat_result(chat, "toolu_1", "ls", "a.txt", false);
    aw_test_chat_result(chat, "toolu_2", "read", "no such file", true);
    aw_test_chat_result(chat, "toolu_3", "sum", "3", false);
    aw_test_chat_result(chat, "toolu_4", "say", "", false);
    aw_chat_msg notice = user_msg("<XML-NEXT nonce=\"n0nce\"/>");
    aw_json_doc *schema = NULL;
    const char *st = "{\"type\":\"object\",\"required\":[\"dir\"]}";
    assert_int_equal(aw_json_parse(st, strlen(st), NULL, &schema, NULL), 0);
    aw_tool_def tool = {{"ls", 2}, {"List", 4}, aw_json_doc_root(schema)};
    aw_model_request req;
    memset(&req, 0, sizeof req);
    req.system = (aw_text){"Be brief.", 9};
    req.history = chat;
    req.ephemeral = &notice;
    req.ephemeral_count = 1;
    req.tools = &tool;
    req.tool_count = 1;
    req.temperature = 0.5;
    req.has_temperature = true;
    aw_test_fixture_ok(&f, NULL, &req);

    aw_json_doc *logged = aw_stub_log_request(&f.stub, 0);
    const aw_json_value *root = aw_json_doc_root(logged);
    assert_string_equal(aw_test_str(root, "path"), "/v1/messages");
    const aw_json_value *h = aw_json_get(root, "headers");
    assert_string_equal(aw_test_str(h, "x-api-key"), KEY);
    assert_string_equal(aw_test_str(h, "anthropic-version"), "2023-06-01");
    assert_string_equal(aw_test_str(h, "content-type"), "application/json");
    assert_null(aw_json_get(h, "authorization"));
    const aw_json_value *b = aw_json_get(root, "body");
    aw_json_doc *body = NULL;
    if (aw_json_parse(b->u.str.ptr, b->u.str.len, NULL, &body, NULL))
        fail_msg("not JSON: %s", b->u.str.ptr);
    const aw_json_value *j = aw_json_doc_root(body);
    assert_string_equal(aw_test_str(j, "model"), "claude-test");
    assert_int_equal((int)aw_json_get(j, "max_tokens")->u.num.d, 4096);
    const aw_json_value *sys = aw_json_at(aw_json_get(j, "system"), 0);
    assert_string_equal(aw_test_str(sys, "text"), "Be brief.");
    assert_string_equal(aw_test_str(aw_json_get(sys, "cache_control"), "type"), "ephemeral");
    const aw_json_value *t0 = aw_json_at(aw_json_get(j, "tools"), 0);
    assert_string_equal(aw_test_str(t0, "name"), "ls");
    assert_string_equal(aw_test_str(t0, "description"), "List");
    assert_true(aw_json_equal(aw_json_get(t0, "input_schema"), aw_json_doc_root(schema)));
    assert_true(aw_json_get(j, "stream")->u.b);
    assert_true(aw_json_get(j, "temperature")->u.num.d == 0.5);

    const aw_json_value *msgs = aw_json_get(j, "messages");
    assert_int_equal(aw_json_count(msgs), 3); /* user, assistant, user: roles alternate */
    assert_string_equal(aw_test_str(msg_at(msgs, 0), "role"), "user");
    assert_string_equal(aw_test_str(block(msg_at(msgs, 0), 0), "text"), "List and read.");
    const aw_json_value *a = msg_at(msgs, 1);
    assert_string_equal(aw_test_str(a, "role"), "assistant");
    assert_int_equal(aw_json_count(aw_json_get(a, "content")), 5);
    assert_string_equal(aw_test_str(block(a, 0), "type"), "text");
    assert_string_equal(aw_test_str(block(a, 0), "text"), "Listing.");
    assert_string_equal(aw_test_str(block(a, 1), "type"), "tool_use");
    assert_string_equal(aw_test_str(block(a, 1), "id"), "toolu_1");
    assert_string_equal(aw_test_str(block(a, 1), "name"), "ls");
    assert_string_equal(aw_test_str(aw_json_get(block(a, 1), "input"), "dir"), ".");
    assert_string_equal(aw_test_str(aw_json_get(block(a, 2), "input"), "path"), "a.txt");
    const aw_json_value *wrapped = aw_json_get(aw_json_get(block(a, 3), "input"), "arguments");
    assert_int_equal(aw_json_count(wrapped), 2);
    assert_int_equal(aw_json_count(aw_json_get(block(a, 4), "input")), 0);
    assert_true(aw_json_is_object(aw_json_get(block(a, 4), "input")));
    const aw_json_value *u = msg_at(msgs, 2);
    assert_string_equal(aw_test_str(u, "role"), "user");
    assert_int_equal(aw_json_count(aw_json_get(u, "content")), 5); /* four results and the notice */
    assert_string_equal(aw_test_str(block(u, 0), "type"), "tool_result");
    assert_string_equal(aw_test_str(block(u, 0), "tool_use_id"), "toolu_1");
    assert_string_equal(aw_test_str(block(u, 0), "content"), "a.txt");
    assert_null(aw_json_get(block(u, 0), "is_error"));
    assert_string_equal(aw_test_str(block(u, 1), "content"), "no such file");
    assert_true(aw_json_get(block(u, 1), "is_error")->u.b);
    assert_null(aw_json_get(block(u, 3), "content")); /* empty: left out */
    /* the history's end carries the prompt-cache mark; the notice after it does not */
    assert_string_equal(aw_test_str(aw_json_get(block(u, 3), "cache_control"), "type"), "ephemeral");
    assert_string_equal(aw_test_str(block(u, 4), "text"), "<XML-NEXT nonce=\"n0nce\"/>");
    assert_null(aw_json_get(block(u, 4), "cache_control"));
    aw_json_doc_free(body);
    aw_json_doc_free(logged);

    /* max_tokens given; a history ending with the assistant: the notice starts a user turn */
    aw_chat *short_chat = aw_chat_new(NULL);
    aw_test_chat_add(short_chat, AW_CHAT_USER, "q");
    aw_test_chat_add(short_chat, AW_CHAT_ASSISTANT, "a");
    req.history = short_chat;
    req.max_tokens = 77;
    req.system = (aw_text){"", 0};
    req.tool_count = 0;
    req.has_temperature = false;
    aw_test_fixture_ok(&f, NULL, &req);
    char *text = aw_stub_log_body(&f.stub, 1, NULL);
    assert_string_equal(text, "{\"model\":\"claude-test\",\"max_tokens\":77,\"stream\":true,\"messages\":["
                              "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"q\"}]},"
                              "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"a\","
                              "\"cache_control\":{\"type\":\"ephemeral\"}}]},"
                              "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"<XML-NEXT nonce=\\\"n0nce\\\"/>\"}]}]}");
    free(text);
    aw_json_doc_free(schema);
    aw_chat_free(chat);
    aw_chat_free(short_chat);
    finish(&f);
}

/* The body logged for req, sent by the fixture's provider or a fresh one. */
static char *body_via(fixture *f, aw_provider *p, const aw_model_request *req, size_t i) { return aw_test_fixture_body(f, p, false, req, i); }
static char *fresh_body(fixture *f, const aw_model_request *req, size_t i) { return aw_test_fixture_body(f, NULL, true, req, i); }

static void test_cache_equals_fresh(void **state)
{
    (void)state;
    fixture f;
    start(&f, "{\"text\":\"ok\",\"times\":0}\n");
    aw_chat *chat = aw_chat_new(NULL);
    aw_test_chat_add(chat, AW_CHAT_USER, "start");
    aw_test_chat_call(chat, "", "t1", "a", "{\"x\":1}");
    aw_test_chat_result(chat, "t1", "a", "one", false);
    aw_chat_msg notice = user_msg("notice");
    aw_model_request req;
    memset(&req, 0, sizeof req);
    req.system = (aw_text){"sys", 3};
    req.history = chat;
    req.ephemeral = &notice;
    req.ephemeral_count = 1;
    size_t n = 0;
    free(body_via(&f, NULL, &req, n++));
    /* the next result joins the open user message across the cache's end */
    aw_test_chat_result(chat, "t1", "a", "two", true);
    char *a = body_via(&f, NULL, &req, n++);
    aw_test_same_and_free(a, fresh_body(&f, &req, n++));
    aw_test_chat_call(chat, "next", "t2", "b", "not json at all");
    aw_test_chat_result(chat, "t2", "b", "r", false);
    aw_test_chat_add(chat, AW_CHAT_USER, "more");
    a = body_via(&f, NULL, &req, n++);
    aw_test_same_and_free(a, fresh_body(&f, &req, n++));
    /* another chat: started over */
    aw_chat *other = aw_chat_new(NULL);
    aw_test_chat_add(other, AW_CHAT_USER, "other");
    req.history = other;
    a = body_via(&f, NULL, &req, n++);
    aw_test_same_and_free(a, fresh_body(&f, &req, n++));
    /* xml mode: the thread grows, once stopping inside a character */
    const char thread[] = "<thread>\n  <message role=\"user\">caf\xC3\xA9 \xF0\x9F\x98\x80 &amp;</message>\n  <x/>\n";
    size_t cuts[] = {9, 37, 38, 44, sizeof thread - 1};
    req.history = NULL;
    req.thread_tail = (aw_text){"</thread>", 9};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        req.thread_stable = (aw_text){thread, cuts[i]};
        a = body_via(&f, NULL, &req, n++);
        aw_test_same_and_free(a, fresh_body(&f, &req, n++));
    }
    aw_chat_free(chat);
    aw_chat_free(other);
    finish(&f);
}

/* ---- faults ----------------------------------------------------------------------------------- */

static void test_errors_in_words(void **state)
{
    (void)state;
    static const aw_test_fault cases[] = {
        {.script = "{\"status\":529,\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n", .code = AW_EIO,
         .error = "anthropic: 529 Overloaded: Overloaded", .retryable = true, .http_status = 529},
        {.script = "{\"status\":401,\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}\n",
         .code = AW_EIO, .error = "anthropic: 401 Unauthorized: invalid x-api-key", .retryable = false},
        /* a date in the past: now */
        {.script = "{\"status\":429,\"headers\":{\"retry-after\":\"Wed, 21 Oct 2015 07:28:00 GMT\"},"
                   "\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Number of requests has exceeded your rate limit\"}}\n",
         .code = AW_EIO, .error = "anthropic: 429 Too Many Requests: Number of requests has exceeded your rate limit",
         .retryable = true, .check_retry_after = true, .retry_after_ms = 0},
        /* an error event in the middle of the stream */
        {.script = "{\"stream\":true,\"body\":\"event: message_start\\ndata: {\\\"type\\\":\\\"message_start\\\",\\\"message\\\":{}}\\n\\n"
                   "event: error\\ndata: {\\\"type\\\":\\\"error\\\",\\\"error\\\":{\\\"type\\\":\\\"overloaded_error\\\","
                   "\\\"message\\\":\\\"Overloaded\\\"}}\\n\\n\"}\n",
         .code = AW_EIO, .error = "anthropic: the server reported overloaded_error: Overloaded", .retryable = true},
        {.script = "{\"text\":\"abcdefgh\",\"piece\":2,\"fault\":\"truncate\",\"after_events\":5}\n", .code = AW_EIO,
         .error = "anthropic: the stream ended before the reply did (no message_stop)", .retryable = true, .text = "abcd"},
        {.script = "{\"text\":\"abc\",\"fault\":\"malformed\",\"after_events\":2}\n", .code = AW_ESYNTAX,
         .has = {"anthropic: bad stream event at byte ", ": not JSON: "}, .retryable = false},
        {.script = "{\"text\":\"0123456789\",\"piece\":1,\"fault\":\"reset\",\"after_events\":6}\n", .code = AW_EIO,
         .has = {"failed while receiving the reply: connection reset by peer", NULL}, .retryable = true, .text = "012"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        aw_test_fault_check(&cases[i], "anthropic:claude-test", "", "ANTHROPIC_API_KEY", KEY);
}

static void test_key_handling(void **state)
{
    (void)state;
    aw_loop *l = aw_loop_new(NULL, NULL);
    aw_provider_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.spec = "anthropic:claude-test";
    aw_error err;
    unsetenv("ANTHROPIC_API_KEY");
    unsetenv("ANTHROPIC_BASE_URL");
    assert_null(aw_provider_new(l, &cfg, &err));
    assert_string_equal(err.message, "anthropic: ANTHROPIC_API_KEY is not set");
    aw_loop_free(l);

    fixture f;
    start(&f, "{\"text\":\"" KEY " echoed\",\"piece\":1000,\"max_chunk\":3}\n{\"text\":\"via env\"}\n");
    aw_provider_free(f.p);
    aw_test_trace trace;
    aw_test_trace_init(&trace);
    f.p = make_provider(f.loop, f.stub.base_url, false, aw_test_trace_fn, &trace);
    aw_chat_msg m = user_msg("hi");
    aw_model_request req;
    memset(&req, 0, sizeof req);
    req.ephemeral = &m;
    req.ephemeral_count = 1;
    aw_test_reply r;
    aw_test_reply_init(&r);
    run(&f, NULL, &req, &r);
    assert_int_equal(r.code, 0);
    aw_buf_putc(&trace.text, 0);
    assert_null(strstr(trace.text.data, KEY));
    assert_non_null(strstr(trace.text.data, "x-api-key: [redacted]"));
    assert_non_null(strstr(trace.text.data, "anthropic-version: 2023-06-01"));
    assert_non_null(strstr(trace.text.data, "[redacted] echoed"));
    assert_non_null(strstr(trace.text.data, "event: message_stop"));
    aw_test_reply_free(&r);
    aw_buf_free(&trace.text);
    /* the base URL from ANTHROPIC_BASE_URL */
    setenv("ANTHROPIC_BASE_URL", f.stub.base_url, 1);
    aw_provider *p = make_provider(f.loop, NULL, false, NULL, NULL);
    aw_test_reply_init(&r);
    run(&f, p, &req, &r);
    assert_string_equal(r.text.data, "via env");
    aw_test_reply_free(&r);
    aw_provider_free(p);
    unsetenv("ANTHROPIC_BASE_URL");
    finish(&f);
}

/* ---- allocation failures ---------------------------------------------------------------------- */

static int build_run(const aw_allocator *a, void *ctx)
{
    bool cached = ctx != NULL;
    aw_chat *chat = aw_chat_new(NULL);
    aw_test_chat_add(chat, AW_CHAT_USER, "u");
    aw_test_chat_call(chat, "t", "c1", "f", "{'broken': [1,");
    aw_test_chat_call(chat, "", "c2", "g", "7");
    aw_test_chat_result(chat, "c1", "f", "r1", true);
    aw_test_chat_result(chat, "c2", "g", "r2", false);
    aw_wire_cache cache;
    aw_wire_cache_init(&cache, a);
    aw_chat_msg eph = user_msg("n");
    aw_model_request req;
    memset(&req, 0, sizeof req);
    req.system = (aw_text){"s", 1};
    req.history = chat;
    req.ephemeral = &eph;
    req.ephemeral_count = 1;
    req.thread_stable = (aw_text){"<thread>\xE2\x98", 10};
    req.thread_tail = (aw_text){"\x83</thread>", 10};
    int rc = 0;
    for (int round = 0; round < 2 && rc == 0; round++) {
        aw_body body;
        aw_body_init(&body, a);
        rc = aw_wire_request(aw_anthropic_request, cached ? &cache : NULL, "m", &req, true, &body, a);
        aw_buf joined;
        aw_buf_init(&joined, a);
        if (rc == 0 && (rc = aw_body_join(&body, &joined)) == 0) {
            aw_json_doc *doc = NULL;
            if (aw_json_parse(joined.data, joined.len, NULL, &doc, NULL) || !strstr(joined.data, "<thread>\xE2\x98\x83</thread>") ||
                !strstr(joined.data, "\"input\":{\"broken\":[1]}") || !strstr(joined.data, "\"input\":{\"arguments\":7}"))
                rc = AW_EINVAL;
            aw_json_doc_free(doc);
        }
        aw_buf_free(&joined);
        aw_body_release(&body);
        if (round == 0)
            aw_test_chat_result(chat, "c2", "g", "late", false);
    }
    aw_wire_cache_release(&cache);
    aw_chat_free(chat);
    return rc;
}

static int read_run(const aw_allocator *a, void *ctx)
{
    aw_reply_info info;
    int rc = aw_test_read_reply(&aw_anthropic_reader_ops, a, ctx, 9, &info);
    return rc == 0 && strcmp(info.stop_reason, "tool_use") != 0 ? AW_EINVAL : rc;
}

/* Counts a peer sends beyond any sense (1e400 reads as infinity) are held
 * at the most one reply may count, negative ones at zero, fractions cut:
 * converting infinity to an integer was undefined behaviour (found by
 * fuzz_anthropic_stream). */
static void test_absurd_usage_counts_are_held(void **state)
{
    (void)state;
    const char *stream =
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":"
        "{\"input_tokens\":1e400,\"output_tokens\":-7,\"cache_read_input_tokens\":12.9,"
        "\"cache_creation_input_tokens\":-1e400}}}\n\n"
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    aw_reply_info info;
    assert_int_equal(aw_test_read_reply(&aw_anthropic_reader_ops, NULL, stream, 7, &info), 0);
    assert_true(info.has_usage);
    assert_true(info.usage.input_tokens == (int64_t)1 << 40);
    assert_int_equal(info.usage.output_tokens, 0);
    assert_int_equal(info.usage.cache_read_tokens, 12);
    assert_int_equal(info.usage.cache_write_tokens, 0);
}

static void test_allocation_failures(void **state)
{
    (void)state;
    assert_true(aw_failalloc_run(build_run, (void *)1, 0) > 0);
    assert_true(aw_failalloc_run(build_run, NULL, 0) > 0);
    const char *stream =
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":3}}}\n\n"
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n"
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{}}}\n\n"
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\"}}\n\n"
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"1}\"}}\n\n"
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n"
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":4}}\n\n"
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    assert_true(aw_failalloc_run(read_run, (void *)stream, 0) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_thinking_tools_usage),
        cmocka_unit_test(test_request_body_and_headers),
        cmocka_unit_test(test_cache_equals_fresh),
        cmocka_unit_test(test_errors_in_words),
        cmocka_unit_test(test_key_handling),
        cmocka_unit_test(test_absurd_usage_counts_are_held),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
