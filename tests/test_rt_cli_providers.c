/* The command-line providers (claude-cli, codex-cli, exec) against small
 * fake commands: tests/fakes/fake_cli.sh reached as claude and codex (it
 * records its argv and stdin and prints what the test scripted), and
 * shell commands for exec. Replies, usage and errors as the real CLIs
 * print them (tests/e2e/README.md), and the hostile cases: not installed,
 * a non-zero exit, garbage, 100 MB, a hang, a cancel, a stop; after each,
 * the command's process group is gone. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agentwire/json.h"
#include "agentwire/messages.h"
#include "agentwire/provider.h"
#include "failalloc.h"
#include "testutil.h"

#define FAKES AW_SOURCE_DIR "/tests/fakes"
#define T(s) ((aw_text){(s), sizeof(s) - 1})

/* ---- the fake command's directory ------------------------------------------ */

typedef struct fake {
    char dir[64];
    char entries[6][160];
    const char *env[7];
    int n;
} fake;

static void fake_env(fake *f, const char *fmt, ...)
{
    assert_true(f->n < 6);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->entries[f->n], sizeof f->entries[f->n], fmt, ap);
    va_end(ap);
    f->env[f->n] = f->entries[f->n];
    f->env[++f->n] = NULL;
}

static void fake_init(fake *f)
{
    memset(f, 0, sizeof *f);
    strcpy(f->dir, "/tmp/aw-cli-test-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    fake_env(f, "FAKE_DIR=%s", f->dir);
}

static void fake_path(const fake *f, const char *name, char *out, size_t size)
{
    snprintf(out, size, "%s/%s", f->dir, name);
}

static void fake_write(const fake *f, const char *name, const char *data, size_t n)
{
    char path[128];
    fake_path(f, name, path, sizeof path);
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(data, 1, n, fp), n);
    fclose(fp);
}

static void fake_puts(const fake *f, const char *name, const char *text) { fake_write(f, name, text, strlen(text)); }

static char *fake_read(const fake *f, const char *name, size_t *n)
{
    char path[128];
    fake_path(f, name, path, sizeof path);
    return aw_test_read_file(path, n);
}

static bool fake_has(const fake *f, const char *name)
{
    char path[128];
    fake_path(f, name, path, sizeof path);
    return access(path, F_OK) == 0;
}

static pid_t fake_pid(const fake *f, const char *name)
{
    char *s = fake_read(f, name, NULL);
    assert_non_null(s);
    pid_t pid = (pid_t)atol(s);
    free(s);
    assert_true(pid > 0);
    return pid;
}

static void fake_make_gate(const fake *f)
{
    char path[128];
    fake_path(f, "gate", path, sizeof path);
    assert_int_equal(mkfifo(path, 0600), 0);
}

/* Let the fake go on: it is reading the gate (or is about to open it). */
static void fake_open_gate(const fake *f)
{
    char path[128];
    fake_path(f, "gate", path, sizeof path);
    int fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "go\n", 3), 3);
    close(fd);
}

static void fake_done(fake *f)
{
    DIR *d = opendir(f->dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            char path[400];
            snprintf(path, sizeof path, "%s/%s", f->dir, e->d_name);
            unlink(path);
        }
    closedir(d);
    rmdir(f->dir);
}

/* ---- processes ------------------------------------------------------------------ */

/* Some process of the group runs (a zombie left to a container's init
 * does not count: it runs nothing). */
