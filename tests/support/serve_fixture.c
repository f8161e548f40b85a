/* The serve tests' fixtures (serve_fixture.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "serve_fixture.h"
#include "testutil.h"

extern char **environ;

void fx_store_url(char *url, size_t cap, const char *dir)
{
    const char *pg = getenv("AW_PG_URL");
    if (pg && *pg)
        snprintf(url, cap, "%s", pg);
    else
        snprintf(url, cap, "sqlite:%s/sessions.db", dir);
}

void fx_step(aw_store *s, const char *id, const char *step_json)
{
    aw_json_doc *d = NULL;
    aw_error err;
    if (aw_json_parse(step_json, strlen(step_json), NULL, &d, &err))
        fail_msg("step JSON: %s: %s", err.message, step_json);
    const aw_json_value *r = aw_json_doc_root(d);
    const aw_json_value *turn = aw_json_get(r, "turn"), *final = aw_json_get(r, "final"),
                        *partial = aw_json_get(r, "partial");
    aw_json_doc *resume = NULL;
    static const char dflt[] = "{\"turn\": 1, \"usage\": {}, \"seconds\": 1, \"chat\": []}";
    assert_int_equal(aw_json_parse(dflt, sizeof dflt - 1, NULL, &resume, NULL), 0);
    aw_run_step st = {.turn = (unsigned)turn->u.num.d,
                      .events = aw_json_get(r, "events"),
                      .accounting = aw_json_get(r, "accounting"),
                      .resume = aw_json_get(r, "resume") ? aw_json_get(r, "resume") : aw_json_doc_root(resume),
                      .final = aw_json_is_bool(final) && final->u.b,
                      .partial = aw_json_is_bool(partial) && partial->u.b};
    if (aw_store_append_step(s, id, &st, NULL, st.final ? "completed" : NULL, &err))
        fail_msg("append a step to %s: %s", id, err.message);
    aw_json_doc_free(resume);
    aw_json_doc_free(d);
}

void fx_session(aw_store *s, const char *id, const char *agent, const char *task, const char *const *steps, size_t n)
{
    aw_session_start st = {.id = id, .agent_name = agent, .task = task, .owner = "test:1"};
    aw_error err;
    if (aw_store_session_begin(s, &st, &err))
        fail_msg("begin %s: %s", id, err.message);
    for (size_t i = 0; i < n; i++)
        fx_step(s, id, steps[i]);
}

aw_server *fx_server(const char *url, const char *token)
{
    /* quick polls and heartbeats: the tests wait less (never for a time) */
    aw_serve_options o = {.store_url = url, .listen = "127.0.0.1:0", .token = token, .poll_ms = 50,
                          .heartbeat_ms = 300, .threads = 2};
    aw_error err;
    aw_server *srv = aw_server_start(&o, &err);
    if (!srv)
        fail_msg("the server did not start: %s", err.message);
    return srv;
}

/* ---- real runs --------------------------------------------------------------------- */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f))
        fail_msg("cannot write %s", path);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

void fx_run_start(fx_run *r, const char *url, const char *dir, unsigned turns)
{
    memset(r, 0, sizeof *r);
    snprintf(r->dir, sizeof r->dir, "%s", dir);
    char path[512], text[8192];
    snprintf(path, sizeof path, "%s/tools.json", dir);
    snprintf(text, sizeof text,
             "[{\"name\": \"gate\", \"description\": \"waits for the test\", \"input_schema\": {\"type\": \"object\"},"
             " \"command\": [\"sh\", \"-c\", \"while [ ! -e %s/gate ]; do sleep 0.02; done; rm -f %s/gate;"
             " printf '%%s' '<script>window.pwned=1</script>'\"]}]",
             dir, dir);
    write_file(path, text);
    size_t k = 0;
    for (unsigned t = 1; t <= turns; t++)
        k += (size_t)snprintf(text + k, sizeof text - k,
                              "{\"turn\": %u, \"text\": \"turn %u\", \"tool_calls\": [{\"id\": \"g%u\", \"name\": \"gate\","
                              " \"arguments\": {\"n\": %u}}], \"usage\": {\"input_tokens\": %u, \"output_tokens\": %u}}\n",
                              t, t, t, t, 100 * t + 20, 10 * t + 5);
    snprintf(text + k, sizeof text - k,
             "{\"turn\": %u, \"tool_calls\": [{\"id\": \"f\", \"name\": \"agent__final_report\", \"arguments\":"
             " {\"status\": \"success\", \"content\": \"# Live run\\n\\nAll **%u** gates passed.\"}}],"
             " \"usage\": {\"input_tokens\": 400, \"output_tokens\": 60}}\n",
             turns + 1, turns);
    snprintf(path, sizeof path, "%s/replay.jsonl", dir);
    write_file(path, text);

    char tools[512], model[600], out[512], errp[512];
    snprintf(tools, sizeof tools, "%s/tools.json", dir);
    snprintf(model, sizeof model, "replay:%s/replay.jsonl", dir);
    snprintf(out, sizeof out, "%s/run.out", dir);
    snprintf(errp, sizeof errp, "%s/run.err", dir);
    char *argv[] = {AW_CLI_PATH, "run", "--store", (char *)url, "--transport", "native", "--tools", tools, "--model",
                    model, "--tool-timeout", "60s", "--max-turns", "20", "pass the gates", NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    setenv("AW_NO_STATUS_LINE", "1", 1);
    int rc = posix_spawn(&r->pid, AW_CLI_PATH, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc)
        fail_msg("cannot start %s: %s", AW_CLI_PATH, strerror(rc));
    /* its first line on stderr names the session */
    for (int i = 0; i < 1500 && !r->session[0]; i++) {
        char *e = aw_test_read_file(errp, NULL);
        const char *at = e ? strstr(e, "agentwire: session ") : NULL;
        if (at && strchr(at, '\n'))
            sscanf(at + 19, "%127[^\n]", r->session);
        free(e);
        if (!r->session[0])
            sleep_ms(20);
    }
    if (!r->session[0]) {
        fx_run_wait(r, 1000);
        fail_msg("the run named no session in 30 s");
    }
}

void fx_gate_open(fx_run *r)
{
    char path[512];
    snprintf(path, sizeof path, "%s/gate", r->dir);
    write_file(path, "open\n");
}

bool fx_run_alive(fx_run *r)
{
    if (!r->pid)
        return false;
    int status;
    pid_t w = waitpid(r->pid, &status, WNOHANG);
    if (w == r->pid) {
        r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        r->pid = 0;
        return false;
    }
    return true;
}

int fx_run_wait(fx_run *r, int timeout_ms)
{
    for (int waited = 0; waited <= timeout_ms; waited += 20) {
        if (!fx_run_alive(r))
            return r->status;
        sleep_ms(20);
    }
    kill(r->pid, SIGKILL);
    waitpid(r->pid, NULL, 0);
    r->pid = 0;
    return -1;
}
