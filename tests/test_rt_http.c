/* The HTTP client on the loop, against stub_llm on 127.0.0.1: bodies sent
 * from segments, streamed replies in random chunks, status and headers,
 * Retry-After, every way a peer fails and the words that say so, the four
 * timeouts, cancelling at any point, requests served side by side, and
 * allocation failures. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "agentwire/buf.h"
#include "agentwire/loop.h"
#include "failalloc.h"
#include "internal/http.h"
#include "stub_client.h"

typedef struct got {
    int status;
    aw_buf headers;
    aw_buf body;
    int heads, datas, dones;
    int code;
    bool retryable, timed_out;
    int64_t retry_after_ms;
    int done_status;
    int curl_code;
    char error[512];
    /* cancelling */
    aw_http_req *req;
    bool cancel_on_head;
    size_t cancel_after_bytes; /* 0: never */
    bool cancelled;
    int after_cancel;
} got;

static void got_init(got *g)
{
    memset(g, 0, sizeof *g);
    aw_buf_init(&g->headers, NULL);
    aw_buf_init(&g->body, NULL);
    g->retry_after_ms = -2;
}

static void got_free(got *g)
{
    aw_buf_free(&g->headers);
    aw_buf_free(&g->body);
}

static void on_head(void *ctx, int status, aw_text headers)
{
    got *g = ctx;
    if (g->cancelled)
        g->after_cancel++;
    g->heads++;
    g->status = status;
    aw_buf_append(&g->headers, headers.ptr, headers.len);
    if (g->cancel_on_head) {
        g->cancelled = true;
        aw_http_cancel(g->req);
    }
}

static void on_data(void *ctx, const char *p, size_t n)
{
    got *g = ctx;
    if (g->cancelled)
        g->after_cancel++;
    g->datas++;
    aw_buf_append(&g->body, p, n);
    if (g->cancel_after_bytes && g->body.len >= g->cancel_after_bytes && !g->cancelled) {
        g->cancelled = true;
        aw_http_cancel(g->req);
    }
}

static void on_done(void *ctx, const aw_http_result *res)
{
    got *g = ctx;
    if (g->cancelled)
        g->after_cancel++;
    g->dones++;
    g->code = res->code;
    g->retryable = res->retryable;
    g->timed_out = res->timed_out;
    g->retry_after_ms = res->retry_after_ms;
    g->done_status = res->status;
    g->curl_code = res->curl_code;
    snprintf(g->error, sizeof g->error, "%s", res->error ? res->error : "");
}

static aw_http_options options(const char *url, got *g)
{
    aw_http_options o;
    memset(&o, 0, sizeof o);
    o.url = url;
    o.fns.on_head = on_head;
    o.fns.on_data = on_data;
    o.fns.on_done = on_done;
    o.ctx = g;
    o.connect_timeout_ms = 5000;
    o.first_byte_timeout_ms = 20000;
    o.idle_timeout_ms = 20000;
    o.request_timeout_ms = 60000;
    return o;
}

/* Run one request to completion on a fresh loop and client. */
static void run_one(aw_http_options *o, got *g)
{
    aw_loop *l = aw_loop_new(NULL, NULL);
    aw_http *h = aw_http_new(l, NULL, NULL);
    assert_non_null(h);
    aw_error err;
    assert_int_equal(aw_http_start(h, o, &g->req, &err), 0);
    assert_int_equal(aw_loop_run(l), 0);
    assert_int_equal(aw_http_active(h), 0);
    aw_http_free(h);
    aw_loop_free(l);
}

static void url_of(char *out, size_t n, const aw_stub *s, const char *path)
{
    snprintf(out, n, "%s%s", s->base_url, path);
}

/* ---- bodies, streams, heads --------------------------------------------------------- */

