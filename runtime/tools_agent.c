/* Sub-agents as tools (agentfile.h): each file under an agent's `agents`
 * is the tool agent__NAME; a call runs that agent as a run of its own on
 * the same loop, nested under the calling run, and its final report is
 * the call's result.
 *
 * The nested run gets: its file's models (inherit: the owner's), its own
 * toolbox (its mcpServers, its own sub-agents, and the owner's tools but
 * the owner's sub-agents, filtered by its `tools`), its file's budgets,
 * the calling run's session as parent and its depth + 1, and the tree's
 * observers. Before anything starts, a call that would make a cycle
 * (A -> B -> A) or go deeper than max_depth is refused, naming the path.
 *
 * Ending: the nested run's `done` only keeps the report and arms a timer;
 * the report goes to the caller from that timer, after the nested run and
 * everything it owns are freed, so nothing of it is on the stack when the
 * caller (which may free this whole source) is told. Cancelling a call
 * stops the nested run (its records say so), kills its tools and servers,
 * and frees it at once. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentwire/contract.h"
#include "internal/agent_impl.h"
#include "internal/agentfile_impl.h"
#include "internal/rt_arena.h"
#include "internal/rt_util.h"

#define TASK_SCHEMA                                                                                                    \
    "{\"type\":\"object\",\"properties\":{\"task\":{\"type\":\"string\",\"description\":\"what the agent is to do, "  \
    "with everything it needs to know: it sees nothing else of this conversation\"}},\"required\":[\"task\"]}"

typedef struct sub_agent {
    aw_agent_file *file;
    const char *canonical;     /* for the cycle guard */
    aw_json_doc *schema_doc;   /* {"task"} unless the file gives inputSchema */
    aw_tool_def def;
} sub_agent;

typedef struct agent_call agent_call;

typedef struct agent_source {
    aw_tool_source base;
    aw_loop *loop;
    const aw_allocator *alloc;
    aw_arena arena;            /* copies of everything the environment and the owner said */
    aw_provider_config provider;
    const char **command_line;
    size_t ncommand_line;
    aw_run_observer *observers;
    size_t nobservers;
    unsigned max_depth;
    const char *mcp_log;
    const char **models;       /* the owner's: what `inherit` means below it */
    size_t nmodels;
    aw_toolbox *home;          /* the owner's toolbox: what its sub-agents inherit */
    unsigned depth;            /* the owner's */
    const char **chain;        /* canonical paths from the top agent down to the owner */
    const char **chain_names;  /* ...and their names, for messages */
    size_t chain_len;
    sub_agent *agents;
    size_t count;
    agent_call *calls;         /* in flight */
} agent_source;

struct agent_call {
    agent_source *src;
    sub_agent *agent;
    char **specs;
    size_t nspecs;
    aw_provider **models;
    aw_toolbox *box;
    aw_contract *contract;
    aw_buf system;
    aw_run *run;
    aw_timer *report;
    aw_buf output;
    bool ok;
    aw_tool_done_fn done;
    void *ctx;
    agent_call *prev, *next;
};

/* ---- copies ------------------------------------------------------------------------- */

static const char **copy_strings(aw_arena *a, const char *const *v, size_t n, bool *failed)
{
    const char **c = aw_arena_alloc(a, (n ? n : 1) * sizeof *c);
    for (size_t i = 0; c && i < n; i++)
        if (!(c[i] = aw_arena_strdup(a, v[i])))
            c = NULL;
    if (!c)
        *failed = true;
    return c;
}

static const char *copy_opt(aw_arena *a, const char *s, bool *failed)
{
    if (!s)
        return NULL;
    const char *c = aw_arena_strdup(a, s);
    if (!c)
        *failed = true;
    return c;
}

/* The provider template, with its strings (and extra environment) kept here. */
static void copy_provider(agent_source *as, const aw_provider_config *p, bool *failed)
{
    as->provider = *p;
    as->provider.spec = NULL;
    as->provider.alloc = as->alloc;
    as->provider.base_url = copy_opt(&as->arena, p->base_url, failed);
    as->provider.api_key_env = copy_opt(&as->arena, p->api_key_env, failed);
    as->provider.claude_path = copy_opt(&as->arena, p->claude_path, failed);
    as->provider.codex_path = copy_opt(&as->arena, p->codex_path, failed);
    if (p->extra_env) {
        size_t n = 0;
        while (p->extra_env[n])
            n++;
        const char **e = copy_strings(&as->arena, p->extra_env, n + 1, failed);
        if (e)
            e[n] = NULL;
        as->provider.extra_env = e;
    }
}

