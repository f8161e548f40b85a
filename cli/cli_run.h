/* The terminal side of `agentwire run` (and of the commands that run
 * agents): progress on stderr, questions for agent__ask_human, SIGINT and
 * SIGTERM, the report on stdout and the exit status. */
#ifndef AW_CLI_RUN_H
#define AW_CLI_RUN_H

#include <stdbool.h>

#include "agentwire/provider.h"
#include "agentwire/records.h"
#include "agentwire/run.h"
#include "agentwire/tools.h"
#include "cli.h"
#include "cli_mcp_opts.h"
#include "cli_agent_opts.h"

typedef struct cli_run_ui cli_run_ui;

/* NULL (after a message) when the signal pipe cannot be made. */
cli_run_ui *cli_run_ui_new(aw_loop *loop, bool quiet, bool verbose);
/* --recover-calls' value as AW_DIALECT_* flags; -1 for an unknown name. */
long cli_run_recover_calls(const char *v);
/* --visible: the model's visible text (no call markup) on stderr as it
 * streams. */
void cli_run_ui_show_visible(cli_run_ui *ui);
void cli_run_ui_free(cli_run_ui *ui);
aw_run_observer cli_run_ui_observer(cli_run_ui *ui);
/* Tool sources' logs (a server's stderr, warnings) go to the terminal too. */
void cli_run_ui_attach_tools(cli_run_ui *ui, aw_toolbox *box);
/* aw_ask_fn: the question on the terminal, the answer from it. */
void cli_run_ui_ask(void *ctx, aw_run *run, const char *question, size_t len);
/* Start the run, serve the loop until it ends, print the report; the exit
 * status (0 success, 1 otherwise, 130 interrupted, 143 terminated). */
int cli_run_ui_drive(cli_run_ui *ui, aw_run *run);
/* The report as stdout shows it. */
int cli_run_print_result(const aw_run_result *res);
/* Give the result to fn instead of printing it (agentwire chat); fn's
 * return is the exit status. */
typedef int (*cli_result_fn)(void *ctx, const aw_run_result *res);
void cli_run_ui_set_result(cli_run_ui *ui, cli_result_fn fn, void *ctx);

/* ---- the options of a run, shared by run, resume and chat (cmd_run.c) ---- */

typedef struct cli_session cli_session;

typedef struct run_opts {
    const char *models[16]; /* the --model, then each --fallback */
    size_t nmodels;
    const char *model;
    const char *fallbacks[15];
    size_t nfallbacks;
    aw_provider_config pcfg;
    aw_run_config rcfg;
    aw_records_config rec;
    const char *events[8];
    size_t nevents;
    const char *events_secret;      /* --events-secret TEXT|@FILE (webhooks) */
    const char *events_dead_letter; /* --events-dead-letter FILE (webhooks) */
    size_t events_queue;            /* --events-queue N (0: the sinks' default) */
    const char *tools_path, *schema_path, *contract_name, *system;
    bool transport_set, quiet, verbose, visible;
    const char *recover_calls;    /* --recover-calls auto|off|LIST; NULL: auto */
    unsigned retries;
    bool retries_set;
    cli_mcp_opts mcp;             /* --mcp-config, --mcp, --mcp-log (cli_mcp_opts.c) */
    /* sessions (cli_session.c) */
    const char *store_url;
    struct aw_store *store;       /* an open store to use instead (a worker's), not closed */
    bool no_store;
    const char *session;          /* --session ID, or the ID of resume and chat */
    bool resume;                  /* agentwire resume: continue the cut run */
    const char *session_kind;     /* "run" (default) or "chat" */
    const char *snapshot_preset;
    unsigned turn_limit;          /* a stored run's limit of turns (counted from the session's start) */
    const char *system_text;      /* a stored session's system prompt itself (not TEXT|@FILE) */
    const aw_json_value *schema_value; /* a stored session's --schema */
    bool task_is_query;           /* the task is the contract's query already (chat) */
    const char *fence;            /* a worker's "host:pid": steps are written only while the
                                     session is still its (aw_store_recorder_fence) */
    const char *help;             /* another command's --help text */
    cli_result_fn on_result;      /* the result, instead of printing it */
    void *result_ctx;
    cli_session *sess;
    cli_agent_opts agent;         /* --agent FILE (cli_agent_opts.c) */
} run_opts;

