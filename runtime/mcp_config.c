/* The mcpServers configuration every agent product reads, and the --mcp
 * option's one-line form, turned into MCP tool sources. */
#include <string.h>

#include "agentwire/buf.h"
#include "agentwire/mcp.h"
#include "internal/mcp_client.h"
#include "internal/rt_util.h"

#define MAX_SPEC_WORDS 256

static char **new_strv(const aw_allocator *a, size_t n)
{
    char **v = aw_malloc(a, (n + 1) * sizeof *v);
    if (v)
        memset(v, 0, (n + 1) * sizeof *v);
    return v;
}

static bool plain_string(const aw_json_value *v)
{
    return aw_json_is_string(v) && !memchr(v->u.str.ptr, 0, v->u.str.len);
}

const aw_json_value *aw_mcp_config_servers(const aw_json_value *config, aw_error *err)
{
    const aw_json_value *servers = aw_json_get(config, "mcpServers");
    const char *key = "mcpServers";
    if (!servers && (servers = aw_json_get(config, "servers")))
        key = "servers";
    if (!aw_json_is_object(config) || !servers) {
        aw_rt_error(err, AW_ETYPE, "an MCP configuration is an object with \"mcpServers\": {NAME: {\"command\", ...}}");
        return NULL;
    }
    if (!aw_json_is_object(servers)) {
        aw_rt_error(err, AW_ETYPE, "\"%s\" must be an object of servers by name", key);
        return NULL;
    }
    return servers;
}

/* Another transport than stdio: the reason it is left out, or NULL. */
static char *unsupported_transport(const aw_allocator *a, const aw_json_value *entry)
{
    const aw_json_value *type = aw_json_get(entry, "type");
    const aw_json_value *url = aw_json_get(entry, "url");
    aw_buf why;
    aw_buf_init(&why, a);
    if (aw_json_is_string(type) && !(type->u.str.len == 5 && !memcmp(type->u.str.ptr, "stdio", 5)))
        aw_buf_printf(&why, "its transport '%.*s' is not supported; agentwire speaks MCP over stdio only",
                      (int)(type->u.str.len > 40 ? 40 : type->u.str.len), type->u.str.ptr);
    else if (url && !aw_json_get(entry, "command"))
        aw_buf_append_str(&why, "it is reached by URL (HTTP or SSE), which is not supported; agentwire speaks MCP "
                                "over stdio only");
    else
        return NULL;
    char *s = aw_buf_detach(&why, NULL);
    return s ? s : aw_rt_strdup(a, "its transport is not supported");
}

static int read_argv(const aw_allocator *a, const char *name, const aw_json_value *entry, char ***out, aw_error *err)
{
    const aw_json_value *cmd = aw_json_get(entry, "command");
    const aw_json_value *args = aw_json_get(entry, "args");
    if (!plain_string(cmd) || cmd->u.str.len == 0)
        return aw_rt_error(err, AW_ETYPE, "mcpServers.%s: 'command' must be a non-empty string", name);
    if (args && !aw_json_is_array(args))
        return aw_rt_error(err, AW_ETYPE, "mcpServers.%s: 'args' must be an array of strings", name);
    size_t n = aw_json_count(args);
    char **argv = new_strv(a, n + 1);
    if (!argv)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    *out = argv;
    if (!(argv[0] = aw_rt_strndup(a, cmd->u.str.ptr, cmd->u.str.len)))
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const aw_json_value *arg = aw_json_at(args, i);
        if (!plain_string(arg))
            return aw_rt_error(err, AW_ETYPE, "mcpServers.%s: args[%zu] must be a string without NUL", name, i);
        if (!(argv[i + 1] = aw_rt_strndup(a, arg->u.str.ptr, arg->u.str.len)))
            return aw_rt_error(err, AW_ENOMEM, "out of memory");
    }
    return 0;
}

