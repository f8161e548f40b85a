/* Command tools (--tools FILE): each call runs a command with the
 * arguments as JSON on stdin; stdout is the result, a non-zero exit a
 * failed call with the tail of stderr.
 *
 *   [{"name": "grep", "description": "...", "input_schema": {...},
 *     "command": ["grep", "-rn"], "timeout_ms": 5000, "cwd": "src",
 *     "env": {"LC_ALL": "C"}}]
 *
 * The first STDOUT_KEEP bytes of stdout are kept and the rest counted, so a
 * tool that prints 100 MB costs 100 MB of reading, not of memory. The
 * providers' API keys are taken out of the tools' environment. */
#include <stdio.h>
#include <string.h>

#include "agentwire/buf.h"
#include "agentwire/proc.h"
#include "agentwire/tools.h"
#include "internal/rt_util.h"

#define STDOUT_KEEP (8u << 20)

/* The model providers' keys are not the tools' business: a tool that
 * printed its environment would put them in the model's context and in
 * every record. A tool that needs one names it in its own "env". */
static const char *const withheld[] = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY"};
#define STDERR_TAIL 2048

typedef struct command_tool {
    aw_tool_def def;
    char *name, *description;
    aw_json_doc *schema_doc;
    char **argv;      /* NULL-terminated */
    char **env;       /* NULL-terminated "NAME=VALUE", or NULL */
    char *cwd;
    int64_t timeout_ms;
} command_tool;

typedef struct command_source {
    aw_tool_source base;
    aw_loop *loop;
    const aw_allocator *alloc;
    command_tool *tools;
    size_t count;
} command_source;

typedef struct command_call {
    command_source *cs;
    command_tool *tool;
    aw_proc *proc;
    aw_buf out;
    uint64_t out_total;
    char err_tail[STDERR_TAIL];
    size_t err_len;     /* bytes in err_tail (a ring once full) */
    size_t err_pos;
    uint64_t err_total;
    aw_timer *timer;
    aw_tool_done_fn done;
    void *ctx;
} command_call;

/* ---- definitions ------------------------------------------------------------ */

static void free_tool(const aw_allocator *a, command_tool *t)
{
    aw_free(a, t->name);
    aw_free(a, t->description);
    aw_json_doc_free(t->schema_doc);
    for (size_t i = 0; t->argv && t->argv[i]; i++)
        aw_free(a, t->argv[i]);
    aw_free(a, t->argv);
    for (size_t i = 0; t->env && t->env[i]; i++)
        aw_free(a, t->env[i]);
    aw_free(a, t->env);
    aw_free(a, t->cwd);
}

static void destroy(aw_tool_source *s)
{
    command_source *cs = s->impl;
    for (size_t i = 0; i < cs->count; i++)
        free_tool(cs->alloc, &cs->tools[i]);
    aw_free(cs->alloc, cs->tools);
    aw_free(cs->alloc, cs->base.name);
    aw_free(cs->alloc, cs);
}

static char *text_dup(const aw_allocator *a, const aw_json_value *v)
{
    return aw_rt_strndup(a, v->u.str.ptr, v->u.str.len);
}

static bool valid_name(const aw_json_value *v)
{
    if (!aw_json_is_string(v) || v->u.str.len == 0 || v->u.str.len > 128)
        return false;
    for (size_t i = 0; i < v->u.str.len; i++) {
        char c = v->u.str.ptr[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
              c == '.'))
            return false;
    }
    return true;
}

