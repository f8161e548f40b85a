/* agentwire runtime — agent files and sub-agents.
 *
 * An agent file is Markdown with YAML frontmatter, the form of Claude
 * Code's subagents and of ai-agent's .ai files:
 *
 *   ---
 *   name: reviewer
 *   description: Reviews a change for bugs. Use after every edit.
 *   model: anthropic:claude-sonnet-4-6      # or sonnet, opus, haiku, inherit
 *   tools: fs__read_file, fs__list_directory # or a YAML list; Claude Code's Read, Grep... are left out
 *   mcpServers: ../.mcp.json                # or inline {NAME: {command, args, env, cwd}}
 *   agents: [helpers/grep.md]               # sub-agents, offered as tools agent__NAME
 *   maxTurns: 8
 *   ---
 *   You review changes. ...                 # the body is the system prompt
 *
 * Keys: name, description, model, fallback (a spec or a list), tools,
 * mcpServers, agents, transport, context, maxTurns, maxToolCallsPerTurn,
 * toolTimeout (milliseconds, or "30s", "2m"), format, schema (inline or a
 * JSON file), inputSchema (a sub-agent's arguments, inline or a file),
 * contract (llmQuery, llmResponse or a contract file), temperature,
 * maxTokens. Relative paths start at the agent file's directory. Every
 * value's type is checked and each problem placed at FILE:LINE:COL; keys
 * we do not use (Claude Code's color, permissionMode, ...) are listed once
 * as a warning.
 *
 * Each file under `agents` becomes a tool of its parent: agent__NAME, with
 * the file's description, taking {"task": string} (or the file's
 * inputSchema, whose arguments then are the task, as JSON). A call runs the
 * sub-agent as a run of its own on the same loop, nested under the calling
 * run (parent_session_id, depth + 1, agent_name), whose observers receive
 * its records; its final report, untouched, is the call's result (format
 * sub-agent by default: seed 001's opaque pass-through), and a report that
 * is not a success makes the call a failed one. A sub-agent inherits the
 * tools of the agent that calls it, except that agent's own sub-agents,
 * filtered by its own `tools`; it adds its own mcpServers and agents. */
#ifndef AGENTWIRE_AGENTFILE_H
#define AGENTWIRE_AGENTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "json.h"
#include "loop.h"
#include "provider.h"
#include "run.h"
#include "tools.h"
#include "transport.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- reading a file ----------------------------------------------------------------- */

typedef enum aw_agent_severity { AW_AGENT_WARNING = 0, AW_AGENT_ERROR } aw_agent_severity;

/* One thing wrong with a file. */
typedef struct aw_agent_problem {
    aw_agent_severity severity;
    const char *file;          /* the agent file, or the file it references */
    size_t line, column;       /* 1-based; 0 when the problem has no place */
    const char *message;
} aw_agent_problem;

/* A server configuration an agent brings: what aw_mcp_add_config takes. */
typedef struct aw_agent_mcp {
    const aw_json_value *config; /* {"mcpServers": {...}} */
    const char *base_dir;        /* where a server's relative cwd starts */
    const char *origin;          /* the file it came from ("the frontmatter" when inline) */
    size_t line, column;         /* where the agent file names it */
} aw_agent_mcp;

