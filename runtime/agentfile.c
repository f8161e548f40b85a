/* Agent files: the frontmatter split from the body, read as YAML, and
 * every key checked and turned into an aw_agent_def (agentfile.h). The
 * keys that name other files are read in agentfile_refs.c.
 *
 * A problem never stops the reading: the file is read to its end, so
 * `agent check` lists everything wrong at once. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal/agentfile_impl.h"
#include "internal/rt_util.h"

/* ---- problems ------------------------------------------------------------------ */

static int add_problem(aw_agent_file *f, aw_agent_severity sev, const char *file, size_t line, size_t column,
                       const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (f->nproblems == f->cap_problems) {
        size_t cap = f->cap_problems ? f->cap_problems * 2 : 8;
        aw_agent_problem *p = aw_realloc(f->alloc, f->problems, cap * sizeof *p);
        if (!p)
            return AW_ENOMEM;
        f->problems = p;
        f->cap_problems = cap;
    }
    const char *text = aw_arena_strdup(&f->arena, msg);
    if (!text)
        return AW_ENOMEM;
    f->problems[f->nproblems++] = (aw_agent_problem){sev, file, line, column, text};
    if (sev == AW_AGENT_ERROR)
        f->failed = true;
    return 0;
}

int aw__agent_problem_in(aw_agent_file *f, aw_agent_severity sev, const char *file, size_t line, size_t column,
                         const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = add_problem(f, sev, file, line, column, fmt, ap);
    va_end(ap);
    return rc;
}

#define ERROR_AT(node, ...) aw__agent_problem(f, AW_AGENT_ERROR, node, __VA_ARGS__)
#define WARN_AT(node, ...) aw__agent_problem(f, AW_AGENT_WARNING, node, __VA_ARGS__)

char *aw__agent_path(aw_agent_file *f, const char *p)
{
    if (p[0] == '/' || !strcmp(f->def.dir, "."))
        return aw_arena_strdup(&f->arena, p);
    return aw_arena_printf(&f->arena, "%s/%s", f->def.dir, p);
}

/* ---- values --------------------------------------------------------------------------- */

/* A string value, or a problem naming the key and what was there. */
static const char *string_of(aw_agent_file *f, const char *key, const aw_yaml_node *v, int *rc)
{
    if (aw_yaml_is_string(v))
        return v->text;
    *rc = ERROR_AT(v, "%s must be a string, not %s", key, aw_yaml_describe(v));
    return NULL;
}

/* One of the words given, as its index; -1 (after a problem) otherwise. */
static int word_of(aw_agent_file *f, const char *key, const aw_yaml_node *v, const char *const *words, int *rc)
{
    const char *s = string_of(f, key, v, rc);
    if (!s)
        return -1;
    char list[256] = "";
    for (int i = 0; words[i]; i++) {
        if (!strcmp(s, words[i]))
            return i;
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", words[i]);
    }
    *rc = ERROR_AT(v, "%s is one of %s, not '%s'", key, list, s);
    return -1;
}

static bool integer_in(const aw_yaml_node *v, int64_t min, int64_t max, int64_t *out)
{
    if (v->kind != AW_YAML_SCALAR || v->type != AW_YAML_INT || v->i < min || v->i > max)
        return false;
    *out = v->i;
    return true;
}

static int read_count(aw_agent_file *f, const char *key, const aw_yaml_node *v, int64_t max, int64_t *out)
{
    if (integer_in(v, 1, max, out))
        return 0;
    return ERROR_AT(v, "%s must be a whole number from 1 to %lld, not %s%s%s", key, (long long)max,
                    v->kind == AW_YAML_SCALAR ? "'" : "", v->kind == AW_YAML_SCALAR ? v->text : aw_yaml_describe(v),
                    v->kind == AW_YAML_SCALAR ? "'" : "");
}

/* "500ms", "30s", "2m", "1h": a duration in milliseconds, -1 when it is not one. */
static int64_t duration_ms(const char *s)
{
    static const struct {
        const char *unit;
        int64_t ms;
    } units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
    size_t digits = strspn(s, "0123456789");
    if (!digits || digits > 9)
        return -1;
    int64_t n = 0;
    for (size_t i = 0; i < digits; i++)
        n = n * 10 + (s[i] - '0');
    for (size_t u = 0; u < sizeof units / sizeof *units; u++)
        if (!strcmp(s + digits, units[u].unit))
            return n * units[u].ms;
    return -1;
}

/* ---- the keys ----------------------------------------------------------------------------- */

