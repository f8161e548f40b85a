/* bench_store URL [STEPS] [SESSIONS]: what the session store adds to a
 * run, on the store URL names.
 *
 *  1. Per step: a step of 5 tool calls with about 20 KB of agent events
 *     (5 tool_call + 5 tool_result events, 6 accounting rows, the run's
 *     state) through the store's observer exactly as a run calls it
 *     (on_step: the slim snapshot and the one transaction). A run without
 *     a store does none of this, so this time is the latency the store
 *     adds to each step. Median and 95th percentile over STEPS (default
 *     1000) steps, and steps per second.
 *  2. A store of SESSIONS (default 10,000) sessions: the time to list
 *     them (all of them, and the newest 50) and to show one (its row and
 *     accounting, as `sessions show` reads them). Median of 20.
 *
 * Prints "name value unit" lines for bench/run_store.sh. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agentwire/store.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static aw_json_doc *make_step_doc(unsigned turn)
{
    aw_buf b;
    aw_buf_init(&b, NULL);
    char filler[1801];
    memset(filler, 'x', 1800);
    filler[1800] = 0;
    aw_buf_printf(&b, "{\"events\": [");
    for (int i = 0; i < 5; i++)
        aw_buf_printf(&b,
                      "%s{\"type\": \"tool_call\", \"iteration\": %u, \"timestamp\": 1, \"toolName\": \"search\","
                      " \"toolCallId\": \"c%u_%d\", \"args\": {\"query\": \"%s\"}},"
                      " {\"type\": \"tool_result\", \"iteration\": %u, \"timestamp\": 2, \"toolCallId\": \"c%u_%d\","
                      " \"result\": \"%s\", \"durationMs\": 12}",
                      i ? ", " : "", turn, turn, i, filler, turn, turn, i, filler);
    aw_buf_printf(&b, "], \"accounting\": [{\"kind\": \"model\", \"provider\": \"openai\", \"model\": \"m\", \"turn\": %u,"
                      " \"status\": \"ok\", \"latency_ms\": 900, \"input_tokens\": 1000, \"output_tokens\": 100}",
                  turn);
    for (int i = 0; i < 5; i++)
        aw_buf_printf(&b, ", {\"kind\": \"tool\", \"source\": \"native\", \"command\": \"search\", \"tool_call_id\":"
                          " \"c%u_%d\", \"status\": \"ok\", \"latency_ms\": 12, \"request_bytes\": 200,"
                          " \"response_bytes\": 1800}",
                      turn, i);
    aw_buf_printf(&b, "], \"state\": {\"agent_id\": \"bench\", \"parent_agent_id\": null, \"status\": \"in_progress\","
                      " \"step_count\": %u, \"usage\": {\"prompt\": 1000, \"completion\": 100, \"total\": 1100},"
                      " \"execution\": {\"started_at\": \"2026-01-16T10:00:00Z\", \"updated_at\": \"2026-01-16T10:00:05Z\","
                      " \"cumulative_seconds\": 5}, \"messages\": [",
                  turn);
    for (int i = 0; i < 20; i++)
        aw_buf_printf(&b, "%s{\"role\": \"%s\", \"content\": \"%.600s\", \"_metadata\": {}}", i ? ", " : "",
                      i % 2 ? "tool" : "assistant", filler);
    aw_buf_printf(&b, "], \"steps\": []}, \"resume\": {\"turn\": %u, \"nonce\": \"1a2b3c4d\", \"seconds\": 5,"
                      " \"usage\": {\"input_tokens\": 1000, \"output_tokens\": 100}, \"chat\": [",
                  turn);
    for (int i = 0; i < 5; i++)
        aw_buf_printf(&b, "%s{\"role\": \"tool\", \"content\": \"%s\", \"tool_call_id\": \"c%u_%d\", \"name\": \"search\"}",
                      i ? ", " : "", filler, turn, i);
    aw_buf_printf(&b, "]}}");
    aw_json_doc *d = NULL;
    aw_error err;
    if (aw_json_parse(b.data, b.len, NULL, &d, &err)) {
        fprintf(stderr, "bench_store: %s\n", err.message);
        exit(1);
    }
    aw_buf_free(&b);
    return d;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_store URL [STEPS] [SESSIONS]\n");
        return 2;
    }
    const char *url = argv[1];
    int steps = argc > 2 ? atoi(argv[2]) : 1000;
    int sessions = argc > 3 ? atoi(argv[3]) : 10000;
    aw_error err;
    aw_store *s = aw_store_open(url, NULL, &err);
    if (!s) {
        fprintf(stderr, "bench_store: %s\n", err.message);
        return 1;
    }
    aw_store_recorder *rec = aw_store_recorder_new(s, NULL, &err);
    aw_run_observer obs = aw_store_recorder_observer(rec);
    char id[64];
    snprintf(id, sizeof id, "bench-%ld", (long)getpid());
    aw_session_start st = {.id = id, .task = "bench"};
    if (aw_store_session_begin(s, &st, &err)) {
        fprintf(stderr, "bench_store: %s\n", err.message);
        return 1;
    }
    aw_run_info info = {.session_id = id, .execution_id = id};
    double *t = malloc(sizeof *t * (size_t)(steps > 20 ? steps : 20));
    size_t bytes = 0;
    double total = 0;
    for (int i = 0; i < steps; i++) {
        aw_json_doc *d = make_step_doc((unsigned)i + 1);
        const aw_json_value *r = aw_json_doc_root(d);
        if (i == 0) {
            aw_buf b;
            aw_buf_init(&b, NULL);
            aw_json_write(aw_json_get(r, "events"), NULL, &b, NULL);
            bytes = b.len;
            aw_buf_free(&b);
        }
        aw_run_step step = {(unsigned)i + 1, aw_json_get(r, "events"), aw_json_get(r, "accounting"),
                            aw_json_get(r, "state"), aw_json_get(r, "resume"), false, false};
        double t0 = now_ms();
        int rc = obs.on_step(obs.ctx, &info, &step, &err);
        t[i] = now_ms() - t0;
        total += t[i];
        aw_json_doc_free(d);
        if (rc) {
            fprintf(stderr, "bench_store: step %d: %s\n", i, err.message);
            return 1;
        }
    }
    qsort(t, (size_t)steps, sizeof *t, cmp);
    printf("event_bytes %zu bytes\n", bytes);
    printf("step_median %.3f ms\n", t[steps / 2]);
    printf("step_p95 %.3f ms\n", t[steps * 95 / 100]);
    printf("steps_per_second %.0f steps/s\n", steps / (total / 1000));
    aw_store_recorder_free(rec);

    /* a store of many sessions, each with a step */
    aw_json_doc *d = make_step_doc(1);
    const aw_json_value *r = aw_json_doc_root(d);
    aw_run_step step = {1, aw_json_get(r, "events"), aw_json_get(r, "accounting"), NULL, aw_json_get(r, "resume"),
                        true, false};
    aw_session_filter all = {0};
    aw_json_doc *list = NULL;
    aw_store_session_list(s, &all, &list, &err);
    int have = (int)aw_json_count(aw_json_doc_root(list));
    aw_json_doc_free(list);
    for (int i = have; i < sessions; i++) {
        char sid[64];
        snprintf(sid, sizeof sid, "many-%ld-%d", (long)getpid(), i);
        aw_session_start ss = {.id = sid, .task = "one of many", .agent_name = i % 2 ? "a" : "b"};
        if (aw_store_session_begin(s, &ss, &err) || aw_store_append_step(s, sid, &step, NULL, "completed", &err)) {
            fprintf(stderr, "bench_store: %s\n", err.message);
            return 1;
        }
    }
    aw_json_doc_free(d);
    aw_session_filter newest = {.limit = 50};
    const aw_session_filter *filters[2] = {&all, &newest};
    const char *names[2] = {"list_all", "list_50"};
    size_t listed = 0;
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < 20; i++) {
            double t0 = now_ms();
            if (aw_store_session_list(s, filters[k], &list, &err)) {
                fprintf(stderr, "bench_store: %s\n", err.message);
                return 1;
            }
            t[i] = now_ms() - t0;
            if (k == 0)
                listed = aw_json_count(aw_json_doc_root(list));
            aw_json_doc_free(list);
        }
        qsort(t, 20, sizeof *t, cmp);
        printf("%s %.3f ms\n", names[k], t[10]);
    }
    printf("sessions %zu sessions\n", listed);
    for (int i = 0; i < 20; i++) {
        aw_json_doc *one = NULL, *acc = NULL;
        double t0 = now_ms();
        if (aw_store_session_get(s, id, &one, &err) || aw_store_accounting(s, id, &acc, &err)) {
            fprintf(stderr, "bench_store: %s\n", err.message);
            return 1;
        }
        t[i] = now_ms() - t0;
        aw_json_doc_free(one);
        aw_json_doc_free(acc);
    }
    qsort(t, 20, sizeof *t, cmp);
    printf("show %.3f ms\n", t[10]);
    free(t);
    aw_store_close(s);
    return 0;
}
