/* Crash safety: a run is killed with SIGKILL at a random moment (before
 * its session exists, between steps, inside a step, while its tools run,
 * in the middle of a store transaction), AW_KILL_ITERATIONS times (200 by
 * default), and after each kill:
 *
 *   - the store is not corrupt (SQLite's integrity check), and opens;
 *   - it holds whole steps only: every stored turn has the results of all
 *     of that turn's tool calls, none of a later turn;
 *   - resuming finishes the run: a completed session whose events make a
 *     valid <thread> (encoded, and decoded back to as many events);
 *   - no tool call of a stored step ran twice: the tools append their
 *     arguments to a file, and each call of a stored turn is in it once
 *     (only the turn that was cut may have run its calls again).
 *
 * The run is the runtime's own, in a forked child (no exec, so 200 runs
 * stay fast), on the replay provider with no delays. SQLite here;
 * PostgreSQL when AW_PG_URL is set (test_store_kill_pg). */
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
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "agentwire/store.h"
#include "agentwire/thread.h"
#include "agentwire/tools.h"
#include "internal/store_impl.h"
#include "testutil.h"

#define TURNS 4 /* the last one writes the final report */
static const int calls_in_turn[TURNS + 1] = {0, 1, 2, 1, 0};

static char dir[256], url[1024], replay_path[320], log_path[320];
static aw_json_doc *tools_doc;
static bool postgres;

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void make_files(void)
{
    snprintf(replay_path, sizeof replay_path, "%s/replay.jsonl", dir);
    snprintf(log_path, sizeof log_path, "%s/calls.log", dir);
    aw_buf b;
    aw_buf_init(&b, NULL);
    for (int t = 1; t < TURNS; t++) {
        aw_buf_printf(&b, "{\"turn\": %d, \"tool_calls\": [", t);
        for (int c = 0; c < calls_in_turn[t]; c++)
            aw_buf_printf(&b, "%s{\"id\": \"c%d_%d\", \"name\": \"append\", \"arguments\": {\"line\": \"t%dc%d\"}}",
                          c ? ", " : "", t, c, t, c);
        aw_buf_printf(&b, "]}\n");
    }
    aw_buf_printf(&b, "{\"turn\": %d, \"tool_calls\": [{\"id\": \"f\", \"name\": \"agent__final_report\", "
                      "\"arguments\": {\"status\": \"success\", \"content\": \"all done\"}}]}\n",
                  TURNS);
    write_file(replay_path, b.data);
    aw_buf_clear(&b);
    aw_buf_printf(&b,
                  "[{\"name\": \"append\", \"description\": \"append a line\", \"input_schema\": {\"type\": \"object\"},"
                  " \"command\": [\"sh\", \"-c\", \"cat >> %s; echo >> %s; echo ok\"]}]",
                  log_path, log_path);
    assert_int_equal(aw_json_parse(b.data, b.len, NULL, &tools_doc, NULL), 0);
    aw_buf_free(&b);
}

typedef struct done_flag {
    bool done;
    aw_run_status status;
} done_flag;

static void on_done(void *ctx, aw_run *run, const aw_run_result *res)
{
    (void)run;
    done_flag *d = ctx;
    d->done = true;
    d->status = res->status;
}

/* One run of the session, new or resumed from the store, to its end:
 * 0 when it ends with a successful report. */
