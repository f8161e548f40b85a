/* bench_mcp SERVER_JS CALLS — tool-call round trips through agentwire's MCP
 * client against a real server (server-everything's echo), one call at a
 * time and 8 in flight. Prints, for each:
 *
 *   MODE calls=N seconds=S client_cpu_us=C client_user_us=U server_cpu_us=V
 *
 * client CPU is this process's (getrusage: user + system), the server's is
 * read from /proc for the child, so each side's cost is told apart. The
 * peer (bench/peers/mcp_peer.js, the official TypeScript SDK) prints the
 * same lines. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "agentwire/mcp.h"
#include "bench_util.h"

typedef struct bench {
    aw_loop *loop;
    aw_tool_source *src;
    aw_json_doc *args;
    bool ready, failed;
    long started, finished, total;
    int in_flight_max, in_flight;
} bench;

static double cpu_us_self(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* User time only: the client's own work, without the kernel's (system
 * calls, and above all being put to sleep and woken for each answer). */
static double user_us_self(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec;
}

/* The server's CPU time (user + system, µs), from /proc: the one child. */
static double cpu_us_child(void)
{
    char path[128], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)getpid(), (int)getpid());
    FILE *f = fopen(path, "r");
    long pid = 0;
    if (!f || fscanf(f, "%ld", &pid) != 1) {
        if (f)
            fclose(f);
        return 0;
    }
    fclose(f);
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    if (!(f = fopen(path, "r")))
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    unsigned long utime = 0, stime = 0;
    /* fields after the command: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2)
        return 0;
    return (double)(utime + stime) * 1e6 / (double)sysconf(_SC_CLK_TCK);
}

static void ready(void *ctx, aw_tool_source *s, const aw_error *err)
{
    (void)s;
    bench *b = ctx;
    b->ready = true;
    if (err && err->code) {
        fprintf(stderr, "bench_mcp: the server did not start: %s\n", err->message);
        b->failed = true;
    }
}

static size_t echo_index(bench *b)
{
    for (size_t i = 0; i < b->src->ops->count(b->src); i++) {
        const aw_tool_def *d = b->src->ops->def(b->src, i);
        if (d->name.len == 8 && !memcmp(d->name.ptr, "ev__echo", 8))
            return i;
    }
    fprintf(stderr, "bench_mcp: the server has no echo tool\n");
    exit(1);
}

static void start_one(bench *b);

static void done(void *ctx, const aw_tool_result *res)
{
    bench *b = ctx;
    if (!res->ok || res->output.len != 18 || memcmp(res->output.ptr, "Echo: hello, world", 18)) {
        fprintf(stderr, "bench_mcp: unexpected result: %.*s\n", (int)res->output.len, res->output.ptr);
        exit(1);
    }
    b->finished++;
    b->in_flight--;
    while (b->in_flight < b->in_flight_max && b->started < b->total)
        start_one(b);
}

static void start_one(bench *b)
{
    void *handle;
    aw_error err;
    b->started++;
    b->in_flight++;
    if (b->src->ops->call(b->src, echo_index(b), aw_json_doc_root(b->args), NULL, done, b, &handle, &err)) {
        fprintf(stderr, "bench_mcp: %s\n", err.message);
        exit(1);
    }
}

static void run(bench *b, const char *mode, long calls, int in_flight)
{
    b->started = b->finished = 0;
    b->total = calls;
    b->in_flight = 0;
    b->in_flight_max = in_flight;
    double cpu0 = cpu_us_self(), user0 = user_us_self(), srv0 = cpu_us_child(), t0 = bench_now();
    while (b->in_flight < in_flight && b->started < calls)
        start_one(b);
    while (b->finished < calls)
        aw_loop_once(b->loop, 1000);
    double secs = bench_now() - t0;
    double cpu = cpu_us_self() - cpu0, user = user_us_self() - user0, srv = cpu_us_child() - srv0;
    if (mode)
        printf("%s calls=%ld seconds=%.6f client_cpu_us=%.0f client_user_us=%.0f server_cpu_us=%.0f\n", mode, calls,
               secs, cpu, user, srv);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_mcp SERVER_JS CALLS\n");
        return 2;
    }
    /* as Node does at startup (the peer's runtime), and programs that write
     * to pipes usually do: a closed pipe is an error, not a death */
    signal(SIGPIPE, SIG_IGN);
    long calls = atol(argv[2]);
    char config[4096];
    snprintf(config, sizeof config, "{\"command\":\"node\",\"args\":[\"%s\",\"stdio\"]}", argv[1]);
    bench b = {0};
    b.loop = aw_loop_new(NULL, NULL);
    aw_json_doc *cfg = NULL;
    const char *args = "{\"message\":\"hello, world\"}";
    if (aw_json_parse(config, strlen(config), NULL, &cfg, NULL) ||
        aw_json_parse(args, strlen(args), NULL, &b.args, NULL))
        return 1;
    aw_error err;
    b.src = aw_mcp_source_new(b.loop, "ev", aw_json_doc_root(cfg), NULL, NULL, &err);
    if (!b.src) {
        fprintf(stderr, "bench_mcp: %s\n", err.message);
        return 1;
    }
    b.src->ops->start(b.src, ready, &b);
    while (!b.ready)
        aw_loop_once(b.loop, 1000);
    if (b.failed)
        return 1;
    run(&b, NULL, calls / 10 + 10, 1); /* warm the server up (its JIT) */
    run(&b, "sequential", calls, 1);
    run(&b, "inflight8", calls, 8);
    b.src->ops->destroy(b.src);
    aw_json_doc_free(cfg);
    aw_json_doc_free(b.args);
    aw_loop_free(b.loop);
    return 0;
}
