/* codex-cli[:MODEL] — OpenAI's codex command as a model: the conversation
 * as one prompt on stdin ("-"),
 *
 *   codex exec --json --sandbox read-only --skip-git-repo-check --ephemeral [--model M] -
 *
 * and one JSON event per line on stdout as the turn goes:
 *
 *   {"type": "thread.started", "thread_id": "..."}
 *   {"type": "turn.started"}
 *   {"type": "item.completed", "item": {"id", "type": "agent_message", "text": "..."}}
 *   {"type": "item.completed", "item": {"type": "reasoning", "text": "..."}}
 *   {"type": "item.completed", "item": {"type": "error", "message": "..."}}
 *   {"type": "error", "message": "Reconnecting... 1/5 (...)"}
 *   {"type": "turn.completed", "usage": {"input_tokens", "cached_input_tokens",
 *        "cache_write_input_tokens", "output_tokens", "reasoning_output_tokens"}}
 *   {"type": "turn.failed", "error": {"message": "..."}}
 *
 * Each agent message goes to on_text when it completes (several are joined
 * by a blank line), reasoning to on_reasoning. "error" items and events are
 * not the end of a turn (codex reports a missing model description, or a
 * retry, that way and goes on): only turn.failed, or an exit without
 * turn.completed, fails the request, and the last of them is told then.
 * A retry after a message was passed on prints the messages again, so
 * such a turn is a failed (retryable) request rather than a reply that
 * repeats itself.
 * The endpoint is the user's CODEX_HOME/config.toml. Sessions are not kept
 * on disk (--ephemeral): each request is a conversation of its own.
 * Checked against codex 0.169.0 (tests/e2e/README.md). */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "agentwire/json.h"
#include "internal/cli_provider.h"
#include "internal/rt_util.h"

#define SNIPPET_MAX 200
#define MESSAGE_MAX 1500

typedef struct codex_turn {
    aw_buf line;          /* the line being read */
    size_t line_no;
    size_t messages;      /* agent messages passed on */
    bool completed, failed;
    bool restarted;       /* an error event came after a message was passed on */
    aw_buf error;         /* turn.failed's message, else the last error event's */
    aw_model_usage usage;
    bool has_usage;
} codex_turn;

/* Keep an error's message for the failure report; a later one replaces it. */
static int note_error(aw_cli_run *r, codex_turn *t, aw_text message)
{
    if (t->failed)
        return 0; /* turn.failed's message stays */
    aw_buf_clear(&t->error);
    if (aw_buf_append(&t->error, message.ptr, aw_cli_clip(message.ptr, message.len, MESSAGE_MAX)))
        return aw_cli_set_error(r, AW_ENOMEM, false, 0, "out of memory");
    return 0;
}

static int on_item(aw_cli_run *r, codex_turn *t, const aw_json_value *item)
{
    aw_text type = aw_cli_text_field(item, "type");
    if (aw_cli_is(type, "agent_message")) {
        aw_text text = aw_cli_text_field(item, "text");
        if (t->messages++ && aw_cli_text(r, "\n\n", 2))
            return 1;
        return aw_cli_text(r, text.ptr, text.len);
    }
    if (aw_cli_is(type, "reasoning")) {
        aw_text text = aw_cli_text_field(item, "text");
        return aw_cli_reasoning(r, text.ptr, text.len);
    }
    if (aw_cli_is(type, "error"))
        return note_error(r, t, aw_cli_text_field(item, "message"));
    return 0; /* commands it ran, files it read: its own business */
}

static void add_usage(codex_turn *t, const aw_json_value *usage)
{
    if (!aw_json_is_object(usage))
        return;
    t->has_usage = true;
    t->usage.input_tokens += aw_cli_count_field(usage, "input_tokens");
    t->usage.cache_read_tokens += aw_cli_count_field(usage, "cached_input_tokens");
    t->usage.cache_write_tokens += aw_cli_count_field(usage, "cache_write_input_tokens");
    t->usage.output_tokens += aw_cli_count_field(usage, "output_tokens");
    t->usage.reasoning_tokens += aw_cli_count_field(usage, "reasoning_output_tokens");
}

static int on_event(aw_cli_run *r, codex_turn *t, const aw_json_value *ev)
{
    aw_text type = aw_cli_text_field(ev, "type");
    if (aw_cli_is(type, "item.completed"))
        return on_item(r, t, aw_json_get(ev, "item"));
    if (aw_cli_is(type, "error")) {
        /* codex reports a retry of the whole request this way, and the
         * retry prints its messages again */
        t->restarted = t->restarted || t->messages > 0;
        return note_error(r, t, aw_cli_text_field(ev, "message"));
    }
    if (aw_cli_is(type, "turn.completed")) {
        t->completed = true;
        add_usage(t, aw_json_get(ev, "usage"));
        return 0;
    }
    if (aw_cli_is(type, "turn.failed")) {
        aw_text message = aw_cli_text_field(aw_json_get(ev, "error"), "message");
        int rc = message.len ? note_error(r, t, message) : 0;
        t->failed = true;
        return rc;
    }
    return 0;
}

