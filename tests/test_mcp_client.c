/* The MCP client against a hostile server (tests/mcp/hostile_server.js):
 * the handshake, results of every kind, progress, pagination, list
 * changes, the server's own requests, logging, and each robustness case —
 * a server that cannot start, never answers, answers with a version nobody
 * speaks, writes garbage or a line of 100 MB, crashes mid-call (restarted
 * once, then down), hangs (the call times out and is cancelled) — and the
 * shutdown that leaves no process behind. Also the configuration, the
 * --mcp spec and allocation failures of a source's start, list and call. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "agentwire/buf.h"
#include "agentwire/mcp.h"
#include "failalloc.h"
#include "testutil.h"

#define HOSTILE AW_SOURCE_DIR "/tests/mcp/hostile_server.js"

typedef struct harness {
    aw_loop *loop;
    aw_toolbox *box;
    bool ready;
    int changes;
    aw_buf log;
    char log_file[64]; /* HOSTILE_LOG */
} harness;

static void h_log(void *ctx, int level, const char *source, const char *msg)
{
    harness *h = ctx;
    static const char *names[] = {"debug", "info", "warn", "error"};
    aw_buf_printf(&h->log, "%s %s: %.3000s\n", names[level & 3], source, msg);
}

static void h_ready(void *ctx) { ((harness *)ctx)->ready = true; }
static void h_changed(void *ctx) { ((harness *)ctx)->changes++; }

static void spin_until(harness *h, bool *flag, int64_t max_ms)
{
    int64_t end = aw_loop_clock() + max_ms;
    while (!*flag && aw_loop_clock() < end)
        aw_loop_once(h->loop, 20);
    assert_true(*flag);
}

/* A config of servers "NAME=MODE" of the hostile server, or raw JSON. */
static void h_open_config(harness *h, const char *config, const aw_mcp_options *opts)
{
    aw_json_doc *doc = NULL;
    aw_error err;
    assert_int_equal(aw_json_parse(config, strlen(config), NULL, &doc, &err), 0);
    h->loop = aw_loop_new(NULL, NULL);
    h->box = aw_toolbox_new(h->loop, NULL);
    aw_buf_init(&h->log, NULL);
    aw_toolbox_set_log(h->box, h_log, h);
    aw_toolbox_on_change(h->box, h_changed, h);
    int rc = aw_mcp_add_config(h->box, h->loop, aw_json_doc_root(doc), NULL, opts, &err);
    if (rc)
        fail_msg("add_config: %s", err.message);
    aw_json_doc_free(doc);
    assert_int_equal(aw_toolbox_start(h->box, h_ready, h), 0);
    spin_until(h, &h->ready, 20000);
}

static void h_open(harness *h, const char *mode, const aw_mcp_options *opts)
{
    memset(h, 0, sizeof *h);
    snprintf(h->log_file, sizeof h->log_file, "/tmp/aw-mcp-test-%d.log", (int)getpid());
    unlink(h->log_file);
    char config[1024];
    snprintf(config, sizeof config,
             "{\"mcpServers\":{\"h\":{\"command\":\"node\",\"args\":[\"%s\",\"%s\"],\"env\":{\"HOSTILE_LOG\":\"%s\"},"
             "\"unknownKey\":1}}}",
             HOSTILE, mode, h->log_file);
    h_open_config(h, config, opts);
}

static void h_close(harness *h)
{
    aw_toolbox_free(h->box);
    aw_loop_free(h->loop);
    aw_buf_free(&h->log);
    if (h->log_file[0])
        unlink(h->log_file);
}

static const char *h_logged(harness *h) { return h->log.data ? h->log.data : ""; }

static bool has_tool(harness *h, const char *name)
{
    size_t n;
    const aw_tool_def *defs = aw_toolbox_defs(h->box, &n);
    for (size_t i = 0; i < n; i++)
        if (defs[i].name.len == strlen(name) && !memcmp(defs[i].name.ptr, name, defs[i].name.len))
            return true;
    return false;
}

typedef struct outcome {
    bool done, ok, timed_out;
    char output[4096];
    char structured[512];
    int progress_count;
    double last_progress, last_total;
    char last_message[64];
} outcome;

