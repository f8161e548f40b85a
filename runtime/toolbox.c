/* The toolbox: every source's tools under one list of names, calls routed
 * to their source with a timeout each.
 *
 * The list is rebuilt whenever a source becomes ready or says its tools
 * changed (an MCP server's list_changed), filtered by the allow patterns,
 * in source order then each source's order, so the model sees a stable
 * list. A name offered by two sources goes to the first. */
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "agentwire/tools.h"
#include "internal/rt_util.h"

typedef struct entry {
    aw_tool_source *src;
    size_t index;
} entry;

typedef struct source_slot {
    aw_tool_source *src;
    bool ready;    /* answered start */
    bool usable;   /* ...without an error */
    aw_toolbox *box;
} source_slot;

struct aw_toolbox {
    aw_loop *loop;
    const aw_allocator *alloc;
    source_slot *sources;
    size_t nsources;
    char **allow;
    size_t nallow;
    aw_tool_def *defs;
    entry *entries;
    size_t ndefs;
    size_t pending;   /* sources that have not answered start */
    bool started, is_ready;
    struct waiter {
        void (*fn)(void *ctx);
        void *ctx;
    } *waiters;
    size_t nwaiters;
    aw_timer *tell_timer, *ready_timer;
    aw_tool_log_fn log;
    void *log_ctx;
    void (*changed)(void *ctx);
    void *changed_ctx;
    aw_tool_call *calls; /* in flight */
};

struct aw_tool_call {
    aw_toolbox *box;
    aw_tool_source *src; /* NULL: an unknown tool, answered from the loop */
    void *handle;
    aw_timer *timer;
    aw_tool_done_fn done;
    void *ctx;
    char *unknown;       /* the failure text for an unknown tool */
    aw_tool_call *prev, *next;
};

aw_toolbox *aw_toolbox_new(aw_loop *l, const aw_allocator *alloc)
{
    if (!alloc)
        alloc = aw_loop_allocator(l);
    aw_toolbox *b = aw_malloc(alloc, sizeof *b);
    if (b) {
        memset(b, 0, sizeof *b);
        b->loop = l;
        b->alloc = alloc;
    }
    return b;
}

