/* The session store, every call, on a real database: SQLite in a
 * temporary folder, or PostgreSQL when AW_PG_URL names one (ctest runs
 * this file twice: test_store and test_store_pg, the second under
 * tests/support/pg_harness.sh). Same assertions on both: the backends
 * must behave the same.
 *
 * Covered: sessions made and continued, steps in one transaction with
 * their events, accounting and snapshot, reads (one session, lists with
 * filters, events after a number, accounting, snapshot), the resume
 * assembly from whole steps only, partial and superseded steps, rm and
 * gc, exchanges; a newer schema refused, corrupt rows reported, a
 * read-only store; two processes appending at once; allocation failures. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "agentwire/store.h"
#include "failalloc.h"
#include "internal/store_impl.h"
#include "testutil.h"

static char url[1024];
static char tmpdir[256];
static bool postgres;
static unsigned id_counter;

/* A session id no other test (or earlier run on a shared database) used. */
static const char *fresh_id(char *out, size_t cap)
{
    snprintf(out, cap, "t%ld-%u", (long)getpid(), ++id_counter);
    return out;
}

static aw_store *open_store(void)
{
    aw_error err;
    aw_store *s = aw_store_open(url, NULL, &err);
    if (!s)
        fail_msg("open %s: %s", url, err.message);
    return s;
}

static void raw(aw_store *s, const char *sql)
{
    aw_error err;
    if (aw__store_exec(s, sql, NULL, 0, &err))
        fail_msg("%s: %s", sql, err.message);
}

/* ---- steps made from JSON text ------------------------------------------------ */

typedef struct step_doc {
    aw_json_doc *doc;
    aw_run_step step;
} step_doc;

static void make_step(step_doc *sd, unsigned turn, bool final, bool partial, const char *extra_event)
{
    char text[4096];
    snprintf(text, sizeof text,
             "{\"events\": [{\"type\": \"tool_call\", \"iteration\": %u, \"toolName\": \"append\", \"toolCallId\": "
             "\"c%u\", \"args\": {\"line\": \"t%u\"}},"
             " {\"type\": \"tool_result\", \"iteration\": %u, \"toolName\": \"append\", \"toolCallId\": \"c%u\","
             " \"result\": \"ok\"}%s%s],"
             " \"accounting\": [{\"kind\": \"model\", \"turn\": %u}, {\"kind\": \"tool\", \"command\": \"append\","
             " \"status\": \"ok\"}],"
             " \"state\": {\"agent_id\": \"x\", \"status\": \"in_progress\", \"step_count\": %u,"
             " \"usage\": {\"prompt\": 1, \"completion\": 1, \"total\": 2},"
             " \"execution\": {\"started_at\": \"2026-01-16T10:00:00Z\", \"updated_at\": \"2026-01-16T10:00:01Z\","
             " \"cumulative_seconds\": 1}, \"messages\": [{\"role\": \"user\", \"content\": \"go\"}], \"steps\": []},"
             " \"resume\": {\"turn\": %u, \"nonce\": \"1a2b3c4d\", \"seconds\": %u.5,"
             " \"usage\": {\"input_tokens\": %u00, \"output_tokens\": %u0, \"cost_usd\": 0.25},"
             " \"chat\": [{\"role\": \"assistant\", \"content\": \"turn %u\", \"tool_calls\": [{\"id\": \"c%u\","
             " \"name\": \"append\", \"arguments\": \"{}\"}]}, {\"role\": \"tool\", \"content\": \"ok\","
             " \"tool_call_id\": \"c%u\", \"name\": \"append\"}]}}",
             turn, turn, turn, turn, turn, extra_event ? ", " : "", extra_event ? extra_event : "", turn, turn, turn,
             turn, turn, turn, turn, turn, turn);
    aw_error err;
    if (aw_json_parse(text, strlen(text), NULL, &sd->doc, &err))
        fail_msg("step json: %s", err.message);
    const aw_json_value *r = aw_json_doc_root(sd->doc);
    sd->step = (aw_run_step){turn, aw_json_get(r, "events"), aw_json_get(r, "accounting"), aw_json_get(r, "state"),
                             aw_json_get(r, "resume"), final, partial, NULL};
}

static void append(aw_store *s, const char *id, unsigned turn, bool final, bool partial, const char *extra,
                   const char *stop)
{
    step_doc sd;
    make_step(&sd, turn, final, partial, extra);
    aw_slim_config cfg;
    aw_slim_preset("standard", &cfg);
    aw_json_doc *snap = NULL;
    aw_error err;
    assert_int_equal(aw_snapshot_slim(sd.step.state, &cfg, NULL, &snap, &err), 0);
    if (aw_store_append_step(s, id, &sd.step, aw_json_doc_root(snap), stop, &err))
        fail_msg("append turn %u: %s", turn, err.message);
    aw_json_doc_free(snap);
    aw_json_doc_free(sd.doc);
}