static void o_done(void *ctx, const aw_tool_result *res)
{
    outcome *o = ctx;
    o->done = true;
    o->ok = res->ok;
    o->timed_out = res->timed_out;
    snprintf(o->output, sizeof o->output, "%.*s", (int)res->output.len, res->output.ptr);
    if (res->structured) {
        aw_buf b;
        aw_buf_init(&b, NULL);
        aw_json_write(res->structured, NULL, &b, NULL);
        snprintf(o->structured, sizeof o->structured, "%s", b.data);
        aw_buf_free(&b);
    }
}

static void o_progress(void *ctx, double progress, double total, aw_text message)
{
    outcome *o = ctx;
    o->progress_count++;
    o->last_progress = progress;
    o->last_total = total;
    snprintf(o->last_message, sizeof o->last_message, "%.*s", (int)message.len, message.ptr);
}

static void h_call(harness *h, const char *tool, const char *args, int64_t timeout_ms, outcome *o)
{
    memset(o, 0, sizeof *o);
    aw_json_doc *doc = NULL;
    assert_int_equal(aw_json_parse(args, strlen(args), NULL, &doc, NULL), 0);
    aw_tool_call_opts opts = {.on_progress = o_progress, .progress_ctx = o};
    aw_tool_call *c;
    aw_error err;
    assert_int_equal(aw_toolbox_call(h->box, (aw_text){tool, strlen(tool)}, aw_json_doc_root(doc), timeout_ms, &opts,
                                     o_done, o, &c, &err),
                     0);
    aw_json_doc_free(doc);
    spin_until(h, &o->done, 60000);
}

/* Wait (serving the loop) for the hostile server's log to hold a line. */
static bool server_noted(harness *h, const char *what)
{
    for (int i = 0; i < 250; i++) {
        FILE *f = fopen(h->log_file, "r");
        char line[512];
        bool hit = false;
        while (f && fgets(line, sizeof line, f))
            hit = hit || strstr(line, what);
        if (f)
            fclose(f);
        if (hit)
            return true;
        aw_loop_once(h->loop, 20);
    }
    return false;
}


/* ---- the protocol ------------------------------------------------------------------ */

static void test_handshake_and_tool_names(void **state)
{
    (void)state;
    harness h;
    h_open(&h, "normal", NULL);
    assert_true(has_tool(&h, "h__echo"));
    /* '.' and '/' are not for model APIs */
    assert_true(has_tool(&h, "h__dotted_name_x"));
    size_t n;
    const aw_tool_def *defs = aw_toolbox_defs(h.box, &n);
    assert_int_equal(n, 17);
    assert_true(aw_json_is_object(aw_json_get(defs[0].schema, "properties")));
    assert_true(server_noted(&h, "initialize 2025-11-25 {\"name\":\"agentwire\""));
    assert_true(server_noted(&h, "initialized"));
    outcome o;
    h_call(&h, "h__dotted_name_x", "{}", 10000, &o); /* called by its own name */
    assert_false(o.ok);
    assert_string_equal(o.output, "(tool failed: server 'h' answered with error -32602: Unknown tool: dotted.name/x)");
    h_close(&h);
}

static void test_results_of_every_kind(void **state)
{
    (void)state;
    harness h;
    h_open(&h, "normal", NULL);
    outcome o;
    h_call(&h, "h__echo", "{\"text\":\"hi\"}", 10000, &o);
    assert_true(o.ok);
    assert_string_equal(o.output, "echo: hi");

    h_call(&h, "h__fail", "{}", 10000, &o);
    assert_false(o.ok);
    assert_string_equal(o.output, "it failed on purpose");

    h_call(&h, "h__rpcerror", "{}", 10000, &o);
    assert_false(o.ok);
    assert_string_equal(o.output, "(tool failed: server 'h' answered with error -32602: bad arguments on purpose)");

    h_call(&h, "h__image", "{}", 10000, &o);
    assert_true(o.ok);
    assert_string_equal(o.output, "an image follows\n[image: image/png, 34 KB]\n[audio: audio/wav, 3 KB]");

    h_call(&h, "h__resource", "{}", 10000, &o);
    assert_string_equal(o.output, "[resource: test://doc/1, text/plain, 120 bytes]\n"
                                  "[resource link: report (file:///tmp/report.pdf), application/pdf, 2 KB]\n"
                                  "[future_kind content]\n[content of an unknown type]");

    h_call(&h, "h__structured", "{}", 10000, &o);
    assert_true(o.ok);
    assert_string_equal(o.output, "{\"temperature\":21.5,\"unit\":\"C\"}");
    assert_string_equal(o.structured, "{\"temperature\":21.5,\"unit\":\"C\"}");
    h_close(&h);
}

