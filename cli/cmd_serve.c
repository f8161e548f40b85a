/* `agentwire serve`: the session viewer on a local port until SIGINT or
 * SIGTERM (the server is the runtime's, agentwire/serve.h). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "agentwire/serve.h"
#include "agentwire/store.h"
#include "cli.h"

static const char serve_help[] =
    "Usage: agentwire serve [--store URL] [--listen HOST:PORT] [--token T | --token-file FILE]\n"
    "\n"
    "Watch and browse sessions in a browser: the list of sessions (status, agent,\n"
    "started, turns, tokens, cost) with filters, and each session's timeline of\n"
    "steps and tool calls, its token usage per step, its final report, its\n"
    "<thread> and accounting to download; a running session's page follows it\n"
    "live. Also a JSON API and server-sent events of its UI envelopes:\n"
    "  GET /api/sessions, /api/sessions/ID, /api/sessions/ID/events,\n"
    "      /api/sessions/ID/thread, /api/sessions/ID/accounting\n"
    "Runs until interrupted (Ctrl-C).\n"
    "\n"
    "  --store URL        the sessions (default sqlite:$XDG_DATA_HOME/agentwire/sessions.db)\n"
    "  --listen HOST:PORT where to listen (127.0.0.1:8080; port 0: any free port)\n"
    "  --token T          required for any address but loopback: the API then wants\n"
    "                     'Authorization: Bearer T' or '?token=T' (open the pages\n"
    "                     as http://HOST:PORT/?token=T); at least 16 characters\n"
    "  --token-file FILE  the token from the first line of FILE (not shown by ps)\n"
    "  --threads N        threads serving requests (4)\n";

static void log_line(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "agentwire serve: %s\n", msg);
}

/* The first line of FILE, into buf; NULL after a message when unreadable. */
static const char *token_from(const char *path, aw_buf *buf)
{
    if (cli_read_input(path, buf))
        return NULL;
    size_t n = strcspn(buf->data ? buf->data : "", "\r\n");
    if (buf->data)
        buf->data[n] = 0;
    return buf->data ? buf->data : "";
}

int cli_serve(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, argc, argv, "serve");
    aw_serve_options o = {.log = log_line};
    const char *token_file = NULL, *v;
    const char *opt;
    while ((opt = cli_next_opt(&a))) {
        if (cli_is_help(opt)) {
            fputs(serve_help, stdout);
            return CLI_OK;
        }
        bool known = !strcmp(opt, "--store") || !strcmp(opt, "--listen") || !strcmp(opt, "--token") ||
                     !strcmp(opt, "--token-file") || !strcmp(opt, "--threads");
        if (!known)
            return cli_usage_error(&a, "unknown option '%s'", opt);
        if (!(v = cli_opt_value(&a, opt)))
            return CLI_USAGE;
        if (!strcmp(opt, "--store"))
            o.store_url = v;
        else if (!strcmp(opt, "--listen"))
            o.listen = v;
        else if (!strcmp(opt, "--token"))
            o.token = v;
        else if (!strcmp(opt, "--token-file"))
            token_file = v;
        else {
            long n = cli_opt_long(opt, v, 1, 64);
            if (n < 0)
                return CLI_USAGE;
            o.threads = (unsigned)n;
        }
    }
    if (a.nfiles)
        return cli_usage_error(&a, "serve takes no argument");
    if (o.token && token_file)
        return cli_usage_error(&a, "--token or --token-file, not both");
    aw_buf store_url, token;
    aw_buf_init(&store_url, NULL);
    aw_buf_init(&token, NULL);
    aw_error err;
    int rc = CLI_OK;
    if (token_file && !(o.token = token_from(token_file, &token)))
        rc = CLI_REJECTED;
    if (!rc && !o.store_url) {
        if (aw_store_default_url(&store_url, &err)) {
            fprintf(stderr, "agentwire serve: %s\n", err.message);
            rc = CLI_REJECTED;
        }
        o.store_url = store_url.data;
    }
    /* The signals are taken by sigwait below: blocked before the server's
     * threads start, so they inherit the mask and never receive them. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    aw_server *srv = rc ? NULL : aw_server_start(&o, &err);
    if (!rc && !srv) {
        fprintf(stderr, "agentwire serve: %s\n", err.message);
        /* a refused address or token is the caller's mistake */
        rc = err.code == AW_EINVAL && (strstr(err.message, "loopback") || strstr(err.message, "token") ||
                                       strstr(err.message, "--listen"))
                 ? CLI_USAGE
                 : CLI_REJECTED;
    }
    if (srv) {
        int sig = 0;
        sigwait(&stop, &sig);
        fprintf(stderr, "agentwire serve: stopping (%s)\n", sig == SIGINT ? "interrupted" : "terminated");
        aw_server_stop(srv);
    }
    aw_buf_free(&store_url);
    aw_buf_free(&token);
    return rc;
}
