/* agentwire — a growable byte buffer, the output of every writer.
 *
 * data is kept NUL-terminated (when non-NULL) so it can be printed as a C
 * string, but len is the truth: the bytes may contain NUL. */
#ifndef AGENTWIRE_BUF_H
#define AGENTWIRE_BUF_H

#include <stddef.h>
#include "alloc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aw_buf {
    char *data;
    size_t len;
    size_t cap;
    const aw_allocator *alloc;
} aw_buf;

void aw_buf_init(aw_buf *b, const aw_allocator *alloc);
void aw_buf_free(aw_buf *b);
/* Keep the memory, drop the contents. */
void aw_buf_clear(aw_buf *b);
/* Make room for `extra` more bytes (plus the terminator). */
int aw_buf_reserve(aw_buf *b, size_t extra);
int aw_buf_append(aw_buf *b, const void *p, size_t n);
int aw_buf_append_str(aw_buf *b, const char *s);
int aw_buf_putc(aw_buf *b, char c);
/* printf-style append; the formatted text must fit in 4 KiB. */
int aw_buf_printf(aw_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Hand the bytes to the caller (free them with aw_free(alloc, p)); the buffer
 * is left empty. Returns NULL only when the buffer never held anything. */
char *aw_buf_detach(aw_buf *b, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
