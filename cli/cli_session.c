/* Sessions in a run: the store a run writes to, and what continuing a
 * stored session takes (its history, nonce, turns and, without --model,
 * its options). cmd_run.c calls these at four points: options, before
 * the run is made, once it is made, and at the end. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agentwire/store.h"
#include "cli_run.h"
#include "cli_session.h"

#define MAX_OWNED 24

struct cli_session {
    aw_store *store;
    aw_store_recorder *rec;
    aw_json_doc *row;        /* the stored session, when continued */
    aw_store_resume resume;
    bool continuing;
    unsigned prior_turns;
    unsigned run_turns;      /* --max-turns as given (0: the default), for the stored options */
    char *owned[MAX_OWNED];  /* strings made here (absolute paths) */
    size_t nowned;
};

#define DEFAULT_MAX_TURNS 10

long cli_session_option(cli_args *a, run_opts *o, const char *opt)
{
    const char *v;
    if (!strcmp(opt, "--no-store")) {
        o->no_store = true;
        return 0;
    }
    bool store = !strcmp(opt, "--store"), session = !strcmp(opt, "--session"),
         preset = !strcmp(opt, "--snapshot-preset");
    if (!store && !session && !preset)
        return -1;
    if (!(v = cli_opt_value(a, opt)))
        return CLI_USAGE;
    if (store)
        o->store_url = v;
    else if (session)
        o->session = v;
    else {
        aw_slim_config cfg;
        if (aw_slim_preset(v, &cfg) != 0)
            return cli_usage_error(a, "--snapshot-preset is minimal, standard or full, not '%s'", v);
        o->snapshot_preset = v;
    }
    return 0;
}

aw_store *cli_store_open(const char *url, bool read_only)
{
    aw_buf dflt;
    aw_buf_init(&dflt, NULL);
    aw_error err;
    if (!url) {
        if (aw_store_default_url(&dflt, &err)) {
            fprintf(stderr, "agentwire: %s\n", err.message);
            return NULL;
        }
        url = dflt.data;
    }
    aw_store_options so = {.read_only = read_only};
    aw_store *s = aw_store_open(url, &so, &err);
    if (!s)
        fprintf(stderr, "agentwire: %s\n", err.message);
    aw_buf_free(&dflt);
    return s;
}

static const char *keep(cli_session *s, char *p)
{
    if (!p || s->nowned == MAX_OWNED) {
        free(p);
        return NULL;
    }
    return s->owned[s->nowned++] = p;
}

/* A file's absolute path, so a session resumes from any folder. */
static const char *absolute(cli_session *s, const char *path)
{
    char *real = realpath(path, NULL);
    return real ? keep(s, real) : path;
}

/* "replay:FILE" with FILE made absolute; other specs as they are. */
static const char *stored_spec(cli_session *s, const char *spec)
{
    if (strncmp(spec, "replay:", 7) != 0)
        return spec;
    char *real = realpath(spec + 7, NULL);
    if (!real)
        return spec;
    size_t n = strlen(real) + 8;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "replay:%s", real);
    free(real);
    const char *kept = keep(s, out);
    return kept ? kept : spec;
}

/* The owner of a session is "host:pid"; alive when it is this machine's
 * and the process is there. */
static bool owner_alive(const char *owner)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    size_t hl = strlen(host);
    if (!owner || strncmp(owner, host, hl) != 0 || owner[hl] != ':')
        return false;
    long pid = strtol(owner + hl + 1, NULL, 10);
    if (pid <= 0 || pid == (long)getpid())
        return false;
    return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

static const char *json_str(const aw_json_value *o, const char *key)
{
    const aw_json_value *v = aw_json_get(o, key);
    return aw_json_is_string(v) ? v->u.str.ptr : NULL;
}

