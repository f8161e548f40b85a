/* agentwire — the one error type.
 *
 * Every fallible function returns 0 on success or a negative AW_E* code, and
 * fills an aw_error when one is passed. The message never ends in a newline
 * and never holds the file name: callers add their own context. */
#ifndef AGENTWIRE_ERROR_H
#define AGENTWIRE_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum aw_status {
    AW_OK = 0,
    AW_ENOMEM = -1,   /* the allocator returned NULL */
    AW_EINVAL = -2,   /* a caller passed an impossible argument */
    AW_ESYNTAX = -3,  /* input is not well-formed (JSON, XML, ...) */
    AW_EUTF8 = -4,    /* input is not valid UTF-8 */
    AW_ELIMIT = -5,   /* a configured limit (depth, size, count) was exceeded */
    AW_ETYPE = -6,    /* a field is missing or has the wrong JSON type */
    AW_EVALID = -7,   /* well-formed input that breaks a contract's rules */
    AW_ESTOP = -8,    /* a callback asked to stop */
    AW_EIO = -9       /* a peer or the system failed: a connection, a timeout, a server error */
};

#define AW_ERROR_MESSAGE_MAX 256

typedef struct aw_error {
    int code;          /* one of enum aw_status; 0 when no error */
    size_t offset;     /* byte offset of the problem in the input, from 0 */
    size_t line;       /* 1-based line; 0 when the input has no position */
    size_t column;     /* 1-based column in characters (code points) */
    char message[AW_ERROR_MESSAGE_MAX];
} aw_error;

/* A short English name for a status code, e.g. "out of memory". */
const char *aw_strerror(int code);

/* Reset to "no error". NULL is allowed. */
void aw_error_clear(aw_error *err);

#ifdef __cplusplus
}
#endif
#endif
