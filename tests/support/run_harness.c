#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <stddef.h>
#include <cmocka.h>

#include "agentwire/buf.h"
#include "run_harness.h"
#include "testutil.h"

/* ---- scripts ------------------------------------------------------------------------ */

rh_script *rh_script_new(void)
{
    rh_script *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s->doc = aw_json_doc_new(NULL);
    s->lines = aw_json_new_array(s->doc);
    assert_non_null(s->lines);
    aw_json_doc_set_root(s->doc, s->lines);
    return s;
}

void rh_script_free(rh_script *s)
{
    if (!s)
        return;
    aw_json_doc_free(s->doc);
    free(s);
}

/* The line just pushed (arrays copy what is pushed). */
static aw_json_value *last_line(rh_script *s)
{
    return aw_json_at_mut(s->lines, aw_json_count(s->lines) - 1);
}

aw_json_value *rh_say(rh_script *s, const char *text, ...)
{
    aw_json_value *line = aw_json_new_object(s->doc);
    assert_non_null(line);
    assert_int_equal(aw_json_object_set_string(s->doc, line, "text", text, strlen(text)), 0);
    va_list ap;
    va_start(ap, text);
    const char *e = va_arg(ap, const char *);
    if (e) {
        aw_json_value *list = aw_json_new_array(s->doc);
        for (; e; e = va_arg(ap, const char *)) {
            aw_json_value *v = aw_json_new_string(s->doc, e, strlen(e));
            assert_int_equal(aw_json_array_push(s->doc, list, v), 0);
        }
        assert_int_equal(aw_json_object_set(s->doc, line, "expect", 6, list), 0);
    }
    va_end(ap);
    assert_int_equal(aw_json_array_push(s->doc, s->lines, line), 0);
    return last_line(s);
}

void rh_set(rh_script *s, aw_json_value *line, const char *key, const char *json)
{
    aw_json_doc *d = NULL;
    aw_error err;
    if (aw_json_parse(json, strlen(json), NULL, &d, &err))
        fail_msg("rh_set %s: %s", key, err.message);
    aw_json_value *copy = aw_json_copy(s->doc, aw_json_doc_root(d));
    aw_json_doc_free(d);
    assert_int_equal(aw_json_object_set(s->doc, line, key, strlen(key), copy), 0);
}

aw_json_value *rh_raw(rh_script *s, const char *json)
{
    aw_json_doc *d = NULL;
    aw_error err;
    if (aw_json_parse(json, strlen(json), NULL, &d, &err))
        fail_msg("rh_raw: %s", err.message);
    aw_json_value *copy = aw_json_copy(s->doc, aw_json_doc_root(d));
    aw_json_doc_free(d);
    assert_int_equal(aw_json_array_push(s->doc, s->lines, copy), 0);
    return last_line(s);
}

char *rh_script_text(const rh_script *s)
{
    aw_buf b;
    aw_buf_init(&b, NULL);
    for (size_t i = 0; i < aw_json_count(s->lines); i++) {
        assert_int_equal(aw_json_write(aw_json_at(s->lines, i), NULL, &b, NULL), 0);
        assert_int_equal(aw_buf_putc(&b, '\n'), 0);
    }
    if (!b.data)
        assert_int_equal(aw_buf_reserve(&b, 1), 0);
    return b.data;
}

/* ---- files ----------------------------------------------------------------------------- */

const char *rh_path(rh *h, const char *name)
{
    char *p = h->paths[h->next_path++ % 8];
    size_t d = strlen(h->dir), n = strlen(name);
    assert_true(d + 1 + n < sizeof h->paths[0]);
    memcpy(p, h->dir, d);
    p[d] = '/';
    memcpy(p + d + 1, name, n + 1);
    return p;
}