static int read_name(aw_agent_file *f, const aw_yaml_node *v)
{
    int rc = 0;
    const char *s = string_of(f, "name", v, &rc);
    if (!s)
        return rc;
    /* the tool agent__NAME must fit the 64 characters providers allow */
    if (!*s || strlen(s) > 57)
        return ERROR_AT(v, "name must be 1 to 57 characters long");
    f->def.name = s;
    return 0;
}

static int read_description(aw_agent_file *f, const aw_yaml_node *v)
{
    int rc = 0;
    const char *s = string_of(f, "description", v, &rc);
    if (s)
        f->def.description = s;
    return rc;
}

static int read_model(aw_agent_file *f, const aw_yaml_node *v)
{
    int rc = 0;
    const char *s = string_of(f, "model", v, &rc);
    if (!s)
        return rc;
    if (!aw_agent_model_known(s))
        return ERROR_AT(v,
                        "model: '%s' is not a model this build can run (a provider: openai:MODEL, anthropic:MODEL, "
                        "claude-cli, codex-cli, exec:COMMAND, replay:FILE; a Claude model: sonnet, opus, haiku, "
                        "claude-...; or inherit)",
                        s);
    f->def.model = s;
    return 0;
}

/* A string or a list of strings, as an array in the arena. */
static int string_list(aw_agent_file *f, const char *key, const aw_yaml_node *v, const char ***out, size_t *count,
                       const aw_yaml_node ***nodes)
{
    size_t n = v->kind == AW_YAML_SEQUENCE ? v->count : 1;
    const char **list = aw_arena_alloc(&f->arena, (n ? n : 1) * sizeof *list);
    const aw_yaml_node **where = aw_arena_alloc(&f->arena, (n ? n : 1) * sizeof *where);
    if (!list || !where)
        return AW_ENOMEM;
    *count = 0;
    for (size_t i = 0; i < n; i++) {
        const aw_yaml_node *item = v->kind == AW_YAML_SEQUENCE ? v->items[i] : v;
        if (!aw_yaml_is_string(item)) {
            int rc = v->kind == AW_YAML_SEQUENCE
                         ? ERROR_AT(item, "%s[%zu] must be a string, not %s", key, i, aw_yaml_describe(item))
                         : ERROR_AT(item, "%s must be a string or a list of strings, not %s", key, aw_yaml_describe(item));
            if (rc)
                return rc;
            continue;
        }
        where[*count] = item;
        list[(*count)++] = item->text;
    }
    *out = list;
    if (nodes)
        *nodes = where;
    return 0;
}

static int read_fallback(aw_agent_file *f, const aw_yaml_node *v)
{
    const char **list = NULL; /* set when string_list returns 0 (gcc -O1 cannot tell) */
    const aw_yaml_node **where = NULL;
    size_t n = 0;
    int rc = string_list(f, "fallback", v, &list, &n, &where);
    for (size_t i = 0; !rc && i < n; i++)
        if (!strcmp(list[i], "inherit") || !aw_agent_model_known(list[i]))
            rc = ERROR_AT(where[i], "fallback: '%s' is not a model this build can run", list[i]);
    if (!rc) {
        f->def.fallbacks = list;
        f->def.fallback_count = n;
    }
    return rc;
}

/* Claude Code's own tools: a file written for it names them in `tools`;
 * agentwire has none of them (its tools come from MCP servers and tool
 * files), so they are left out with a warning rather than failing. */
static bool claude_code_builtin(const char *t)
{
    static const char *const builtins[] = {
        "Read", "Write", "Edit", "MultiEdit", "Bash", "BashOutput", "KillBash", "KillShell", "Glob", "Grep",
        "LS", "WebFetch", "WebSearch", "NotebookEdit", "NotebookRead", "TodoWrite", "TodoRead", "Task", "Agent",
        "ExitPlanMode", "SlashCommand", "Skill", "AskUserQuestion", "ListMcpResourcesTool", "ReadMcpResourceTool",
        "LSP", NULL};
    size_t n = strcspn(t, "(");
    for (size_t i = 0; builtins[i]; i++)
        if (strlen(builtins[i]) == n && !strncmp(builtins[i], t, n))
            return true;
    return false;
}

/* One entry of `tools` as a toolbox pattern: Claude Code names MCP tools
 * mcp__SERVER__TOOL (mcp__SERVER for all of a server's), agentwire
 * SERVER__TOOL. */
