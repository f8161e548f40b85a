/* The keys of an agent file that name other files or carry JSON:
 * mcpServers, agents, schema, inputSchema, contract. A referenced JSON
 * file is read now and its own errors placed in it (FILE:LINE:COL); a
 * sub-agent's file is only checked to be readable here (reading it is its
 * parent's tool source's job, and agent check's). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "agentwire/contract.h"
#include "internal/agentfile_impl.h"
#include "internal/rt_util.h"

#define ERROR_AT(node, ...) aw__agent_problem(f, AW_AGENT_ERROR, node, __VA_ARGS__)
#define WARN_AT(node, ...) aw__agent_problem(f, AW_AGENT_WARNING, node, __VA_ARGS__)

/* A JSON file named at `at`, parsed into the file's document; NULL after a
 * problem (or out of memory: *rc). */
static const aw_json_value *json_file(aw_agent_file *f, const char *key, const aw_yaml_node *at, const char *path,
                                      int *rc)
{
    aw_buf text;
    aw_buf_init(&text, f->alloc);
    aw_error err;
    aw_json_doc *doc = NULL;
    const aw_json_value *copy = NULL;
    if (aw__agent_read_file(path, &text, &err)) {
        *rc = err.code == AW_ENOMEM ? AW_ENOMEM : ERROR_AT(at, "%s: cannot read %s", key, err.message);
    } else {
        aw_json_read_options ro = {.alloc = f->alloc};
        int prc = aw_json_parse(text.data ? text.data : "", text.len, &ro, &doc, &err);
        if (prc == AW_ENOMEM)
            *rc = AW_ENOMEM;
        else if (prc)
            *rc = aw__agent_problem_in(f, AW_AGENT_ERROR, path, err.line, err.column, "%s (the %s of %s)", err.message,
                                       key, f->def.path);
        else if (!(copy = aw_json_copy(f->json, aw_json_doc_root(doc))))
            *rc = AW_ENOMEM;
    }
    aw_json_doc_free(doc);
    aw_buf_free(&text);
    return copy;
}

/* ---- schema, inputSchema -------------------------------------------------------------- */

/* A JSON Schema written inline (a mapping, or true/false) or in a file. */
static const aw_json_value *schema_value(aw_agent_file *f, const char *key, const aw_yaml_node *v, int *rc)
{
    if (v->kind == AW_YAML_MAPPING || (v->kind == AW_YAML_SCALAR && v->type == AW_YAML_BOOL)) {
        const aw_json_value *s = aw_yaml_to_json(f->json, v, false);
        if (!s)
            *rc = AW_ENOMEM;
        return s;
    }
    if (aw_yaml_is_string(v) && *v->text) {
        char *path = aw__agent_path(f, v->text);
        if (!path) {
            *rc = AW_ENOMEM;
            return NULL;
        }
        const aw_json_value *s = json_file(f, key, v, path, rc);
        if (s && !aw_json_is_object(s) && !aw_json_is_bool(s)) {
            *rc = ERROR_AT(v, "%s: %s holds no JSON Schema (an object)", key, path);
            return NULL;
        }
        return s;
    }
    *rc = ERROR_AT(v, "%s must be a JSON Schema written here (a mapping) or a JSON file's path, not %s", key,
                   aw_yaml_describe(v));
    return NULL;
}

int aw__agent_read_schema(aw_agent_file *f, const aw_yaml_node *v)
{
    int rc = 0;
    f->def.schema = schema_value(f, "schema", v, &rc);
    return rc;
}

int aw__agent_read_input_schema(aw_agent_file *f, const aw_yaml_node *v)
{
    int rc = 0;
    const aw_json_value *s = schema_value(f, "inputSchema", v, &rc);
    if (!s)
        return rc;
    /* tool arguments are an object, so the schema must admit one */
    const aw_json_value *type = aw_json_get(s, "type");
    if (!aw_json_is_object(s) || (type && !(aw_json_is_string(type) && !strcmp(type->u.str.ptr, "object"))))
        return ERROR_AT(v, "inputSchema must describe an object (\"type\": \"object\"): a tool's arguments are one");
    f->def.input_schema = s;
    return 0;
}