static void test_body_segments_arrive_whole(void **state)
{
    (void)state;
    aw_stub s;
    aw_stub_start(&s, "{\"endpoint\":\"/v1/chat/completions\",\"text\":\"hi\",\"stream\":false}\n");
    char url[128];
    url_of(url, sizeof url, &s, "/v1/chat/completions");
    got g;
    got_init(&g);
    aw_http_options o = options(url, &g);
    aw_text body[] = {{"{\"model\":", 9}, {"", 0}, {"\"m\",\"messages\":[]", 17}, {"}", 1}};
    o.body = body;
    o.body_count = 4;
    const char *headers[] = {"Content-Type: application/json", "X-Test: one"};
    o.headers = headers;
    o.header_count = 2;
    run_one(&o, &g);
    assert_int_equal(g.dones, 1);
    assert_int_equal(g.code, 0);
    assert_int_equal(g.status, 200);
    assert_int_equal(g.done_status, 200);
    assert_int_equal(g.retry_after_ms, -1);
    aw_text ct;
    assert_true(aw_http_header_get((aw_text){g.headers.data, g.headers.len}, "content-type", &ct));
    assert_int_equal(ct.len, strlen("application/json"));
    assert_non_null(strstr(g.body.data, "\"content\":\"hi\""));
    assert_int_equal(aw_stub_wait(&s, 10000), 0);
    size_t len;
    char *sent = aw_stub_log_body(&s, 0, &len);
    assert_string_equal(sent, "{\"model\":\"m\",\"messages\":[]}");
    free(sent);
    aw_json_doc *req = aw_stub_log_request(&s, 0);
    const aw_json_value *h = aw_json_get(aw_json_doc_root(req), "headers");
    assert_string_equal(aw_json_get(h, "x-test")->u.str.ptr, "one");
    assert_null(aw_json_get(h, "expect"));
    assert_string_equal(aw_json_get(aw_json_doc_root(req), "method")->u.str.ptr, "POST");
    aw_json_doc_free(req);
    aw_stub_stop(&s);
    got_free(&g);
}

static void test_stream_in_random_chunks(void **state)
{
    (void)state;
    aw_stub s;
    /* the same reply streamed whole and in random writes of 1..7 bytes */
    aw_stub_start(&s, "{\"text\":\"The quick brown fox jumps over the lazy dog, twice over.\",\"stream\":true,\"chunks\":0}\n"
                      "{\"text\":\"The quick brown fox jumps over the lazy dog, twice over.\",\"stream\":true,"
                      "\"chunks\":\"random\",\"max_chunk\":7,\"seed\":3}\n");
    char url[128];
    url_of(url, sizeof url, &s, "/v1/chat/completions");
    got a, b;
    got_init(&a);
    got_init(&b);
    aw_http_options oa = options(url, &a), ob = options(url, &b);
    run_one(&oa, &a);
    run_one(&ob, &b);
    assert_int_equal(a.code, 0);
    assert_int_equal(b.code, 0);
    assert_int_equal(a.body.len, b.body.len);
    assert_memory_equal(a.body.data, b.body.data, a.body.len);
    assert_non_null(strstr(a.body.data, "data: [DONE]"));
    assert_true(b.datas >= 1);
    assert_int_equal(aw_stub_wait(&s, 10000), 0);
    /* a body-less request is a GET */
    aw_json_doc *req = aw_stub_log_request(&s, 0);
    assert_string_equal(aw_json_get(aw_json_doc_root(req), "method")->u.str.ptr, "GET");
    aw_json_doc_free(req);
    aw_stub_stop(&s);
    got_free(&a);
    got_free(&b);
}

