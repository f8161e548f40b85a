/* stub_llm itself, for the tests that build on it: the Responses API
 * stream the codex CLI reads (events in order, text joined, usage), its
 * whole form, lines matched by endpoint and used up, an unscripted request
 * answered with a 500 (a 404 off the model APIs, bodiless for HEAD) and
 * logged with line 0, kept-alive connections in
 * the log, and the time limit that keeps it from hanging a test. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agentwire/buf.h"
#include "agentwire/json.h"
#include "agentwire/loop.h"
#include "internal/http.h"
#include "internal/sse.h"
#include "stub_client.h"

typedef struct exchange {
    int status;
    aw_buf body;
    bool done;
    int code;
} exchange;

static void on_head(void *ctx, int status, aw_text headers)
{
    (void)headers;
    ((exchange *)ctx)->status = status;
}

static void on_data(void *ctx, const char *p, size_t n) { aw_buf_append(&((exchange *)ctx)->body, p, n); }

static void on_done(void *ctx, const aw_http_result *res)
{
    exchange *x = ctx;
    x->done = true;
    x->code = res->code;
}

/* POST body to path on the stub (HEAD when body is NULL), through one
 * client (kept alive). */
static void post(aw_loop *l, aw_http *h, const aw_stub *s, const char *path, const char *body, exchange *x)
{
    char url[160];
    snprintf(url, sizeof url, "%s%s", s->base_url, path);
    memset(x, 0, sizeof *x);
    aw_buf_init(&x->body, NULL);
    aw_text seg = {body, body ? strlen(body) : 0};
    const char *headers[] = {"Content-Type: application/json"};
    aw_http_options o;
    memset(&o, 0, sizeof o);
    o.url = url;
    o.headers = headers;
    o.header_count = 1;
    o.method = body ? "POST" : "HEAD";
    o.body = body ? &seg : NULL;
    o.body_count = body ? 1 : 0;
    o.request_timeout_ms = 20000;
    o.fns = (aw_http_fns){on_head, on_data, on_done};
    o.ctx = x;
    aw_http_req *r;
    assert_int_equal(aw_http_start(h, &o, &r, NULL), 0);
    while (!x->done)
        assert_int_equal(aw_loop_once(l, 1000), 0);
    assert_int_equal(x->code, 0);
}

typedef struct events {
    aw_buf types; /* one per line */
    aw_buf text;  /* the output_text deltas joined */
    aw_json_doc *completed;
} events;

static int on_event(void *ctx, const aw_sse_event *ev)
{
    events *e = ctx;
    aw_buf_append(&e->types, ev->type.ptr, ev->type.len);
    aw_buf_putc(&e->types, '\n');
    aw_json_doc *doc = NULL;
    assert_int_equal(aw_json_parse(ev->data.ptr, ev->data.len, NULL, &doc, NULL), 0);
    const aw_json_value *root = aw_json_doc_root(doc);
    const aw_json_value *type = aw_json_get(root, "type");
    assert_true(aw_json_is_string(type) && type->u.str.len == ev->type.len &&
                memcmp(type->u.str.ptr, ev->type.ptr, ev->type.len) == 0);
    if (strcmp(type->u.str.ptr, "response.output_text.delta") == 0) {
        const aw_json_value *d = aw_json_get(root, "delta");
        aw_buf_append(&e->text, d->u.str.ptr, d->u.str.len);
    }
    if (strcmp(type->u.str.ptr, "response.completed") == 0) {
        e->completed = doc;
        return 0;
    }
    aw_json_doc_free(doc);
    return 0;
}