/* ---- contract ----------------------------------------------------------------------------- */

int aw__agent_read_contract(aw_agent_file *f, const aw_yaml_node *v)
{
    if (!aw_yaml_is_string(v) || !*v->text)
        return ERROR_AT(v, "contract must be llmQuery, llmResponse or a contract file's path, not %s",
                        aw_yaml_describe(v));
    aw_contract *c = NULL;
    aw_error err;
    int brc = aw_contract_builtin(v->text, f->alloc, &c, &err);
    aw_contract_free(c);
    c = NULL;
    if (brc == AW_ENOMEM)
        return brc;
    if (brc == 0) {
        f->def.contract = v->text;
        return 0;
    }
    char *path = aw__agent_path(f, v->text);
    if (!path)
        return AW_ENOMEM;
    aw_buf text;
    aw_buf_init(&text, f->alloc);
    int rc = 0;
    if (aw__agent_read_file(path, &text, &err)) {
        rc = err.code == AW_ENOMEM ? AW_ENOMEM
                                   : ERROR_AT(v, "contract: '%s' is neither a built-in contract (llmQuery, llmResponse) "
                                                 "nor a readable file (%s)",
                                              v->text, err.message);
    } else {
        int lrc = aw_contract_load(text.data ? text.data : "", text.len, f->alloc, &c, &err);
        if (lrc == AW_ENOMEM)
            rc = AW_ENOMEM;
        else if (lrc)
            rc = aw__agent_problem_in(f, AW_AGENT_ERROR, path, err.line, err.column, "%s (the contract of %s)",
                                      err.message, f->def.path);
        else
            f->def.contract = path;
        aw_contract_free(c);
    }
    aw_buf_free(&text);
    return rc;
}

/* ---- agents ---------------------------------------------------------------------------------- */

int aw__agent_read_agents(aw_agent_file *f, const aw_yaml_node *v)
{
    if (!aw_yaml_is_string(v) && v->kind != AW_YAML_SEQUENCE)
        return ERROR_AT(v, "agents must be a list of agent files' paths, not %s", aw_yaml_describe(v));
    size_t n = v->kind == AW_YAML_SEQUENCE ? v->count : 1;
    const char **list = aw_arena_alloc(&f->arena, (n ? n : 1) * sizeof *list);
    if (!list)
        return AW_ENOMEM;
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        const aw_yaml_node *item = v->kind == AW_YAML_SEQUENCE ? v->items[i] : v;
        int rc = 0;
        if (!aw_yaml_is_string(item) || !*item->text) {
            rc = ERROR_AT(item, "agents[%zu] must be an agent file's path, not %s", i, aw_yaml_describe(item));
        } else {
            char *path = aw__agent_path(f, item->text);
            if (!path)
                return AW_ENOMEM;
            bool twice = false;
            for (size_t k = 0; k < count && !twice; k++)
                twice = !strcmp(list[k], path);
            if (twice)
                rc = ERROR_AT(item, "agents: '%s' is listed twice", item->text);
            else if (access(path, R_OK) != 0)
                rc = ERROR_AT(item, "agents[%zu]: cannot read '%s': %s", i, path, strerror(errno));
            else
                list[count++] = path;
        }
        if (rc)
            return rc;
    }
    f->def.agents = list;
    f->def.agent_count = count;
    return 0;
}

/* ---- mcpServers -------------------------------------------------------------------------------- */

/* The configurations an agent brings, grown as they are read. */
typedef struct mcp_list {
    aw_agent_mcp *items;
    size_t count, cap;
    aw_json_value *inline_servers; /* the servers written in the frontmatter, in one configuration */
} mcp_list;

