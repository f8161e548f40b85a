/* What the tests of agentwire serve share: a store (SQLite in a folder,
 * or the PostgreSQL of AW_PG_URL), sessions written into it step by step,
 * a server on a free loopback port, and real `agentwire run`s whose tool
 * waits at a gate the test opens, so a test sees a run between two of
 * its steps without any timing. */
#ifndef AW_TEST_SERVE_FIXTURE_H
#define AW_TEST_SERVE_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "agentwire/serve.h"
#include "agentwire/store.h"

/* The store's URL for a test folder: AW_PG_URL when set, else
 * sqlite:DIR/sessions.db. */
void fx_store_url(char *url, size_t cap, const char *dir);

/* A session made of steps, each a JSON object {"turn", "final",
 * "partial", "events": [...], "accounting": [...], "resume"?: {...} (the
 * session's totals after it)} (the stop reason of a final step:
 * "completed"). No steps: the session is only begun. */
void fx_session(aw_store *s, const char *id, const char *agent, const char *task, const char *const *steps, size_t n);
/* One more step of a session. */
void fx_step(aw_store *s, const char *id, const char *step_json);

/* A server on 127.0.0.1, port chosen by the system; token may be NULL. */
aw_server *fx_server(const char *url, const char *token);

/* A real run of the command on the replay provider: its tool `gate`
 * waits until the test opens the gate, and prints a <script> tag. */
typedef struct fx_run {
    pid_t pid;
    char session[128];
    char dir[256];
    int status; /* the exit status, once waited for */
} fx_run;

/* Start `agentwire run` in dir with `turns` gated tool calls (one a turn)
 * and then a final report; waits (at most 30 s) until it has said its
 * session id. */
void fx_run_start(fx_run *r, const char *url, const char *dir, unsigned turns);
/* Let the next gated call finish. */
void fx_gate_open(fx_run *r);
/* Whether the run is still going. */
bool fx_run_alive(fx_run *r);
/* Wait (at most timeout_ms) for the run to end; its exit status, or -1
 * (then it is killed). */
int fx_run_wait(fx_run *r, int timeout_ms);

#endif
