/* The file sink on destinations that can stall: a pipe nobody reads must
 * never block the run (the queue is bounded, the rest dropped and
 * counted, lines never split), a FIFO nobody reads is an error at once,
 * and a reader that catches up gets whole lines in order. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "agentwire/json.h"
#include "agentwire/sink.h"

/* An envelope of about 1 KB carrying its number. */
static aw_json_doc *envelope(int n)
{
    char text[1200];
    int k = snprintf(text, sizeof text, "{\"n\":%d,\"pad\":\"", n);
    memset(text + k, 'p', 1000);
    strcpy(text + k + 1000, "\"}");
    aw_json_doc *d = NULL;
    assert_int_equal(aw_json_parse(text, strlen(text), NULL, &d, NULL), 0);
    return d;
}

static void send_many(aw_sink *s, int from, int to)
{
    for (int i = from; i < to; i++) {
        aw_json_doc *d = envelope(i);
        aw_error err;
        s->ops->send(s, "agent.x", aw_json_doc_root(d), &err);
        aw_json_doc_free(d);
    }
}

/* A sink writing into a new pipe p. */
static aw_sink *pipe_sink(int p[2])
{
    assert_int_equal(pipe(p), 0);
    aw_error err;
    aw_sink *s = aw_sink_file_fd(p[1], "pipe", NULL, &err);
    assert_non_null(s);
    return s;
}

static void test_a_stalled_pipe_never_blocks(void **state)
{
    (void)state;
    int p[2];
    aw_error err;
    aw_sink *s = pipe_sink(p);
    /* 4 MB into a 64 KB pipe nobody reads: returns, keeps 1 MB queued */
    send_many(s, 0, 4000);
    assert_true(s->dropped > 0);
    assert_true(s->sent + s->dropped == 4000);
    assert_true(s->sent < 4000);
    /* the end gives up within its timeout */
    assert_int_equal(s->ops->flush(s, 50, &err), 0);
    aw_sink_free(s);
    /* what the pipe holds is whole lines, in order */
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    char *buf = malloc(1 << 20);
    ssize_t n = read(p[0], buf, 1 << 20);
    assert_true(n > 0);
    int expect = 0;
    for (char *line = buf; line < buf + n;) {
        char *nl = memchr(line, '\n', (size_t)(buf + n - line));
        if (!nl)
            break; /* the pipe's last line may continue in the part not read */
        assert_int_equal(atoi(line + 5), expect);
        expect++;
        line = nl + 1;
    }
    assert_true(expect > 10);
    free(buf);
    close(p[0]);
    close(p[1]);
}

static void test_a_reader_that_catches_up_gets_every_line(void **state)
{
    (void)state;
    int p[2];
    aw_error err;
    aw_sink *s = pipe_sink(p);
    /* 200 KB: more than the pipe, less than the queue */
    send_many(s, 0, 200);
    assert_int_equal(s->dropped, 0);
    /* read it all while flushing, from a child */
    pid_t pid = fork();
    if (pid == 0) {
        char buf[4096];
        long lines = 0;
        ssize_t n;
        /* every write end the parent holds (the sink's own too) */
        for (int fd = 3; fd < 1024; fd++)
            if (fd != p[0])
                close(fd);
        while ((n = read(p[0], buf, sizeof buf)) > 0) {
            for (ssize_t i = 0; i < n; i++)
                lines += buf[i] == '\n';
        }
        _exit(lines == 200 ? 0 : 1);
    }
    close(p[0]);
    assert_int_equal(s->ops->flush(s, 10000, &err), 0);
    assert_int_equal(s->dropped, 0);
    aw_sink_free(s);
    close(p[1]);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_a_fifo_nobody_reads_is_an_error(void **state)
{
    (void)state;
    char dir[] = "/tmp/aw-sink-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    aw_error err;
    assert_null(aw_sink_open(NULL, path, NULL, &err));
    assert_non_null(strstr(err.message, "nobody reads"));
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_stalled_pipe_never_blocks),
        cmocka_unit_test(test_a_reader_that_catches_up_gets_every_line),
        cmocka_unit_test(test_a_fifo_nobody_reads_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
