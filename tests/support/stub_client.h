/* Tests' side of stub_llm (tests/support/stub_llm.c): start it with a
 * script, learn its port, wait for it to finish, read what it was sent. */
#ifndef AW_TEST_STUB_CLIENT_H
#define AW_TEST_STUB_CLIENT_H

#include <stddef.h>
#include <sys/types.h>

#include "agentwire/json.h"

typedef struct aw_stub {
    pid_t pid;
    int port;
    char dir[64];
    char script_path[128];
    char log_path[128];
    char base_url[64]; /* "http://127.0.0.1:PORT" */
    int exit_status;   /* after aw_stub_wait */
} aw_stub;

/* Start the stub on script (JSON lines); a failure fails the test. The
 * stub is killed should the test process die. */
void aw_stub_start(aw_stub *s, const char *script);
/* The same with the stub's own time limit (--timeout-ms). */
void aw_stub_start_timeout(aw_stub *s, const char *script, long timeout_ms);
/* Wait for the stub to exit by itself (its script done), at most
 * max_ms, then kill it. Returns its exit status (-1 when it was killed). */
int aw_stub_wait(aw_stub *s, int max_ms);
/* Requests logged so far, and the i-th of them (0-based) as a document
 * the caller frees; NULL when there is no such line. */
size_t aw_stub_log_count(const aw_stub *s);
aw_json_doc *aw_stub_log_request(const aw_stub *s, size_t i);
/* The i-th request's body (malloc'd, NUL-terminated), or NULL. */
char *aw_stub_log_body(const aw_stub *s, size_t i, size_t *len);
/* Kill the stub if it still runs and remove its files. */
void aw_stub_stop(aw_stub *s);

#endif
