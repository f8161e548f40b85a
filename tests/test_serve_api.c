/* agentwire serve's API against a real server on a loopback port and a
 * real store: SQLite in a temporary folder, or PostgreSQL when AW_PG_URL
 * names one (ctest runs this file twice: test_serve_api and
 * test_serve_api_pg, the second under tests/support/pg_harness.sh).
 *
 * Covered: the list and its filters, one session with its steps and
 * accounting summary, the <thread> and accounting downloads, server-sent
 * envelopes with Last-Event-ID resume from every point of a stream,
 * followers woken as the store grows (steps written by the test, and a
 * real `agentwire run` the test holds between its steps), heartbeats, the
 * token rule, a tool output holding <script> returned as data, and HTTP
 * hygiene: methods, huge headers, unknown ids, path tricks, caching,
 * security headers, a slow client beside others, and a stop with streams
 * open. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agentwire/thread.h"
#include "failalloc.h"
#include "http_client.h"
#include "serve_fixture.h"

static char dir[256];
static char url[1024];
static aw_server *srv;
static uint16_t port;
static char ids[3][64]; /* A completed, B running, C failed */

#define PWNED "<script>window.pwned=1</script>"

/* Session A: two steps, eleven envelopes (see the feed's rules). */
static const char *const steps_a[] = {
    "{\"turn\": 1, \"events\": ["
    " {\"type\": \"message\", \"iteration\": 0, \"timestamp\": 1768557600000, \"role\": \"user\", \"content\": \"go\"},"
    " {\"type\": \"message\", \"iteration\": 1, \"timestamp\": 1768557600005, \"role\": \"assistant\", \"content\": \"ok\"},"
    " {\"type\": \"tool_call\", \"iteration\": 1, \"timestamp\": 1768557600010, \"toolName\": \"search\","
    "  \"toolCallId\": \"c1\", \"args\": {\"q\": \"needle\"}},"
    " {\"type\": \"tool_call\", \"iteration\": 1, \"timestamp\": 1768557600011, \"toolName\": \"fetch\","
    "  \"toolCallId\": \"c2\", \"args\": {\"url\": \"x\"}},"
    " {\"type\": \"tool_result\", \"iteration\": 1, \"timestamp\": 1768557600050, \"toolCallId\": \"c1\","
    "  \"result\": \"" PWNED "\", \"durationMs\": 40},"
    " {\"type\": \"error\", \"iteration\": 1, \"timestamp\": 1768557600060, \"error\": \"tool 'fetch' failed: boom\","
    "  \"recoverable\": true, \"toolCallId\": \"c2\"}],"
    " \"accounting\": ["
    " {\"kind\": \"model\", \"timestamp\": 1768557600008, \"latency_ms\": 7, \"input_tokens\": 100, \"output_tokens\": 20,"
    "  \"stop_reason\": \"tool_calls\", \"status\": \"ok\", \"turn\": 1},"
    " {\"kind\": \"tool\", \"command\": \"search\", \"tool_call_id\": \"c1\", \"status\": \"ok\", \"latency_ms\": 40,"
    "  \"timestamp\": 1768557600050, \"turn\": 1},"
    " {\"kind\": \"tool\", \"command\": \"fetch\", \"tool_call_id\": \"c2\", \"status\": \"failed\", \"latency_ms\": 49,"
    "  \"timestamp\": 1768557600060, \"turn\": 1}],"
    " \"resume\": {\"turn\": 1, \"usage\": {\"input_tokens\": 100, \"output_tokens\": 20}, \"seconds\": 0.06, \"chat\": []}}",
    "{\"turn\": 2, \"final\": true, \"events\": ["
    " {\"type\": \"tool_call\", \"iteration\": 2, \"timestamp\": 1768557600100, \"toolName\": \"agent__final_report\","
    "  \"toolCallId\": \"f\", \"args\": {\"status\": \"success\", \"content\": \"# Report\"}},"
    " {\"type\": \"tool_result\", \"iteration\": 2, \"timestamp\": 1768557600101, \"toolCallId\": \"f\", \"result\": \"ok\"},"
    " {\"type\": \"completion\", \"iteration\": 2, \"timestamp\": 1768557600102, \"result\": \"# Report\\n\\n" PWNED "\","
    "  \"status\": \"success\"}],"
    " \"accounting\": ["
    " {\"kind\": \"model\", \"timestamp\": 1768557600099, \"latency_ms\": 5, \"input_tokens\": 150, \"output_tokens\": 30,"
    "  \"stop_reason\": \"tool_calls\", \"status\": \"ok\", \"turn\": 2},"
    " {\"kind\": \"tool\", \"command\": \"agent__final_report\", \"tool_call_id\": \"f\", \"status\": \"ok\","
    "  \"latency_ms\": 0, \"timestamp\": 1768557600101, \"turn\": 2}],"
    " \"resume\": {\"turn\": 2, \"usage\": {\"input_tokens\": 250, \"output_tokens\": 50, \"cost_usd\": 0.0123},"
    "  \"seconds\": 0.1, \"chat\": []}}",
};
/* the envelopes of A, in order, with their ids */
static const char *const a_ids[] = {"1", "3", "4", "5", "6.1", "6", "7.1", "7", "8", "9.1", "9"};
static const char *const a_types[] = {"agent.step.started",   "agent.tool.started",   "agent.tool.started",
                                      "agent.tool.completed", "agent.tool.completed", "agent.step.completed",
                                      "agent.step.started",   "agent.tool.started",   "agent.tool.completed",
                                      "agent.step.completed", "agent.status"};
