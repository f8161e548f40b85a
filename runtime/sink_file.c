/* The file sink: one envelope per line, written as it happens (a line is
 * one write(2), so a reader following the file never sees half of one). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "agentwire/buf.h"
#include "agentwire/sink.h"
#include "internal/rt_util.h"

typedef struct file_sink {
    aw_sink base;
    const aw_allocator *alloc;
    int fd;
    bool owned;
    aw_buf line;
} file_sink;

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = aw_rt_write_nosigpipe(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int file_send(aw_sink *s, const char *channel, const aw_json_value *env, aw_error *err)
{
    (void)channel;
    file_sink *f = s->impl;
    aw_buf_clear(&f->line);
    if (aw_json_write(env, NULL, &f->line, err) || aw_buf_putc(&f->line, '\n'))
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    if (write_all(f->fd, f->line.data, f->line.len)) {
        s->dropped++;
        return aw_rt_error(err, AW_EINVAL, "%s: %s", s->name, strerror(errno));
    }
    s->sent++;
    return 0;
}

static int file_flush(aw_sink *s, int64_t timeout_ms, aw_error *err)
{
    (void)timeout_ms;
    file_sink *f = s->impl;
    if (f->owned && fsync(f->fd) != 0 && errno != EINVAL && errno != EROFS)
        return aw_rt_error(err, AW_EINVAL, "%s: %s", s->name, strerror(errno));
    return 0;
}

static void file_destroy(aw_sink *s)
{
    file_sink *f = s->impl;
    if (f->owned)
        close(f->fd);
    aw_buf_free(&f->line);
    aw_free(f->alloc, s->name);
    aw_free(f->alloc, f);
}

static const aw_sink_ops file_ops = {"file", file_send, file_flush, file_destroy};

aw_sink *aw_sink_file_fd(int fd, const char *name, const aw_allocator *alloc, aw_error *err)
{
    file_sink *f = aw_malloc(alloc, sizeof *f);
    if (!f) {
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    memset(f, 0, sizeof *f);
    f->alloc = alloc;
    f->fd = fd;
    f->base.ops = &file_ops;
    f->base.impl = f;
    f->base.name = aw_rt_strdup(alloc, name);
    aw_buf_init(&f->line, alloc);
    if (!f->base.name) {
        aw_free(alloc, f);
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    return &f->base;
}

aw_sink *aw_sink_file_open(const char *path, const aw_allocator *alloc, aw_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        aw_rt_error(err, AW_EINVAL, "%s: %s", path, strerror(errno));
        return NULL;
    }
    aw_sink *s = aw_sink_file_fd(fd, path, alloc, err);
    if (!s) {
        close(fd);
        return NULL;
    }
    ((file_sink *)s->impl)->owned = true;
    return s;
}
