/* A tiny program built against the installed agentwire-runtime: a loop, a
 * child process (the runtime's own code), a replay provider answering
 * one request and an agent file read (libyaml), so a link line that lacks
 * the runtime, the codec library beneath it or the runtime's own
 * dependencies fails here. */
#include <stdio.h>
#include <string.h>

#include <agentwire/agentfile.h>
#include <agentwire/agentwire.h>
#include <agentwire/loop.h>
#include <agentwire/proc.h>
#include <agentwire/provider.h>

static int exited = -1;
static void on_exit_status(void *ctx, int status)
{
    (void)ctx;
    exited = status;
}

static char reply[64];
static int on_text(void *ctx, const char *p, size_t n)
{
    (void)ctx;
    strncat(reply, p, n < sizeof reply - strlen(reply) - 1 ? n : sizeof reply - strlen(reply) - 1);
    return 0;
}
static int done;
static void on_done(void *ctx, const aw_model_result *res)
{
    (void)ctx;
    done = res->code == 0 ? 1 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: runtime_consumer REPLAY_FILE\n");
        return 2;
    }
    aw_error err;
    static const char agent[] = "---\nname: consumer\nmaxTurns: 2\n---\nHello.\n";
    aw_agent_file *af = NULL;
    if (aw_agent_file_parse(agent, sizeof agent - 1, "consumer.md", NULL, &af, &err) ||
        strcmp(aw_agent_file_def(af)->name, "consumer") != 0 || aw_agent_file_def(af)->max_turns != 2) {
        fprintf(stderr, "agent file: %s\n", err.message);
        return 1;
    }
    aw_agent_file_free(af);
    aw_loop *l = aw_loop_new(NULL, &err);
    const char *args[] = {"true", NULL};
    aw_proc_spec spec = {.argv = args};
    aw_proc_fns fns = {.on_exit = on_exit_status};
    aw_proc *p = aw_proc_spawn(l, &spec, &fns, NULL, &err);
    if (!p) {
        fprintf(stderr, "spawn: %s\n", err.message);
        return 1;
    }
    char spec_text[512];
    snprintf(spec_text, sizeof spec_text, "replay:%s", argv[1]);
    aw_provider_config pc = {.spec = spec_text};
    aw_provider *prov = aw_provider_new(l, &pc, &err);
    if (!prov) {
        fprintf(stderr, "provider: %s\n", err.message);
        return 1;
    }
    aw_model_request req = {.turn = 1};
    aw_model_fns mf = {.on_text = on_text, .on_done = on_done};
    aw_model_call *call = NULL;
    if (aw_provider_send(prov, &req, &mf, NULL, &call, &err)) {
        fprintf(stderr, "send: %s\n", err.message);
        return 1;
    }
    for (int i = 0; i < 500 && (exited < 0 || !done); i++)
        aw_loop_once(l, 10);
    aw_proc_free(p);
    aw_provider_free(prov);
    aw_loop_free(l);
    if (exited != 0 || done != 1 || strcmp(reply, "hello") != 0) {
        fprintf(stderr, "exit %d, done %d, reply '%s'\n", exited, done, reply);
        return 1;
    }
    printf("runtime ok\n");
    return 0;
}