static const char *tool_pattern(aw_agent_file *f, const char *t, size_t n)
{
    if (n > 5 && !strncmp(t, "mcp__", 5)) {
        const char *rest = t + 5;
        size_t m = n - 5;
        for (size_t i = 0; i + 1 < m; i++)
            if (rest[i] == '_' && rest[i + 1] == '_')
                return aw_arena_strndup(&f->arena, rest, m);
        return aw_arena_printf(&f->arena, "%.*s__*", (int)m, rest);
    }
    return aw_arena_strndup(&f->arena, t, n);
}

static int read_tools(aw_agent_file *f, const aw_yaml_node *v)
{
    /* Claude Code's string form: "Read, Grep, Glob" */
    if (!aw_yaml_is_string(v) && v->kind != AW_YAML_SEQUENCE && !(v->kind == AW_YAML_SCALAR && v->type == AW_YAML_NULL))
        return ERROR_AT(v, "tools must be a list of tool names or a comma-separated string, not %s",
                        aw_yaml_describe(v));
    /* room for every comma-separated entry of every item */
    size_t items = v->kind == AW_YAML_SEQUENCE ? v->count : aw_yaml_is_string(v) ? 1 : 0, cap = 1;
    for (size_t i = 0; i < items; i++) {
        const aw_yaml_node *item = v->kind == AW_YAML_SEQUENCE ? v->items[i] : v;
        cap++;
        for (size_t k = 0; item->kind == AW_YAML_SCALAR && k < item->len; k++)
            cap += item->text[k] == ',';
    }
    const char **list = aw_arena_alloc(&f->arena, cap * sizeof *list);
    if (!list)
        return AW_ENOMEM;
    size_t n = 0;
    char builtins[512] = "";
    size_t nbuiltins = 0;
    for (size_t i = 0; i < items; i++) {
        const aw_yaml_node *item = v->kind == AW_YAML_SEQUENCE ? v->items[i] : v;
        if (!aw_yaml_is_string(item)) {
            int rc = ERROR_AT(item, "tools[%zu] must be a tool name, not %s", i, aw_yaml_describe(item));
            if (rc)
                return rc;
            continue;
        }
        const char *p = item->text;
        while (*p) {
            size_t len = strcspn(p, ",");
            const char *t = p;
            size_t tl = len;
            while (tl && (*t == ' ' || *t == '\t'))
                t++, tl--;
            while (tl && (t[tl - 1] == ' ' || t[tl - 1] == '\t'))
                tl--;
            p += len + (p[len] == ',');
            if (!tl)
                continue;
            char name[128];
            snprintf(name, sizeof name, "%.*s", (int)(tl < 127 ? tl : 127), t);
            if (claude_code_builtin(name)) {
                snprintf(builtins + strlen(builtins), sizeof builtins - strlen(builtins), "%s%s",
                         nbuiltins++ ? ", " : "", name);
                continue;
            }
            if (!(list[n++] = tool_pattern(f, t, tl)))
                return AW_ENOMEM;
        }
    }
    f->def.has_tools = true;
    f->def.tools = list;
    f->def.tool_count = n;
    f->tools_none = n == 0;
    if (nbuiltins && WARN_AT(v, "tools: %s %s Claude Code's built-in tool%s, which agentwire does not have: left out%s",
                             builtins, nbuiltins == 1 ? "is" : "are", nbuiltins == 1 ? "" : "s",
                             n ? "" : "; the agent gets no tools but its sub-agents (--allow-tools to choose others)"))
        return AW_ENOMEM;
    return 0;
}

static int read_transport(aw_agent_file *f, const aw_yaml_node *v)
{
    static const char *const words[] = {"native", "xml", "xml-final", NULL};
    static const aw_transport_mode modes[] = {AW_TRANSPORT_NATIVE, AW_TRANSPORT_XML, AW_TRANSPORT_XML_FINAL};
    int rc = 0, i = word_of(f, "transport", v, words, &rc);
    if (i >= 0) {
        f->def.has_transport = true;
        f->def.transport = modes[i];
    }
    return rc;
}

static int read_context(aw_agent_file *f, const aw_yaml_node *v)
{
    static const char *const words[] = {"messages", "xml", NULL};
    int rc = 0, i = word_of(f, "context", v, words, &rc);
    if (i >= 0) {
        f->def.has_context = true;
        f->def.context = i == 0 ? AW_CONTEXT_MESSAGES : AW_CONTEXT_XML;
    }
    return rc;
}