enum { A_ENVELOPES = 11 };

/* A step of a session that runs on: one call of `gate` (numbered n). */
static void running_step(char *out, size_t cap, unsigned n, bool final)
{
    snprintf(out, cap,
             "{\"turn\": %u, \"final\": %s, \"events\": ["
             " {\"type\": \"tool_call\", \"iteration\": %u, \"timestamp\": 1768557700%03u, \"toolName\": \"gate\","
             "  \"toolCallId\": \"g%u\", \"args\": {}},"
             " {\"type\": \"tool_result\", \"iteration\": %u, \"timestamp\": 1768557700%03u, \"toolCallId\": \"g%u\","
             "  \"result\": \"passed\", \"durationMs\": 1}%s],"
             " \"accounting\": [{\"kind\": \"model\", \"timestamp\": 1768557700%03u, \"latency_ms\": 1, \"input_tokens\": 10,"
             "  \"output_tokens\": 1, \"stop_reason\": \"tool_calls\", \"turn\": %u}]}",
             n, final ? "true" : "false", n, 10 * n, n, n, 10 * n + 1, n,
             final ? ", {\"type\": \"completion\", \"iteration\": 9, \"timestamp\": 1768557700999, \"result\": \"done\","
                     " \"status\": \"success\"}"
                   : "",
             10 * n, n);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/aw-serve-api.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    fx_store_url(url, sizeof url, dir);
    aw_error err;
    aw_store *s = aw_store_open(url, NULL, &err);
    if (!s) {
        fprintf(stderr, "store %s: %s\n", url, err.message);
        return -1;
    }
    for (int i = 0; i < 3; i++)
        snprintf(ids[i], sizeof ids[i], "t%ld-%c", (long)getpid(), 'a' + i);
    fx_session(s, ids[0], "alpha", "write the report", steps_a, 2);
    char step[2048];
    running_step(step, sizeof step, 1, false);
    const char *b_steps[] = {step};
    fx_session(s, ids[1], "beta", "keep going", b_steps, 1);
    fx_session(s, ids[2], "alpha", "find the needle", NULL, 0);
    assert_int_equal(aw_store_session_end(s, ids[2], "failed", "error", &err), 0);
    aw_store_close(s);
    srv = fx_server(url, NULL);
    port = aw_server_port(srv);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    aw_server_stop(srv);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- helpers ------------------------------------------------------------------------ */

static aw_json_doc *get_json(const char *path, int want_status)
{
    aw_http_resp r;
    if (aw_http_get(port, path, NULL, &r))
        fail_msg("GET %s: no answer", path);
    if (r.status != want_status)
        fail_msg("GET %s: %d, not %d: %s", path, r.status, want_status, r.body);
    char ct[128];
    assert_non_null(aw_http_header(&r, "Content-Type", ct, sizeof ct));
    assert_string_equal(ct, "application/json; charset=utf-8");
    aw_json_doc *d = NULL;
    aw_error err;
    if (aw_json_parse(r.body, r.body_len, NULL, &d, &err))
        fail_msg("GET %s: not JSON (%s): %s", path, err.message, r.body);
    aw_http_resp_free(&r);
    return d;
}

static const char *str(const aw_json_value *o, const char *key)
{
    const aw_json_value *v = aw_json_get(o, key);
    return aw_json_is_string(v) ? v->u.str.ptr : NULL;
}

static double num(const aw_json_value *o, const char *key)
{
    const aw_json_value *v = aw_json_get(o, key);
    assert_true(aw_json_is_number(v));
    return v->u.num.d;
}

/* The ids of the sessions a list gives, among ours, as "a", "ab", ... */
static void listed(const char *query, char *out)
{
    char path[512];
    snprintf(path, sizeof path, "/api/sessions%s", query);
    aw_json_doc *d = get_json(path, 200);
    const aw_json_value *list = aw_json_get(aw_json_doc_root(d), "sessions");
    size_t k = 0;
    for (size_t i = 0; i < aw_json_count(list); i++)
        for (int j = 0; j < 3; j++)
            if (!strcmp(str(aw_json_at(list, i), "id"), ids[j]))
                out[k++] = (char)('a' + j);
    out[k] = 0;
    aw_json_doc_free(d);
}

static void expect_status(const char *path, const char *headers, int status)
{
    aw_http_resp r;
    if (aw_http_get(port, path, headers, &r))
        fail_msg("GET %s: no answer", path);
    if (r.status != status)
        fail_msg("GET %s: %d, not %d: %s", path, r.status, status, r.body);
    aw_http_resp_free(&r);
}

/* The envelopes of a stream up to n (or until none comes for wait_ms). */
typedef struct got {
    char *ids[64];
    char *data[64];
    size_t n;
} got;

static void read_events(aw_sse *s, got *g, size_t n, int wait_ms)
{
    while (g->n < n && g->n < 64) {
        char *id, *data;
        if (aw_sse_next(s, &id, &data, wait_ms))
            break;
        g->ids[g->n] = id;
        g->data[g->n++] = data;
    }
}

static void got_free(got *g)
{
    for (size_t i = 0; i < g->n; i++) {
        free(g->ids[i]);
        free(g->data[i]);
    }
    g->n = 0;
}

static void type_of(const char *data, char *out, size_t cap)
{
    aw_json_doc *d = NULL;
    if (aw_json_parse(data, strlen(data), NULL, &d, NULL))
        fail_msg("an event is not JSON: %s", data);
    snprintf(out, cap, "%s", str(aw_json_doc_root(d), "type"));
    aw_json_doc_free(d);
}

/* ---- the list ------------------------------------------------------------------------ */

static void test_list_and_filters(void **state)
{
    (void)state;
    char who[8];
    listed("", who);
    assert_int_equal(strlen(who), 3);
    listed("?status=running", who);
    assert_string_equal(who, "b");
    listed("?agent=alpha", who);
    assert_int_equal(strlen(who), 2);
    assert_null(strchr(who, 'b'));
    listed("?q=NEEDLE", who); /* the task, any case */
    assert_string_equal(who, "c");
    listed("?q=needle&status=completed", who);
    assert_string_equal(who, "");
    listed("?agent=alpha&status=failed", who);
    assert_string_equal(who, "c");
    listed("?since=2999-01-01T00:00:00Z", who);
    assert_string_equal(who, "");
    aw_json_doc *d = get_json("/api/sessions?limit=1", 200);
    assert_int_equal(aw_json_count(aw_json_get(aw_json_doc_root(d), "sessions")), 1);
    assert_int_equal((int)num(aw_json_doc_root(d), "limit"), 1);
    aw_json_doc_free(d);
    /* the row has what the list page shows */
    d = get_json("/api/sessions?status=completed&agent=alpha", 200);
    const aw_json_value *row = aw_json_at(aw_json_get(aw_json_doc_root(d), "sessions"), 0);
    assert_string_equal(str(row, "id"), ids[0]);
    assert_int_equal((int)num(row, "turns"), 2);
    assert_int_equal((int)num(aw_json_get(row, "usage"), "input_tokens"), 250);
    assert_true(num(aw_json_get(row, "usage"), "cost_usd") == 0.0123);
    assert_true(num(row, "created_at") > 0);
    aw_json_doc_free(d);
    static const char *const bad[] = {"?limit=0", "?limit=1001", "?limit=x", "?offset=-1", "?since=yesterday"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char path[128];
        snprintf(path, sizeof path, "/api/sessions%s", bad[i]);
        d = get_json(path, 400);
        assert_non_null(str(aw_json_doc_root(d), "error"));
        aw_json_doc_free(d);
    }
}

/* ---- one session ----------------------------------------------------------------------- */

static void test_one_session(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "/api/sessions/%s", ids[0]);
    aw_json_doc *d = get_json(path, 200);
    const aw_json_value *root = aw_json_doc_root(d);
    const aw_json_value *s = aw_json_get(root, "session"), *steps = aw_json_get(root, "steps");
    assert_string_equal(str(s, "id"), ids[0]);
    assert_string_equal(str(s, "status"), "completed");
    assert_string_equal(str(s, "final_report"), "# Report\n\n" PWNED);
    assert_int_equal(aw_json_count(steps), 2);
    const aw_json_value *one = aw_json_at(steps, 0), *tools = aw_json_get(one, "tools");
    assert_int_equal((int)num(one, "step_number"), 1);
    assert_int_equal((int)num(one, "duration_ms"), 59); /* 1768557600001 (the request began) .. 060 */
    assert_int_equal((int)num(aw_json_get(one, "usage"), "prompt"), 100);
    assert_int_equal((int)num(one, "errors"), 1);
    assert_int_equal(aw_json_count(tools), 2);
    assert_string_equal(str(aw_json_at(tools, 0), "tool_name"), "search");
    assert_int_equal((int)num(aw_json_at(tools, 0), "duration_ms"), 40);
    assert_string_equal(str(aw_json_at(tools, 0), "result_summary"), PWNED); /* data, in a JSON string */
    assert_false(aw_json_get(aw_json_at(tools, 1), "success")->u.b);
    assert_string_equal(str(aw_json_at(tools, 1), "error"), "tool 'fetch' failed: boom");
    const aw_json_value *acc = aw_json_get(root, "accounting");
    assert_int_equal((int)num(acc, "model_requests"), 2);
    assert_int_equal((int)num(acc, "tool_calls"), 3);
    assert_int_equal((int)num(acc, "tool_failures"), 1);
    aw_json_doc_free(d);

    aw_json_doc *e = get_json("/api/sessions/no-such-session", 404);
    assert_non_null(strstr(str(aw_json_doc_root(e), "error"), "no session no-such-session"));
    assert_int_equal((int)num(aw_json_doc_root(e), "status"), 404);
    aw_json_doc_free(e);
    char longid[400];
    memset(longid, 'x', sizeof longid);
    memcpy(longid, "/api/sessions/", 14);
    longid[sizeof longid - 1] = 0;
    expect_status(longid, NULL, 400);
    expect_status("/api/sessions/%01bad", NULL, 400);
    snprintf(path, sizeof path, "/api/sessions/%s/nothing", ids[0]);
    expect_status(path, NULL, 404);
}

