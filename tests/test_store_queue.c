/* The run queue of the store (schema version 3, store_queue.c) on a real
 * database: SQLite in a temporary folder, or PostgreSQL when AW_PG_URL
 * names one (test_store_queue_pg). Covered: a version-1 store migrated
 * forward; claims oldest first, each session to one owner; leases renewed
 * only by their owner; a lease that ran out taken over, the old owner's
 * steps refused (the fence); a session given up after its attempts; an
 * ended session only released; a returned one claimable at once; four
 * processes claiming at once never take one session twice. */
#define _GNU_SOURCE
#include <setjmp.h>
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
#include "internal/store_impl.h"
#include "testutil.h"

static char url[1024];
static char tmpdir[256];

/* The store; clear: from an empty queue (PostgreSQL's database is shared
 * by the tests). */
static aw_store *open_queue_store(bool clear)
{
    aw_error err;
    aw_store *s = aw_store_open(url, NULL, &err);
    if (!s)
        fail_msg("open %s: %s", url, err.message);
    if (clear && aw__store_exec(s, "DELETE FROM aw_queue", NULL, 0, &err))
        fail_msg("clear: %s", err.message);
    return s;
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A queued run; its id into id. */
static void enqueue(aw_store *s, const char *task, char id[40])
{
    aw_session_start st = {.kind = "run", .task = task};
    aw_error err;
    if (aw_store_enqueue(s, &st, id, &err))
        fail_msg("enqueue: %s", err.message);
}

/* Claims of owner: how many, and the first's id, attempts and status. */
typedef struct claim_result {
    size_t n;
    char id[40], status[32];
    int attempts;
} claim_result;

static claim_result claim(aw_store *s, const char *owner, int64_t lease_ms, size_t max, unsigned max_attempts)
{
    aw_json_doc *d = NULL;
    aw_error err;
    if (aw_store_claim(s, owner, lease_ms, max, max_attempts, &d, &err))
        fail_msg("claim: %s", err.message);
    claim_result r = {0};
    const aw_json_value *rows = aw_json_doc_root(d);
    r.n = aw_json_count(rows);
    if (r.n) {
        const aw_json_value *first = aw_json_at(rows, 0);
        snprintf(r.id, sizeof r.id, "%s", aw_json_get(first, "id")->u.str.ptr);
        snprintf(r.status, sizeof r.status, "%s", aw_json_get(first, "status")->u.str.ptr);
        r.attempts = (int)aw_json_get(first, "attempts")->u.num.d;
    }
    aw_json_doc_free(d);
    return r;
}

static bool renew(aw_store *s, const char *owner, const char *id)
{
    bool held = false;
    aw_error err;
    const char *ids[1] = {id};
    if (aw_store_lease_renew(s, owner, 60000, ids, 1, &held, &err))
        fail_msg("renew: %s", err.message);
    return held;
}

/* A step of turn `turn` written for owner (the fence); its status code. */
static int step_as(aw_store *s, const char *id, const char *owner, unsigned turn, bool final)
{
    char text[300];
    snprintf(text, sizeof text,
             "{\"events\": [{\"type\": \"completion\", \"status\": \"success\", \"result\": \"ok\"}],"
             " \"accounting\": [], \"resume\": {\"turn\": %u}}",
             turn);
    aw_json_doc *d = NULL;
    assert_int_equal(aw_json_parse(text, strlen(text), NULL, &d, NULL), 0);
    const aw_json_value *r = aw_json_doc_root(d);
    aw_run_step step = {turn, final ? aw_json_get(r, "events") : aw_json_get(r, "accounting"),
                        aw_json_get(r, "accounting"), NULL, aw_json_get(r, "resume"), final, false, NULL};
    aw_error err;
    int rc = aw__store_append_step_fenced(s, id, &step, NULL, final ? "completed" : NULL, owner, &err);
    aw_json_doc_free(d);
    return rc;
}

static char *status_of(aw_store *s, const char *id, char *out, size_t cap)
{
    aw_json_doc *d = NULL;
    aw_error err;
    if (aw_store_session_get(s, id, &d, &err))
        fail_msg("get %s: %s", id, err.message);
    const aw_json_value *v = aw_json_get(aw_json_doc_root(d), "status");
    snprintf(out, cap, "%s", aw_json_is_string(v) ? v->u.str.ptr : "?");
    aw_json_doc_free(d);
    return out;
}

static int first_int(void *ctx, const aw_sv *cols, size_t n)
{
    *(int64_t *)ctx = n ? sv_get_int(&cols[0], -1) : -1;
    return 0;
}

static int64_t scalar(aw_store *s, const char *sql)
{
    int64_t v = -1;
    aw_error err;
    if (s->drv->query(s, sql, NULL, 0, first_int, &v, &err))
        fail_msg("%s: %s", sql, err.message);
    return v;
}

/* ---- tests ----------------------------------------------------------------------------- */

static void test_a_version_1_store_is_migrated(void **state)
{
    (void)state;
    aw_store *s = open_queue_store(false);
    char id[40];
    enqueue(s, "before", id);
    /* back to version 1 as an older agentwire left it */
    static const char *const downgrade[] = {"DROP TABLE aw_queue", "ALTER TABLE aw_sessions DROP COLUMN lease_until",
                                            "UPDATE aw_schema SET version = 1"};
    aw_error err;
    for (size_t i = 0; i < sizeof downgrade / sizeof *downgrade; i++)
        if (aw__store_exec(s, downgrade[i], NULL, 0, &err))
            fail_msg("%s: %s", downgrade[i], err.message);
    aw_store_close(s);
    s = open_queue_store(false);
    assert_int_equal(scalar(s, "SELECT max(version) FROM aw_schema"), AW_STORE_SCHEMA_VERSION);
    assert_int_equal(scalar(s, "SELECT count(*) FROM aw_queue"), 0);
    char st[32];
    assert_string_equal(status_of(s, id, st, sizeof st), "queued"); /* its row kept */
    enqueue(s, "after", id);
    assert_int_equal(claim(s, "a:1", 60000, 5, 0).n, 1);
    aw_store_close(s);
}

static void test_claims_oldest_first_one_owner_each(void **state)
{
    (void)state;
    aw_store *s = open_queue_store(true);
    char one[40], two[40], three[40];
    enqueue(s, "one", one);
    pause_ms(2);
    enqueue(s, "two", two);
    pause_ms(2);
    enqueue(s, "three", three);
    claim_result a = claim(s, "a:1", 60000, 2, 0);
    assert_int_equal(a.n, 2);
    assert_string_equal(a.id, one);
    assert_int_equal(a.attempts, 1);
    assert_string_equal(a.status, "queued");
    claim_result b = claim(s, "b:2", 60000, 5, 0);
    assert_int_equal(b.n, 1);
    assert_string_equal(b.id, three);
    assert_int_equal(claim(s, "c:3", 60000, 5, 0).n, 0);
    /* leases: renewed by their owner only */
    assert_true(renew(s, "a:1", one));
    assert_false(renew(s, "a:1", three));
    assert_true(renew(s, "b:2", three));
    /* released by another: nothing; by its owner: out of the queue */
    aw_error err;
    assert_int_equal(aw_store_lease_release(s, one, "b:2", &err), 0);
    assert_int_equal(scalar(s, "SELECT count(*) FROM aw_queue"), 3);
    assert_int_equal(aw_store_lease_release(s, one, "a:1", &err), 0);
    assert_int_equal(scalar(s, "SELECT count(*) FROM aw_queue"), 2);
    /* returned: claimable at once by anyone */
    assert_int_equal(aw_store_lease_return(s, two, "a:1", &err), 0);
    claim_result c = claim(s, "c:3", 60000, 5, 0);
    assert_int_equal(c.n, 1);
    assert_string_equal(c.id, two);
    assert_int_equal(c.attempts, 2);
    aw_store_close(s);
}

static void test_a_lease_that_ran_out_is_taken_over_and_fenced(void **state)
{
    (void)state;
    aw_store *s = open_queue_store(true);
    char id[40];
    enqueue(s, "slow", id);
    assert_int_equal(claim(s, "a:1", 1, 1, 0).n, 1);
    assert_int_equal(step_as(s, id, "a:1", 1, false), 0); /* its own session: written */
    pause_ms(30);
    claim_result b = claim(s, "b:2", 60000, 1, 0);
    assert_int_equal(b.n, 1);
    assert_string_equal(b.id, id);
    assert_string_equal(b.status, "running"); /* a step of it is stored: b resumes it */
    assert_int_equal(b.attempts, 2);
    /* a can neither renew nor write a step any more */
    assert_false(renew(s, "a:1", id));
    assert_int_equal(step_as(s, id, "a:1", 2, false), AW_STORE_ESTATE);
    assert_int_equal(step_as(s, id, "b:2", 2, false), 0);
    assert_int_equal(scalar(s, "SELECT count(*) FROM aw_steps WHERE session_id IN (SELECT session_id FROM aw_queue)"),
                     2);
    /* a's release leaves b's run in the queue */
    aw_error err;
    assert_int_equal(aw_store_lease_release(s, id, "a:1", &err), 0);
    assert_int_equal(scalar(s, "SELECT count(*) FROM aw_queue"), 1);
    assert_int_equal(step_as(s, id, "b:2", 3, true), 0);
    char st[32];
    assert_string_equal(status_of(s, id, st, sizeof st), "completed");
    assert_int_equal(aw_store_lease_release(s, id, "b:2", &err), 0);
    assert_int_equal(scalar(s, "SELECT count(*) FROM aw_queue"), 0);
    aw_store_close(s);
}

static void test_given_up_after_its_attempts(void **state)
{
    (void)state;
    aw_store *s = open_queue_store(true);
    char id[40];
    enqueue(s, "kills its workers", id);
    assert_int_equal(claim(s, "a:1", 1, 1, 2).attempts, 1);
    pause_ms(30);
    assert_int_equal(claim(s, "b:2", 1, 1, 2).attempts, 2);
    pause_ms(30);
    claim_result c = claim(s, "c:3", 60000, 1, 2);
    assert_int_equal(c.n, 1);
    assert_string_equal(c.status, "abandoned");
    char st[32];
    assert_string_equal(status_of(s, id, st, sizeof st), "failed");
    assert_int_equal(scalar(s, "SELECT count(*) FROM aw_queue"), 0);
    aw_store_close(s);
}

static void test_an_ended_session_is_only_released(void **state)
{
    (void)state;
    aw_store *s = open_queue_store(true);
    char id[40];
    enqueue(s, "ended", id);
    assert_int_equal(claim(s, "a:1", 1, 1, 0).n, 1);
    assert_int_equal(step_as(s, id, "a:1", 1, true), 0); /* a dies before releasing it */
    pause_ms(30);
    claim_result b = claim(s, "b:2", 60000, 1, 0);
    assert_int_equal(b.n, 1);
    assert_string_equal(b.status, "completed");
    aw_error err;
    assert_int_equal(aw_store_lease_release(s, id, "b:2", &err), 0);
    assert_int_equal(scalar(s, "SELECT count(*) FROM aw_queue"), 0);
    aw_store_close(s);
}

/* Four processes claim one session at a time until the queue is empty,
 * each writing what it took to its own file: together every session,
 * none twice. */
static void test_four_claimers_at_once(void **state)
{
    (void)state;
    enum { RUNS = 40, CLAIMERS = 4 };
    aw_store *s = open_queue_store(true);
    char ids[RUNS][40];
    for (int i = 0; i < RUNS; i++)
        enqueue(s, "shared", ids[i]);
    aw_store_close(s);
    char path[CLAIMERS][300];
    pid_t pids[CLAIMERS];
    for (int k = 0; k < CLAIMERS; k++) {
        snprintf(path[k], sizeof path[k], "%s/claims-%d", tmpdir[0] ? tmpdir : "/tmp", k);
        if ((pids[k] = fork()) == 0) {
            aw_error err;
            aw_store *own = aw_store_open(url, NULL, &err);
            FILE *f = fopen(path[k], "w");
            char owner[32];
            snprintf(owner, sizeof owner, "claimer:%d", k);
            for (;;) {
                aw_json_doc *d = NULL;
                if (!own || !f || aw_store_claim(own, owner, 60000, 1, 0, &d, &err))
                    _exit(1);
                const aw_json_value *rows = aw_json_doc_root(d);
                if (!aw_json_count(rows)) {
                    aw_json_doc_free(d);
                    break;
                }
                fprintf(f, "%s\n", aw_json_get(aw_json_at(rows, 0), "id")->u.str.ptr);
                aw_json_doc_free(d);
            }
            fclose(f);
            aw_store_close(own);
            _exit(0);
        }
    }
    for (int k = 0; k < CLAIMERS; k++) {
        int status = 0;
        waitpid(pids[k], &status, 0);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    int seen[RUNS] = {0}, total = 0;
    for (int k = 0; k < CLAIMERS; k++) {
        FILE *f = fopen(path[k], "r");
        assert_non_null(f);
        char line[64];
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\n")] = 0;
            total++;
            for (int i = 0; i < RUNS; i++)
                if (!strcmp(line, ids[i]))
                    seen[i]++;
        }
        fclose(f);
        unlink(path[k]);
    }
    assert_int_equal(total, RUNS);
    for (int i = 0; i < RUNS; i++)
        assert_int_equal(seen[i], 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_version_1_store_is_migrated),
        cmocka_unit_test(test_claims_oldest_first_one_owner_each),
        cmocka_unit_test(test_a_lease_that_ran_out_is_taken_over_and_fenced),
        cmocka_unit_test(test_given_up_after_its_attempts),
        cmocka_unit_test(test_an_ended_session_is_only_released),
        cmocka_unit_test(test_four_claimers_at_once),
    };
    bool postgres = aw_test_store_url(url, sizeof url, tmpdir, sizeof tmpdir);
    int failed = cmocka_run_group_tests_name(postgres ? "queue (postgres)" : "queue (sqlite)", tests, NULL, NULL);
    if (aw_test_store_remove(tmpdir))
        failed++;
    return failed;
}
