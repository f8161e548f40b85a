/* Private helpers to fill an aw_error. */
#ifndef AW_INTERNAL_ERRORS_H
#define AW_INTERNAL_ERRORS_H

#include <stddef.h>

#include "agentwire/error.h"

/* Fill err (when non-NULL) with code and a formatted message; returns code so
 * callers can `return aw__error_set(...)`. */
int aw__error_set(aw_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Same, plus offset/line/column of `offset` within text[0..len). */
int aw__error_at(aw_error *err, int code, const char *text, size_t len, size_t offset,
                 const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

/* Fill offset/line/column of err for a byte offset into text. */
void aw__error_locate(aw_error *err, const char *text, size_t len, size_t offset);

#endif
