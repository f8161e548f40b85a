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
#include "cli_agent_opts.h"

/* agentwire run's options, as read (cmd_run.c), and what an agent file
 * (--agent, cli_agent_opts.c) fills in where the command line is silent. */
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
    const char *tools_path, *schema_path, *contract_name, *system;
    bool transport_set, quiet, verbose;
    unsigned retries;
    bool retries_set;
    cli_agent_opts agent;
} run_opts;

typedef struct cli_run_ui cli_run_ui;

/* NULL (after a message) when the signal pipe cannot be made. */
cli_run_ui *cli_run_ui_new(aw_loop *loop, bool quiet, bool verbose);
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

#endif
