/* exec:COMMAND — any command as a model: COMMAND run by /bin/sh -c, the
 * conversation as one prompt on its stdin, its stdout the reply, passed on
 * as it arrives. Exit status 0 is a reply; anything else a failed request
 * with the end of its stderr. For local model runners and wrappers:
 *
 *   --model 'exec:llama-cli -m model.gguf --no-display-prompt -f /dev/stdin' */
#include "internal/cli_provider.h"
#include "internal/rt_util.h"

#include <sys/wait.h>

static int exec_init(aw_provider *p, aw_error *err)
{
    if (!p->model[0])
        return aw_rt_error(err, AW_EINVAL, "exec: no command given (--model exec:COMMAND)");
    return aw_cli_provider_init(p, err);
}

static int exec_stdout(aw_cli_run *r, const char *p, size_t n) { return aw_cli_text(r, p, n); }

static void exec_exit(aw_cli_run *r, int status, aw_model_result *res)
{
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        res->stop_reason = (aw_text){"stop", 4};
    else
        aw_cli_set_exit_error(r, status, NULL);
}

static const aw_cli_kind exec_kind = {
    .on_stdout = exec_stdout,
    .on_exit = exec_exit,
};

static int exec_send(aw_provider *p, aw_model_call *call, const aw_model_request *req, aw_error *err)
{
    const char *argv[] = {"/bin/sh", "-c", p->model, NULL};
    return aw_cli_start(p, call, req, argv, &exec_kind, NULL, err);
}

const aw_provider_ops aw_provider_exec_ops = {
    .kind = "exec",
    .needs_model = false, /* it needs a command, and says so itself */
    .native_tools = false,
    .init = exec_init,
    .send = exec_send,
    .cancel = aw_cli_cancel,
    .destroy = aw_cli_provider_destroy,
};
