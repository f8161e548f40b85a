/* Sub-agents (runtime/tools_agent.c, tools_inherited.c) end to end on
 * the replay provider: a parent run calls agent__helper through the XML
 * transport, the helper runs nested on the same loop and its report comes
 * back as the tool's result; the records of both runs reach the parent's
 * observers tagged with both ids; cycles and the depth limit are refused
 * naming the path; a failing sub-agent is a failed call with its report;
 * a sub-agent inherits its caller's tools through its own filter; and
 * cancelling the parent mid sub-run stops the nested run and kills the
 * tool it was running. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agentwire/agentfile.h"
#include "agentwire/run.h"
#include "scratch.h"

#define NONCE "1a2b3c4d"


/* ---- what the observers saw ------------------------------------------------------------ */

typedef struct seen {
    char accounting[64][600]; /* rows as JSON */
    size_t naccounting;
    /* agent events: who emitted them */
    size_t events_top, events_nested;
    char nested_session[40], nested_parent[40], nested_agent[40];
    unsigned nested_depth;
    char nested_completion[300]; /* the last nested run's completion: "STATUS: RESULT" */
    /* the top run's tool results, as "TOOL ok|failed: RESULT" */
    char results[16][1200];
    size_t nresults;
    char top_session[40];
} seen;

static void on_event(void *ctx, const aw_run_info *run, const aw_json_value *ev)
{
    seen *s = ctx;
    if (run->depth == 0) {
        s->events_top++;
        snprintf(s->top_session, sizeof s->top_session, "%s", run->session_id);
        return;
    }
    s->events_nested++;
    snprintf(s->nested_session, sizeof s->nested_session, "%s", run->session_id);
    snprintf(s->nested_parent, sizeof s->nested_parent, "%s", run->parent_session_id ? run->parent_session_id : "");
    snprintf(s->nested_agent, sizeof s->nested_agent, "%s", run->agent_name ? run->agent_name : "");
    s->nested_depth = run->depth;
    const aw_json_value *type = aw_json_get(ev, "type");
    if (aw_json_is_string(type) && !strcmp(type->u.str.ptr, "completion"))
        snprintf(s->nested_completion, sizeof s->nested_completion, "%s: %s", aw_json_get(ev, "status")->u.str.ptr,
                 aw_json_get(ev, "result")->u.str.ptr);
}

static void on_runtime(void *ctx, const aw_run_info *run, const aw_json_value *ev)
{
    seen *s = ctx;
    const aw_json_value *kind = aw_json_get(ev, "event");
    if (run->depth != 0 || !aw_json_is_string(kind) || strcmp(kind->u.str.ptr, "tool_completed") != 0 ||
        s->nresults == 16)
        return;
    const aw_json_value *ok = aw_json_get(ev, "success");
    snprintf(s->results[s->nresults++], sizeof s->results[0], "%s %s: %s", aw_json_get(ev, "tool_name")->u.str.ptr,
             aw_json_is_bool(ok) && ok->u.b ? "ok" : "failed", aw_json_get(ev, "result")->u.str.ptr);
}

static void on_accounting(void *ctx, const aw_run_info *run, const aw_json_value *row)
{
    (void)run;
    seen *s = ctx;
    if (s->naccounting == 64)
        return;
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_json_write(row, NULL, &b, NULL), 0);
    snprintf(s->accounting[s->naccounting++], sizeof s->accounting[0], "%s", b.data);
    aw_buf_free(&b);
}

/* ---- a parent run ---------------------------------------------------------------------- */

typedef struct parent {
    aw_loop *loop;
    aw_provider *model;
    aw_toolbox *box;
    aw_agent_file *file;
    aw_run *run;
    aw_json_doc *tools_doc;
    seen seen;
    bool done;
} parent;

static void parent_done(void *ctx, aw_run *run, const aw_run_result *res)
{
    (void)run;
    (void)res;
    ((parent *)ctx)->done = true;
}

/* The agent FILE as the top agent, on replay:REPLAY, with command tools
 * (JSON, or NULL) in its toolbox beside its sub-agents. */