static void test_progress_reaches_the_caller(void **state)
{
    (void)state;
    harness h;
    h_open(&h, "normal", NULL);
    outcome o;
    h_call(&h, "h__progress", "{}", 10000, &o);
    assert_true(o.ok);
    assert_string_equal(o.output, "done after 3 steps");
    assert_int_equal(o.progress_count, 3);
    assert_true(o.last_progress == 3 && o.last_total == 3);
    assert_string_equal(o.last_message, "step 3");
    h_close(&h);
}

static void test_pagination(void **state)
{
    (void)state;
    harness h;
    h_open(&h, "paged", NULL);
    size_t n;
    aw_toolbox_defs(h.box, &n);
    assert_int_equal(n, 17);
    assert_true(has_tool(&h, "h__grandchild"));
    assert_true(server_noted(&h, "tools/list cursor 16"));
    h_close(&h);
}

static void test_list_changes_are_taken(void **state)
{
    (void)state;
    harness h;
    h_open(&h, "normal", NULL);
    outcome o;
    h_call(&h, "h__change", "{}", 10000, &o);
    assert_string_equal(o.output, "changed");
    for (int i = 0; i < 250 && !h.changes; i++)
        aw_loop_once(h.loop, 20);
    assert_int_equal(h.changes, 1);
    assert_true(has_tool(&h, "h__added"));
    assert_false(has_tool(&h, "h__echo"));
    h_call(&h, "h__added", "{}", 10000, &o); /* reaches the server under its new name */
    assert_string_equal(o.output, "(tool failed: server 'h' answered with error -32602: Unknown tool: added)");
    h_close(&h);
}

static void test_server_requests_are_answered(void **state)
{
    (void)state;
    harness h;
    h_open(&h, "normal", NULL);
    outcome o;
    h_call(&h, "h__ask", "{}", 10000, &o);
    /* ping is answered; sampling, roots and elicitation are not offered */
    assert_string_equal(o.output, "ok {}; error -32601; error -32601; error -32601");
    h_close(&h);
}

static void test_logging_and_stderr_go_to_the_log(void **state)
{
    (void)state;
    harness h;
    h_open(&h, "normal", NULL);
    outcome o;
    h_call(&h, "h__log", "{}", 10000, &o);
    assert_string_equal(o.output, "logged");
    for (int i = 0; i < 100 && !strstr(h_logged(&h), "model must not see"); i++)
        aw_loop_once(h.loop, 20);
    assert_non_null(strstr(h_logged(&h), "warn mcp server 'h': [hostile] a warning from the server\n"));
    assert_non_null(strstr(h_logged(&h), "info mcp server 'h': a line on stderr that the model must not see\n"));
    h_close(&h);

    /* or to a file of their own */
    char path[64];
    snprintf(path, sizeof path, "/tmp/aw-mcp-stderr-%d.log", (int)getpid());
    unlink(path);
    aw_mcp_options opts = {.stderr_log = path};
    h_open(&h, "normal", &opts);
    h_call(&h, "h__log", "{}", 10000, &o);
    h_close(&h);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char buf[4096] = {0};
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    buf[got] = 0;
    fclose(f);
    unlink(path);
    assert_non_null(strstr(buf, "h: a line on stderr that the model must not see\n"));
}

static void test_older_version_is_accepted(void **state)
{
    (void)state;
    harness h;
    h_open(&h, "oldversion", NULL);
    outcome o;
    h_call(&h, "h__echo", "{\"text\":\"old\"}", 10000, &o);
    assert_string_equal(o.output, "echo: old");
    h_close(&h);
}

/* ---- robustness --------------------------------------------------------------------- */

