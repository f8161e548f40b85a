/* Growable byte buffer. Grows by doubling so appends are amortized O(1). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "agentwire/buf.h"
#include "agentwire/error.h"

void aw_buf_init(aw_buf *b, const aw_allocator *alloc) {
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->alloc = alloc;
}

void aw_buf_free(aw_buf *b) {
    aw_free(b->alloc, b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void aw_buf_clear(aw_buf *b) {
    b->len = 0;
    if (b->data) b->data[0] = '\0';
}

int aw_buf_reserve(aw_buf *b, size_t extra) {
    if (extra > (size_t)-1 - b->len - 1) return AW_ENOMEM;
    size_t need = b->len + extra + 1; /* +1 keeps room for the terminator */
    if (need <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) {
        if (cap > (size_t)-1 / 2) {
            cap = need;
            break;
        }
        cap *= 2;
    }
    char *p = aw_realloc(b->alloc, b->data, cap);
    if (!p) return AW_ENOMEM;
    p[b->len] = '\0'; /* the promise: data is always NUL-terminated */
    b->data = p;
    b->cap = cap;
    return 0;
}

int aw_buf_append(aw_buf *b, const void *p, size_t n) {
    if (aw_buf_reserve(b, n)) return AW_ENOMEM;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int aw_buf_append_str(aw_buf *b, const char *s) { return aw_buf_append(b, s, strlen(s)); }

int aw_buf_putc(aw_buf *b, char c) {
    if (b->len + 1 >= b->cap && aw_buf_reserve(b, 1)) return AW_ENOMEM;
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
    return 0;
}

int aw_buf_printf(aw_buf *b, const char *fmt, ...) {
    char tmp[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return AW_EINVAL;
    if ((size_t)n >= sizeof tmp) n = (int)sizeof tmp - 1;
    return aw_buf_append(b, tmp, (size_t)n);
}

char *aw_buf_detach(aw_buf *b, size_t *len) {
    char *p = b->data;
    if (len) *len = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}
