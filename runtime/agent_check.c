/* `agentwire agent check`'s work (aw_agent_check): an agent file and,
 * depth first, every sub-agent file below it, read as a run would read
 * them, without running anything. Each file is visited once however many
 * agents list it; a file listed by one of its own descendants is a cycle
 * (a warning: the run refuses such a call, naming it), and a sub-agent
 * deeper than max_depth is one no call would reach. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/agent_impl.h"
#include "internal/rt_util.h"

#define MAX_CHECK_DEPTH 32

typedef struct checker {
    const aw_allocator *alloc;
    unsigned max_depth;
    aw_agent_problem_fn fn;
    void *ctx;
    bool failed;
    /* canonical paths of the files already checked, and of those above the
     * one being checked, with their names */
    char **seen;
    size_t nseen, cap_seen;
    const char *chain[MAX_CHECK_DEPTH + 2];
    const char *chain_names[MAX_CHECK_DEPTH + 2];
    size_t chain_len;
} checker;

static void tell(checker *c, aw_agent_severity sev, const char *file, size_t line, size_t column, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

static void tell(checker *c, aw_agent_severity sev, const char *file, size_t line, size_t column, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    aw_agent_problem p = {sev, file, line, column, msg};
    if (sev == AW_AGENT_ERROR)
        c->failed = true;
    c->fn(c->ctx, &p);
}

static bool seen(const checker *c, const char *canon)
{
    for (size_t i = 0; i < c->nseen; i++)
        if (!strcmp(c->seen[i], canon))
            return true;
    return false;
}

static int remember(checker *c, const char *canon)
{
    if (c->nseen == c->cap_seen) {
        size_t cap = c->cap_seen ? c->cap_seen * 2 : 16;
        char **s = aw_realloc(c->alloc, c->seen, cap * sizeof *s);
        if (!s)
            return AW_ENOMEM;
        c->seen = s;
        c->cap_seen = cap;
    }
    if (!(c->seen[c->nseen] = aw_rt_strdup(c->alloc, canon)))
        return AW_ENOMEM;
    c->nseen++;
    return 0;
}

static void check_mcp(checker *c, const aw_agent_def *def)
{
    for (size_t i = 0; i < def->mcp_count; i++) {
        aw_error e;
        if (aw__agent_mcp_check(def, i, c->alloc, &e))
            tell(c, AW_AGENT_ERROR, def->path, def->mcp[i].line, def->mcp[i].column, "mcpServers (%s): %s",
                 def->mcp[i].origin, e.message);
    }
}

static int visit(checker *c, const char *path, const char *canon, unsigned depth);

/* The sub-agents of f, each where the chain allows it. */
static int visit_children(checker *c, const aw_agent_file *f, unsigned depth)
{
    const aw_agent_def *def = aw_agent_file_def(f);
    size_t line = 0, column = 0;
    aw_agent_file_where(f, "agents", &line, &column);
    char *names[64]; /* the siblings' tool names, compared as they come */
    const char *paths[64];
    size_t nnames = 0;
    int rc = 0;
    for (size_t i = 0; i < def->agent_count && !rc; i++) {
        char buf[PATH_MAX];
        const char *canon = realpath(def->agents[i], buf) ? buf : def->agents[i];
        bool cycle = false;
        char path[600] = "";
        for (size_t k = 0; k < c->chain_len && !cycle; k++)
            if (!strcmp(c->chain[k], canon)) {
                cycle = true;
                size_t n = 0;
                for (size_t j = k; j < c->chain_len && n + 1 < sizeof path; j++)
                    n += (size_t)snprintf(path + n, sizeof path - n, "%s -> ", c->chain_names[j]);
                if (n + 1 < sizeof path)
                    snprintf(path + n, sizeof path - n, "%s", c->chain_names[k]);
            }
        if (cycle) {
            tell(c, AW_AGENT_WARNING, def->path, line, column,
                 "agents: %s is a cycle: the run refuses that call (an agent may not call itself)", path);
            continue;
        }
        if (depth + 1 > c->max_depth) {
            tell(c, AW_AGENT_WARNING, def->path, line, column,
                 "agents: %s would be level %u, deeper than the limit of %u (--max-depth): calls to it are refused",
                 def->agents[i], depth + 1, c->max_depth);
            continue;
        }
        /* two sub-agents of one name would be one tool */
        aw_agent_read_options ro = {.alloc = c->alloc};
        aw_agent_file *child = NULL;
        aw_error e;
        if ((rc = aw_agent_file_read(def->agents[i], &ro, &child, &e)) == AW_ENOMEM)
            break;
        rc = 0;
        if (child && nnames < sizeof names / sizeof *names) {
            const char *tool = aw_agent_file_def(child)->tool_name;
            for (size_t k = 0; k < nnames; k++)
                if (!strcmp(names[k], tool))
                    tell(c, AW_AGENT_ERROR, def->path, line, column, "agents: %s and %s are both offered as %s",
                         paths[k], def->agents[i], tool);
            if ((names[nnames] = aw_rt_strdup(c->alloc, tool)))
                paths[nnames++] = def->agents[i];
            else
                rc = AW_ENOMEM;
        }
        aw_agent_file_free(child);
        if (!rc)
            rc = visit(c, def->agents[i], canon, depth + 1);
    }
    for (size_t k = 0; k < nnames; k++)
        aw_free(c->alloc, names[k]);
    return rc;
}

static int visit(checker *c, const char *path, const char *canon, unsigned depth)
{
    if (seen(c, canon))
        return 0;
    if (remember(c, canon))
        return AW_ENOMEM;
    aw_agent_read_options ro = {.alloc = c->alloc};
    aw_agent_file *f = NULL;
    aw_error e;
    int rc = aw_agent_file_read(path, &ro, &f, &e);
    if (rc == AW_ENOMEM)
        return rc;
    if (!f) {
        tell(c, AW_AGENT_ERROR, path, 0, 0, "%s", e.message);
        return 0;
    }
    size_t n = 0;
    const aw_agent_problem *p = aw_agent_file_problems(f, &n);
    for (size_t i = 0; i < n; i++) {
        if (p[i].severity == AW_AGENT_ERROR)
            c->failed = true;
        c->fn(c->ctx, &p[i]);
    }
    const aw_agent_def *def = aw_agent_file_def(f);
    check_mcp(c, def);
    rc = 0;
    if (def->agent_count && c->chain_len < MAX_CHECK_DEPTH + 1) {
        c->chain[c->chain_len] = canon;
        c->chain_names[c->chain_len++] = def->name;
        rc = visit_children(c, f, depth);
        c->chain_len--;
    }
    aw_agent_file_free(f);
    return rc;
}

int aw_agent_check(const char *path, unsigned max_depth, const aw_allocator *alloc, aw_agent_problem_fn fn,
                   void *ctx, aw_error *err)
{
    aw_error_clear(err);
    checker c;
    memset(&c, 0, sizeof c);
    c.alloc = alloc ? alloc : aw_allocator_default();
    c.max_depth = max_depth ? max_depth : AW_AGENT_DEFAULT_MAX_DEPTH;
    if (c.max_depth > MAX_CHECK_DEPTH)
        c.max_depth = MAX_CHECK_DEPTH;
    c.fn = fn;
    c.ctx = ctx;
    char buf[PATH_MAX];
    int rc = visit(&c, path, realpath(path, buf) ? buf : path, 0);
    for (size_t i = 0; i < c.nseen; i++)
        aw_free(c.alloc, c.seen[i]);
    aw_free(c.alloc, c.seen);
    if (rc)
        return aw_rt_error(err, rc, "out of memory");
    if (c.failed)
        return aw_rt_error(err, AW_EVALID, "%s: the agent has problems", path);
    return 0;
}
