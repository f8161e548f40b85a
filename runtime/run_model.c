/* A turn's model request: built from the history (never re-serialized:
 * the chat only grows, the thread is appended to), sent to the current
 * model, its reply fed to the extractor as it streams. A failed request is
 * retried with exponential backoff and jitter (honouring Retry-After) when
 * the failure is one that passes, then handed to the next fallback model;
 * what a failed attempt streamed is dropped before the next one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "internal/rt_util.h"
#include "internal/run_impl.h"

#define RETRY_CAP_MS 30000
#define DEFAULT_MAX_CALLS 10 /* as the transport's */

void aw__run_reset_reply(aw_run *r)
{
    aw_extractor_free(r->x);
    r->x = NULL;
    aw_buf_clear(&r->reply);
    aw_buf_clear(&r->visible);
    aw_buf_clear(&r->feedback);
    aw_json_doc_free(r->native_doc);
    r->native_doc = NULL;
    r->native = NULL;
    r->rejections = 0;
    r->rejections_answered = 0;
    r->native_tool_calls = 0;
    r->reply_failed = false;
    r->first_byte_ms = 0;
    memset(&r->turn_usage, 0, sizeof r->turn_usage);
    r->turn_usage.cost_usd = -1;
    r->turn_has_usage = false;
    r->stop_reason[0] = 0;
    aw__run_free_calls(r);
    aw_buf_clear(&r->final.content);
    aw_json_doc_free(r->final.json);
    r->final.json = NULL;
    r->final.have = false;
}

void aw__run_cancel_request(aw_run *r)
{
    aw_model_call_cancel(r->mcall);
    r->mcall = NULL;
    aw_timer_free(r->retry_timer);
    r->retry_timer = NULL;
}

/* ---- the extractor's events --------------------------------------------------- */

static int stream_chunk(aw_run *r, const char *p, size_t n)
{
    aw_json_doc *d = aw_json_doc_new(r->alloc);
    if (!d)
        return AW_ENOMEM;
    aw_json_value *ev = aw_json_new_object(d);
    int rc = !ev || aw_json_object_set_string(d, ev, "event", "stream_chunk", 12) ||
                     aw_json_object_set_string(d, ev, "chunk", p, n) ||
                     aw_json_object_set_bool(d, ev, "is_complete", false) ||
                     aw_json_object_set_int(d, ev, "tokens_delta", (int64_t)((n + 3) / 4))
                 ? AW_ENOMEM
                 : aw__emit_runtime(r, d, ev);
    aw_json_doc_free(d);
    return rc;
}

static unsigned max_calls(const aw_run *r)
{
    return r->cfg.budgets.max_calls_per_turn ? r->cfg.budgets.max_calls_per_turn : DEFAULT_MAX_CALLS;
}

static int extracted(aw_run *r, const aw_x_event *ev)
{
    switch (ev->kind) {
    case AW_X_TEXT:
        if (aw_buf_append(&r->visible, ev->text.ptr, ev->text.len))
            return AW_ENOMEM;
        return stream_chunk(r, ev->text.ptr, ev->text.len);
    case AW_X_CALL: {
        const aw_x_call *c = ev->call;
        call_kind kind = CALL_TOOL;
        if (c->tool.len == strlen(AW_TOOL_PROGRESS) && !memcmp(c->tool.ptr, AW_TOOL_PROGRESS, c->tool.len))
            kind = CALL_PROGRESS;
        else if (c->tool.len == strlen(AW_TOOL_ASK_HUMAN) && !memcmp(c->tool.ptr, AW_TOOL_ASK_HUMAN, c->tool.len))
            kind = CALL_ASK;
        else if (c->tool.len == strlen(AW_TOOL_FINAL_REPORT) && !memcmp(c->tool.ptr, AW_TOOL_FINAL_REPORT, c->tool.len))
            kind = CALL_FINAL;
        bool native = strcmp(c->source, "native") == 0;
        aw_text id = {"", 0};
        if (native) {
            /* A native call keeps its id (the API pairs results with it):
             * the calls go to the extractor one at a time, see on_done. */
            const aw_json_value *idv = aw_json_get(aw_json_at(r->native, r->native_current), "id");
            if (aw_json_is_string(idv))
                id = (aw_text){idv->u.str.ptr, idv->u.str.len};
            r->native_answered = true;
        }
        /* A call recovered from the text (a server that did not parse its
         * model's dialect) stands for the native call it should have been:
         * answered by a tool message, counted like one. */
        bool recovered = strcmp(c->source, "recovered") == 0;
        run_call *added = aw__run_add_call(r, kind, c->tool, id, c->slot, c->source, c->args, native || recovered);
        if (!added)
            return AW_ENOMEM;
        added->recovered = recovered;
        added->dialect = c->dialect;
        /* The slots bound xml calls; native ones are counted here. */
        if ((native || recovered) && (kind == CALL_TOOL || kind == CALL_ASK) &&
            ++r->native_tool_calls > max_calls(r)) {
            added->kind = CALL_REJECTED;
            if (aw_buf_printf(&added->output, "(tool failed: not run: more than %u tool calls in one turn)",
                              max_calls(r)))
                return AW_ENOMEM;
        }
        return 0;
    }
    case AW_X_FINAL:
        return aw__final_from_xml(r, ev->final);
    case AW_X_REJECTED:
        r->rejections++;
        aw_buf_clear(&r->last_rejection);
        if (aw_buf_append_str(&r->last_rejection, ev->rejection->message))
            return AW_ENOMEM;
        aw__run_log(r, AW_LOG_INFO, "turn %u: rejected %s%.*s: %s", r->turn, ev->rejection->tool.len ? "call of " : "tag",
                    (int)ev->rejection->tool.len, ev->rejection->tool.ptr, ev->rejection->message);
        return 0;
    default:
        return 0;
    }
}