static bool group_alive(pid_t pgid)
{
    DIR *d = opendir("/proc");
    assert_non_null(d);
    bool alive = false;
    struct dirent *e;
    while (!alive && (e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *fp = fopen(path, "r");
        if (!fp)
            continue;
        size_t n = fread(buf, 1, sizeof buf - 1, fp);
        fclose(fp);
        buf[n] = 0;
        const char *close_paren = strrchr(buf, ')');
        char state;
        int ppid, pgrp;
        if (close_paren && sscanf(close_paren + 1, " %c %d %d", &state, &ppid, &pgrp) == 3)
            alive = pgrp == pgid && state != 'Z' && state != 'X';
    }
    closedir(d);
    return alive;
}

/* SIGKILL is delivered at once but a process takes a moment to go. */
static void assert_group_gone(pid_t pgid)
{
    for (int i = 0; i < 300 && group_alive(pgid); i++)
        usleep(10000);
    assert_false(group_alive(pgid));
}

/* ---- one request ------------------------------------------------------------------ */

typedef struct outcome {
    aw_buf text, reasoning;
    char first_piece[64];
    size_t pieces;
    bool done;
    int code;
    char error[4096];
    bool retryable;
    int http_status;
    char stop_reason[64], model[128];
    bool has_usage;
    aw_model_usage usage;
    const fake *gate;      /* opened on the first text */
    bool stop_on_text;     /* on_text asks to stop */
} outcome;

static int o_text(void *ctx, const char *p, size_t n)
{
    outcome *o = ctx;
    if (o->pieces++ == 0)
        snprintf(o->first_piece, sizeof o->first_piece, "%.*s", (int)n, p);
    aw_buf_append(&o->text, p, n);
    if (o->gate && o->pieces == 1)
        fake_open_gate(o->gate);
    return o->stop_on_text;
}

static int o_reasoning(void *ctx, const char *p, size_t n)
{
    outcome *o = ctx;
    aw_buf_append(&o->reasoning, p, n);
    return 0;
}

static void copy_text(char *out, size_t size, aw_text t) { snprintf(out, size, "%.*s", (int)t.len, t.ptr); }

static void o_done(void *ctx, const aw_model_result *res)
{
    outcome *o = ctx;
    assert_false(o->done);
    o->done = true;
    o->code = res->code;
    snprintf(o->error, sizeof o->error, "%s", res->error ? res->error : "");
    o->retryable = res->retryable;
    o->http_status = res->http_status;
    copy_text(o->stop_reason, sizeof o->stop_reason, res->stop_reason);
    copy_text(o->model, sizeof o->model, res->model);
    o->has_usage = res->has_usage;
    o->usage = res->usage;
}

static const aw_model_fns fns = {o_text, o_reasoning, NULL, o_done};

typedef struct run {
    aw_loop *loop;
    aw_provider *p;
    aw_model_call *call;
    outcome o;
} run;

static aw_provider_config config(const char *spec, const fake *f)
{
    aw_provider_config cfg = {
        .spec = spec,
        .claude_path = FAKES "/claude",
        .codex_path = FAKES "/codex",
        .extra_env = f ? f->env : NULL,
    };
    return cfg;
}

static const aw_chat_msg say_hi[] = {{.role = AW_CHAT_USER, .content = {"Say hi & <bye>", 14}}};

static aw_model_request simple_request(void)
{
    aw_model_request req = {.system = T("Be brief."), .ephemeral = say_hi, .ephemeral_count = 1};
    return req;
}

static const char simple_json[] =
    "[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Say hi & <bye>\"}]";

static void start_with(run *r, const aw_provider_config *cfg, const aw_model_request *req)
{
    memset(r, 0, sizeof *r);
    aw_buf_init(&r->o.text, NULL);
    aw_buf_init(&r->o.reasoning, NULL);
    r->loop = aw_loop_new(NULL, NULL);
    assert_non_null(r->loop);
    aw_error err;
    r->p = aw_provider_new(r->loop, cfg, &err);
    if (!r->p)
        fail_msg("aw_provider_new: %s", err.message);
    if (aw_provider_send(r->p, req, &fns, &r->o, &r->call, &err))
        fail_msg("aw_provider_send: %s", err.message);
}

static void start(run *r, const aw_provider_config *cfg)
{
    aw_model_request req = simple_request();
    start_with(r, cfg, &req);
}

/* Serve the loop until cond holds, for at most a minute. */
#define SERVE_UNTIL(r, cond)                                                                                          \
    do {                                                                                                              \
        int64_t deadline_ = aw_loop_clock() + 60000;                                                                  \
        while (!(cond) && aw_loop_clock() < deadline_)                                                                \
            aw_loop_once((r)->loop, 50);                                                                              \
        assert_true(cond);                                                                                            \
    } while (0)

static void finish(run *r)
{
    aw_provider_free(r->p);
    aw_loop_free(r->loop);
    aw_buf_free(&r->o.text);
    aw_buf_free(&r->o.reasoning);
}

static bool starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }
static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

#define assert_starts_with(s, prefix)                                                                                 \
    do {                                                                                                              \
        if (!starts_with((s), (prefix)))                                                                              \
            fail_msg("\"%s\"\ndoes not start with\n\"%s\"", (s), (prefix));                                         \
    } while (0)
#define assert_ends_with(s, suffix)                                                                                   \
    do {                                                                                                              \
        if (!ends_with((s), (suffix)))                                                                                \
            fail_msg("\"%s\"\ndoes not end with\n\"%s\"", (s), (suffix));                                            \
    } while (0)

/* What the command must have read: aw_messages_encode of the JSON. */
static void assert_stdin_is_codec(const fake *f, const char *json, aw_messages_encoding enc)
{
    aw_json_doc *doc = NULL;
    assert_int_equal(aw_json_parse(json, strlen(json), NULL, &doc, NULL), 0);
    aw_buf want;
    aw_buf_init(&want, NULL);
    aw_messages_options opts = {.format = AW_MESSAGES_OPENAI, .encoding = enc};
    assert_int_equal(aw_messages_encode(aw_json_doc_root(doc), &opts, &want, NULL), 0);
    size_t n;
    char *got = fake_read(f, "stdin", &n);
    assert_non_null(got);
    assert_int_equal(n, want.len);
    assert_memory_equal(got, want.data, n);
    free(got);
    aw_buf_free(&want);
    aw_json_doc_free(doc);
}

static void assert_argv(const fake *f, const char *want)
{
    char *argv = fake_read(f, "argv", NULL);
    assert_non_null(argv);
    assert_string_equal(argv, want);
    free(argv);
}

/* ---- claude-cli ---------------------------------------------------------------- */

static const char claude_ok[] =
    "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"api_error_status\":null,\"duration_ms\":93,"
    "\"num_turns\":1,\"result\":\"Hello from claude.\\nSecond line\",\"stop_reason\":\"end_turn\","
    "\"session_id\":\"e2a94ff1\",\"total_cost_usd\":0.00018,\"usage\":{\"input_tokens\":11,"
    "\"cache_creation_input_tokens\":7,\"cache_read_input_tokens\":5,\"output_tokens\":3,"
    "\"server_tool_use\":{\"web_search_requests\":0}},\"modelUsage\":{\"claude-opus-4-8[1m]\":{\"inputTokens\":11,"
    "\"outputTokens\":3,\"costUSD\":0.00018}},\"permission_denials\":[],\"uuid\":\"24cdda12\"}\n";