static void logf_box(aw_toolbox *b, int level, const char *source, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static void logf_box(aw_toolbox *b, int level, const char *source, const char *fmt, ...)
{
    if (!b->log)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    b->log(b->log_ctx, level, source, msg);
}

static bool allowed(const aw_toolbox *b, aw_text name)
{
    if (b->nallow == 0)
        return true;
    char buf[256];
    if (name.len >= sizeof buf)
        return false;
    memcpy(buf, name.ptr, name.len);
    buf[name.len] = 0;
    for (size_t i = 0; i < b->nallow; i++)
        if (fnmatch(b->allow[i], buf, 0) == 0)
            return true;
    return false;
}

static bool already(const aw_toolbox *b, size_t n, aw_text name)
{
    for (size_t i = 0; i < n; i++)
        if (b->defs[i].name.len == name.len && memcmp(b->defs[i].name.ptr, name.ptr, name.len) == 0)
            return true;
    return false;
}

static int rebuild(aw_toolbox *b)
{
    size_t total = 0;
    for (size_t i = 0; i < b->nsources; i++)
        if (b->sources[i].usable)
            total += b->sources[i].src->ops->count(b->sources[i].src);
    aw_tool_def *defs = aw_malloc(b->alloc, (total ? total : 1) * sizeof *defs);
    entry *entries = aw_malloc(b->alloc, (total ? total : 1) * sizeof *entries);
    if (!defs || !entries) {
        aw_free(b->alloc, defs);
        aw_free(b->alloc, entries);
        return AW_ENOMEM;
    }
    aw_free(b->alloc, b->defs);
    aw_free(b->alloc, b->entries);
    b->defs = defs;
    b->entries = entries;
    size_t n = 0;
    for (size_t i = 0; i < b->nsources; i++) {
        source_slot *s = &b->sources[i];
        if (!s->usable)
            continue;
        size_t count = s->src->ops->count(s->src);
        for (size_t k = 0; k < count; k++) {
            const aw_tool_def *d = s->src->ops->def(s->src, k);
            if (!allowed(b, d->name))
                continue;
            if (already(b, n, d->name)) {
                logf_box(b, AW_LOG_WARN, s->src->name, "tool '%.*s' is offered twice; the first source keeps it",
                         (int)d->name.len, d->name.ptr);
                continue;
            }
            defs[n] = *d;
            entries[n] = (entry){s->src, k};
            n++;
        }
    }
    b->ndefs = n;
    return 0;
}

static void warn_unmatched_patterns(aw_toolbox *b)
{
    for (size_t p = 0; p < b->nallow; p++) {
        bool hit = false;
        for (size_t i = 0; i < b->nsources && !hit; i++) {
            source_slot *s = &b->sources[i];
            if (!s->usable)
                continue;
            size_t count = s->src->ops->count(s->src);
            for (size_t k = 0; k < count && !hit; k++) {
                const aw_tool_def *d = s->src->ops->def(s->src, k);
                char buf[256];
                if (d->name.len >= sizeof buf)
                    continue;
                memcpy(buf, d->name.ptr, d->name.len);
                buf[d->name.len] = 0;
                hit = fnmatch(b->allow[p], buf, 0) == 0;
            }
        }
        if (!hit)
            logf_box(b, AW_LOG_WARN, "tools", "no tool matches '%s'", b->allow[p]);
    }
}

static void source_changed(void *ctx)
{
    source_slot *s = ctx;
    aw_toolbox *b = s->box;
    if (!s->usable)
        return;
    if (rebuild(b)) {
        logf_box(b, AW_LOG_ERROR, s->src->name, "out of memory rebuilding the tool list");
        return;
    }
    if (b->changed)
        b->changed(b->changed_ctx);
}

static void source_log(void *ctx, int level, const char *source, const char *msg)
{
    aw_toolbox *b = ctx;
    if (b->log)
        b->log(b->log_ctx, level, source, msg);
}

int aw_toolbox_add(aw_toolbox *b, aw_tool_source *src)
{
    if (b->started)
        return AW_EINVAL;
    source_slot *s = aw_realloc(b->alloc, b->sources, (b->nsources + 1) * sizeof *s);
    if (!s) {
        src->ops->destroy(src);
        return AW_ENOMEM;
    }
    b->sources = s;
    /* Slots move when the array grows, so each keeps no pointer to itself
     * until start, when the array is final. */
    b->sources[b->nsources++] = (source_slot){src, false, false, b};
    src->log = source_log;
    src->log_ctx = b;
    return 0;
}

int aw_toolbox_allow(aw_toolbox *b, const char *const *patterns, size_t n)
{
    for (size_t i = 0; i < b->nallow; i++)
        aw_free(b->alloc, b->allow[i]);
    aw_free(b->alloc, b->allow);
    b->allow = NULL;
    b->nallow = 0;
    if (!n)
        return 0;
    b->allow = aw_malloc(b->alloc, n * sizeof *b->allow);
    if (!b->allow)
        return AW_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        b->allow[i] = aw_rt_strdup(b->alloc, patterns[i]);
        if (!b->allow[i])
            return AW_ENOMEM;
        b->nallow++;
    }
    return 0;
}

void aw_toolbox_set_log(aw_toolbox *b, aw_tool_log_fn fn, void *ctx)
{
    b->log = fn;
    b->log_ctx = ctx;
}

void aw_toolbox_on_change(aw_toolbox *b, void (*fn)(void *ctx), void *ctx)
{
    b->changed = fn;
    b->changed_ctx = ctx;
}

/* Tell every waiter, from the loop; one may add another while told. */
static void tell_waiters(void *ctx)
{
    aw_toolbox *b = ctx;
    aw_timer_free(b->tell_timer);
    b->tell_timer = NULL;
    while (b->nwaiters) {
        struct waiter w = b->waiters[0];
        memmove(b->waiters, b->waiters + 1, --b->nwaiters * sizeof *b->waiters);
        w.fn(w.ctx);
    }
}

