/* What the command-line providers (claude-cli, codex-cli, exec) share: the
 * prompt built from a request, and one run of the command that answers it
 * (spawned in its own process group, the prompt on its stdin, its output
 * collected under a size cap and timeouts, its errors worded the same way).
 * Each kind's file holds only its command line and how it reads the
 * command's output. Not installed. */
#ifndef AW_CLI_PROVIDER_H
#define AW_CLI_PROVIDER_H

#include "agentwire/buf.h"
#include "agentwire/json.h"
#include "agentwire/proc.h"
#include "internal/provider_impl.h"

/* More than this on stdout ends the run with an error: a reply is text a
 * model wrote, and a command printing without end must not eat the memory. */
#define AW_CLI_STDOUT_CAP ((size_t)64 << 20)
/* At most this much of the end of stderr goes into an error message. */
#define AW_CLI_STDERR_TAIL 2048
/* Room for an error message: a sentence, a snippet, the stderr tail. */
#define AW_CLI_ERROR_MAX (AW_CLI_STDERR_TAIL + 1024)
/* The whole-request timeout when the configuration gives none. */
#define AW_CLI_DEFAULT_REQUEST_TIMEOUT_MS 600000

/* The request as one prompt: system, history (or the xml context mode's
 * <thread> document), ephemeral messages, in that order, made an
 * OpenAI-shaped message list and encoded by aw_messages_encode (XML, or
 * the [User] text form). The <thread> document alone passes through
 * unchanged; among other messages the codec splices its events into one
 * thread, and whatever follows its </thread> (the prefill, "\n" and its
 * text) then ends the prompt. Appends to out; errors name the message. */
int aw_cli_prompt(const aw_model_request *req, aw_prompt_encoding encoding, const aw_allocator *alloc, aw_buf *out,
                  aw_error *err);

typedef struct aw_cli_run aw_cli_run;

/* How one kind reads its command's output. */
typedef struct aw_cli_kind {
    /* Keep stdout whole (up to the cap) in run->out for on_exit. */
    bool keep_stdout;
    /* Stdout as it arrives (may be NULL). 0 to go on; nonzero ends the
     * run: after aw_cli_set_error, or when aw_cli_text asked to stop. */
    int (*on_stdout)(aw_cli_run *r, const char *p, size_t n);
    /* The command has exited (status is waitpid's) and all its output has
     * been read: fill res (it may point into the kind's state, which lives
     * until on_done has returned) or call aw_cli_set_error. */
    void (*on_exit)(aw_cli_run *r, int status, aw_model_result *res);
    /* Free the kind's state (may be NULL). */
    void (*release)(void *state, const aw_allocator *alloc);
} aw_cli_kind;

struct aw_cli_run {
    aw_model_call *call;
    const aw_cli_kind *kind;
    const char *name;          /* the provider kind, for messages: "claude-cli" */
    void *state;               /* the kind's */
    const aw_allocator *alloc;
    aw_loop *loop;
    aw_proc *proc;
    aw_timer *request_timer, *idle_timer;
    int64_t request_timeout_ms, idle_timeout_ms;
    aw_trace_fn trace;
    void *trace_ctx;
    aw_buf out;                /* stdout, when kind->keep_stdout */
    size_t out_bytes;          /* stdout bytes seen */
    aw_buf err_tail;           /* the end of stderr */
    bool err_cut;              /* err_tail lost its beginning */
    bool failed;               /* error holds the message */
    aw_model_result failure;
    char error[AW_CLI_ERROR_MAX];
};

/* The provider-wide part, p->impl of each command-line kind: the
 * configuration's extra environment, copied (the configuration's strings
 * need not outlive aw_provider_new). */
typedef struct aw_cli_env {
    char **entries;            /* NULL-terminated, or NULL */
} aw_cli_env;

/* The kinds' init and destroy. */
int aw_cli_provider_init(aw_provider *p, aw_error *err);
void aw_cli_provider_destroy(aw_provider *p);

/* Build the prompt, spawn argv with p's environment, write the prompt to its stdin and
 * arm the timers; the run is call->impl. state belongs to the run from
 * here on, even on failure (kind->release frees it). Errors name the
 * provider: "claude-cli: cannot run 'claude': No such file or directory". */
int aw_cli_start(aw_provider *p, aw_model_call *call, const aw_model_request *req, const char *const *argv,
                 const aw_cli_kind *kind, void *state, aw_error *err);
/* The kinds' cancel: kill the process group, free the run; no callback. */
void aw_cli_cancel(aw_model_call *call);

/* Reply text for on_text; nonzero when the caller asked to stop, and
 * on_stdout must then return nonzero. */
int aw_cli_text(aw_cli_run *r, const char *p, size_t n);
int aw_cli_reasoning(aw_cli_run *r, const char *p, size_t n);
/* Record the run's failure: "NAME: " and the formatted message. Returns 1,
 * for `return aw_cli_set_error(...)` in on_stdout. */
int aw_cli_set_error(aw_cli_run *r, int code, bool retryable, int http_status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* The failure of a command that did not answer as it should: "exited with
 * status 1" or "killed by signal 9 (Killed)" (retryable), what (may be
 * NULL) after it, then the end of stderr. */
void aw_cli_set_exit_error(aw_cli_run *r, int status, const char *what);
/* Reading the commands' JSON: a string member ("" when it is not one),
 * a token count (0 when it is not a number >= 0), a string's comparison. */
aw_text aw_cli_text_field(const aw_json_value *o, const char *key);
int64_t aw_cli_count_field(const aw_json_value *o, const char *key);
bool aw_cli_is(aw_text t, const char *s);

/* How much of p[0..n) fits in max bytes without cutting a character. */
size_t aw_cli_clip(const char *p, size_t n, size_t max);
/* Bytes as a short quoted string for a message, escaped as JSON escapes
 * them: the first at most max bytes, cut at a character boundary, "..."
 * when cut. */
void aw_cli_snippet(char *out, size_t out_size, const char *p, size_t n, size_t max);

#endif
