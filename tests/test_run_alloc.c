/* Every allocation of a whole small run failed in turn: two turns, two
 * real tool calls, records on disk, with the failing allocator given to
 * the loop, the provider, the tools, the records and the run. Each failure
 * must end the run cleanly (done is called, or making it fails), leave
 * nothing allocated and no tool process behind. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "failalloc.h"
#include "run_harness.h"

/* The human answers at once, from inside the question. */
static void answer_at_once(rh *h, const char *question, size_t len)
{
    (void)question;
    (void)len;
    aw_run_answer(h->run, "yes", 3);
}

typedef struct sweep {
    bool records;
    aw_transport_mode transport;
    aw_context_mode context;
    long runs, succeeded;
} sweep;

static int one_run(const aw_allocator *a, void *ctx)
{
    sweep *sw = ctx;
    sw->runs++;
    rh h;
    int rc = rh_init(&h, a);
    rh_script *s = rh_script_new();
    if (sw->transport != AW_TRANSPORT_XML) {
        aw_json_value *l = rh_say(s, "calling", NULL);
        rh_set(s, l, "tool_calls",
               "[{\"id\":\"a\",\"name\":\"echo\",\"arguments\":{\"n\":1}},"
               "{\"id\":\"b\",\"name\":\"pid\",\"arguments\":{}}]");
        rh_set(s, l, "usage", "{\"input_tokens\":10,\"output_tokens\":5}");
        if (sw->transport == AW_TRANSPORT_NATIVE) {
            l = rh_say(s, "", NULL);
            rh_set(s, l, "tool_calls",
                   "[{\"id\":\"f\",\"name\":\"agent__final_report\",\"arguments\":{\"status\":\"success\","
                   "\"content\":\"the answer\"}}]");
        } else {
            rh_say(s, FINAL("success", "the answer"), NULL);
        }
    } else {
        aw_json_value *l = rh_say(s,
                                  "calling " CALL("0001", "echo", "{\"n\":1}") " and " CALL("0002", "pid", "{}")
                                      CALL("0003", "agent__ask_human", "{\"question\":\"ok?\"}")
                                      "<ai-agent-" RH_NONCE "-PROGRESS tool=\"agent__progress_report\">"
                                      "{\"progress\":\"half\"}</ai-agent-" RH_NONCE "-PROGRESS>",
                                  NULL);
        rh_set(s, l, "usage", "{\"input_tokens\":10,\"output_tokens\":5}");
        rh_set(s, l, "chunks", "7");
        rh_say(s, FINAL("success", "the answer"), "{\"n\":1}", NULL);
    }
    /* records first: the model traces into them */
    if (!rc && sw->records)
        rc = rh_records(&h, true);
    if (!rc)
        rc = rh_model(&h, "model.jsonl", s);
    else
        rh_script_free(s);
    if (!rc)
        rc = rh_tools(&h, "[{\"name\":\"echo\",\"command\":[\"cat\"]},"
                          "{\"name\":\"pid\",\"command\":[\"sh\",\"-c\",\"echo $$ >> pids; echo ok\"]}]");
    if (!rc) {
        rh_config(&h);
        h.cfg.interactive = true;
        h.on_ask = answer_at_once;
        h.cfg.transport = sw->transport;
        h.cfg.context = sw->context;
        rc = rh_go(&h, 10000);
        if (rc == AW_ESTOP)
            fail_msg("the run did not end (allocation %ld)", sw->runs - 1);
        if (!rc && h.status != AW_RUN_SUCCESS)
            rc = AW_ENOMEM; /* the run failed for lack of memory, as it should */
    }
    /* every tool process is gone once the run is */
    char *pids = rh_read(&h, "pids", NULL);
    rh_free(&h);
    for (char *p = pids; p && *p;) {
        long pid = strtol(p, &p, 10);
        if (pid > 0 && !rh_pid_gone(pid, 2000))
            fail_msg("tool process %ld outlived its run", pid);
        while (*p == '\n')
            p++;
    }
    free(pids);
    if (!rc)
        sw->succeeded++;
    return rc;
}

static void sweep_every_failure(sweep sw)
{
    long total = aw_failalloc_run(one_run, &sw, 0);
    assert_true(total > 100);
    print_message("%ld allocations, %ld runs, %ld succeeded anyway\n", total, sw.runs, sw.succeeded);
}

static void test_every_allocation_failure_of_an_xml_run(void **state)
{
    (void)state;
    sweep_every_failure((sweep){.records = true, .transport = AW_TRANSPORT_XML, .context = AW_CONTEXT_MESSAGES});
}

static void test_every_allocation_failure_of_a_native_run_in_xml_context(void **state)
{
    (void)state;
    sweep_every_failure((sweep){.transport = AW_TRANSPORT_XML_FINAL, .context = AW_CONTEXT_XML});
}

static void test_every_allocation_failure_of_a_native_run(void **state)
{
    (void)state;
    sweep_every_failure((sweep){.transport = AW_TRANSPORT_NATIVE, .context = AW_CONTEXT_MESSAGES});
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_allocation_failure_of_an_xml_run),
        cmocka_unit_test(test_every_allocation_failure_of_a_native_run_in_xml_context),
        cmocka_unit_test(test_every_allocation_failure_of_a_native_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