static void all_ready(void *ctx)
{
    aw_toolbox *b = ctx;
    aw_timer_free(b->ready_timer);
    b->ready_timer = NULL;
    if (rebuild(b))
        logf_box(b, AW_LOG_ERROR, "tools", "out of memory building the tool list");
    warn_unmatched_patterns(b);
    b->is_ready = true;
    tell_waiters(b);
}

static void source_ready(void *ctx, aw_tool_source *src, const aw_error *err)
{
    source_slot *s = ctx;
    aw_toolbox *b = s->box;
    (void)src;
    if (s->ready)
        return;
    s->ready = true;
    s->usable = !err || err->code == 0;
    if (!s->usable)
        logf_box(b, AW_LOG_ERROR, s->src->name, "%s; its tools are left out", err->message);
    /* a timer, not a deferred call, so that freeing the toolbox first
     * takes it back */
    if (--b->pending == 0 && !b->ready_timer)
        b->ready_timer = aw_loop_timer(b->loop, 0, all_ready, b);
}

int aw_toolbox_start(aw_toolbox *b, void (*ready)(void *ctx), void *ctx)
{
    if (ready) {
        struct waiter *w = aw_realloc(b->alloc, b->waiters, (b->nwaiters + 1) * sizeof *w);
        if (!w)
            return AW_ENOMEM;
        b->waiters = w;
        b->waiters[b->nwaiters++] = (struct waiter){ready, ctx};
    }
    if (b->started) {
        if (b->is_ready && !b->tell_timer && !(b->tell_timer = aw_loop_timer(b->loop, 0, tell_waiters, b)))
            return AW_ENOMEM;
        return 0;
    }
    b->started = true;
    b->pending = b->nsources + 1; /* +1 held until every start is made */
    for (size_t i = 0; i < b->nsources; i++) {
        source_slot *s = &b->sources[i];
        s->box = b;
        s->src->changed = source_changed;
        s->src->changed_ctx = s;
        if (s->src->ops->start(s->src, source_ready, s) != 0 && !s->ready) {
            aw_error e;
            aw_rt_error(&e, AW_EINVAL, "could not start");
            source_ready(s, s->src, &e);
        }
    }
    if (--b->pending == 0 && !b->ready_timer && !(b->ready_timer = aw_loop_timer(b->loop, 0, all_ready, b)))
        return AW_ENOMEM;
    return 0;
}

void aw_toolbox_forget(aw_toolbox *b, void (*ready)(void *ctx), void *ctx)
{
    for (size_t i = 0; i < b->nwaiters;)
        if (b->waiters[i].fn == ready && b->waiters[i].ctx == ctx)
            memmove(b->waiters + i, b->waiters + i + 1, (--b->nwaiters - i) * sizeof *b->waiters);
        else
            i++;
}

bool aw_toolbox_refreshing(const aw_toolbox *b)
{
    for (size_t i = 0; b && i < b->nsources; i++)
        if (b->sources[i].usable && b->sources[i].src->refreshing)
            return true;
    return false;
}

const aw_tool_def *aw_toolbox_defs(const aw_toolbox *b, size_t *count)
{
    *count = b ? b->ndefs : 0;
    return b ? b->defs : NULL;
}

/* ---- calls ------------------------------------------------------------------ */

static void unlink_call(aw_tool_call *c)
{
    aw_toolbox *b = c->box;
    if (c->prev)
        c->prev->next = c->next;
    else
        b->calls = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
}

static void free_call(aw_tool_call *c)
{
    unlink_call(c);
    aw_timer_free(c->timer);
    aw_free(c->box->alloc, c->unknown);
    aw_free(c->box->alloc, c);
}

static void call_done(void *ctx, const aw_tool_result *res)
{
    aw_tool_call *c = ctx;
    aw_tool_done_fn done = c->done;
    void *dctx = c->ctx;
    free_call(c);
    done(dctx, res);
}