static int read_max_turns(aw_agent_file *f, const aw_yaml_node *v)
{
    int64_t n = 0;
    int rc = read_count(f, "maxTurns", v, 100000, &n);
    f->def.max_turns = (unsigned)n;
    return rc;
}

static int read_max_calls(aw_agent_file *f, const aw_yaml_node *v)
{
    int64_t n = 0;
    int rc = read_count(f, "maxToolCallsPerTurn", v, 999, &n);
    f->def.max_calls_per_turn = (unsigned)n;
    return rc;
}

static int read_max_tokens(aw_agent_file *f, const aw_yaml_node *v)
{
    int64_t n = 0;
    int rc = read_count(f, "maxTokens", v, 10000000, &n);
    f->def.max_tokens = (int)n;
    return rc;
}

static int read_tool_timeout(aw_agent_file *f, const aw_yaml_node *v)
{
    int64_t ms = -1;
    if (v->kind == AW_YAML_SCALAR && v->type == AW_YAML_INT)
        ms = v->i;
    else if (aw_yaml_is_string(v))
        ms = duration_ms(v->text);
    if (ms < 1 || ms > 7LL * 24 * 3600 * 1000)
        return ERROR_AT(v, "toolTimeout must be milliseconds (a whole number) or a duration such as 30s or 2m, "
                           "at most a week");
    f->def.tool_timeout_ms = ms;
    return 0;
}

static int read_format(aw_agent_file *f, const aw_yaml_node *v)
{
    int rc = 0;
    const char *s = string_of(f, "format", v, &rc);
    if (!s)
        return rc;
    int fmt = aw_report_format_parse(s, strlen(s));
    if (fmt < 0)
        return ERROR_AT(v, "format is one of markdown, text, json, tty, pipe, slack-block-kit, sub-agent, not '%s'", s);
    f->def.has_format = true;
    f->def.format = (aw_report_format)fmt;
    return 0;
}

static int read_temperature(aw_agent_file *f, const aw_yaml_node *v)
{
    if (v->kind != AW_YAML_SCALAR || (v->type != AW_YAML_INT && v->type != AW_YAML_FLOAT) || !(v->d >= 0 && v->d <= 2))
        return ERROR_AT(v, "temperature must be a number from 0 to 2");
    f->def.has_temperature = true;
    f->def.temperature = v->d;
    return 0;
}

static int read_disallowed(aw_agent_file *f, const aw_yaml_node *v)
{
    /* Claude Code's deny list. Ignoring a deny list silently would offer
     * what the author meant to forbid, so it is said plainly. */
    return WARN_AT(v, "disallowedTools is not supported: the tools it names are not denied; list the allowed ones "
                      "under tools");
}

typedef struct key_reader {
    const char *key;
    int (*read)(aw_agent_file *f, const aw_yaml_node *v);
} key_reader;

static const key_reader readers[] = {
    {"name", read_name},
    {"description", read_description},
    {"model", read_model},
    {"fallback", read_fallback},
    {"tools", read_tools},
    {"mcpServers", aw__agent_read_mcp},
    {"agents", aw__agent_read_agents},
    {"transport", read_transport},
    {"context", read_context},
    {"maxTurns", read_max_turns},
    {"maxToolCallsPerTurn", read_max_calls},
    {"toolTimeout", read_tool_timeout},
    {"format", read_format},
    {"schema", aw__agent_read_schema},
    {"inputSchema", aw__agent_read_input_schema},
    {"contract", aw__agent_read_contract},
    {"temperature", read_temperature},
    {"maxTokens", read_max_tokens},
    {"disallowedTools", read_disallowed},
};

