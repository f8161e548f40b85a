/* The Server-Sent Events reader: lines are found with memchr and, when a
 * whole line lies inside the chunk, handled where they lie; only a line
 * split across chunks is copied (into r->line), so each byte is looked at
 * a bounded number of times whatever the chunking. */
#include <stdio.h>
#include <string.h>

#include "internal/rt_util.h"
#include "internal/sse.h"

void aw_sse_init(aw_sse_reader *r, const aw_allocator *alloc, size_t max_line, size_t max_event,
                 const aw_sse_handlers *fns, void *ctx)
{
    memset(r, 0, sizeof *r);
    r->max_line = max_line ? max_line : AW_SSE_DEFAULT_MAX_LINE;
    r->max_event = max_event ? max_event : AW_SSE_DEFAULT_MAX_EVENT;
    if (fns)
        r->fns = *fns;
    r->ctx = ctx;
    r->retry_ms = -1;
    aw_buf_init(&r->line, alloc);
    aw_buf_init(&r->data, alloc);
    aw_buf_init(&r->type, alloc);
    aw_buf_init(&r->id, alloc);
}

void aw_sse_release(aw_sse_reader *r)
{
    aw_buf_free(&r->line);
    aw_buf_free(&r->data);
    aw_buf_free(&r->type);
    aw_buf_free(&r->id);
}

/* Record the first error; every later call reports it again. */
static int fail(aw_sse_reader *r, int code, uint64_t offset, aw_error *err, const char *what)
{
    r->failed = code;
    aw_rt_error(&r->failure, code, "%s", what);
    r->failure.offset = (size_t)offset;
    if (err)
        *err = r->failure;
    return code;
}

static int fail_limit(aw_sse_reader *r, const char *what, size_t limit, uint64_t offset, aw_error *err)
{
    char msg[160];
    snprintf(msg, sizeof msg, "%s longer than %zu bytes at byte %llu", what, limit, (unsigned long long)offset);
    return fail(r, AW_ELIMIT, offset, err, msg);
}

static int fail_nomem(aw_sse_reader *r, uint64_t offset, aw_error *err)
{
    return fail(r, AW_ENOMEM, offset, err, "out of memory");
}

static int stopped(aw_sse_reader *r, uint64_t offset, aw_error *err)
{
    return fail(r, AW_ESTOP, offset, err, "stopped by the event handler");
}

static void reset_event(aw_sse_reader *r)
{
    aw_buf_clear(&r->data);
    aw_buf_clear(&r->type);
    r->event_open = false;
}

/* A blank line: the pending event goes out when it has data (the format's
 * rule: an event with no data: line is dropped, its type with it). */
static int dispatch(aw_sse_reader *r, aw_error *err)
{
    if (r->data.len == 0) {
        reset_event(r);
        return 0;
    }
    aw_sse_event ev;
    ev.type.ptr = r->type.len ? r->type.data : "";
    ev.type.len = r->type.len;
    ev.data.ptr = r->data.data;
    ev.data.len = r->data.len - 1; /* the "\n" after the last line */
    ev.id.ptr = r->id.len ? r->id.data : "";
    ev.id.len = r->id.len;
    ev.retry_ms = r->retry_ms;
    ev.offset = r->event_start;
    int stop = r->fns.on_event ? r->fns.on_event(r->ctx, &ev) : 0;
    uint64_t at = r->event_start;
    reset_event(r);
    return stop ? stopped(r, at, err) : 0;
}

static bool field_is(const char *f, size_t n, const char *name)
{
    size_t k = strlen(name);
    return n == k && memcmp(f, name, k) == 0;
}

static int set_text(aw_buf *b, const char *p, size_t n)
{
    aw_buf_clear(b);
    return aw_buf_append(b, p, n);
}

/* retry: counts only when it is all ASCII digits. */
static void set_retry(aw_sse_reader *r, const char *v, size_t n)
{
    if (n == 0)
        return;
    int64_t ms = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return;
        if (ms < INT64_MAX / 10 - 10)
            ms = ms * 10 + (v[i] - '0');
    }
    r->retry_ms = ms;
}