static void test_error_status_and_retry_after(void **state)
{
    (void)state;
    aw_stub s;
    aw_stub_start(&s, "{\"status\":429,\"headers\":{\"Retry-After\":\"7\"},\"error\":\"slow down\"}\n"
                      "{\"status\":503,\"headers\":{\"retry-after-ms\":\"1500\",\"Retry-After\":\"9\"}}\n"
                      "{\"status\":500}\n");
    char url[128];
    url_of(url, sizeof url, &s, "/v1/chat/completions");
    got g[3];
    for (int i = 0; i < 3; i++) {
        got_init(&g[i]);
        aw_http_options o = options(url, &g[i]);
        run_one(&o, &g[i]);
        assert_int_equal(g[i].code, 0); /* an HTTP error is still a whole response */
    }
    assert_int_equal(g[0].status, 429);
    assert_int_equal(g[0].retry_after_ms, 7000);
    assert_non_null(strstr(g[0].body.data, "slow down"));
    assert_int_equal(g[1].status, 503);
    assert_int_equal(g[1].retry_after_ms, 1500); /* the ms form wins */
    assert_int_equal(g[2].status, 500);
    assert_int_equal(g[2].retry_after_ms, -1);
    assert_int_equal(aw_stub_wait(&s, 10000), 0);
    aw_stub_stop(&s);
    for (int i = 0; i < 3; i++)
        got_free(&g[i]);
}

static void test_retry_after_forms(void **state)
{
    (void)state;
    int64_t now = 1445412480; /* Wed, 21 Oct 2015 07:28:00 GMT */
    assert_int_equal(aw_http_parse_retry_after((aw_text){"120", 3}, now), 120000);
    assert_int_equal(aw_http_parse_retry_after((aw_text){"0", 1}, now), 0);
    const char *imf = "Wed, 21 Oct 2015 07:28:30 GMT";
    assert_int_equal(aw_http_parse_retry_after((aw_text){imf, strlen(imf)}, now), 30000);
    const char *rfc850 = "Wednesday, 21-Oct-15 07:29:00 GMT";
    assert_int_equal(aw_http_parse_retry_after((aw_text){rfc850, strlen(rfc850)}, now), 60000);
    const char *past = "Wed, 21 Oct 2015 07:00:00 GMT";
    assert_int_equal(aw_http_parse_retry_after((aw_text){past, strlen(past)}, now), 0);
    assert_int_equal(aw_http_parse_retry_after((aw_text){"soon", 4}, now), -1);
    assert_int_equal(aw_http_parse_retry_after((aw_text){"", 0}, now), -1);
    assert_int_equal(aw_http_parse_retry_after((aw_text){"-5", 2}, now), -1);
}

static void test_header_lookup(void **state)
{
    (void)state;
    const char *h = "Content-Type: text/event-stream\r\nX-Request-Id:  abc \r\nretry-after: 3\r\n";
    aw_text v;
    assert_true(aw_http_header_get((aw_text){h, strlen(h)}, "x-request-id", &v));
    assert_int_equal(v.len, 3);
    assert_memory_equal(v.ptr, "abc", 3);
    assert_true(aw_http_header_get((aw_text){h, strlen(h)}, "Retry-After", &v));
    assert_memory_equal(v.ptr, "3", 1);
    assert_false(aw_http_header_get((aw_text){h, strlen(h)}, "content", &v));
    assert_string_equal(aw_http_reason(401), "Unauthorized");
    assert_string_equal(aw_http_reason(529), "Overloaded");
    assert_string_equal(aw_http_reason(299), "");
}

/* ---- failures in words --------------------------------------------------------------- */

/* A port nothing listens on: bound, never listened to, then closed. */
static int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static void test_connection_refused(void **state)
{
    (void)state;
    char url[128], want[160];
    int port = closed_port();
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/chat/completions", port);
    got g;
    got_init(&g);
    aw_http_options o = options(url, &g);
    run_one(&o, &g);
    assert_int_equal(g.dones, 1);
    assert_int_equal(g.code, AW_EIO);
    assert_true(g.retryable);
    assert_false(g.timed_out);
    assert_int_equal(g.heads, 0);
    snprintf(want, sizeof want, "could not connect to 127.0.0.1:%d: connection refused", port);
    assert_string_equal(g.error, want);
    assert_int_equal(g.curl_code, 7); /* CURLE_COULDNT_CONNECT, for logs only */
    got_free(&g);
}

