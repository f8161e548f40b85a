/* agentwire run --agent FILE: an agent file fills in the run's options,
 * and every option the command line gives wins over the file's key for
 * it (exactly: an option given is noted as it is read, whatever its
 * value, and the file's key is then left alone). Kept apart so that
 * cmd_run.c calls it in a few lines. */
#ifndef AW_CLI_AGENT_OPTS_H
#define AW_CLI_AGENT_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "agentwire/agentfile.h"
#include "agentwire/records.h"
#include "cli.h"

struct run_opts;
typedef struct cli_run_ui cli_run_ui;

typedef struct cli_agent_opts {
    const char *path;        /* --agent FILE */
    unsigned max_depth;      /* --max-depth N; 0: the default */
    const char *allow;       /* --allow-tools PATTERNS (comma-separated) */
    bool from_session;       /* path, max_depth and allow are a continued session's */
    unsigned given;          /* the options the command line gave (bits of cli_agent_opts.c's table) */
    aw_agent_file *file;
    char **specs;            /* the models the file resolved to */
    size_t nspecs;
    const char *command_line[16]; /* --model and each --fallback, when --model was given */
    size_t ncommand_line;
} cli_agent_opts;

/* The options' lines for agentwire run --help. */
extern const char cli_agent_help[];

/* Note opt (just returned by cli_next_opt): call it for every option. */
void cli_agent_note(cli_agent_opts *ag, const char *opt);
/* opt if it is one of ours (--agent, --max-depth, --allow-tools): 1 when
 * taken with its value, 0 when not ours, -1 after a usage error. */
int cli_agent_option(cli_args *a, const char *opt, cli_agent_opts *ag);
/* After the options: read the file (its problems printed as
 * FILE:LINE:COL: message) and fill every option the command line did not
 * give. -1 to go on, else the exit status. */
int cli_agent_apply(cli_args *a, struct run_opts *o);
/* A continued session's agent file (from_session), read again after its
 * stored options are taken up: its tools come from it as they did (MCP
 * servers, sub-agents, allowed tools); its other keys were stored
 * resolved, and its body is in the stored system prompt. -1 to go on,
 * else the exit status. */
int cli_agent_reload(struct run_opts *o);
/* The file's body as the system prompt, when --system is not given (nor
 * a continued session's prompt). */
int cli_agent_system(const struct run_opts *o, aw_buf *system);
/* The file's schema, when --schema is not given (NULL when none). */
const aw_json_value *cli_agent_schema(const struct run_opts *o);
/* The file's tools into *box (made when needed): its mcpServers, its
 * sub-agents (nested runs whose records go to observers), and its `tools`
 * (or --allow-tools) as the allow list. CLI_OK or an exit status after a
 * message. */
int cli_agent_add_tools(struct run_opts *o, aw_loop *loop, aw_toolbox **box, aw_records *records,
                        const aw_run_observer *observers, size_t nobservers, cli_run_ui *ui);
void cli_agent_free(cli_agent_opts *ag);

#endif
