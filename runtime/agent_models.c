/* Which models an agent file's agent runs on (agentfile.h, "models"): a
 * provider spec as written, `inherit`, or a Claude model name (Claude
 * Code's sonnet, opus, haiku or a claude-... ID) mapped onto the provider
 * the command line chose, else onto the Anthropic API. */
#include <stdlib.h>
#include <string.h>

#include "agentwire/agentfile.h"
#include "internal/rt_util.h"

#define MAX_MODELS 16

/* The kind part of spec ("openai" of "openai:gpt-4o") matched against
 * aw_provider_kinds, whose entries read "openai:MODEL   what it is": true
 * when known, *needs_arg when the kind takes a MODEL or COMMAND. */
static bool provider_kind(const char *spec, bool *needs_arg)
{
    size_t kind_len = strcspn(spec, ":");
    for (const char *const *k = aw_provider_kinds; *k; k++) {
        size_t n = strcspn(*k, ": ");
        if (n == kind_len && !strncmp(*k, spec, n)) {
            *needs_arg = (*k)[n] == ':';
            return true;
        }
    }
    return false;
}

static bool claude_alias(const char *s) { return !strcmp(s, "sonnet") || !strcmp(s, "opus") || !strcmp(s, "haiku"); }

/* claude-... written as Anthropic writes its model IDs. */
static bool claude_id(const char *s)
{
    if (strncmp(s, "claude-", 7) != 0 || !s[7])
        return false;
    return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789.-_@") == strlen(s);
}

static bool claude_name(const char *s) { return claude_alias(s) || claude_id(s); }

bool aw_agent_model_known(const char *spec)
{
    if (!spec || !*spec)
        return false;
    bool needs_arg = false;
    if (provider_kind(spec, &needs_arg)) {
        const char *colon = strchr(spec, ':');
        return !needs_arg || (colon && colon[1]);
    }
    return !strcmp(spec, "inherit") || claude_name(spec);
}

/* An alias's model ID: Claude Code's own variables first. */
static const char *alias_id(const char *alias)
{
    static const struct {
        const char *alias, *env, *id;
    } ids[] = {
        {"sonnet", "ANTHROPIC_DEFAULT_SONNET_MODEL", "claude-sonnet-4-6"},
        {"opus", "ANTHROPIC_DEFAULT_OPUS_MODEL", "claude-opus-4-6"},
        {"haiku", "ANTHROPIC_DEFAULT_HAIKU_MODEL", "claude-haiku-4-5"},
    };
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++)
        if (!strcmp(alias, ids[i].alias)) {
            const char *e = getenv(ids[i].env);
            return e && *e ? e : ids[i].id;
        }
    return alias;
}

typedef struct spec_list {
    const aw_allocator *alloc;
    char **items;
    size_t count;
    int rc;
} spec_list;

static void add(spec_list *l, const char *spec, size_t n)
{
    if (l->rc)
        return;
    for (size_t i = 0; i < l->count; i++)
        if (strlen(l->items[i]) == n && !strncmp(l->items[i], spec, n))
            return; /* the same model twice is tried once */
    if (l->count == MAX_MODELS) {
        l->rc = AW_ELIMIT;
        return;
    }
    if (!(l->items[l->count] = aw_rt_strndup(l->alloc, spec, n))) {
        l->rc = AW_ENOMEM;
        return;
    }
    l->count++;
}

static void add_all(spec_list *l, const char *const *specs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        add(l, specs[i], strlen(specs[i]));
}

static void add_joined(spec_list *l, const char *a, const char *b)
{
    aw_buf s;
    aw_buf_init(&s, l->alloc);
    if (aw_buf_append_str(&s, a) || aw_buf_append_str(&s, b))
        l->rc = l->rc ? l->rc : AW_ENOMEM;
    else
        add(l, s.data, s.len);
    aw_buf_free(&s);
}

static void resolve(spec_list *l, const aw_agent_def *def, const aw_agent_models *ctx, const char *spec)
{
    if (!spec || !strcmp(spec, "inherit")) {
        add_all(l, ctx->inherit, ctx->inherit_count);
        return;
    }
    bool needs_arg;
    if (!provider_kind(spec, &needs_arg) && claude_name(spec)) {
        const char *cl = ctx->command_line_count ? ctx->command_line[0] : NULL;
        if (cl && !strncmp(cl, "claude-cli", 10) && (cl[10] == 0 || cl[10] == ':'))
            add_joined(l, "claude-cli:", spec); /* the claude command knows its aliases */
        else if (!cl || (!strncmp(cl, "anthropic", 9) && cl[9] == ':'))
            add_joined(l, "anthropic:", alias_id(spec));
        else
            add_all(l, ctx->command_line, ctx->command_line_count); /* the command line chose the provider */
        return;
    }
    /* a recorded session next to the agent file that plays it */
    if (!strncmp(spec, "replay:", 7) && spec[7] != '/' && strcmp(def->dir, ".") != 0) {
        aw_buf p;
        aw_buf_init(&p, l->alloc);
        if (aw_buf_printf(&p, "replay:%s/", def->dir) || aw_buf_append_str(&p, spec + 7))
            l->rc = l->rc ? l->rc : AW_ENOMEM;
        else
            add(l, p.data, p.len);
        aw_buf_free(&p);
        return;
    }
    add(l, spec, strlen(spec));
}

void aw_agent_specs_free(const aw_allocator *alloc, char **specs, size_t count)
{
    for (size_t i = 0; i < count; i++)
        aw_free(alloc, specs[i]);
    aw_free(alloc, specs);
}

int aw_agent_resolve_models(const aw_agent_def *def, const aw_agent_models *ctx, const aw_allocator *alloc,
                            char ***specs, size_t *count, aw_error *err)
{
    *specs = NULL;
    *count = 0;
    spec_list l = {alloc, aw_malloc(alloc, MAX_MODELS * sizeof(char *)), 0, 0};
    if (!l.items)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    resolve(&l, def, ctx, def->model);
    for (size_t i = 0; i < def->fallback_count; i++)
        resolve(&l, def, ctx, def->fallbacks[i]);
    if (!l.rc && !l.count)
        l.rc = aw_rt_error(err, AW_EINVAL,
                           "%s: no model: the file names none%s and there is none to inherit (--model PROVIDER[:MODEL])",
                           def->path, def->model ? " but inherit" : "");
    else if (l.rc == AW_ELIMIT)
        aw_rt_error(err, AW_EINVAL, "%s: more than %d models with the fallbacks", def->path, MAX_MODELS);
    else if (l.rc)
        aw_rt_error(err, l.rc, "out of memory");
    if (l.rc) {
        aw_agent_specs_free(alloc, l.items, l.count);
        return l.rc == AW_ELIMIT ? AW_EINVAL : l.rc;
    }
    *specs = l.items;
    *count = l.count;
    return 0;
}

int aw_agent_allow_patterns(const aw_agent_def *def, const aw_allocator *alloc, const char ***patterns,
                            size_t *count, bool *none)
{
    *patterns = NULL;
    *count = 0;
    *none = false;
    if (!def->has_tools)
        return 0;
    size_t n = def->tool_count + (def->agent_count ? 1 : 0);
    *none = def->tool_count == 0;
    if (!n)
        return 0;
    const char **p = aw_malloc(alloc, n * sizeof *p);
    if (!p)
        return AW_ENOMEM;
    for (size_t i = 0; i < def->tool_count; i++)
        p[i] = def->tools[i];
    if (def->agent_count)
        p[def->tool_count] = "agent__*";
    *patterns = p;
    *count = n;
    return 0;
}