/* "500ms", "30s", "2m", "1h", or plain milliseconds; -1 when malformed. */
int64_t cli_parse_duration(const char *s);

/* Read the options into o: -1 to go on, else the exit status (help
 * printed, or a usage error). */
int cli_run_parse(cli_args *a, run_opts *o);
/* Run with o (task NULL: a resumed run's cut turn, no new task): the
 * exit status. */
int cli_run_go(cli_args *a, run_opts *o, const char *task);

/* ---- one run on a given loop (cli_run_job.c) ---- */

typedef struct cli_run_job cli_run_job;

typedef struct cli_run_env {
    aw_loop *loop;
    cli_run_ui *ui;          /* the terminal, or NULL (a worker's run: no questions, no progress) */
    aw_sink *const *sinks;   /* more destinations for the run's envelopes (a worker's own), not owned */
    size_t nsinks;
    const char *who;         /* what messages start with: "agentwire run" */
    /* The loop goes on after the run (a worker's): the run's own
     * destinations are not waited for when it ends (see cli_run_job_sinks). */
    bool shared_loop;
} cli_run_env;

/* Make the run o describes (task NULL: a resumed run's cut turn) on
 * env->loop, its session begun in the store: -1 and *out, else the exit
 * status after a message (*out may be set then too: free it). */
int cli_run_job_new(cli_args *a, const run_opts *o, const char *task, const cli_run_env *env, cli_run_job **out);
aw_run *cli_run_job_run(cli_run_job *j);
/* The job's own copy of the options (its session, its store). */
run_opts *cli_run_job_opts(cli_run_job *j);
/* The run is over: its records closed and its destinations' drops
 * reported; rc (the status so far) becomes 1 when a record failed. */
int cli_run_job_end(cli_run_job *j, int rc);
void cli_run_job_free(cli_run_job *j);
/* The run's own event destinations (its --events, or a queued run's). */
aw_sink *const *cli_run_job_sinks(const cli_run_job *j, size_t *n);

/* ---- event destinations (cli_events.c) ---- */

/* --events-secret, --events-dead-letter, --events-queue: -1 when opt is
 * none of them, 0 when taken, else a usage error's status. */
long cli_events_option(cli_args *a, run_opts *o, const char *opt);
/* Open o's --events destinations on loop into sinks (o->nevents of them):
 * CLI_OK, or CLI_REJECTED after a message naming who. */
int cli_events_open(const run_opts *o, aw_loop *loop, aw_sink **sinks, const char *who);
/* On stderr: each sink that dropped envelopes, how many and why. */
void cli_events_report(const char *who, aw_sink *const *sinks, size_t n);

/* ---- sessions in a run (cli_session.c) ---- */

/* A session option (--store, --no-store, --session, --snapshot-preset):
 * -1 when opt is none of them, 0 when taken, else a usage error's status. */
long cli_session_option(cli_args *a, run_opts *o, const char *opt);
/* Open the store and, when a session is continued, load it: its resume
 * data, and its stored options when no --model was given; *task may be
 * replaced by the session's pending one. -1 to go on, else the exit status. */
int cli_session_open(run_opts *o, const char **task);
/* Put the resume data, the session id and the store's observer into cfg
 * (*slot is the observer array's free place). Nonzero: stop (reported). */
int cli_session_configure(run_opts *o, aw_run_config *cfg, aw_run_observer *slot);
/* Record the session's start in the store (with its configuration). */
int cli_session_begin(run_opts *o, aw_run *run, const char *system, size_t system_len);
void cli_session_free(run_opts *o);
/* The store a command names (--store, or the default); NULL after a message. */
struct aw_store *cli_store_open(const char *url, bool read_only);

#endif