static void test_bad_url(void **state)
{
    (void)state;
    aw_loop *l = aw_loop_new(NULL, NULL);
    aw_http *h = aw_http_new(l, NULL, NULL);
    got g;
    got_init(&g);
    aw_http_options o = options("ftp://127.0.0.1/x", &g);
    aw_error err;
    aw_http_req *r;
    assert_int_equal(aw_http_start(h, &o, &r, &err), AW_EINVAL);
    assert_string_equal(err.message, "the URL 'ftp://127.0.0.1/x' cannot be used (http and https only)");
    o.url = "no scheme here";
    assert_int_equal(aw_http_start(h, &o, &r, &err), AW_EINVAL);
    assert_non_null(strstr(err.message, "is not valid"));
    assert_int_equal(aw_http_active(h), 0);
    aw_http_free(h);
    aw_loop_free(l);
    got_free(&g);
}

/* One script line served and failed as the fault says; the error. */
static void fault_run(const char *line, aw_http_options *tweak, got *g)
{
    aw_stub s;
    aw_stub_start(&s, line);
    char url[128];
    url_of(url, sizeof url, &s, "/v1/chat/completions");
    aw_http_options o = options(url, g);
    if (tweak) {
        if (tweak->first_byte_timeout_ms)
            o.first_byte_timeout_ms = tweak->first_byte_timeout_ms;
        if (tweak->idle_timeout_ms)
            o.idle_timeout_ms = tweak->idle_timeout_ms;
        if (tweak->request_timeout_ms)
            o.request_timeout_ms = tweak->request_timeout_ms;
        o.connect_timeout_ms = tweak->connect_timeout_ms ? tweak->connect_timeout_ms : o.connect_timeout_ms;
    }
    run_one(&o, g);
    aw_stub_wait(&s, 15000);
    aw_stub_stop(&s);
}

static void test_reset_mid_stream(void **state)
{
    (void)state;
    got g;
    got_init(&g);
    fault_run("{\"text\":\"0123456789abcdefghijklmnopqrstuvwxyz\",\"piece\":4,\"stream\":true,\"fault\":\"reset\","
              "\"after_events\":4}\n",
              NULL, &g);
    assert_int_equal(g.dones, 1);
    assert_int_equal(g.code, AW_EIO);
    assert_true(g.retryable);
    assert_int_equal(g.status, 200);
    assert_non_null(strstr(g.error, "failed while receiving the reply: connection reset by peer"));
    /* what came before the reset was handed over first */
    assert_non_null(strstr(g.body.data, "\"content\":\"0123\""));
    got_free(&g);
}

static void test_truncated_whole_reply(void **state)
{
    (void)state;
    got g;
    got_init(&g);
    fault_run("{\"text\":\"0123456789abcdefghijklmnopqrstuvwxyz\",\"stream\":false,\"fault\":\"truncate\"}\n", NULL, &g);
    assert_int_equal(g.code, AW_EIO);
    assert_true(g.retryable);
    assert_non_null(strstr(g.error, "closed before the whole reply arrived"));
    got_free(&g);
}

static void test_closed_without_reply(void **state)
{
    (void)state;
    got g;
    got_init(&g);
    fault_run("{\"fault\":\"close\"}\n", NULL, &g);
    assert_int_equal(g.code, AW_EIO);
    assert_true(g.retryable);
    assert_int_equal(g.heads, 0);
    assert_non_null(strstr(g.error, "closed the connection without replying"));
    got_free(&g);
}

static void test_idle_timeout(void **state)
{
    (void)state;
    got g;
    got_init(&g);
    aw_http_options t = {0};
    t.idle_timeout_ms = 300;
    fault_run("{\"text\":\"0123456789abcdefghijklmnopqrstuvwxyz\",\"stream\":true,\"fault\":\"stall\","
              "\"stall_ms\":20000}\n",
              &t, &g);
    assert_int_equal(g.code, AW_EIO);
    assert_true(g.timed_out);
    assert_true(g.retryable);
    assert_string_equal(g.error, "timed out after 300 ms waiting for the next piece of the reply");
    got_free(&g);
}

