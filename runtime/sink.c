/* Choosing a sink by the form of its destination. */
#include <string.h>

#include "agentwire/sink.h"
#include "internal/rt_util.h"

aw_sink *aw_sink_file_open(const char *path, const aw_allocator *alloc, aw_error *err);

aw_sink *aw_sink_open(aw_loop *l, const char *dest, const aw_sink_options *opts, aw_error *err)
{
    (void)l;
    const aw_allocator *alloc = opts ? opts->alloc : NULL;
    if (!dest || !*dest) {
        aw_rt_error(err, AW_EINVAL, "no destination given for the events");
        return NULL;
    }
    if (strcmp(dest, "-") == 0)
        return aw_sink_file_fd(1, "-", alloc, err);
    const char *colon = strstr(dest, "://");
    if (colon) {
        aw_rt_error(err, AW_EINVAL, "%.*s: this kind of event destination is not supported (use - or a file)",
                    (int)(colon - dest), dest);
        return NULL;
    }
    return aw_sink_file_open(dest, alloc, err);
}

void aw_sink_free(aw_sink *s)
{
    if (s)
        s->ops->destroy(s);
}