/* The environment this source was made with, for the sources its
 * sub-agents get. */
static aw_agent_env env_of(const agent_source *as)
{
    aw_agent_env env = {as->provider, as->command_line, as->ncommand_line, as->observers, as->nobservers,
                        as->max_depth, as->mcp_log, as->alloc};
    return env;
}

/* ---- calls ----------------------------------------------------------------------------------- */

static void unlink_call(agent_call *c)
{
    agent_source *as = c->src;
    if (c->prev)
        c->prev->next = c->next;
    else if (as->calls == c)
        as->calls = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
}

/* Everything the nested run owned; the call itself stays. */
static void release(agent_call *c)
{
    const aw_allocator *a = c->src->alloc;
    aw_run_free(c->run);
    c->run = NULL;
    aw_toolbox_free(c->box);
    c->box = NULL;
    for (size_t i = 0; c->models && i < c->nspecs; i++)
        aw_provider_free(c->models[i]);
    aw_free(a, c->models);
    c->models = NULL;
    aw_agent_specs_free(a, c->specs, c->nspecs);
    c->specs = NULL;
    c->nspecs = 0;
    aw_contract_free(c->contract);
    c->contract = NULL;
    aw_timer_free(c->report);
    c->report = NULL;
}

static void free_call(agent_call *c)
{
    unlink_call(c);
    release(c);
    aw_buf_free(&c->system);
    aw_buf_free(&c->output);
    aw_free(c->src->alloc, c);
}

/* From the loop: the nested run is over and freed before the caller hears. */
static void report(void *ctx)
{
    agent_call *c = ctx;
    aw_tool_done_fn done = c->done;
    void *dctx = c->ctx;
    aw_buf output = c->output;
    aw_buf_init(&c->output, c->src->alloc);
    bool ok = c->ok;
    free_call(c);
    aw_tool_result res = {.ok = ok,
                          .output = {output.data ? output.data : "", output.len},
                          .output_bytes = output.len};
    done(dctx, &res);
    aw_buf_free(&output);
}

static void sub_done(void *ctx, aw_run *run, const aw_run_result *res)
{
    (void)run;
    agent_call *c = ctx;
    /* the report untouched (seed 001: the sub-agent format is passed
     * through); a report that is not a success fails the call, with it */
    c->ok = res->status == AW_RUN_SUCCESS;
    aw_buf_clear(&c->output);
    if (aw_buf_append(&c->output, res->content.ptr, res->content.len)) {
        c->ok = false;
        aw_buf_clear(&c->output);
        aw_buf_append_str(&c->output, "(tool failed: out of memory keeping the sub-agent's report)");
    }
    if (!(c->report = aw_loop_timer(c->src->loop, 0, report, c)))
        report(c); /* no memory for a timer: from here, which the run allows */
}

static void cancel(aw_tool_source *s, void *handle)
{
    (void)s;
    agent_call *c = handle;
    /* its records end with the reason; then it goes at once, so done never comes */
    if (c->run && !aw_run_result_of(c->run))
        aw_run_cancel(c->run, "the calling agent stopped this sub-agent");
    free_call(c);
}

static aw_tool_source *make_source(aw_loop *l, const aw_agent_file *owner, const aw_agent_env *env,
                                   const char *const *models, size_t model_count, aw_toolbox *home, unsigned depth,
                                   const char *const *chain, const char *const *chain_names, size_t chain_len,
                                   aw_error *err);

