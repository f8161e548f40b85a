/* Streaming JSON lines. A line wholly inside a chunk is parsed where it
 * lies; only a line cut by a chunk boundary is gathered in a buffer. One
 * arena is reused for every line, so steady-state reading allocates
 * nothing. */
#include <string.h>

#include "internal/errors.h"
#include "internal/json.h"
#include "internal/utf8.h"

struct aw_jsonl_reader {
    const aw_allocator *alloc;
    aw__json_parser ps;
    aw_arena arena;
    aw_buf pending;       /* the start of a line cut by a chunk boundary */
    size_t line;          /* lines completed so far */
    size_t offset;        /* bytes consumed before the current line */
};

aw_jsonl_reader *aw_jsonl_reader_new(const aw_json_read_options *opts) {
    const aw_allocator *alloc = opts ? opts->alloc : NULL;
    aw_jsonl_reader *r = aw_malloc(alloc, sizeof *r);
    if (!r) return NULL;
    memset(r, 0, sizeof *r);
    r->alloc = alloc;
    aw__json_parser_init(&r->ps, opts);
    aw__arena_init(&r->arena, alloc);
    aw_buf_init(&r->pending, alloc);
    return r;
}

void aw_jsonl_reader_free(aw_jsonl_reader *r) {
    if (!r) return;
    aw__json_parser_free(&r->ps);
    aw__arena_free(&r->arena);
    aw_buf_free(&r->pending);
    aw_free(r->alloc, r);
}

size_t aw_jsonl_line_count(const aw_jsonl_reader *r) { return r ? r->line : 0; }

static int blank(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') return 0;
    return 1;
}

/* Parse one complete line (without its '\n') and report it. */
static int deliver(aw_jsonl_reader *r, const char *s, size_t n, aw_jsonl_fn fn, void *ctx,
                   aw_error *err) {
    size_t lineno = ++r->line;
    size_t start = r->offset;
    r->offset += n + 1;
    if (n && s[n - 1] == '\r') n--;
    if (blank(s, n)) return 0;
    aw__arena_reset(&r->arena);
    aw_json_value root;
    aw_error lerr;
    int rc = aw__json_parse_with(&r->ps, &r->arena, s, n, &root, &lerr);
    if (rc == AW_ENOMEM) return aw__error_set(err, AW_ENOMEM, "out of memory at line %zu", lineno);
    int stop;
    if (rc) {
        /* positions from the line parser are relative to the line. Its
         * column restarts after a lone CR (a line break in a whole
         * document), but here only LF ends a line: count the column from
         * the start of the line. */
        lerr.line = lineno;
        if (lerr.offset <= n) lerr.column = aw__utf8_count(s, lerr.offset) + 1;
        lerr.offset += start;
        stop = fn(ctx, lineno, NULL, &lerr);
    } else {
        stop = fn(ctx, lineno, &root, NULL);
    }
    if (stop) return aw__error_set(err, AW_ESTOP, "stopped by the callback at line %zu", lineno);
    return 0;
}

int aw_jsonl_feed(aw_jsonl_reader *r, const char *chunk, size_t len, aw_jsonl_fn fn, void *ctx,
                  aw_error *err) {
    if (!r || !fn || (!chunk && len)) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(chunk + i, '\n', len - i);
        if (!nl) {
            if (aw_buf_append(&r->pending, chunk + i, len - i))
                return aw__error_set(err, AW_ENOMEM, "out of memory");
            return 0;
        }
        size_t end = (size_t)(nl - chunk);
        int rc;
        if (r->pending.len) {
            if (aw_buf_append(&r->pending, chunk + i, end - i))
                return aw__error_set(err, AW_ENOMEM, "out of memory");
            rc = deliver(r, r->pending.data, r->pending.len, fn, ctx, err);
            aw_buf_clear(&r->pending);
        } else {
            rc = deliver(r, chunk + i, end - i, fn, ctx, err);
        }
        if (rc) return rc;
        i = end + 1;
    }
    return 0;
}

int aw_jsonl_finish(aw_jsonl_reader *r, aw_jsonl_fn fn, void *ctx, aw_error *err) {
    if (!r || !fn) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    if (!r->pending.len) return 0;
    int rc = deliver(r, r->pending.data, r->pending.len, fn, ctx, err);
    aw_buf_clear(&r->pending);
    return rc;
}
