/* claude-cli[:MODEL] — Anthropic's claude command (Claude Code) as a
 * model: the conversation as one prompt on stdin,
 *
 *   claude --print --output-format json --tools "" --no-session-persistence [--model M]
 *
 * and one JSON object on stdout once the reply is whole:
 *
 *   {"type": "result", "subtype": "success", "is_error": false,
 *    "result": "the reply", "stop_reason": "end_turn", "session_id": "...",
 *    "total_cost_usd": 0.0123, "api_error_status": null,
 *    "usage": {"input_tokens", "output_tokens", "cache_creation_input_tokens",
 *              "cache_read_input_tokens"}, "modelUsage": {"MODEL": {...}}}
 *
 * `--tools ""` leaves claude no tool of its own (the run's tools go through
 * the xml transport), so nothing needs a permission and no
 * --permission-mode is given: claude refuses bypassPermissions as root.
 * Each request is a conversation of its own, so none is kept on disk.
 * A failed request (an API error, not being logged in) is still such an
 * object, with is_error true and the message as its result, and claude
 * then exits with status 1. Checked against claude 2.1.197
 * (tests/e2e/README.md). */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "agentwire/json.h"
#include "internal/cli_provider.h"
#include "internal/rt_util.h"

#define SNIPPET_MAX 200
#define MESSAGE_MAX 1500

/* The model that answered: the first key of modelUsage. */
static aw_text answering_model(const aw_json_value *result)
{
    const aw_json_value *models = aw_json_get(result, "modelUsage");
    if (!aw_json_is_object(models) || !models->u.obj.count)
        return (aw_text){"", 0};
    const aw_json_member *m = &models->u.obj.members[0];
    return (aw_text){m->key, m->key_len};
}

/* claude's own failure: the message it gave, the API status behind it. */
static void report_failure(aw_cli_run *r, const aw_json_value *result)
{
    aw_text message = aw_cli_text_field(result, "result");
    aw_text subtype = aw_cli_text_field(result, "subtype");
    const aw_json_value *status = aw_json_get(result, "api_error_status");
    int http = aw_json_is_number(status) && status->u.num.d >= 100 && status->u.num.d < 600 ? (int)status->u.num.d : 0;
    /* 429 and the 5xx family (529: overloaded) pass; claude already
     * retried them, but a later request may get through. */
    bool retryable = http == 429 || http >= 500;
    if (!message.len)
        message = (aw_text){"the request failed", 18};
    int shown = (int)aw_cli_clip(message.ptr, message.len, MESSAGE_MAX);
    if (subtype.len && !aw_cli_is(subtype, "success"))
        aw_cli_set_error(r, AW_EINVAL, retryable, http, "%.*s (%.*s)", shown, message.ptr,
                         (int)aw_cli_clip(subtype.ptr, subtype.len, 100), subtype.ptr);
    else
        aw_cli_set_error(r, AW_EINVAL, retryable, http, "%.*s", shown, message.ptr);
}

static void report(aw_cli_run *r, const aw_json_value *result, aw_model_result *res)
{
    const aw_json_value *is_error = aw_json_get(result, "is_error");
    if ((aw_json_is_bool(is_error) && is_error->u.b) || !aw_cli_is(aw_cli_text_field(result, "subtype"), "success")) {
        report_failure(r, result);
        return;
    }
    const aw_json_value *text = aw_json_get(result, "result");
    if (!aw_json_is_string(text)) {
        aw_cli_set_error(r, AW_ETYPE, false, 0, "the result object has no \"result\" text");
        return;
    }
    if (aw_cli_text(r, text->u.str.ptr, text->u.str.len))
        return;
    res->stop_reason = aw_cli_text_field(result, "stop_reason");
    res->model = answering_model(result);
    const aw_json_value *usage = aw_json_get(result, "usage");
    if (aw_json_is_object(usage)) {
        res->has_usage = true;
        res->usage.input_tokens = aw_cli_count_field(usage, "input_tokens");
        res->usage.output_tokens = aw_cli_count_field(usage, "output_tokens");
        res->usage.cache_write_tokens = aw_cli_count_field(usage, "cache_creation_input_tokens");
        res->usage.cache_read_tokens = aw_cli_count_field(usage, "cache_read_input_tokens");
    }
    const aw_json_value *cost = aw_json_get(result, "total_cost_usd");
    if (aw_json_is_number(cost))
        res->usage.cost_usd = cost->u.num.d;
}

static bool blank(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\n' && p[i] != '\r' && p[i] != '\t')
            return false;
    return true;
}

/* The one JSON object on stdout, read once the command has exited (claude
 * says why it failed there too, so stdout is read whatever the status). */
static void claude_exit(aw_cli_run *r, int status, aw_model_result *res)
{
    const char *out = r->out.data ? r->out.data : "";
    size_t n = r->out.len;
    aw_json_read_options ro = {.alloc = r->alloc};
    aw_json_doc *doc = NULL;
    aw_error jerr;
    aw_error_clear(&jerr);
    int rc = n ? aw_json_parse(out, n, &ro, &doc, &jerr) : AW_ESYNTAX;
    if (rc == AW_ENOMEM) {
        aw_cli_set_error(r, AW_ENOMEM, false, 0, "out of memory");
        return;
    }
    const aw_json_value *root = doc ? aw_json_doc_root(doc) : NULL;
    if (aw_json_is_object(root) && aw_cli_is(aw_cli_text_field(root, "type"), "result")) {
        r->state = doc; /* res points into it until on_done has returned */
        report(r, root, res);
        return;
    }
    aw_json_doc_free(doc);
    char start[SNIPPET_MAX + 64], what[SNIPPET_MAX + 96];
    aw_cli_snippet(start, sizeof start, out, n, SNIPPET_MAX);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        /* Its stderr says more than whatever stdout holds. */
        if (!blank(out, n))
            snprintf(what, sizeof what, "and printed %s", start);
        aw_cli_set_exit_error(r, status, blank(out, n) ? NULL : what);
    } else if (blank(out, n)) {
        aw_cli_set_exit_error(r, status, "but printed nothing on stdout");
    } else if (rc) {
        aw_cli_set_error(r, AW_ESYNTAX, false, 0, "stdout is not JSON (line %zu, column %zu: %s); it starts with %s",
                         jerr.line, jerr.column, jerr.message, start);
    } else {
        aw_cli_set_error(r, AW_ETYPE, false, 0,
                         "stdout is JSON but not claude's result object (\"type\": \"result\"): %s", start);
    }
}

static void claude_release(void *state, const aw_allocator *alloc)
{
    (void)alloc;
    aw_json_doc_free(state);
}

static const aw_cli_kind claude_kind = {
    .keep_stdout = true,
    .on_exit = claude_exit,
    .release = claude_release,
};

static int claude_send(aw_provider *p, aw_model_call *call, const aw_model_request *req, aw_error *err)
{
    const char *argv[] = {p->claude_path, "--print", "--output-format", "json", "--tools", "",
                          "--no-session-persistence", NULL, NULL, NULL};
    if (p->model[0]) {
        argv[7] = "--model";
        argv[8] = p->model;
    }
    return aw_cli_start(p, call, req, argv, &claude_kind, NULL, err);
}

const aw_provider_ops aw_provider_claude_cli_ops = {
    .kind = "claude-cli",
    .needs_model = false,
    .native_tools = false,
    .init = aw_cli_provider_init,
    .send = claude_send,
    .cancel = aw_cli_cancel,
    .destroy = aw_cli_provider_destroy,
};