static int read_tool(const aw_allocator *a, const aw_json_value *d, size_t i, const char *base_dir,
                     command_tool *t, aw_error *err)
{
    if (!aw_json_is_object(d))
        return aw_rt_error(err, AW_ETYPE, "tool %zu: must be an object", i);
    const aw_json_value *name = aw_json_get(d, "name");
    if (!valid_name(name))
        return aw_rt_error(err, AW_ETYPE,
                           "tool %zu: 'name' must be a string of letters, digits, '_', '-' or '.' (1 to 128)", i);
    t->name = text_dup(a, name);
    const aw_json_value *desc = aw_json_get(d, "description");
    if (desc && !aw_json_is_string(desc))
        return aw_rt_error(err, AW_ETYPE, "tool %zu (%s): 'description' must be a string", i, t->name);
    t->description = desc ? text_dup(a, desc) : aw_rt_strdup(a, "");
    const aw_json_value *schema = aw_json_get(d, "input_schema");
    if (!schema)
        schema = aw_json_get(d, "inputSchema");
    if (!schema)
        schema = aw_json_get(d, "parameters");
    if (schema && !aw_json_is_object(schema) && !aw_json_is_bool(schema))
        return aw_rt_error(err, AW_ETYPE, "tool %zu (%s): 'input_schema' must be a JSON Schema (an object)", i, t->name);
    t->schema_doc = aw_json_doc_new(a);
    if (!t->name || !t->description || !t->schema_doc)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    aw_json_value *sv = NULL;
    if (schema) {
        sv = aw_json_copy(t->schema_doc, schema);
    } else {
        sv = aw_json_new_object(t->schema_doc);
        if (sv && aw_json_object_set_string(t->schema_doc, sv, "type", "object", 6))
            sv = NULL;
    }
    if (!sv)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    aw_json_doc_set_root(t->schema_doc, sv);

    const aw_json_value *cmd = aw_json_get(d, "command");
    if (!aw_json_is_array(cmd) || aw_json_count(cmd) == 0)
        return aw_rt_error(err, AW_ETYPE, "tool %zu (%s): 'command' must be a non-empty array of strings", i, t->name);
    size_t argc = aw_json_count(cmd);
    t->argv = aw_malloc(a, (argc + 1) * sizeof *t->argv);
    if (!t->argv)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    memset(t->argv, 0, (argc + 1) * sizeof *t->argv);
    for (size_t k = 0; k < argc; k++) {
        const aw_json_value *arg = aw_json_at(cmd, k);
        if (!aw_json_is_string(arg) || memchr(arg->u.str.ptr, 0, arg->u.str.len))
            return aw_rt_error(err, AW_ETYPE, "tool %zu (%s): command[%zu] must be a string without NUL", i, t->name, k);
        if (!(t->argv[k] = text_dup(a, arg)))
            return aw_rt_error(err, AW_ENOMEM, "out of memory");
    }
    const aw_json_value *timeout = aw_json_get(d, "timeout_ms");
    if (timeout && (!aw_json_is_number(timeout) || timeout->u.num.d < 0))
        return aw_rt_error(err, AW_ETYPE, "tool %zu (%s): 'timeout_ms' must be a non-negative number", i, t->name);
    /* held at about 35 years, so a deadline made of it does not overflow */
    t->timeout_ms = aw_rt_json_int(timeout, 0, 0, (int64_t)1 << 40);
    const aw_json_value *cwd = aw_json_get(d, "cwd");
    if (cwd && !aw_json_is_string(cwd))
        return aw_rt_error(err, AW_ETYPE, "tool %zu (%s): 'cwd' must be a string", i, t->name);
    /* relative to the tools file's directory, so a file works from anywhere */
    if (cwd && !(t->cwd = aw_rt_path_from(a, base_dir, cwd->u.str.ptr, cwd->u.str.len)))
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    const aw_json_value *env = aw_json_get(d, "env");
    if (env && !aw_json_is_object(env))
        return aw_rt_error(err, AW_ETYPE, "tool %zu (%s): 'env' must be an object of strings", i, t->name);
    size_t n = env ? aw_json_count(env) : 0;
    size_t nwithheld = sizeof withheld / sizeof *withheld;
    t->env = aw_malloc(a, (n + nwithheld + 1) * sizeof *t->env);
    if (!t->env)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    memset(t->env, 0, (n + nwithheld + 1) * sizeof *t->env);
    /* "NAME" alone removes NAME; a value the tool's own env gives wins */
    for (size_t k = 0; k < nwithheld; k++)
        if (!(t->env[k] = aw_rt_strdup(a, withheld[k])))
            return aw_rt_error(err, AW_ENOMEM, "out of memory");
    if (env) {
        for (size_t k = 0; k < n; k++) {
            const aw_json_member *m = &env->u.obj.members[k];
            if (!aw_json_is_string(&m->value))
                return aw_rt_error(err, AW_ETYPE, "tool %zu (%s): env.%s must be a string", i, t->name, m->key);
            if (!(t->env[nwithheld + k] =
                      aw_rt_env_entry(a, m->key, m->key_len, m->value.u.str.ptr, m->value.u.str.len)))
                return aw_rt_error(err, AW_ENOMEM, "out of memory");
        }
    }
    t->def.name = (aw_text){t->name, strlen(t->name)};
    t->def.description = (aw_text){t->description, strlen(t->description)};
    t->def.schema = aw_json_doc_root(t->schema_doc);
    return 0;
}

