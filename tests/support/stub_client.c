/* Starting, waiting for and reading stub_llm from a test. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "stub_client.h"
#include "testutil.h"

#ifndef AW_STUB_LLM_PATH
#define AW_STUB_LLM_PATH AW_BINARY_DIR "/stub_llm"
#endif

void aw_stub_start(aw_stub *s, const char *script) { aw_stub_start_timeout(s, script, 60000); }

void aw_stub_start_timeout(aw_stub *s, const char *script, long timeout_ms)
{
    char limit[32];
    snprintf(limit, sizeof limit, "%ld", timeout_ms);
    memset(s, 0, sizeof *s);
    s->pid = -1;
    strcpy(s->dir, "/tmp/aw_stub_XXXXXX");
    assert_non_null(mkdtemp(s->dir));
    snprintf(s->script_path, sizeof s->script_path, "%s/script.jsonl", s->dir);
    snprintf(s->log_path, sizeof s->log_path, "%s/log.jsonl", s->dir);
    FILE *f = fopen(s->script_path, "wb");
    assert_non_null(f);
    fputs(script, f);
    fclose(f);
    int out[2];
    assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    pid_t parent = getpid();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        dup2(out[1], 1);
        execl(AW_STUB_LLM_PATH, "stub_llm", "--script", s->script_path, "--log", s->log_path, "--timeout-ms",
              limit, (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    s->pid = pid;
    char line[32];
    size_t n = 0;
    struct pollfd p = {out[0], POLLIN, 0};
    while (n < sizeof line - 1 && poll(&p, 1, 10000) > 0) {
        ssize_t k = read(out[0], line + n, 1);
        if (k <= 0 || line[n] == '\n')
            break;
        n++;
    }
    line[n] = 0;
    close(out[0]);
    s->port = atoi(line);
    if (s->port <= 0) {
        aw_stub_stop(s);
        fail_msg("stub_llm did not start (script %s)", s->script_path);
    }
    snprintf(s->base_url, sizeof s->base_url, "http://127.0.0.1:%d", s->port);
}

int aw_stub_wait(aw_stub *s, int max_ms)
{
    if (s->pid <= 0)
        return s->exit_status;
    for (int waited = 0;; waited += 10) {
        int st;
        pid_t r = waitpid(s->pid, &st, WNOHANG);
        if (r == s->pid) {
            s->pid = -1;
            s->exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
            return s->exit_status;
        }
        if (waited >= max_ms)
            break;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    s->pid = -1;
    s->exit_status = -1;
    return -1;
}

/* The log's lines, found again on each call (tests read a few). */
static char *log_line(const aw_stub *s, size_t i, size_t *len)
{
    size_t n = 0;
    char *all = aw_test_read_file(s->log_path, &n);
    if (!all)
        return NULL;
    size_t at = 0;
    for (size_t k = 0; at < n; k++) {
        char *nl = memchr(all + at, '\n', n - at);
        size_t end = nl ? (size_t)(nl - all) : n;
        if (k == i) {
            memmove(all, all + at, end - at);
            all[end - at] = 0;
            *len = end - at;
            return all;
        }
        at = end + 1;
    }
    free(all);
    return NULL;
}

size_t aw_stub_log_count(const aw_stub *s)
{
    size_t n = 0, count = 0;
    char *all = aw_test_read_file(s->log_path, &n);
    for (size_t i = 0; all && i < n; i++)
        count += all[i] == '\n';
    free(all);
    return count;
}

aw_json_doc *aw_stub_log_request(const aw_stub *s, size_t i)
{
    size_t len;
    char *line = log_line(s, i, &len);
    if (!line)
        return NULL;
    aw_json_doc *doc = NULL;
    aw_json_parse(line, len, NULL, &doc, NULL);
    free(line);
    return doc;
}

char *aw_stub_log_body(const aw_stub *s, size_t i, size_t *len)
{
    aw_json_doc *doc = aw_stub_log_request(s, i);
    if (!doc)
        return NULL;
    const aw_json_value *b = aw_json_get(aw_json_doc_root(doc), "body");
    char *out = NULL;
    if (aw_json_is_string(b)) {
        out = malloc(b->u.str.len + 1);
        memcpy(out, b->u.str.ptr, b->u.str.len);
        out[b->u.str.len] = 0;
        if (len)
            *len = b->u.str.len;
    }
    aw_json_doc_free(doc);
    return out;
}

void aw_stub_stop(aw_stub *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGKILL);
        waitpid(s->pid, NULL, 0);
        s->pid = -1;
    }
    if (s->dir[0]) {
        unlink(s->script_path);
        unlink(s->log_path);
        rmdir(s->dir);
        s->dir[0] = 0;
    }
}