static void test_claude_reply_usage_and_cost(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    fake_puts(&f, "stdout", claude_ok);
    aw_provider_config cfg = config("claude-cli", &f);
    run r;
    start(&r, &cfg);
    SERVE_UNTIL(&r, r.o.done);
    if (r.o.code)
        fail_msg("%s", r.o.error);
    assert_string_equal(r.o.text.data, "Hello from claude.\nSecond line");
    assert_int_equal(r.o.pieces, 1);
    assert_string_equal(r.o.stop_reason, "end_turn");
    assert_string_equal(r.o.model, "claude-opus-4-8[1m]");
    assert_true(r.o.has_usage);
    assert_int_equal(r.o.usage.input_tokens, 11);
    assert_int_equal(r.o.usage.output_tokens, 3);
    assert_int_equal(r.o.usage.cache_read_tokens, 5);
    assert_int_equal(r.o.usage.cache_write_tokens, 7);
    assert_true(r.o.usage.cost_usd > 0.000179 && r.o.usage.cost_usd < 0.000181);
    assert_argv(&f, "--print\n--output-format\njson\n--tools\n\n--no-session-persistence\n");
    assert_stdin_is_codec(&f, simple_json, AW_MESSAGES_XML);
    assert_group_gone(fake_pid(&f, "pid"));
    finish(&r);
    fake_done(&f);
}

/* "claude" is looked up in PATH; claude-cli:MODEL passes --model; the
 * text encoding is the codec's [User] form. */
static void test_claude_model_path_lookup_and_text_encoding(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    fake_puts(&f, "stdout", claude_ok);
    char *old_path = strdup(getenv("PATH"));
    char path[4096];
    snprintf(path, sizeof path, "%s:%s", FAKES, old_path);
    setenv("PATH", path, 1);
    aw_provider_config cfg = config("claude-cli:sonnet", &f);
    cfg.claude_path = NULL;
    cfg.encoding = AW_PROMPT_TEXT;
    run r;
    start(&r, &cfg);
    setenv("PATH", old_path, 1);
    free(old_path);
    assert_string_equal(aw_provider_model(r.p), "sonnet");
    assert_false(aw_provider_has_native_tools(r.p));
    SERVE_UNTIL(&r, r.o.done);
    assert_int_equal(r.o.code, 0);
    assert_argv(&f, "--print\n--output-format\njson\n--tools\n\n--no-session-persistence\n--model\nsonnet\n");
    assert_stdin_is_codec(&f, simple_json, AW_MESSAGES_TEXT);
    finish(&r);
    fake_done(&f);
}

/* Run spec on the fake scripted with stdout, stderr (unless NULL) and
 * FAKE_EXIT=exit_status, until it is done. */
static void fake_case(run *r, fake *f, const char *spec, const char *stdout_text, const char *stderr_text,
                      int exit_status)
{
    fake_init(f);
    fake_puts(f, "stdout", stdout_text);
    if (stderr_text)
        fake_puts(f, "stderr", stderr_text);
    fake_env(f, "FAKE_EXIT=%d", exit_status);
    aw_provider_config cfg = config(spec, f);
    start(r, &cfg);
    SERVE_UNTIL(r, r->o.done);
}

static void claude_case(run *r, fake *f, const char *stdout_text, int exit_status)
{
    fake_case(r, f, "claude-cli", stdout_text, NULL, exit_status);
}

static void test_claude_api_error_is_a_failed_request(void **state)
{
    (void)state;
    run r;
    fake f;
    /* As claude 2.1.197 prints it for a 429 (and exits with 1). */
    claude_case(&r, &f,
                "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"api_error_status\":429,"
                "\"result\":\"API Error: 429 rate limited\",\"stop_reason\":\"stop_sequence\",\"total_cost_usd\":0}\n",
                1);
    assert_int_equal(r.o.code, AW_EINVAL);
    assert_string_equal(r.o.error, "claude-cli: API Error: 429 rate limited");
    assert_true(r.o.retryable);
    assert_int_equal(r.o.http_status, 429);
    assert_int_equal(r.o.text.len, 0);
    finish(&r);
    fake_done(&f);

    claude_case(&r, &f,
                "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"api_error_status\":null,"
                "\"result\":\"Not logged in \xc2\xb7 Please run /login\"}",
                1);
    assert_string_equal(r.o.error, "claude-cli: Not logged in \xc2\xb7 Please run /login");
    assert_false(r.o.retryable);
    assert_int_equal(r.o.http_status, 0);
    finish(&r);
    fake_done(&f);

    claude_case(&r, &f, "{\"type\":\"result\",\"subtype\":\"error_during_execution\",\"is_error\":false}", 0);
    assert_string_equal(r.o.error, "claude-cli: the request failed (error_during_execution)");
    assert_false(r.o.retryable);
    finish(&r);
    fake_done(&f);
}