/* ---- calls ---------------------------------------------------------------------- */

static void on_out(void *ctx, const char *p, size_t n)
{
    command_call *c = ctx;
    c->out_total += n;
    if (c->out.len < STDOUT_KEEP) {
        size_t keep = STDOUT_KEEP - c->out.len;
        if (aw_buf_append(&c->out, p, n < keep ? n : keep))
            c->out_total = UINT64_MAX; /* reported as out of memory at exit */
    }
}

static void on_err(void *ctx, const char *p, size_t n)
{
    command_call *c = ctx;
    c->err_total += n;
    for (size_t i = 0; i < n; i++) {
        c->err_tail[c->err_pos] = p[i];
        c->err_pos = (c->err_pos + 1) % STDERR_TAIL;
        if (c->err_len < STDERR_TAIL)
            c->err_len++;
    }
}

static void free_call(command_call *c)
{
    aw_proc_free(c->proc);
    aw_timer_free(c->timer);
    aw_buf_free(&c->out);
    aw_free(c->cs->alloc, c);
}

/* The stderr tail in order, from its first whole character. */
static size_t stderr_tail(const command_call *c, char *out)
{
    size_t start = c->err_len < STDERR_TAIL ? 0 : c->err_pos;
    for (size_t i = 0; i < c->err_len; i++)
        out[i] = c->err_tail[(start + i) % STDERR_TAIL];
    size_t skip = 0;
    if (c->err_total > c->err_len)
        while (skip < c->err_len && ((unsigned char)out[skip] & 0xC0) == 0x80)
            skip++;
    memmove(out, out + skip, c->err_len - skip);
    size_t n = c->err_len - skip;
    while (n && (out[n - 1] == '\n' || out[n - 1] == '\r' || out[n - 1] == ' '))
        n--;
    return n;
}

static void on_exit_status(void *ctx, int status)
{
    command_call *c = ctx;
    aw_tool_result res;
    memset(&res, 0, sizeof res);
    aw_buf msg;
    aw_buf_init(&msg, c->cs->alloc);
    if (c->out_total == UINT64_MAX) {
        res.ok = false;
        aw_buf_append_str(&msg, "(tool failed: out of memory reading its output)");
    } else if (status == 0) {
        res.ok = true;
        res.output = (aw_text){c->out.data ? c->out.data : "", c->out.len};
        res.output_bytes = c->out_total;
    } else {
        char how[96], tail[STDERR_TAIL];
        aw_proc_describe_status(status, how, sizeof how);
        size_t n = stderr_tail(c, tail);
        aw_buf_printf(&msg, "(tool failed: %s", how);
        if (n) {
            aw_buf_append_str(&msg, c->err_total > c->err_len ? "; stderr ends: " : "; stderr: ");
            aw_buf_append(&msg, tail, n);
        }
        aw_buf_putc(&msg, ')');
    }
    if (!res.ok) {
        res.output = (aw_text){msg.data ? msg.data : "(tool failed)", msg.data ? msg.len : 13};
        res.output_bytes = res.output.len;
    }
    /* c goes before the callback (which may free the whole toolbox); the
     * bytes the result points to move out of it first. */
    aw_tool_done_fn done = c->done;
    void *dctx = c->ctx;
    aw_buf out = c->out;
    aw_buf_init(&c->out, c->cs->alloc);
    free_call(c);
    done(dctx, &res);
    aw_buf_free(&msg);
    aw_buf_free(&out);
}

static void tool_timed_out(void *ctx)
{
    command_call *c = ctx;
    char msg[96];
    snprintf(msg, sizeof msg, "(tool failed: timed out after %lld ms)", (long long)c->tool->timeout_ms);
    aw_tool_result res = {.ok = false, .timed_out = true, .output = {msg, strlen(msg)}, .output_bytes = strlen(msg)};
    aw_tool_done_fn done = c->done;
    void *dctx = c->ctx;
    free_call(c); /* kills the process group */
    done(dctx, &res);
}