static void test_thread_and_accounting_downloads(void **state)
{
    (void)state;
    char path[256], value[256];
    snprintf(path, sizeof path, "/api/sessions/%s/thread", ids[0]);
    aw_http_resp r;
    assert_int_equal(aw_http_get(port, path, NULL, &r), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(aw_http_header(&r, "Content-Type", value, sizeof value), "application/xml; charset=utf-8");
    assert_null(aw_http_header(&r, "Content-Disposition", value, sizeof value));
    assert_true(!strncmp(r.body, "<thread>", 8));
    assert_non_null(strstr(r.body, "&lt;script&gt;")); /* escaped in the XML */
    assert_null(strstr(r.body, PWNED));
    aw_json_doc *events = NULL;
    aw_error err;
    if (aw_thread_decode(r.body, r.body_len, NULL, &events, &err))
        fail_msg("the thread does not decode: %s", err.message);
    assert_int_equal(aw_json_count(aw_json_doc_root(events)), 9);
    aw_json_doc_free(events);
    aw_http_resp_free(&r);

    snprintf(path, sizeof path, "/api/sessions/%s/accounting?download=1", ids[0]);
    assert_int_equal(aw_http_get(port, path, NULL, &r), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(aw_http_header(&r, "Content-Type", value, sizeof value), "application/x-ndjson; charset=utf-8");
    assert_non_null(aw_http_header(&r, "Content-Disposition", value, sizeof value));
    assert_non_null(strstr(value, "attachment; filename=\"agentwire-"));
    size_t lines = 0;
    for (char *p = r.body; (p = strchr(p, '\n')); p++)
        lines++;
    assert_int_equal(lines, 5);
    aw_http_resp_free(&r);
    expect_status("/api/sessions/no-such-session/thread", NULL, 404);
    expect_status("/api/sessions/no-such-session/accounting", NULL, 404);
}

/* ---- server-sent events ------------------------------------------------------------ */

static void open_stream(aw_sse *s, const char *id, const char *last_id)
{
    char path[256];
    snprintf(path, sizeof path, "/api/sessions/%s/events", id);
    if (aw_sse_open(s, port, path, last_id, 10000))
        fail_msg("no event stream for %s", id);
    assert_int_equal(s->status, 200);
}

/* A's whole stream, then again from every id it gave: each time exactly
 * the rest (none repeated, none lost), also from the middle of a stored
 * event's envelopes ("6.1"). */
static void test_events_and_resume(void **state)
{
    (void)state;
    aw_sse s;
    got all = {0};
    open_stream(&s, ids[0], NULL);
    read_events(&s, &all, A_ENVELOPES, 10000);
    assert_int_equal(all.n, A_ENVELOPES);
    for (size_t i = 0; i < all.n; i++) {
        char type[64];
        type_of(all.data[i], type, sizeof type);
        assert_string_equal(all.ids[i], a_ids[i]);
        assert_string_equal(type, a_types[i]);
        /* envelopes carry the session and a time */
        assert_non_null(strstr(all.data[i], ids[0]));
        assert_non_null(strstr(all.data[i], "\"timestamp\":\"2026-01-16T10:00:00."));
    }
    assert_non_null(strstr(all.data[3], "\"result_summary\":\"" PWNED "\""));
    assert_non_null(strstr(all.data[9], "\"usage\":{\"prompt\":150,\"completion\":30,\"total\":180}"));
    assert_non_null(strstr(all.data[10], "\"status\":\"completed\""));
    /* nothing more: the stream stays open and quiet (heartbeats only) */
    char *id, *data;
    assert_int_equal(aw_sse_next(&s, &id, &data, 800), -1);
    assert_true(s.comments > 0);
    aw_sse_close(&s);

    for (size_t from = 0; from < all.n; from++) {
        got rest = {0};
        open_stream(&s, ids[0], all.ids[from]);
        read_events(&s, &rest, all.n - from - 1, 10000);
        assert_int_equal(rest.n, all.n - from - 1);
        for (size_t i = 0; i < rest.n; i++) {
            assert_string_equal(rest.ids[i], all.ids[from + 1 + i]);
            assert_string_equal(rest.data[i], all.data[from + 1 + i]);
        }
        assert_int_equal(aw_sse_next(&s, &id, &data, 300), -1);
        aw_sse_close(&s);
        got_free(&rest);
    }
    /* ?after= for clients that cannot set the header */
    char path[256];
    snprintf(path, sizeof path, "/api/sessions/%s/events?after=7.1", ids[0]);
    assert_int_equal(aw_sse_open(&s, port, path, NULL, 10000), 0);
    got tail = {0};
    read_events(&s, &tail, 4, 10000);
    assert_int_equal(tail.n, 4);
    assert_string_equal(tail.ids[0], "7");
    aw_sse_close(&s);
    got_free(&tail);
    got_free(&all);

    static const char *const bad[] = {"x", "1.", ".1", "-1", "1.0", "1.2.3", "99999999999999999999", "1 ", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char hdr[128];
        snprintf(hdr, sizeof hdr, "Last-Event-ID: %s\r\n", bad[i]);
        snprintf(path, sizeof path, "/api/sessions/%s/events", ids[0]);
        expect_status(path, hdr, 400);
    }
    expect_status("/api/sessions/no-such-session/events", NULL, 404);
}

/* A follower of B is woken when steps are written, and gets them. */
static void test_events_follow_the_store(void **state)
{
    (void)state;
    aw_sse s;
    got g = {0};
    open_stream(&s, ids[1], NULL);
    read_events(&s, &g, 4, 10000); /* step 1: started, tool started, tool completed, step completed */
    assert_int_equal(g.n, 4);
    assert_string_equal(g.ids[3], "2");
    got_free(&g);
    aw_error err;
    aw_store *st = aw_store_open(url, NULL, &err);
    assert_non_null(st);
    char step[2048];
    running_step(step, sizeof step, 2, false);
    fx_step(st, ids[1], step);
    read_events(&s, &g, 4, 10000);
    assert_int_equal(g.n, 4);
    assert_string_equal(g.ids[0], "3.1");
    char type[64];
    type_of(g.data[0], type, sizeof type);
    assert_string_equal(type, "agent.step.started");
    assert_non_null(strstr(g.data[0], "\"step_number\":2"));
    got_free(&g);
    running_step(step, sizeof step, 3, true);
    fx_step(st, ids[1], step);
    read_events(&s, &g, 5, 10000);
    assert_int_equal(g.n, 5);
    type_of(g.data[4], type, sizeof type);
    assert_string_equal(type, "agent.status");
    got_free(&g);
    aw_sse_close(&s);
    aw_store_close(st);
}

/* A real run, held between its steps: its envelopes reach a follower
 * while it runs (it cannot go on before the test opens the gate). */
static void test_events_of_a_live_run(void **state)
{
    (void)state;
    char run_dir[300];
    snprintf(run_dir, sizeof run_dir, "%s/live", dir);
    assert_int_equal(mkdir(run_dir, 0700), 0);
    fx_run run;
    fx_run_start(&run, url, run_dir, 2);
    aw_sse s;
    open_stream(&s, run.session, NULL);
    fx_gate_open(&run); /* turn 1's call ends; turn 2's waits */
    got g = {0};
    read_events(&s, &g, 4, 20000);
    assert_int_equal(g.n, 4);
    char type[64];
    type_of(g.data[3], type, sizeof type);
    assert_string_equal(type, "agent.step.completed");
    assert_non_null(strstr(g.data[3], "\"prompt\":120"));
    assert_true(fx_run_alive(&run)); /* held at the gate: the envelopes came as it ran */
    got_free(&g);
    fx_gate_open(&run);
    read_events(&s, &g, 9, 20000); /* step 2 (4), step 3: started, call, result, completed, status */
    assert_int_equal(g.n, 9);
    type_of(g.data[8], type, sizeof type);
    assert_string_equal(type, "agent.status");
    assert_non_null(strstr(g.data[8], "All **2** gates passed."));
    got_free(&g);
    aw_sse_close(&s);
    assert_int_equal(fx_run_wait(&run, 30000), 0);
}

/* ---- the token rule ---------------------------------------------------------------------- */

static void test_token_rule(void **state)
{
    (void)state;
    aw_error err;
    aw_serve_options o = {.store_url = url, .listen = "0.0.0.0:0"};
    assert_null(aw_server_start(&o, &err));
    assert_int_equal(err.code, AW_EINVAL);
    assert_non_null(strstr(err.message, "not a loopback address"));
    assert_non_null(strstr(err.message, "--token"));
    o.listen = "[::]:0";
    assert_null(aw_server_start(&o, &err));
    assert_non_null(strstr(err.message, "not a loopback address"));
    o.listen = "127.0.0.1:0";
    o.token = "short";
    assert_null(aw_server_start(&o, &err));
    assert_non_null(strstr(err.message, "at least 16"));
    o.token = "has a space in it, sadly";
    assert_null(aw_server_start(&o, &err));
    o.token = NULL;
    static const char *const bad_listen[] = {"127.0.0.1", "127.0.0.1:", "127.0.0.1:99999", ":80", "no-such-host.invalid:80"};
    for (size_t i = 0; i < sizeof bad_listen / sizeof *bad_listen; i++) {
        o.listen = bad_listen[i];
        assert_null(aw_server_start(&o, &err));
        assert_int_equal(err.code, AW_EINVAL);
    }
    /* the port in use already */
    char busy[64];
    snprintf(busy, sizeof busy, "127.0.0.1:%u", port);
    o.listen = busy;
    assert_null(aw_server_start(&o, &err));
    assert_non_null(strstr(err.message, "in use"));

    const char *token = "0123456789abcdef-secret";
    aw_server *guarded = fx_server(url, token);
    uint16_t p = aw_server_port(guarded);
    aw_http_resp r;
    assert_int_equal(aw_http_get(p, "/api/sessions", NULL, &r), 0);
    assert_int_equal(r.status, 401);
    char v[128];
    assert_string_equal(aw_http_header(&r, "WWW-Authenticate", v, sizeof v), "Bearer realm=\"agentwire\"");
    aw_http_resp_free(&r);
    static const struct {
        const char *path, *headers;
        int status;
    } cases[] = {
        {"/api/sessions", "Authorization: Bearer 0123456789abcdef-secret\r\n", 200},
        {"/api/sessions?token=0123456789abcdef-secret", NULL, 200},
        {"/api/sessions", "Authorization: bearer 0123456789abcdef-secret\r\n", 200},
        {"/api/sessions", "Authorization: Bearer 0123456789abcdef-secreT\r\n", 401},
        {"/api/sessions", "Authorization: Bearer 0123456789abcdef-secret-and-more\r\n", 401},
        {"/api/sessions?token=0123456789abcdef", NULL, 401},
        {"/api/sessions/x/events", NULL, 401},
        /* pages and scripts hold no session data */
        {"/", NULL, 200},
        {"/static/session.js", NULL, 200},
        /* another Host is fine once a token guards the data */
        {"/api/sessions", "Host: viewer.example\r\nAuthorization: Bearer 0123456789abcdef-secret\r\n", 200},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        assert_int_equal(aw_http_get(p, cases[i].path, cases[i].headers, &r), 0);
        if (r.status != cases[i].status)
            fail_msg("case %zu (%s): %d, not %d", i, cases[i].path, r.status, cases[i].status);
        aw_http_resp_free(&r);
    }
    aw_server_stop(guarded);
}

/* ---- HTTP hygiene ------------------------------------------------------------------------------ */

static void raw_status(const char *request, size_t len, int want)
{
    aw_http_resp r;
    if (aw_http_raw(port, request, len, &r, 10000))
        fail_msg("no answer to %.60s", request);
    if (r.status != want)
        fail_msg("%.60s: %d, not %d", request, r.status, want);
    aw_http_resp_free(&r);
}

static void test_http_hygiene(void **state)
{
    (void)state;
    aw_http_resp r;
    char v[512];
    /* pages, scripts and styles, with their types and validators */
    static const struct {
        const char *path, *type;
    } files[] = {{"/", "text/html; charset=utf-8"},
                 {"/sessions/anything", "text/html; charset=utf-8"},
                 {"/static/app.css", "text/css; charset=utf-8"},
                 {"/static/common.js", "text/javascript; charset=utf-8"},
                 {"/static/markdown.js", "text/javascript; charset=utf-8"}};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        assert_int_equal(aw_http_get(port, files[i].path, NULL, &r), 0);
        assert_int_equal(r.status, 200);
        assert_string_equal(aw_http_header(&r, "Content-Type", v, sizeof v), files[i].type);
        assert_string_equal(aw_http_header(&r, "Cache-Control", v, sizeof v), "no-cache");
        assert_non_null(aw_http_header(&r, "ETag", v, sizeof v));
        char inm[600];
        snprintf(inm, sizeof inm, "If-None-Match: %s\r\n", v);
        aw_http_resp_free(&r);
        assert_int_equal(aw_http_get(port, files[i].path, inm, &r), 0);
        assert_int_equal(r.status, 304);
        assert_int_equal(r.body_len, 0);
        aw_http_resp_free(&r);
    }
    /* every answer: the content security policy and no sniffing */
    assert_int_equal(aw_http_get(port, "/api/sessions", NULL, &r), 0);
    assert_non_null(aw_http_header(&r, "Content-Security-Policy", v, sizeof v));
    assert_true(!strncmp(v, "default-src 'self'", 18));
    assert_string_equal(aw_http_header(&r, "X-Content-Type-Options", v, sizeof v), "nosniff");
    assert_string_equal(aw_http_header(&r, "Cache-Control", v, sizeof v), "no-store");
    aw_http_resp_free(&r);

    /* only embedded files; no path leads anywhere else */
    static const char *const missing[] = {"/static/../../../../etc/passwd", "/static/%2e%2e/%2e%2e/etc/passwd",
                                          "/static/", "/static/index.html", "/static/session.html", "/etc/passwd",
                                          "/sessions/", "/favicon.ico", "/api", "/api/other", "/sessions/a/b"};
    for (size_t i = 0; i < sizeof missing / sizeof *missing; i++) {
        assert_int_equal(aw_http_get(port, missing[i], NULL, &r), 0);
        if (r.status != 404)
            fail_msg("%s: %d, not 404", missing[i], r.status);
        assert_non_null(strstr(r.body, "\"error\""));
        assert_null(strstr(r.body, "root:"));
        aw_http_resp_free(&r);
    }
    /* methods */
    static const char *const methods[] = {"POST", "PUT", "DELETE", "PATCH", "OPTIONS"};
    for (size_t i = 0; i < sizeof methods / sizeof *methods; i++) {
        char req[256];
        snprintf(req, sizeof req, "%s /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n"
                                  "Connection: close\r\n\r\n{}", methods[i]);
        assert_int_equal(aw_http_raw(port, req, strlen(req), &r, 10000), 0);
        assert_int_equal(r.status, 405);
        assert_string_equal(aw_http_header(&r, "Allow", v, sizeof v), "GET, HEAD");
        aw_http_resp_free(&r);
    }
    /* a GET with a body: read, dropped and refused */
    const char with_body[] = "GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n"
                             "Connection: close\r\n\r\nhello";
    raw_status(with_body, strlen(with_body), 400);
    /* two requests on one connection: it is kept open between them */
    const char two[] = "GET /static/app.css HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                       "GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    assert_int_equal(aw_http_raw(port, two, strlen(two), &r, 10000), 0);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "HTTP/1.1 200 OK"));
    assert_non_null(strstr(r.body, "\"sessions\":["));
    aw_http_resp_free(&r);
    const char head[] = "HEAD /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    assert_int_equal(aw_http_raw(port, head, strlen(head), &r, 10000), 0);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.body_len, 0);
    aw_http_resp_free(&r);
    /* another Host on a loopback server without a token (DNS rebinding) */
    expect_status("/api/sessions", "Host: attacker.example\r\n", 403);
    expect_status("/api/sessions", "Host: localhost:8080\r\n", 200);
    expect_status("/api/sessions", "Host: [::1]:8080\r\n", 200);
    /* huge headers, a huge path, garbage: refused, and the server goes on */
    size_t big = 200 * 1024;
    char *req = malloc(big + 256);
    int k = sprintf(req, "GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ");
    memset(req + k, 'a', big);
    strcpy(req + k + big, "\r\nConnection: close\r\n\r\n");
    aw_http_raw(port, req, strlen(req), &r, 10000);
    assert_true(r.status == 431 || r.status == 413 || r.status == 400 || r.status == 0);
    aw_http_resp_free(&r);
    k = sprintf(req, "GET /api/sessions/");
    memset(req + k, 'b', big);
    strcpy(req + k + big, " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    aw_http_raw(port, req, strlen(req), &r, 10000);
    assert_true(r.status == 414 || r.status == 431 || r.status == 400 || r.status == 0);
    aw_http_resp_free(&r);
    free(req);
    /* libmicrohttpd closes on a request line without a version */
    assert_true(aw_http_raw(port, "GARBAGE\r\n\r\n", 11, &r, 10000) == -1 || r.status == 400);
    aw_http_resp_free(&r);
    raw_status("GET /api/sessions HTTP/9.9\r\nHost: x\r\n\r\n", 38, 505);
    expect_status("/api/sessions", NULL, 200);
}