static void test_not_installed(void **state)
{
    (void)state;
    aw_loop *l = aw_loop_new(NULL, NULL);
    aw_error err;
    aw_model_request req = simple_request();
    aw_model_call *call = NULL;
    outcome o;
    memset(&o, 0, sizeof o);

    aw_provider_config cfg = config("claude-cli", NULL);
    cfg.claude_path = "/nonexistent/claude";
    aw_provider *p = aw_provider_new(l, &cfg, &err);
    assert_int_equal(aw_provider_send(p, &req, &fns, &o, &call, &err), AW_EINVAL);
    assert_string_equal(err.message, "claude-cli: cannot run '/nonexistent/claude': No such file or directory");
    assert_null(call);
    aw_provider_free(p);

    char *old_path = strdup(getenv("PATH"));
    setenv("PATH", "/nonexistent", 1);
    cfg.claude_path = NULL;
    p = aw_provider_new(l, &cfg, &err);
    int rc = aw_provider_send(p, &req, &fns, &o, &call, &err);
    setenv("PATH", old_path, 1);
    free(old_path);
    assert_int_equal(rc, AW_EINVAL);
    assert_string_equal(err.message, "claude-cli: cannot run 'claude': No such file or directory");
    aw_provider_free(p);

    cfg = config("codex-cli", NULL);
    cfg.codex_path = "/nonexistent/codex";
    p = aw_provider_new(l, &cfg, &err);
    assert_int_equal(aw_provider_send(p, &req, &fns, &o, &call, &err), AW_EINVAL);
    assert_string_equal(err.message, "codex-cli: cannot run '/nonexistent/codex': No such file or directory");
    aw_provider_free(p);

    /* Nothing was started, so nothing is reported later. */
    for (int i = 0; i < 5; i++)
        aw_loop_once(l, 10);
    assert_false(o.done);
    aw_loop_free(l);
}

static bool valid_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int k = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 ? 1 : (*p & 0xF0) == 0xE0 ? 2 : (*p & 0xF8) == 0xF0 ? 3 : -1;
        if (k < 0)
            return false;
        for (p++; k > 0; k--, p++)
            if ((*p & 0xC0) != 0x80)
                return false;
    }
    return true;
}

static void test_claude_exit_status_with_the_end_of_stderr(void **state)
{
    (void)state;
    fake f;
    run r;
    /* 6000 bytes of two-byte characters, then the line that matters. */
    aw_buf err;
    aw_buf_init(&err, NULL);
    aw_buf_append_str(&err, "the start, which is cut\n");
    for (int i = 0; i < 3001; i++)
        aw_buf_append_str(&err, "\xc3\xa9");
    aw_buf_append_str(&err, "\nfatal: the real reason\n");
    fake_case(&r, &f, "claude-cli", "", err.data, 3);
    assert_int_equal(r.o.code, AW_EINVAL);
    assert_false(r.o.retryable);
    assert_starts_with(r.o.error, "claude-cli: exited with status 3: ...\xc3\xa9");
    assert_ends_with(r.o.error, "\xc3\xa9\nfatal: the real reason");
    assert_null(strstr(r.o.error, "the start"));
    assert_true(strlen(r.o.error) <= strlen("claude-cli: exited with status 3: ...") + 2048);
    assert_true(strlen(r.o.error) > 2000);
    assert_true(valid_utf8(r.o.error));
    aw_buf_free(&err);
    finish(&r);
    fake_done(&f);

    /* A usage error: what it printed, and why. */
    fake_case(&r, &f, "claude-cli", "Usage: claude [options]\n", "error: unknown option '--bogus'\n", 2);
    assert_string_equal(r.o.error, "claude-cli: exited with status 2 and printed \"Usage: claude [options]\\n\": "
                                   "error: unknown option '--bogus'");
    finish(&r);
    fake_done(&f);

    /* Killed by a signal: worth another try. */
    fake_init(&f);
    fake_env(&f, "FAKE_SIGNAL=KILL");
    aw_provider_config cfg = config("claude-cli", &f);
    start(&r, &cfg);
    SERVE_UNTIL(&r, r.o.done);
    assert_string_equal(r.o.error, "claude-cli: killed by signal 9 (Killed); nothing on stderr");
    assert_true(r.o.retryable);
    finish(&r);
    fake_done(&f);
}

static void test_claude_stdout_that_is_not_its_json(void **state)
{
    (void)state;
    run r;
    fake f;
    claude_case(&r, &f, "Hello, I am not JSON\n", 0);
    assert_int_equal(r.o.code, AW_ESYNTAX);
    assert_false(r.o.retryable);
    assert_starts_with(r.o.error, "claude-cli: stdout is not JSON (line 1, column 1: ");
    assert_ends_with(r.o.error, "); it starts with \"Hello, I am not JSON\\n\"");
    finish(&r);
    fake_done(&f);

    /* A long one is shown by its start only; the place is line 2. */
    char garbage[1200];
    memset(garbage, 'z', sizeof garbage - 1);
    garbage[sizeof garbage - 1] = 0;
    memcpy(garbage, "{\"type\":\n\"result\" oops", 22);
    claude_case(&r, &f, garbage, 0);
    assert_starts_with(r.o.error, "claude-cli: stdout is not JSON (line 2, column 10: ");
    assert_ends_with(r.o.error, "zzz...\"");
    assert_true(strlen(r.o.error) < 500);
    finish(&r);
    fake_done(&f);

    claude_case(&r, &f, "[1, 2]", 0);
    assert_int_equal(r.o.code, AW_ETYPE);
    assert_string_equal(r.o.error,
                        "claude-cli: stdout is JSON but not claude's result object (\"type\": \"result\"): \"[1, 2]\"");
    finish(&r);
    fake_done(&f);

    claude_case(&r, &f, "\n", 0);
    assert_string_equal(r.o.error, "claude-cli: exited with status 0 but printed nothing on stdout; nothing on stderr");
    finish(&r);
    fake_done(&f);

    claude_case(&r, &f, "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false}", 0);
    assert_string_equal(r.o.error, "claude-cli: the result object has no \"result\" text");
    finish(&r);
    fake_done(&f);
}