static void begin(aw_store *s, const char *id, bool continuing, const char *task)
{
    aw_json_doc *cfg = NULL;
    assert_int_equal(aw_json_parse("{\"models\": [\"replay:/x\"]}", 25, NULL, &cfg, NULL), 0);
    aw_session_start st = {.id = id, .task = task, .agent_name = "tester", .owner = "host:1",
                           .config = aw_json_doc_root(cfg), .continuing = continuing};
    aw_error err;
    if (aw_store_session_begin(s, &st, &err))
        fail_msg("begin %s: %s", id, err.message);
    aw_json_doc_free(cfg);
}

static aw_json_doc *get(aw_store *s, const char *id)
{
    aw_json_doc *d = NULL;
    aw_error err;
    if (aw_store_session_get(s, id, &d, &err))
        fail_msg("get %s: %s", id, err.message);
    return d;
}

static const char *sfield(const aw_json_doc *d, const char *key)
{
    const aw_json_value *v = aw_json_get(aw_json_doc_root(d), key);
    return aw_json_is_string(v) ? v->u.str.ptr : NULL;
}

static double nfield(const aw_json_value *o, const char *key)
{
    const aw_json_value *v = aw_json_get(o, key);
    assert_true(aw_json_is_number(v));
    return v->u.num.d;
}

/* ---- tests -------------------------------------------------------------------------- */

static void test_open_twice_and_url_redacted(void **state)
{
    (void)state;
    aw_store *a = open_store(), *b = open_store();
    assert_string_equal(aw_store_backend(a), postgres ? "postgres" : "sqlite");
    aw_store_close(a);
    aw_store_close(b);
    aw_error err;
    assert_null(aw_store_open("mysql://x", NULL, &err));
    assert_int_equal(err.code, AW_EINVAL);
    assert_non_null(strstr(err.message, "sqlite:PATH"));
    /* a password never shows in messages */
    aw_store *bad = aw_store_open("postgresql://u:s3cret@/nodb?host=/nonexistent-dir&connect_timeout=2", NULL, &err);
    assert_null(bad);
    assert_null(strstr(err.message, "s3cret"));
    assert_non_null(strstr(err.message, "cannot connect"));
}

static void test_session_lifecycle(void **state)
{
    (void)state;
    aw_store *s = open_store();
    char id[64];
    fresh_id(id, sizeof id);
    begin(s, id, false, "the task");
    aw_session_start again = {.id = id};
    aw_error err;
    assert_int_equal(aw_store_session_begin(s, &again, &err), AW_STORE_ESTATE);
    aw_session_start missing = {.id = "no-such-session", .continuing = true};
    assert_int_equal(aw_store_session_begin(s, &missing, &err), AW_STORE_ENOTFOUND);

    append(s, id, 1, false, false, NULL, NULL);
    append(s, id, 2, false, false, NULL, NULL);
    aw_json_doc *d = get(s, id);
    const aw_json_value *o = aw_json_doc_root(d);
    assert_string_equal(sfield(d, "status"), "running");
    assert_string_equal(sfield(d, "task"), "the task");
    assert_string_equal(sfield(d, "agent"), "tester");
    assert_string_equal(sfield(d, "nonce"), "1a2b3c4d");
    assert_int_equal((int)nfield(o, "turns"), 2);
    assert_int_equal((int)nfield(o, "steps"), 2);
    assert_int_equal((int)nfield(o, "events"), 4);
    assert_true(nfield(o, "seconds") == 2.5);
    assert_int_equal((int)nfield(aw_json_get(o, "usage"), "input_tokens"), 200);
    assert_true(nfield(aw_json_get(o, "usage"), "cost_usd") == 0.25);
    assert_string_equal(aw_json_at(aw_json_get(aw_json_get(o, "config"), "models"), 0)->u.str.ptr, "replay:/x");
    assert_true(aw_json_get(o, "resumable")->u.b); /* running */
    aw_json_doc_free(d);

    append(s, id, 3, true, false,
           "{\"type\": \"completion\", \"iteration\": 3, \"result\": \"all done\", \"status\": \"success\"}",
           "completed");
    d = get(s, id);
    assert_string_equal(sfield(d, "status"), "completed");
    assert_string_equal(sfield(d, "stop_reason"), "completed");
    assert_string_equal(sfield(d, "final_status"), "success");
    assert_string_equal(sfield(d, "final_report"), "all done");
    assert_false(aw_json_get(aw_json_doc_root(d), "resumable")->u.b);
    aw_json_doc_free(d);

    assert_int_equal(aw_store_session_end(s, id, "failed", "error", &err), 0);
    d = get(s, id);
    assert_string_equal(sfield(d, "status"), "failed");
    aw_json_doc_free(d);
    assert_int_equal(aw_store_session_get(s, "no-such-session", &d, &err), AW_STORE_ENOTFOUND);
    assert_non_null(strstr(err.message, "no session no-such-session"));
    aw_store_close(s);
}

