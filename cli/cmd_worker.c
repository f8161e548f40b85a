/* `agentwire worker`: runs the queued runs of a store, several at once on
 * one loop (N aw_runs), as long as it lives.
 *
 * Each run is taken with a lease (aw_store_claim) that a timer renews
 * every third of its length; the run is made exactly as `agentwire resume
 * ID` makes it (cli_run_job.c), so a run another worker left (it died: its
 * lease ran out) goes on from its last stored step, and one never started
 * starts with its task. Its steps are written only while the session is
 * this worker's (the recorder's fence): a worker that stalled past its
 * lease and lost the session to another stops at its next step rather
 * than write beside it, and a renewal that finds the lease gone cancels
 * the run at once.
 *
 * The worker's own --events receive the envelopes of every run it runs; a
 * queued run's own destinations (agentwire submit --events) receive its
 * own. SIGINT/SIGTERM: no more runs are taken, those running finish, then
 * the worker exits; a second signal exits at once, leaving the runs to
 * their leases (another worker resumes them). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agentwire/sink.h"
#include "agentwire/store.h"
#include "cli.h"
#include "cli_run.h"

static const char worker_help[] =
    "Usage: agentwire worker [--store URL] [options]\n"
    "\n"
    "Run the runs queued with 'agentwire submit', several at once, until stopped\n"
    "(SIGINT or SIGTERM: the runs under way finish first; a second signal stops\n"
    "at once, and their leases let other workers resume them). Start one on\n"
    "each machine sharing the store (PostgreSQL; SQLite serves one machine).\n"
    "A worker that dies loses its leases: another resumes its runs from their\n"
    "last stored step.\n"
    "\n"
    "Options:\n"
    "  --store URL               the store the runs are queued in (default\n"
    "                            sqlite:$XDG_DATA_HOME/agentwire/sessions.db)\n"
    "  --concurrency N           runs at once (4)\n"
    "  --lease T                 how long a run stays this worker's without a\n"
    "                            renewal (30s; renewed every third of it)\n"
    "  --poll T                  how often the queue is looked at when idle (1s)\n"
    "  --max-attempts N          a run taken this often is given up ('abandoned',\n"
    "                            10; 0: never)\n"
    "  --idle-exit               exit when nothing is queued and nothing runs\n"
    "  --events DEST             every run's envelopes also go there (repeatable;\n"
    "                            as 'agentwire run --events'), with --events-secret,\n"
    "                            --events-dead-letter, --events-queue\n"
    "  --quiet                   errors only on stderr (else a line per run)\n"
    "\n"
    "Exit status: 0 after a stop or --idle-exit, 1 the store could not be used,\n"
    "2 usage error, 130 stopped at once.\n";

#define DRAIN_MS 5000 /* what a run's own destinations get to deliver after it */

typedef struct worker worker;

typedef struct slot {
    worker *w;
    cli_run_job *job;
    char id[40];
    bool busy;        /* a run is in it, running or delivering its last envelopes */
    bool running;
    bool lost;        /* its lease was taken: not this worker's to release */
    int status;       /* the run's exit status */
    int64_t started_ms, drain_until;
    aw_timer *drain;
} slot;

struct worker {
    aw_loop *loop;
    aw_store *store;
    const char *store_url;
    char owner[300];
    unsigned concurrency, max_attempts;
    int64_t lease_ms, poll_ms;
    bool idle_exit, quiet, stopping, claim_pending;
    run_opts events;          /* --events and their options */
    aw_sink *sinks[8];
    slot *slots;
    size_t busy;
    aw_timer *poll, *renew;
    aw_watch *signal_watch;
    int signals;
    unsigned long completed, failed;
};

static int signal_fd = -1; /* the write end of the worker's signal pipe */

static void on_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    if (write(signal_fd, &b, 1) < 0) {
        /* the pipe is full: a signal is waiting already */
    }
    errno = saved;
}

