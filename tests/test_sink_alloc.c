/* Allocation failures in every event sink (sink.h): opening, queueing,
 * delivering and flushing a file, a Redis and a webhook destination, each
 * allocation made to fail in turn. Each run fails cleanly or carries on
 * (an envelope it could not queue is dropped and counted) and leaves
 * nothing allocated. The network sinks point at a closed loopback port,
 * so their connection failures, retries, drops and dead letters are
 * swept too; libcurl's and hiredis's own allocations are theirs. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "agentwire/json.h"
#include "agentwire/sink.h"
#include "failalloc.h"
#include "internal/sink_queue.h"
#include "testutil.h"

typedef struct sweep {
    const char *dest;
    char dead[300];
    aw_json_doc *envelope;
} sweep;

static int send_through(const aw_allocator *a, void *vctx)
{
    sweep *sw = vctx;
    aw_error err;
    aw_loop *l = aw_loop_new(a, &err);
    if (!l)
        return AW_ENOMEM;
    aw_sink_options o = {.secret = "key", .dead_letter = sw->dead, .queue_max = 4, .alloc = a};
    aw_sink *s = aw_sink_open(l, sw->dest, &o, &err);
    if (!s) {
        aw_loop_free(l);
        assert_true(err.code < 0);
        assert_true(err.message[0] != 0);
        return err.code;
    }
    int rc = 0;
    /* more than the queue holds: the rest are dropped (AW_EIO) and counted */
    for (int i = 0; i < 6; i++) {
        int k = s->ops->send(s, "agent.0f1e2d3c", aw_json_doc_root(sw->envelope), &err);
        if (k == AW_EIO)
            assert_true(s->dropped > 0 && s->error[0]);
        else if (k && !rc)
            rc = k;
    }
    /* nothing listens: the flush gives up (its error says so); only
     * running out of memory counts here */
    if (s->ops->flush && s->ops->flush(s, 30, &err) == AW_ENOMEM && !rc)
        rc = AW_ENOMEM;
    aw_sink_free(s);
    aw_loop_free(l);
    return rc < 0 ? rc : 0;
}

static void sweep_dest(const char *dest)
{
    sweep sw = {.dest = dest};
    char dir[] = "/tmp/aw-sink-alloc.XXXXXX";
    assert_non_null(mkdtemp(dir));
    snprintf(sw.dead, sizeof sw.dead, "%s/dead.jsonl", dir);
    char file[300];
    if (!strcmp(dest, "FILE")) {
        snprintf(file, sizeof file, "%s/events.jsonl", dir);
        sw.dest = file;
    }
    static const char env[] = "{\"type\":\"agent.status\",\"session_id\":\"0f1e2d3c\",\"execution_id\":\"e\","
                              "\"timestamp\":\"2026-01-16T10:05:00.123Z\",\"payload\":{\"status\":\"completed\"}}";
    aw_error err;
    assert_int_equal(aw_json_parse(env, sizeof env - 1, NULL, &sw.envelope, &err), 0);
    assert_true(aw_failalloc_run(send_through, &sw, 0) > 0);
    aw_json_doc_free(sw.envelope);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_file_sink(void **state)
{
    (void)state;
    sweep_dest("FILE");
}

static void test_redis_sink(void **state)
{
    (void)state;
    sweep_dest("redis://:secret@127.0.0.1:9/1"); /* port 9: nothing listens */
}

static void test_webhook_sink(void **state)
{
    (void)state;
    sweep_dest("http://127.0.0.1:9/hook");
}

static int queue_ops(const aw_allocator *a, void *ctx)
{
    (void)ctx;
    aw_sink_queue q;
    aw_sink_queue_init(&q, a, 3);
    int rc = 0;
    aw_sink_item *it = NULL;
    for (int i = 0; i < 5 && rc == 0; i++) {
        int k = aw_sink_queue_push(&q, i % 2 ? "agent.a" : "agent.b", "{}", 2, &it);
        if (k < 0)
            rc = k;
        else if (k == 1)
            rc = q.count == 3 ? 0 : -100; /* full: nothing appended */
    }
    /* b, a, b: channels told apart by their hash and bytes */
    bool ok = rc || (q.count == 3 && !aw_sink_item_same_channel(q.head, q.head->next) &&
                     aw_sink_item_same_channel(q.head, q.tail));
    aw_sink_queue_clear(&q);
    assert_true(ok && rc != -100);
    return rc;
}

static void test_the_queue(void **state)
{
    (void)state;
    assert_true(aw_failalloc_run(queue_ops, NULL, 0) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_queue),
        cmocka_unit_test(test_file_sink),
        cmocka_unit_test(test_redis_sink),
        cmocka_unit_test(test_webhook_sink),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