static void test_events_accounting_snapshot(void **state)
{
    (void)state;
    aw_store *s = open_store();
    char id[64];
    fresh_id(id, sizeof id);
    aw_json_doc *d = NULL;
    aw_error err;
    begin(s, id, false, "t");
    assert_int_equal(aw_store_snapshot(s, id, &d, &err), AW_STORE_ENOTFOUND);
    for (unsigned t = 1; t <= 3; t++)
        append(s, id, t, false, false, NULL, NULL);
    assert_int_equal(aw_store_events(s, id, 0, 0, &d, &err), 0);
    const aw_json_value *list = aw_json_doc_root(d);
    assert_int_equal(aw_json_count(list), 6);
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal((int)nfield(aw_json_at(list, i), "seq"), (int)i + 1);
        assert_int_equal((int)nfield(aw_json_at(list, i), "step"), (int)i / 2 + 1);
    }
    aw_json_doc_free(d);
    /* a viewer resuming after event 4, two at a time */
    assert_int_equal(aw_store_events(s, id, 4, 1, &d, &err), 0);
    assert_int_equal(aw_json_count(aw_json_doc_root(d)), 1);
    assert_int_equal((int)nfield(aw_json_at(aw_json_doc_root(d), 0), "seq"), 5);
    aw_json_doc_free(d);
    assert_int_equal(aw_store_accounting(s, id, &d, &err), 0);
    assert_int_equal(aw_json_count(aw_json_doc_root(d)), 6);
    aw_json_doc_free(d);
    assert_int_equal(aw_store_snapshot(s, id, &d, &err), 0);
    assert_int_equal((int)nfield(aw_json_doc_root(d), "step_count"), 3);
    aw_json_doc_free(d);
    assert_int_equal(aw_store_events(s, "no-such-session", 0, 0, &d, &err), AW_STORE_ENOTFOUND);
    assert_int_equal(aw_store_accounting(s, "no-such-session", &d, &err), AW_STORE_ENOTFOUND);
    aw_store_close(s);
}

/* Whole steps for a viewer: the events after a point, every accounting
 * row of their steps, and whether the first step began before the point;
 * a set-aside (superseded) step is left out. */
static void test_steps_for_a_viewer(void **state)
{
    (void)state;
    aw_store *s = open_store();
    char id[64];
    fresh_id(id, sizeof id);
    aw_json_doc *d = NULL;
    aw_error err;
    begin(s, id, false, "t");
    assert_int_equal(aw_store_steps(s, id, 0, 0, &d, &err), 0);
    assert_int_equal(aw_json_count(aw_json_doc_root(d)), 0); /* nothing yet */
    aw_json_doc_free(d);
    for (unsigned t = 1; t <= 3; t++)
        append(s, id, t, false, false, NULL, NULL);
    /* after event 3: the rest of step 2 (begun before), then step 3 */
    assert_int_equal(aw_store_steps(s, id, 3, 0, &d, &err), 0);
    const aw_json_value *list = aw_json_doc_root(d), *st = aw_json_at(list, 0);
    assert_int_equal(aw_json_count(list), 2);
    assert_int_equal((int)nfield(st, "seq"), 2);
    assert_int_equal((int)nfield(st, "turn"), 2);
    assert_string_equal(aw_json_get(st, "state")->u.str.ptr, "whole");
    assert_true(aw_json_get(st, "continued")->u.b);
    assert_int_equal(aw_json_count(aw_json_get(st, "events")), 1);
    assert_int_equal((int)nfield(aw_json_at(aw_json_get(st, "events"), 0), "seq"), 4);
    assert_string_equal(aw_json_get(aw_json_get(aw_json_at(aw_json_get(st, "events"), 0), "event"), "type")->u.str.ptr,
                        "tool_result");
    assert_int_equal(aw_json_count(aw_json_get(st, "accounting")), 2); /* all of the step's rows */
    st = aw_json_at(list, 1);
    assert_false(aw_json_get(st, "continued")->u.b);
    assert_int_equal(aw_json_count(aw_json_get(st, "events")), 2);
    aw_json_doc_free(d);
    /* at most one step: a long session is read in pieces */
    assert_int_equal(aw_store_steps(s, id, 0, 1, &d, &err), 0);
    assert_int_equal(aw_json_count(aw_json_doc_root(d)), 1);
    assert_false(aw_json_get(aw_json_at(aw_json_doc_root(d), 0), "continued")->u.b);
    aw_json_doc_free(d);
    assert_int_equal(aw_store_steps(s, id, 6, 0, &d, &err), 0);
    assert_int_equal(aw_json_count(aw_json_doc_root(d)), 0);
    aw_json_doc_free(d);
    /* a cut turn, then resumed: the cut step's rows are not shown again */
    append(s, id, 4, true, true, NULL, "user_requested");
    begin(s, id, true, NULL);
    append(s, id, 4, true, false, NULL, "completed");
    assert_int_equal(aw_store_steps(s, id, 6, 0, &d, &err), 0);
    list = aw_json_doc_root(d);
    assert_int_equal(aw_json_count(list), 1);
    assert_int_equal((int)nfield(aw_json_at(list, 0), "seq"), 5);
    assert_true(aw_json_get(aw_json_at(list, 0), "final")->u.b);
    assert_int_equal((int)nfield(aw_json_at(aw_json_get(aw_json_at(list, 0), "events"), 0), "seq"), 9);
    aw_json_doc_free(d);
    assert_int_equal(aw_store_steps(s, "no-such-session", 0, 0, &d, &err), AW_STORE_ENOTFOUND);
    aw_store_close(s);
}