/* A connection to the server with a tiny receive window, request sent. */
static int hold(uint16_t p, const char *request)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int small = 1024;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(p)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_true(send(fd, request, strlen(request), MSG_NOSIGNAL) == (ssize_t)strlen(request));
    return fd;
}

/* A follower that never reads a long stream (the server's socket to it
 * fills up), a client that never finishes
 * its request and twenty idle followers hold nobody else up; the server
 * stops with all of them open. */
static void test_slow_clients_and_stop(void **state)
{
    (void)state;
    char big[64], step[4096];
    snprintf(big, sizeof big, "t%ld-big", (long)getpid());
    aw_error err;
    aw_store *st = aw_store_open(url, NULL, &err);
    assert_non_null(st);
    fx_session(st, big, "gamma", "a long one", NULL, 0);
    /* tools with 64 KiB names: 70 steps make about 18 MiB of envelopes,
     * more than the socket buffers hold (tcp_wmem's most is 4 MiB) */
    size_t name_len = 64 * 1024;
    char *name = malloc(name_len + 1), *json = malloc(2 * name_len + 4096);
    memset(name, 'n', name_len);
    name[name_len] = 0;
    for (unsigned n = 1; n <= 70; n++) {
        running_step(step, sizeof step, n, false);
        char *at = strstr(step, "\"gate\"");
        size_t k = (size_t)(at - step) + 1;
        memcpy(json, step, k);
        strcpy(json + k, name);
        strcpy(json + k + name_len, at + 5);
        fx_step(st, big, json);
    }
    free(name);
    free(json);
    aw_store_close(st);
    aw_server *own = fx_server(url, NULL);
    uint16_t p = aw_server_port(own);
    char req[256];
    snprintf(req, sizeof req, "GET /api/sessions/%s/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", big);
    int stuck = hold(p, req), half = hold(p, "GET /api/sess");
    aw_sse many[20];
    char path[256];
    snprintf(path, sizeof path, "/api/sessions/%s/events", ids[0]);
    for (int i = 0; i < 20; i++)
        assert_int_equal(aw_sse_open(&many[i], p, path, "9", 10000), 0);
    aw_http_resp r;
    for (int i = 0; i < 6; i++) {
        assert_int_equal(aw_http_get(p, i % 2 ? "/api/sessions" : "/static/app.css", NULL, &r), 0);
        assert_int_equal(r.status, 200);
        aw_http_resp_free(&r);
    }
    /* its summary, read a piece at a time, has every step */
    char one[128];
    snprintf(one, sizeof one, "/api/sessions/%s", big);
    assert_int_equal(aw_http_get(p, one, NULL, &r), 0);
    assert_int_equal(r.status, 200);
    aw_json_doc *d = NULL;
    assert_int_equal(aw_json_parse(r.body, r.body_len, NULL, &d, NULL), 0);
    const aw_json_value *steps = aw_json_get(aw_json_doc_root(d), "steps");
    assert_int_equal(aw_json_count(steps), 70);
    assert_int_equal((int)num(aw_json_at(steps, 69), "step_number"), 70);
    assert_int_equal(aw_json_get(aw_json_at(aw_json_get(aw_json_at(steps, 69), "tools"), 0), "tool_name")->u.str.len,
                     name_len);
    aw_json_doc_free(d);
    aw_http_resp_free(&r);
    aw_sse fresh;
    assert_int_equal(aw_sse_open(&fresh, p, path, "7.1", 10000), 0);
    got g = {0};
    read_events(&fresh, &g, 4, 10000);
    assert_int_equal(g.n, 4);
    got_free(&g);
    aw_server_stop(own); /* with every stream open */
    for (int i = 0; i < 20; i++) {
        char *id, *data;
        assert_int_equal(aw_sse_next(&many[i], &id, &data, 5000), -1);
        assert_true(many[i].closed);
        aw_sse_close(&many[i]);
    }
    aw_sse_close(&fresh);
    close(stuck);
    close(half);
}

