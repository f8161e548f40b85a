/* Status names and the helpers that fill aw_error. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "agentwire/error.h"
#include "internal/errors.h"
#include "internal/utf8.h"

const char *aw_strerror(int code) {
    switch (code) {
    case AW_OK: return "success";
    case AW_ENOMEM: return "out of memory";
    case AW_EINVAL: return "invalid argument";
    case AW_ESYNTAX: return "syntax error";
    case AW_EUTF8: return "invalid UTF-8";
    case AW_ELIMIT: return "limit exceeded";
    case AW_ETYPE: return "missing field or wrong type";
    case AW_EVALID: return "validation failed";
    case AW_ESTOP: return "stopped by callback";
    case AW_EIO: return "input/output failed";
    default: return "unknown error";
    }
}

void aw_error_clear(aw_error *err) {
    if (!err) return;
    memset(err, 0, sizeof *err);
}

int aw__error_set(aw_error *err, int code, const char *fmt, ...) {
    if (!err) return code;
    memset(err, 0, sizeof *err);
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

int aw__error_at(aw_error *err, int code, const char *text, size_t len, size_t offset,
                 const char *fmt, ...) {
    if (!err) return code;
    memset(err, 0, sizeof *err);
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    aw__error_locate(err, text, len, offset);
    return code;
}

/* Positions are computed only when an error happens, by one scan of the text
 * up to the offset: parsers stay free of line bookkeeping on the hot path. A
 * CRLF pair counts as one line break; columns count code points (a byte that
 * is not valid UTF-8 counts as one). */
void aw__error_locate(aw_error *err, const char *text, size_t len, size_t offset) {
    if (!err) return;
    if (offset > len) offset = len;
    size_t line = 1, line_start = 0;
    for (size_t i = 0; i < offset; i++) {
        if (text[i] == '\n') {
            line++;
            line_start = i + 1;
        } else if (text[i] == '\r' && !(i + 1 < len && text[i + 1] == '\n')) {
            line++;
            line_start = i + 1;
        }
    }
    size_t col = 1;
    size_t i = line_start;
    while (i < offset) {
        size_t n = aw__utf8_seq_len((const unsigned char *)text + i, len - i);
        if (n == 0) n = 1;
        i += n;
        col++;
    }
    err->offset = offset;
    err->line = line;
    err->column = col;
}