/* An event the run cannot keep (out of memory) stops the extractor, which
 * then reports only that it was stopped: the flag tells the rest. */
static int on_extracted(void *ctx, const aw_x_event *ev)
{
    aw_run *r = ctx;
    int rc = extracted(r, ev);
    if (rc)
        r->reply_failed = true;
    return rc;
}

/* ---- the provider's callbacks ----------------------------------------------------- */

/* The reply cannot be kept (out of memory): stop the request. A stop asked
 * from a callback ends the call without on_done, and the provider frees it
 * once it has unwound, so the run forgets it now and fails from the loop. */
static int reply_failed(aw_run *r)
{
    r->reply_failed = true;
    r->mcall = NULL;
    aw__run_wake(r, WAKE_REPLY_FAILED);
    return 1;
}

static int on_text(void *ctx, const char *p, size_t n)
{
    aw_run *r = ctx;
    if (!r->first_byte_ms)
        r->first_byte_ms = aw__run_now(r);
    if (aw_buf_append(&r->reply, p, n))
        goto oom;
    if (r->x) {
        aw_error err;
        int rc = aw_extractor_feed(r->x, p, n, on_extracted, r, &err);
        if (rc) {
            if (rc == AW_ENOMEM || r->reply_failed)
                goto oom;
            aw__run_log(r, AW_LOG_ERROR, "turn %u: %s", r->turn, err.message);
        }
    } else {
        if (aw_buf_append(&r->visible, p, n) || stream_chunk(r, p, n))
            goto oom;
    }
    aw__emit_progress(r, "streaming");
    return 0;
oom:
    return reply_failed(r);
}

static int on_tool_call(void *ctx, const aw_chat_call *call)
{
    aw_run *r = ctx;
    if (!r->native_doc) {
        r->native_doc = aw_json_doc_new(r->alloc);
        r->native = r->native_doc ? aw_json_new_array(r->native_doc) : NULL;
        if (!r->native)
            goto oom;
        aw_json_doc_set_root(r->native_doc, r->native);
    }
    aw_json_doc *d = r->native_doc;
    aw_json_value *c = aw_json_new_object(d), *f = aw_json_new_object(d);
    char id[48];
    aw_text idt = call->id;
    if (!idt.len) {
        /* Some servers send calls without ids; the API's pairing needs one. */
        snprintf(id, sizeof id, "call_%u_%zu", r->turn, aw_json_count(r->native));
        idt = (aw_text){id, strlen(id)};
    }
    if (!c || !f || aw_json_object_set_string(d, f, "name", call->name.ptr, call->name.len) ||
        aw_json_object_set_string(d, f, "arguments", call->arguments.ptr, call->arguments.len) ||
        aw_json_object_set_string(d, c, "id", idt.ptr, idt.len) || aw_json_object_set(d, c, "function", 8, f) ||
        aw_json_array_push(d, r->native, c))
        goto oom;
    return 0;
oom:
    return reply_failed(r);
}

static void on_done(void *ctx, const aw_model_result *res);

