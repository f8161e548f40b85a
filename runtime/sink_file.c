/* The file sink: one envelope per line, written as it happens (a line is
 * one write(2), so a reader following the file never sees half of one).
 *
 * A pipe, a FIFO, a socket or a terminal is written without blocking: a
 * reader that stalls must not stall the run. What the pipe does not take
 * waits in a queue (the rest of a line always, so the stream stays whole
 * lines; new lines up to QUEUE_MAX), is written at the next envelope and
 * at the end (flush, within its timeout); past that, envelopes are
 * dropped and counted. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agentwire/buf.h"
#include "agentwire/sink.h"
#include "internal/rt_util.h"

#define QUEUE_MAX (1u << 20)

typedef struct file_sink {
    aw_sink base;
    const aw_allocator *alloc;
    int fd;
    bool owned;
    bool nonblocking;    /* a pipe-like destination, written without blocking */
    aw_buf line;
    aw_buf queue;        /* bytes a pipe has not taken yet */
    size_t queue_start;  /* written bytes at the front of queue */
} file_sink;

/* Write what the pipe takes now; the count written, or -1 with errno for
 * an error other than a full pipe. */
static ssize_t write_some(int fd, const char *p, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = aw_rt_write_nosigpipe(fd, p + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (w < 0)
            return -1;
        done += (size_t)w;
    }
    return (ssize_t)done;
}

/* Move the queue into the pipe as far as it goes. */
static int drain(file_sink *f)
{
    size_t pending = f->queue.len - f->queue_start;
    if (!pending)
        return 0;
    ssize_t w = write_some(f->fd, f->queue.data + f->queue_start, pending);
    if (w < 0)
        return -1;
    f->queue_start += (size_t)w;
    if (f->queue_start == f->queue.len) {
        aw_buf_clear(&f->queue);
        f->queue_start = 0;
    }
    return 0;
}

static int queue_bytes(file_sink *f, const char *p, size_t n)
{
    if (f->queue_start && f->queue_start == f->queue.len) {
        aw_buf_clear(&f->queue);
        f->queue_start = 0;
    }
    return aw_buf_append(&f->queue, p, n);
}

static int send_nonblocking(aw_sink *s, file_sink *f, aw_error *err)
{
    if (drain(f))
        goto failed;
    size_t pending = f->queue.len - f->queue_start;
    if (pending) {
        /* the reader is behind: queue whole lines up to the bound */
        if (pending + f->line.len > QUEUE_MAX) {
            s->dropped++;
            return 0;
        }
        if (queue_bytes(f, f->line.data, f->line.len))
            return aw_rt_error(err, AW_ENOMEM, "out of memory");
        s->sent++;
        return 0;
    }
    ssize_t w = write_some(f->fd, f->line.data, f->line.len);
    if (w < 0)
        goto failed;
    /* a line begun is finished later, whatever the bound */
    if ((size_t)w < f->line.len && queue_bytes(f, f->line.data + w, f->line.len - (size_t)w))
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    s->sent++;
    return 0;
failed:
    s->dropped++;
    return aw_rt_error(err, AW_EINVAL, "%s: %s", s->name, strerror(errno));
}

static int file_send(aw_sink *s, const char *channel, const aw_json_value *env, aw_error *err)
{
    (void)channel;
    file_sink *f = s->impl;
    aw_buf_clear(&f->line);
    if (aw_json_write(env, NULL, &f->line, err) || aw_buf_putc(&f->line, '\n'))
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    if (f->nonblocking)
        return send_nonblocking(s, f, err);
    if (aw_rt_write_all(f->fd, f->line.data, f->line.len)) {
        s->dropped++;
        return aw_rt_error(err, AW_EINVAL, "%s: %s", s->name, strerror(errno));
    }
    s->sent++;
    return 0;
}

static int file_flush(aw_sink *s, int64_t timeout_ms, aw_error *err)
{
    file_sink *f = s->impl;
    int64_t end = aw_loop_clock() + (timeout_ms > 0 ? timeout_ms : 0);
    while (f->queue.len > f->queue_start) {
        int64_t left = end - aw_loop_clock();
        struct pollfd p = {f->fd, POLLOUT, 0};
        if (left <= 0 || (poll(&p, 1, (int)left) < 0 && errno != EINTR))
            break;
        if (drain(f))
            break;
    }
    if (f->queue.len > f->queue_start) {
        /* given up: the reader never took them */
        s->dropped++;
        aw_buf_clear(&f->queue);
        f->queue_start = 0;
    }
    if (f->owned && !f->nonblocking && fsync(f->fd) != 0 && errno != EINVAL && errno != EROFS)
        return aw_rt_error(err, AW_EINVAL, "%s: %s", s->name, strerror(errno));
    return 0;
}

static void file_destroy(aw_sink *s)
{
    file_sink *f = s->impl;
    if (f->owned)
        close(f->fd);
    aw_buf_free(&f->line);
    aw_buf_free(&f->queue);
    aw_free(f->alloc, s->name);
    aw_free(f->alloc, f);
}

/* Bytes of lines a stalled reader has not taken count as one waiting. */
static size_t file_pending(const aw_sink *s)
{
    const file_sink *f = s->impl;
    return f->queue.len > f->queue_start ? 1 : 0;
}

static const aw_sink_ops file_ops = {"file", file_send, file_flush, file_destroy, file_pending};

static bool pipe_like(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode));
}

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
    aw_buf_init(&f->queue, alloc);
    if (!f->base.name) {
        aw_free(alloc, f);
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    /* An fd handed in may be shared (stdout): its own O_NONBLOCK is not
     * ours to set, so a pipe-like one is opened again, a description of
     * our own (Linux: /proc/self/fd of a pipe opens the same pipe). */
    if (pipe_like(fd)) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        int own = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (own >= 0) {
            if (f->owned)
                close(fd);
            f->fd = own;
            f->owned = true;
            f->nonblocking = true;
        }
    }
    return &f->base;
}

aw_sink *aw_sink_file_open(const char *path, const aw_allocator *alloc, aw_error *err)
{
    /* O_NONBLOCK: a FIFO nobody reads fails at once (ENXIO) instead of
     * blocking here; regular files ignore it */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0644);
    if (fd < 0) {
        aw_rt_error(err, AW_EINVAL, "%s: %s", path,
                    errno == ENXIO ? "a FIFO nobody reads (start its reader first)" : strerror(errno));
        return NULL;
    }
    bool pipe = pipe_like(fd);
    if (!pipe)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    aw_sink *s = aw_sink_file_fd(pipe ? -1 : fd, path, alloc, err);
    if (!s) {
        close(fd);
        return NULL;
    }
    file_sink *f = s->impl;
    f->fd = fd;
    f->owned = true;
    f->nonblocking = pipe;
    return s;
}
