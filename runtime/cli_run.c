/* One run of a command-line provider's command: the prompt on stdin, the
 * output read as the loop delivers it, timeouts, and one report at the
 * end. The command runs in a process group of its own (aw_proc), so
 * stopping it stops whatever it started; nothing it started outlives the
 * request, however the request ends (reply, error, timeout, cancel). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "internal/cli_provider.h"
#include "internal/rt_util.h"

/* stderr kept in memory: twice the tail, so a new chunk rarely moves it. */
#define ERR_KEEP (2 * AW_CLI_STDERR_TAIL)

/* ---- the environment -------------------------------------------------------- */

static void env_free(aw_cli_env *env, const aw_allocator *a)
{
    for (size_t i = 0; env->entries && env->entries[i]; i++)
        aw_free(a, env->entries[i]);
    aw_free(a, env->entries);
    aw_free(a, env);
}

int aw_cli_provider_init(aw_provider *p, aw_error *err)
{
    aw_cli_env *env = aw_malloc(p->alloc, sizeof *env);
    if (!env)
        return aw_rt_error(err, AW_ENOMEM, "%s: out of memory", p->ops->kind);
    env->entries = NULL;
    const char *const *src = p->cfg.extra_env;
    size_t n = 0;
    while (src && src[n])
        n++;
    if (src) {
        env->entries = aw_malloc(p->alloc, (n + 1) * sizeof *env->entries);
        if (!env->entries) {
            env_free(env, p->alloc);
            return aw_rt_error(err, AW_ENOMEM, "%s: out of memory", p->ops->kind);
        }
        memset(env->entries, 0, (n + 1) * sizeof *env->entries);
    }
    for (size_t i = 0; i < n; i++)
        if (!(env->entries[i] = aw_rt_strdup(p->alloc, src[i]))) {
            env_free(env, p->alloc);
            return aw_rt_error(err, AW_ENOMEM, "%s: out of memory", p->ops->kind);
        }
    p->impl = env;
    return 0;
}

void aw_cli_provider_destroy(aw_provider *p)
{
    if (p->impl)
        env_free(p->impl, p->alloc);
    p->impl = NULL;
}

/* ---- messages ------------------------------------------------------------------ */

aw_text aw_cli_text_field(const aw_json_value *o, const char *key)
{
    const aw_json_value *v = aw_json_get(o, key);
    return aw_json_is_string(v) ? (aw_text){v->u.str.ptr, v->u.str.len} : (aw_text){"", 0};
}

int64_t aw_cli_count_field(const aw_json_value *o, const char *key)
{
    const aw_json_value *v = aw_json_get(o, key);
    return aw_rt_json_int(v, 0, 0, AW_RT_TOKENS_MAX);
}

bool aw_cli_is(aw_text t, const char *s) { return t.len == strlen(s) && memcmp(t.ptr, s, t.len) == 0; }

size_t aw_cli_clip(const char *p, size_t n, size_t max)
{
    if (n <= max)
        return n;
    while (max > 0 && ((unsigned char)p[max] & 0xC0) == 0x80)
        max--; /* not inside a character */
    return max;
}

void aw_cli_snippet(char *out, size_t out_size, const char *p, size_t n, size_t max)
{
    /* Room is kept for the longest escape, "...", the quote and the NUL. */
    if (out_size < 16)
        return;
    size_t take = aw_cli_clip(p, n, max), i = 0, o = 0;
    out[o++] = '"';
    for (; i < take && o + 12 < out_size; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '"' || c == '\\')
            o += (size_t)snprintf(out + o, out_size - o, "\\%c", c);
        else if (c == '\n')
            o += (size_t)snprintf(out + o, out_size - o, "\\n");
        else if (c < 0x20 || c == 0x7F)
            o += (size_t)snprintf(out + o, out_size - o, "\\u%04x", c);
        else
            out[o++] = (char)c;
    }
    while (i < n && o > 1 && ((unsigned char)p[i] & 0xC0) == 0x80) {
        i--; /* the buffer ended inside a character: drop its start */
        o--;
    }
    snprintf(out + o, out_size - o, "%s\"", i < n ? "..." : "");
}