/* What a file says. Unset keys are NULL, 0 or has_* false. */
typedef struct aw_agent_def {
    const char *path;          /* as given */
    const char *dir;           /* its directory: relative paths start here */
    const char *name;          /* `name`, or the file's name without .md */
    const char *tool_name;     /* agent__NAME, as its parent offers it */
    const char *description;   /* "" when none */
    const char *system_prompt; /* the Markdown body, blank lines around it dropped; "" when none */
    const char *model;         /* as written ("sonnet", "openai:gpt-4o", "inherit"), or NULL */
    const char *const *fallbacks;
    size_t fallback_count;
    bool has_tools;            /* `tools` given: only these are offered */
    const char *const *tools;  /* patterns for aw_toolbox_allow (Claude Code's mcp__S__T as S__T) */
    size_t tool_count;
    const aw_agent_mcp *mcp;   /* in the order written */
    size_t mcp_count;
    const char *const *agents; /* the sub-agents' files, resolved against dir */
    size_t agent_count;
    bool has_transport;
    aw_transport_mode transport;
    bool has_context;
    aw_context_mode context;
    unsigned max_turns;        /* 0: unset */
    unsigned max_calls_per_turn;
    int64_t tool_timeout_ms;   /* 0: unset */
    bool has_format;
    aw_report_format format;
    const aw_json_value *schema;       /* the final report's JSON Schema */
    const aw_json_value *input_schema; /* a sub-agent's arguments */
    const char *contract;      /* a built-in contract's name, or a contract file (resolved) */
    bool has_temperature;
    double temperature;
    int max_tokens;            /* 0: unset */
} aw_agent_def;

typedef struct aw_agent_file aw_agent_file;

typedef struct aw_agent_read_options {
    const aw_allocator *alloc;
} aw_agent_read_options;

/* The largest agent file read. */
#define AW_AGENT_FILE_MAX ((size_t)4 << 20)

/* Read an agent file from text; path names it in problems and anchors its
 * relative paths. Referenced JSON files (schema, inputSchema, an
 * mcpServers path) are read now, sub-agents' files only checked to exist.
 * Returns 0 (maybe with warnings), AW_EVALID when some problem is an error
 * (*out is still set, so every problem can be listed; err holds the
 * first), or AW_ENOMEM (*out NULL). */
int aw_agent_file_parse(const char *text, size_t len, const char *path, const aw_agent_read_options *opts,
                        aw_agent_file **out, aw_error *err);
/* The same for a file on disk: also a negative code with *out NULL when
 * it cannot be read ("PATH: No such file or directory") or is larger than
 * AW_AGENT_FILE_MAX. */
int aw_agent_file_read(const char *path, const aw_agent_read_options *opts, aw_agent_file **out, aw_error *err);
void aw_agent_file_free(aw_agent_file *f);
const aw_agent_def *aw_agent_file_def(const aw_agent_file *f);
/* Every problem, in the order found: errors and warnings. */
const aw_agent_problem *aw_agent_file_problems(const aw_agent_file *f, size_t *count);
/* Whether some problem is an error. */
bool aw_agent_file_failed(const aw_agent_file *f);
/* Where a top-level key's value is written; false when the key is absent. */
bool aw_agent_file_where(const aw_agent_file *f, const char *key, size_t *line, size_t *column);

/* ---- models -------------------------------------------------------------------------- */

/* What a file's `model` and `fallback` mean depends on where it runs:
 *
 *   a provider spec       as written (openai:gpt-4o, claude-cli, exec:CMD;
 *                         a relative replay:FILE starts at the file's directory)
 *   inherit, or no model  the calling agent's models (for the top agent: the
 *                         command line's --model)
 *   sonnet, opus, haiku,  Claude models: with a command-line model of kind
 *   or claude-ID          claude-cli, claude-cli:NAME (the claude command knows
 *                         its aliases); of kind anthropic, anthropic:ID; of any
 *                         other kind, that model (the command line chose the
 *                         provider); with none, anthropic:ID
 *
 * The aliases' IDs: sonnet claude-sonnet-4-6, opus claude-opus-4-6, haiku
 * claude-haiku-4-5, unless ANTHROPIC_DEFAULT_SONNET_MODEL,
 * ANTHROPIC_DEFAULT_OPUS_MODEL or ANTHROPIC_DEFAULT_HAIKU_MODEL (Claude
 * Code's own variables) name others. */
typedef struct aw_agent_models {
    const char *const *inherit;       /* the calling agent's specs (may be none) */
    size_t inherit_count;
    const char *const *command_line;  /* --model then each --fallback, when --model was given */
    size_t command_line_count;
} aw_agent_models;