/* The tools the nested run is offered. */
static int make_toolbox(agent_source *as, agent_call *c, const aw_agent_def *def, unsigned depth, aw_error *err)
{
    const char **patterns = NULL;
    size_t npatterns = 0;
    bool none = false;
    if (aw_agent_allow_patterns(def, as->alloc, &patterns, &npatterns, &none))
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    int rc = 0;
    if (none && !def->agent_count)
        goto out; /* it lists only tools that cannot exist: none at all */
    if (!(c->box = aw_toolbox_new(as->loop, as->alloc))) {
        rc = aw_rt_error(err, AW_ENOMEM, "out of memory");
        goto out;
    }
    aw_toolbox_set_log(c->box, as->base.log, as->base.log_ctx);
    if ((rc = aw_agent_add_mcp(c->box, as->loop, def, as->mcp_log, err)))
        goto out;
    if (def->agent_count) {
        aw_agent_env env = env_of(as);
        /* the chain below: this source's, and the owner's path is in it already */
        aw_tool_source *sub = make_source(as->loop, c->agent->file, &env, (const char *const *)c->specs, c->nspecs,
                                          c->box, depth, as->chain, as->chain_names, as->chain_len, err);
        if (!sub || (rc = aw_toolbox_add(c->box, sub))) {
            rc = rc ? aw_rt_error(err, rc, "out of memory") : (err ? err->code : AW_EINVAL);
            goto out;
        }
    }
    if (as->home && !none) {
        aw_tool_source *inh = aw__inherited_tools_new(as->home, "agent__", as->alloc, err);
        if (!inh || aw_toolbox_add(c->box, inh)) {
            rc = aw_rt_error(err, AW_ENOMEM, "out of memory");
            goto out;
        }
    }
    if (npatterns && aw_toolbox_allow(c->box, patterns, npatterns))
        rc = aw_rt_error(err, AW_ENOMEM, "out of memory");
out:
    aw_free(as->alloc, patterns);
    return rc;
}

static bool all_native(aw_provider *const *models, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!aw_provider_has_native_tools(models[i]) || !strcmp(aw_provider_kind(models[i]), "replay"))
            return false;
    return true;
}

/* Providers, tools, contract and configuration of the nested run; then it starts. */
static int start_run(agent_source *as, agent_call *c, const aw_run_info *caller, unsigned depth, const char *task,
                     aw_error *err)
{
    const aw_agent_def *def = aw_agent_file_def(c->agent->file);
    aw_agent_models mctx = {as->models, as->nmodels, as->command_line, as->ncommand_line};
    int rc = aw_agent_resolve_models(def, &mctx, as->alloc, &c->specs, &c->nspecs, err);
    if (rc)
        return rc;
    if (!(c->models = aw_malloc(as->alloc, c->nspecs * sizeof *c->models)))
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    memset(c->models, 0, c->nspecs * sizeof *c->models);
    for (size_t i = 0; i < c->nspecs; i++) {
        aw_provider_config pc = as->provider;
        pc.spec = c->specs[i];
        if (!(c->models[i] = aw_provider_new(as->loop, &pc, err)))
            return err ? err->code : AW_EINVAL;
    }
    if ((rc = make_toolbox(as, c, def, depth, err)))
        return rc;
    if (aw_buf_append_str(&c->system, def->system_prompt))
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    if (def->contract) {
        if (aw_contract_builtin(def->contract, as->alloc, &c->contract, err)) {
            aw_buf text;
            aw_buf_init(&text, as->alloc);
            rc = aw__agent_read_file(def->contract, &text, err);
            if (!rc)
                rc = aw_contract_load(text.data ? text.data : "", text.len, as->alloc, &c->contract, err);
            aw_buf_free(&text);
            if (rc)
                return rc;
        }
        if ((c->system.len && aw_buf_append_str(&c->system, "\n\n")) || aw_contract_prompt(c->contract, &c->system))
            return aw_rt_error(err, AW_ENOMEM, "out of memory");
    }
    aw_run_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.models = c->models;
    cfg.model_count = c->nspecs;
    cfg.tools = c->box;
    cfg.context = def->has_context ? def->context : AW_CONTEXT_MESSAGES;
    /* native calls when every model takes them, unless the xml context
     * (the whole history in one message, which native calls cannot answer) */
    cfg.transport = def->has_transport                                                   ? def->transport
                    : cfg.context == AW_CONTEXT_XML || !all_native(c->models, c->nspecs) ? AW_TRANSPORT_XML
                                                                                         : AW_TRANSPORT_NATIVE;
    cfg.system_prompt = c->system.len ? c->system.data : NULL;
    cfg.task = task;
    cfg.format = def->has_format ? def->format : AW_FORMAT_SUB_AGENT;
    cfg.final_schema = def->schema;
    cfg.contract = c->contract;
    cfg.max_tokens = def->max_tokens;
    cfg.temperature = def->temperature;
    cfg.has_temperature = def->has_temperature;
    cfg.budgets.max_turns = def->max_turns;
    cfg.budgets.max_calls_per_turn = def->max_calls_per_turn;
    cfg.budgets.tool_timeout_ms = def->tool_timeout_ms;
    cfg.parent_session_id = caller ? caller->session_id : NULL;
    cfg.agent_name = def->name;
    cfg.depth = depth;
    cfg.observers = as->observers;
    cfg.observer_count = as->nobservers;
    cfg.alloc = as->alloc;
    if (!(c->run = aw_run_new(as->loop, &cfg, err)))
        return err ? err->code : AW_EINVAL;
    if (aw_run_start(c->run, sub_done, c))
        return aw_rt_error(err, AW_ENOMEM, "out of memory starting the sub-agent");
    return 0;
}

