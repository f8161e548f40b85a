/* The terminal side of `agentwire run` (and of the commands that run
 * agents): progress on stderr, questions for agent__ask_human, SIGINT and
 * SIGTERM, the report on stdout and the exit status. */
#ifndef AW_CLI_RUN_H
#define AW_CLI_RUN_H

#include <stdbool.h>

#include "agentwire/run.h"
#include "agentwire/tools.h"

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
