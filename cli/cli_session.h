/* The stored options of a session (cli_session.c): what `resume`, `run
 * --session` and `chat` take from the store when no --model is given. */
#ifndef AW_CLI_SESSION_H
#define AW_CLI_SESSION_H

#include "agentwire/store.h"
#include "cli_run.h"

/* The run's options as the store keeps them: models (replay files and
 * tools files as absolute paths), provider settings without any key,
 * the system prompt, transport, context, format, schema, contract,
 * budgets. */
int cli_session_config_json(run_opts *o, const char *system, size_t system_len, aw_json_doc **out);
/* The stored options into o (its strings point into c, which must live
 * as long as o is used). Nonzero after a message. */
int cli_session_apply_config(run_opts *o, const aw_json_value *c);
/* The store the run writes to (NULL with --no-store). */
aw_store *cli_session_store(run_opts *o);

#endif