static int64_t backoff_ms(const aw_run *r, const aw_model_result *res)
{
    int64_t base = r->cfg.budgets.retry_base_ms > 0 ? r->cfg.budgets.retry_base_ms : 1000;
    int64_t ms = base;
    for (unsigned i = 1; i < r->attempt && ms < RETRY_CAP_MS; i++)
        ms *= 2;
    if (ms > RETRY_CAP_MS)
        ms = RETRY_CAP_MS;
    /* Full jitter on the upper half, so retries of many runs spread out. */
    uint32_t rnd = 0;
    if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != sizeof rnd)
        rnd = (uint32_t)aw_rt_wall_ms();
    ms = ms / 2 + (int64_t)(rnd % (uint32_t)(ms / 2 + 1));
    if (res->retry_after_ms > ms)
        ms = res->retry_after_ms;
    return ms;
}

static void retry_now(void *ctx)
{
    aw_run *r = ctx;
    aw_timer_free(r->retry_timer);
    r->retry_timer = NULL;
    if (aw__run_send(r))
        aw__run_fail(r, "error", "could not send the request: out of memory");
}

/* The wait before retrying a failed request, or -1 when it is not retried. */
static int64_t retry_wait(const aw_run *r, const aw_model_result *res)
{
    unsigned max = r->cfg.budgets.no_retries ? 0 : r->cfg.budgets.max_retries ? r->cfg.budgets.max_retries : 3;
    return res->code && res->retryable && r->attempt <= max ? backoff_ms(r, res) : -1;
}

/* retry_in: the wait before the retry this failure gets (-1: none), so
 * the accounting shows the backoff and Retry-After decisions. */
static int accounting_request(aw_run *r, const aw_model_result *res, int64_t retry_in)
{
    aw_json_doc *d = aw_json_doc_new(r->alloc);
    if (!d)
        return AW_ENOMEM;
    aw_json_value *row = aw_json_new_object(d);
    aw_provider *p = r->cfg.models[r->model_index];
    const char *status = res->code ? "failed" : "ok";
    int64_t now = aw__run_now(r);
    bool bad = !row || aw_json_object_set_string(d, row, "kind", "model", 5) ||
               aw_json_object_set_string(d, row, "provider", aw_provider_kind(p), strlen(aw_provider_kind(p))) ||
               aw_json_object_set_string(d, row, "model", aw_provider_model(p), strlen(aw_provider_model(p))) ||
               aw_json_object_set_string(d, row, "status", status, strlen(status)) ||
               aw_json_object_set_int(d, row, "attempt", r->attempt) ||
               aw_json_object_set_int(d, row, "latency_ms", now - r->request_started_ms) ||
               (r->first_byte_ms &&
                aw_json_object_set_int(d, row, "first_byte_ms", r->first_byte_ms - r->request_started_ms)) ||
               aw_json_object_set_int(d, row, "input_tokens", res->usage.input_tokens) ||
               aw_json_object_set_int(d, row, "output_tokens", res->usage.output_tokens) ||
               aw_json_object_set_int(d, row, "cache_read_tokens", res->usage.cache_read_tokens) ||
               aw_json_object_set_int(d, row, "cache_write_tokens", res->usage.cache_write_tokens) ||
               aw_json_object_set_int(d, row, "reasoning_tokens", res->usage.reasoning_tokens) ||
               (res->usage.cost_usd >= 0 && aw_json_object_set_number(d, row, "cost_usd", res->usage.cost_usd)) ||
               (res->stop_reason.len &&
                aw_json_object_set_string(d, row, "stop_reason", res->stop_reason.ptr, res->stop_reason.len)) ||
               (res->http_status && aw_json_object_set_int(d, row, "http_status", res->http_status)) ||
               (res->error && aw_json_object_set_string(d, row, "error", res->error, strlen(res->error))) ||
               (retry_in >= 0 && aw_json_object_set_int(d, row, "retry_in_ms", retry_in)) ||
               aw_json_object_set_int(d, row, "response_bytes", (int64_t)r->reply.len);
    int rc = bad ? AW_ENOMEM : aw__emit_accounting(r, d, row);
    aw_json_doc_free(d);
    return rc;
}

/* --record: the reply as replay:FILE plays it. A reply that cannot be
 * written ends the run: a recording with a hole would not play back. */
