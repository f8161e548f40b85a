/* Child processes in their own process groups, served by the loop.
 *
 * The exit is seen through a pidfd (a descriptor that becomes readable when
 * the child exits), so no SIGCHLD handler is needed; kernels without
 * pidfd_open are polled with waitid every 20 ms instead. The exit is peeked
 * at first (WNOWAIT): while the child is a zombie its process-group id
 * cannot be reused, so what is left of its group is killed safely before
 * the child is reaped.
 *
 * A child is started the way posix_spawn starts one: clone(CLONE_VM |
 * CLONE_VFORK) on a stack of its own, so the parent's address space is
 * shared until the exec, not copied. fork() copied the page tables of
 * every mapping of the runtime (some 40 shared libraries through libcurl
 * and libpq) and then took copy-on-write faults: half the CPU time of an
 * agent run with five tool calls a turn (bench/run_runtime.sh). posix_spawn
 * itself cannot set PR_SET_PDEATHSIG, hence the clone. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agentwire/buf.h"
#include "agentwire/proc.h"
#include "internal/rt_util.h"

extern char **environ;

#define READ_CHUNK 65536
#define DRAIN_AFTER_EXIT_MS 1000
#define EXIT_POLL_MS 20

struct aw_proc {
    aw_loop *loop;
    const aw_allocator *alloc;
    pid_t pid;
    int status;
    bool exited;          /* reaped */
    bool exit_reported;
    bool close_stdin;     /* close once the queue is written */
    int in_fd, out_fd, err_fd, pid_fd;
    aw_watch *in_w, *out_w, *err_w, *pid_w;
    aw_timer *poll_timer, *drain_timer, *kill_timer, *report_timer;
    aw_buf inq;
    size_t inq_off;
    aw_proc_fns fns;
    void *ctx;
    int depth;            /* callbacks under way */
    bool free_pending;
};

static void close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

static void drop_watch(aw_watch **w)
{
    aw_watch_free(*w);
    *w = NULL;
}

static void drop_timer(aw_timer **t)
{
    aw_timer_free(*t);
    *t = NULL;
}

static void release(aw_proc *p)
{
    drop_watch(&p->in_w);
    drop_watch(&p->out_w);
    drop_watch(&p->err_w);
    drop_watch(&p->pid_w);
    drop_timer(&p->poll_timer);
    drop_timer(&p->drain_timer);
    drop_timer(&p->kill_timer);
    drop_timer(&p->report_timer);
    close_fd(&p->in_fd);
    close_fd(&p->out_fd);
    close_fd(&p->err_fd);
    close_fd(&p->pid_fd);
    aw_buf_free(&p->inq);
    aw_free(p->alloc, p);
}

/* Callbacks may free the handle; the memory goes once they return. */
static void enter(aw_proc *p) { p->depth++; }
static bool leave(aw_proc *p)
{
    if (--p->depth == 0 && p->free_pending) {
        release(p);
        return false;
    }
    return !p->free_pending;
}

static void maybe_report_exit(aw_proc *p);

static void report_now(void *ctx)
{
    aw_proc *p = ctx;
    drop_timer(&p->report_timer);
    maybe_report_exit(p);
}

static void maybe_report_exit(aw_proc *p)
{
    if (!p->exited || p->exit_reported || p->free_pending)
        return;
    if ((p->out_fd >= 0 || p->err_fd >= 0) && p->drain_timer)
        return; /* output still coming; the drain timer bounds the wait */
    p->exit_reported = true;
    drop_timer(&p->drain_timer);
    drop_watch(&p->out_w);
    drop_watch(&p->err_w);
    close_fd(&p->out_fd);
    close_fd(&p->err_fd);
    drop_watch(&p->in_w);
    close_fd(&p->in_fd);
    if (p->fns.on_exit) {
        enter(p);
        p->fns.on_exit(p->ctx, p->status);
        leave(p);
    }
}

static void drain_expired(void *ctx)
{
    aw_proc *p = ctx;
    drop_timer(&p->drain_timer);
    maybe_report_exit(p);
}