/* A continued session: can it be continued the way asked? */
static int check_state(run_opts *o, const aw_json_value *row)
{
    const char *status = json_str(row, "status");
    const char *owner = json_str(row, "owner");
    bool running = status && !strcmp(status, "running");
    /* a worker (o->fence) holds the session's lease: that, not a process
     * that may still be there, says whose the session is */
    if (running && !o->fence && owner_alive(owner)) {
        fprintf(stderr, "agentwire: session %s is running now (process %s)\n", o->session, owner);
        return CLI_REJECTED;
    }
    const aw_json_value *resumable = aw_json_get(row, "resumable");
    if (o->resume && !(aw_json_is_bool(resumable) && resumable->u.b)) {
        fprintf(stderr,
                "agentwire resume: session %s has ended (%s): there is no cut run to resume; continue it with "
                "'agentwire run --session %s TASK'\n",
                o->session, status ? status : "?", o->session);
        return CLI_REJECTED;
    }
    return -1;
}

int cli_session_open(run_opts *o, const char **task)
{
    if (o->no_store) {
        if (o->session || o->resume) {
            fprintf(stderr, "agentwire: --no-store keeps no session, so none can be continued\n");
            return CLI_USAGE;
        }
        return -1;
    }
    cli_session *s = calloc(1, sizeof *s);
    if (!s)
        return CLI_REJECTED;
    o->sess = s;
    /* a worker's runs share its connection: a new one per run would cost
     * each run a connection to the database */
    if (!(s->store = o->store ? o->store : cli_store_open(o->store_url, false)))
        return CLI_REJECTED;
    s->run_turns = o->rcfg.budgets.max_turns;
    if (!o->session)
        return -1;
    aw_error err;
    int rc = aw_store_session_get(s->store, o->session, &s->row, &err);
    if (rc == AW_STORE_ENOTFOUND && o->session_kind && !strcmp(o->session_kind, "chat"))
        return -1; /* a new conversation */
    if (rc) {
        fprintf(stderr, "agentwire: %s\n", err.message);
        return CLI_REJECTED;
    }
    const aw_json_value *row = aw_json_doc_root(s->row);
    if ((rc = check_state(o, row)) >= 0)
        return rc;
    if (aw_store_resume_load(s->store, o->session, &s->resume, &err)) {
        fprintf(stderr, "agentwire: session %s: %s\n", o->session, err.message);
        return CLI_REJECTED;
    }
    s->continuing = true;
    const aw_json_value *turn = aw_json_get(aw_json_doc_root(s->resume.resume), "turn");
    s->prior_turns = aw_json_is_number(turn) && turn->u.num.d >= 0 && turn->u.num.d <= UINT_MAX ? (unsigned)turn->u.num.d : 0;
    if (o->resume) {
        /* the cut run's own task when none of its steps is stored */
        *task = NULL;
        if (s->resume.needs_task && !(*task = json_str(row, "task"))) {
            fprintf(stderr, "agentwire resume: session %s holds no task to run\n", o->session);
            return CLI_REJECTED;
        }
    }
    if (!o->model && cli_session_apply_config(o, aw_json_get(row, "config")))
        return CLI_REJECTED;
    return -1;
}

int cli_session_configure(run_opts *o, aw_run_config *cfg, aw_run_observer *slot)
{
    cli_session *s = o->sess;
    if (!s)
        return 0;
    unsigned per_run = cfg->budgets.max_turns ? cfg->budgets.max_turns : DEFAULT_MAX_TURNS;
    if (s->continuing) {
        cfg->session_id = o->session;
        cfg->resume = s->resume.resume ? aw_json_doc_root(s->resume.resume) : NULL;
        cfg->history = s->resume.history ? aw_json_doc_root(s->resume.history) : NULL;
        if (!cfg->nonce && !cfg->resume)
            cfg->nonce = json_str(aw_json_doc_root(s->row), "nonce");
        /* A resumed run keeps the limit it had; a new task gets its own
         * turns after those already taken. */
        if (!o->resume)
            cfg->budgets.max_turns = s->prior_turns + per_run;
        else
            cfg->budgets.max_turns = o->turn_limit ? o->turn_limit : s->prior_turns + per_run;
    } else if (o->session) {
        cfg->session_id = o->session; /* a new conversation, named by its topic */
    }
    aw_slim_config snap;
    aw_slim_preset(o->snapshot_preset ? o->snapshot_preset : "standard", &snap);
    aw_error err;
    if (!(s->rec = aw_store_recorder_new(s->store, &snap, &err))) {
        fprintf(stderr, "agentwire: %s\n", err.message);
        return CLI_REJECTED;
    }
    if (o->fence && aw_store_recorder_fence(s->rec, o->fence)) {
        fprintf(stderr, "agentwire: out of memory\n");
        return CLI_REJECTED;
    }
    *slot = aw_store_recorder_observer(s->rec);
    cfg->observer_count++;
    return 0;
}