static void test_claude_printing_100_mb_is_stopped(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    fake_env(&f, "FAKE_MODE=flood");
    aw_provider_config cfg = config("claude-cli", &f);
    run r;
    start(&r, &cfg);
    SERVE_UNTIL(&r, r.o.done);
    assert_int_equal(r.o.code, AW_ELIMIT);
    assert_string_equal(r.o.error, "claude-cli: printed more than 64 MB on stdout; the command was stopped");
    assert_false(r.o.retryable);
    assert_group_gone(fake_pid(&f, "pid"));
    finish(&r);
    fake_done(&f);
}

static void test_claude_that_hangs_times_out(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    fake_puts(&f, "stderr", "working on it\n");
    fake_env(&f, "FAKE_MODE=hang");
    aw_provider_config cfg = config("claude-cli", &f);
    cfg.request_timeout_ms = 3000; /* time enough for the fake to start and write to stderr */
    run r;
    start(&r, &cfg);
    SERVE_UNTIL(&r, r.o.done);
    assert_int_equal(r.o.code, AW_ELIMIT);
    assert_true(r.o.retryable);
    assert_string_equal(r.o.error, "claude-cli: no reply within 3 s (the request timeout); the command was "
                                   "stopped; stderr: working on it");
    /* The fake, and the sleeper it started in the background. */
    assert_group_gone(fake_pid(&f, "pid"));
    finish(&r);
    fake_done(&f);
}

static void test_cancel_kills_the_group_and_reports_nothing(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    fake_env(&f, "FAKE_MODE=hang");
    aw_provider_config cfg = config("claude-cli", &f);
    run r;
    start(&r, &cfg);
    SERVE_UNTIL(&r, fake_has(&f, "sleeper")); /* the prompt was read, the sleeper runs */
    pid_t group = fake_pid(&f, "pid");
    assert_true(group_alive(group));
    aw_model_call_cancel(r.call);
    assert_group_gone(group); /* the sleeper too: it is in the group */
    for (int i = 0; i < 10; i++)
        aw_loop_once(r.loop, 10);
    assert_false(r.o.done);
    finish(&r);
    fake_done(&f);
}

static void test_two_megabyte_thread_goes_through_stdin(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    fake_puts(&f, "stdout", claude_ok);
    aw_buf thread;
    aw_buf_init(&thread, NULL);
    aw_buf_append_str(&thread, "<thread>\n  <event type=\"human\" id=\"0\" iteration=\"1\">");
    while (thread.len < (2u << 20))
        aw_buf_append_str(&thread, "a line of the task &amp; its &lt;details&gt;, \xc3\xa9\n");
    aw_buf_append_str(&thread, "</event>");
    aw_model_request req = {.thread_stable = {thread.data, thread.len}, .thread_tail = T("\n</thread>")};
    aw_provider_config cfg = config("claude-cli", &f);
    run r;
    start_with(&r, &cfg, &req);
    SERVE_UNTIL(&r, r.o.done);
    assert_int_equal(r.o.code, 0);
    size_t n;
    char *got = fake_read(&f, "stdin", &n);
    assert_int_equal(n, thread.len + 10);
    assert_memory_equal(got, thread.data, thread.len);
    assert_memory_equal(got + thread.len, "\n</thread>", 10);
    free(got);
    aw_buf_free(&thread);
    finish(&r);
    fake_done(&f);
}

/* ---- trace ------------------------------------------------------------------------ */

typedef struct traced {
    aw_buf prompt, out, err, exit;
} traced;

static void on_trace(void *ctx, const char *what, const char *p, size_t n)
{
    traced *t = ctx;
    aw_buf *b = !strcmp(what, "claude-cli prompt")   ? &t->prompt
                : !strcmp(what, "claude-cli stdout") ? &t->out
                : !strcmp(what, "claude-cli stderr") ? &t->err
                : !strcmp(what, "claude-cli exit")   ? &t->exit
                                                     : NULL;
    if (!b)
        fail_msg("unexpected trace label '%s'", what);
    aw_buf_append(b, p, n);
}

static void test_trace_gets_the_prompt_and_the_raw_output(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    fake_puts(&f, "stdout", claude_ok);
    fake_puts(&f, "stderr", "a warning\n");
    traced t;
    aw_buf_init(&t.prompt, NULL);
    aw_buf_init(&t.out, NULL);
    aw_buf_init(&t.err, NULL);
    aw_buf_init(&t.exit, NULL);
    aw_provider_config cfg = config("claude-cli", &f);
    cfg.trace = on_trace;
    cfg.trace_ctx = &t;
    run r;
    start(&r, &cfg);
    SERVE_UNTIL(&r, r.o.done);
    assert_int_equal(r.o.code, 0);
    size_t n;
    char *in = fake_read(&f, "stdin", &n);
    assert_int_equal(t.prompt.len, n);
    assert_memory_equal(t.prompt.data, in, n);
    free(in);
    assert_string_equal(t.out.data, claude_ok);
    assert_string_equal(t.err.data, "a warning\n");
    assert_string_equal(t.exit.data, "exited with status 0");
    aw_buf_free(&t.prompt);
    aw_buf_free(&t.out);
    aw_buf_free(&t.err);
    aw_buf_free(&t.exit);
    finish(&r);
    fake_done(&f);
}

/* ---- codex-cli --------------------------------------------------------------------- */