static void test_resume_from_whole_steps(void **state)
{
    (void)state;
    aw_store *s = open_store();
    char id[64];
    fresh_id(id, sizeof id);
    aw_store_resume r;
    aw_error err;
    begin(s, id, false, "t");
    assert_int_equal(aw_store_resume_load(s, id, &r, &err), 0);
    assert_null(r.resume);
    assert_true(r.needs_task);
    append(s, id, 1, false, false, NULL, NULL);
    append(s, id, 2, false, false, NULL, NULL);
    /* turn 3 was cut by a cancel: kept, not resumed from */
    append(s, id, 3, true, true, NULL, "user_requested");
    aw_json_doc *d = get(s, id);
    assert_string_equal(sfield(d, "status"), "interrupted");
    assert_true(aw_json_get(aw_json_doc_root(d), "resumable")->u.b);
    aw_json_doc_free(d);

    if (aw_store_resume_load(s, id, &r, &err))
        fail_msg("resume: %s", err.message);
    assert_int_equal(r.steps, 2);
    assert_false(r.needs_task);
    const aw_json_value *res = aw_json_doc_root(r.resume);
    assert_int_equal((int)nfield(res, "turn"), 2);
    assert_string_equal(aw_json_get(res, "nonce")->u.str.ptr, "1a2b3c4d");
    assert_int_equal(aw_json_count(aw_json_get(res, "chat")), 4); /* both steps' messages, joined */
    assert_string_equal(aw_json_get(aw_json_at(aw_json_get(res, "chat"), 2), "content")->u.str.ptr, "turn 2");
    assert_int_equal(aw_json_count(aw_json_doc_root(r.history)), 4);
    aw_store_resume_free(&r);

    /* resumed: the cut step is set aside; the run writes turn 3 again */
    begin(s, id, true, NULL);
    assert_int_equal(aw_store_events(s, id, 0, 0, &d, &err), 0);
    assert_int_equal(aw_json_count(aw_json_doc_root(d)), 4);
    aw_json_doc_free(d);
    append(s, id, 3, true, false,
           "{\"type\": \"completion\", \"iteration\": 3, \"result\": \"done\", \"status\": \"failure\"}", "steps_limit");
    assert_int_equal(aw_store_events(s, id, 0, 0, &d, &err), 0);
    const aw_json_value *list = aw_json_doc_root(d);
    assert_int_equal(aw_json_count(list), 7);
    /* numbers only grow, past the set-aside ones */
    assert_int_equal((int)nfield(aw_json_at(list, 4), "seq"), 7);
    aw_json_doc_free(d);
    d = get(s, id);
    assert_string_equal(sfield(d, "status"), "failed");
    assert_false(aw_json_get(aw_json_doc_root(d), "resumable")->u.b);
    aw_json_doc_free(d);
    assert_int_equal(aw_store_resume_load(s, id, &r, &err), 0);
    assert_true(r.needs_task); /* the run ended: a next one needs a task */
    aw_store_resume_free(&r);
    aw_store_close(s);
}