static int read_keys(aw_agent_file *f)
{
    const aw_yaml_node *root = f->root;
    if (!root)
        return 0;
    if (root->kind != AW_YAML_MAPPING)
        return ERROR_AT(root, "the frontmatter must be KEY: VALUE lines (a mapping), not %s", aw_yaml_describe(root));
    char unknown[600] = "";
    size_t nunknown = 0;
    const aw_yaml_node *first_unknown = NULL;
    for (size_t k = 0; k < aw_yaml_pairs(root); k++) {
        const aw_yaml_node *key = aw_yaml_key(root, k), *value = aw_yaml_value(root, k);
        const key_reader *r = NULL;
        for (size_t i = 0; i < sizeof readers / sizeof *readers && !r; i++)
            if (strlen(readers[i].key) == key->len && !memcmp(readers[i].key, key->text, key->len))
                r = &readers[i];
        if (r) {
            if (r->read(f, value))
                return AW_ENOMEM;
            continue;
        }
        if (!first_unknown)
            first_unknown = key;
        if (strlen(unknown) < sizeof unknown - 100)
            snprintf(unknown + strlen(unknown), sizeof unknown - strlen(unknown), "%s%.60s (line %zu)",
                     nunknown ? ", " : "", key->text, key->line);
        nunknown++;
    }
    /* the keys that cannot go together */
    if (f->def.has_context && f->def.context == AW_CONTEXT_XML && f->def.has_transport &&
        f->def.transport == AW_TRANSPORT_NATIVE &&
        ERROR_AT(aw_yaml_get(root, "context"), "context: xml keeps the whole history in one message, which native "
                                                "tool calls cannot answer: use it with transport: xml or xml-final"))
        return AW_ENOMEM;
    /* once, listing them all: Claude Code's color, permissionMode, ... */
    if (nunknown && WARN_AT(first_unknown, "unknown key%s, ignored: %s%s", nunknown == 1 ? "" : "s", unknown,
                            strlen(unknown) >= sizeof unknown - 100 ? ", ..." : ""))
        return AW_ENOMEM;
    return 0;
}

/* ---- the file ---------------------------------------------------------------------------------- */

/* A line made of `---` (or the YAML end marker `...`) and blanks. */
static bool delimiter_line(const char *p, size_t n, bool closing)
{
    while (n && (p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    return n == 3 && (!memcmp(p, "---", 3) || (closing && !memcmp(p, "...", 3)));
}

/* The body as the system prompt: without the blank lines around it. */
static int set_body(aw_agent_file *f, const char *p, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n')
            start = i + 1;
        else if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
            break;
    }
    while (n > start && (p[n - 1] == '\n' || p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    if (n <= start) {
        start = n = 0;
    }
    f->def.system_prompt = aw_arena_strndup(&f->arena, p + start, n - start);
    return f->def.system_prompt ? 0 : AW_ENOMEM;
}

/* Split the frontmatter from the body and read it. */
static int read_text(aw_agent_file *f, const char *text, size_t len)
{
    const char *p = text;
    size_t n = len;
    if (n >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3))
        p += 3, n -= 3;
    const char *nl = memchr(p, '\n', n);
    size_t first = nl ? (size_t)(nl - p) : n;
    if (!delimiter_line(p, first, false))
        return set_body(f, p, n); /* no frontmatter: all of it is the prompt */
    size_t yaml_start = nl ? first + 1 : n, at = yaml_start, close = SIZE_MAX, after = n;
    while (at < n) {
        const char *e = memchr(p + at, '\n', n - at);
        size_t line_len = e ? (size_t)(e - (p + at)) : n - at;
        if (delimiter_line(p + at, line_len, true)) {
            close = at;
            after = e ? at + line_len + 1 : n;
            break;
        }
        at += line_len + 1;
    }
    if (close == SIZE_MAX) {
        aw_yaml_node line1 = {.line = 1, .column = 1};
        return ERROR_AT(&line1, "the frontmatter opened here is not closed by a line '---'");
    }
    aw_yaml_options yo = {.line_offset = 1};
    aw_error err;
    int rc = aw_yaml_read(p + yaml_start, close - yaml_start, &yo, &f->arena, &f->root, &err);
    if (rc == AW_ENOMEM)
        return rc;
    if (rc) {
        aw_yaml_node at_err = {.line = err.line, .column = err.column};
        if (ERROR_AT(err.line ? &at_err : NULL, "%s", err.message))
            return AW_ENOMEM;
        f->root = NULL;
    } else if (read_keys(f)) {
        return AW_ENOMEM;
    }
    return set_body(f, p + after, n - after);
}

/* "dir/reviewer.md" -> "reviewer" */
static const char *stem_of(aw_agent_file *f, const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n > 3 && !strcmp(base + n - 3, ".md"))
        n -= 3;
    if (n > 57)
        n = 57;
    return aw_arena_strndup(&f->arena, base, n ? n : 1);
}

/* The name as a tool name: what providers accept ([A-Za-z0-9_-]). */
static const char *tool_name_of(aw_agent_file *f, const char *name)
{
    char *t = aw_arena_printf(&f->arena, "agent__%s", name);
    for (char *c = t ? t + 7 : NULL; c && *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
              *c == '-'))
            *c = '_';
    return t;
}