static void say(worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(worker *w, const char *fmt, ...)
{
    if (w->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("agentwire worker: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void schedule_claim(worker *w);
static void maybe_exit(worker *w);

/* ---- one run ------------------------------------------------------------------------- */

static void free_slot(slot *s)
{
    size_t n = 0;
    aw_sink *const *own = s->job ? cli_run_job_sinks(s->job, &n) : NULL;
    cli_events_report("agentwire worker", own, n);
    cli_run_job_free(s->job);
    aw_timer_free(s->drain);
    s->job = NULL;
    s->drain = NULL;
    s->busy = false;
    s->w->busy--;
    schedule_claim(s->w);
    maybe_exit(s->w);
}

/* The run's own destinations deliver what they hold (at most DRAIN_MS)
 * while the other runs go on. */
static void on_drain(void *ctx)
{
    slot *s = ctx;
    size_t n = 0, pending = 0;
    aw_sink *const *own = cli_run_job_sinks(s->job, &n);
    for (size_t i = 0; i < n; i++)
        pending += aw_sink_pending(own[i]);
    if (pending && aw_loop_now(s->w->loop) < s->drain_until) {
        aw_timer_reset(s->drain, 50);
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (aw_sink_pending(own[i]))
            own[i]->ops->flush(own[i], 0, NULL); /* given up on: counted as dropped */
    free_slot(s);
}

/* Whether the store holds the run as ended (its last step is written). */
static bool stored_as_ended(worker *w, const char *id)
{
    aw_json_doc *d = NULL;
    aw_error err;
    if (aw_store_session_get(w->store, id, &d, &err))
        return false;
    const aw_json_value *st = aw_json_get(aw_json_doc_root(d), "status");
    bool ended = aw_json_is_string(st) && strcmp(st->u.str.ptr, "running") != 0 && strcmp(st->u.str.ptr, "queued") != 0;
    aw_json_doc_free(d);
    return ended;
}

static void finish(void *ctx)
{
    slot *s = ctx;
    worker *w = s->w;
    s->status = cli_run_job_end(s->job, s->status);
    double secs = (double)(aw_loop_clock() - s->started_ms) / 1000.0;
    aw_error err;
    if (s->lost) {
        say(w, "session %s: left to the worker that took it over", s->id);
    } else {
        /* ended in the store: out of the queue; else (its last step could
         * not be written) back in it, for any worker to resume */
        bool ended = stored_as_ended(w, s->id);
        int rc = ended ? aw_store_lease_release(w->store, s->id, w->owner, &err)
                       : aw_store_lease_return(w->store, s->id, w->owner, &err);
        if (rc)
            fprintf(stderr, "agentwire worker: session %s: %s\n", s->id, err.message);
        if (ended && s->status == CLI_OK)
            w->completed++;
        else if (ended)
            w->failed++;
        say(w, "session %s: %s (%.1f s)", s->id,
            !ended ? "not finished: back in the queue" : s->status == CLI_OK ? "completed" : "failed", secs);
    }
    size_t n = 0;
    aw_sink *const *own = cli_run_job_sinks(s->job, &n);
    size_t pending = 0;
    for (size_t i = 0; i < n; i++)
        pending += aw_sink_pending(own[i]);
    if (!pending) {
        free_slot(s);
        return;
    }
    s->drain_until = aw_loop_now(w->loop) + DRAIN_MS;
    s->drain = aw_loop_timer(w->loop, 50, on_drain, s);
    if (!s->drain)
        free_slot(s);
}

static void on_run_done(void *ctx, aw_run *run, const aw_run_result *res)
{
    (void)run;
    slot *s = ctx;
    s->running = false;
    s->status = res->status == AW_RUN_SUCCESS ? CLI_OK : CLI_REJECTED;
    /* not from inside the run's own callback: its job is freed there */
    if (aw_loop_defer(s->w->loop, finish, s))
        finish(s);
}

static void start(worker *w, slot *s, const char *id, int64_t attempts)
{
    memset(s, 0, sizeof *s);
    s->w = w;
    snprintf(s->id, sizeof s->id, "%s", id);
    s->busy = true;
    s->started_ms = aw_loop_clock();
    w->busy++;
    run_opts o;
    memset(&o, 0, sizeof o);
    o.store_url = w->store_url;
    o.store = w->store;
    o.session = s->id;
    o.resume = true; /* as `agentwire resume ID`: a queued run's task, or a cut run's last step */
    o.quiet = true;
    o.fence = w->owner;
    cli_args a;
    cli_args_init(&a, 0, NULL, "worker");
    cli_run_env env = {.loop = w->loop, .sinks = w->sinks, .nsinks = w->events.nevents, .who = "agentwire worker",
                       .shared_loop = true};
    int rc = cli_run_job_new(&a, &o, NULL, &env, &s->job);
    if (rc < 0 && aw_run_start(cli_run_job_run(s->job), on_run_done, s) == 0) {
        s->running = true;
        say(w, "session %s: %s (attempt %lld)", s->id, attempts > 1 ? "resumed" : "started", (long long)attempts);
        return;
    }
    /* It cannot start here (a tools file missing on this machine, a model
     * unknown, the store away): said, and back in the queue; its attempts
     * are counted, so one that never can is given up (--max-attempts). */
    fprintf(stderr, "agentwire worker: session %s cannot be run here: see above\n", s->id);
    aw_error err;
    if (aw_store_lease_return(w->store, s->id, w->owner, &err))
        fprintf(stderr, "agentwire worker: session %s: %s\n", s->id, err.message);
    w->failed++;
    free_slot(s);
}

/* ---- the queue and the leases ------------------------------------------------------ */

static void claim(void *ctx)
{
    worker *w = ctx;
    w->claim_pending = false;
    if (w->stopping)
        return;
    size_t free_slots = w->concurrency - w->busy;
    if (!free_slots)
        return;
    aw_json_doc *d = NULL;
    aw_error err;
    if (aw_store_claim(w->store, w->owner, w->lease_ms, free_slots, w->max_attempts, &d, &err)) {
        fprintf(stderr, "agentwire worker: the queue: %s\n", err.message);
        return;
    }
    const aw_json_value *rows = aw_json_doc_root(d);
    size_t n = aw_json_count(rows), started = 0;
    for (size_t i = 0; i < n; i++) {
        const aw_json_value *r = aw_json_at(rows, i);
        const char *id = aw_json_get(r, "id")->u.str.ptr;
        const char *status = aw_json_get(r, "status")->u.str.ptr;
        const aw_json_value *tries = aw_json_get(r, "attempts");
        long long attempts = aw_json_is_number(tries) && tries->u.num.d >= 0 && tries->u.num.d < 1e15
                                 ? (long long)tries->u.num.d : 0;
        if (!strcmp(status, "abandoned")) {
            fprintf(stderr, "agentwire worker: session %s: given up after %lld attempts\n", id, attempts);
        } else if (strcmp(status, "queued") != 0 && strcmp(status, "running") != 0) {
            /* its worker died between its last step and releasing it */
            if (aw_store_lease_release(w->store, id, w->owner, &err))
                fprintf(stderr, "agentwire worker: session %s: %s\n", id, err.message);
        } else {
            for (unsigned k = 0; k < w->concurrency; k++)
                if (!w->slots[k].busy) {
                    start(w, &w->slots[k], id, attempts);
                    started++;
                    break;
                }
        }
    }
    aw_json_doc_free(d);
    if (!n)
        maybe_exit(w);
    else if (started == free_slots)
        schedule_claim(w); /* the queue may hold more once these end */
}

static void schedule_claim(worker *w)
{
    if (w->claim_pending || w->stopping)
        return;
    w->claim_pending = true;
    if (aw_loop_defer(w->loop, claim, w))
        w->claim_pending = false;
}

static void on_poll(void *ctx)
{
    worker *w = ctx;
    aw_timer_reset(w->poll, w->poll_ms);
    if (!w->claim_pending)
        claim(w);
}

static void on_renew(void *ctx)
{
    worker *w = ctx;
    aw_timer_reset(w->renew, w->lease_ms / 3);
    const char *ids[256];
    bool held[256];
    slot *of[256];
    size_t n = 0;
    for (unsigned k = 0; k < w->concurrency && n < 256; k++)
        if (w->slots[k].running && !w->slots[k].lost) {
            of[n] = &w->slots[k];
            ids[n++] = w->slots[k].id;
        }
    aw_error err;
    if (!n)
        return;
    if (aw_store_lease_renew(w->store, w->owner, w->lease_ms, ids, n, held, &err)) {
        fprintf(stderr, "agentwire worker: the leases could not be renewed: %s\n", err.message);
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (!held[i]) {
            fprintf(stderr, "agentwire worker: session %s: its lease ran out and another worker took it: stopped\n",
                    ids[i]);
            of[i]->lost = true;
            aw_run_cancel(cli_run_job_run(of[i]->job), "the worker's lease ran out");
        }
}

static void maybe_exit(worker *w)
{
    if (w->busy)
        return;
    if (w->stopping || (w->idle_exit && !w->claim_pending))
        aw_loop_stop(w->loop);
}

static void on_signal_pipe(void *ctx, int fd, unsigned events)
{
    (void)events;
    worker *w = ctx;
    unsigned char b[16];
    ssize_t k = read(fd, b, sizeof b);
    if (k <= 0)
        return;
    if (++w->signals >= 2) {
        fprintf(stderr, "agentwire worker: stopped at once; %zu run%s left to %s lease%s\n", w->busy,
                w->busy == 1 ? "" : "s", w->busy == 1 ? "its" : "their", w->busy == 1 ? "" : "s");
        fflush(stderr);
        _exit(130); /* nothing is written: the runs stay "running", and resumable */
    }
    w->stopping = true;
    if (w->busy)
        say(w, "finishing %zu run%s (again to stop at once)", w->busy, w->busy == 1 ? "" : "s");
    maybe_exit(w);
}

/* ---- options and the loop ---------------------------------------------------------- */

static int read_options(cli_args *a, worker *w)
{
    const char *opt;
    while ((opt = cli_next_opt(a))) {
        const char *v;
        long n;
        int64_t ms;
        if (cli_is_help(opt)) {
            fputs(worker_help, stdout);
            return CLI_OK;
        } else if (!strcmp(opt, "--store")) {
            if (!(w->store_url = cli_opt_value(a, opt)))
                return CLI_USAGE;
        } else if (!strcmp(opt, "--concurrency") || !strcmp(opt, "--max-attempts")) {
            bool conc = !strcmp(opt, "--concurrency");
            if (!(v = cli_opt_value(a, opt)) || (n = cli_opt_long(opt, v, conc ? 1 : 0, conc ? 256 : 1000000)) < 0)
                return CLI_USAGE;
            *(conc ? &w->concurrency : &w->max_attempts) = (unsigned)n;
        } else if (!strcmp(opt, "--lease") || !strcmp(opt, "--poll")) {
            if (!(v = cli_opt_value(a, opt)))
                return CLI_USAGE;
            if ((ms = cli_parse_duration(v)) < (!strcmp(opt, "--lease") ? 300 : 10))
                return cli_usage_error(a, "%s wants a duration such as 30s or 500ms (at least %s), not '%s'", opt,
                                       !strcmp(opt, "--lease") ? "300ms" : "10ms", v);
            *(!strcmp(opt, "--lease") ? &w->lease_ms : &w->poll_ms) = ms;
        } else if (!strcmp(opt, "--idle-exit")) {
            w->idle_exit = true;
        } else if (!strcmp(opt, "--quiet")) {
            w->quiet = true;
        } else if (!strcmp(opt, "--events")) {
            if (!(v = cli_opt_value(a, opt)))
                return CLI_USAGE;
            if (w->events.nevents == sizeof w->events.events / sizeof *w->events.events)
                return cli_usage_error(a, "at most 8 --events destinations");
            w->events.events[w->events.nevents++] = v;
        } else if ((n = cli_events_option(a, &w->events, opt)) != -1) {
            if (n > 0)
                return (int)n;
        } else {
            return cli_usage_error(a, "unknown option '%s'", opt);
        }
    }
    if (a->nfiles)
        return cli_usage_error(a, "a worker takes no argument (its runs come from the store)");
    return -1;
}

static int serve(worker *w)
{
    int p[2];
    if (pipe2(p, O_NONBLOCK | O_CLOEXEC)) {
        fprintf(stderr, "agentwire worker: %s\n", strerror(errno));
        return CLI_REJECTED;
    }
    signal_fd = p[1];
    cli_catch_stop_signals(on_signal);
    w->signal_watch = aw_loop_watch(w->loop, p[0], AW_WATCH_READ, on_signal_pipe, w);
    w->poll = aw_loop_timer(w->loop, w->poll_ms, on_poll, w);
    w->renew = aw_loop_timer(w->loop, w->lease_ms / 3, on_renew, w);
    int rc = CLI_OK;
    if (!w->signal_watch || !w->poll || !w->renew) {
        fprintf(stderr, "agentwire worker: out of memory\n");
        rc = CLI_REJECTED;
    } else {
        say(w, "%s: taking runs from %s (%u at once)", w->owner, aw_store_url(w->store), w->concurrency);
        claim(w);
        if (aw_loop_run(w->loop)) {
            fprintf(stderr, "agentwire worker: the event loop failed\n");
            rc = CLI_REJECTED;
        }
    }
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    aw_watch_free(w->signal_watch);
    aw_timer_free(w->poll);
    aw_timer_free(w->renew);
    close(p[0]);
    close(p[1]);
    signal_fd = -1;
    return rc;
}

int cli_worker(int argc, char **argv)
{
    worker w = {.concurrency = 4, .max_attempts = 10, .lease_ms = 30000, .poll_ms = 1000};
    cli_args a;
    cli_args_init(&a, argc, argv, "worker");
    int rc = read_options(&a, &w);
    if (rc >= 0)
        return rc;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    snprintf(w.owner, sizeof w.owner, "%s:%ld", host, (long)getpid()); /* as the recorder writes it */
    aw_error err;
    rc = CLI_REJECTED;
    if (!(w.store = cli_store_open(w.store_url, false)))
        return CLI_REJECTED;
    if (!(w.loop = aw_loop_new(NULL, &err))) {
        fprintf(stderr, "agentwire worker: %s\n", err.message);
        goto out;
    }
    w.slots = calloc(w.concurrency, sizeof *w.slots);
    if (!w.slots || cli_events_open(&w.events, w.loop, w.sinks, "agentwire worker"))
        goto out;
    rc = serve(&w);
    for (size_t i = 0; i < w.events.nevents; i++)
        if (w.sinks[i])
            w.sinks[i]->ops->flush(w.sinks[i], 5000, NULL);
    cli_events_report("agentwire worker", w.sinks, w.events.nevents);
    say(&w, "%lu run%s completed, %lu failed", w.completed, w.completed == 1 ? "" : "s", w.failed);
out:
    for (size_t i = 0; i < w.events.nevents; i++)
        aw_sink_free(w.sinks[i]);
    free(w.slots);
    aw_loop_free(w.loop);
    aw_store_close(w.store);
    return rc;
}
