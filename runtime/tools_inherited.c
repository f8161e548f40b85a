/* The tools a sub-agent inherits from the agent that calls it: a source
 * whose tools are another toolbox's, calls passed through to it
 * (internal/agent_impl.h). The servers are the caller's, so a sub-agent
 * starts no second copy of them. */
#include <string.h>

#include "internal/agent_impl.h"
#include "internal/rt_util.h"

typedef struct inherited {
    aw_tool_source base;
    aw_toolbox *from;
    const aw_allocator *alloc;
    char *exclude;
    aw_json_doc *doc;   /* the copied names, descriptions and schemas */
    aw_tool_def *defs;
    size_t count;
} inherited;

/* A copy of the tools offered now: `from` rebuilds its list when a server's
 * tools change, and this one must not point into the old one. */
static int snapshot(inherited *s)
{
    size_t n = 0;
    const aw_tool_def *defs = aw_toolbox_defs(s->from, &n);
    s->defs = aw_malloc(s->alloc, (n ? n : 1) * sizeof *s->defs);
    if (!s->defs)
        return AW_ENOMEM;
    size_t plen = strlen(s->exclude);
    for (size_t i = 0; i < n; i++) {
        const aw_tool_def *d = &defs[i];
        if (plen && d->name.len >= plen && !memcmp(d->name.ptr, s->exclude, plen))
            continue;
        aw_json_value *name = aw_json_new_string(s->doc, d->name.ptr, d->name.len);
        aw_json_value *desc = aw_json_new_string(s->doc, d->description.ptr, d->description.len);
        aw_json_value *schema = d->schema ? aw_json_copy(s->doc, d->schema) : NULL;
        if (!name || !desc || (d->schema && !schema))
            return AW_ENOMEM;
        s->defs[s->count++] = (aw_tool_def){{name->u.str.ptr, name->u.str.len}, {desc->u.str.ptr, desc->u.str.len}, schema};
    }
    return 0;
}

static int start(aw_tool_source *src, void (*ready)(void *, aw_tool_source *, const aw_error *), void *ctx)
{
    inherited *s = src->impl;
    if (snapshot(s)) {
        aw_error e;
        aw_rt_error(&e, AW_ENOMEM, "out of memory copying the inherited tools");
        s->count = 0;
        ready(ctx, src, &e);
        return 0;
    }
    ready(ctx, src, NULL);
    return 0;
}

static size_t count(const aw_tool_source *src) { return ((const inherited *)src->impl)->count; }

static const aw_tool_def *def(const aw_tool_source *src, size_t i) { return &((const inherited *)src->impl)->defs[i]; }

static int call(aw_tool_source *src, size_t i, const aw_json_value *args, const aw_tool_call_opts *opts,
                aw_tool_done_fn done, void *ctx, void **handle, aw_error *err)
{
    inherited *s = src->impl;
    aw_tool_call *c = NULL;
    /* no timeout here: the sub-agent's toolbox times the call */
    int rc = aw_toolbox_call(s->from, s->defs[i].name, args, 0, opts, done, ctx, &c, err);
    *handle = c;
    return rc;
}

static void cancel(aw_tool_source *src, void *handle)
{
    (void)src;
    aw_tool_call_cancel(handle);
}

static void destroy(aw_tool_source *src)
{
    inherited *s = src->impl;
    aw_json_doc_free(s->doc);
    aw_free(s->alloc, s->defs);
    aw_free(s->alloc, s->exclude);
    aw_free(s->alloc, s->base.name);
    aw_free(s->alloc, s);
}

static const aw_tool_source_ops inherited_ops = {"inherited", start, count, def, call, cancel, destroy};

aw_tool_source *aw__inherited_tools_new(aw_toolbox *from, const char *exclude_prefix, const aw_allocator *alloc,
                                        aw_error *err)
{
    inherited *s = aw_malloc(alloc, sizeof *s);
    if (!s) {
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    memset(s, 0, sizeof *s);
    s->base.ops = &inherited_ops;
    s->base.impl = s;
    s->from = from;
    s->alloc = alloc;
    s->base.name = aw_rt_strdup(alloc, "inherited tools");
    s->exclude = aw_rt_strdup(alloc, exclude_prefix ? exclude_prefix : "");
    s->doc = aw_json_doc_new(alloc);
    if (!s->base.name || !s->exclude || !s->doc) {
        destroy(&s->base);
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    return &s->base;
}