int cli_session_begin(run_opts *o, aw_run *run, const char *system, size_t system_len)
{
    cli_session *s = o->sess;
    if (!s)
        return 0;
    const aw_run_info *info = aw_run_info_of(run);
    aw_json_doc *config = NULL;
    if (cli_session_config_json(o, system, system_len, &config)) {
        fprintf(stderr, "agentwire: out of memory\n");
        return CLI_REJECTED;
    }
    char owner[300], host[256] = "";
    gethostname(host, sizeof host - 1);
    snprintf(owner, sizeof owner, "%s:%ld", host, (long)getpid());
    aw_session_start st = {
        .id = info->session_id,
        .kind = o->session_kind ? o->session_kind : "run",
        .parent_id = info->parent_session_id,
        .agent_name = info->agent_name,
        .task = o->rcfg.task,
        .nonce = o->rcfg.nonce,
        .config = aw_json_doc_root(config),
        .owner = owner,
        .continuing = s->continuing,
    };
    aw_error err;
    int rc = aw_store_session_begin(s->store, &st, &err);
    aw_json_doc_free(config);
    if (rc) {
        fprintf(stderr, "agentwire: the session cannot be stored: %s\n", err.message);
        return CLI_REJECTED;
    }
    return 0;
}

void cli_session_free(run_opts *o)
{
    cli_session *s = o->sess;
    if (!s)
        return;
    aw_store_recorder_free(s->rec);
    aw_store_resume_free(&s->resume);
    aw_json_doc_free(s->row);
    if (s->store != o->store)
        aw_store_close(s->store);
    for (size_t i = 0; i < s->nowned; i++)
        free(s->owned[i]);
    free(s);
    o->sess = NULL;
}

aw_store *cli_session_store(run_opts *o) { return o->sess ? o->sess->store : NULL; }

/* ---- the stored options --------------------------------------------------------- */

static const char *const encodings[] = {"xml", "text"};
static const char *const contexts[] = {"messages", "xml"};
static const char *const transports[] = {"native", "xml", "xml-final"};

static int set_str(aw_json_doc *d, aw_json_value *o, const char *key, const char *v)
{
    return v ? aw_json_object_set_string(d, o, key, v, strlen(v)) : 0;
}

static int set_pos(aw_json_doc *d, aw_json_value *o, const char *key, int64_t v)
{
    return v ? aw_json_object_set_int(d, o, key, v) : 0;
}