/* The child has exited (a zombie): kill the rest of its group, reap it. */
static void reap(aw_proc *p)
{
    siginfo_t info;
    memset(&info, 0, sizeof info);
    if (waitid(P_PID, (id_t)p->pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0)
        return;
    kill(-p->pid, SIGKILL);
    int st = 0;
    while (waitpid(p->pid, &st, 0) < 0 && errno == EINTR)
        ;
    p->exited = true;
    p->status = st;
    drop_watch(&p->pid_w);
    close_fd(&p->pid_fd);
    drop_timer(&p->poll_timer);
    drop_timer(&p->kill_timer);
    if (p->out_fd >= 0 || p->err_fd >= 0)
        p->drain_timer = aw_loop_timer(p->loop, DRAIN_AFTER_EXIT_MS, drain_expired, p);
    /* Report from the loop, never from inside the caller's aw_proc_* call. */
    if (!p->report_timer)
        p->report_timer = aw_loop_timer(p->loop, 0, report_now, p);
    /* No memory for the timer: report now rather than never (reap runs
     * only from the loop's callbacks, inside enter/leave). */
    if (!p->report_timer)
        maybe_report_exit(p);
}

static void on_pidfd(void *ctx, int fd, unsigned ev)
{
    (void)fd;
    (void)ev;
    aw_proc *p = ctx;
    enter(p);
    reap(p);
    leave(p);
}

static void on_poll_timer(void *ctx)
{
    aw_proc *p = ctx;
    enter(p);
    reap(p);
    if (leave(p) && !p->exited && p->poll_timer)
        aw_timer_reset(p->poll_timer, EXIT_POLL_MS);
}

static void on_output(aw_proc *p, int *fd, aw_watch **w, bool is_err)
{
    char buf[READ_CHUNK];
    ssize_t n = read(*fd, buf, sizeof buf);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        drop_watch(w);
        close_fd(fd);
        if (p->out_fd < 0 && p->err_fd < 0)
            drop_timer(&p->drain_timer);
        maybe_report_exit(p);
        return;
    }
    void (*fn)(void *, const char *, size_t) = is_err ? p->fns.on_stderr : p->fns.on_stdout;
    if (fn) {
        enter(p);
        fn(p->ctx, buf, (size_t)n);
        leave(p);
    }
}

static void on_stdout_ready(void *ctx, int fd, unsigned ev)
{
    (void)fd;
    (void)ev;
    aw_proc *p = ctx;
    on_output(p, &p->out_fd, &p->out_w, false);
}

static void on_stderr_ready(void *ctx, int fd, unsigned ev)
{
    (void)fd;
    (void)ev;
    aw_proc *p = ctx;
    on_output(p, &p->err_fd, &p->err_w, true);
}

static void flush_stdin(aw_proc *p)
{
    while (p->in_fd >= 0 && p->inq_off < p->inq.len) {
        ssize_t n = aw_rt_write_nosigpipe(p->in_fd, p->inq.data + p->inq_off, p->inq.len - p->inq_off);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                break;
            /* The child closed its stdin (EPIPE) or it failed: drop the rest. */
            p->inq_off = p->inq.len;
            p->close_stdin = true;
            break;
        }
        p->inq_off += (size_t)n;
    }
    if (p->inq_off == p->inq.len) {
        aw_buf_clear(&p->inq);
        p->inq_off = 0;
        if (p->close_stdin) {
            drop_watch(&p->in_w);
            close_fd(&p->in_fd);
            return;
        }
    }
    if (p->in_w)
        aw_watch_set(p->in_w, p->inq.len > p->inq_off ? AW_WATCH_WRITE : 0);
}

static void on_stdin_ready(void *ctx, int fd, unsigned ev)
{
    (void)fd;
    (void)ev;
    flush_stdin(ctx);
}

int aw_proc_write(aw_proc *p, const char *data, size_t n)
{
    if (p->in_fd < 0 || p->close_stdin)
        return 0;
    if (aw_buf_append(&p->inq, data, n))
        return AW_ENOMEM;
    flush_stdin(p);
    return 0;
}

void aw_proc_close_stdin(aw_proc *p)
{
    p->close_stdin = true;
    flush_stdin(p);
}

size_t aw_proc_pending(const aw_proc *p) { return p->inq.len - p->inq_off; }

int aw_proc_kill(aw_proc *p, int sig)
{
    if (p->exited)
        return 0;
    return kill(-p->pid, sig) == 0 || errno == ESRCH ? 0 : AW_EINVAL;
}

