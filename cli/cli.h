/* Shared pieces of the agentwire command: input reading, error printing
 * and the tiny option parser every subcommand uses. */
#ifndef AW_CLI_H
#define AW_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "agentwire/agentwire.h"

/* Exit statuses of the command (DESIGN.md). */
enum { CLI_OK = 0, CLI_REJECTED = 1, CLI_USAGE = 2 };

/* The name to show for a FILE argument: "<stdin>" for NULL or "-". */
const char *cli_input_name(const char *path);

/* Read a whole FILE (or stdin for NULL/"-") into out. On failure prints
 * "agentwire: FILE: reason" and returns nonzero. */
int cli_read_input(const char *path, aw_buf *out);

/* The whole of FILE (or stdin) for reading in place: mapped when it is a
 * regular file, else read into buf (cli_map.c). On failure prints
 * "agentwire: FILE: reason" and returns nonzero. */
typedef struct cli_input {
    const char *data; /* never NULL on success, even when empty */
    size_t len;
    void *map; /* the mapping, when mapped */
    size_t map_len;
    aw_buf buf; /* the bytes, when read */
} cli_input;
int cli_input_open(const char *path, cli_input *in);
void cli_input_close(cli_input *in);

/* Stream a FILE (or stdin) in chunks; fn returns nonzero to stop. */
typedef int (*cli_chunk_fn)(void *ctx, const char *chunk, size_t len);
int cli_stream_input(const char *path, size_t chunk_size, cli_chunk_fn fn, void *ctx);

/* Print "FILE:line:col: message" (or "FILE: message" without a position). */
void cli_report(const char *name, const aw_error *err);

/* Write bytes to stdout; returns nonzero on a write error (reported). */
int cli_write_stdout(const char *p, size_t n);

/* Read FILE (or stdin) whole and parse it as one JSON text (opts may be
 * NULL). CLI_OK and *out, or CLI_REJECTED after reporting the place. */
int cli_read_json(const char *path, const aw_json_read_options *opts, aw_json_doc **out);

/* Print v as compact JSON and a newline: CLI_OK or CLI_REJECTED. */
int cli_print_json(const aw_json_value *v);

/* How the command writes JSON records (all but `json format`'s
 * JSON.stringify-exact output): lone surrogates as U+FFFD, so every line is
 * valid Unicode. */
extern const aw_json_write_options cli_json_records;

/* Options: argv is walked left to right; anything starting with "--" is an
 * option, the first non-option is FILE, "-" alone means stdin. */
typedef struct cli_args {
    int argc;
    char **argv;
    int i;
    const char *file;
    int nfiles;
    const char *cmd; /* "json format", for messages */
    const char *pending; /* value given as --opt=value */
} cli_args;

void cli_args_init(cli_args *a, int argc, char **argv, const char *cmd);
/* Next option name (without its value) or NULL when done; non-options are
 * collected as FILE. */
const char *cli_next_opt(cli_args *a);
/* The value of the option just returned ("--x V" or "--x=V"); NULL after
 * printing a usage error when it is missing. */
const char *cli_opt_value(cli_args *a, const char *opt);
/* Parse a non-negative integer option value; prints a usage error on bad
 * input and returns -1. */
long cli_opt_long(const char *opt, const char *value, long min, long max);
/* Print a usage error for the current command and return CLI_USAGE. */
int cli_usage_error(const cli_args *a, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* FILE count check: at most one. */
int cli_args_done(cli_args *a);

bool cli_is_help(const char *s);

/* The options of a command that takes none but --help: -1 to go on, else
 * the exit status (help printed, or a usage error). */
int cli_no_options(cli_args *a, const char *help);

/* A group's commands by name; run gets the arguments after the command. */
typedef struct cli_command {
    const char *name;
    int (*run)(cli_args *a);
} cli_command;

/* Run `agentwire GROUP COMMAND ...`: help for the group, the command
 * named by argv[0], or a usage error for an unknown one. */
int cli_dispatch(const char *group, const char *help, const cli_command *cmds, size_t ncmds, int argc,
                 char **argv);

/* SIGINT and SIGTERM to handler (which writes to a pipe the loop
 * watches), with SA_RESTART (cli_signals.c). */
void cli_catch_stop_signals(void (*handler)(int));

/* Subcommand groups. */
int cli_json(int argc, char **argv);
int cli_json_repair(cli_args *a); /* `json repair`, called by cli_json */
int cli_thread(int argc, char **argv);
int cli_messages(int argc, char **argv);
int cli_contract(int argc, char **argv);
int cli_transport(int argc, char **argv);
int cli_snapshot(int argc, char **argv);
int cli_envelope(int argc, char **argv);
int cli_run(int argc, char **argv);
int cli_resume(int argc, char **argv);
int cli_sessions(int argc, char **argv);
int cli_chat(int argc, char **argv);
int cli_schema(int argc, char **argv);
int cli_mcp(int argc, char **argv);
int cli_agent(int argc, char **argv);
int cli_serve(int argc, char **argv);
int cli_submit(int argc, char **argv);
int cli_worker(int argc, char **argv);

#endif