static void parent_start(parent *p, const char *file, const char *replay, const char *tools_json, unsigned max_depth)
{
    memset(p, 0, sizeof *p);
    aw_error err;
    p->loop = aw_loop_new(NULL, &err);
    assert_non_null(p->loop);
    char spec[600];
    snprintf(spec, sizeof spec, "replay:%s", aw_test_scratch_path(replay));
    aw_provider_config pc = {.spec = spec};
    p->model = aw_provider_new(p->loop, &pc, &err);
    assert_non_null(p->model);
    if (aw_agent_file_read(aw_test_scratch_path(file), NULL, &p->file, &err))
        fail_msg("%s: %s", file, err.message);
    p->box = aw_toolbox_new(p->loop, NULL);
    assert_non_null(p->box);
    if (tools_json) {
        assert_int_equal(aw_json_parse(tools_json, strlen(tools_json), NULL, &p->tools_doc, &err), 0);
        aw_tool_source *cmd = aw_command_tools_new(p->loop, aw_json_doc_root(p->tools_doc), aw_test_scratch_dir(), NULL, &err);
        assert_non_null(cmd);
        assert_int_equal(aw_toolbox_add(p->box, cmd), 0);
    }
    static aw_run_observer obs;
    obs = (aw_run_observer){.ctx = &p->seen, .on_event = on_event, .on_runtime = on_runtime,
                            .on_accounting = on_accounting};
    const char *models[] = {spec};
    aw_agent_env env = {.observers = &obs, .observer_count = 1, .max_depth = max_depth};
    aw_tool_source *agents = aw_agent_tools_new(p->loop, p->file, &env, models, 1, p->box, 0, NULL, 0, &err);
    if (!agents)
        fail_msg("%s", err.message);
    assert_int_equal(aw_toolbox_add(p->box, agents), 0);
    aw_run_config cfg = {.models = &p->model,
                         .model_count = 1,
                         .tools = p->box,
                         .transport = AW_TRANSPORT_XML,
                         .system_prompt = aw_agent_file_def(p->file)->system_prompt,
                         .task = "start",
                         .agent_name = aw_agent_file_def(p->file)->name,
                         .nonce = NONCE,
                         .observers = &obs,
                         .observer_count = 1};
    p->run = aw_run_new(p->loop, &cfg, &err);
    assert_non_null(p->run);
    assert_int_equal(aw_run_start(p->run, parent_done, p), 0);
}

/* Serve the loop until the parent is done (at most a minute). */
static const aw_run_result *parent_wait(parent *p)
{
    for (int i = 0; i < 600 && !p->done; i++)
        assert_int_equal(aw_loop_once(p->loop, 100), 0);
    assert_true(p->done);
    return aw_run_result_of(p->run);
}

/* parent_wait, and the parent must have succeeded. */
static const aw_run_result *parent_wait_ok(parent *p)
{
    const aw_run_result *r = parent_wait(p);
    if (r->status != AW_RUN_SUCCESS)
        fail_msg("the parent failed: %.*s (results: %s / %s)", (int)r->content.len, r->content.ptr, p->seen.results[0],
                 p->seen.results[1]);
    return r;
}

static void parent_free(parent *p)
{
    aw_run_free(p->run);
    aw_toolbox_free(p->box);
    aw_provider_free(p->model);
    aw_agent_file_free(p->file);
    aw_json_doc_free(p->tools_doc);
    aw_loop_free(p->loop);
}

static bool has_text(const aw_run_result *r, const char *text)
{
    return r->content.len && strstr(r->content.ptr, text) != NULL;
}

/* A reply calling TOOL with the task TASK through the XML transport. */
#define XML_CALL(slot, tool, task)                                                                                     \
    "{\"text\": \"<ai-agent-" NONCE "-" slot " tool=\\\"" tool "\\\">{\\\"task\\\": \\\"" task "\\\"}</ai-agent-" NONCE  \
    "-" slot ">\""
#define XML_FINAL(text)                                                                                                \
    "{\"text\": \"<ai-agent-" NONCE "-FINAL tool=\\\"agent__final_report\\\" status=\\\"success\\\" "                   \
    "format=\\\"markdown\\\">" text "</ai-agent-" NONCE "-FINAL>\""
/* A native final report (a sub-agent's replay cannot know its nonce). */
#define NATIVE_FINAL(status, text)                                                                                     \
    "{\"tool_calls\": [{\"id\": \"f\", \"name\": \"agent__final_report\", \"arguments\": \"{\\\"status\\\": \\\"" status \
    "\\\", \\\"content\\\": \\\"" text "\\\"}\"}]"