static void test_codex_events_reply_reasoning_and_usage(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    /* As codex 0.169.0 prints them: a warning item, a retry notice, an
     * item of its own work, a CRLF line, and no newline after the last. */
    fake_puts(&f, "stdout",
              "{\"type\":\"thread.started\",\"thread_id\":\"01a2\"}\n"
              "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":\"error\",\"message\":\"Model "
              "metadata for `gpt-5` not found.\"}}\n"
              "{\"type\":\"turn.started\"}\n"
              "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_1\",\"type\":\"reasoning\",\"text\":\"Thinking "
              "it over.\"}}\n"
              "{\"type\":\"error\",\"message\":\"Reconnecting... 1/5\"}\r\n"
              "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_2\",\"type\":\"agent_message\",\"text\":\"First "
              "part.\"}}\n"
              "\n"
              "{\"type\":\"item.started\",\"item\":{\"id\":\"item_3\",\"type\":\"command_execution\","
              "\"command\":\"ls\"}}\n"
              "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_4\",\"type\":\"agent_message\",\"text\":\"Second "
              "part.\"}}\n"
              "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":21,\"cached_input_tokens\":3,"
              "\"cache_write_input_tokens\":1,\"output_tokens\":6,\"reasoning_output_tokens\":2}}");
    aw_provider_config cfg = config("codex-cli:gpt-5", &f);
    run r;
    start(&r, &cfg);
    SERVE_UNTIL(&r, r.o.done);
    if (r.o.code)
        fail_msg("%s", r.o.error);
    assert_string_equal(r.o.text.data, "First part.\n\nSecond part.");
    assert_string_equal(r.o.reasoning.data, "Thinking it over.");
    assert_string_equal(r.o.stop_reason, "stop");
    assert_true(r.o.has_usage);
    assert_int_equal(r.o.usage.input_tokens, 21);
    assert_int_equal(r.o.usage.cache_read_tokens, 3);
    assert_int_equal(r.o.usage.cache_write_tokens, 1);
    assert_int_equal(r.o.usage.output_tokens, 6);
    assert_int_equal(r.o.usage.reasoning_tokens, 2);
    assert_true(r.o.usage.cost_usd < 0);
    assert_argv(&f, "exec\n--json\n--sandbox\nread-only\n--skip-git-repo-check\n--ephemeral\n--model\ngpt-5\n-\n");
    assert_stdin_is_codec(&f, simple_json, AW_MESSAGES_XML);
    assert_group_gone(fake_pid(&f, "pid"));
    finish(&r);
    fake_done(&f);
}

/* The second message is printed only once the first has reached on_text. */
static void test_codex_streams_each_message_as_it_completes(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    fake_puts(&f, "stdout",
              "{\"type\":\"thread.started\",\"thread_id\":\"01a2\"}\n{\"type\":\"turn.started\"}\n"
              "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"one\"}}\n");
    fake_puts(&f, "stdout2",
              "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"two\"}}\n"
              "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":2}}\n");
    fake_make_gate(&f);
    aw_provider_config cfg = config("codex-cli", &f);
    cfg.request_timeout_ms = 30000; /* without streaming, this would end it */
    run r;
    start(&r, &cfg);
    r.o.gate = &f;
    SERVE_UNTIL(&r, r.o.done);
    if (r.o.code)
        fail_msg("%s", r.o.error);
    assert_string_equal(r.o.first_piece, "one");
    assert_string_equal(r.o.text.data, "one\n\ntwo");
    assert_argv(&f, "exec\n--json\n--sandbox\nread-only\n--skip-git-repo-check\n--ephemeral\n-\n");
    finish(&r);
    fake_done(&f);
}

static void codex_case(run *r, fake *f, const char *stdout_text, const char *stderr_text, int exit_status)
{
    fake_case(r, f, "codex-cli", stdout_text, stderr_text, exit_status);
}

static void test_codex_failures(void **state)
{
    (void)state;
    run r;
    fake f;
    /* As codex prints a 400 from its API. */
    codex_case(&r, &f,
               "{\"type\":\"thread.started\",\"thread_id\":\"01a2\"}\n{\"type\":\"turn.started\"}\n"
               "{\"type\":\"error\",\"message\":\"stub says no (400)\"}\n"
               "{\"type\":\"turn.failed\",\"error\":{\"message\":\"stub says no (400)\"}}\n"
               "{\"type\":\"error\",\"message\":\"later noise\"}\n",
               NULL, 1);
    assert_int_equal(r.o.code, AW_EINVAL);
    assert_string_equal(r.o.error, "codex-cli: the turn failed: stub says no (400)");
    assert_false(r.o.retryable);
    finish(&r);
    fake_done(&f);

    /* As codex 0.169.0 refuses a prompt over 1048576 characters. */
    codex_case(&r, &f, "{\"type\":\"thread.started\",\"thread_id\":\"01a2\"}\n",
               "WARNING: proceeding\nError: turn/start: turn/start failed: Input exceeds the maximum length of "
               "1048576 characters.\n",
               1);
    assert_string_equal(r.o.error, "codex-cli: exited with status 1: WARNING: proceeding\nError: turn/start: "
                                   "turn/start failed: Input exceeds the maximum length of 1048576 characters.");
    finish(&r);
    fake_done(&f);

    codex_case(&r, &f,
               "{\"type\":\"thread.started\",\"thread_id\":\"01a2\"}\n"
               "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"half\"}}\n"
               "{\"type\":\"error\",\"message\":\"Reconnecting... 5/5\"}\n",
               NULL, 0);
    assert_string_equal(r.o.error, "codex-cli: exited with status 0 without a turn.completed event (last error "
                                   "event: Reconnecting... 5/5); nothing on stderr");
    assert_string_equal(r.o.text.data, "half"); /* it was streamed */
    finish(&r);
    fake_done(&f);

    /* As codex 0.169.0 prints a stream that broke after a message: the
     * retry repeats it. */
    codex_case(&r, &f,
               "{\"type\":\"turn.started\"}\n"
               "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"Hello.\"}}\n"
               "{\"type\":\"error\",\"message\":\"Reconnecting... 1/5 (stream disconnected before completion)\"}\n"
               "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"Hello.\"}}\n"
               "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":2}}\n",
               NULL, 0);
    assert_string_equal(r.o.error, "codex-cli: codex retried the request (Reconnecting... 1/5 (stream disconnected "
                                   "before completion)) after part of its reply had been passed on, so the reply "
                                   "would repeat itself");
    assert_true(r.o.retryable);
    finish(&r);
    fake_done(&f);

    codex_case(&r, &f, "[1]\n", NULL, 0);
    assert_int_equal(r.o.code, AW_ETYPE);
    assert_string_equal(r.o.error, "codex-cli: stdout line 1 is not a codex event (no \"type\"): \"[1]\"");
    finish(&r);
    fake_done(&f);
}