static int add_config(aw_agent_file *f, mcp_list *l, const aw_json_value *config, const char *dir, const char *origin,
                      const aw_yaml_node *at)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4;
        aw_agent_mcp *items = aw_arena_alloc(&f->arena, cap * sizeof *items);
        if (!items)
            return AW_ENOMEM;
        if (l->count)
            memcpy(items, l->items, l->count * sizeof *items);
        l->items = items;
        l->cap = cap;
    }
    l->items[l->count++] = (aw_agent_mcp){config, dir, origin, at->line, at->column};
    return 0;
}

/* One server written in the frontmatter, checked where it is written
 * (the MCP client checks again what it needs when it starts). */
static int check_server(aw_agent_file *f, const char *name, const aw_yaml_node *s)
{
    if (s->kind != AW_YAML_MAPPING)
        return ERROR_AT(s, "mcpServers.%s must be a mapping (command, args, env, cwd), not %s", name,
                        aw_yaml_describe(s));
    const aw_yaml_node *command = aw_yaml_get(s, "command"), *url = aw_yaml_get(s, "url"),
                       *type = aw_yaml_get(s, "type");
    if (url || (aw_yaml_is_string(type) && strcmp(type->text, "stdio") != 0))
        return WARN_AT(url ? url : type, "mcpServers.%s: only stdio servers (a command) are run; this one will be "
                                         "reported as unsupported and left out",
                       name);
    if (!command || !aw_yaml_is_string(command) || !*command->text)
        return ERROR_AT(command ? command : s, "mcpServers.%s: command must be a non-empty string", name);
    const aw_yaml_node *args = aw_yaml_get(s, "args"), *env = aw_yaml_get(s, "env"), *cwd = aw_yaml_get(s, "cwd");
    if (args) {
        if (args->kind != AW_YAML_SEQUENCE)
            return ERROR_AT(args, "mcpServers.%s: args must be a list of strings, not %s", name, aw_yaml_describe(args));
        for (size_t i = 0; i < args->count; i++)
            if (args->items[i]->kind != AW_YAML_SCALAR || args->items[i]->type == AW_YAML_NULL)
                return ERROR_AT(args->items[i], "mcpServers.%s: args[%zu] must be a string, not %s", name, i,
                                aw_yaml_describe(args->items[i]));
    }
    if (env) {
        if (env->kind != AW_YAML_MAPPING)
            return ERROR_AT(env, "mcpServers.%s: env must be a mapping of names to strings, not %s", name,
                            aw_yaml_describe(env));
        for (size_t k = 0; k < aw_yaml_pairs(env); k++) {
            const aw_yaml_node *val = aw_yaml_value(env, k);
            if (val->kind != AW_YAML_SCALAR || val->type == AW_YAML_NULL)
                return ERROR_AT(val, "mcpServers.%s: env.%s must be a string, not %s", name, aw_yaml_key(env, k)->text,
                                aw_yaml_describe(val));
        }
    }
    if (cwd && !aw_yaml_is_string(cwd))
        return ERROR_AT(cwd, "mcpServers.%s: cwd must be a string, not %s", name, aw_yaml_describe(cwd));
    return 0;
}

/* A server's configuration as JSON: args and env values as the strings
 * they were written as (`- 8080`, `DEBUG: 1`), the rest typed. */
static aw_json_value *server_json(aw_agent_file *f, const aw_yaml_node *s)
{
    aw_json_value *o = aw_json_new_object(f->json);
    for (size_t k = 0; o && k < aw_yaml_pairs(s); k++) {
        const aw_yaml_node *key = aw_yaml_key(s, k);
        bool text = !strcmp(key->text, "args") || !strcmp(key->text, "env");
        aw_json_value *v = aw_yaml_to_json(f->json, aw_yaml_value(s, k), text);
        if (!v || aw_json_object_set(f->json, o, key->text, key->len, v))
            return NULL;
    }
    return o;
}