/* ---- allocation failures ---------------------------------------------------------------- */

/* A server started with the allocator, asked for one session's view and
 * its events, and stopped: whichever allocation fails, it fails cleanly
 * (no start, or a 500, or a closed connection) and leaks nothing. The
 * requests are made one at a time, so the allocator is used by one
 * thread at a time. */
static int serve_once(const aw_allocator *a, void *ctx)
{
    (void)ctx;
    aw_serve_options o = {.store_url = url, .listen = "127.0.0.1:0", .threads = 1, .alloc = a};
    aw_error err;
    aw_server *own = aw_server_start(&o, &err);
    if (!own)
        return err.code;
    char path[256];
    aw_http_resp r;
    snprintf(path, sizeof path, "/api/sessions/%s", ids[0]);
    int rc = aw_http_get(aw_server_port(own), path, NULL, &r) ? AW_ENOMEM : 0;
    if (!rc && r.status != 200)
        rc = AW_ENOMEM;
    aw_http_resp_free(&r);
    snprintf(path, sizeof path, "/api/sessions/%s/thread", ids[0]);
    if (!rc && (aw_http_get(aw_server_port(own), path, NULL, &r) || r.status != 200))
        rc = AW_ENOMEM;
    aw_http_resp_free(&r);
    aw_server_stop(own);
    return rc;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    long calls = aw_failalloc_run(serve_once, NULL, 0);
    printf("allocation failures: %ld points swept\n", calls);
    assert_true(calls > 50);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_and_filters),
        cmocka_unit_test(test_one_session),
        cmocka_unit_test(test_thread_and_accounting_downloads),
        cmocka_unit_test(test_events_and_resume),
        cmocka_unit_test(test_events_follow_the_store),
        cmocka_unit_test(test_events_of_a_live_run),
        cmocka_unit_test(test_token_rule),
        cmocka_unit_test(test_http_hygiene),
        cmocka_unit_test(test_slow_clients_and_stop),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