/* "a -> b -> c" for messages: the chain from index `from`, then `last`. */
static void path_text(const agent_source *as, size_t from, const char *last, char *out, size_t size)
{
    size_t k = 0;
    out[0] = 0;
    for (size_t i = from; i < as->chain_len && k + 1 < size; i++)
        k += (size_t)snprintf(out + k, size - k, "%s -> ", as->chain_names[i]);
    if (k + 1 < size)
        snprintf(out + k, size - k, "%s", last);
}

/* The task for the nested run: {"task": ...}'s text, or with the file's
 * own inputSchema the arguments themselves, as JSON. */
static int task_of(const sub_agent *sa, const aw_json_value *args, aw_buf *out, aw_error *err)
{
    if (aw_agent_file_def(sa->file)->input_schema) {
        if (aw_json_write(args, NULL, out, err))
            return aw_rt_error(err, AW_ENOMEM, "out of memory");
        return 0;
    }
    const aw_json_value *task = aw_json_get(args, "task");
    if (!aw_json_is_string(task) || !task->u.str.len)
        return aw_rt_error(err, AW_EINVAL, "%s: the argument 'task' must be a non-empty string", sa->def.name.ptr);
    return aw_buf_append(out, task->u.str.ptr, task->u.str.len) ? aw_rt_error(err, AW_ENOMEM, "out of memory") : 0;
}

static int call(aw_tool_source *s, size_t i, const aw_json_value *args, const aw_tool_call_opts *opts,
                aw_tool_done_fn done, void *ctx, void **handle, aw_error *err)
{
    agent_source *as = s->impl;
    sub_agent *sa = &as->agents[i];
    const aw_agent_def *def = aw_agent_file_def(sa->file);
    const aw_run_info *caller = opts && opts->caller ? aw_run_info_of(opts->caller) : NULL;
    unsigned depth = (caller ? caller->depth : as->depth) + 1;
    char path[512];
    for (size_t k = 0; k < as->chain_len; k++)
        if (!strcmp(as->chain[k], sa->canonical)) {
            path_text(as, k, def->name, path, sizeof path);
            return aw_rt_error(err, AW_EINVAL, "%s refused: %s is a cycle (an agent may not call itself through its "
                                               "sub-agents)",
                               sa->def.name.ptr, path);
        }
    if (depth > as->max_depth) {
        path_text(as, 0, def->name, path, sizeof path);
        return aw_rt_error(err, AW_EINVAL, "%s refused: sub-agents nest at most %u levels deep (--max-depth), and %s "
                                           "would be level %u",
                           sa->def.name.ptr, as->max_depth, path, depth);
    }
    agent_call *c = aw_malloc(as->alloc, sizeof *c);
    if (!c)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    memset(c, 0, sizeof *c);
    c->src = as;
    c->agent = sa;
    c->done = done;
    c->ctx = ctx;
    aw_buf_init(&c->system, as->alloc);
    aw_buf_init(&c->output, as->alloc);
    c->next = as->calls;
    if (as->calls)
        as->calls->prev = c;
    as->calls = c;
    aw_buf task;
    aw_buf_init(&task, as->alloc);
    int rc = task_of(sa, args, &task, err);
    if (!rc)
        rc = start_run(as, c, caller, depth, task.data, err);
    aw_buf_free(&task);
    if (rc) {
        free_call(c);
        return rc;
    }
    *handle = c;
    return 0;
}

