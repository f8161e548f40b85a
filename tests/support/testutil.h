/* Helpers for tests: files and running the command. */
#ifndef AW_TEST_TESTUTIL_H
#define AW_TEST_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agentwire/buf.h"
#include "agentwire/error.h"
#include "agentwire/json.h"

/* The whole file, malloc'd and NUL-terminated; NULL on error. */
char *aw_test_read_file(const char *path, size_t *len);

/* Run cmd with /bin/sh -c, feeding stdin_data and capturing stdout and
 * stderr completely (malloc'd, NUL-terminated; out/err may be NULL to
 * discard). Returns the exit status, or -1 when it could not run. */
int aw_test_run_cmd(const char *cmd, const char *stdin_data, size_t stdin_len, char **out, size_t *out_len,
                    char **err, size_t *err_len);

/* splitmix64: random test inputs from a fixed seed, the same on every
 * machine, so a failure can be replayed. */
typedef struct aw_test_rng {
    uint64_t s;
} aw_test_rng;

uint64_t aw_test_next64(aw_test_rng *r);
/* Uniform enough below n (n > 0). */
uint32_t aw_test_below(aw_test_rng *r, uint32_t n);

/* v written by aw_json_write with this indent: malloc'd, NUL-terminated,
 * its length in *len when len is not NULL. A write error fails the test. */
char *aw_test_write_json(const aw_json_value *v, int indent, size_t *len);

/* The contract of every function that appends to a caller's buffer, checked
 * after a call that may have met a failing allocator: the buffer held
 * prefix (prefix_len bytes) before the call; rc 0 means it now holds prefix
 * then want; any other rc must be AW_ENOMEM, in err too, with the buffer
 * exactly as it was. */
void aw_test_check_appended(const aw_buf *out, const char *prefix, size_t prefix_len, int rc, const aw_error *err,
                            const char *want, size_t want_len);

/* The Unicode Standard's maximal subpart at p (n > 0 bytes there, which do
 * not start a well-formed sequence), worked out the slow way the
 * definition reads: the longest prefix (at most 3 bytes) that some
 * continuation bytes would complete into a well-formed sequence, or 1.
 * The reference the library's U+FFFD substitution is held to. */
size_t aw_test_utf8_subpart(const unsigned char *p, size_t n);

/* The process is running (not gone, not a zombie: a killed orphan waits as
 * a zombie until whoever adopted it reaps it, and in a container that may
 * be never). */
bool aw_test_pid_alive(pid_t pid);

/* A store for a test: AW_PG_URL's PostgreSQL when set (returns true),
 * else sqlite:DIR/sessions.db in a new temporary folder (its path in dir,
 * "" for PostgreSQL). aw_test_store_remove removes that folder. */
bool aw_test_store_url(char *url, size_t url_cap, char *dir, size_t dir_cap);
int aw_test_store_remove(const char *dir);

#endif
