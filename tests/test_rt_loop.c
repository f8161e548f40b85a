/* The runtime's event loop and child processes: timer order, deferred
 * calls, handles freed from their own callbacks, output and exit of
 * children, stdin written as the pipe takes it, process groups killed,
 * errors for programs that cannot run, allocation failures. */
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
#include "agentwire/loop.h"
#include "agentwire/proc.h"
#include "failalloc.h"
#include "testutil.h"

/* ---- timers and deferred calls ------------------------------------------- */

typedef struct order {
    char seen[32];
    int n;
    aw_timer *self;
} order;

static void mark_a(void *ctx) { order *o = ctx; o->seen[o->n++] = 'a'; }
static void mark_b(void *ctx) { order *o = ctx; o->seen[o->n++] = 'b'; }
static void mark_c(void *ctx) { order *o = ctx; o->seen[o->n++] = 'c'; }
static void mark_d(void *ctx) { order *o = ctx; o->seen[o->n++] = 'd'; }

static void test_timers_fire_in_deadline_order(void **state)
{
    (void)state;
    aw_loop *l = aw_loop_new(NULL, NULL);
    order o = {0};
    aw_timer *t1 = aw_loop_timer(l, 30, mark_c, &o);
    aw_timer *t2 = aw_loop_timer(l, 10, mark_b, &o);
    aw_timer *t3 = aw_loop_timer(l, 0, mark_a, &o);
    aw_timer *t4 = aw_loop_timer(l, 0, mark_d, &o); /* same deadline as t3: after it */
    aw_timer_free(t4);                               /* ...but cancelled */
    assert_int_equal(aw_loop_run(l), 0);             /* returns once nothing is armed */
    assert_string_equal(o.seen, "abc");
    aw_timer_free(t1);
    aw_timer_free(t2);
    aw_timer_free(t3);
    aw_loop_free(l);
}

static void free_self(void *ctx)
{
    order *o = ctx;
    o->seen[o->n++] = 'x';
    aw_timer_free(o->self);
    o->self = NULL;
}

static void rearm(void *ctx)
{
    order *o = ctx;
    o->seen[o->n++] = 'r';
    if (o->n < 3)
        aw_timer_reset(o->self, 1);
}

static void test_timer_freed_or_rearmed_in_its_callback(void **state)
{
    (void)state;
    aw_loop *l = aw_loop_new(NULL, NULL);
    order o = {0};
    o.self = aw_loop_timer(l, 0, free_self, &o);
    aw_loop_run(l);
    assert_string_equal(o.seen, "x");
    assert_null(o.self);

    order r = {0};
    r.self = aw_loop_timer(l, 0, rearm, &r);
    aw_loop_run(l);
    assert_string_equal(r.seen, "rrr");
    aw_timer_free(r.self);
    aw_loop_free(l);
}

static void defer_chain(void *ctx);
typedef struct chain {
    aw_loop *l;
    int left;
    int rounds;
} chain;
static void defer_chain(void *ctx)
{
    chain *c = ctx;
    c->rounds++;
    if (--c->left > 0)
        aw_loop_defer(c->l, defer_chain, c);
}

static void test_deferred_calls_run_next_round(void **state)
{
    (void)state;
    aw_loop *l = aw_loop_new(NULL, NULL);
    chain c = {l, 5, 0};
    aw_loop_defer(l, defer_chain, &c);
    /* One round runs only what was queued before it. */
    aw_loop_once(l, 0);
    assert_int_equal(c.rounds, 1);
    aw_loop_run(l);
    assert_int_equal(c.rounds, 5);
    aw_loop_free(l);
}

/* ---- watches ---------------------------------------------------------------- */

typedef struct reader {
    aw_watch *w;
    aw_buf got;
    bool eof;
} reader;

static void on_readable(void *ctx, int fd, unsigned ev)
{
    reader *r = ctx;
    assert_true(ev & AW_WATCH_READ);
    char buf[64];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) {
        r->eof = true;
        aw_watch_free(r->w); /* from its own callback */
        r->w = NULL;
        return;
    }
    aw_buf_append(&r->got, buf, (size_t)n);
}

static void test_watch_reads_until_eof_and_frees_itself(void **state)
{
    (void)state;
    aw_loop *l = aw_loop_new(NULL, NULL);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    reader r = {0};
    aw_buf_init(&r.got, NULL);
    r.w = aw_loop_watch(l, fds[0], AW_WATCH_READ, on_readable, &r);
    assert_int_equal(write(fds[1], "hello", 5), 5);
    close(fds[1]);
    aw_loop_run(l);
    assert_true(r.eof);
    assert_int_equal(r.got.len, 5);
    assert_memory_equal(r.got.data, "hello", 5);
    close(fds[0]);
    aw_buf_free(&r.got);
    aw_loop_free(l);
}

/* ---- processes --------------------------------------------------------------- */

typedef struct child {
    aw_proc *p;
    aw_buf out, err;
    int status;
    bool exited;
    aw_loop *l;
} child;