static void test_list_filters_rm_gc(void **state)
{
    (void)state;
    aw_store *s = open_store();
    char a[64], b[64], c[64];
    fresh_id(a, sizeof a);
    fresh_id(b, sizeof b);
    fresh_id(c, sizeof c);
    begin(s, a, false, "first");
    begin(s, b, false, "second");
    begin(s, c, false, "third");
    append(s, b, 1, true, false, "{\"type\": \"completion\", \"iteration\": 1, \"result\": \"r\", \"status\": \"success\"}",
           "completed");
    aw_json_doc *d = NULL;
    aw_error err;
    aw_session_filter f = {.status = "completed", .agent = "tester"};
    assert_int_equal(aw_store_session_list(s, &f, &d, &err), 0);
    bool found = false;
    for (size_t i = 0; i < aw_json_count(aw_json_doc_root(d)); i++) {
        const aw_json_value *o = aw_json_at(aw_json_doc_root(d), i);
        assert_string_equal(aw_json_get(o, "status")->u.str.ptr, "completed");
        found = found || !strcmp(aw_json_get(o, "id")->u.str.ptr, b);
        assert_null(aw_json_get(o, "config"));
    }
    assert_true(found);
    aw_json_doc_free(d);
    aw_session_filter lim = {.limit = 2};
    assert_int_equal(aw_store_session_list(s, &lim, &d, &err), 0);
    assert_int_equal(aw_json_count(aw_json_doc_root(d)), 2);
    aw_json_doc_free(d);
    aw_session_filter future = {.since_ms = aw__store_now_ms() + 3600000};
    assert_int_equal(aw_store_session_list(s, &future, &d, &err), 0);
    assert_int_equal(aw_json_count(aw_json_doc_root(d)), 0);
    aw_json_doc_free(d);

    assert_int_equal(aw_store_session_delete(s, a, &err), 0);
    assert_int_equal(aw_store_session_delete(s, a, &err), AW_STORE_ENOTFOUND);
    assert_int_equal(aw_store_session_get(s, a, &d, &err), AW_STORE_ENOTFOUND);
    /* gc: nothing is older than an hour ago; everything older than a minute ahead */
    size_t removed = 99;
    assert_int_equal(aw_store_gc(s, aw__store_now_ms() - 3600000, &removed, &err), 0);
    assert_int_equal(removed, 0);
    assert_int_equal(aw_store_gc(s, aw__store_now_ms() + 60000, &removed, &err), 0);
    assert_true(removed >= 2);
    assert_int_equal(aw_store_session_get(s, b, &d, &err), AW_STORE_ENOTFOUND);
    assert_int_equal(aw_store_events(s, b, 0, 0, &d, &err), AW_STORE_ENOTFOUND);
    aw_store_close(s);
}

static void test_exchanges(void **state)
{
    (void)state;
    aw_store *s = open_store();
    char id[64];
    fresh_id(id, sizeof id);
    aw_json_doc *reply = NULL, *d = NULL;
    aw_error err;
    const char *r = "{\"response\": \"hi\", \"analysis\": {\"summaryUpdate\": \"s\"}}";
    assert_int_equal(aw_json_parse(r, strlen(r), NULL, &reply, NULL), 0);
    assert_int_equal(aw_store_exchange_add(s, id, "m", aw_json_doc_root(reply), &err), AW_STORE_ENOTFOUND);
    aw_session_start st = {.id = id, .kind = "chat"};
    assert_int_equal(aw_store_session_begin(s, &st, &err), 0);
    assert_int_equal(aw_store_exchange_add(s, id, "first", aw_json_doc_root(reply), &err), 0);
    assert_int_equal(aw_store_exchange_add(s, id, "second \xc3\xa9", aw_json_doc_root(reply), &err), 0);
    assert_int_equal(aw_store_exchanges(s, id, &d, &err), 0);
    const aw_json_value *list = aw_json_doc_root(d);
    assert_int_equal(aw_json_count(list), 2);
    assert_int_equal((int)nfield(aw_json_at(list, 1), "n"), 2);
    assert_string_equal(aw_json_get(aw_json_at(list, 1), "message")->u.str.ptr, "second \xc3\xa9");
    assert_true(aw_json_equal(aw_json_get(aw_json_at(list, 0), "reply"), aw_json_doc_root(reply)));
    aw_json_doc_free(d);
    aw_json_doc_free(reply);
    aw_session_filter f = {.kind = "chat"};
    assert_int_equal(aw_store_session_list(s, &f, &d, &err), 0);
    assert_true(aw_json_count(aw_json_doc_root(d)) >= 1);
    aw_json_doc_free(d);
    aw_store_close(s);
}