/* One whole line (without its end), starting at stream offset `at`. */
static int handle_line(aw_sse_reader *r, const char *l, size_t n, uint64_t at, aw_error *err)
{
    if (!r->first_line_done) {
        r->first_line_done = true;
        if (n >= 3 && memcmp(l, "\xEF\xBB\xBF", 3) == 0) {
            l += 3;
            n -= 3;
            at += 3;
        }
    }
    if (n == 0)
        return dispatch(r, err);
    if (l[0] == ':')
        return 0; /* a comment (keep-alives are sent this way) */
    const char *colon = memchr(l, ':', n);
    size_t flen = colon ? (size_t)(colon - l) : n;
    const char *v = colon ? colon + 1 : l + n;
    size_t vlen = colon ? n - flen - 1 : 0;
    if (vlen && v[0] == ' ') {
        v++;
        vlen--;
    }
    if (!r->event_open) {
        r->event_open = true;
        r->event_start = at;
    }
    if (field_is(l, flen, "data")) {
        if (r->data.len + vlen + 1 > r->max_event)
            return fail_limit(r, "an event", r->max_event, r->event_start, err);
        if (aw_buf_append(&r->data, v, vlen) || aw_buf_putc(&r->data, '\n'))
            return fail_nomem(r, at, err);
    } else if (field_is(l, flen, "event")) {
        if (set_text(&r->type, v, vlen))
            return fail_nomem(r, at, err);
    } else if (field_is(l, flen, "id")) {
        if (!memchr(v, 0, vlen) && set_text(&r->id, v, vlen))
            return fail_nomem(r, at, err);
    } else if (field_is(l, flen, "retry")) {
        set_retry(r, v, vlen);
    } else if (r->fns.on_other) {
        aw_text field = {l, flen}, value = {v, vlen};
        if (r->fns.on_other(r->ctx, field, value, at))
            return stopped(r, at, err);
    }
    return 0;
}

/* The next CR or LF in p[0..n), or NULL. LF is searched first and CR only
 * before it, so a stream of LF lines is scanned once. */
static const char *line_end(const char *p, size_t n)
{
    const char *lf = memchr(p, '\n', n);
    const char *cr = memchr(p, '\r', lf ? (size_t)(lf - p) : n);
    return cr ? cr : lf;
}

int aw_sse_feed(aw_sse_reader *r, const char *p, size_t n, aw_error *err)
{
    if (r->failed) {
        if (err)
            *err = r->failure;
        return r->failed;
    }
    uint64_t base = r->pos;
    size_t i = 0;
    int rc = 0;
    if (r->after_cr && n > 0) {
        r->after_cr = false;
        if (p[0] == '\n')
            i = 1;
    }
    while (i < n) {
        const char *end = line_end(p + i, n - i);
        if (!end) {
            /* The line goes on in a later chunk. */
            if (r->line.len == 0)
                r->line_start = base + i;
            if (r->line.len + (n - i) > r->max_line) {
                rc = fail_limit(r, "an event-stream line", r->max_line, r->line_start, err);
                break;
            }
            if (aw_buf_append(&r->line, p + i, n - i)) {
                rc = fail_nomem(r, base + i, err);
                break;
            }
            i = n;
            break;
        }
        size_t j = (size_t)(end - p);
        if (r->line.len) {
            if (r->line.len + (j - i) > r->max_line) {
                rc = fail_limit(r, "an event-stream line", r->max_line, r->line_start, err);
                break;
            }
            if (aw_buf_append(&r->line, p + i, j - i)) {
                rc = fail_nomem(r, base + i, err);
                break;
            }
            rc = handle_line(r, r->line.data, r->line.len, r->line_start, err);
            aw_buf_clear(&r->line);
        } else if (j - i > r->max_line) {
            rc = fail_limit(r, "an event-stream line", r->max_line, base + i, err);
        } else {
            rc = handle_line(r, p + i, j - i, base + i, err);
        }
        if (rc)
            break;
        i = j + 1;
        if (p[j] == '\r') {
            if (i < n && p[i] == '\n')
                i++;
            else if (i == n)
                r->after_cr = true;
        }
    }
    r->pos = base + n;
    return rc;
}

int aw_sse_finish(aw_sse_reader *r, aw_error *err)
{
    if (r->failed) {
        if (err)
            *err = r->failure;
        return r->failed;
    }
    if (r->line.len) {
        char msg[96];
        snprintf(msg, sizeof msg, "the stream ended inside a line at byte %llu", (unsigned long long)r->line_start);
        return fail(r, AW_ESYNTAX, r->line_start, err, msg);
    }
    if (r->event_open)
        return dispatch(r, err);
    return 0;
}