/* A line that is not JSON ends the request at once, whatever follows. */
static void test_codex_garbage_line_stops_the_command(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    fake_puts(&f, "stdout",
              "{\"type\":\"thread.started\",\"thread_id\":\"01a2\"}\n{\"type\":\"turn.started\"}\n"
              "warning: this is not JSON\n");
    fake_make_gate(&f); /* it waits there for ever */
    aw_provider_config cfg = config("codex-cli", &f);
    run r;
    start(&r, &cfg);
    SERVE_UNTIL(&r, r.o.done);
    assert_int_equal(r.o.code, AW_ESYNTAX);
    assert_false(r.o.retryable);
    assert_starts_with(r.o.error, "codex-cli: stdout line 3 is not JSON (column 1: ");
    assert_ends_with(r.o.error, "): \"warning: this is not JSON\"");
    assert_group_gone(fake_pid(&f, "pid"));
    finish(&r);
    fake_done(&f);
}

/* ---- exec ---------------------------------------------------------------------------- */

static void exec_case(run *r, fake *f, const char *spec)
{
    fake_init(f);
    aw_provider_config cfg = config(spec, f);
    start(r, &cfg);
}

static void test_exec_streams_stdout_in_pieces(void **state)
{
    (void)state;
    fake f;
    run r;
    fake_init(&f);
    fake_make_gate(&f);
    char spec[512];
    snprintf(spec, sizeof spec, "exec:cat > %s/stdin; printf 'first '; read x < %s/gate; printf second", f.dir, f.dir);
    aw_provider_config cfg = config(spec, &f);
    cfg.request_timeout_ms = 30000; /* without streaming, this would end it */
    start(&r, &cfg);
    r.o.gate = &f;
    SERVE_UNTIL(&r, r.o.done);
    if (r.o.code)
        fail_msg("%s", r.o.error);
    assert_string_equal(r.o.first_piece, "first ");
    assert_string_equal(r.o.text.data, "first second");
    assert_string_equal(r.o.stop_reason, "stop");
    assert_false(r.o.has_usage);
    assert_string_equal(aw_provider_kind(r.p), "exec");
    assert_stdin_is_codec(&f, simple_json, AW_MESSAGES_XML);
    finish(&r);
    fake_done(&f);
}

static void test_exec_failures(void **state)
{
    (void)state;
    fake f;
    run r;
    exec_case(&r, &f, "exec:echo oops >&2; exit 4");
    SERVE_UNTIL(&r, r.o.done);
    assert_string_equal(r.o.error, "exec: exited with status 4: oops");
    assert_false(r.o.retryable);
    finish(&r);
    fake_done(&f);

    exec_case(&r, &f, "exec:kill -9 $$");
    SERVE_UNTIL(&r, r.o.done);
    assert_string_equal(r.o.error, "exec: killed by signal 9 (Killed); nothing on stderr");
    assert_true(r.o.retryable);
    finish(&r);
    fake_done(&f);

    aw_loop *l = aw_loop_new(NULL, NULL);
    aw_error err;
    const char *specs[] = {"exec:", "exec"};
    for (int i = 0; i < 2; i++) {
        aw_provider_config cfg = config(specs[i], NULL);
        assert_null(aw_provider_new(l, &cfg, &err));
        assert_string_equal(err.message, "exec: no command given (--model exec:COMMAND)");
    }
    aw_loop_free(l);
}

static void test_exec_idle_timeout(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    char spec[256];
    snprintf(spec, sizeof spec, "exec:echo $$ > %s/pid; printf partial; sleep 1000", f.dir);
    aw_provider_config cfg = config(spec, &f);
    cfg.idle_timeout_ms = 1000; /* time enough for the shell to start and print */
    run r;
    start(&r, &cfg);
    SERVE_UNTIL(&r, r.o.done);
    assert_int_equal(r.o.code, AW_ELIMIT);
    assert_true(r.o.retryable);
    assert_string_equal(r.o.error, "exec: no output for 1 s (the idle timeout); the command was stopped");
    assert_string_equal(r.o.text.data, "partial");
    assert_group_gone(fake_pid(&f, "pid"));
    finish(&r);
    fake_done(&f);

    /* Output keeps it alive: 25 lines 0.1 s apart, 2.5 s in all, with
     * 1.2 s allowed between two. */
    fake_init(&f);
    aw_provider_config cfg2 = config("exec:i=0; while [ $i -lt 25 ]; do i=$((i+1)); echo $i; sleep 0.1; done", &f);
    cfg2.idle_timeout_ms = 1200;
    start(&r, &cfg2);
    SERVE_UNTIL(&r, r.o.done);
    if (r.o.code)
        fail_msg("%s", r.o.error);
    assert_true(ends_with(r.o.text.data, "\n24\n25\n"));
    finish(&r);
    fake_done(&f);
}