int cli_session_config_json(run_opts *o, const char *system, size_t system_len, aw_json_doc **out)
{
    cli_session *s = o->sess;
    const aw_run_config *c = &o->rcfg;
    aw_json_doc *d = aw_json_doc_new(NULL);
    aw_json_value *root = d ? aw_json_new_object(d) : NULL;
    aw_json_value *models = d ? aw_json_new_array(d) : NULL;
    aw_json_value *timeouts = d ? aw_json_new_object(d) : NULL;
    aw_json_value *budgets = d ? aw_json_new_object(d) : NULL;
    if (!root || !models || !timeouts || !budgets) {
        aw_json_doc_free(d);
        return AW_ENOMEM;
    }
    int rc = 0;
    for (size_t i = 0; i < o->nmodels && !rc; i++) {
        const char *spec = stored_spec(s, o->models[i]);
        aw_json_value *v = aw_json_new_string(d, spec, strlen(spec));
        rc = !v || aw_json_array_push(d, models, v);
    }
    const aw_provider_config *p = &o->pcfg;
    rc = rc || aw_json_object_set(d, root, "models", 6, models) || set_str(d, root, "base_url", p->base_url) ||
         set_str(d, root, "api_key_env", p->api_key_env) || set_str(d, root, "claude_path", p->claude_path) ||
         set_str(d, root, "codex_path", p->codex_path) ||
         set_str(d, root, "encoding", encodings[p->encoding == AW_PROMPT_TEXT]) ||
         (p->no_stream && aw_json_object_set_bool(d, root, "no_stream", true)) ||
         set_pos(d, timeouts, "connect_ms", p->connect_timeout_ms) ||
         set_pos(d, timeouts, "first_byte_ms", p->first_byte_timeout_ms) ||
         set_pos(d, timeouts, "idle_ms", p->idle_timeout_ms) ||
         set_pos(d, timeouts, "request_ms", p->request_timeout_ms) ||
         aw_json_object_set(d, root, "timeouts", 8, timeouts) ||
         (o->retries_set && aw_json_object_set_int(d, root, "retries", o->retries)) ||
         set_pos(d, root, "max_tokens", c->max_tokens) ||
         (c->has_temperature && aw_json_object_set_number(d, root, "temperature", c->temperature)) ||
         (system && system_len && aw_json_object_set_string(d, root, "system", system, system_len)) ||
         set_str(d, root, "context", contexts[c->context == AW_CONTEXT_XML]) ||
         set_str(d, root, "prefill", c->prefill) ||
         /* a defaulted transport follows from the models, decided again when resumed */
         (o->transport_set && set_str(d, root, "transport", transports[c->transport % 3])) ||
         set_str(d, root, "format", aw_report_format_name(c->format)) ||
         (c->final_schema && aw_json_object_set(d, root, "schema", 6, aw_json_copy(d, c->final_schema))) ||
         set_str(d, root, "contract",
                 o->contract_name && access(o->contract_name, R_OK) == 0 ? absolute(s, o->contract_name)
                                                                         : o->contract_name) ||
         set_pos(d, root, "contract_retries", c->contract_retries) ||
         set_str(d, root, "tools", o->tools_path ? absolute(s, o->tools_path) : NULL) ||
         set_pos(d, budgets, "max_turns", s->run_turns) || set_pos(d, budgets, "turn_limit", c->budgets.max_turns) ||
         set_pos(d, budgets, "max_calls", c->budgets.max_calls_per_turn) ||
         set_pos(d, budgets, "parallel", c->budgets.parallel) ||
         set_pos(d, budgets, "context_window", c->budgets.context_window) ||
         set_pos(d, budgets, "timeout_ms", c->budgets.timeout_ms) ||
         set_pos(d, budgets, "tool_timeout_ms", c->budgets.tool_timeout_ms) ||
         set_pos(d, budgets, "max_tool_output", (int64_t)c->budgets.max_tool_output) ||
         aw_json_object_set(d, root, "budgets", 7, budgets) ||
         (c->interactive && aw_json_object_set_bool(d, root, "interactive", true)) ||
         set_str(d, root, "snapshot_preset", o->snapshot_preset) ||
         set_str(d, root, "recover_calls", o->recover_calls);
    /* MCP servers: the configuration files (absolute), the --mcp specs and
     * the servers' log, so that resume starts the same servers */
    aw_json_value *mcp_files = aw_json_new_array(d), *mcp_specs = aw_json_new_array(d);
    rc = rc || !mcp_files || !mcp_specs;
    for (size_t i = 0; !rc && i < o->mcp.nconfigs; i++) {
        const char *path = absolute(s, o->mcp.configs[i]);
        aw_json_value *v = aw_json_new_string(d, path, strlen(path));
        rc = !v || aw_json_array_push(d, mcp_files, v);
    }
    for (size_t i = 0; !rc && i < o->mcp.nspecs; i++) {
        aw_json_value *v = aw_json_new_string(d, o->mcp.specs[i], strlen(o->mcp.specs[i]));
        rc = !v || aw_json_array_push(d, mcp_specs, v);
    }
    rc = rc || (o->mcp.nconfigs && aw_json_object_set(d, root, "mcp_configs", 11, mcp_files)) ||
         (o->mcp.nspecs && aw_json_object_set(d, root, "mcp_specs", 9, mcp_specs)) ||
         set_str(d, root, "mcp_log", o->mcp.stderr_log ? absolute(s, o->mcp.stderr_log) : NULL) ||
         /* --agent FILE: read again when the session is continued, for
          * its MCP servers and sub-agents (its other keys are above) */
         set_str(d, root, "agent", o->agent.path ? absolute(s, o->agent.path) : NULL) ||
         set_pos(d, root, "agent_max_depth", o->agent.max_depth) || set_str(d, root, "agent_allow", o->agent.allow);
    if (rc) {
        aw_json_doc_free(d);
        return AW_ENOMEM;
    }
    aw_json_doc_set_root(d, root);
    *out = d;
    return 0;
}