static int report_reply(aw_run *r, const aw_model_result *res)
{
    bool any = false;
    for (size_t i = 0; i < r->cfg.observer_count && !any; i++)
        any = r->observers[i].on_reply != NULL;
    if (!any)
        return 0;
    aw_json_doc *d = aw_json_doc_new(r->alloc);
    aw_json_value *o = d ? aw_json_new_object(d) : NULL;
    bool bad = !o || aw_json_object_set_string(d, o, "text", r->reply.data ? r->reply.data : "", r->reply.len);
    if (!bad && r->native) {
        aw_json_value *calls = aw_json_new_array(d);
        bad = !calls;
        for (size_t i = 0; !bad && i < aw_json_count(r->native); i++) {
            const aw_json_value *n = aw_json_at(r->native, i);
            const aw_json_value *f = aw_json_get(n, "function");
            aw_json_value *c = aw_json_new_object(d);
            bad = !c || aw_json_object_set(d, c, "id", 2, aw_json_get(n, "id")) ||
                  aw_json_object_set(d, c, "name", 4, aw_json_get(f, "name")) ||
                  aw_json_object_set(d, c, "arguments", 9, aw_json_get(f, "arguments")) ||
                  aw_json_array_push(d, calls, c);
        }
        bad = bad || aw_json_object_set(d, o, "tool_calls", 10, calls);
    }
    if (!bad && res->has_usage) {
        aw_json_value *u = aw__usage_json(d, &res->usage);
        bad = !u || aw_json_object_set(d, o, "usage", 5, u);
    }
    if (!bad && res->stop_reason.len)
        bad = aw_json_object_set_string(d, o, "stop_reason", res->stop_reason.ptr, res->stop_reason.len);
    for (size_t i = 0; !bad && i < r->cfg.observer_count; i++)
        if (r->observers[i].on_reply)
            r->observers[i].on_reply(r->observers[i].ctx, &r->info, o);
    aw_json_doc_free(d);
    return bad ? AW_ENOMEM : 0;
}

int64_t aw__add_count(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b)
        return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b)
        return INT64_MIN;
    return a + b;
}

static void add_usage(aw_model_usage *into, const aw_model_usage *u)
{
    into->input_tokens = aw__add_count(into->input_tokens, u->input_tokens);
    into->output_tokens = aw__add_count(into->output_tokens, u->output_tokens);
    into->cache_read_tokens = aw__add_count(into->cache_read_tokens, u->cache_read_tokens);
    into->cache_write_tokens = aw__add_count(into->cache_write_tokens, u->cache_write_tokens);
    into->reasoning_tokens = aw__add_count(into->reasoning_tokens, u->reasoning_tokens);
    if (u->cost_usd >= 0)
        into->cost_usd = (into->cost_usd < 0 ? 0 : into->cost_usd) + u->cost_usd;
}

/* A failed request: retry, fall back, or end the run. */
static void request_failed(aw_run *r, const aw_model_result *res, int64_t wait)
{
    unsigned max = r->cfg.budgets.no_retries ? 0 : r->cfg.budgets.max_retries ? r->cfg.budgets.max_retries : 3;
    if (wait >= 0) {
        aw__run_log(r, AW_LOG_WARN, "%s (attempt %u of %u); retrying in %.1f s", res->error, r->attempt, max + 1,
                    (double)wait / 1000.0);
        aw__run_reset_reply(r);
        r->retry_timer = aw_loop_timer(r->loop, wait, retry_now, r);
        if (!r->retry_timer)
            aw__run_fail(r, "error", "out of memory");
        return;
    }
    if (r->model_index + 1 < r->cfg.model_count) {
        aw_provider *next = r->cfg.models[r->model_index + 1];
        aw__run_log(r, AW_LOG_WARN, "%s; falling back to %s%s%s", res->error, aw_provider_kind(next),
                    aw_provider_model(next)[0] ? ":" : "", aw_provider_model(next));
        r->model_index++;
        r->attempt = 0;
        aw__run_reset_reply(r);
        r->info.provider = aw_provider_kind(next);
        r->info.model = aw_provider_model(next);
        r->retry_timer = aw_loop_timer(r->loop, 0, retry_now, r);
        if (!r->retry_timer)
            aw__run_fail(r, "error", "out of memory");
        return;
    }
    aw__run_fail(r, res->retryable ? "retry_limit" : "error", "the model request failed: %s", res->error);
}

static void drop_recovered(aw_run *r)
{
    size_t k = 0, dropped = 0;
    for (size_t i = 0; i < r->ncalls; i++) {
        if (r->calls[i].recovered) {
            aw__run_free_call(r, &r->calls[i]);
            dropped++;
            continue;
        }
        r->calls[k++] = r->calls[i];
    }
    r->ncalls = k;
    if (dropped) {
        r->native_tool_calls -= dropped < r->native_tool_calls ? dropped : r->native_tool_calls;
        aw__run_log(r, AW_LOG_INFO, "turn %u: %zu call%s in the text left aside: the reply made native calls", r->turn,
                    dropped, dropped == 1 ? "" : "s");
    }
}