static void test_unknown_version_is_refused(void **state)
{
    (void)state;
    harness h;
    h_open(&h, "badversion", NULL);
    assert_false(has_tool(&h, "h__echo"));
    assert_non_null(strstr(h_logged(&h), "error mcp server 'h': answered initialize with protocol version "
                                          "'1999-01-01', which agentwire does not speak"));
    h_close(&h);
}

static void test_server_that_cannot_start(void **state)
{
    (void)state;
    harness h;
    memset(&h, 0, sizeof h);
    h_open_config(&h,
                  "{\"mcpServers\":{\"gone\":{\"command\":\"/nonexistent/mcp-server\"},"
                  "\"web\":{\"url\":\"https://example.invalid/mcp\"},\"sse\":{\"type\":\"sse\",\"url\":\"x\"},"
                  "\"off\":{\"command\":\"/nonexistent\",\"disabled\":true},"
                  "\"h\":{\"command\":\"node\",\"args\":[\"" HOSTILE "\"]}}}",
                  NULL);
    assert_non_null(strstr(h_logged(&h), "error mcp server 'gone': cannot run '/nonexistent/mcp-server': No such file or "
                                          "directory; its tools are left out\n"));
    assert_non_null(strstr(h_logged(&h), "error mcp server 'web': it is reached by URL"));
    assert_non_null(strstr(h_logged(&h), "error mcp server 'sse': its transport 'sse' is not supported"));
    assert_null(strstr(h_logged(&h), "'off'"));
    /* the others go on */
    outcome o;
    h_call(&h, "h__echo", "{\"text\":\"still here\"}", 10000, &o);
    assert_string_equal(o.output, "echo: still here");
    h_close(&h);
}

static void test_server_that_exits_at_once(void **state)
{
    (void)state;
    harness h;
    h_open(&h, "exit", NULL);
    assert_non_null(strstr(h_logged(&h), "error mcp server 'h': exited (exit status 3) before it was ready; its stderr "
                                          "ends: hostile: exiting at once as asked; its tools are left out"));
    h_close(&h);
}

static void test_server_that_never_answers_initialize(void **state)
{
    (void)state;
    harness h;
    memset(&h, 0, sizeof h);
    h.loop = aw_loop_new(NULL, NULL);
    h.box = aw_toolbox_new(h.loop, NULL);
    aw_buf_init(&h.log, NULL);
    aw_toolbox_set_log(h.box, h_log, &h);
    /* a short handshake budget for the mute one only: the other may take
     * as long as node takes to start on a busy machine */
    const char *mute_json = "{\"command\":\"node\",\"args\":[\"" HOSTILE "\",\"noinit\"]}";
    const char *good_json = "{\"command\":\"node\",\"args\":[\"" HOSTILE "\"]}";
    aw_json_doc *mute = NULL, *good = NULL;
    assert_int_equal(aw_json_parse(mute_json, strlen(mute_json), NULL, &mute, NULL), 0);
    assert_int_equal(aw_json_parse(good_json, strlen(good_json), NULL, &good, NULL), 0);
    aw_mcp_options quick = {.init_timeout_ms = 300, .grace_ms = 200};
    assert_int_equal(aw_toolbox_add(h.box, aw_mcp_source_new(h.loop, "mute", aw_json_doc_root(mute), NULL, &quick, NULL)), 0);
    assert_int_equal(aw_toolbox_add(h.box, aw_mcp_source_new(h.loop, "h", aw_json_doc_root(good), NULL, NULL, NULL)), 0);
    aw_json_doc_free(mute);
    aw_json_doc_free(good);
    assert_int_equal(aw_toolbox_start(h.box, h_ready, &h), 0);
    spin_until(&h, &h.ready, 30000);
    assert_non_null(strstr(h_logged(&h), "error mcp server 'mute': did not answer initialize within 300 ms"));
    assert_true(has_tool(&h, "h__echo"));
    assert_false(has_tool(&h, "mute__echo"));
    h_close(&h);
}

static void test_garbage_is_skipped_or_fails_its_call(void **state)
{
    (void)state;
    harness h;
    h_open(&h, "garbage", NULL);
    assert_non_null(strstr(h_logged(&h), "warn mcp server 'h': wrote a line that is not a JSON-RPC message (not JSON"));
    outcome o;
    h_call(&h, "h__garbage", "{}", 10000, &o);
    assert_false(o.ok);
    assert_non_null(strstr(o.output, "(tool failed: server 'h' answered with a line that is not a JSON-RPC message "
                                     "(not JSON: "));
    h_call(&h, "h__echo", "{\"text\":\"after\"}", 10000, &o);
    assert_string_equal(o.output, "echo: after");
    h_close(&h);
}