#define NATIVE_CALL(id, tool, args) "{\"tool_calls\": [{\"id\": \"" id "\", \"name\": \"" tool "\", \"arguments\": \"" args "\"}]"

/* ---- the tests --------------------------------------------------------------------------- */

static void test_nested_run_reports_to_its_caller(void **state)
{
    (void)state;
    aw_test_scratch_write("lead.md", "---\nname: lead\nagents: [helper.md]\n---\nYou lead.\n");
    aw_test_scratch_write("helper.md", "---\nname: helper\ndescription: Finds things out.\nmodel: replay:helper.jsonl\n"
                            "transport: native\nmaxTurns: 3\n---\nYou help.\n");
    /* the helper sees its own system prompt and the task, and is offered
     * what it inherits (nothing here) and never its caller's sub-agents */
    aw_test_scratch_write("helper.jsonl", NATIVE_FINAL("success", "the answer is 42") ", \"expect\": [\"You help.\", "
                                                                             "\"what is the answer\"]}\n");
    aw_test_scratch_write("lead.jsonl", XML_CALL("0001", "agent__helper", "what is the answer") ", \"expect\": [\"agent__helper\", "
                                                                                     "\"Finds things out.\"]}\n" XML_FINAL(
                                 "helper said so") ", \"expect\": [\"the answer is 42\"]}\n");
    parent p;
    parent_start(&p, "lead.md", "lead.jsonl", NULL, 0);
    const aw_run_result *r = parent_wait_ok(&p);
    assert_true(has_text(r, "helper said so"));
    /* the call's result is the report, untouched */
    assert_int_equal(p.seen.nresults, 1);
    assert_string_equal(p.seen.results[0], "agent__helper ok: the answer is 42");
    /* the nested run's events: its own session, the caller's as parent */
    assert_true(p.seen.events_nested > 0);
    assert_string_equal(p.seen.nested_parent, p.seen.top_session);
    assert_string_not_equal(p.seen.nested_session, p.seen.top_session);
    assert_string_equal(p.seen.nested_agent, "helper");
    assert_int_equal(p.seen.nested_depth, 1);
    assert_string_equal(p.seen.nested_completion, "success: the answer is 42");
    /* and its accounting rows carry both ids */
    char want_parent[80], want_session[80];
    snprintf(want_parent, sizeof want_parent, "\"parent_session_id\":\"%s\"", p.seen.top_session);
    snprintf(want_session, sizeof want_session, "\"session_id\":\"%s\"", p.seen.nested_session);
    size_t nested_rows = 0;
    for (size_t i = 0; i < p.seen.naccounting; i++)
        if (strstr(p.seen.accounting[i], "\"agent\":\"helper\"")) {
            nested_rows++;
            assert_non_null(strstr(p.seen.accounting[i], want_parent));
            assert_non_null(strstr(p.seen.accounting[i], want_session));
        } else {
            assert_null(strstr(p.seen.accounting[i], "parent_session_id"));
        }
    assert_true(nested_rows >= 2); /* its model request and its report */
    parent_free(&p);
}

/* A sub-agent with its own inputSchema: the caller sees that schema, and
 * the arguments, as JSON, are the sub-agent's task. */
static void test_input_schema_arguments_are_the_task(void **state)
{
    (void)state;
    aw_test_scratch_write("lead4.md", "---\nname: lead\nagents: [typed.md]\n---\n");
    aw_test_scratch_write("typed.md", "---\nname: typed\nmodel: replay:typed.jsonl\ntransport: native\n"
                                      "inputSchema:\n  type: object\n  properties:\n    topic: {type: string}\n"
                                      "    depth: {type: integer, description: how far to dig}\n"
                                      "  required: [topic]\n---\n");
    aw_test_scratch_write("typed.jsonl", NATIVE_FINAL("success", "typed ok") ", \"expect\": [\"{\\\"topic\\\":"
                                                                             "\\\"cats\\\",\\\"depth\\\":2}\"]}\n");
    aw_test_scratch_write("lead4.jsonl", "{\"text\": \"<ai-agent-" NONCE "-0001 tool=\\\"agent__typed\\\">{\\\"topic\\\": "
                                         "\\\"cats\\\", \\\"depth\\\": 2}</ai-agent-" NONCE "-0001>\", "
                                         "\"expect\": [\"how far to dig\"]}\n" XML_FINAL("done") "}\n");
    parent p;
    parent_start(&p, "lead4.md", "lead4.jsonl", NULL, 0);
    parent_wait_ok(&p);
    assert_string_equal(p.seen.results[0], "agent__typed ok: typed ok");
    parent_free(&p);
}