/* ---- the source --------------------------------------------------------------------------------- */

static int start(aw_tool_source *s, void (*ready)(void *, aw_tool_source *, const aw_error *), void *ctx)
{
    ready(ctx, s, NULL);
    return 0;
}

static size_t count(const aw_tool_source *s) { return ((const agent_source *)s->impl)->count; }

static const aw_tool_def *def_of(const aw_tool_source *s, size_t i)
{
    return &((const agent_source *)s->impl)->agents[i].def;
}

static void destroy(aw_tool_source *s)
{
    agent_source *as = s->impl;
    while (as->calls)
        cancel(s, as->calls);
    for (size_t i = 0; i < as->count; i++) {
        aw_agent_file_free(as->agents[i].file);
        aw_json_doc_free(as->agents[i].schema_doc);
    }
    aw_free(as->alloc, as->agents);
    aw_free(as->alloc, as->observers);
    aw_arena_free(&as->arena);
    aw_free(as->alloc, as);
}

static const aw_tool_source_ops agent_ops = {"agent", start, count, def_of, call, cancel, destroy};

/* A path as the cycle guard compares it: the same file however it is named. */
static const char *canonical(aw_arena *a, const char *path)
{
    char buf[PATH_MAX];
    return aw_arena_strdup(a, realpath(path, buf) ? buf : path);
}

/* The problems of a sub-agent's file, joined into err. */
static int file_error(const aw_agent_file *f, aw_error *err)
{
    size_t n = 0;
    const aw_agent_problem *p = aw_agent_file_problems(f, &n);
    for (size_t i = 0; i < n; i++)
        if (p[i].severity == AW_AGENT_ERROR)
            return aw_rt_error(err, AW_EVALID, "%s:%zu:%zu: %s%s", p[i].file, p[i].line, p[i].column, p[i].message,
                               n > 1 ? " (agentwire agent check lists every problem)" : "");
    return aw_rt_error(err, AW_EVALID, "%s: not a valid agent file", aw_agent_file_def(f)->path);
}

/* Read one sub-agent's file and make its tool. */
static int load_agent(agent_source *as, const char *path, sub_agent *sa, aw_error *err)
{
    aw_agent_read_options ro = {.alloc = as->alloc};
    int rc = aw_agent_file_read(path, &ro, &sa->file, err);
    if (rc == AW_EVALID)
        return file_error(sa->file, err);
    if (rc)
        return rc;
    const aw_agent_def *d = aw_agent_file_def(sa->file);
    aw_json_read_options jo = {.alloc = as->alloc};
    if (!(sa->canonical = canonical(&as->arena, path)))
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    if (d->input_schema) {
        if (!(sa->schema_doc = aw_json_doc_new(as->alloc)))
            return aw_rt_error(err, AW_ENOMEM, "out of memory");
        aw_json_value *v = aw_json_copy(sa->schema_doc, d->input_schema);
        if (!v)
            return aw_rt_error(err, AW_ENOMEM, "out of memory");
        aw_json_doc_set_root(sa->schema_doc, v);
    } else if (aw_json_parse(TASK_SCHEMA, strlen(TASK_SCHEMA), &jo, &sa->schema_doc, err)) {
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    }
    const char *desc = *d->description ? d->description : d->name;
    sa->def = (aw_tool_def){{d->tool_name, strlen(d->tool_name)}, {desc, strlen(desc)}, aw_json_doc_root(sa->schema_doc)};
    return 0;
}