static void test_first_byte_timeout(void **state)
{
    (void)state;
    got g;
    got_init(&g);
    aw_http_options t = {0};
    t.first_byte_timeout_ms = 1500;
    fault_run("{\"text\":\"late\",\"delay_ms\":20000}\n", &t, &g);
    assert_int_equal(g.code, AW_EIO);
    assert_true(g.timed_out);
    assert_string_equal(g.error, "timed out after 1.5 s waiting for the first byte");
    assert_int_equal(g.heads, 0);
    got_free(&g);
}

static void test_whole_request_timeout(void **state)
{
    (void)state;
    got g;
    got_init(&g);
    aw_http_options t = {0};
    t.request_timeout_ms = 400;
    /* a steady trickle: never idle, never done in time */
    fault_run("{\"text\":\"0123456789abcdefghijklmnopqrstuvwxyz0123456789\",\"piece\":1,\"stream\":true,"
              "\"chunks\":16,\"chunk_delay_ms\":50}\n",
              &t, &g);
    assert_int_equal(g.code, AW_EIO);
    assert_true(g.timed_out);
    assert_string_equal(g.error, "timed out after 400 ms, the limit for the whole request");
    assert_true(g.body.len > 0);
    got_free(&g);
}

/* A listener whose accept queue is full: the kernel drops further SYNs,
 * so a connect waits until our connect timeout. */