static int set_path(aw_agent_file *f, const char *path)
{
    f->def.path = aw_arena_strdup(&f->arena, path);
    const char *slash = strrchr(path, '/');
    f->def.dir = !slash ? aw_arena_strdup(&f->arena, ".")
                        : aw_arena_strndup(&f->arena, path, slash == path ? 1 : (size_t)(slash - path));
    f->def.description = "";
    f->def.system_prompt = "";
    return f->def.path && f->def.dir ? 0 : AW_ENOMEM;
}

void aw_agent_file_free(aw_agent_file *f)
{
    if (!f)
        return;
    aw_json_doc_free(f->json);
    aw_free(f->alloc, f->problems);
    aw_arena_free(&f->arena);
    aw_free(f->alloc, f);
}

int aw_agent_file_parse(const char *text, size_t len, const char *path, const aw_agent_read_options *opts,
                        aw_agent_file **out, aw_error *err)
{
    aw_error_clear(err);
    *out = NULL;
    const aw_allocator *a = opts && opts->alloc ? opts->alloc : aw_allocator_default();
    aw_agent_file *f = aw_malloc(a, sizeof *f);
    if (!f)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    memset(f, 0, sizeof *f);
    f->alloc = a;
    aw_arena_init(&f->arena, a);
    int rc = set_path(f, path && *path ? path : "<agent>");
    if (!rc && !(f->json = aw_json_doc_new(a)))
        rc = AW_ENOMEM;
    if (!rc && len > AW_AGENT_FILE_MAX)
        rc = ERROR_AT(NULL, "the file is larger than %zu MiB", AW_AGENT_FILE_MAX >> 20);
    else if (!rc)
        rc = read_text(f, text, len);
    if (!rc && !f->def.name)
        rc = (f->def.name = stem_of(f, f->def.path)) ? 0 : AW_ENOMEM;
    if (!rc)
        rc = (f->def.tool_name = tool_name_of(f, f->def.name)) ? 0 : AW_ENOMEM;
    if (rc) {
        aw_agent_file_free(f);
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    }
    *out = f;
    for (size_t i = 0; i < f->nproblems; i++)
        if (f->problems[i].severity == AW_AGENT_ERROR) {
            aw_rt_error(err, AW_EVALID, "%s", f->problems[i].message);
            if (err) {
                err->line = f->problems[i].line;
                err->column = f->problems[i].column;
            }
            return AW_EVALID;
        }
    return 0;
}

int aw__agent_read_file(const char *path, aw_buf *out, aw_error *err)
{
    /* Opened without blocking and checked before reading: a FIFO or a
     * device named where a file belongs must not hang the reader, nor a
     * huge file fill the memory. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return aw_rt_error(err, AW_EINVAL, "%s: %s", path, strerror(errno));
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0)
        rc = aw_rt_error(err, AW_EINVAL, "%s: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = aw_rt_error(err, AW_EINVAL, "%s: not a regular file", path);
    else if ((uint64_t)st.st_size > AW_AGENT_FILE_MAX)
        rc = aw_rt_error(err, AW_ELIMIT, "%s: larger than %zu MiB", path, AW_AGENT_FILE_MAX >> 20);
    close(fd);
    if (!rc)
        rc = aw_rt_read_file(path, out, err);
    if (!rc && out->len > AW_AGENT_FILE_MAX)
        rc = aw_rt_error(err, AW_ELIMIT, "%s: larger than %zu MiB", path, AW_AGENT_FILE_MAX >> 20);
    return rc;
}

int aw_agent_file_read(const char *path, const aw_agent_read_options *opts, aw_agent_file **out, aw_error *err)
{
    *out = NULL;
    const aw_allocator *a = opts && opts->alloc ? opts->alloc : aw_allocator_default();
    aw_buf text;
    aw_buf_init(&text, a);
    int rc = aw__agent_read_file(path, &text, err);
    if (!rc)
        rc = aw_agent_file_parse(text.data ? text.data : "", text.len, path, opts, out, err);
    aw_buf_free(&text);
    return rc;
}

const aw_agent_def *aw_agent_file_def(const aw_agent_file *f) { return &f->def; }

const aw_agent_problem *aw_agent_file_problems(const aw_agent_file *f, size_t *count)
{
    *count = f->nproblems;
    return f->problems;
}

bool aw_agent_file_failed(const aw_agent_file *f) { return f->failed; }

bool aw_agent_file_where(const aw_agent_file *f, const char *key, size_t *line, size_t *column)
{
    const aw_yaml_node *v = aw_yaml_get(f->root, key);
    if (!v)
        return false;
    *line = v->line;
    *column = v->column;
    return true;
}