static void format_ms(char *out, size_t size, int64_t ms)
{
    if (ms % 1000 == 0)
        snprintf(out, size, "%lld s", (long long)(ms / 1000));
    else
        snprintf(out, size, "%lld ms", (long long)ms);
}

static bool is_blank(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

/* The end of stderr for a message: at most AW_CLI_STDERR_TAIL bytes,
 * starting on a character, blanks around it trimmed; *cut when it does
 * not start where stderr did. */
static aw_text stderr_tail(const aw_cli_run *r, bool *cut)
{
    const char *p = r->err_tail.data;
    size_t n = r->err_tail.len;
    *cut = r->err_cut;
    while (n && is_blank(p[n - 1]))
        n--;
    if (n > AW_CLI_STDERR_TAIL) {
        p += n - AW_CLI_STDERR_TAIL;
        n = AW_CLI_STDERR_TAIL;
        *cut = true;
    }
    while (n && (((unsigned char)*p & 0xC0) == 0x80 || is_blank(*p))) {
        *cut = *cut || ((unsigned char)*p & 0xC0) == 0x80;
        p++;
        n--;
    }
    *cut = *cut && n > 0;
    return (aw_text){p ? p : "", n};
}

int aw_cli_set_error(aw_cli_run *r, int code, bool retryable, int http_status, const char *fmt, ...)
{
    if (r->failed)
        return 1; /* the first cause is the one to tell */
    int k = snprintf(r->error, sizeof r->error, "%s: ", r->name);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(r->error + k, sizeof r->error - (size_t)k, fmt, ap);
    va_end(ap);
    if (n >= (int)(sizeof r->error - (size_t)k)) {
        size_t len = sizeof r->error - 1;
        while (len > 0 && ((unsigned char)r->error[len] & 0xC0) == 0x80)
            len--;
        r->error[len] = 0;
    }
    r->failed = true;
    memset(&r->failure, 0, sizeof r->failure);
    r->failure.code = code;
    r->failure.error = r->error;
    r->failure.retryable = retryable;
    r->failure.retry_after_ms = -1;
    r->failure.http_status = http_status;
    r->failure.usage.cost_usd = -1;
    return 1;
}

/* "; stderr: ..." when something is on stderr, for errors that are not
 * about the exit (a timeout, a reply that is not JSON). */
static void stderr_note(const aw_cli_run *r, char *out, size_t size)
{
    bool cut;
    aw_text tail = stderr_tail(r, &cut);
    if (tail.len)
        snprintf(out, size, "; stderr: %s%.*s", cut ? "..." : "", (int)tail.len, tail.ptr);
    else
        out[0] = 0;
}

void aw_cli_set_exit_error(aw_cli_run *r, int status, const char *what)
{
    char desc[96];
    aw_proc_describe_status(status, desc, sizeof desc);
    bool cut;
    aw_text tail = stderr_tail(r, &cut);
    /* A command killed by a signal (the OOM killer, a crash) may well
     * answer the next time; one that says it failed will say so again. */
    aw_cli_set_error(r, AW_EINVAL, WIFSIGNALED(status), 0, "%s%s%s%s%s%.*s", desc, what ? " " : "", what ? what : "",
                     tail.len ? ": " : "; nothing on stderr", cut ? "..." : "", (int)tail.len, tail.ptr);
}

/* ---- the run ------------------------------------------------------------------------ */

static void trace(aw_cli_run *r, const char *what, const char *p, size_t n)
{
    if (!r->trace)
        return;
    char label[64];
    snprintf(label, sizeof label, "%s %s", r->name, what);
    r->trace(r->trace_ctx, label, p, n);
}

static void release_run(aw_cli_run *r)
{
    aw_timer_free(r->request_timer);
    aw_timer_free(r->idle_timer);
    aw_proc_free(r->proc); /* kills the process group if it still runs */
    if (r->kind->release)
        r->kind->release(r->state, r->alloc);
    aw_buf_free(&r->out);
    aw_buf_free(&r->err_tail);
    aw_free(r->alloc, r);
}

/* Stop the command, report res once (nothing when the caller asked to
 * stop), free the run. res may point into the run: it is freed after. */
static void end_run(aw_cli_run *r, const aw_model_result *res)
{
    aw_model_call *call = r->call;
    r->call = NULL;
    aw_timer_free(r->request_timer);
    aw_timer_free(r->idle_timer);
    r->request_timer = r->idle_timer = NULL;
    aw_proc_free(r->proc);
    r->proc = NULL;
    call->impl = NULL;
    aw_model_call_done(call, res);
    release_run(r);
}

/* After a kind said to end early: its error, or the caller's stop. */
static void end_early(aw_cli_run *r)
{
    aw_model_result stopped;
    memset(&stopped, 0, sizeof stopped);
    stopped.retry_after_ms = -1;
    stopped.usage.cost_usd = -1;
    end_run(r, r->failed ? &r->failure : &stopped);
}

static void on_request_timeout(void *ctx)
{
    aw_cli_run *r = ctx;
    char limit[32], note[AW_CLI_STDERR_TAIL + 32];
    format_ms(limit, sizeof limit, r->request_timeout_ms);
    stderr_note(r, note, sizeof note);
    aw_cli_set_error(r, AW_ELIMIT, true, 0, "no reply within %s (the request timeout); the command was stopped%s",
                     limit, note);
    end_run(r, &r->failure);
}

static void on_idle_timeout(void *ctx)
{
    aw_cli_run *r = ctx;
    char limit[32], note[AW_CLI_STDERR_TAIL + 32];
    format_ms(limit, sizeof limit, r->idle_timeout_ms);
    stderr_note(r, note, sizeof note);
    aw_cli_set_error(r, AW_ELIMIT, true, 0, "no output for %s (the idle timeout); the command was stopped%s", limit,
                     note);
    end_run(r, &r->failure);
}

static void output_seen(aw_cli_run *r)
{
    if (r->idle_timer)
        aw_timer_reset(r->idle_timer, r->idle_timeout_ms);
}

static void on_proc_stdout(void *ctx, const char *p, size_t n)
{
    aw_cli_run *r = ctx;
    trace(r, "stdout", p, n);
    output_seen(r);
    int stop = 0;
    if (n > AW_CLI_STDOUT_CAP - r->out_bytes) {
        stop = aw_cli_set_error(r, AW_ELIMIT, false, 0, "printed more than %zu MB on stdout; the command was stopped",
                                AW_CLI_STDOUT_CAP >> 20);
    } else {
        r->out_bytes += n;
        if (r->kind->keep_stdout && aw_buf_append(&r->out, p, n))
            stop = aw_cli_set_error(r, AW_ENOMEM, false, 0, "out of memory");
        else if (r->kind->on_stdout)
            stop = r->kind->on_stdout(r, p, n);
    }
    if (stop)
        end_early(r);
}

static void on_proc_stderr(void *ctx, const char *p, size_t n)
{
    aw_cli_run *r = ctx;
    trace(r, "stderr", p, n);
    output_seen(r);
    /* Only the end is ever shown: keep at most ERR_KEEP bytes of it. */
    if (n > AW_CLI_STDERR_TAIL) {
        p += n - AW_CLI_STDERR_TAIL;
        n = AW_CLI_STDERR_TAIL;
        r->err_cut = true;
    }
    if (r->err_tail.len + n > ERR_KEEP) {
        size_t drop = r->err_tail.len + n - AW_CLI_STDERR_TAIL;
        drop = drop > r->err_tail.len ? r->err_tail.len : drop;
        memmove(r->err_tail.data, r->err_tail.data + drop, r->err_tail.len - drop);
        r->err_tail.len -= drop;
        r->err_cut = true;
    }
    /* Out of memory here costs only the message's detail. */
    (void)aw_buf_append(&r->err_tail, p, n);
}

static void on_proc_exit(void *ctx, int status)
{
    aw_cli_run *r = ctx;
    char desc[96];
    aw_proc_describe_status(status, desc, sizeof desc);
    trace(r, "exit", desc, strlen(desc));
    aw_model_result res;
    memset(&res, 0, sizeof res);
    res.retry_after_ms = -1;
    res.usage.cost_usd = -1;
    r->kind->on_exit(r, status, &res);
    end_run(r, r->failed ? &r->failure : &res);
}

static const aw_proc_fns proc_fns = {on_proc_stdout, on_proc_stderr, on_proc_exit};

int aw_cli_text(aw_cli_run *r, const char *p, size_t n) { return aw_model_call_text(r->call, p, n); }
int aw_cli_reasoning(aw_cli_run *r, const char *p, size_t n) { return aw_model_call_reasoning(r->call, p, n); }

/* Spawn the command and hand it the prompt; the timers start with it. */
static int launch(aw_cli_run *r, const char *const *argv, const aw_cli_env *env, const aw_buf *prompt,
                  aw_error *err)
{
    aw_proc_spec spec = {.argv = argv, .env = (const char *const *)env->entries, .stdin_pipe = true};
    aw_error perr;
    aw_error_clear(&perr);
    r->proc = aw_proc_spawn(r->loop, &spec, &proc_fns, r, &perr);
    if (!r->proc)
        return aw_rt_error(err, perr.code, "%s: %s", r->name, perr.message);
    /* Written as the pipe takes it: a command that reads slowly (or not at
     * all) never blocks the loop; the timeouts bound it. */
    if (aw_proc_write(r->proc, prompt->data ? prompt->data : "", prompt->len))
        return aw_rt_error(err, AW_ENOMEM, "%s: out of memory", r->name);
    aw_proc_close_stdin(r->proc);
    r->request_timer = aw_loop_timer(r->loop, r->request_timeout_ms, on_request_timeout, r);
    if (r->idle_timeout_ms > 0)
        r->idle_timer = aw_loop_timer(r->loop, r->idle_timeout_ms, on_idle_timeout, r);
    if (!r->request_timer || (r->idle_timeout_ms > 0 && !r->idle_timer))
        return aw_rt_error(err, AW_ENOMEM, "%s: out of memory", r->name);
    return 0;
}

int aw_cli_start(aw_provider *p, aw_model_call *call, const aw_model_request *req, const char *const *argv,
                 const aw_cli_kind *kind, void *state, aw_error *err)
{
    aw_cli_run *r = aw_malloc(p->alloc, sizeof *r);
    if (!r) {
        if (kind->release)
            kind->release(state, p->alloc);
        return aw_rt_error(err, AW_ENOMEM, "%s: out of memory", p->ops->kind);
    }
    memset(r, 0, sizeof *r);
    r->call = call;
    r->kind = kind;
    r->name = p->ops->kind;
    r->state = state;
    r->alloc = p->alloc;
    r->loop = p->loop;
    r->trace = p->cfg.trace;
    r->trace_ctx = p->cfg.trace_ctx;
    r->request_timeout_ms =
        p->cfg.request_timeout_ms > 0 ? p->cfg.request_timeout_ms : AW_CLI_DEFAULT_REQUEST_TIMEOUT_MS;
    /* Only when asked for: claude prints nothing until its reply is whole,
     * and codex nothing while the model writes one message, so silence
     * for a minute is no sign of a hang here; the request timeout bounds
     * a command that never answers. */
    r->idle_timeout_ms = p->cfg.idle_timeout_ms > 0 ? p->cfg.idle_timeout_ms : 0;
    aw_buf_init(&r->out, p->alloc);
    aw_buf_init(&r->err_tail, p->alloc);

    aw_buf prompt;
    aw_buf_init(&prompt, p->alloc);
    aw_error perr;
    aw_error_clear(&perr);
    int rc = aw_cli_prompt(req, p->cfg.encoding, p->alloc, &prompt, &perr);
    if (rc) {
        aw_rt_error(err, rc, "%s: %s", r->name, perr.message);
    } else {
        trace(r, "prompt", prompt.data ? prompt.data : "", prompt.len);
        rc = launch(r, argv, p->impl, &prompt, err);
    }
    aw_buf_free(&prompt);
    if (rc) {
        release_run(r);
        return rc;
    }
    call->impl = r;
    return 0;
}

void aw_cli_cancel(aw_model_call *call)
{
    aw_cli_run *r = call->impl;
    if (r)
        release_run(r);
    call->impl = NULL;
}