static void kill_expired(void *ctx)
{
    aw_proc *p = ctx;
    drop_timer(&p->kill_timer);
    aw_proc_kill(p, SIGKILL);
}

void aw_proc_terminate(aw_proc *p, int64_t grace_ms)
{
    if (p->exited)
        return;
    aw_proc_kill(p, SIGTERM);
    if (!p->kill_timer)
        p->kill_timer = aw_loop_timer(p->loop, grace_ms, kill_expired, p);
}

pid_t aw_proc_pid(const aw_proc *p) { return p->pid; }
bool aw_proc_running(const aw_proc *p) { return !p->exited; }

void aw_proc_describe_status(int status, char *out, size_t out_size)
{
    if (WIFEXITED(status))
        snprintf(out, out_size, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(out, out_size, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(out, out_size, "ended with wait status %d", status);
}

/* ---- spawning ------------------------------------------------------------- */

static size_t name_len(const char *entry)
{
    const char *eq = strchr(entry, '=');
    return eq ? (size_t)(eq - entry) : strlen(entry);
}

static bool overridden(const char *entry, const char *const *extra)
{
    size_t n = name_len(entry);
    for (size_t i = 0; extra && extra[i]; i++)
        if (name_len(extra[i]) == n && strncmp(entry, extra[i], n) == 0)
            return true;
    return false;
}

/* The child's environment, built before fork (allocating after fork is
 * not safe while other threads, such as a resolver's, may hold a lock). */
static char **build_env(const aw_allocator *a, const char *const *extra)
{
    size_t n = 0, m = 0;
    while (environ && environ[n])
        n++;
    while (extra && extra[m])
        m++;
    char **env = aw_malloc(a, (n + m + 1) * sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!overridden(environ[i], extra))
            env[k++] = environ[i];
    for (size_t i = 0; i < m; i++)
        if (strchr(extra[i], '='))
            env[k++] = (char *)extra[i];
    env[k] = NULL;
    return env;
}

static int set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void close_pair(int fds[2])
{
    close_fd(&fds[0]);
    close_fd(&fds[1]);
}

/* What the child needs, on the parent's stack (the memory is shared until
 * the exec), and what it says back when it cannot run the command: the
 * step that failed ('d' chdir, 'x' exec) and its errno. */
typedef struct child_args {
    const aw_proc_spec *spec;
    char **env;
    int in_r, out_w, err_w;
    char failed;
    int failed_errno;
} child_args;

/* In the child, on its own stack, sharing the parent's memory: never
 * returns. Only async-signal-safe calls, and nothing written but its own
 * stack, the descriptors and, on failure, c->failed. All signals are blocked on entry (the parent
 * blocked them), so no handler of the parent's can run here and touch
 * the shared memory: the dispositions are reset before the mask is. */
static int child_exec(void *arg)
{
    child_args *c = arg;
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (int s = 1; s < 32; s++)
        if (s != SIGKILL && s != SIGSTOP)
            signal(s, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int in_r = c->in_r;
    if (in_r < 0)
        in_r = open("/dev/null", O_RDONLY);
    dup2(in_r, 0);
    dup2(c->out_w, 1);
    dup2(c->err_w, 2);
    if (c->spec->cwd && chdir(c->spec->cwd) != 0) {
        c->failed_errno = errno;
        c->failed = 'd';
        _exit(127);
    }
    execvpe(c->spec->argv[0], (char *const *)c->spec->argv, c->env);
    c->failed_errno = errno;
    c->failed = 'x';
    _exit(127);
}

/* The child's stack: room for execvpe's copy of a path and, for a script
 * without a #! line, of the arguments (glibc's posix_spawn sizes it the
 * same way). */
static size_t child_stack_size(const aw_proc_spec *spec)
{
    size_t n = 64 * 1024;
    for (size_t i = 0; spec->argv[i]; i++)
        n += sizeof(char *);
    long page = sysconf(_SC_PAGESIZE);
    size_t p = page > 0 ? (size_t)page : 4096;
    return (n + p - 1) / p * p;
}

/* Start the child: its pid, or -1 with errno set. The parent goes on once
 * the child has exec'd or exited (CLONE_VFORK), so by then the child is in
 * its own process group, and c->failed says whether the exec failed. */
static pid_t start_child(child_args *c)
{
    size_t size = child_stack_size(c->spec);
    char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED)
        return -1;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t pid = clone(child_exec, stack + size, CLONE_VM | CLONE_VFORK | SIGCHLD, c);
    int saved = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    munmap(stack, size);
    errno = saved;
    return pid;
}

aw_proc *aw_proc_spawn(aw_loop *l, const aw_proc_spec *spec, const aw_proc_fns *fns, void *ctx,
                       aw_error *err)
{
    const aw_allocator *a = aw_loop_allocator(l);
    aw_error_clear(err);
    if (!spec || !spec->argv || !spec->argv[0]) {
        aw_rt_error(err, AW_EINVAL, "no command to run");
        return NULL;
    }
    aw_proc *p = aw_malloc(a, sizeof *p);
    char **env = build_env(a, spec->env);
    if (!p || !env) {
        aw_free(a, p);
        aw_free(a, env);
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    memset(p, 0, sizeof *p);
    p->loop = l;
    p->alloc = a;
    p->in_fd = p->out_fd = p->err_fd = p->pid_fd = -1;
    aw_buf_init(&p->inq, a);
    if (fns)
        p->fns = *fns;
    p->ctx = ctx;

    int in[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1};
    if ((spec->stdin_pipe && pipe2(in, O_CLOEXEC)) || pipe2(out, O_CLOEXEC) || pipe2(er, O_CLOEXEC)) {
        aw_rt_error(err, AW_EINVAL, "cannot run '%s': pipe: %s", spec->argv[0], strerror(errno));
        goto fail;
    }
    child_args args = {spec, env, in[0], out[1], er[1], 0, 0};
    pid_t pid = start_child(&args);
    if (pid < 0) {
        aw_rt_error(err, AW_EINVAL, "cannot run '%s': clone: %s", spec->argv[0], strerror(errno));
        goto fail;
    }
    p->pid = pid;
    close_fd(&in[0]);
    close_fd(&out[1]);
    close_fd(&er[1]);
    if (args.failed) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        if (args.failed == 'd')
            aw_rt_error(err, AW_EINVAL, "cannot run '%s': cannot enter '%s': %s", spec->argv[0], spec->cwd,
                        strerror(args.failed_errno));
        else
            aw_rt_error(err, AW_EINVAL, "cannot run '%s': %s", spec->argv[0], strerror(args.failed_errno));
        goto fail;
    }
    aw_free(a, env);
    env = NULL;

    p->in_fd = in[1];
    p->out_fd = out[0];
    p->err_fd = er[0];
    if ((p->in_fd >= 0 && set_nonblock(p->in_fd)) || set_nonblock(p->out_fd) || set_nonblock(p->err_fd))
        goto fail_started;
    p->out_w = aw_loop_watch(l, p->out_fd, AW_WATCH_READ, on_stdout_ready, p);
    p->err_w = aw_loop_watch(l, p->err_fd, AW_WATCH_READ, on_stderr_ready, p);
    if (!p->out_w || !p->err_w)
        goto fail_started;
    if (p->in_fd >= 0 && !(p->in_w = aw_loop_watch(l, p->in_fd, 0, on_stdin_ready, p)))
        goto fail_started;
    p->pid_fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (p->pid_fd >= 0)
        p->pid_w = aw_loop_watch(l, p->pid_fd, AW_WATCH_READ, on_pidfd, p);
    else
        p->poll_timer = aw_loop_timer(l, EXIT_POLL_MS, on_poll_timer, p);
    if (!p->pid_w && !p->poll_timer)
        goto fail_started;
    return p;

fail_started:
    kill(-pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    aw_rt_error(err, AW_ENOMEM, "cannot run '%s': out of memory", spec->argv[0]);
    p->exited = true;
    release(p);
    return NULL;
fail:
    close_pair(in);
    close_pair(out);
    close_pair(er);
    aw_free(a, env);
    p->exited = true;
    release(p);
    return NULL;
}

void aw_proc_free(aw_proc *p)
{
    if (!p || p->free_pending)
        return;
    if (!p->exited) {
        kill(-p->pid, SIGKILL);
        while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        p->exited = true;
    }
    p->free_pending = true;
    if (p->depth == 0)
        release(p);
}
