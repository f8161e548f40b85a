/* Small helpers every part of the runtime uses. Not installed. */
#ifndef AW_RT_UTIL_H
#define AW_RT_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agentwire/alloc.h"
#include "agentwire/buf.h"
#include "agentwire/error.h"
#include "agentwire/json.h"

/* Fill err (when non-NULL) with code and a printf-formatted message; the
 * message is cut at AW_ERROR_MESSAGE_MAX - 1 bytes on a character boundary.
 * Returns code, so `return aw_rt_error(err, AW_EINVAL, "...")` reads well. */
int aw_rt_error(aw_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* write(2) that never raises SIGPIPE: the signal is blocked for the call
 * and a pending one consumed, so a library never kills its host program
 * when a peer closes a pipe. EPIPE comes back as an error instead. */
ssize_t aw_rt_write_nosigpipe(int fd, const void *p, size_t n);
/* All n bytes to a blocking fd (EINTR retried); -1 with errno. */
int aw_rt_write_all(int fd, const void *p, size_t n);

/* Wall-clock milliseconds since 1970 (for records; the loop's clock is
 * monotonic and says nothing about dates). */
int64_t aw_rt_wall_ms(void);

/* Read a whole file into out (appended). Errors: "PATH: reason". */
int aw_rt_read_file(const char *path, aw_buf *out, aw_error *err);

/* A random UUID (version 4), 36 characters and a NUL, for session and
 * execution ids. */
void aw_rt_uuid4(char out[40]);

/* Copy of a string through the allocator (NULL for NULL or no memory). */
char *aw_rt_strdup(const aw_allocator *a, const char *s);
char *aw_rt_strndup(const aw_allocator *a, const char *s, size_t n);

/* A path read from a configuration file: a relative one starts at base_dir
 * (when given), so the file works from anywhere. NULL when out of memory. */
char *aw_rt_path_from(const aw_allocator *a, const char *base_dir, const char *p, size_t n);

/* The most tokens one reply may count: a peer's 1e300 (or 1e999, read as
 * infinity) is held here, so the sums of millions of turns stay in int64. */
#define AW_RT_TOKENS_MAX ((int64_t)1 << 40)

/* A JSON number as an integer within [lo, hi], truncated toward zero; dflt
 * when v is not a number. Values beyond the range (a peer may send 1e400)
 * are held at its ends, as converting them would be undefined behaviour. */
int64_t aw_rt_json_int(const aw_json_value *v, int64_t dflt, int64_t lo, int64_t hi);

/* Free a NULL-terminated array of strings and the array (NULL is fine). */
void aw_rt_strv_free(const aw_allocator *a, char **v);

/* "NAME=VALUE", an entry of a child's environment. NULL when out of memory. */
char *aw_rt_env_entry(const aw_allocator *a, const char *name, size_t name_len, const char *value, size_t value_len);

#endif