/* Native call i through the extractor alone, so that its id is known when
 * it is accepted, and a refused one still gets the answer the API needs
 * (every call of an assistant message is answered by a tool message). */
static int native_call(aw_run *r, size_t i, aw_error *err)
{
    aw_json_doc *one = aw_json_doc_new(r->alloc);
    aw_json_value *list = one ? aw_json_new_array(one) : NULL;
    aw_json_value *copy = list ? aw_json_copy(one, aw_json_at(r->native, i)) : NULL;
    if (!copy || aw_json_array_push(one, list, copy)) {
        aw_json_doc_free(one);
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    }
    r->native_current = i;
    r->native_answered = false;
    size_t before = r->rejections;
    int rc = aw_extractor_native_calls(r->x, list, on_extracted, r, err);
    aw_json_doc_free(one);
    if (rc || r->native_answered)
        return rc;
    const aw_json_value *n = aw_json_at(r->native, i);
    const aw_json_value *idv = aw_json_get(n, "id");
    const aw_json_value *nm = aw_json_get(aw_json_get(n, "function"), "name");
    aw_text id = aw_json_is_string(idv) ? (aw_text){idv->u.str.ptr, idv->u.str.len} : (aw_text){"", 0};
    aw_text name = aw_json_is_string(nm) ? (aw_text){nm->u.str.ptr, nm->u.str.len} : (aw_text){"", 0};
    /* The records show the arguments as the model wrote them, when they
     * are a JSON object at all (a refused call is often one that is). */
    const aw_json_value *text = aw_json_get(aw_json_get(n, "function"), "arguments");
    aw_json_doc *args = NULL;
    aw_json_read_options ro = {.alloc = r->alloc};
    if (aw_json_is_string(text) &&
        aw_json_parse(text->u.str.ptr, text->u.str.len, &ro, &args, NULL) == AW_ENOMEM)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    const aw_json_value *obj = args && aw_json_is_object(aw_json_doc_root(args)) ? aw_json_doc_root(args) : NULL;
    run_call *c = aw__run_add_call(r, CALL_REJECTED, name, id, (aw_text){"", 0}, "native", obj, true);
    aw_json_doc_free(args);
    if (!c)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    /* its tool message carries the reason: no TURN-FAILED line for it */
    r->rejections_answered += r->rejections - before;
    const char *why = r->rejections > before && r->last_rejection.len ? r->last_rejection.data : "the call was refused";
    if (aw_buf_append_str(&c->output, why))
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    return 0;
}

static void on_done(void *ctx, const aw_model_result *res)
{
    aw_run *r = ctx;
    r->mcall = NULL;
    /* a request that cannot be accounted for ends the run: the records
     * would say less than what happened */
    int64_t retry_in = retry_wait(r, res);
    if (accounting_request(r, res, retry_in)) {
        aw__run_fail(r, "error", "turn %u: out of memory recording the model request", r->turn);
        return;
    }
    if (res->has_usage) {
        add_usage(&r->usage, &res->usage);
        r->usage_known = true;
        r->turn_usage = res->usage;
        r->turn_has_usage = true;
        r->context_base_tokens = aw__add_count(res->usage.input_tokens, res->usage.output_tokens);
        r->context_base_bytes = r->chat ? aw_chat_bytes(r->chat) + r->reply.len : r->thread.len + r->reply.len;
    }
    if (res->code) {
        request_failed(r, res, retry_in);
        return;
    }
    if (r->reply_failed) {
        aw__run_fail(r, "error", "out of memory reading the reply");
        return;
    }
    snprintf(r->stop_reason, sizeof r->stop_reason, "%.*s", (int)res->stop_reason.len, res->stop_reason.ptr);
    if (report_reply(r, res)) {
        aw__run_fail(r, "error", "turn %u: out of memory recording the reply", r->turn);
        return;
    }
    aw_error err;
    aw_error_clear(&err);
    int rc = 0;
    if (r->x) {
        rc = aw_extractor_finish(r->x, r->stop_reason[0] ? r->stop_reason : NULL, on_extracted, r, &err);
        /* Calls recovered from the text count only for a reply that made
         * no native ones: a reply that did was parsed by its server. */
        if (!rc && r->native && aw_json_count(r->native))
            drop_recovered(r);
        for (size_t i = 0; !rc && r->native && i < aw_json_count(r->native); i++)
            rc = native_call(r, i, &err);
        const char *warning = aw_extractor_warning(r->x);
        if (warning)
            aw__run_log(r, AW_LOG_WARN, "turn %u: %s", r->turn, warning);
        /* TURN-FAILED lists what the model has no other answer to: when
         * every rejection was a native call, each already has its tool
         * message with the reason. */
        if (!rc && r->rejections > r->rejections_answered)
            rc = aw_extractor_feedback(r->x, &r->feedback);
        if (!rc && r->reply_failed)
            rc = aw_rt_error(&err, AW_ENOMEM, "out of memory");
    }
    if (rc) {
        aw__run_fail(r, "error", "turn %u: reading the reply failed: %s", r->turn, err.message);
        return;
    }
    aw__run_end_turn(r);
}