static void test_failing_sub_agent_is_a_failed_call_with_its_report(void **state)
{
    (void)state;
    aw_test_scratch_write("lead2.md", "---\nname: lead\nagents: [quitter.md]\n---\n");
    aw_test_scratch_write("quitter.md", "---\nmodel: replay:quitter.jsonl\ntransport: native\n---\n");
    aw_test_scratch_write("quitter.jsonl", NATIVE_FINAL("failure", "could not find it") "}\n");
    aw_test_scratch_write("lead2.jsonl", XML_CALL("0001", "agent__quitter", "find it") "}\n" XML_FINAL(
                                  "gave up") ", \"expect\": [\"could not find it\"]}\n");
    parent p;
    parent_start(&p, "lead2.md", "lead2.jsonl", NULL, 0);
    const aw_run_result *r = parent_wait(&p);
    assert_int_equal(r->status, AW_RUN_SUCCESS);
    assert_string_equal(p.seen.results[0], "agent__quitter failed: could not find it");
    parent_free(&p);

    /* a sub-agent whose model fails: its run's own words are the report */
    aw_test_scratch_write("lead3.md", "---\nname: lead\nagents: [broke.md]\n---\n");
    aw_test_scratch_write("broke.md", "---\nmodel: replay:broke.jsonl\ntransport: native\n---\n");
    aw_test_scratch_write("broke.jsonl", "{\"error\": \"the server fell over\", \"http_status\": 400}\n");
    aw_test_scratch_write("lead3.jsonl", XML_CALL("0001", "agent__broke", "go") "}\n" XML_FINAL("noted") "}\n");
    parent_start(&p, "lead3.md", "lead3.jsonl", NULL, 0);
    parent_wait(&p);
    if (strncmp(p.seen.results[0], "agent__broke failed: ", 21) || !strstr(p.seen.results[0], "the server fell over"))
        fail_msg("%s", p.seen.results[0]);
    parent_free(&p);
}

static void test_cycle_is_refused_naming_it(void **state)
{
    (void)state;
    aw_test_scratch_write("a.md", "---\nname: a\nagents: [b.md]\n---\n");
    aw_test_scratch_write("b.md", "---\nname: b\nmodel: replay:b.jsonl\ntransport: native\nagents: [a.md]\n---\n");
    /* b calls a: refused before anything runs; b reports what it got */
    aw_test_scratch_write("b.jsonl", NATIVE_CALL("c1", "agent__a", "{\\\"task\\\": \\\"again\\\"}") "}\n" NATIVE_FINAL(
                              "success", "no loop") ", \"expect\": [\"agent__a refused: a -> b -> a is a cycle\"]}\n");
    aw_test_scratch_write("a.jsonl", XML_CALL("0001", "agent__b", "go") "}\n" XML_FINAL("done") ", \"expect\": [\"no loop\"]}\n");
    parent p;
    parent_start(&p, "a.md", "a.jsonl", NULL, 0);
    parent_wait_ok(&p);
    assert_string_equal(p.seen.results[0], "agent__b ok: no loop");
    parent_free(&p);
}

