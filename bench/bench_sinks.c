/* The event sinks' benchmark (issue 15): for a destination (a file, redis://,
 * http://),
 *
 *   burst     N envelopes sent at once, the loop served until every one is
 *             delivered: envelopes per second through the sink;
 *   paced     a "run" that does 1 ms of work (CPU, measured on the thread's
 *             own clock, so the machine's load does not stretch it) before
 *             each envelope, M envelopes, serving the loop between them as
 *             a run does: 1,000 envelopes a second. Its CPU time and wall
 *             time against the same run with no destination is the run's
 *             slowdown; the delivery after the run's end is not the run's.
 *
 *   bench_sinks DEST [N] [M]      prints "key value" lines
 *
 * The envelopes are real ones (an agent.tool.completed of about 500 bytes,
 * each with its number), on 1 channel. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agentwire/json.h"
#include "agentwire/loop.h"
#include "agentwire/sink.h"
#include "bench_util.h"

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static aw_json_doc *envelope(int n)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"type\":\"agent.tool.completed\",\"session_id\":\"0b5f6a52-7c1e-4b8e-9a51-6f2d1c3e4a5b\","
             "\"execution_id\":\"9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a\",\"timestamp\":\"2026-01-16T10:05:00.123Z\","
             "\"payload\":{\"tool_name\":\"SearchEntities\",\"tool_call_id\":\"call_%d\",\"success\":true,"
             "\"error\":null,\"duration_ms\":250.0,\"result_summary\":\"Found 3 entities: dbplus (program), "
             "dbplus-eu (program), dbplus partners (lead); the first matches the query exactly and has 12 open "
             "items, the second is archived\"}}",
             n);
    aw_json_doc *d = NULL;
    if (aw_json_parse(text, strlen(text), NULL, &d, NULL)) {
        fprintf(stderr, "bench_sinks: bad envelope\n");
        exit(1);
    }
    return d;
}

static aw_sink *open_sink(aw_loop *l, const char *dest, size_t queue)
{
    aw_error err;
    aw_sink_options o = {.queue_max = queue};
    aw_sink *s = aw_sink_open(l, dest, &o, &err);
    if (!s) {
        fprintf(stderr, "bench_sinks: %s\n", err.message);
        exit(1);
    }
    return s;
}

/* Serve the loop until the sink has delivered everything (at most 60 s). */
static void drain(aw_loop *l, aw_sink *s)
{
    double end = bench_now() + 60;
    while (aw_sink_pending(s) && bench_now() < end)
        aw_loop_once(l, 100);
}

static void work_1ms(void)
{
    double until = thread_cpu() + 0.001;
    volatile unsigned x = 1;
    while (thread_cpu() < until)
        for (int i = 0; i < 200; i++)
            x = x * 1664525u + 1013904223u;
}

static void never(void *ctx) { (void)ctx; }

typedef struct paced {
    double wall, cpu;
} paced;

/* The paced run, with s (NULL: no destination). */
static paced paced_run(aw_loop *l, aw_sink *s, aw_json_doc **envs, int m)
{
    double w0 = bench_now(), c0 = bench_cpu_now();
    for (int i = 0; i < m; i++) {
        work_1ms();
        if (s) {
            aw_error err;
            s->ops->send(s, "agent.0b5f6a52-7c1e-4b8e-9a51-6f2d1c3e4a5b", aw_json_doc_root(envs[i]), &err);
        }
        aw_loop_once(l, 0);
    }
    return (paced){bench_now() - w0, bench_cpu_now() - c0};
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_sinks DEST [BURST_N] [PACED_M]\n");
        return 2;
    }
    const char *dest = argv[1];
    int n = argc > 2 ? atoi(argv[2]) : 20000;
    int m = argc > 3 ? atoi(argv[3]) : 2000;
    int most = n > m ? n : m;
    aw_json_doc **envs = malloc((size_t)most * sizeof *envs);
    for (int i = 0; i < most; i++)
        envs[i] = envelope(i);
    aw_error err;
    aw_loop *l = aw_loop_new(NULL, &err);
    /* keeps the loop from running dry: a run always waits on something */
    aw_timer *keep = aw_loop_timer(l, 3600 * 1000, never, NULL);

    /* burst: the sink's own throughput */
    aw_sink *s = open_sink(l, dest, (size_t)n + 1);
    for (int i = 0; i < 50; i++) /* connected and warm */
        s->ops->send(s, "agent.warm", aw_json_doc_root(envs[i]), &err);
    drain(l, s);
    uint64_t sent0 = s->sent;
    double t0 = bench_now(), c0 = bench_cpu_now();
    for (int i = 0; i < n; i++)
        s->ops->send(s, "agent.0b5f6a52-7c1e-4b8e-9a51-6f2d1c3e4a5b", aw_json_doc_root(envs[i]), &err);
    drain(l, s);
    double t = bench_now() - t0, c = bench_cpu_now() - c0;
    printf("burst_envelopes %d\n", n);
    printf("burst_delivered %llu\n", (unsigned long long)(s->sent - sent0));
    printf("burst_per_second %.0f\n", (double)(s->sent - sent0) / t);
    printf("burst_cpu_us_per_envelope %.1f\n", c * 1e6 / n);

    /* paced: the run's slowdown at 1,000 envelopes a second, best of 3 */
    paced base = {1e9, 1e9}, with = {1e9, 1e9};
    for (int round = 0; round < 3; round++) {
        paced b = paced_run(l, NULL, envs, m);
        paced w = paced_run(l, s, envs, m);
        drain(l, s);
        if (b.cpu < base.cpu)
            base = b;
        if (w.cpu < with.cpu)
            with = w;
    }
    printf("paced_envelopes %d\n", m);
    printf("paced_rate %.0f\n", m / with.wall);
    printf("paced_base_cpu_s %.3f\n", base.cpu);
    printf("paced_sink_cpu_s %.3f\n", with.cpu);
    printf("paced_slowdown_cpu_pct %.2f\n", (with.cpu - base.cpu) / base.cpu * 100);
    printf("paced_slowdown_wall_pct %.2f\n", (with.wall - base.wall) / base.wall * 100);
    printf("dropped %llu\n", (unsigned long long)s->dropped);
    aw_sink_free(s);
    aw_timer_free(keep);
    aw_loop_free(l);
    for (int i = 0; i < most; i++)
        aw_json_doc_free(envs[i]);
    free(envs);
    return 0;
}