static void c_out(void *ctx, const char *p, size_t n) { aw_buf_append(&((child *)ctx)->out, p, n); }
static void c_err(void *ctx, const char *p, size_t n) { aw_buf_append(&((child *)ctx)->err, p, n); }
static void c_exit(void *ctx, int status)
{
    child *c = ctx;
    c->status = status;
    c->exited = true;
}

static const aw_proc_fns child_fns = {c_out, c_err, c_exit};

static void child_init(child *c, aw_loop *l)
{
    memset(c, 0, sizeof *c);
    c->l = l;
    aw_buf_init(&c->out, NULL);
    aw_buf_init(&c->err, NULL);
}

static void child_done(child *c)
{
    aw_proc_free(c->p);
    aw_buf_free(&c->out);
    aw_buf_free(&c->err);
}

static void run_until_exit(aw_loop *l, child *c)
{
    for (int i = 0; i < 2000 && !c->exited; i++)
        aw_loop_once(l, 50);
    assert_true(c->exited);
}

static void test_child_output_and_exit_status(void **state)
{
    (void)state;
    aw_loop *l = aw_loop_new(NULL, NULL);
    child c;
    child_init(&c, l);
    const char *argv[] = {"sh", "-c", "printf out; printf err >&2; exit 3", NULL};
    aw_proc_spec spec = {.argv = argv};
    aw_error err;
    c.p = aw_proc_spawn(l, &spec, &child_fns, &c, &err);
    assert_non_null(c.p);
    run_until_exit(l, &c);
    assert_true(WIFEXITED(c.status));
    assert_int_equal(WEXITSTATUS(c.status), 3);
    assert_string_equal(c.out.data, "out");
    assert_string_equal(c.err.data, "err");
    char desc[64];
    aw_proc_describe_status(c.status, desc, sizeof desc);
    assert_string_equal(desc, "exited with status 3");
    child_done(&c);
    aw_loop_free(l);
}

static void test_stdin_larger_than_a_pipe_is_written_without_blocking(void **state)
{
    (void)state;
    aw_loop *l = aw_loop_new(NULL, NULL);
    child c;
    child_init(&c, l);
    const char *argv[] = {"wc", "-c", NULL};
    aw_proc_spec spec = {.argv = argv, .stdin_pipe = true};
    c.p = aw_proc_spawn(l, &spec, &child_fns, &c, NULL);
    assert_non_null(c.p);
    /* 2 MB: far more than a pipe holds, so it goes out as the child reads. */
    size_t n = 2u << 20;
    char *big = malloc(n);
    memset(big, 'x', n);
    assert_int_equal(aw_proc_write(c.p, big, n), 0);
    free(big);
    aw_proc_close_stdin(c.p);
    run_until_exit(l, &c);
    assert_int_equal(atol(c.out.data), (long)n);
    child_done(&c);
    aw_loop_free(l);
}

static void test_environment_and_directory(void **state)
{
    (void)state;
    aw_loop *l = aw_loop_new(NULL, NULL);
    child c;
    child_init(&c, l);
    setenv("AW_TEST_DROPPED", "1", 1);
    const char *argv[] = {"sh", "-c", "printf '%s|%s|' \"$AW_TEST_SET\" \"${AW_TEST_DROPPED-unset}\"; pwd", NULL};
    const char *env[] = {"AW_TEST_SET=yes", "AW_TEST_DROPPED", NULL};
    aw_proc_spec spec = {.argv = argv, .env = env, .cwd = "/tmp"};
    c.p = aw_proc_spawn(l, &spec, &child_fns, &c, NULL);
    assert_non_null(c.p);
    run_until_exit(l, &c);
    assert_string_equal(c.out.data, "yes|unset|/tmp\n");
    child_done(&c);
    aw_loop_free(l);
}

static void test_program_that_cannot_run_is_an_error(void **state)
{
    (void)state;
    aw_loop *l = aw_loop_new(NULL, NULL);
    const char *argv[] = {"/nonexistent/aw-tool", NULL};
    aw_proc_spec spec = {.argv = argv};
    aw_error err;
    assert_null(aw_proc_spawn(l, &spec, &child_fns, NULL, &err));
    assert_string_equal(err.message, "cannot run '/nonexistent/aw-tool': No such file or directory");
    const char *argv2[] = {"true", NULL};
    aw_proc_spec spec2 = {.argv = argv2, .cwd = "/nonexistent-dir"};
    assert_null(aw_proc_spawn(l, &spec2, &child_fns, NULL, &err));
    assert_string_equal(err.message, "cannot run 'true': cannot enter '/nonexistent-dir': No such file or directory");
    aw_loop_free(l);
}