/* ---- the request ------------------------------------------------------------------- */

int aw__run_send(aw_run *r)
{
    aw_provider *p = r->cfg.models[r->model_index];
    r->attempt++;
    aw__run_reset_reply(r);
    /* Every mode reads the reply through the extractor: in native mode it
     * finds no tags of ours, but checks the native calls as the other modes
     * do (repair, schema) and reports what other dialects it can read. */
    r->x = aw_extractor_new(r->transport, r->turn);
    if (!r->x)
        return AW_ENOMEM;
    aw_buf notice;
    aw_buf_init(&notice, r->alloc);
    int rc = 0;
    if (r->transport)
        rc = aw_transport_render_next(r->transport, r->turn, r->cfg.budgets.max_turns, &notice);
    bool native = !r->transport || aw_transport_mode_of(r->transport) == AW_TRANSPORT_NATIVE;
    bool last = r->turn >= r->cfg.budgets.max_turns;
    aw_chat_msg eph[2];
    size_t neph = 0;
    if (!rc && notice.len)
        eph[neph++] = (aw_chat_msg){.role = AW_CHAT_USER, .content = {notice.data, notice.len}};
    /* Native mode has no notice to say it: the last turn offers only the
     * final report, and says so. */
    static const char last_native[] = "This is the last turn: call " AW_TOOL_FINAL_REPORT
                                      " with your final report now; other tools are not run.";
    if (!rc && native && last)
        eph[neph++] = (aw_chat_msg){.role = AW_CHAT_USER, .content = {last_native, strlen(last_native)}};
    aw_model_request req = {
        .system = {r->system_prompt ? r->system_prompt : "", r->system_prompt ? strlen(r->system_prompt) : 0},
        .ephemeral = eph,
        .ephemeral_count = neph,
        .turn = r->turn,
        .max_tokens = r->cfg.max_tokens,
        .temperature = r->cfg.temperature,
        .has_temperature = r->cfg.has_temperature,
    };
    if (r->cfg.context == AW_CONTEXT_XML) {
        req.thread_stable = (aw_text){r->thread.data, r->thread.len - r->thread_tail_len};
        req.thread_tail = (aw_text){r->thread.data + r->thread.len - r->thread_tail_len, r->thread_tail_len};
    } else {
        req.history = r->chat;
    }
    if (!r->transport || aw_transport_mode_of(r->transport) != AW_TRANSPORT_XML) {
        req.tools = r->tool_defs;
        req.tool_count = r->tool_def_count;
        for (size_t i = 0; native && last && i < r->tool_def_count; i++)
            if (r->tool_defs[i].name.len == strlen(AW_TOOL_FINAL_REPORT) &&
                !memcmp(r->tool_defs[i].name.ptr, AW_TOOL_FINAL_REPORT, r->tool_defs[i].name.len)) {
                req.tools = &r->tool_defs[i];
                req.tool_count = 1;
            }
    }
    r->request_started_ms = aw__run_now(r);
    aw_model_fns fns = {on_text, NULL, on_tool_call, on_done};
    aw_error err;
    if (!rc)
        rc = aw_provider_send(p, &req, &fns, r, &r->mcall, &err);
    aw_buf_free(&notice);
    if (rc) {
        if (rc == AW_ENOMEM)
            return rc;
        aw_model_result res;
        memset(&res, 0, sizeof res);
        res.code = rc;
        res.error = err.message;
        res.retry_after_ms = -1;
        res.usage.cost_usd = -1;
        on_done(r, &res);
        return 0;
    }
    aw__emit_progress(r, "waiting for the model");
    return 0;
}