static int one_number(void *ctx, const aw_sv *cols, size_t n)
{
    *(int64_t *)ctx = n ? sv_get_int(&cols[0], -1) : -1;
    return 0;
}

static void test_newer_schema_refused(void **state)
{
    (void)state;
    aw_store *s = open_store();
    raw(s, "UPDATE aw_schema SET version = 99");
    aw_store_close(s);
    aw_error err;
    assert_null(aw_store_open(url, NULL, &err));
    assert_int_equal(err.code, AW_STORE_ESCHEMA);
    char want[100];
    snprintf(want, sizeof want, "schema version 99, newer than this agentwire knows (%d)", AW_STORE_SCHEMA_VERSION);
    assert_non_null(strstr(err.message, want));
    /* put it back through a handle that does not check (the driver's) */
    aw_store tmp = {0};
    tmp.drv = postgres ? &aw_store_pg_driver : &aw_store_sqlite_driver;
    tmp.alloc = aw_allocator_default();
    tmp.url = url;
    tmp.busy_timeout_ms = 5000;
    assert_int_equal(tmp.drv->open(&tmp, postgres ? url : url + 7, &err), 0);
    /* at version 1, without the viewer's indexes, the queue or the leases:
     * opened, it is brought forward to this binary's version */
    raw(&tmp, "UPDATE aw_schema SET version = 1");
    raw(&tmp, "DROP INDEX aw_events_step");
    raw(&tmp, "DROP INDEX aw_accounting_step");
    raw(&tmp, "DROP TABLE aw_queue");
    raw(&tmp, "ALTER TABLE aw_sessions DROP COLUMN lease_until");
    tmp.drv->close(&tmp);
    aw_store *s2 = open_store();
    int64_t v = 0;
    assert_int_equal(s2->drv->query(s2, "SELECT max(version) FROM aw_schema", NULL, 0, one_number, &v, &err), 0);
    assert_int_equal(v, AW_STORE_SCHEMA_VERSION);
    raw(s2, "SELECT count(*) FROM aw_events WHERE session_id = 'x' AND step = 1"); /* the index is there to use */
    const char *has_index = postgres ? "SELECT count(*) FROM pg_indexes WHERE indexname = 'aw_accounting_step'"
                                     : "SELECT count(*) FROM sqlite_master WHERE name = 'aw_accounting_step'";
    assert_int_equal(s2->drv->query(s2, has_index, NULL, 0, one_number, &v, &err), 0);
    assert_int_equal(v, 1);
    aw_store_close(s2);
}

static void test_corrupt_rows_are_reported(void **state)
{
    (void)state;
    aw_store *s = open_store();
    char id[64], sql[256];
    fresh_id(id, sizeof id);
    begin(s, id, false, "t");
    append(s, id, 1, false, false, NULL, NULL);
    append(s, id, 2, false, false, NULL, NULL);
    aw_store_resume r;
    aw_json_doc *d = NULL;
    aw_error err;
    snprintf(sql, sizeof sql, "UPDATE aw_steps SET resume = '{\"turn\": 1e300, \"chat\": []}' WHERE session_id = '%s' AND seq = 2", id);
    raw(s, sql);
    assert_int_equal(aw_store_resume_load(s, id, &r, &err), AW_STORE_ECORRUPT);
    assert_non_null(strstr(err.message, "stored step 2"));
    snprintf(sql, sizeof sql, "UPDATE aw_steps SET resume = 'not json' WHERE session_id = '%s' AND seq = 2", id);
    raw(s, sql);
    assert_int_equal(aw_store_resume_load(s, id, &r, &err), AW_STORE_ECORRUPT);
    assert_non_null(strstr(err.message, "not JSON"));
    snprintf(sql, sizeof sql, "UPDATE aw_events SET body = '{\"type\": 5' WHERE session_id = '%s' AND seq = 1", id);
    raw(s, sql);
    assert_int_equal(aw_store_events(s, id, 0, 0, &d, &err), AW_STORE_ECORRUPT);
    assert_non_null(strstr(err.message, "malformed"));
    if (!postgres) {
        /* numbers beyond int64 in integer columns (SQLite keeps them as
         * REAL; PostgreSQL refuses them) are held at its ends, not
         * converted into undefined behaviour */
        snprintf(sql, sizeof sql, "UPDATE aw_sessions SET input_tokens = 1e300, turns = -1e300 WHERE id = '%s'", id);
        raw(s, sql);
        assert_int_equal(aw_store_session_get(s, id, &d, &err), 0);
        const aw_json_value *got = aw_json_doc_root(d);
        assert_true(aw_json_get(aw_json_get(got, "usage"), "input_tokens")->u.num.i == INT64_MAX);
        assert_true(aw_json_get(got, "turns")->u.num.i == INT64_MIN);
        aw_json_doc_free(d);
    }
    snprintf(sql, sizeof sql, "UPDATE aw_sessions SET config = '[1' WHERE id = '%s'", id);
    raw(s, sql);
    assert_int_equal(aw_store_session_get(s, id, &d, &err), AW_STORE_ECORRUPT);
    snprintf(sql, sizeof sql, "UPDATE aw_sessions SET steps = -5 WHERE id = '%s'", id);
    raw(s, sql);
    step_doc sd;
    make_step(&sd, 3, false, false, NULL);
    assert_int_equal(aw_store_append_step(s, id, &sd.step, NULL, NULL, &err), AW_STORE_ECORRUPT);
    aw_json_doc_free(sd.doc);
    aw_store_close(s);
}