static int read_env(const aw_allocator *a, const char *name, const aw_json_value *entry, char ***out, aw_error *err)
{
    const aw_json_value *env = aw_json_get(entry, "env");
    if (!env)
        return 0;
    if (!aw_json_is_object(env))
        return aw_rt_error(err, AW_ETYPE, "mcpServers.%s: 'env' must be an object of strings", name);
    size_t n = aw_json_count(env);
    char **v = new_strv(a, n);
    if (!v)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    *out = v;
    for (size_t i = 0; i < n; i++) {
        const aw_json_member *m = &env->u.obj.members[i];
        if (!plain_string(&m->value) || m->key_len == 0 || memchr(m->key, '=', m->key_len) ||
            memchr(m->key, 0, m->key_len))
            return aw_rt_error(err, AW_ETYPE, "mcpServers.%s: env.%s must be a string (and its name have no '=')", name,
                               m->key);
        if (!(v[i] = aw_rt_env_entry(a, m->key, m->key_len, m->value.u.str.ptr, m->value.u.str.len)))
            return aw_rt_error(err, AW_ENOMEM, "out of memory");
    }
    return 0;
}

static int read_cwd(const aw_allocator *a, const char *name, const aw_json_value *entry, const char *base_dir,
                    char **out, aw_error *err)
{
    const aw_json_value *cwd = aw_json_get(entry, "cwd");
    if (!cwd)
        return 0;
    if (!plain_string(cwd))
        return aw_rt_error(err, AW_ETYPE, "mcpServers.%s: 'cwd' must be a string", name);
    /* relative to the configuration file's directory, so it works from anywhere */
    if (!(*out = aw_rt_path_from(a, base_dir, cwd->u.str.ptr, cwd->u.str.len)))
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    return 0;
}

aw_tool_source *aw_mcp_source_new(aw_loop *l, const char *name, const aw_json_value *server, const char *base_dir,
                                  const aw_mcp_options *opts, aw_error *err)
{
    aw_error_clear(err);
    const aw_allocator *a = opts && opts->alloc ? opts->alloc : aw_loop_allocator(l);
    if (!name || !*name) {
        aw_rt_error(err, AW_EINVAL, "mcpServers: a server needs a name");
        return NULL;
    }
    if (!aw_json_is_object(server)) {
        aw_rt_error(err, AW_ETYPE, "mcpServers.%s: must be an object with a \"command\"", name);
        return NULL;
    }
    const aw_json_value *type = aw_json_get(server, "type");
    if (type && !aw_json_is_string(type)) {
        aw_rt_error(err, AW_ETYPE, "mcpServers.%s: 'type' must be a string", name);
        return NULL;
    }
    char *unsupported = unsupported_transport(a, server);
    char **argv = NULL, **env = NULL, *cwd = NULL;
    int rc = 0;
    if (!unsupported)
        rc = read_argv(a, name, server, &argv, err) || read_env(a, name, server, &env, err) ||
             read_cwd(a, name, server, base_dir, &cwd, err);
    if (rc) {
        aw_rt_strv_free(a, argv);
        aw_rt_strv_free(a, env);
        aw_free(a, cwd);
        return NULL;
    }
    aw_mcp_options o;
    memset(&o, 0, sizeof o);
    if (opts)
        o = *opts;
    o.alloc = a;
    return aw__mcp_source_make(l, name, &o, argv, env, cwd, unsupported, err);
}

int aw_mcp_add_config(aw_toolbox *box, aw_loop *l, const aw_json_value *config, const char *base_dir,
                      const aw_mcp_options *opts, aw_error *err)
{
    aw_error_clear(err);
    const aw_json_value *servers = aw_mcp_config_servers(config, err);
    if (!servers)
        return err ? err->code : AW_ETYPE;
    for (size_t i = 0; i < aw_json_count(servers); i++) {
        const aw_json_member *m = &servers->u.obj.members[i];
        const aw_json_value *disabled = aw_json_get(&m->value, "disabled");
        if (aw_json_is_bool(disabled) && disabled->u.b)
            continue;
        aw_tool_source *src = aw_mcp_source_new(l, m->key, &m->value, base_dir, opts, err);
        if (!src)
            return err ? err->code : AW_EINVAL;
        int rc = aw_toolbox_add(box, src);
        if (rc)
            return aw_rt_error(err, rc, rc == AW_ENOMEM ? "out of memory" : "the toolbox has started already");
    }
    return 0;
}

/* ---- --mcp 'NAME=COMMAND ARGS...' ------------------------------------------------ */

/* The next word of a shell-like command line: blanks separate words,
 * '...' is literal, "..." keeps blanks and takes \" \\ \$ \` escapes, a
 * backslash outside quotes escapes the next byte. Nothing is expanded.
 * 1: a word in *w; 0: no more words; AW_ESYNTAX: an unclosed quote. */