static int run_session(const char *id, bool resume)
{
    aw_error err;
    aw_store *s = aw_store_open(url, NULL, &err);
    if (!s) {
        fprintf(stderr, "open: %s\n", err.message);
        return 10;
    }
    aw_store_resume r;
    memset(&r, 0, sizeof r);
    aw_session_start st = {.id = id, .task = "go", .continuing = resume};
    if ((resume && aw_store_resume_load(s, id, &r, &err)) || aw_store_session_begin(s, &st, &err)) {
        fprintf(stderr, "session: %s\n", err.message);
        aw_store_resume_free(&r);
        aw_store_close(s);
        return 11;
    }
    aw_loop *l = aw_loop_new(NULL, &err);
    char spec[400];
    snprintf(spec, sizeof spec, "replay:%s", replay_path);
    aw_provider_config pc = {.spec = spec};
    aw_provider *p = aw_provider_new(l, &pc, &err);
    aw_tool_source *src = aw_command_tools_new(l, aw_json_doc_root(tools_doc), dir, NULL, &err);
    aw_toolbox *box = aw_toolbox_new(l, NULL);
    aw_toolbox_add(box, src);
    aw_store_recorder *rec = aw_store_recorder_new(s, NULL, &err);
    aw_run_observer obs = aw_store_recorder_observer(rec);
    aw_provider *models[1] = {p};
    aw_run_config cfg = {
        .models = models,
        .model_count = 1,
        .tools = box,
        .transport = AW_TRANSPORT_NATIVE,
        .task = !resume || r.needs_task ? "go" : NULL,
        .session_id = id,
        .resume = r.resume ? aw_json_doc_root(r.resume) : NULL,
        .history = r.history ? aw_json_doc_root(r.history) : NULL,
        .observers = &obs,
        .observer_count = 1,
    };
    aw_run *run = aw_run_new(l, &cfg, &err);
    done_flag d = {false, AW_RUN_FAILURE};
    int rc = run && !aw_run_start(run, on_done, &d) ? 0 : 12;
    while (!rc && !d.done)
        if (aw_loop_once(l, 1000))
            rc = 13;
    if (!rc && d.status != AW_RUN_SUCCESS) {
        const aw_run_result *res = aw_run_result_of(run);
        fprintf(stderr, "the run failed: %.*s\n", (int)res->content.len, res->content.ptr);
        rc = 14;
    }
    aw_run_free(run);
    aw_toolbox_free(box);
    aw_provider_free(p);
    aw_store_recorder_free(rec);
    aw_loop_free(l);
    aw_store_resume_free(&r);
    aw_store_close(s);
    return rc;
}

