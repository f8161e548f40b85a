/* Helpers shared by the runtime: errors, pipe writes, the wall clock. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <fcntl.h>

#include "agentwire/buf.h"
#include "agentwire/loop.h"
#include "internal/rt_util.h"

int aw_rt_error(aw_error *err, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    err->code = code;
    err->offset = 0;
    err->line = 0;
    err->column = 0;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof err->message) {
        /* Cut back to a character boundary: drop continuation bytes. */
        size_t len = sizeof err->message - 1;
        while (len > 0 && ((unsigned char)err->message[len] & 0xC0) == 0x80)
            len--;
        err->message[len] = 0;
    }
    return code;
}

ssize_t aw_rt_write_nosigpipe(int fd, const void *p, size_t n)
{
    /* A program that ignores SIGPIPE (as Node does, and many servers) gets
     * EPIPE from a plain write: one call to ask instead of three around
     * every write, which on a busy pipe (an MCP server's stdin) is most of
     * the system calls. */
    struct sigaction now;
    if (sigaction(SIGPIPE, NULL, &now) == 0 && !(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_IGN)
        return write(fd, p, n);
    sigset_t pipe_only, old, pending;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    /* Was one already pending before we wrote? Then it is not ours to eat. */
    sigpending(&pending);
    int already = sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
    ssize_t w = write(fd, p, n);
    int saved = errno;
    if (w < 0 && saved == EPIPE && !already) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_only, NULL, &zero) < 0 && errno == EINTR)
            ;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = saved;
    return w;
}

int aw_rt_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = aw_rt_write_nosigpipe(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

int64_t aw_rt_json_int(const aw_json_value *v, int64_t dflt, int64_t lo, int64_t hi)
{
    if (!aw_json_is_number(v) || v->u.num.d != v->u.num.d)
        return dflt;
    if (v->flags & AW_JSON_F_INT)
        return v->u.num.i < lo ? lo : v->u.num.i > hi ? hi : v->u.num.i;
    double d = v->u.num.d;
    /* (double)hi may round up past hi: the comparison is made in double
     * and the end returned as the integer itself */
    return d <= (double)lo ? lo : d >= (double)hi ? hi : (int64_t)d;
}

int64_t aw_rt_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int aw_rt_read_file(const char *path, aw_buf *out, aw_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return aw_rt_error(err, AW_EINVAL, "%s: %s", path, strerror(errno));
    for (;;) {
        if (aw_buf_reserve(out, 65536)) {
            close(fd);
            return aw_rt_error(err, AW_ENOMEM, "%s: out of memory", path);
        }
        ssize_t n = read(fd, out->data + out->len, out->cap - out->len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            return aw_rt_error(err, AW_EINVAL, "%s: %s", path, strerror(e));
        }
        if (n == 0)
            break;
        out->len += (size_t)n;
        out->data[out->len] = 0;
    }
    close(fd);
    return 0;
}

char *aw_rt_strndup(const aw_allocator *a, const char *s, size_t n)
{
    if (!s)
        return NULL;
    char *d = aw_malloc(a, n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

char *aw_rt_strdup(const aw_allocator *a, const char *s) { return s ? aw_rt_strndup(a, s, strlen(s)) : NULL; }

char *aw_rt_path_from(const aw_allocator *a, const char *base_dir, const char *p, size_t n)
{
    aw_buf b;
    aw_buf_init(&b, a);
    int rc = 0;
    if ((n == 0 || p[0] != '/') && base_dir && *base_dir)
        rc = aw_buf_append_str(&b, base_dir) || aw_buf_putc(&b, '/');
    if (rc || aw_buf_append(&b, p, n) || aw_buf_reserve(&b, 1)) {
        aw_buf_free(&b);
        return NULL;
    }
    return aw_buf_detach(&b, NULL);
}

char *aw_rt_env_entry(const aw_allocator *a, const char *name, size_t name_len, const char *value, size_t value_len)
{
    aw_buf b;
    aw_buf_init(&b, a);
    if (aw_buf_append(&b, name, name_len) || aw_buf_putc(&b, '=') || aw_buf_append(&b, value, value_len)) {
        aw_buf_free(&b);
        return NULL;
    }
    return aw_buf_detach(&b, NULL);
}

void aw_rt_strv_free(const aw_allocator *a, char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        aw_free(a, v[i]);
    aw_free(a, v);
}

void aw_rt_uuid4(char out[40])
{
    unsigned char b[16];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
        uint64_t t = (uint64_t)aw_rt_wall_ms() ^ ((uint64_t)aw_loop_clock() << 20);
        for (size_t i = 0; i < sizeof b; i++)
            b[i] = (unsigned char)(t >> (8 * (i % 8))) ^ (unsigned char)(i * 131);
    }
    b[6] = (unsigned char)((b[6] & 0x0F) | 0x40); /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3F) | 0x80); /* RFC 4122 variant */
    snprintf(out, 40, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3],
             b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}