static void call_timed_out(void *ctx)
{
    aw_tool_call *c = ctx;
    if (c->src)
        c->src->ops->cancel(c->src, c->handle);
    aw_tool_result res = {.ok = false, .timed_out = true};
    res.output = (aw_text){"(tool failed: timed out)", 24};
    res.output_bytes = 0;
    call_done(c, &res);
}

static void answer_unknown(void *ctx)
{
    aw_tool_call *c = ctx;
    aw_tool_result res = {.ok = false};
    res.output = (aw_text){c->unknown, strlen(c->unknown)};
    /* the text lives in c, which call_done frees: keep it for the callback */
    char *text = c->unknown;
    c->unknown = NULL;
    aw_toolbox *b = c->box;
    call_done(c, &res);
    aw_free(b->alloc, text);
}

int aw_toolbox_call(aw_toolbox *b, aw_text name, const aw_json_value *args, int64_t timeout_ms,
                    const aw_tool_call_opts *opts, aw_tool_done_fn done, void *ctx, aw_tool_call **out,
                    aw_error *err)
{
    *out = NULL;
    aw_tool_call *c = aw_malloc(b->alloc, sizeof *c);
    if (!c)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    memset(c, 0, sizeof *c);
    c->box = b;
    c->done = done;
    c->ctx = ctx;
    c->next = b->calls;
    if (b->calls)
        b->calls->prev = c;
    b->calls = c;

    const entry *e = NULL;
    for (size_t i = 0; i < b->ndefs && !e; i++)
        if (b->defs[i].name.len == name.len && memcmp(b->defs[i].name.ptr, name.ptr, name.len) == 0)
            e = &b->entries[i];
    if (!e) {
        char msg[320];
        snprintf(msg, sizeof msg, "(tool failed: there is no tool named '%.*s')", (int)(name.len > 200 ? 200 : name.len),
                 name.ptr);
        /* Answered from the loop, like every result; a timer, so that a
         * cancel can take it back. */
        c->unknown = aw_rt_strdup(b->alloc, msg);
        if (!c->unknown || !(c->timer = aw_loop_timer(b->loop, 0, answer_unknown, c))) {
            free_call(c);
            return aw_rt_error(err, AW_ENOMEM, "out of memory");
        }
        *out = c;
        return 0;
    }
    if (timeout_ms > 0 && !(c->timer = aw_loop_timer(b->loop, timeout_ms, call_timed_out, c))) {
        free_call(c);
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    }
    aw_tool_call_opts none;
    memset(&none, 0, sizeof none);
    int rc = e->src->ops->call(e->src, e->index, args, opts ? opts : &none, call_done, c, &c->handle, err);
    if (rc) {
        free_call(c);
        return rc;
    }
    c->src = e->src;
    *out = c;
    return 0;
}

void aw_tool_call_cancel(aw_tool_call *c)
{
    if (!c)
        return;
    if (c->src)
        c->src->ops->cancel(c->src, c->handle);
    free_call(c);
}

void aw_toolbox_free(aw_toolbox *b)
{
    if (!b)
        return;
    /* Oldest first: a sub-agent's call made before the calls its own run
     * makes through this toolbox (tools it inherits), and cancelling it
     * cancels those, which must still exist then. */
    while (b->calls) {
        aw_tool_call *oldest = b->calls;
        while (oldest->next)
            oldest = oldest->next;
        aw_tool_call_cancel(oldest);
    }
    for (size_t i = 0; i < b->nsources; i++)
        b->sources[i].src->ops->destroy(b->sources[i].src);
    for (size_t i = 0; i < b->nallow; i++)
        aw_free(b->alloc, b->allow[i]);
    aw_free(b->alloc, b->allow);
    aw_free(b->alloc, b->sources);
    aw_free(b->alloc, b->waiters);
    aw_timer_free(b->tell_timer);
    aw_timer_free(b->ready_timer);
    aw_free(b->alloc, b->defs);
    aw_free(b->alloc, b->entries);
    aw_free(b->alloc, b);
}