static void test_line_of_100_mb_fails_its_call(void **state)
{
    (void)state;
    harness h;
    h_open(&h, "normal", NULL);
    outcome o;
    h_call(&h, "h__huge", "{}", 60000, &o);
    assert_false(o.ok);
    char want[160];
    snprintf(want, sizeof want,
             "(tool failed: server 'h' answered with a message of %d bytes, over the limit of 16777216)",
             100 * (1 << 20) + 73);
    assert_string_equal(o.output, want);
    h_call(&h, "h__echo", "{\"text\":\"after\"}", 10000, &o);
    assert_string_equal(o.output, "echo: after");
    h_close(&h);
}

static void test_crash_restarts_once_then_down(void **state)
{
    (void)state;
    harness h;
    h_open(&h, "normal", NULL);
    outcome o;
    h_call(&h, "h__pid", "{}", 10000, &o);
    long first = atol(o.output);
    h_call(&h, "h__crash", "{}", 10000, &o);
    assert_false(o.ok);
    assert_string_equal(o.output, "(tool failed: server 'h' exited (killed by signal 9) during the call)");
    /* restarted, transparently */
    h_call(&h, "h__pid", "{}", 10000, &o);
    assert_true(o.ok);
    long second = atol(o.output);
    assert_true(second > 0 && second != first);
    h_call(&h, "h__crash", "{}", 10000, &o);
    assert_string_equal(o.output, "(tool failed: server 'h' exited (killed by signal 9) during the call)");
    h_call(&h, "h__echo", "{}", 10000, &o);
    assert_false(o.ok);
    assert_string_equal(o.output, "(tool failed: server 'h' is down: it exited twice (last: killed by signal 9))");
    h_close(&h);
}

static void test_hang_times_out_and_is_cancelled(void **state)
{
    (void)state;
    harness h;
    h_open(&h, "normal", NULL);
    outcome o;
    h_call(&h, "h__hang", "{}", 300, &o);
    assert_true(o.timed_out);
    assert_false(o.ok);
    /* ids: 1 initialize, 2 tools/list, 3 the call */
    assert_true(server_noted(&h, "cancelled 3"));
    h_call(&h, "h__echo", "{\"text\":\"after\"}", 10000, &o);
    assert_string_equal(o.output, "echo: after");
    h_close(&h);
}

static void test_shutdown_leaves_nothing_behind(void **state)
{
    (void)state;
    harness h;
    h_open(&h, "normal", NULL);
    outcome o;
    h_call(&h, "h__pid", "{}", 10000, &o);
    pid_t server = (pid_t)atol(o.output);
    h_call(&h, "h__grandchild", "{}", 10000, &o);
    pid_t grandchild = (pid_t)atol(o.output);
    assert_true(aw_test_pid_alive(server) && aw_test_pid_alive(grandchild));
    char log_file[64];
    strcpy(log_file, h.log_file);
    h.log_file[0] = 0;
    h_close(&h);
    assert_false(aw_test_pid_alive(server));
    for (int i = 0; i < 100 && aw_test_pid_alive(grandchild); i++)
        usleep(10000);
    assert_false(aw_test_pid_alive(grandchild));
    /* the graceful way first: the server saw its stdin close */
    FILE *f = fopen(log_file, "r");
    char buf[8192] = {0};
    size_t got = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[got] = 0;
    if (f)
        fclose(f);
    unlink(log_file);
    assert_non_null(strstr(buf, "stdin closed"));
}

static void test_stubborn_server_is_killed_after_the_grace(void **state)
{
    (void)state;
    harness h;
    aw_mcp_options opts = {.grace_ms = 200};
    /* ignores both the end of its stdin and SIGTERM */
    h_open(&h, "stubborn", &opts);
    outcome o;
    h_call(&h, "h__pid", "{}", 10000, &o);
    pid_t node = (pid_t)atol(o.output);
    assert_true(aw_test_pid_alive(node));
    h_close(&h);
    for (int i = 0; i < 100 && aw_test_pid_alive(node); i++)
        usleep(10000);
    assert_false(aw_test_pid_alive(node));
}