static void test_depth_limit(void **state)
{
    (void)state;
    aw_test_scratch_write("l0.md", "---\nname: l0\nagents: [l1.md]\n---\n");
    aw_test_scratch_write("l1.md", "---\nname: l1\nmodel: replay:l1.jsonl\ntransport: native\nagents: [l2.md]\n---\n");
    aw_test_scratch_write("l2.md", "---\nname: l2\nmodel: replay:l2.jsonl\ntransport: native\nagents: [l3.md]\n---\n");
    aw_test_scratch_write("l3.md", "---\nname: l3\nmodel: replay:l3.jsonl\ntransport: native\n---\n");
    aw_test_scratch_write("l3.jsonl", NATIVE_FINAL("success", "deep") "}\n");
    aw_test_scratch_write("l2.jsonl", NATIVE_CALL("c", "agent__l3", "{\\\"task\\\": \\\"x\\\"}") "}\n" NATIVE_FINAL(
                               "success", "l2 done") ", \"expect\": [\"agent__l3 refused: sub-agents nest at most 2 "
                                                     "levels deep (--max-depth), and l0 -> l1 -> l2 -> l3 would be "
                                                     "level 3\"]}\n");
    aw_test_scratch_write("l1.jsonl", NATIVE_CALL("c", "agent__l2", "{\\\"task\\\": \\\"x\\\"}") "}\n" NATIVE_FINAL(
                               "success", "l1 done") ", \"expect\": [\"l2 done\"]}\n");
    aw_test_scratch_write("l0.jsonl", XML_CALL("0001", "agent__l1", "go") "}\n" XML_FINAL("top done") "}\n");
    parent p;
    parent_start(&p, "l0.md", "l0.jsonl", NULL, 2);
    const aw_run_result *r = parent_wait_ok(&p);
    assert_string_equal(p.seen.results[0], "agent__l1 ok: l1 done");
    parent_free(&p);

    /* the same tree with the default limit (3) goes all the way down */
    aw_test_scratch_write("l2.jsonl", NATIVE_CALL("c", "agent__l3", "{\\\"task\\\": \\\"x\\\"}") "}\n" NATIVE_FINAL(
                               "success", "l2 done") ", \"expect\": [\"deep\"]}\n");
    parent_start(&p, "l0.md", "l0.jsonl", NULL, 0);
    r = parent_wait_ok(&p);
    assert_int_equal(r->status, AW_RUN_SUCCESS);
    parent_free(&p);
}

/* The caller's command tool, inherited; a sub-agent whose tools exclude
 * it does not see it. */
static const char echo_tools[] =
    "[{\"name\": \"shout\", \"description\": \"Says it loudly.\", \"command\": [\"sh\", \"-c\", \"tr a-z A-Z\"]}]";

static void test_inherited_tools_through_the_filter(void **state)
{
    (void)state;
    aw_test_scratch_write("boss.md", "---\nname: boss\nagents: [user.md, picky.md]\n---\n");
    aw_test_scratch_write("user.md", "---\nname: user\nmodel: replay:user.jsonl\ntransport: native\n---\n");
    aw_test_scratch_write("picky.md", "---\nname: picky\nmodel: replay:picky.jsonl\ntransport: native\ntools: [other]\n---\n");
    /* user is offered shout, not its siblings: it calls both and reports */
    aw_test_scratch_write("user.jsonl", "{\"tool_calls\": [{\"id\": \"s\", \"name\": \"shout\", \"arguments\": \"{\\\"text\\\": "
                             "\\\"hello\\\"}\"}, {\"id\": \"p\", \"name\": \"agent__picky\", \"arguments\": "
                             "\"{\\\"task\\\": \\\"x\\\"}\"}]}\n" NATIVE_FINAL(
                                 "success", "shouted") ", \"expect\": [\"TEXT\", \"there is no tool named "
                                                       "'agent__picky'\"]}\n");
    aw_test_scratch_write("picky.jsonl", NATIVE_CALL("s", "shout", "{}") "}\n" NATIVE_FINAL(
                                  "success", "picky done") ", \"expect\": [\"there is no tool named 'shout'\"]}\n");
    aw_test_scratch_write("boss.jsonl", "{\"text\": \"<ai-agent-" NONCE "-0001 tool=\\\"agent__user\\\">{\\\"task\\\": "
                             "\\\"shout\\\"}</ai-agent-" NONCE "-0001><ai-agent-" NONCE "-0002 "
                             "tool=\\\"agent__picky\\\">{\\\"task\\\": \\\"try\\\"}</ai-agent-" NONCE "-0002>\"}\n" XML_FINAL(
                                 "both done") ", \"expect\": [\"shouted\", \"picky done\"]}\n");
    parent p;
    parent_start(&p, "boss.md", "boss.jsonl", echo_tools, 0);
    parent_wait_ok(&p);
    assert_int_equal(p.seen.nresults, 2);
    /* the inherited call is accounted to the sub-agent's session */
    bool found = false;
    for (size_t i = 0; i < p.seen.naccounting; i++)
        found = found || (strstr(p.seen.accounting[i], "\"command\":\"shout\"") &&
                          strstr(p.seen.accounting[i], "\"agent\":\"user\"") &&
                          strstr(p.seen.accounting[i], "\"status\":\"ok\""));
    assert_true(found);
    parent_free(&p);
}

