/* bench_serve AGENTWIRE DIR [TURNS] [CALLS] [DELAY_MS] [ROUNDS]: agentwire
 * serve's server-sent events to a local client (issue 15).
 *
 *  1. Live: a real run (`agentwire run` on the replay provider: TURNS
 *     turns of CALLS agent__progress_report calls, each turn's reply
 *     DELAY_MS in coming, stored in sqlite:DIR/sessions.db; 2 + 2 CALLS
 *     envelopes a turn) timed alone, and timed again while a server (in
 *     this process, default options: the store looked at every 250 ms)
 *     streams its envelopes to a client following it from its start;
 *     ROUNDS of each, interleaved. The run's slowdown is the ratio of the
 *     medians (wall clock; its CPU time, and this process's: the
 *     server's and the client's, are noted too). For each
 *     agent.step.completed envelope the client notes how long after the
 *     step's end it arrived.
 *  2. Catch-up: the whole stream of the finished run read from the start,
 *     ten times: envelopes per second through the derivation from stored
 *     rows, the adapter and the socket.
 *
 * Prints "name value" lines for bench/run_serve.sh. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agentwire/envelope.h"
#include "agentwire/serve.h"
#include "http_client.h"

extern char **environ;

static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, cmp);
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return v[i];
}

static void die(const char *what)
{
    fprintf(stderr, "bench_serve: %s\n", what);
    exit(1);
}

static const char *cli, *dir;
static char url[600];

static void write_inputs(unsigned turns, unsigned calls, unsigned delay)
{
    char path[700];
    snprintf(path, sizeof path, "%s/replay.jsonl", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        die("cannot write replay.jsonl");
    for (unsigned t = 1; t <= turns; t++) {
        /* the delay before the reply's one piece paces the run */
        fprintf(f, "{\"turn\": %u, \"text\": \"working\", \"chunks\": [\"working\"], \"delay_ms\": %u, \"tool_calls\": [",
                t, delay);
        for (unsigned c = 0; c < calls; c++)
            fprintf(f, "%s{\"id\": \"c%u_%u\", \"name\": \"agent__progress_report\", \"arguments\":"
                       " {\"message\": \"step %u.%u\"}}",
                    c ? ", " : "", t, c, t, c);
        fprintf(f, "], \"usage\": {\"input_tokens\": 1000, \"output_tokens\": 50}}\n");
    }
    fprintf(f, "{\"turn\": %u, \"tool_calls\": [{\"id\": \"f\", \"name\": \"agent__final_report\", \"arguments\":"
               " {\"status\": \"success\", \"content\": \"done\"}}]}\n",
            turns + 1);
    fclose(f);
}