/* on_text asking to stop ends the request: the command is killed, and
 * nothing more is reported. */
static void test_exec_stop_from_on_text(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    char spec[256];
    snprintf(spec, sizeof spec, "exec:echo $$ > %s/pid; printf first; sleep 1000", f.dir);
    aw_provider_config cfg = config(spec, &f);
    run r;
    start(&r, &cfg);
    r.o.stop_on_text = true;
    SERVE_UNTIL(&r, r.o.pieces == 1);
    assert_group_gone(fake_pid(&f, "pid"));
    for (int i = 0; i < 10; i++)
        aw_loop_once(r.loop, 10);
    assert_false(r.o.done);
    assert_int_equal(r.o.pieces, 1);
    finish(&r);
    fake_done(&f);
}

/* The configuration's environment reaches the command, copied when the
 * provider is made. */
static void test_exec_environment_is_the_configurations(void **state)
{
    (void)state;
    char entry[64];
    snprintf(entry, sizeof entry, "AW_TEST_VAR=from-config");
    const char *env[] = {entry, NULL};
    aw_provider_config cfg = config("exec:printf %s \"$AW_TEST_VAR\"", NULL);
    cfg.extra_env = env;
    run r;
    memset(&r, 0, sizeof r);
    aw_buf_init(&r.o.text, NULL);
    aw_buf_init(&r.o.reasoning, NULL);
    r.loop = aw_loop_new(NULL, NULL);
    r.p = aw_provider_new(r.loop, &cfg, NULL);
    assert_non_null(r.p);
    strcpy(entry, "AW_TEST_VAR=changed");
    aw_model_request req = simple_request();
    assert_int_equal(aw_provider_send(r.p, &req, &fns, &r.o, &r.call, NULL), 0);
    SERVE_UNTIL(&r, r.o.done);
    assert_string_equal(r.o.text.data, "from-config");
    finish(&r);
}

/* ---- allocation failures ----------------------------------------------------------- */

static int exec_under(const aw_allocator *a, void *ctx)
{
    (void)ctx;
    aw_loop *l = aw_loop_new(a, NULL);
    if (!l)
        return AW_ENOMEM;
    aw_provider_config cfg = config("exec:cat >/dev/null; printf hi; echo warn >&2", NULL);
    const char *env[] = {"AW_A=1", "AW_B=2", NULL};
    cfg.extra_env = env;
    cfg.alloc = a;
    aw_error err;
    int rc = 0;
    aw_provider *p = aw_provider_new(l, &cfg, &err);
    if (!p) {
        rc = err.code;
    } else {
        outcome o;
        memset(&o, 0, sizeof o);
        aw_buf_init(&o.text, NULL);
        aw_buf_init(&o.reasoning, NULL);
        aw_model_request req = simple_request();
        aw_model_call *call;
        rc = aw_provider_send(p, &req, &fns, &o, &call, &err);
        if (rc == 0) {
            int loop_rc = 0;
            int64_t deadline = aw_loop_clock() + 60000;
            while (!o.done && !loop_rc && aw_loop_clock() < deadline)
                loop_rc = aw_loop_once(l, 50);
            /* Reported, unless the loop itself failed: no failure may
             * leave a request waiting for its timeout. */
            assert_true(o.done || loop_rc);
            if (!o.done)
                aw_model_call_cancel(call);
            rc = o.done ? o.code : loop_rc;
            if (o.done && rc == 0)
                assert_string_equal(o.text.data, "hi");
        }
        aw_buf_free(&o.text);
        aw_buf_free(&o.reasoning);
        aw_provider_free(p);
    }
    aw_loop_free(l);
    return rc;
}

static void test_allocation_failures_of_a_whole_request(void **state)
{
    (void)state;
    long calls = aw_failalloc_run(exec_under, NULL, 0);
    assert_true(calls > 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_claude_reply_usage_and_cost),
        cmocka_unit_test(test_claude_model_path_lookup_and_text_encoding),
        cmocka_unit_test(test_claude_api_error_is_a_failed_request),
        cmocka_unit_test(test_not_installed),
        cmocka_unit_test(test_claude_exit_status_with_the_end_of_stderr),
        cmocka_unit_test(test_claude_stdout_that_is_not_its_json),
        cmocka_unit_test(test_claude_printing_100_mb_is_stopped),
        cmocka_unit_test(test_claude_that_hangs_times_out),
        cmocka_unit_test(test_cancel_kills_the_group_and_reports_nothing),
        cmocka_unit_test(test_two_megabyte_thread_goes_through_stdin),
        cmocka_unit_test(test_trace_gets_the_prompt_and_the_raw_output),
        cmocka_unit_test(test_codex_events_reply_reasoning_and_usage),
        cmocka_unit_test(test_codex_streams_each_message_as_it_completes),
        cmocka_unit_test(test_codex_failures),
        cmocka_unit_test(test_codex_garbage_line_stops_the_command),
        cmocka_unit_test(test_exec_streams_stdout_in_pieces),
        cmocka_unit_test(test_exec_failures),
        cmocka_unit_test(test_exec_idle_timeout),
        cmocka_unit_test(test_exec_stop_from_on_text),
        cmocka_unit_test(test_exec_environment_is_the_configurations),
        cmocka_unit_test(test_allocation_failures_of_a_whole_request),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
