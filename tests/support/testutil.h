/* Helpers for tests: files and running the command. */
#ifndef AW_TEST_TESTUTIL_H
#define AW_TEST_TESTUTIL_H

#include <stddef.h>

/* The whole file, malloc'd and NUL-terminated; NULL on error. */
char *aw_test_read_file(const char *path, size_t *len);

/* Run cmd with /bin/sh -c, feeding stdin_data and capturing stdout and
 * stderr completely (malloc'd, NUL-terminated; out/err may be NULL to
 * discard). Returns the exit status, or -1 when it could not run. */
int aw_test_run_cmd(const char *cmd, const char *stdin_data, size_t stdin_len, char **out, size_t *out_len,
                    char **err, size_t *err_len);

#endif