static void test_group_is_killed_when_the_leader_exits(void **state)
{
    (void)state;
    aw_loop *l = aw_loop_new(NULL, NULL);
    child c;
    child_init(&c, l);
    /* The leader starts a sleeper in the background, prints its pid and
     * exits; the sleeper must not outlive it. */
    const char *argv[] = {"sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!", NULL};
    aw_proc_spec spec = {.argv = argv};
    c.p = aw_proc_spawn(l, &spec, &child_fns, &c, NULL);
    assert_non_null(c.p);
    run_until_exit(l, &c);
    pid_t sleeper = (pid_t)atol(c.out.data);
    assert_true(sleeper > 0);
    for (int i = 0; i < 100 && aw_test_pid_alive(sleeper); i++)
        usleep(10000);
    assert_false(aw_test_pid_alive(sleeper));
    child_done(&c);
    aw_loop_free(l);
}

static void test_terminate_then_kill_after_grace(void **state)
{
    (void)state;
    aw_loop *l = aw_loop_new(NULL, NULL);
    child c;
    child_init(&c, l);
    /* Ignores SIGTERM: only the SIGKILL after the grace period ends it. */
    const char *argv[] = {"sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done", NULL};
    aw_proc_spec spec = {.argv = argv};
    c.p = aw_proc_spawn(l, &spec, &child_fns, &c, NULL);
    for (int i = 0; i < 200 && c.out.len == 0; i++)
        aw_loop_once(l, 20);
    aw_proc_terminate(c.p, 100);
    run_until_exit(l, &c);
    assert_true(WIFSIGNALED(c.status));
    assert_int_equal(WTERMSIG(c.status), SIGKILL);
    child_done(&c);
    aw_loop_free(l);
}

static void test_free_while_running_kills_and_reaps(void **state)
{
    (void)state;
    aw_loop *l = aw_loop_new(NULL, NULL);
    child c;
    child_init(&c, l);
    const char *argv[] = {"sleep", "30", NULL};
    aw_proc_spec spec = {.argv = argv};
    c.p = aw_proc_spawn(l, &spec, &child_fns, &c, NULL);
    pid_t pid = aw_proc_pid(c.p);
    aw_proc_free(c.p);
    c.p = NULL;
    /* Reaped: no zombie is left for this pid. */
    assert_int_equal(waitpid(pid, NULL, WNOHANG), -1);
    assert_false(c.exited); /* no callback after free */
    aw_loop_run(l);         /* nothing left registered */
    child_done(&c);
    aw_loop_free(l);
}

static void free_on_output(void *ctx, const char *p, size_t n)
{
    (void)p;
    (void)n;
    child *c = ctx;
    aw_proc_free(c->p);
    c->p = NULL;
    c->exited = true;
}

static void test_free_from_output_callback(void **state)
{
    (void)state;
    aw_loop *l = aw_loop_new(NULL, NULL);
    child c;
    child_init(&c, l);
    const char *argv[] = {"sh", "-c", "echo hi; sleep 30", NULL};
    aw_proc_spec spec = {.argv = argv};
    aw_proc_fns fns = {free_on_output, NULL, c_exit};
    c.p = aw_proc_spawn(l, &spec, &fns, &c, NULL);
    run_until_exit(l, &c);
    aw_loop_run(l);
    child_done(&c);
    aw_loop_free(l);
}

/* ---- allocation failures ---------------------------------------------------- */

static int spawn_under(const aw_allocator *a, void *ctx)
{
    (void)ctx;
    aw_loop *l = aw_loop_new(a, NULL);
    if (!l)
        return AW_ENOMEM;
    child c;
    child_init(&c, l);
    const char *argv[] = {"printf", "abc", NULL};
    aw_proc_spec spec = {.argv = argv, .stdin_pipe = true};
    aw_error err;
    c.p = aw_proc_spawn(l, &spec, &child_fns, &c, &err);
    int rc = 0;
    if (!c.p) {
        rc = err.code;
    } else {
        rc = aw_proc_write(c.p, "x", 1);
        aw_proc_close_stdin(c.p);
        for (int i = 0; i < 400 && !c.exited; i++)
            if (aw_loop_once(l, 20))
                break;
    }
    child_done(&c);
    aw_loop_free(l);
    return rc;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    aw_failalloc_run(spawn_under, NULL, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timers_fire_in_deadline_order),
        cmocka_unit_test(test_timer_freed_or_rearmed_in_its_callback),
        cmocka_unit_test(test_deferred_calls_run_next_round),
        cmocka_unit_test(test_watch_reads_until_eof_and_frees_itself),
        cmocka_unit_test(test_child_output_and_exit_status),
        cmocka_unit_test(test_stdin_larger_than_a_pipe_is_written_without_blocking),
        cmocka_unit_test(test_environment_and_directory),
        cmocka_unit_test(test_program_that_cannot_run_is_an_error),
        cmocka_unit_test(test_group_is_killed_when_the_leader_exits),
        cmocka_unit_test(test_terminate_then_kill_after_grace),
        cmocka_unit_test(test_free_while_running_kills_and_reaps),
        cmocka_unit_test(test_free_from_output_callback),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
