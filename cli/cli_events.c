/* The event destinations of a run (--events, repeatable) and their
 * options: the webhook's signing secret and dead-letter file, the queue's
 * bound. Shared by run, resume, chat and worker. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentwire/sink.h"
#include "cli_run.h"

long cli_events_option(cli_args *a, run_opts *o, const char *opt)
{
    bool secret = !strcmp(opt, "--events-secret"), dead = !strcmp(opt, "--events-dead-letter"),
         queue = !strcmp(opt, "--events-queue");
    if (!secret && !dead && !queue)
        return -1;
    const char *v = cli_opt_value(a, opt);
    if (!v)
        return CLI_USAGE;
    if (secret) {
        if (!*v)
            return cli_usage_error(a, "--events-secret is empty");
        o->events_secret = v;
    } else if (dead) {
        o->events_dead_letter = v;
    } else {
        long n = cli_opt_long(opt, v, 1, 10000000);
        if (n < 0)
            return CLI_USAGE;
        o->events_queue = (size_t)n;
    }
    return 0;
}

/* The secret as given, or a file's first line for @FILE (so it stays out
 * of `ps`). */
static int read_secret(const char *v, aw_buf *out)
{
    if (v[0] != '@')
        return aw_buf_append_str(out, v) ? CLI_REJECTED : CLI_OK;
    if (cli_read_input(v + 1, out))
        return CLI_REJECTED;
    while (out->len && (out->data[out->len - 1] == '\n' || out->data[out->len - 1] == '\r'))
        out->data[--out->len] = 0;
    if (!out->len) {
        fprintf(stderr, "agentwire: %s: the events secret is empty\n", v + 1);
        return CLI_REJECTED;
    }
    return CLI_OK;
}

int cli_events_open(const run_opts *o, aw_loop *loop, aw_sink **sinks, const char *who)
{
    if (!o->nevents)
        return CLI_OK;
    aw_buf secret;
    aw_buf_init(&secret, NULL);
    if (o->events_secret && read_secret(o->events_secret, &secret)) {
        aw_buf_free(&secret);
        return CLI_REJECTED;
    }
    aw_sink_options so = {
        .secret = o->events_secret ? secret.data : NULL,
        .dead_letter = o->events_dead_letter,
        .queue_max = o->events_queue,
    };
    int rc = CLI_OK;
    for (size_t i = 0; i < o->nevents && rc == CLI_OK; i++) {
        aw_error err;
        if (!(sinks[i] = aw_sink_open(loop, o->events[i], &so, &err))) {
            fprintf(stderr, "%s: %s\n", who, err.message);
            rc = CLI_REJECTED;
        }
    }
    if (secret.data)
        memset(secret.data, 0, secret.len);
    aw_buf_free(&secret);
    return rc;
}

void cli_events_report(const char *who, aw_sink *const *sinks, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const aw_sink *s = sinks[i];
        if (!s || !s->dropped)
            continue;
        fprintf(stderr, "%s: %s: %llu envelope%s dropped", who, s->name, (unsigned long long)s->dropped,
                s->dropped == 1 ? "" : "s");
        if (s->dead_lettered)
            fprintf(stderr, " (%llu in the dead-letter file)", (unsigned long long)s->dead_lettered);
        if (s->error[0])
            fprintf(stderr, "; last: %s", s->error);
        else
            fputs(" (the reader fell behind or went away)", stderr);
        fputc('\n', stderr);
    }
}
