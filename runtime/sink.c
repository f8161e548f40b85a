/* Choosing a sink by the form of its destination. */
#include <string.h>
#include <strings.h>

#include "agentwire/sink.h"
#include "internal/rt_util.h"

aw_sink *aw_sink_file_open(const char *path, const aw_allocator *alloc, aw_error *err);
aw_sink *aw_sink_redis_open(aw_loop *l, const char *url, const aw_sink_options *opts, aw_error *err);
aw_sink *aw_sink_webhook_open(aw_loop *l, const char *url, const aw_sink_options *opts, aw_error *err);

aw_sink *aw_sink_open(aw_loop *l, const char *dest, const aw_sink_options *opts, aw_error *err)
{
    const aw_allocator *alloc = opts ? opts->alloc : NULL;
    if (!dest || !*dest) {
        aw_rt_error(err, AW_EINVAL, "no destination given for the events");
        return NULL;
    }
    if (strcmp(dest, "-") == 0)
        return aw_sink_file_fd(1, "-", alloc, err);
    const char *colon = strstr(dest, "://");
    if (!colon)
        return aw_sink_file_open(dest, alloc, err);
    if (!l) {
        aw_rt_error(err, AW_EINVAL, "%s: a network destination needs a loop", dest);
        return NULL;
    }
    if (!strncasecmp(dest, "redis://", 8))
        return aw_sink_redis_open(l, dest, opts, err);
    if (!strncasecmp(dest, "http://", 7) || !strncasecmp(dest, "https://", 8))
        return aw_sink_webhook_open(l, dest, opts, err);
    aw_rt_error(err, AW_EINVAL,
                "%.*s: this kind of event destination is not supported (use -, a file, redis:// or http(s)://)",
                (int)(colon - dest), dest);
    return NULL;
}

size_t aw_sink_pending(const aw_sink *s) { return s && s->ops->pending ? s->ops->pending(s) : 0; }

void aw_sink_free(aw_sink *s)
{
    if (s)
        s->ops->destroy(s);
}
