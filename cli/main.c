/* agentwire — the command. One subcommand group per library module. */
#include <string.h>

#include "cli.h"

static const char main_help[] =
    "Usage: agentwire GROUP COMMAND [options] [FILE]\n"
    "\n"
    "The wire layer for LLM agents, as Unix filters. FILE defaults to stdin;\n"
    "output goes to stdout. Exit status: 0 success, 1 input rejected (stderr\n"
    "names the place as FILE:line:col: message), 2 usage error.\n"
    "\n"
    "Groups and their commands:\n"
    "  json validate|format|lines|repair\n"
    "             strict JSON, JSON.stringify-exact output, JSON lines, and\n"
    "             repair of broken model JSON\n"
    "  thread encode|decode\n"
    "             agent events <-> <thread> XML\n"
    "  messages encode|toolcalls|detect\n"
    "             chat messages (OpenAI, Anthropic, LangChain) -> <thread> XML or\n"
    "             text; tool calls written in fenced ```json blocks; the shape\n"
    "  transport next|past|extract\n"
    "             the XML tool transport: per-turn notices, streaming tag\n"
    "             extraction and validation, final reports\n"
    "  contract validate|parse|build|prompt\n"
    "             <llmQuery>/<llmResponse> and your own XML contracts\n"
    "  snapshot slim|restore\n"
    "             slim agent-state snapshots and restore\n"
    "  envelope   agent runtime events -> UI event envelopes (no command)\n"
    "  schema validate|check\n"
    "             JSON Schema (2020-12, draft-07): validate instances, check schemas\n"
    "\n"
    "Running agents:\n"
    "  run        an agent: a model, tools, the task; the final report on stdout\n"
    "             (every run is stored as a session)\n"
    "  resume     continue a session's cut run from its last stored step\n"
    "  sessions list|show|export|rm|gc|wait\n"
    "             stored sessions\n"
    "  chat       one exchange of a conversation with memory (<llmQuery>/<llmResponse>)\n"
    "  mcp list|call\n"
    "             MCP servers' tools (--mcp-config FILE): list them, call one\n"
    "  agent check|show\n"
    "             agent files (Markdown + YAML frontmatter): checked, or shown as\n"
    "             read; run one with 'agentwire run --agent FILE TASK'\n"
    "  serve      watch and browse sessions in a browser; a JSON API and event streams\n"
    "  submit     queue a run in the store (for a worker); prints its session id\n"
    "  worker     run the queued runs, several at once (on any number of machines)\n"
    "\n"
    "Run 'agentwire GROUP --help' for the commands of a group.\n"
    "  --version  print the version\n"
    "  --help     this text\n";

typedef struct group {
    const char *name;
    int (*run)(int argc, char **argv);
} group;

static const group groups[] = {
    {"json", cli_json},
    {"thread", cli_thread},
    {"messages", cli_messages},
    {"transport", cli_transport},
    {"contract", cli_contract},
    {"snapshot", cli_snapshot},
    {"envelope", cli_envelope},
    {"schema", cli_schema},
    {"run", cli_run},
    {"resume", cli_resume},
    {"sessions", cli_sessions},
    {"chat", cli_chat},
    {"mcp", cli_mcp},
    {"agent", cli_agent},
    {"serve", cli_serve},
    {"submit", cli_submit},
    {"worker", cli_worker},
};

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(main_help, stderr);
        return CLI_USAGE;
    }
    if (cli_is_help(argv[1])) {
        fputs(main_help, stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("agentwire %s\n", aw_version());
        return CLI_OK;
    }
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++)
        if (strcmp(argv[1], groups[i].name) == 0) {
            int rc = groups[i].run(argc - 2, argv + 2);
            if (fflush(stdout) != 0 && rc == CLI_OK) rc = CLI_REJECTED;
            return rc;
        }
    fprintf(stderr, "agentwire: unknown group '%s'\nTry 'agentwire --help'.\n", argv[1]);
    return CLI_USAGE;
}