/* The provider specs a file's agent runs on, the model first: an array of
 * *count strings, each and the array allocated with alloc (free with
 * aw_agent_specs_free). Fails (AW_EINVAL, err says why) when there is no
 * model at all. */
int aw_agent_resolve_models(const aw_agent_def *def, const aw_agent_models *ctx, const aw_allocator *alloc,
                            char ***specs, size_t *count, aw_error *err);
void aw_agent_specs_free(const aw_allocator *alloc, char **specs, size_t count);
/* Whether spec names a model this build can drive: a provider kind of
 * aw_provider_kinds (with its MODEL or COMMAND when the kind needs one),
 * a Claude model name, or inherit. */
bool aw_agent_model_known(const char *spec);

/* ---- sub-agents ------------------------------------------------------------------------- */

#define AW_AGENT_DEFAULT_MAX_DEPTH 3

/* What every run in a tree of agents shares. The strings and arrays are
 * copied by aw_agent_tools_new. */
typedef struct aw_agent_env {
    aw_provider_config provider;       /* the template of every sub-agent's providers (spec set per model) */
    const char *const *command_line;   /* see aw_agent_models */
    size_t command_line_count;
    const aw_run_observer *observers;  /* every sub-agent's records go here */
    size_t observer_count;
    unsigned max_depth;                /* sub-agent levels below the top agent; 0: AW_AGENT_DEFAULT_MAX_DEPTH */
    const char *mcp_stderr_log;        /* MCP servers' stderr (aw_mcp_options.stderr_log) */
    const aw_allocator *alloc;
} aw_agent_env;

/* The tool source of owner's sub-agents (its `agents`): one tool each.
 * Their files are read now; a problem in one fails here, naming it.
 * models are owner's specs ("inherit" for its sub-agents); home is the
 * toolbox the source goes into (what sub-agents inherit; may be NULL);
 * depth is owner's (0 for the top agent) and chain the canonical paths of
 * the agents above owner, from the top (owner excluded), for the cycle
 * guard. NULL and err on failure. */
aw_tool_source *aw_agent_tools_new(aw_loop *l, const aw_agent_file *owner, const aw_agent_env *env,
                                   const char *const *models, size_t model_count, aw_toolbox *home, unsigned depth,
                                   const char *const *chain, size_t chain_len, aw_error *err);

/* Add def's mcpServers to box (aw_mcp_add_config for each configuration;
 * nothing starts until the toolbox does). Errors name the agent file and
 * the place the servers are written. */
int aw_agent_add_mcp(aw_toolbox *box, aw_loop *l, const aw_agent_def *def, const char *stderr_log, aw_error *err);

/* The allow patterns of def's `tools` for aw_toolbox_allow, with agent__*
 * added when it has sub-agents (they are declared by the file, never
 * filtered away). Sets *count to 0 when the file does not restrict its
 * tools. The array is allocated with alloc; *none is set when the file
 * lists tools yet none of them can exist (Claude Code's built-ins only):
 * then nothing but its sub-agents may be offered. */
int aw_agent_allow_patterns(const aw_agent_def *def, const aw_allocator *alloc, const char ***patterns,
                            size_t *count, bool *none);

/* ---- checking ------------------------------------------------------------------------------ */

/* Called for each problem agent check finds, in order. */
typedef void (*aw_agent_problem_fn)(void *ctx, const aw_agent_problem *p);

/* Everything `agentwire agent check` checks, without running anything:
 * the file and, depth first, every sub-agent file (keys, types, models,
 * referenced files, each MCP server's configuration as the MCP client
 * reads it, cycles and the depth limit). Returns 0 when no problem is an
 * error, AW_EVALID when some is, AW_ENOMEM. */
int aw_agent_check(const char *path, unsigned max_depth, const aw_allocator *alloc, aw_agent_problem_fn fn,
                   void *ctx, aw_error *err);

#ifdef __cplusplus
}
#endif
#endif