static int start(aw_tool_source *s, void (*ready)(void *, aw_tool_source *, const aw_error *), void *ctx)
{
    ready(ctx, s, NULL);
    return 0;
}

static size_t count(const aw_tool_source *s) { return ((const command_source *)s->impl)->count; }

static const aw_tool_def *def(const aw_tool_source *s, size_t i)
{
    return &((const command_source *)s->impl)->tools[i].def;
}

static int call(aw_tool_source *s, size_t i, const aw_json_value *args, const aw_tool_call_opts *opts,
                aw_tool_done_fn done, void *ctx, void **handle, aw_error *err)
{
    (void)opts;
    command_source *cs = s->impl;
    command_tool *t = &cs->tools[i];
    command_call *c = aw_malloc(cs->alloc, sizeof *c);
    if (!c)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    memset(c, 0, sizeof *c);
    c->cs = cs;
    c->tool = t;
    c->done = done;
    c->ctx = ctx;
    aw_buf_init(&c->out, cs->alloc);
    aw_buf input;
    aw_buf_init(&input, cs->alloc);
    if (args ? aw_json_write(args, NULL, &input, err) : aw_buf_append_str(&input, "{}")) {
        aw_buf_free(&input);
        aw_free(cs->alloc, c);
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    }
    aw_proc_spec spec = {(const char *const *)t->argv, (const char *const *)t->env, t->cwd, true};
    aw_proc_fns fns = {on_out, on_err, on_exit_status};
    c->proc = aw_proc_spawn(cs->loop, &spec, &fns, c, err);
    if (!c->proc) {
        aw_buf_free(&input);
        free_call(c);
        return err ? err->code : AW_EINVAL;
    }
    int rc = aw_proc_write(c->proc, input.data, input.len);
    aw_buf_free(&input);
    aw_proc_close_stdin(c->proc);
    if (!rc && t->timeout_ms > 0 && !(c->timer = aw_loop_timer(cs->loop, t->timeout_ms, tool_timed_out, c)))
        rc = AW_ENOMEM;
    if (rc) {
        free_call(c);
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    }
    *handle = c;
    return 0;
}

static void cancel(aw_tool_source *s, void *handle)
{
    (void)s;
    free_call(handle);
}

static const aw_tool_source_ops command_ops = {"command", start, count, def, call, cancel, destroy};

aw_tool_source *aw_command_tools_new(aw_loop *l, const aw_json_value *defs, const char *base_dir,
                                     const aw_allocator *alloc, aw_error *err)
{
    aw_error_clear(err);
    if (!alloc)
        alloc = aw_loop_allocator(l);
    if (!aw_json_is_array(defs)) {
        aw_rt_error(err, AW_ETYPE, "the tools must be a JSON array of tool definitions");
        return NULL;
    }
    command_source *cs = aw_malloc(alloc, sizeof *cs);
    if (!cs) {
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    memset(cs, 0, sizeof *cs);
    cs->loop = l;
    cs->alloc = alloc;
    cs->base.ops = &command_ops;
    cs->base.impl = cs;
    size_t n = aw_json_count(defs);
    cs->base.name = aw_rt_strdup(alloc, "command tools");
    cs->tools = aw_malloc(alloc, (n ? n : 1) * sizeof *cs->tools);
    if (!cs->base.name || !cs->tools) {
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        destroy(&cs->base);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        memset(&cs->tools[i], 0, sizeof cs->tools[i]);
        cs->count = i + 1;
        if (read_tool(alloc, aw_json_at(defs, i), i, base_dir, &cs->tools[i], err)) {
            destroy(&cs->base);
            return NULL;
        }
        for (size_t k = 0; k < i; k++)
            if (strcmp(cs->tools[k].name, cs->tools[i].name) == 0) {
                aw_rt_error(err, AW_EINVAL, "tool %zu: the name '%s' is used twice", i, cs->tools[i].name);
                destroy(&cs->base);
                return NULL;
            }
    }
    return &cs->base;
}