static void test_connect_timeout(void **state)
{
    (void)state;
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(lfd, 0), 0);
    assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &len), 0);
    int fillers[4];
    for (int i = 0; i < 4; i++) {
        fillers[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        (void)!connect(fillers[i], (struct sockaddr *)&a, sizeof a);
    }
    usleep(100000);
    char url[128], want[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/x", ntohs(a.sin_port));
    got g;
    got_init(&g);
    aw_http_options o = options(url, &g);
    o.connect_timeout_ms = 700;
    run_one(&o, &g);
    assert_int_equal(g.code, AW_EIO);
    assert_true(g.timed_out);
    snprintf(want, sizeof want, "timed out after 700 ms connecting to 127.0.0.1:%d", ntohs(a.sin_port));
    assert_string_equal(g.error, want);
    for (int i = 0; i < 4; i++)
        close(fillers[i]);
    close(lfd);
    got_free(&g);
}

/* ---- cancelling, side by side, the client's end ------------------------------------- */

static void test_cancel_mid_stream(void **state)
{
    (void)state;
    aw_stub s;
    aw_stub_start(&s, "{\"text\":\"0123456789abcdefghijklmnopqrstuvwxyz0123456789\",\"piece\":2,\"stream\":true,"
                      "\"chunks\":32,\"chunk_delay_ms\":20}\n"
                      "{\"text\":\"head only\",\"stream\":true}\n");
    char url[128];
    url_of(url, sizeof url, &s, "/v1/chat/completions");
    got g;
    got_init(&g);
    g.cancel_after_bytes = 40;
    aw_http_options o = options(url, &g);
    run_one(&o, &g);
    assert_true(g.cancelled);
    assert_int_equal(g.dones, 0);
    assert_int_equal(g.after_cancel, 0);
    got h;
    got_init(&h);
    h.cancel_on_head = true;
    o = options(url, &h);
    run_one(&o, &h);
    assert_int_equal(h.heads, 1);
    assert_int_equal(h.datas, 0);
    assert_int_equal(h.dones, 0);
    aw_stub_wait(&s, 10000);
    assert_int_equal(aw_stub_log_count(&s), 2);
    aw_stub_stop(&s);
    got_free(&g);
    got_free(&h);
}

static void test_side_by_side_and_free_with_requests_running(void **state)
{
    (void)state;
    aw_stub s;
    /* three streams at once, each trickling, plus one that stalls */
    aw_stub_start(&s, "{\"text\":\"aaaaaaaaaaaaaaaaaaaaaaaa\",\"piece\":3,\"stream\":true,\"chunks\":40,\"chunk_delay_ms\":10,"
                      "\"times\":3}\n"
                      "{\"endpoint\":\"/stall/chat/completions\",\"text\":\"x\",\"stream\":true,\"fault\":\"stall\",\"stall_ms\":30000}\n");
    char url[128], stall[128];
    url_of(url, sizeof url, &s, "/v1/chat/completions");
    url_of(stall, sizeof stall, &s, "/stall/chat/completions");
    aw_loop *l = aw_loop_new(NULL, NULL);
    aw_http *h = aw_http_new(l, NULL, NULL);
    got g[4];
    aw_error err;
    for (int i = 0; i < 4; i++) {
        got_init(&g[i]);
        aw_http_options o = options(i < 3 ? url : stall, &g[i]);
        assert_int_equal(aw_http_start(h, &o, &g[i].req, &err), 0);
    }
    assert_int_equal(aw_http_active(h), 4);
    /* serve until the three trickles are done; the stall goes on */
    for (int round = 0; round < 100000 && !(g[0].dones && g[1].dones && g[2].dones); round++)
        assert_int_equal(aw_loop_once(l, 1000), 0);
    for (int i = 0; i < 3; i++) {
        if (g[i].code)
            fail_msg("request %d: %s", i, g[i].error);
        assert_memory_equal(g[i].body.data, g[0].body.data, g[0].body.len);
        assert_int_equal(g[i].body.len, g[0].body.len);
    }
    assert_int_equal(aw_http_active(h), 1);
    assert_int_equal(g[3].dones, 0);
    /* freeing the client ends the stalled one without a callback */
    aw_http_free(h);
    assert_int_equal(g[3].dones, 0);
    aw_loop_free(l);
    aw_stub_stop(&s);
    for (int i = 0; i < 4; i++)
        got_free(&g[i]);
}

/* ---- allocation failures ------------------------------------------------------------- */

static const char *sweep_url;

static int sweep_run(const aw_allocator *a, void *ctx)
{
    (void)ctx;
    aw_loop *l = aw_loop_new(a, NULL);
    if (!l)
        return AW_ENOMEM;
    aw_error err;
    aw_http *h = aw_http_new(l, a, &err);
    if (!h) {
        aw_loop_free(l);
        return AW_ENOMEM;
    }
    got g;
    got_init(&g);
    aw_http_options o = options(sweep_url, &g);
    aw_text body[] = {{"{\"stream\":true}", 15}};
    o.body = body;
    o.body_count = 1;
    int rc = aw_http_start(h, &o, &g.req, &err);
    if (rc == 0)
        rc = aw_loop_run(l);
    if (rc == 0)
        rc = g.code;
    if (rc == 0 && (g.dones != 1 || !strstr(g.body.data, "[DONE]")))
        rc = AW_EINVAL;
    aw_http_free(h);
    aw_loop_free(l);
    got_free(&g);
    return rc;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    aw_stub s;
    aw_stub_start(&s, "{\"text\":\"fail every allocation in turn\",\"times\":0,\"max_chunk\":9}\n");
    char url[128];
    url_of(url, sizeof url, &s, "/v1/chat/completions");
    sweep_url = url;
    assert_true(aw_failalloc_run(sweep_run, NULL, 0) > 5);
    aw_stub_stop(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_body_segments_arrive_whole),
        cmocka_unit_test(test_stream_in_random_chunks),
        cmocka_unit_test(test_error_status_and_retry_after),
        cmocka_unit_test(test_retry_after_forms),
        cmocka_unit_test(test_header_lookup),
        cmocka_unit_test(test_connection_refused),
        cmocka_unit_test(test_bad_url),
        cmocka_unit_test(test_reset_mid_stream),
        cmocka_unit_test(test_truncated_whole_reply),
        cmocka_unit_test(test_closed_without_reply),
        cmocka_unit_test(test_idle_timeout),
        cmocka_unit_test(test_first_byte_timeout),
        cmocka_unit_test(test_whole_request_timeout),
        cmocka_unit_test(test_connect_timeout),
        cmocka_unit_test(test_cancel_mid_stream),
        cmocka_unit_test(test_side_by_side_and_free_with_requests_running),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