/* ---- cancelling ---------------------------------------------------------------------------------- */

static pid_t read_pid(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    long pid = 0;
    if (fscanf(f, "%ld", &pid) != 1)
        pid = 0;
    fclose(f);
    return (pid_t)pid;
}

/* Whether pid exists: the tool is this process's child, which the
 * runtime reaps when it kills it, so a killed one is gone, not a zombie. */
static bool running(pid_t pid) { return kill(pid, 0) == 0; }

static void test_cancel_stops_the_nested_run_and_its_tools(void **state)
{
    (void)state;
    char tools[600];
    snprintf(tools, sizeof tools,
             "[{\"name\": \"slow\", \"description\": \"Takes its time.\", \"command\": [\"sh\", \"-c\", "
             "\"echo $$ > %s/slow.pid; exec sleep 60\"]}]",
             aw_test_scratch_dir());
    aw_test_scratch_write("waiter.md", "---\nname: waiter\nagents: [worker.md]\n---\n");
    aw_test_scratch_write("worker.md", "---\nname: worker\nmodel: replay:worker.jsonl\ntransport: native\n---\n");
    aw_test_scratch_write("worker.jsonl", NATIVE_CALL("s", "slow", "{}") "}\n" NATIVE_FINAL("success", "never") "}\n");
    aw_test_scratch_write("waiter.jsonl", XML_CALL("0001", "agent__worker", "wait") "}\n" XML_FINAL("never") "}\n");
    unlink(aw_test_scratch_path("slow.pid"));
    parent p;
    parent_start(&p, "waiter.md", "waiter.jsonl", tools, 0);
    /* until the nested run's tool is running */
    pid_t pid = 0;
    for (int i = 0; i < 600 && !(pid = read_pid(aw_test_scratch_path("slow.pid"))); i++)
        assert_int_equal(aw_loop_once(p.loop, 100), 0);
    assert_true(pid > 0);
    assert_true(running(pid));
    aw_run_cancel(p.run, "stopped by the test");
    const aw_run_result *r = parent_wait(&p);
    assert_int_equal(r->status, AW_RUN_FAILURE);
    assert_string_equal(r->stop_reason, "user_requested");
    /* the tool the nested run was running is gone */
    assert_false(running(pid));
    /* the nested run's records end with the reason */
    assert_string_equal(p.seen.nested_completion, "failure: the calling agent stopped this sub-agent");
    parent_free(&p);
}

static void box_ready(void *ctx) { *(bool *)ctx = true; }
static void never_done(void *ctx, const aw_tool_result *res)
{
    (void)ctx;
    (void)res;
    fail_msg("a cancelled call answered");
}

/* A toolbox freed while a sub-agent it runs is in a call of a tool it
 * inherits from that same toolbox: the sub-agent's call (the older) goes
 * first and takes the inherited call with it, which must still exist
 * then; the tool is killed. (A caller outside any run: caller NULL.) */