static void test_read_only_store(void **state)
{
    (void)state;
    aw_store *s = open_store();
    char id[64];
    fresh_id(id, sizeof id);
    begin(s, id, false, "t");
    append(s, id, 1, false, false, NULL, NULL);
    aw_store_close(s);
    aw_store_options ro = {.read_only = true};
    aw_error err;
    s = aw_store_open(url, &ro, &err);
    if (!s)
        fail_msg("read-only open: %s", err.message);
    aw_json_doc *d = get(s, id);
    aw_json_doc_free(d);
    step_doc sd;
    make_step(&sd, 2, false, false, NULL);
    int rc = aw_store_append_step(s, id, &sd.step, NULL, NULL, &err);
    assert_int_equal(rc, AW_STORE_EIO);
    assert_non_null(strstr(err.message, "read-only"));
    aw_json_doc_free(sd.doc);
    aw_store_close(s);
    /* nothing that was there is damaged */
    s = open_store();
    d = get(s, id);
    assert_int_equal((int)nfield(aw_json_doc_root(d), "steps"), 1);
    aw_json_doc_free(d);
    aw_store_close(s);
}

/* Two processes write steps into one session and one each of their own,
 * at the same time: every step lands, numbers stay unique and dense, and
 * no "database is locked" comes back. */
#define WRITERS 2
#define STEPS_EACH 60

static int writer(const char *shared, const char *own, unsigned base)
{
    aw_error err;
    aw_store *s = aw_store_open(url, NULL, &err);
    if (!s) {
        fprintf(stderr, "writer open: %s\n", err.message);
        return 1;
    }
    for (unsigned i = 0; i < STEPS_EACH; i++) {
        const char *ids[2] = {shared, own};
        for (int k = 0; k < 2; k++) {
            step_doc sd;
            make_step(&sd, base + i, false, false, NULL);
            int rc = aw_store_append_step(s, ids[k], &sd.step, NULL, NULL, &err);
            aw_json_doc_free(sd.doc);
            if (rc) {
                fprintf(stderr, "writer step %u: %s\n", i, err.message);
                aw_store_close(s);
                return 1;
            }
        }
    }
    aw_store_close(s);
    return 0;
}

static void test_two_processes_append_at_once(void **state)
{
    (void)state;
    aw_store *s = open_store();
    char shared[64], own[WRITERS][64];
    fresh_id(shared, sizeof shared);
    begin(s, shared, false, "shared");
    for (int w = 0; w < WRITERS; w++) {
        fresh_id(own[w], sizeof own[w]);
        begin(s, own[w], false, "own");
    }
    pid_t pids[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        pids[w] = fork();
        assert_true(pids[w] >= 0);
        if (pids[w] == 0)
            _exit(writer(shared, own[w], (unsigned)(1000 * (w + 1))));
    }
    for (int w = 0; w < WRITERS; w++) {
        int st = 0;
        assert_int_equal(waitpid(pids[w], &st, 0), pids[w]);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
    }
    aw_json_doc *d = get(s, shared);
    assert_int_equal((int)nfield(aw_json_doc_root(d), "steps"), WRITERS * STEPS_EACH);
    aw_json_doc_free(d);
    aw_error err;
    assert_int_equal(aw_store_events(s, shared, 0, 0, &d, &err), 0);
    const aw_json_value *list = aw_json_doc_root(d);
    assert_int_equal(aw_json_count(list), 2 * WRITERS * STEPS_EACH);
    for (size_t i = 0; i < aw_json_count(list); i++)
        assert_int_equal((int64_t)nfield(aw_json_at(list, i), "seq"), (int64_t)i + 1);
    aw_json_doc_free(d);
    for (int w = 0; w < WRITERS; w++) {
        assert_int_equal(aw_store_events(s, own[w], 0, 0, &d, &err), 0);
        assert_int_equal(aw_json_count(aw_json_doc_root(d)), 2 * STEPS_EACH);
        aw_json_doc_free(d);
    }
    aw_store_close(s);
}