static int next_word(const char **pp, aw_buf *w)
{
    const char *p = *pp;
    while (*p == ' ' || *p == '\t' || *p == '\n')
        p++;
    if (!*p) {
        *pp = p;
        return 0;
    }
    aw_buf_clear(w);
    int rc = 0;
    while (*p && *p != ' ' && *p != '\t' && *p != '\n' && !rc) {
        if (*p == '\'') {
            const char *end = strchr(p + 1, '\'');
            if (!end)
                return AW_ESYNTAX;
            rc = aw_buf_append(w, p + 1, (size_t)(end - p - 1));
            p = end + 1;
        } else if (*p == '"') {
            p++;
            while (*p && *p != '"' && !rc) {
                if (*p == '\\' && p[1] && strchr("\"\\$`", p[1]))
                    p++;
                rc = aw_buf_putc(w, *p++);
            }
            if (*p != '"')
                return AW_ESYNTAX;
            p++;
        } else if (*p == '\\' && p[1]) {
            rc = aw_buf_putc(w, p[1]);
            p += 2;
        } else {
            rc = aw_buf_putc(w, *p++);
        }
    }
    /* an empty quoted word ('' or "") is still a word */
    if (!rc && !w->data)
        rc = aw_buf_reserve(w, 1);
    *pp = p;
    return rc ? AW_ENOMEM : 1;
}

int aw_mcp_parse_spec(const char *spec, const aw_allocator *alloc, aw_json_doc **out, aw_error *err)
{
    aw_error_clear(err);
    *out = NULL;
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec)
        return aw_rt_error(err, AW_ESYNTAX, "--mcp wants NAME=COMMAND ARGS..., not '%.60s'", spec);
    for (const char *p = spec; p < eq; p++)
        if (*p == ' ' || *p == '\t')
            return aw_rt_error(err, AW_ESYNTAX, "--mcp: the server name '%.*s' has a blank in it", (int)(eq - spec),
                               spec);
    aw_json_doc *d = aw_json_doc_new(alloc);
    aw_json_value *root = d ? aw_json_new_object(d) : NULL;
    aw_json_value *servers = d ? aw_json_new_object(d) : NULL;
    aw_json_value *entry = d ? aw_json_new_object(d) : NULL;
    aw_json_value *args = d ? aw_json_new_array(d) : NULL;
    aw_buf w;
    aw_buf_init(&w, alloc);
    int rc = root && servers && entry && args ? 0 : AW_ENOMEM;
    const char *p = eq + 1;
    size_t words = 0;
    while (!rc) {
        int got = next_word(&p, &w);
        if (got <= 0) {
            rc = got;
            break;
        }
        if (++words > MAX_SPEC_WORDS) {
            rc = AW_ELIMIT;
            break;
        }
        if (words == 1) {
            rc = aw_json_object_set_string(d, entry, "command", w.data, w.len);
        } else {
            aw_json_value *s = aw_json_new_string(d, w.data, w.len);
            rc = !s || aw_json_array_push(d, args, s) ? AW_ENOMEM : 0;
        }
    }
    aw_buf_free(&w);
    if (!rc && words == 0)
        rc = AW_EINVAL;
    if (!rc)
        rc = aw_json_object_set(d, entry, "args", 4, args) || aw_json_object_set(d, servers, spec, (size_t)(eq - spec), entry) ||
                     aw_json_object_set(d, root, "mcpServers", 10, servers)
                 ? AW_ENOMEM
                 : 0;
    if (rc) {
        aw_json_doc_free(d);
        if (rc == AW_ESYNTAX)
            return aw_rt_error(err, rc, "--mcp %.*s: a quote is not closed", (int)(eq - spec), spec);
        if (rc == AW_ELIMIT)
            return aw_rt_error(err, rc, "--mcp %.*s: more than %d words", (int)(eq - spec), spec, MAX_SPEC_WORDS);
        if (rc == AW_EINVAL)
            return aw_rt_error(err, AW_ESYNTAX, "--mcp %.*s: no command after '='", (int)(eq - spec), spec);
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    }
    aw_json_doc_set_root(d, root);
    *out = d;
    return 0;
}