static int inline_servers(aw_agent_file *f, mcp_list *l, const aw_yaml_node *servers)
{
    if (!l->inline_servers && !(l->inline_servers = aw_json_new_object(f->json)))
        return AW_ENOMEM;
    for (size_t k = 0; k < aw_yaml_pairs(servers); k++) {
        const aw_yaml_node *name = aw_yaml_key(servers, k), *s = aw_yaml_value(servers, k);
        size_t before = f->nproblems;
        if (check_server(f, name->text, s))
            return AW_ENOMEM;
        bool bad = false;
        for (size_t i = before; i < f->nproblems; i++)
            bad = bad || f->problems[i].severity == AW_AGENT_ERROR;
        if (bad)
            continue; /* left out: the error says why */
        aw_json_value *v = server_json(f, s);
        if (!v || aw_json_object_set(f->json, l->inline_servers, name->text, name->len, v))
            return AW_ENOMEM;
    }
    return 0;
}

/* A .mcp.json-style file: {"mcpServers": {...}} (or VS Code's "servers"). */
static int servers_file(aw_agent_file *f, mcp_list *l, const aw_yaml_node *at, const char *written)
{
    char *path = aw__agent_path(f, written);
    if (!path)
        return AW_ENOMEM;
    int rc = 0;
    const aw_json_value *config = json_file(f, "mcpServers", at, path, &rc);
    if (!config)
        return rc;
    const aw_json_value *servers = aw_json_get(config, "mcpServers");
    if (!servers)
        servers = aw_json_get(config, "servers");
    if (!aw_json_is_object(servers))
        return ERROR_AT(at, "mcpServers: %s has no \"mcpServers\" object", path);
    const char *slash = strrchr(path, '/');
    char *dir = slash ? aw_arena_strndup(&f->arena, path, slash == path ? 1 : (size_t)(slash - path))
                      : aw_arena_strdup(&f->arena, ".");
    return dir ? add_config(f, l, config, dir, path, at) : AW_ENOMEM;
}

/* Claude Code's list items: {NAME: config} written inline, or a server's
 * name, configured elsewhere. */
static int list_item(aw_agent_file *f, mcp_list *l, const aw_yaml_node *item, size_t i)
{
    if (item->kind == AW_YAML_MAPPING)
        return inline_servers(f, l, item);
    if (!aw_yaml_is_string(item) || !*item->text)
        return ERROR_AT(item, "mcpServers[%zu] must be a server's name, a {NAME: config} mapping or a configuration "
                              "file's path, not %s",
                        i, aw_yaml_describe(item));
    size_t n = strlen(item->text);
    if (strchr(item->text, '/') || (n > 5 && !strcmp(item->text + n - 5, ".json")))
        return servers_file(f, l, item, item->text);
    return WARN_AT(item, "mcpServers: '%s' names a server configured elsewhere (Claude Code's form): its tools "
                         "come from the calling agent (or --mcp-config), when it has them",
                   item->text);
}

int aw__agent_read_mcp(aw_agent_file *f, const aw_yaml_node *v)
{
    mcp_list l = {0};
    int rc = 0;
    if (v->kind == AW_YAML_MAPPING)
        rc = inline_servers(f, &l, v);
    else if (aw_yaml_is_string(v) && *v->text)
        rc = servers_file(f, &l, v, v->text);
    else if (v->kind == AW_YAML_SEQUENCE)
        for (size_t i = 0; i < v->count && !rc; i++)
            rc = list_item(f, &l, v->items[i], i);
    else
        return ERROR_AT(v, "mcpServers must be servers written here ({NAME: {command, args, env, cwd}}) or a "
                           "configuration file's path, not %s",
                        aw_yaml_describe(v));
    if (rc)
        return rc;
    if (l.inline_servers && aw_json_count(l.inline_servers)) {
        aw_json_value *config = aw_json_new_object(f->json);
        if (!config || aw_json_object_set(f->json, config, "mcpServers", 10, l.inline_servers))
            return AW_ENOMEM;
        if (add_config(f, &l, config, f->def.dir, "the frontmatter", v))
            return AW_ENOMEM;
    }
    f->def.mcp = l.items;
    f->def.mcp_count = l.count;
    return 0;
}