/* ---- configuration ---------------------------------------------------------------- */

static void test_config_errors_name_the_server(void **state)
{
    (void)state;
    aw_loop *l = aw_loop_new(NULL, NULL);
    aw_toolbox *box = aw_toolbox_new(l, NULL);
    struct {
        const char *json, *error;
    } cases[] = {
        {"{\"mcpServers\":{\"fs\":{\"command\":3}}}", "mcpServers.fs: 'command' must be a non-empty string"},
        {"{\"mcpServers\":{\"fs\":{\"command\":\"x\",\"args\":\"-v\"}}}", "mcpServers.fs: 'args' must be an array of strings"},
        {"{\"mcpServers\":{\"fs\":{\"command\":\"x\",\"args\":[1]}}}", "mcpServers.fs: args[0] must be a string without NUL"},
        {"{\"mcpServers\":{\"fs\":{\"command\":\"x\",\"env\":{\"A\":1}}}}", "mcpServers.fs: env.A must be a string (and its name have no '=')"},
        {"{\"mcpServers\":{\"fs\":[]}}", "mcpServers.fs: must be an object with a \"command\""},
        {"{\"mcpServers\":[]}", "\"mcpServers\" must be an object of servers by name"},
        {"{\"servers\":3}", "\"servers\" must be an object of servers by name"},
        {"{}", "an MCP configuration is an object with \"mcpServers\": {NAME: {\"command\", ...}}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        aw_json_doc *doc = NULL;
        assert_int_equal(aw_json_parse(cases[i].json, strlen(cases[i].json), NULL, &doc, NULL), 0);
        aw_error err;
        assert_true(aw_mcp_add_config(box, l, aw_json_doc_root(doc), NULL, NULL, &err) < 0);
        assert_string_equal(err.message, cases[i].error);
        aw_json_doc_free(doc);
    }
    aw_toolbox_free(box);
    aw_loop_free(l);
}

static void test_spec_is_split_like_a_shell(void **state)
{
    (void)state;
    aw_json_doc *d = NULL;
    aw_error err;
    assert_int_equal(aw_mcp_parse_spec("fs=npx -y '@scope/server x' \"a \\\"b\\\"\" c\\ d ''", NULL, &d, &err), 0);
    aw_buf b;
    aw_buf_init(&b, NULL);
    aw_json_write(aw_json_doc_root(d), NULL, &b, NULL);
    assert_string_equal(b.data, "{\"mcpServers\":{\"fs\":{\"command\":\"npx\",\"args\":[\"-y\",\"@scope/server x\","
                                "\"a \\\"b\\\"\",\"c d\",\"\"]}}}");
    aw_buf_free(&b);
    aw_json_doc_free(d);
    assert_int_equal(aw_mcp_parse_spec("fs", NULL, &d, &err), AW_ESYNTAX);
    assert_string_equal(err.message, "--mcp wants NAME=COMMAND ARGS..., not 'fs'");
    assert_int_equal(aw_mcp_parse_spec("fs=  ", NULL, &d, &err), AW_ESYNTAX);
    assert_string_equal(err.message, "--mcp fs: no command after '='");
    assert_int_equal(aw_mcp_parse_spec("fs=node 'x", NULL, &d, &err), AW_ESYNTAX);
    assert_string_equal(err.message, "--mcp fs: a quote is not closed");
    assert_int_equal(aw_mcp_parse_spec("my fs=node", NULL, &d, &err), AW_ESYNTAX);
    assert_null(d);
}

/* ---- allocation failures --------------------------------------------------------------- */

/* A scripted server: answers initialize (id 1), tools/list (id 2) and one
 * call (id 3) whatever it is asked, so every run reads the same bytes. */
static const char scripted[] =
    "read l; echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\","
    "\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"s\",\"version\":\"1\"}}}'; read l; read l; "
    "echo '{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"echo\",\"description\":\"e\","
    "\"inputSchema\":{\"type\":\"object\"}}]}}'; read l; "
    "echo '{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"},"
    "{\"type\":\"image\",\"data\":\"QUJD\",\"mimeType\":\"image/png\"}]}}'; cat >/dev/null";

