/* agentwire runtime — child processes: command tools, MCP servers and the
 * command-line model providers.
 *
 * Every child runs in a process group of its own, so one signal reaches it
 * and everything it started; when the child exits, what is left of its
 * group is killed; when agentwire dies, the kernel kills the child
 * (PR_SET_PDEATHSIG). A terminal's Ctrl-C reaches agentwire only, which
 * decides what to stop. Output arrives through callbacks as the loop reads
 * it; input is queued and written as the pipe takes it, never blocking. */
#ifndef AGENTWIRE_PROC_H
#define AGENTWIRE_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"
#include "loop.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aw_proc aw_proc;

typedef struct aw_proc_spec {
    const char *const *argv; /* NULL-terminated; argv[0] is looked up in PATH */
    /* "NAME=VALUE" entries set in the child's environment over the inherited
     * one ("NAME" alone removes NAME); NULL-terminated, or NULL. */
    const char *const *env;
    const char *cwd;  /* NULL: agentwire's */
    bool stdin_pipe;  /* false: stdin is /dev/null */
} aw_proc_spec;

typedef struct aw_proc_fns {
    /* Output as it arrives; never called with n == 0. */
    void (*on_stdout)(void *ctx, const char *p, size_t n);
    void (*on_stderr)(void *ctx, const char *p, size_t n);
    /* Once the child has exited and its output has been delivered (or the
     * pipes stayed open a second past its exit, held by something that left
     * its process group). status is waitpid's. Called from the loop, never
     * from inside an aw_proc_* call. The handle stays valid until freed. */
    void (*on_exit)(void *ctx, int status);
} aw_proc_fns;

/* Start a child. A program that cannot be run is reported here, not as an
 * exit: "cannot run 'x': No such file or directory". */
aw_proc *aw_proc_spawn(aw_loop *l, const aw_proc_spec *spec, const aw_proc_fns *fns, void *ctx,
                       aw_error *err);
/* Queue bytes for the child's stdin (spec.stdin_pipe). Bytes written after
 * the child closed its stdin are dropped; the child's exit tells the rest. */
int aw_proc_write(aw_proc *p, const char *data, size_t n);
/* Close stdin once the queued bytes are written. */
void aw_proc_close_stdin(aw_proc *p);
/* Bytes queued for stdin and not yet written. */
size_t aw_proc_pending(const aw_proc *p);
/* Signal the child's whole process group (while it runs). */
int aw_proc_kill(aw_proc *p, int sig);
/* Ask the child to stop: SIGTERM to its group, then SIGKILL after grace_ms
 * if it is still running. on_exit follows as usual. */
void aw_proc_terminate(aw_proc *p, int64_t grace_ms);
pid_t aw_proc_pid(const aw_proc *p);
bool aw_proc_running(const aw_proc *p);
/* Kill the group (SIGKILL) if it still runs, reap it, free the handle; no
 * callback is called after this. */
void aw_proc_free(aw_proc *p);

/* Describe a waitpid status: "exited with status 3", "killed by signal 9
 * (Killed)". */
void aw_proc_describe_status(int status, char *out, size_t out_size);

#ifdef __cplusplus
}
#endif
#endif