static void test_toolbox_freed_mid_inherited_call(void **state)
{
    (void)state;
    char tools[600];
    snprintf(tools, sizeof tools,
             "[{\"name\": \"slow\", \"command\": [\"sh\", \"-c\", \"echo $$ > %s/slow2.pid; exec sleep 60\"]}]",
             aw_test_scratch_dir());
    aw_test_scratch_write("owner.md", "---\nname: owner\nagents: [worker2.md]\n---\n");
    aw_test_scratch_write("worker2.md", "---\nname: worker2\nmodel: replay:worker2.jsonl\ntransport: native\n---\n");
    aw_test_scratch_write("worker2.jsonl", NATIVE_CALL("s", "slow", "{}") "}\n");
    unlink(aw_test_scratch_path("slow2.pid"));
    aw_error err;
    aw_loop *l = aw_loop_new(NULL, &err);
    aw_json_doc *doc = NULL;
    assert_int_equal(aw_json_parse(tools, strlen(tools), NULL, &doc, &err), 0);
    aw_toolbox *box = aw_toolbox_new(l, NULL);
    assert_int_equal(aw_toolbox_add(box, aw_command_tools_new(l, aw_json_doc_root(doc), NULL, NULL, &err)), 0);
    aw_agent_file *f = NULL;
    assert_int_equal(aw_agent_file_read(aw_test_scratch_path("owner.md"), NULL, &f, &err), 0);
    aw_agent_env env = {0};
    const char *models[] = {"replay:/nonexistent"};
    aw_tool_source *agents = aw_agent_tools_new(l, f, &env, models, 1, box, 0, NULL, 0, &err);
    assert_non_null(agents);
    assert_int_equal(aw_toolbox_add(box, agents), 0);
    bool ready = false;
    assert_int_equal(aw_toolbox_start(box, box_ready, &ready), 0);
    for (int i = 0; i < 100 && !ready; i++)
        assert_int_equal(aw_loop_once(l, 100), 0);
    assert_true(ready);
    aw_json_doc *args = NULL;
    assert_int_equal(aw_json_parse("{\"task\": \"wait\"}", 16, NULL, &args, &err), 0);
    aw_tool_call *call = NULL;
    assert_int_equal(aw_toolbox_call(box, (aw_text){"agent__worker2", 14}, aw_json_doc_root(args), 0, NULL, never_done,
                                     NULL, &call, &err),
                     0);
    pid_t pid = 0;
    for (int i = 0; i < 600 && !(pid = read_pid(aw_test_scratch_path("slow2.pid"))); i++)
        assert_int_equal(aw_loop_once(l, 100), 0);
    assert_true(pid > 0 && running(pid));
    aw_toolbox_free(box);
    assert_false(running(pid));
    aw_json_doc_free(args);
    aw_json_doc_free(doc);
    aw_agent_file_free(f);
    aw_loop_free(l);
}

/* A sub-agent whose file breaks is refused when its parent's source is
 * made, naming the file and the place. */
static void test_broken_sub_agent_file(void **state)
{
    (void)state;
    aw_test_scratch_write("top.md", "---\nagents: [broken.md]\n---\n");
    aw_test_scratch_write("broken.md", "---\nname: broken\nmaxTurns: many\n---\n");
    aw_error err;
    aw_loop *l = aw_loop_new(NULL, &err);
    aw_agent_file *f = NULL;
    assert_int_equal(aw_agent_file_read(aw_test_scratch_path("top.md"), NULL, &f, &err), 0);
    aw_agent_env env = {0};
    assert_null(aw_agent_tools_new(l, f, &env, NULL, 0, NULL, 0, NULL, 0, &err));
    assert_int_equal(err.code, AW_EVALID);
    assert_non_null(strstr(err.message, "broken.md:3:11: maxTurns must be a whole number"));
    aw_agent_file_free(f);
    /* two sub-agents of one name */
    aw_test_scratch_write("twins.md", "---\nagents: [t1.md, t2.md]\n---\n");
    aw_test_scratch_write("t1.md", "---\nname: twin\n---\n");
    aw_test_scratch_write("t2.md", "---\nname: twin\n---\n");
    assert_int_equal(aw_agent_file_read(aw_test_scratch_path("twins.md"), NULL, &f, &err), 0);
    assert_null(aw_agent_tools_new(l, f, &env, NULL, 0, NULL, 0, NULL, 0, &err));
    assert_non_null(strstr(err.message, "are both named agent__twin"));
    aw_agent_file_free(f);
    aw_loop_free(l);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nested_run_reports_to_its_caller),
        cmocka_unit_test(test_input_schema_arguments_are_the_task),
        cmocka_unit_test(test_failing_sub_agent_is_a_failed_call_with_its_report),
        cmocka_unit_test(test_cycle_is_refused_naming_it),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_inherited_tools_through_the_filter),
        cmocka_unit_test(test_cancel_stops_the_nested_run_and_its_tools),
        cmocka_unit_test(test_toolbox_freed_mid_inherited_call),
        cmocka_unit_test(test_broken_sub_agent_file),
    };
    return cmocka_run_group_tests(tests, aw_test_scratch_setup, aw_test_scratch_teardown);
}