static int on_line(aw_cli_run *r, codex_turn *t, const char *p, size_t n)
{
    t->line_no++;
    while (n && (p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    size_t lead = 0;
    while (lead < n && (p[lead] == ' ' || p[lead] == '\t'))
        lead++;
    if (lead == n)
        return 0;
    aw_json_read_options ro = {.alloc = r->alloc};
    aw_json_doc *doc = NULL;
    aw_error jerr;
    aw_error_clear(&jerr);
    int rc = aw_json_parse(p, n, &ro, &doc, &jerr);
    if (rc == AW_ENOMEM)
        return aw_cli_set_error(r, AW_ENOMEM, false, 0, "out of memory");
    char start[SNIPPET_MAX + 64];
    if (rc) {
        aw_cli_snippet(start, sizeof start, p, n, SNIPPET_MAX);
        return aw_cli_set_error(r, AW_ESYNTAX, false, 0, "stdout line %zu is not JSON (column %zu: %s): %s",
                                t->line_no, jerr.column, jerr.message, start);
    }
    const aw_json_value *ev = aw_json_doc_root(doc);
    if (!aw_json_is_object(ev) || !aw_json_is_string(aw_json_get(ev, "type"))) {
        aw_json_doc_free(doc);
        aw_cli_snippet(start, sizeof start, p, n, SNIPPET_MAX);
        return aw_cli_set_error(r, AW_ETYPE, false, 0, "stdout line %zu is not a codex event (no \"type\"): %s",
                                t->line_no, start);
    }
    rc = on_event(r, t, ev);
    aw_json_doc_free(doc);
    return rc;
}

/* Lines as they arrive; a line's start waits in t->line for its end. */
static int codex_stdout(aw_cli_run *r, const char *p, size_t n)
{
    codex_turn *t = r->state;
    while (n) {
        const char *nl = memchr(p, '\n', n);
        size_t take = nl ? (size_t)(nl - p) : n;
        if (!nl || t->line.len) {
            if (aw_buf_append(&t->line, p, take))
                return aw_cli_set_error(r, AW_ENOMEM, false, 0, "out of memory");
        }
        if (nl) {
            int rc = t->line.len ? on_line(r, t, t->line.data, t->line.len) : on_line(r, t, p, take);
            aw_buf_clear(&t->line);
            if (rc)
                return rc;
            take++;
        }
        p += take;
        n -= take;
    }
    return 0;
}

static void codex_exit(aw_cli_run *r, int status, aw_model_result *res)
{
    codex_turn *t = r->state;
    if (t->line.len && on_line(r, t, t->line.data, t->line.len))
        return; /* the last line had no newline, and was not an event */
    aw_text error = {t->error.data ? t->error.data : "", t->error.len};
    char what[MESSAGE_MAX + 64];
    if (t->failed) {
        aw_cli_set_error(r, AW_EINVAL, false, 0, "the turn failed: %.*s", (int)error.len,
                         error.len ? error.ptr : "(no message)");
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (error.len)
            snprintf(what, sizeof what, "(last error event: %.*s)", (int)error.len, error.ptr);
        aw_cli_set_exit_error(r, status, error.len ? what : NULL);
    } else if (!t->completed) {
        if (error.len)
            snprintf(what, sizeof what, "without a turn.completed event (last error event: %.*s)", (int)error.len,
                     error.ptr);
        aw_cli_set_exit_error(r, status, error.len ? what : "without a turn.completed event");
    } else if (t->restarted) {
        aw_cli_set_error(r, AW_EINVAL, true, 0,
                         "codex retried the request (%.*s) after part of its reply had been passed on, so the reply "
                         "would repeat itself",
                         (int)error.len, error.ptr);
    } else {
        res->stop_reason = (aw_text){"stop", 4};
        res->has_usage = t->has_usage;
        res->usage = t->usage;
        res->usage.cost_usd = -1;
    }
}

static void codex_release(void *state, const aw_allocator *alloc)
{
    codex_turn *t = state;
    if (!t)
        return;
    aw_buf_free(&t->line);
    aw_buf_free(&t->error);
    aw_free(alloc, t);
}

static const aw_cli_kind codex_kind = {
    .on_stdout = codex_stdout,
    .on_exit = codex_exit,
    .release = codex_release,
};

static int codex_send(aw_provider *p, aw_model_call *call, const aw_model_request *req, aw_error *err)
{
    codex_turn *t = aw_malloc(p->alloc, sizeof *t);
    if (!t)
        return aw_rt_error(err, AW_ENOMEM, "codex-cli: out of memory");
    memset(t, 0, sizeof *t);
    aw_buf_init(&t->line, p->alloc);
    aw_buf_init(&t->error, p->alloc);
    const char *argv[] = {p->codex_path, "exec", "--json", "--sandbox", "read-only", "--skip-git-repo-check",
                          "--ephemeral", "-", NULL, NULL, NULL};
    if (p->model[0]) {
        argv[7] = "--model";
        argv[8] = p->model;
        argv[9] = "-";
    }
    return aw_cli_start(p, call, req, argv, &codex_kind, t, err);
}

const aw_provider_ops aw_provider_codex_cli_ops = {
    .kind = "codex-cli",
    .needs_model = false,
    .native_tools = false,
    .init = aw_cli_provider_init,
    .send = codex_send,
    .cancel = aw_cli_cancel,
    .destroy = aw_cli_provider_destroy,
};