/* Start the run; its stderr goes to DIR/run.err. */
static pid_t start_run(unsigned turns)
{
    char model[700], errp[700], max[32];
    snprintf(model, sizeof model, "replay:%s/replay.jsonl", dir);
    snprintf(errp, sizeof errp, "%s/run.err", dir);
    snprintf(max, sizeof max, "%u", turns + 2);
    char *argv[] = {(char *)cli, "run", "--store", url, "--transport", "native", "--model", model, "--max-turns", max,
                    "go", NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    setenv("AW_NO_STATUS_LINE", "1", 1);
    pid_t pid;
    if (posix_spawn(&pid, cli, &fa, NULL, argv, environ))
        die("cannot start the run");
    posix_spawn_file_actions_destroy(&fa);
    return pid;
}

/* The session id the run printed first (waits for it). */
static void session_of(char *out, size_t cap)
{
    char path[700];
    snprintf(path, sizeof path, "%s/run.err", dir);
    for (int i = 0; i < 30000; i++) {
        FILE *f = fopen(path, "r");
        char line[300] = "";
        if (f && fgets(line, sizeof line, f) && !strncmp(line, "agentwire: session ", 19) && strchr(line, '\n')) {
            fclose(f);
            snprintf(out, cap, "%.*s", (int)strcspn(line + 19, "\n"), line + 19);
            return;
        }
        if (f)
            fclose(f);
        struct timespec ms = {0, 1000000L};
        nanosleep(&ms, NULL);
    }
    die("the run named no session");
}

static double cpu_of(const struct rusage *ru)
{
    return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1e3 +
           (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e3;
}

/* This process's CPU time: the server's threads and the client's. */
static double self_cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return cpu_of(&ru);
}

/* Wait for the run; its CPU time (user + system) in ms. */
static double wait_run(pid_t pid)
{
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
        die("the run failed");
    return cpu_of(&ru);
}

typedef struct follow_stats {
    size_t envelopes;
    double delays[4096];
    size_t ndelays;
} follow_stats;

/* Read a stream until agent.status; with stats, note step delays. */
static size_t read_stream(uint16_t port, const char *session, follow_stats *st)
{
    char path[300];
    snprintf(path, sizeof path, "/api/sessions/%s/events", session);
    aw_sse s;
    if (aw_sse_open(&s, port, path, NULL, 10000) || s.status != 200)
        die("no event stream");
    size_t n = 0;
    for (;;) {
        char *id, *data;
        if (aw_sse_next(&s, &id, &data, 60000))
            die("the stream ended before the run's status");
        n++;
        bool last = strstr(data, "\"type\":\"agent.status\"") != NULL;
        const char *ts = strstr(data, "\"timestamp\":\"");
        if (st && ts && strstr(data, "\"type\":\"agent.step.completed\"") && st->ndelays < 4096) {
            int64_t at;
            if (!aw_time_parse_rfc3339(ts + 13, 24, &at))
                st->delays[st->ndelays++] = (double)(wall_ms() - at);
        }
        free(id);
        free(data);
        if (last)
            break;
    }
    aw_sse_close(&s);
    if (st)
        st->envelopes = n;
    return n;
}

typedef struct follower {
    uint16_t port;
    const char *session;
    follow_stats *st;
} follower;

static void *follow(void *arg)
{
    follower *f = arg;
    read_stream(f->port, f->session, f->st);
    return NULL;
}

static aw_server *serve(void)
{
    aw_serve_options o = {.store_url = url, .listen = "127.0.0.1:0"};
    aw_error err;
    aw_server *srv = aw_server_start(&o, &err);
    if (!srv)
        die(err.message);
    return srv;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        die("usage: bench_serve AGENTWIRE DIR [TURNS] [CALLS] [DELAY_MS] [ROUNDS]");
    cli = argv[1];
    dir = argv[2];
    unsigned turns = argc > 3 ? (unsigned)atoi(argv[3]) : 500;
    unsigned calls = argc > 4 ? (unsigned)atoi(argv[4]) : 4;
    unsigned delay = argc > 5 ? (unsigned)atoi(argv[5]) : 8;
    unsigned rounds = argc > 6 ? (unsigned)atoi(argv[6]) : 7;
    if (!turns || !calls || !rounds || rounds > 50 || turns > 2000)
        die("TURNS (at most 2000), CALLS and ROUNDS (at most 50) are positive");
    snprintf(url, sizeof url, "sqlite:%s/sessions.db", dir);
    write_inputs(turns, calls, delay);
    signal(SIGPIPE, SIG_IGN);

    double alone[50], followed[50], cpu_alone[50], cpu_followed[50], rate[50], serve_cpu[50];
    static follow_stats st;
    char session[128] = "";
    for (unsigned r = 0; r < rounds; r++) {
        double t0 = mono_ms();
        cpu_alone[r] = wait_run(start_run(turns));
        alone[r] = mono_ms() - t0;

        aw_server *srv = serve();
        double self0 = self_cpu_ms();
        t0 = mono_ms();
        pid_t pid = start_run(turns);
        session_of(session, sizeof session);
        /* the client reads on its own thread: the run's time ends when it
         * exits, not when its last envelope arrives */
        follower fl = {aw_server_port(srv), session, &st};
        st.ndelays = 0;
        pthread_t th;
        if (pthread_create(&th, NULL, follow, &fl))
            die("cannot start the client's thread");
        cpu_followed[r] = wait_run(pid);
        followed[r] = mono_ms() - t0;
        pthread_join(th, NULL);
        serve_cpu[r] = self_cpu_ms() - self0;
        rate[r] = (double)st.envelopes / (followed[r] / 1e3);
        aw_server_stop(srv);
    }
    double a = pct(alone, rounds, 0.5), f = pct(followed, rounds, 0.5);
    printf("envelopes_per_run %zu\n", st.envelopes);
    printf("run_alone_ms %.0f\n", a);
    printf("run_followed_ms %.0f\n", f);
    printf("slowdown_pct %.1f\n", (f / a - 1) * 100);
    printf("run_cpu_alone_ms %.0f\n", pct(cpu_alone, rounds, 0.5));
    printf("run_cpu_followed_ms %.0f\n", pct(cpu_followed, rounds, 0.5));
    printf("run_envelopes_per_second %.0f\n", pct(rate, rounds, 0.5));
    printf("server_and_client_cpu_ms %.0f\n", pct(serve_cpu, rounds, 0.5));
    printf("delay_median_ms %.0f\n", pct(st.delays, st.ndelays, 0.5));
    printf("delay_p95_ms %.0f\n", pct(st.delays, st.ndelays, 0.95));

    aw_server *srv = serve();
    double times[10];
    size_t n = 0;
    for (int k = 0; k < 10; k++) {
        double t0 = mono_ms();
        n = read_stream(aw_server_port(srv), session, NULL);
        times[k] = mono_ms() - t0;
    }
    aw_server_stop(srv);
    double median = pct(times, 10, 0.5);
    printf("catchup_envelopes %zu\n", n);
    printf("catchup_ms %.1f\n", median);
    printf("catchup_envelopes_per_second %.0f\n", (double)n / (median / 1e3));
    return 0;
}