/* ---- allocation failures ------------------------------------------------------------ */

static int sweep_body(const aw_allocator *a, void *ctx)
{
    (void)ctx;
    aw_store_options so = {.alloc = a};
    aw_error err;
    aw_store *s = aw_store_open(url, &so, &err);
    if (!s)
        return err.code;
    char id[64];
    fresh_id(id, sizeof id);
    aw_session_start st = {.id = id, .task = "t"};
    int rc = aw_store_session_begin(s, &st, &err);
    step_doc sd;
    make_step(&sd, 1, false, false, NULL);
    if (!rc)
        rc = aw_store_append_step(s, id, &sd.step, sd.step.state, "x", &err);
    aw_json_doc_free(sd.doc);
    aw_json_doc *d = NULL;
    if (!rc && !(rc = aw_store_session_get(s, id, &d, &err)))
        aw_json_doc_free(d);
    aw_session_filter f = {.limit = 3};
    if (!rc && !(rc = aw_store_session_list(s, &f, &d, &err)))
        aw_json_doc_free(d);
    if (!rc && !(rc = aw_store_events(s, id, 0, 0, &d, &err)))
        aw_json_doc_free(d);
    if (!rc && !(rc = aw_store_accounting(s, id, &d, &err)))
        aw_json_doc_free(d);
    if (!rc && !(rc = aw_store_steps(s, id, 0, 0, &d, &err)))
        aw_json_doc_free(d);
    if (!rc && !(rc = aw_store_snapshot(s, id, &d, &err)))
        aw_json_doc_free(d);
    aw_store_resume r;
    if (!rc && !(rc = aw_store_resume_load(s, id, &r, &err)))
        aw_store_resume_free(&r);
    aw_json_doc *reply = NULL;
    if (!rc && !(rc = aw_json_parse("{\"response\": \"x\"}", 17, &(aw_json_read_options){.alloc = a}, &reply, NULL))) {
        rc = aw_store_exchange_add(s, id, "m", aw_json_doc_root(reply), &err);
        aw_json_doc_free(reply);
    }
    if (!rc && !(rc = aw_store_exchanges(s, id, &d, &err)))
        aw_json_doc_free(d);
    aw_store_recorder *rec = rc ? NULL : aw_store_recorder_new(s, NULL, &err);
    if (!rc && !rec)
        rc = err.code;
    aw_store_recorder_free(rec);
    if (!rc)
        rc = aw_store_session_delete(s, id, &err);
    /* the run queue: queued, claimed (perhaps a run an earlier pass left),
     * renewed, released */
    char qid[40];
    aw_session_start qs = {.task = "queued"};
    if (!rc)
        rc = aw_store_enqueue(s, &qs, qid, &err);
    if (!rc && !(rc = aw_store_claim(s, "sweep:1", 60000, 1, 0, &d, &err)))
        aw_json_doc_free(d);
    const char *ids[1] = {qid};
    bool held[1];
    if (!rc)
        rc = aw_store_lease_renew(s, "sweep:1", 60000, ids, 1, held, &err);
    if (!rc)
        rc = aw_store_lease_release(s, qid, "sweep:1", &err);
    aw_store_close(s);
    return rc;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    long calls = aw_failalloc_run(sweep_body, NULL, 0);
    assert_true(calls > 20);
}

/* ---- set-up ----------------------------------------------------------------------------- */

static int setup(void **state)
{
    (void)state;
    postgres = aw_test_store_url(url, sizeof url, tmpdir, sizeof tmpdir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return aw_test_store_remove(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_twice_and_url_redacted),
        cmocka_unit_test(test_session_lifecycle),
        cmocka_unit_test(test_events_accounting_snapshot),
        cmocka_unit_test(test_steps_for_a_viewer),
        cmocka_unit_test(test_resume_from_whole_steps),
        cmocka_unit_test(test_list_filters_rm_gc),
        cmocka_unit_test(test_exchanges),
        cmocka_unit_test(test_newer_schema_refused),
        cmocka_unit_test(test_corrupt_rows_are_reported),
        cmocka_unit_test(test_read_only_store),
        cmocka_unit_test(test_two_processes_append_at_once),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests_name(getenv("AW_PG_URL") ? "store (postgres)" : "store (sqlite)", tests, setup,
                                       teardown);
}