static void test_responses_api(void **state)
{
    (void)state;
    aw_stub s;
    aw_stub_start(&s, "{\"endpoint\":\"/v1/responses\",\"text\":\"Done: 3 files \\u2603.\",\"piece\":4,"
                      "\"usage\":{\"input_tokens\":11,\"output_tokens\":5,\"cache_read_tokens\":2,\"reasoning_tokens\":1}}\n"
                      "{\"endpoint\":\"/v1/responses\",\"text\":\"whole\",\"tool_calls\":[{\"id\":\"call_7\",\"name\":\"ls\","
                      "\"arguments\":{\"d\":1}}]}\n");
    aw_loop *l = aw_loop_new(NULL, NULL);
    aw_http *h = aw_http_new(l, NULL, NULL);
    exchange x;
    post(l, h, &s, "/v1/responses", "{\"model\":\"gpt-5-codex\",\"stream\":true,\"input\":[]}", &x);
    assert_int_equal(x.status, 200);
    events e;
    memset(&e, 0, sizeof e);
    aw_buf_init(&e.types, NULL);
    aw_buf_init(&e.text, NULL);
    aw_sse_reader r;
    aw_sse_handlers hs = {on_event, NULL};
    aw_sse_init(&r, NULL, 0, 0, &hs, &e);
    assert_int_equal(aw_sse_feed(&r, x.body.data, x.body.len, NULL), 0);
    assert_int_equal(aw_sse_finish(&r, NULL), 0);
    aw_sse_release(&r);
    assert_string_equal(e.types.data, "response.created\nresponse.in_progress\nresponse.output_item.added\n"
                                      "response.content_part.added\nresponse.output_text.delta\n"
                                      "response.output_text.delta\nresponse.output_text.delta\n"
                                      "response.output_text.delta\nresponse.output_text.delta\n"
                                      "response.output_text.done\nresponse.content_part.done\n"
                                      "response.output_item.done\nresponse.completed\n");
    assert_string_equal(e.text.data, "Done: 3 files \xE2\x98\x83.");
    const aw_json_value *resp = aw_json_get(aw_json_doc_root(e.completed), "response");
    assert_string_equal(aw_json_get(resp, "model")->u.str.ptr, "gpt-5-codex");
    const aw_json_value *usage = aw_json_get(resp, "usage");
    assert_int_equal((int)aw_json_get(usage, "input_tokens")->u.num.d, 11);
    assert_int_equal((int)aw_json_get(usage, "output_tokens")->u.num.d, 5);
    assert_int_equal((int)aw_json_get(aw_json_get(usage, "input_tokens_details"), "cached_tokens")->u.num.d, 2);
    const aw_json_value *item = aw_json_at(aw_json_get(resp, "output"), 0);
    assert_string_equal(aw_json_get(aw_json_at(aw_json_get(item, "content"), 0), "text")->u.str.ptr,
                        "Done: 3 files \xE2\x98\x83.");
    aw_json_doc_free(e.completed);
    aw_buf_free(&e.types);
    aw_buf_free(&e.text);
    aw_buf_free(&x.body);

    /* whole: the response object with a message and a function call */
    post(l, h, &s, "/v1/responses", "{\"model\":\"m\",\"input\":[]}", &x);
    aw_json_doc *doc = NULL;
    assert_int_equal(aw_json_parse(x.body.data, x.body.len, NULL, &doc, NULL), 0);
    const aw_json_value *out = aw_json_get(aw_json_doc_root(doc), "output");
    assert_int_equal(aw_json_count(out), 2);
    assert_string_equal(aw_json_get(aw_json_at(out, 1), "type")->u.str.ptr, "function_call");
    assert_string_equal(aw_json_get(aw_json_at(out, 1), "call_id")->u.str.ptr, "call_7");
    assert_string_equal(aw_json_get(aw_json_at(out, 1), "arguments")->u.str.ptr, "{\"d\":1}");
    aw_json_doc_free(doc);
    aw_buf_free(&x.body);
    aw_http_free(h);
    aw_loop_free(l);
    assert_int_equal(aw_stub_wait(&s, 10000), 0);
    /* both requests went over one kept-alive connection */
    aw_json_doc *a = aw_stub_log_request(&s, 0), *b = aw_stub_log_request(&s, 1);
    assert_int_equal((int)aw_json_get(aw_json_doc_root(a), "conn")->u.num.d,
                     (int)aw_json_get(aw_json_doc_root(b), "conn")->u.num.d);
    aw_json_doc_free(a);
    aw_json_doc_free(b);
    aw_stub_stop(&s);
}

static void test_lines_matched_and_used_up(void **state)
{
    (void)state;
    aw_stub s;
    /* the third line is never asked for, so the stub stays for the
     * unscripted request and then ends at its time limit */
    aw_stub_start_timeout(&s, "{\"endpoint\":\"/v1/messages\",\"text\":\"anthropic\",\"stream\":false}\n"
                              "{\"text\":\"any\",\"stream\":false,\"times\":2}\n"
                              "{\"endpoint\":\"/never\"}\n", 3000);
    aw_loop *l = aw_loop_new(NULL, NULL);
    aw_http *h = aw_http_new(l, NULL, NULL);
    exchange x[5];
    /* a reachability check as claude sends it: 404, nothing after it on
     * the connection */
    post(l, h, &s, "/", NULL, &x[4]);
    assert_int_equal(x[4].status, 404);
    assert_int_equal(x[4].body.len, 0);
    aw_buf_free(&x[4].body);
    /* the first line only answers its endpoint; the second any model
     * API, twice; other paths take no line */
    post(l, h, &s, "/v1/models", "{}", &x[4]);
    assert_int_equal(x[4].status, 404);
    assert_non_null(strstr(x[4].body.data, "stub: nothing at POST /v1/models"));
    aw_buf_free(&x[4].body);
    post(l, h, &s, "/v1/chat/completions", "{}", &x[0]);
    post(l, h, &s, "/v1/messages?beta=true", "{}", &x[1]);
    post(l, h, &s, "/v1/chat/completions", "{}", &x[2]);
    post(l, h, &s, "/v1/chat/completions", "{}", &x[3]);
    assert_non_null(strstr(x[0].body.data, "\"content\":\"any\""));
    assert_non_null(strstr(x[1].body.data, "\"text\":\"anthropic\""));
    assert_non_null(strstr(x[2].body.data, "\"content\":\"any\""));
    assert_int_equal(x[3].status, 500);
    assert_non_null(strstr(x[3].body.data, "stub: no scripted reply left for POST /v1/chat/completions"));
    for (int i = 0; i < 4; i++)
        aw_buf_free(&x[i].body);
    aw_http_free(h);
    aw_loop_free(l);
    assert_int_equal(aw_stub_wait(&s, 10000), 3);
    aw_json_doc *last = aw_stub_log_request(&s, 5), *second = aw_stub_log_request(&s, 3);
    assert_int_equal((int)aw_json_get(aw_json_doc_root(last), "line")->u.num.d, 0);
    assert_int_equal((int)aw_json_get(aw_json_doc_root(second), "line")->u.num.d, 1);
    assert_string_equal(aw_json_get(aw_json_doc_root(second), "path")->u.str.ptr, "/v1/messages?beta=true");
    aw_json_doc_free(last);
    aw_json_doc_free(second);
    aw_stub_stop(&s);
}

static void test_time_limit(void **state)
{
    (void)state;
    aw_stub s;
    /* a line that is never used: only the time limit ends the stub */
    aw_stub_start_timeout(&s, "{\"text\":\"never asked\"}\n", 300);
    assert_int_equal(aw_stub_wait(&s, 10000), 3);
    aw_stub_stop(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_responses_api),
        cmocka_unit_test(test_lines_matched_and_used_up),
        cmocka_unit_test(test_time_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