typedef struct sweep {
    bool ready, usable, done, ok;
    char output[256];
} sweep;

static void sw_ready(void *ctx, aw_tool_source *s, const aw_error *err)
{
    (void)s;
    sweep *w = ctx;
    w->ready = true;
    w->usable = !err || !err->code;
}

static void sw_done(void *ctx, const aw_tool_result *res)
{
    sweep *w = ctx;
    w->done = true;
    w->ok = res->ok;
    snprintf(w->output, sizeof w->output, "%.*s", (int)res->output.len, res->output.ptr);
}

static int source_under(const aw_allocator *a, void *ctx)
{
    (void)ctx;
    aw_loop *l = aw_loop_new(a, NULL);
    if (!l)
        return AW_ENOMEM;
    aw_buf config; /* not under test: the default allocator */
    aw_buf_init(&config, NULL);
    aw_buf_append_str(&config, "{\"command\":\"sh\",\"args\":[\"-c\",");
    aw_json_write_string(&config, scripted, strlen(scripted));
    aw_buf_append_str(&config, "]}");
    aw_json_read_options ro = {.alloc = a};
    aw_json_doc *doc = NULL;
    int rc = aw_json_parse(config.data, config.len, &ro, &doc, NULL);
    aw_buf_free(&config);
    aw_mcp_options opts = {.alloc = a, .init_timeout_ms = 5000, .grace_ms = 100};
    aw_tool_source *src = rc ? NULL : aw_mcp_source_new(l, "s", aw_json_doc_root(doc), NULL, &opts, NULL);
    sweep w = {0};
    if (!rc && !src)
        rc = AW_ENOMEM;
    if (!rc)
        rc = src->ops->start(src, sw_ready, &w);
    for (int i = 0; !rc && !w.ready && i < 300; i++)
        aw_loop_once(l, 20);
    if (!rc && (!w.ready || !w.usable || src->ops->count(src) != 1))
        rc = AW_ENOMEM;
    void *handle = NULL;
    if (!rc)
        rc = src->ops->call(src, 0, NULL, NULL, sw_done, &w, &handle, NULL);
    for (int i = 0; !rc && !w.done && i < 300; i++)
        aw_loop_once(l, 20);
    if (!rc && (!w.done || !w.ok || strcmp(w.output, "hi\n[image: image/png, 3 bytes]") != 0))
        rc = AW_ENOMEM;
    if (!rc)
        assert_true(w.done);
    if (src)
        src->ops->destroy(src);
    aw_json_doc_free(doc);
    aw_loop_free(l);
    return rc;
}

static void test_allocation_failures_of_start_list_and_call(void **state)
{
    (void)state;
    aw_failalloc_run(source_under, NULL, 0);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handshake_and_tool_names),
        cmocka_unit_test(test_results_of_every_kind),
        cmocka_unit_test(test_progress_reaches_the_caller),
        cmocka_unit_test(test_pagination),
        cmocka_unit_test(test_list_changes_are_taken),
        cmocka_unit_test(test_server_requests_are_answered),
        cmocka_unit_test(test_logging_and_stderr_go_to_the_log),
        cmocka_unit_test(test_older_version_is_accepted),
        cmocka_unit_test(test_unknown_version_is_refused),
        cmocka_unit_test(test_server_that_cannot_start),
        cmocka_unit_test(test_server_that_exits_at_once),
        cmocka_unit_test(test_server_that_never_answers_initialize),
        cmocka_unit_test(test_garbage_is_skipped_or_fails_its_call),
        cmocka_unit_test(test_line_of_100_mb_fails_its_call),
        cmocka_unit_test(test_crash_restarts_once_then_down),
        cmocka_unit_test(test_hang_times_out_and_is_cancelled),
        cmocka_unit_test(test_shutdown_leaves_nothing_behind),
        cmocka_unit_test(test_stubborn_server_is_killed_after_the_grace),
        cmocka_unit_test(test_config_errors_name_the_server),
        cmocka_unit_test(test_spec_is_split_like_a_shell),
        cmocka_unit_test(test_allocation_failures_of_start_list_and_call),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