/* How often each call ("t3c1") ran, from the tools' log. */
static int count_in_log(const char *log, int turn, int call)
{
    char needle[64];
    snprintf(needle, sizeof needle, "\"t%dc%d\"", turn, call);
    int n = 0;
    for (const char *p = log; p && (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static int integrity_row(void *ctx, const aw_sv *cols, size_t n)
{
    *(bool *)ctx = n == 1 && cols[0].type == SV_TEXT && cols[0].n == 2 && !memcmp(cols[0].s, "ok", 2);
    return 0;
}

static void check_integrity(aw_store *s)
{
    if (postgres)
        return; /* PostgreSQL's own WAL; our part is checked by the rows */
    bool ok = false;
    aw_error err;
    int rc = s->drv->query(s, "PRAGMA integrity_check", NULL, 0, integrity_row, &ok, &err);
    assert_int_equal(rc, 0);
    assert_true(ok);
}

typedef struct kill_stats {
    int before_session, cut, completed_before_kill;
} kill_stats;

/* The stored steps of id, checked for wholeness; the number of turns
 * stored (0 when none), -1 when the session was never made. */
static int stored_turns(aw_store *s, const char *id, bool *completed)
{
    aw_json_doc *d = NULL, *ev = NULL;
    aw_error err;
    int rc = aw_store_session_get(s, id, &d, &err);
    if (rc == AW_STORE_ENOTFOUND)
        return -1;
    if (rc)
        fail_msg("get %s: %s", id, err.message);
    const aw_json_value *o = aw_json_doc_root(d);
    int turns = (int)aw_json_get(o, "turns")->u.num.d;
    int steps = (int)aw_json_get(o, "steps")->u.num.d;
    *completed = !strcmp(aw_json_get(o, "status")->u.str.ptr, "completed");
    assert_int_equal(turns, steps); /* one whole step per turn, no partial ones after a kill */
    if (aw_store_events(s, id, 0, 0, &ev, &err))
        fail_msg("events %s: %s", id, err.message);
    int results[TURNS + 2] = {0};
    const aw_json_value *list = aw_json_doc_root(ev);
    for (size_t i = 0; i < aw_json_count(list); i++) {
        const aw_json_value *e = aw_json_get(aw_json_at(list, i), "event");
        const char *type = aw_json_get(e, "type")->u.str.ptr;
        int it = (int)aw_json_get(e, "iteration")->u.num.d;
        assert_true(it <= turns);
        if (!strcmp(type, "tool_result") && it >= 1 && it <= TURNS)
            results[it]++;
    }
    for (int t = 1; t <= turns && t < TURNS; t++)
        if (results[t] != calls_in_turn[t])
            fail_msg("%s: stored turn %d has %d of its %d tool results", id, t, results[t], calls_in_turn[t]);
    aw_json_doc_free(ev);
    aw_json_doc_free(d);
    return turns;
}

static void check_finished(aw_store *s, const char *id, int turns_at_kill)
{
    aw_json_doc *d = NULL, *ev = NULL, *back = NULL;
    aw_error err;
    assert_int_equal(aw_store_session_get(s, id, &d, &err), 0);
    assert_string_equal(aw_json_get(aw_json_doc_root(d), "status")->u.str.ptr, "completed");
    aw_json_doc_free(d);
    /* a valid thread */
    assert_int_equal(aw_store_events(s, id, 0, 0, &ev, &err), 0);
    const aw_json_value *list = aw_json_doc_root(ev);
    size_t n = aw_json_count(list);
    aw_event *evs = calloc(n + 1, sizeof *evs);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(aw_event_from_json(aw_json_get(aw_json_at(list, i), "event"), &evs[i], &err), 0);
    aw_buf xml;
    aw_buf_init(&xml, NULL);
    assert_int_equal(aw_thread_encode(evs, n, NULL, &xml, &err), 0);
    if (aw_thread_decode(xml.data, xml.len, NULL, &back, &err))
        fail_msg("%s: the thread does not decode: %s", id, err.message);
    assert_int_equal(aw_json_count(aw_json_doc_root(back)), n);
    aw_json_doc_free(back);
    aw_buf_free(&xml);
    free(evs);
    aw_json_doc_free(ev);
    /* every call ran; a stored turn's calls exactly once */
    char *log = aw_test_read_file(log_path, NULL);
    for (int t = 1; t < TURNS; t++)
        for (int c = 0; c < calls_in_turn[t]; c++) {
            int k = count_in_log(log ? log : "", t, c);
            if (k < 1 || k > 2 || (k == 2 && t != turns_at_kill + 1) || (t <= turns_at_kill && k != 1))
                fail_msg("%s: call t%dc%d ran %d times (turns stored at the kill: %d)", id, t, c, k, turns_at_kill);
        }
    free(log);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_kill_and_resume(void **state)
{
    (void)state;
    make_files();
    /* how long a whole run takes here: kills land anywhere in it */
    double t0 = now_s();
    char id[64];
    snprintf(id, sizeof id, "kill-%ld-full", (long)getpid());
    assert_int_equal(run_session(id, false), 0);
    double full = now_s() - t0;
    const char *env = getenv("AW_KILL_ITERATIONS");
    int iterations = env ? atoi(env) : 200;
    aw_test_rng rng = {0x5eed5eedULL};
    kill_stats st = {0};
    for (int i = 0; i < iterations; i++) {
        snprintf(id, sizeof id, "kill-%ld-%d", (long)getpid(), i);
        FILE *f = fopen(log_path, "w");
        assert_non_null(f);
        fclose(f);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            _exit(run_session(id, false));
        /* anywhere from the start to a little past the end */
        double at = full * 1.1 * (double)aw_test_below(&rng, 10000) / 10000.0;
        struct timespec ts = {(time_t)at, (long)((at - (double)(time_t)at) * 1e9)};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int ws = 0;
        assert_int_equal(waitpid(pid, &ws, 0), pid);
        aw_error err;
        aw_store *s = aw_store_open(url, NULL, &err);
        if (!s)
            fail_msg("iteration %d: the store does not open after the kill: %s", i, err.message);
        check_integrity(s);
        bool completed = false;
        int turns = stored_turns(s, id, &completed);
        if (turns < 0) {
            st.before_session++;
            aw_store_close(s);
            continue;
        }
        if (completed) {
            st.completed_before_kill++;
        } else {
            st.cut++;
            int rc = run_session(id, true);
            if (rc)
                fail_msg("iteration %d: resuming %s (cut after %d turns) failed: %d", i, id, turns, rc);
        }
        check_finished(s, id, turns);
        aw_store_close(s);
    }
    print_message("%d kills: %d before the session was stored, %d cut and resumed, %d after the run ended "
                  "(a whole run takes %.0f ms here)\n",
                  iterations, st.before_session, st.cut, st.completed_before_kill, full * 1000);
    assert_true(st.cut > 0);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/aw-kill-test.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    const char *pg = getenv("AW_PG_URL");
    postgres = pg && *pg;
    if (postgres)
        snprintf(url, sizeof url, "%s", pg);
    else
        snprintf(url, sizeof url, "sqlite:%s/sessions.db", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    aw_json_doc_free(tools_doc);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill_and_resume),
    };
    return cmocka_run_group_tests_name(getenv("AW_PG_URL") ? "kill -9 (postgres)" : "kill -9 (sqlite)", tests, setup,
                                       teardown);
}