void rh_write(rh *h, const char *name, const char *text)
{
    FILE *f = fopen(rh_path(h, name), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

char *rh_read(rh *h, const char *name, size_t *len)
{
    return aw_test_read_file(rh_path(h, name), len);
}

/* ---- the observer ------------------------------------------------------------------------ */

static void keep(rh *h, aw_json_value *list, const aw_json_value *v)
{
    aw_json_value *copy = aw_json_copy(h->seen, v);
    assert_non_null(copy);
    assert_int_equal(aw_json_array_push(h->seen, list, copy), 0);
}

static void seen_event(void *ctx, const aw_run_info *run, const aw_json_value *ev)
{
    (void)run;
    rh *h = ctx;
    keep(h, h->events, ev);
    if (h->on_event)
        h->on_event(h, ev);
}

static void seen_runtime(void *ctx, const aw_run_info *run, const aw_json_value *ev)
{
    (void)run;
    rh *h = ctx;
    keep(h, h->runtime, ev);
    if (h->on_runtime)
        h->on_runtime(h, ev);
}

static void seen_accounting(void *ctx, const aw_run_info *run, const aw_json_value *row)
{
    (void)run;
    rh *h = ctx;
    keep(h, h->accounting, row);
}

static void seen_reply(void *ctx, const aw_run_info *run, const aw_json_value *reply)
{
    (void)run;
    rh *h = ctx;
    keep(h, h->replies, reply);
}

static int seen_step(void *ctx, const aw_run_info *run, const aw_run_step *step, aw_error *err)
{
    (void)run;
    (void)err;
    rh *h = ctx;
    aw_json_value *o = aw_json_new_object(h->seen);
    assert_non_null(o);
    assert_int_equal(aw_json_object_set_int(h->seen, o, "turn", step->turn), 0);
    assert_int_equal(aw_json_object_set_bool(h->seen, o, "final", step->final), 0);
    assert_int_equal(aw_json_object_set_bool(h->seen, o, "partial", step->partial), 0);
    if (step->stop_reason)
        assert_int_equal(aw_json_object_set_string(h->seen, o, "stop_reason", step->stop_reason,
                                                   strlen(step->stop_reason)),
                         0);
    assert_int_equal(aw_json_object_set_int(h->seen, o, "events", (int64_t)aw_json_count(step->events)), 0);
    assert_int_equal(aw_json_object_set_int(h->seen, o, "accounting", (int64_t)aw_json_count(step->accounting)), 0);
    /* the permanent chat messages the step added */
    const aw_json_value *chat = aw_json_get(step->resume, "chat");
    assert_int_equal(aw_json_object_set(h->seen, o, "chat", 4, aw_json_copy(h->seen, chat)), 0);
    assert_int_equal(aw_json_array_push(h->seen, h->steps, o), 0);
    return 0;
}

static void seen_log(void *ctx, const aw_run_info *run, int level, const char *msg)
{
    (void)run;
    (void)level;
    rh *h = ctx;
    aw_json_value *s = aw_json_new_string(h->seen, msg, strlen(msg));
    assert_int_equal(aw_json_array_push(h->seen, h->logs, s), 0);
}

static void asked(void *ctx, aw_run *run, const char *question, size_t len)
{
    (void)run;
    rh *h = ctx;
    if (h->on_ask)
        h->on_ask(h, question, len);
}

/* ---- life ---------------------------------------------------------------------------------- */

int rh_init(rh *h, const aw_allocator *alloc)
{
    memset(h, 0, sizeof *h);
    snprintf(h->dir, sizeof h->dir, "%s/aw-run-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(h->dir));
    h->alloc = alloc;
    h->seen = aw_json_doc_new(NULL);
    aw_json_value *root = aw_json_new_object(h->seen);
    aw_json_doc_set_root(h->seen, root);
    const char *names[] = {"events", "runtime", "accounting", "steps", "logs", "replies"};
    aw_json_value **lists[] = {&h->events, &h->runtime, &h->accounting, &h->steps, &h->logs, &h->replies};
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(aw_json_object_set(h->seen, root, names[i], strlen(names[i]), aw_json_new_array(h->seen)),
                         0);
    /* looked up once every member is in: the member array no longer moves */
    for (size_t i = 0; i < 6; i++)
        *lists[i] = aw_json_get_mut(root, names[i]);
    h->loop = aw_loop_new(alloc, &h->err);
    return h->loop ? 0 : AW_ENOMEM;
}

void rh_free(rh *h)
{
    aw_run_free(h->run);
    aw_toolbox_free(h->box);
    for (size_t i = 0; i < h->nmodels; i++)
        aw_provider_free(h->models[i]);
    aw_records_free(h->records);
    aw_sink_free(h->sink);
    aw_loop_free(h->loop);
    aw_json_doc_free(h->seen);
    aw_json_doc_free(h->json);
    free(h->content);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", h->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", h->dir);
    memset(h, 0, sizeof *h);
}

void rh_start(rh *h, const char *tools_json)
{
    assert_int_equal(rh_init(h, NULL), 0);
    if (tools_json && rh_tools(h, tools_json))
        fail_msg("rh_tools: %s", h->err.message);
}

void rh_ready(rh *h, rh_script *s)
{
    if (rh_model(h, "model.jsonl", s))
        fail_msg("rh_model: %s", h->err.message);
    rh_config(h);
}

int rh_model(rh *h, const char *name, rh_script *s)
{
    char *text = rh_script_text(s);
    rh_script_free(s);
    rh_write(h, name, text);
    free(text);
    char spec[600];
    snprintf(spec, sizeof spec, "replay:%s", rh_path(h, name));
    aw_provider_config pc = {.spec = spec, .alloc = h->alloc};
    if (h->records) { /* --trace */
        pc.trace = aw_records_trace;
        pc.trace_ctx = h->records;
    }
    assert_true(h->nmodels < 4);
    aw_provider *p = aw_provider_new(h->loop, &pc, &h->err);
    if (!p)
        return h->err.code ? h->err.code : AW_ENOMEM;
    h->models[h->nmodels++] = p;
    return 0;
}

int rh_tools(rh *h, const char *json)
{
    aw_json_doc *d = NULL;
    aw_error err;
    if (aw_json_parse(json, strlen(json), NULL, &d, &err))
        fail_msg("rh_tools: %s", err.message);
    aw_json_value *defs = (aw_json_value *)aw_json_doc_root(d);
    for (size_t i = 0; i < aw_json_count(defs); i++) {
        aw_json_value *t = aw_json_at_mut(defs, i);
        if (!aw_json_get(t, "cwd"))
            assert_int_equal(aw_json_object_set_string(d, t, "cwd", h->dir, strlen(h->dir)), 0);
    }
    aw_tool_source *src = aw_command_tools_new(h->loop, defs, h->dir, h->alloc, &h->err);
    aw_json_doc_free(d);
    if (!src)
        return h->err.code ? h->err.code : AW_ENOMEM;
    if (!h->box && !(h->box = aw_toolbox_new(h->loop, h->alloc))) {
        src->ops->destroy(src);
        return AW_ENOMEM;
    }
    return aw_toolbox_add(h->box, src);
}

int rh_records(rh *h, bool stream_events)
{
    /* paths on the stack: the records must keep their own copies */
    char thread[512], accounting[512], trace[512], record[512];
    snprintf(thread, sizeof thread, "%s", rh_path(h, "thread.xml"));
    snprintf(accounting, sizeof accounting, "%s", rh_path(h, "accounting.jsonl"));
    snprintf(trace, sizeof trace, "%s", rh_path(h, "trace.txt"));
    snprintf(record, sizeof record, "%s", rh_path(h, "record.jsonl"));
    h->sink = aw_sink_open(h->loop, rh_path(h, "events.jsonl"), &(aw_sink_options){.alloc = h->alloc}, &h->err);
    if (!h->sink)
        return h->err.code;
    aw_records_config rc = {.thread_path = thread,
                            .accounting_path = accounting,
                            .trace_path = trace,
                            .record_path = record,
                            .sinks = &h->sink,
                            .sink_count = 1,
                            .stream_events = stream_events,
                            .alloc = h->alloc};
    h->records = aw_records_new(&rc, &h->err);
    return h->records ? 0 : h->err.code;
}

int rh_records_close(rh *h)
{
    return aw_records_close(h->records, &h->err);
}

void rh_config(rh *h)
{
    memset(&h->cfg, 0, sizeof h->cfg);
    size_t n = 0;
    if (h->records)
        h->observers[n++] = aw_records_observer(h->records);
    h->observers[n++] = (aw_run_observer){.ctx = h,
                                          .on_event = seen_event,
                                          .on_runtime = seen_runtime,
                                          .on_accounting = seen_accounting,
                                          .on_reply = seen_reply,
                                          .on_step = seen_step,
                                          .on_log = seen_log};
    h->cfg.models = h->models;
    h->cfg.model_count = h->nmodels;
    h->cfg.tools = h->box;
    h->cfg.transport = AW_TRANSPORT_XML;
    h->cfg.context = AW_CONTEXT_MESSAGES;
    h->cfg.nonce = RH_NONCE;
    h->cfg.task = "the task";
    h->cfg.observers = h->observers;
    h->cfg.observer_count = n;
    h->cfg.budgets.retry_base_ms = 2;
    h->cfg.ask = asked;
    h->cfg.ask_ctx = h;
    h->cfg.alloc = h->alloc;
}

static void run_done(void *ctx, aw_run *run, const aw_run_result *res)
{
    (void)run;
    rh *h = ctx;
    h->done = true;
    h->status = res->status;
    h->content = malloc(res->content.len + 1);
    assert_non_null(h->content);
    memcpy(h->content, res->content.ptr, res->content.len);
    h->content[res->content.len] = 0;
    h->content_len = res->content.len;
    snprintf(h->stop_reason, sizeof h->stop_reason, "%s", res->stop_reason ? res->stop_reason : "");
    h->synthesized = res->synthesized;
    h->turns = res->turns;
    if (res->json) {
        h->json = aw_json_doc_new(NULL);
        aw_json_doc_set_root(h->json, aw_json_copy(h->json, res->json));
    }
}

void rh_serve(rh *h, int64_t ms)
{
    int64_t end = aw_loop_clock() + ms;
    for (int64_t now = aw_loop_clock(); now < end; now = aw_loop_clock())
        assert_int_equal(aw_loop_once(h->loop, end - now), 0);
}

int rh_go(rh *h, int64_t limit_ms)
{
    h->run = aw_run_new(h->loop, &h->cfg, &h->err);
    if (!h->run)
        return h->err.code ? h->err.code : AW_ENOMEM;
    int rc = aw_run_start(h->run, run_done, h);
    if (rc)
        return rc;
    int64_t end = aw_loop_clock() + limit_ms;
    while (!h->done) {
        int64_t now = aw_loop_clock();
        if (now >= end) {
            /* what the run said, to see where it stopped */
            for (size_t i = 0; i < aw_json_count(h->logs); i++)
                print_message("run log: %s\n", aw_json_at(h->logs, i)->u.str.ptr);
            char *rt = rh_json(h->runtime);
            print_message("runtime events: %.2000s\n", rt);
            free(rt);
            aw_run_cancel(h->run, "the test's time limit passed");
            for (int i = 0; i < 100 && !h->done; i++)
                aw_loop_once(h->loop, 10);
            return AW_ESTOP;
        }
        /* the loop fails only when it cannot grow its poll set: the run
         * is then given up, as agentwire run does */
        rc = aw_loop_once(h->loop, end - now < 50 ? end - now : 50);
        if (rc)
            return rc;
    }
    return 0;
}

void rh_assert_status(rh *h, aw_run_status want)
{
    static const char *const names[] = {"success", "failure", "partial"};
    if (!h->done)
        fail_msg("the run is not done");
    if (h->status != want)
        fail_msg("the run ended with %s (%s), not %s: %.600s", names[h->status], h->stop_reason, names[want],
                 h->content);
}

/* ---- looking ----------------------------------------------------------------------------------- */

const char *rh_str(const aw_json_value *o, const char *key)
{
    const aw_json_value *v = aw_json_get(o, key);
    return aw_json_is_string(v) ? v->u.str.ptr : NULL;
}

double rh_num(const aw_json_value *o, const char *key)
{
    const aw_json_value *v = aw_json_get(o, key);
    return aw_json_is_number(v) ? v->u.num.d : -1;
}

static bool matches(const aw_json_value *o, const char *key, const char *value)
{
    const char *s = rh_str(o, key);
    return s && strcmp(s, value) == 0;
}

size_t rh_count(const aw_json_value *list, const char *key, const char *value)
{
    size_t n = 0;
    for (size_t i = 0; i < aw_json_count(list); i++)
        n += matches(aw_json_at(list, i), key, value);
    return n;
}

const aw_json_value *rh_find(const aw_json_value *list, const char *key, const char *value, size_t nth)
{
    for (size_t i = 0; i < aw_json_count(list); i++)
        if (matches(aw_json_at(list, i), key, value) && nth-- == 0)
            return aw_json_at(list, i);
    return NULL;
}

char *rh_json(const aw_json_value *v) { return aw_test_write_json(v, 0, NULL); }

bool rh_any_holds(const aw_json_value *list, const char *needle)
{
    for (size_t i = 0; i < aw_json_count(list); i++) {
        const aw_json_value *v = aw_json_at(list, i);
        bool hit;
        if (aw_json_is_string(v)) {
            hit = strstr(v->u.str.ptr, needle) != NULL;
        } else {
            char *s = rh_json(v);
            hit = strstr(s, needle) != NULL;
            free(s);
        }
        if (hit)
            return true;
    }
    return false;
}

bool rh_pid_alive(long pid)
{
    if (pid <= 0)
        return false;
    if (kill((pid_t)pid, 0) != 0)
        return errno != ESRCH;
    /* a zombie still answers kill: look at its state */
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *close = strrchr(buf, ')');
    return !(close && close[1] == ' ' && close[2] == 'Z');
}

bool rh_pid_gone(long pid, int64_t ms)
{
    int64_t end = aw_loop_clock() + ms;
    while (rh_pid_alive(pid)) {
        if (aw_loop_clock() >= end)
            return false;
        usleep(5000);
    }
    return true;
}