static int64_t json_int(const aw_json_value *o, const char *key)
{
    const aw_json_value *v = aw_json_get(o, key);
    return aw_json_is_number(v) && v->u.num.d >= 0 && v->u.num.d < 9e15 ? (int64_t)v->u.num.d : 0;
}

static int pick(const char *v, const char *const *names, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        if (!strcmp(v, names[i]))
            return (int)i;
    return 0;
}

int cli_session_apply_config(run_opts *o, const aw_json_value *c)
{
    if (!aw_json_is_object(c)) {
        fprintf(stderr, "agentwire: session %s holds no options: give --model\n", o->session);
        return CLI_REJECTED;
    }
    const aw_json_value *models = aw_json_get(c, "models");
    o->nfallbacks = 0;
    for (size_t i = 0; i < aw_json_count(models) && i < 16; i++) {
        const aw_json_value *m = aw_json_at(models, i);
        if (!aw_json_is_string(m))
            continue;
        if (!o->model)
            o->model = m->u.str.ptr;
        else if (o->nfallbacks < 15)
            o->fallbacks[o->nfallbacks++] = m->u.str.ptr;
    }
    aw_provider_config *p = &o->pcfg;
    p->base_url = json_str(c, "base_url");
    p->api_key_env = json_str(c, "api_key_env");
    p->claude_path = json_str(c, "claude_path");
    p->codex_path = json_str(c, "codex_path");
    p->encoding = pick(json_str(c, "encoding"), encodings, 2) ? AW_PROMPT_TEXT : AW_PROMPT_XML;
    const aw_json_value *ns = aw_json_get(c, "no_stream");
    p->no_stream = aw_json_is_bool(ns) && ns->u.b;
    const aw_json_value *t = aw_json_get(c, "timeouts");
    p->connect_timeout_ms = json_int(t, "connect_ms");
    p->first_byte_timeout_ms = json_int(t, "first_byte_ms");
    p->idle_timeout_ms = json_int(t, "idle_ms");
    p->request_timeout_ms = json_int(t, "request_ms");
    if (aw_json_get(c, "retries")) {
        o->retries = (unsigned)json_int(c, "retries");
        o->retries_set = true;
    }
    aw_run_config *r = &o->rcfg;
    r->max_tokens = (int)json_int(c, "max_tokens");
    const aw_json_value *temp = aw_json_get(c, "temperature");
    r->has_temperature = aw_json_is_number(temp);
    r->temperature = r->has_temperature ? temp->u.num.d : 0;
    o->system = NULL;
    o->system_text = json_str(c, "system");
    if (!o->system_text)
        o->system_text = "";
    r->context = pick(json_str(c, "context"), contexts, 2) ? AW_CONTEXT_XML : AW_CONTEXT_MESSAGES;
    r->prefill = json_str(c, "prefill");
    if (json_str(c, "transport")) {
        r->transport = (aw_transport_mode)pick(json_str(c, "transport"), transports, 3);
        o->transport_set = true;
    }
    const char *fmt = json_str(c, "format");
    int f = fmt ? aw_report_format_parse(fmt, strlen(fmt)) : -1;
    r->format = f >= 0 ? (aw_report_format)f : AW_FORMAT_MARKDOWN;
    o->schema_path = NULL;
    o->schema_value = aw_json_get(c, "schema");
    o->contract_name = json_str(c, "contract");
    r->contract_retries = (unsigned)json_int(c, "contract_retries");
    o->tools_path = json_str(c, "tools");
    const aw_json_value *b = aw_json_get(c, "budgets");
    r->budgets.max_turns = (unsigned)json_int(b, "max_turns");
    o->sess->run_turns = r->budgets.max_turns;
    o->turn_limit = (unsigned)json_int(b, "turn_limit");
    r->budgets.max_calls_per_turn = (unsigned)json_int(b, "max_calls");
    r->budgets.parallel = (unsigned)json_int(b, "parallel");
    r->budgets.context_window = json_int(b, "context_window");
    r->budgets.timeout_ms = json_int(b, "timeout_ms");
    r->budgets.tool_timeout_ms = json_int(b, "tool_timeout_ms");
    r->budgets.max_tool_output = (size_t)json_int(b, "max_tool_output");
    const aw_json_value *inter = aw_json_get(c, "interactive");
    r->interactive = aw_json_is_bool(inter) && inter->u.b;
    if (!o->snapshot_preset)
        o->snapshot_preset = json_str(c, "snapshot_preset");
    if (!o->recover_calls)
        o->recover_calls = json_str(c, "recover_calls");
    const aw_json_value *mcp_files = aw_json_get(c, "mcp_configs"), *mcp_specs = aw_json_get(c, "mcp_specs");
    o->mcp.nconfigs = o->mcp.nspecs = 0;
    for (size_t i = 0; i < aw_json_count(mcp_files) && o->mcp.nconfigs < CLI_MCP_MAX; i++)
        if (aw_json_is_string(aw_json_at(mcp_files, i)))
            o->mcp.configs[o->mcp.nconfigs++] = aw_json_at(mcp_files, i)->u.str.ptr;
    for (size_t i = 0; i < aw_json_count(mcp_specs) && o->mcp.nspecs < CLI_MCP_MAX; i++)
        if (aw_json_is_string(aw_json_at(mcp_specs, i)))
            o->mcp.specs[o->mcp.nspecs++] = aw_json_at(mcp_specs, i)->u.str.ptr;
    o->mcp.stderr_log = json_str(c, "mcp_log");
    if (!o->agent.path) { /* cli_agent_reload reads it */
        o->agent.path = json_str(c, "agent");
        o->agent.max_depth = (unsigned)json_int(c, "agent_max_depth");
        o->agent.allow = json_str(c, "agent_allow");
        o->agent.from_session = o->agent.path != NULL;
    }
    /* a queued run's own destinations (agentwire submit --events) */
    const aw_json_value *events = aw_json_get(c, "events");
    bool given = o->nevents > 0; /* --events given now win */
    for (size_t i = 0; !given && i < aw_json_count(events) && i < sizeof o->events / sizeof *o->events; i++)
        if (aw_json_is_string(aw_json_at(events, i)))
            o->events[o->nevents++] = aw_json_at(events, i)->u.str.ptr;
    return 0;
}