/* aw_agent_tools_new with the chain's names (for messages) given. */
static aw_tool_source *make_source(aw_loop *l, const aw_agent_file *owner, const aw_agent_env *env,
                                   const char *const *models, size_t model_count, aw_toolbox *home, unsigned depth,
                                   const char *const *chain, const char *const *chain_names, size_t chain_len,
                                   aw_error *err)
{
    aw_error_clear(err);
    const aw_allocator *a = env->alloc ? env->alloc : aw_loop_allocator(l);
    const aw_agent_def *od = aw_agent_file_def(owner);
    agent_source *as = aw_malloc(a, sizeof *as);
    if (!as) {
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    memset(as, 0, sizeof *as);
    as->base.ops = &agent_ops;
    as->base.impl = as;
    as->loop = l;
    as->alloc = a;
    aw_arena_init(&as->arena, a);
    as->max_depth = env->max_depth ? env->max_depth : AW_AGENT_DEFAULT_MAX_DEPTH;
    as->home = home;
    as->depth = depth;
    bool failed = false;
    copy_provider(as, &env->provider, &failed);
    as->command_line = copy_strings(&as->arena, env->command_line, env->command_line_count, &failed);
    as->ncommand_line = env->command_line_count;
    as->mcp_log = copy_opt(&as->arena, env->mcp_stderr_log, &failed);
    as->models = copy_strings(&as->arena, models, model_count, &failed);
    as->nmodels = model_count;
    /* the chain below owner: the one above it, then owner itself */
    as->chain = aw_arena_alloc(&as->arena, (chain_len + 1) * sizeof *as->chain);
    as->chain_names = aw_arena_alloc(&as->arena, (chain_len + 1) * sizeof *as->chain_names);
    if (as->chain && as->chain_names) {
        for (size_t i = 0; i < chain_len && !failed; i++) {
            as->chain[i] = copy_opt(&as->arena, chain[i], &failed);
            as->chain_names[i] = copy_opt(&as->arena, chain_names[i], &failed);
        }
        as->chain[chain_len] = canonical(&as->arena, od->path);
        as->chain_names[chain_len] = copy_opt(&as->arena, od->name, &failed);
        failed = failed || !as->chain[chain_len];
        as->chain_len = chain_len + 1;
    } else {
        failed = true;
    }
    if (env->observer_count && !failed) {
        as->observers = aw_malloc(a, env->observer_count * sizeof *as->observers);
        if (as->observers)
            memcpy(as->observers, env->observers, env->observer_count * sizeof *as->observers);
        as->nobservers = env->observer_count;
        failed = !as->observers;
    }
    as->base.name = aw_arena_printf(&as->arena, "sub-agents of %s", od->name);
    as->agents = aw_malloc(a, (od->agent_count ? od->agent_count : 1) * sizeof *as->agents);
    if (failed || !as->base.name || !as->agents) {
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        destroy(&as->base);
        return NULL;
    }
    for (size_t i = 0; i < od->agent_count; i++) {
        memset(&as->agents[i], 0, sizeof as->agents[i]);
        as->count = i + 1;
        if (load_agent(as, od->agents[i], &as->agents[i], err)) {
            destroy(&as->base);
            return NULL;
        }
        for (size_t k = 0; k < i; k++)
            if (!strcmp(as->agents[k].def.name.ptr, as->agents[i].def.name.ptr)) {
                aw_rt_error(err, AW_EINVAL, "%s: the sub-agents %s and %s are both named %s", od->path,
                            aw_agent_file_def(as->agents[k].file)->path, od->agents[i], as->agents[i].def.name.ptr);
                destroy(&as->base);
                return NULL;
            }
    }
    return &as->base;
}

aw_tool_source *aw_agent_tools_new(aw_loop *l, const aw_agent_file *owner, const aw_agent_env *env,
                                   const char *const *models, size_t model_count, aw_toolbox *home, unsigned depth,
                                   const char *const *chain, size_t chain_len, aw_error *err)
{
    /* the agents above are named by their files here */
    const char **names = aw_malloc(env->alloc ? env->alloc : aw_loop_allocator(l), (chain_len ? chain_len : 1) * sizeof *names);
    if (!names) {
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < chain_len; i++) {
        const char *slash = strrchr(chain[i], '/');
        names[i] = slash ? slash + 1 : chain[i];
    }
    aw_tool_source *s = make_source(l, owner, env, models, model_count, home, depth, chain, names, chain_len, err);
    aw_free(env->alloc ? env->alloc : aw_loop_allocator(l), names);
    return s;
}
