/* Agent files (runtime/agentfile*.c, yaml_tree.c, agent_models.c,
 * agent_check.c): Claude Code's subagent form as its docs write it, every
 * key read and every wrong type placed at its line and column, bad and
 * hostile YAML placed, unknown keys warned once, referenced files, model
 * names, the sub-agent tree check, and every allocation failure handled. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agentwire/agentfile.h"
#include "failalloc.h"
#include "scratch.h"


/* The file read from text, as if it lay in the scratch directory. */
static aw_agent_file *parse_as(const char *name, const char *text, int want_rc)
{
    aw_agent_file *f = NULL;
    aw_error err;
    int rc = aw_agent_file_parse(text, strlen(text), aw_test_scratch_path(name), NULL, &f, &err);
    assert_int_equal(rc, want_rc);
    assert_non_null(f);
    return f;
}

static aw_agent_file *parse(const char *text, int want_rc) { return parse_as("agent.md", text, want_rc); }

static size_t count_of(const aw_agent_file *f, aw_agent_severity sev)
{
    size_t n = 0, k = 0;
    const aw_agent_problem *p = aw_agent_file_problems(f, &n);
    for (size_t i = 0; i < n; i++)
        k += p[i].severity == sev;
    return k;
}

/* The problem whose message holds `text`: its place must be line:column. */
static void has_problem(const aw_agent_file *f, aw_agent_severity sev, size_t line, size_t column, const char *text)
{
    size_t n = 0;
    const aw_agent_problem *p = aw_agent_file_problems(f, &n);
    for (size_t i = 0; i < n; i++)
        if (strstr(p[i].message, text)) {
            if (p[i].severity != sev || p[i].line != line || p[i].column != column)
                fail_msg("'%s' is a %s at %zu:%zu, wanted a %s at %zu:%zu", p[i].message,
                         p[i].severity ? "error" : "warning", p[i].line, p[i].column, sev ? "error" : "warning", line,
                         column);
            return;
        }
    for (size_t i = 0; i < n; i++)
        print_message("  problem: %zu:%zu: %s\n", p[i].line, p[i].column, p[i].message);
    fail_msg("no problem mentions '%s'", text);
}

/* ---- Claude Code's form ---------------------------------------------------------- */

/* The code-reviewer example of Claude Code's subagent documentation
 * (https://docs.anthropic.com/en/docs/claude-code/sub-agents, "Example
 * subagents"), its frontmatter as written there and its body shortened. */
static const char claude_code_reviewer[] =
    "---\n"
    "name: code-reviewer\n"
    "description: Expert code review specialist. Proactively reviews code for quality, security, and "
    "maintainability. Use immediately after writing or modifying code.\n"
    "tools: Read, Grep, Glob, Bash\n"
    "model: inherit\n"
    "---\n"
    "\n"
    "You are a senior code reviewer ensuring high standards of code quality and security.\n"
    "\n"
    "When invoked:\n"
    "1. Run git diff to see recent changes\n"
    "2. Focus on modified files\n"
    "3. Begin review immediately\n";

static void test_claude_code_subagent_runs_as_it_is(void **state)
{
    (void)state;
    aw_agent_file *f = parse(claude_code_reviewer, 0);
    const aw_agent_def *d = aw_agent_file_def(f);
    assert_string_equal(d->name, "code-reviewer");
    assert_string_equal(d->tool_name, "agent__code-reviewer");
    assert_true(!strncmp(d->description, "Expert code review specialist. Proactively", 42));
    assert_string_equal(d->model, "inherit");
    /* the built-in tools are left out, with one warning naming them */
    assert_true(d->has_tools);
    assert_int_equal(d->tool_count, 0);
    assert_int_equal(count_of(f, AW_AGENT_ERROR), 0);
    assert_int_equal(count_of(f, AW_AGENT_WARNING), 1);
    has_problem(f, AW_AGENT_WARNING, 4, 8, "Read, Grep, Glob, Bash are Claude Code's built-in tools");
    const char **patterns;
    size_t n;
    bool none;
    assert_int_equal(aw_agent_allow_patterns(d, NULL, &patterns, &n, &none), 0);
    assert_int_equal(n, 0);
    assert_true(none);
    /* the body, without the blank line after the frontmatter */
    assert_true(!strncmp(d->system_prompt, "You are a senior code reviewer ensuring", 39));
    assert_string_equal(d->system_prompt + strlen(d->system_prompt) - 27, "3. Begin review immediately");
    aw_agent_file_free(f);
}

/* The other forms Claude Code's files use: keys of its own, the list form
 * of tools with MCP tool names, mcpServers as a list of names and inline
 * servers, a Claude model alias. */
static void test_claude_code_keys_and_forms(void **state)
{
    (void)state;
    aw_agent_file *f = parse("---\n"
                             "name: issue-filer\n"
                             "description: Files issues.\n"
                             "color: blue\n"
                             "tools:\n"
                             "  - Read\n"
                             "  - mcp__github__create_issue\n"
                             "  - mcp__fs\n"
                             "  - Task(helper)\n"
                             "model: sonnet\n"
                             "permissionMode: acceptEdits\n"
                             "mcpServers:\n"
                             "  - github\n"
                             "  - fs:\n"
                             "      command: npx\n"
                             "      args: [-y, server-filesystem, 8080]\n"
                             "      env: {DEBUG: 1}\n"
                             "skills: [a, b]\n"
                             "---\n"
                             "Body.\n",
                             0);
    const aw_agent_def *d = aw_agent_file_def(f);
    assert_string_equal(d->model, "sonnet");
    assert_int_equal(d->tool_count, 2);
    assert_string_equal(d->tools[0], "github__create_issue");
    assert_string_equal(d->tools[1], "fs__*");
    has_problem(f, AW_AGENT_WARNING, 6, 3, "Read, Task(helper) are Claude Code's built-in tools");
    /* unknown keys: one warning naming each, placed at the first */
    has_problem(f, AW_AGENT_WARNING, 4, 1,
                "unknown keys, ignored: color (line 4), permissionMode (line 11), skills (line 18)");
    has_problem(f, AW_AGENT_WARNING, 13, 5, "'github' names a server configured elsewhere");
    assert_int_equal(count_of(f, AW_AGENT_WARNING), 3);
    assert_int_equal(count_of(f, AW_AGENT_ERROR), 0);
    /* the inline server, its arguments and environment as strings */
    assert_int_equal(d->mcp_count, 1);
    const aw_json_value *fs = aw_json_get(aw_json_get(d->mcp[0].config, "mcpServers"), "fs");
    assert_string_equal(aw_json_get(fs, "command")->u.str.ptr, "npx");
    assert_string_equal(aw_json_at(aw_json_get(fs, "args"), 2)->u.str.ptr, "8080");
    assert_string_equal(aw_json_get(aw_json_get(fs, "env"), "DEBUG")->u.str.ptr, "1");
    assert_string_equal(d->mcp[0].base_dir, aw_test_scratch_dir());
    aw_agent_file_free(f);
}

/* ---- every key ------------------------------------------------------------------------- */

static void test_every_key(void **state)
{
    (void)state;
    aw_test_scratch_write("helper.md", "---\nname: helper\n---\nHelp.\n");
    aw_test_scratch_write("other.md", "Other.\n");
    aw_test_scratch_write("report.schema.json", "{\"type\": \"object\", \"required\": [\"summary\"]}");
    aw_test_scratch_write("servers.json", "{\"mcpServers\": {\"web\": {\"command\": \"web-server\"}}}");
    aw_test_scratch_write("answer.contract.json", "{\"format\": \"1.0\", \"name\": \"answer\", \"version\": \"1.0.0\", "
                                       "\"root\": {\"name\": \"answer\", \"children\": [{\"name\": \"text\", "
                                       "\"text\": {\"required\": true}}]}}");
    aw_agent_file *f = parse("---\n"
                             "name: lead agent\n"
                             "description: \"Leads: plans, then delegates.\"\n"
                             "model: openai:gpt-4o\n"
                             "fallback: [anthropic:claude-sonnet-4-6, claude-cli]\n"
                             "tools: fs__read_file, mcp__web__fetch\n"
                             "mcpServers: servers.json\n"
                             "agents: [helper.md, ./other.md]\n"
                             "transport: xml-final\n"
                             "context: xml\n"
                             "maxTurns: 7\n"
                             "maxToolCallsPerTurn: 3\n"
                             "toolTimeout: 2m\n"
                             "format: json\n"
                             "schema: report.schema.json\n"
                             "inputSchema:\n"
                             "  type: object\n"
                             "  properties: {topic: {type: string}}\n"
                             "contract: llmResponse\n"
                             "temperature: 0.25\n"
                             "maxTokens: 4096\n"
                             "---\n"
                             "\n"
                             "You lead.\n"
                             "\n"
                             "  Indented line.\n\n\n",
                             0);
    const aw_agent_def *d = aw_agent_file_def(f);
    assert_int_equal(count_of(f, AW_AGENT_WARNING) + count_of(f, AW_AGENT_ERROR), 0);
    assert_string_equal(d->name, "lead agent");
    assert_string_equal(d->tool_name, "agent__lead_agent");
    assert_string_equal(d->description, "Leads: plans, then delegates.");
    assert_string_equal(d->model, "openai:gpt-4o");
    assert_int_equal(d->fallback_count, 2);
    assert_string_equal(d->fallbacks[1], "claude-cli");
    assert_int_equal(d->tool_count, 2);
    assert_string_equal(d->tools[0], "fs__read_file");
    assert_string_equal(d->tools[1], "web__fetch");
    assert_int_equal(d->mcp_count, 1);
    assert_string_equal(d->mcp[0].origin, aw_test_scratch_path("servers.json"));
    assert_non_null(aw_json_get(aw_json_get(d->mcp[0].config, "mcpServers"), "web"));
    assert_int_equal(d->agent_count, 2);
    assert_string_equal(d->agents[0], aw_test_scratch_path("helper.md"));
    assert_string_equal(d->agents[1], aw_test_scratch_path("./other.md"));
    assert_true(d->has_transport && d->transport == AW_TRANSPORT_XML_FINAL);
    assert_true(d->has_context && d->context == AW_CONTEXT_XML);
    assert_int_equal(d->max_turns, 7);
    assert_int_equal(d->max_calls_per_turn, 3);
    assert_int_equal(d->tool_timeout_ms, 120000);
    assert_true(d->has_format && d->format == AW_FORMAT_JSON);
    assert_string_equal(aw_json_at(aw_json_get(d->schema, "required"), 0)->u.str.ptr, "summary");
    assert_string_equal(aw_json_get(aw_json_get(aw_json_get(d->input_schema, "properties"), "topic"), "type")->u.str.ptr,
                        "string");
    assert_string_equal(d->contract, "llmResponse");
    assert_true(d->has_temperature && d->temperature == 0.25);
    assert_int_equal(d->max_tokens, 4096);
    assert_string_equal(d->system_prompt, "You lead.\n\n  Indented line.");
    size_t line, col;
    assert_true(aw_agent_file_where(f, "maxTurns", &line, &col));
    assert_int_equal(line, 11);
    assert_int_equal(col, 11);
    /* the allow list: the file's patterns and its sub-agents */
    const char **patterns;
    size_t n;
    bool none;
    assert_int_equal(aw_agent_allow_patterns(d, NULL, &patterns, &n, &none), 0);
    assert_int_equal(n, 3);
    assert_false(none);
    assert_string_equal(patterns[2], "agent__*");
    aw_free(NULL, patterns);
    aw_agent_file_free(f);

    /* a contract file, milliseconds, a single fallback, a name from the file's name */
    f = parse_as("my-agent.md",
                 "---\ncontract: answer.contract.json\ntoolTimeout: 1500\nfallback: exec:./answer.sh\n---\n", 0);
    d = aw_agent_file_def(f);
    assert_string_equal(d->contract, aw_test_scratch_path("answer.contract.json"));
    assert_int_equal(d->tool_timeout_ms, 1500);
    assert_int_equal(d->fallback_count, 1);
    assert_string_equal(d->name, "my-agent");
    assert_string_equal(d->system_prompt, "");
    aw_agent_file_free(f);
}

/* ---- wrong types, placed -------------------------------------------------------------- */

typedef struct placed {
    const char *yaml;   /* one or more frontmatter lines, from line 2 */
    size_t line, column;
    const char *message;
} placed;

static void test_wrong_types_are_placed(void **state)
{
    (void)state;
    static const placed cases[] = {
        {"name: [x]\n", 2, 7, "name must be a string, not a list"},
        {"name: \"\"\n", 2, 7, "name must be 1 to 57 characters long"},
        {"description: 12\n", 2, 14, "description must be a string, not a number"},
        {"model: gpt4\n", 2, 8, "model: 'gpt4' is not a model this build can run"},
        {"model: openai\n", 2, 8, "model: 'openai' is not a model"},
        {"model: true\n", 2, 8, "model must be a string, not true or false"},
        {"fallback: [openai:gpt-4o, 3]\n", 2, 27, "fallback[1] must be a string, not a number"},
        {"fallback: inherit\n", 2, 11, "fallback: 'inherit' is not a model"},
        {"tools: {a: 1}\n", 2, 8, "tools must be a list of tool names or a comma-separated string, not a mapping"},
        {"tools:\n  - a\n  - [b]\n", 4, 5, "tools[1] must be a tool name, not a list"},
        {"mcpServers: 5\n", 2, 13, "mcpServers must be servers written here"},
        {"mcpServers:\n  fs: npx\n", 3, 7, "mcpServers.fs must be a mapping"},
        {"mcpServers:\n  fs:\n    args: [x]\n", 4, 5, "mcpServers.fs: command must be a non-empty string"},
        {"mcpServers:\n  fs: {command: x, args: [-y, {a: 1}]}\n", 3, 31, "mcpServers.fs: args[1] must be a string"},
        {"mcpServers:\n  fs: {command: x, env: [A]}\n", 3, 25, "mcpServers.fs: env must be a mapping"},
        {"mcpServers:\n  fs: {command: x, env: {A: [1]}}\n", 3, 29, "mcpServers.fs: env.A must be a string"},
        {"mcpServers:\n  fs: {command: x, cwd: 1}\n", 3, 25, "mcpServers.fs: cwd must be a string"},
        {"mcpServers: [3]\n", 2, 14, "mcpServers[0] must be a server's name"},
        {"mcpServers: nowhere.json\n", 2, 13, "mcpServers: cannot read"},
        {"agents: {a: b}\n", 2, 9, "agents must be a list of agent files' paths, not a mapping"},
        {"agents: [missing.md]\n", 2, 10, "agents[0]: cannot read"},
        {"agents: [7]\n", 2, 10, "agents[0] must be an agent file's path, not a number"},
        {"transport: smoke\n", 2, 12, "transport is one of native, xml, xml-final, not 'smoke'"},
        {"context: 3\n", 2, 10, "context must be a string, not a number"},
        {"maxTurns: \"3\"\n", 2, 11, "maxTurns must be a whole number from 1 to 100000, not '3'"},
        {"maxTurns: 0\n", 2, 11, "maxTurns must be a whole number from 1 to 100000"},
        {"maxTurns: 2.5\n", 2, 11, "maxTurns must be a whole number"},
        {"maxToolCallsPerTurn: 1000\n", 2, 22, "maxToolCallsPerTurn must be a whole number from 1 to 999"},
        {"toolTimeout: 5 minutes\n", 2, 14, "toolTimeout must be milliseconds"},
        {"toolTimeout: -5\n", 2, 14, "toolTimeout must be milliseconds"},
        {"format: bogus\n", 2, 9, "format is one of markdown"},
        {"schema: [1]\n", 2, 9, "schema must be a JSON Schema written here (a mapping) or a JSON file's path, not a list"},
        {"schema: nope.json\n", 2, 9, "schema: cannot read"},
        {"inputSchema: {type: string}\n", 2, 14, "inputSchema must describe an object"},
        {"contract: nothing-here\n", 2, 11, "contract: 'nothing-here' is neither a built-in contract"},
        {"contract: {a: 1}\n", 2, 11, "contract must be llmQuery, llmResponse or a contract file's path"},
        {"temperature: 5\n", 2, 14, "temperature must be a number from 0 to 2"},
        {"temperature: hot\n", 2, 14, "temperature must be a number from 0 to 2"},
        {"maxTokens: -1\n", 2, 12, "maxTokens must be a whole number from 1 to 10000000"},
        {"transport: native\ncontext: xml\n", 3, 10, "context: xml keeps the whole history in one message"},
        {"- a\n- b\n", 2, 1, "the frontmatter must be KEY: VALUE lines (a mapping), not a list"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[512];
        snprintf(text, sizeof text, "---\n%s---\nbody\n", cases[i].yaml);
        aw_agent_file *f = parse(text, AW_EVALID);
        has_problem(f, AW_AGENT_ERROR, cases[i].line, cases[i].column, cases[i].message);
        assert_true(aw_agent_file_failed(f));
        /* the body is read all the same */
        assert_string_equal(aw_agent_file_def(f)->system_prompt, "body");
        aw_agent_file_free(f);
    }
    /* every problem of a file at once, not only the first */
    aw_agent_file *f = parse("---\nmaxTurns: 0\ntemperature: 9\nformat: x\ncolor: red\n---\n", AW_EVALID);
    assert_int_equal(count_of(f, AW_AGENT_ERROR), 3);
    assert_int_equal(count_of(f, AW_AGENT_WARNING), 1);
    aw_agent_file_free(f);
    /* the error's place comes back in err too */
    aw_error err;
    const char *text = "---\nname: x\nmaxTurns: zero\n---\n";
    assert_int_equal(aw_agent_file_parse(text, strlen(text), "a.md", NULL, &f, &err), AW_EVALID);
    assert_int_equal(err.line, 3);
    assert_int_equal(err.column, 11);
    aw_agent_file_free(f);
}

/* A referenced JSON file's own errors are placed in it. */
static void test_referenced_files_are_placed(void **state)
{
    (void)state;
    aw_test_scratch_write("broken.json", "{\n  \"type\": \"object\",\n  \"properties\": {,}\n}\n");
    aw_agent_file *f = parse("---\nschema: broken.json\n---\n", AW_EVALID);
    size_t n = 0;
    const aw_agent_problem *p = aw_agent_file_problems(f, &n);
    assert_int_equal(n, 1);
    assert_string_equal(p[0].file, aw_test_scratch_path("broken.json"));
    assert_int_equal(p[0].line, 3);
    assert_int_equal(p[0].column, 18);
    assert_non_null(strstr(p[0].message, "(the schema of"));
    aw_agent_file_free(f);

    aw_test_scratch_write("noservers.json", "{\"servers\": 3}");
    f = parse("---\nmcpServers: noservers.json\n---\n", AW_EVALID);
    has_problem(f, AW_AGENT_ERROR, 2, 13, "has no \"mcpServers\" object");
    aw_agent_file_free(f);
    /* VS Code's "servers" is read too; a relative cwd starts at that file */
    mkdir(aw_test_scratch_path("conf"), 0700);
    aw_test_scratch_write("conf/vscode.json", "{\"servers\": {\"x\": {\"command\": \"x\", \"cwd\": \"sub\"}}}");
    f = parse("---\nmcpServers: [conf/vscode.json]\n---\n", 0);
    assert_int_equal(aw_agent_file_def(f)->mcp_count, 1);
    assert_string_equal(aw_agent_file_def(f)->mcp[0].base_dir, aw_test_scratch_path("conf"));
    aw_agent_file_free(f);

    aw_test_scratch_write("bad.contract.json", "{\"name\": 1}");
    f = parse("---\ncontract: bad.contract.json\n---\n", AW_EVALID);
    p = aw_agent_file_problems(f, &n);
    assert_int_equal(n, 1);
    assert_string_equal(p[0].file, aw_test_scratch_path("bad.contract.json"));
    aw_agent_file_free(f);

    aw_test_scratch_write("twice.md", "x");
    f = parse("---\nagents: [twice.md, ./twice.md, twice.md]\n---\n", AW_EVALID);
    has_problem(f, AW_AGENT_ERROR, 2, 32, "agents: 'twice.md' is listed twice");
    aw_agent_file_free(f);

    /* a FIFO where a file belongs is refused at once, never read */
    assert_int_equal(mkfifo(aw_test_scratch_path("fifo.json"), 0600), 0);
    f = parse("---\nschema: fifo.json\n---\n", AW_EVALID);
    has_problem(f, AW_AGENT_ERROR, 2, 9, "not a regular file");
    aw_agent_file_free(f);
    aw_error err;
    assert_int_not_equal(aw_agent_file_read(aw_test_scratch_path("fifo.json"), NULL, &f, &err), 0);
    assert_null(f);
    assert_non_null(strstr(err.message, "not a regular file"));
    assert_int_not_equal(aw_agent_file_read(aw_test_scratch_path("absent.md"), NULL, &f, &err), 0);
    assert_non_null(strstr(err.message, "absent.md: No such file or directory"));
}

/* ---- bad and hostile YAML --------------------------------------------------------------- */

static void test_bad_yaml_is_placed(void **state)
{
    (void)state;
    static const placed cases[] = {
        /* Claude Code's generated descriptions often hold ': ' unquoted */
        {"name: a\ndescription: Use this agent when: things happen\n", 3, 33,
         "mapping values are not allowed in this context; a value with ': ' in it must be quoted"},
        {"name: \"open\n", 3, 1, "found unexpected end of stream"},
        {"name: a\n\tmodel: b\n", 3, 1, "found a tab character that violates indentation (while scanning a plain "
                                       "scalar at line 2, column 7)"},
        {"name: @me\n", 2, 7, "found character that cannot start any token; a value starting with @"},
        {"name: a\nname: b\n", 3, 1, "the key 'name' appears twice (first at line 2, column 1)"},
        {"a: &x [1, 2]\nb: *x\n", 3, 4, "aliases (*x) are not supported"},
        {"name: !custom x\n", 2, 7, "the tag '!custom' is not supported"},
        {"maxTurns: !!int ten\n", 2, 11, "'ten' is not a value of the tag"},
        {"? [a, b]\n: c\n", 2, 3, "a key must be a plain value, not a list"},
        {"name: a\n---\nname: b\n", 0, 0, NULL}, /* a second document: the frontmatter ends at the first --- */
        {"name: a\n...\nb: c\n", 0, 0, NULL},    /* the YAML end marker closes it too */
        {"name: \"a\xff\"\n", 2, 9, "invalid leading UTF-8 octet"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[512];
        snprintf(text, sizeof text, "---\n%s---\nbody\n", cases[i].yaml);
        if (!cases[i].message) {
            aw_agent_file *f = parse(text, 0);
            assert_string_equal(aw_agent_file_def(f)->name, "a");
            aw_agent_file_free(f);
            continue;
        }
        aw_agent_file *f = parse(text, AW_EVALID);
        has_problem(f, AW_AGENT_ERROR, cases[i].line, cases[i].column, cases[i].message);
        aw_agent_file_free(f);
    }
    /* the YAML core schema: yes stays a string, 0x10 is 16, .inf a float */
    aw_agent_file *f = parse("---\nmaxTurns: 0x10\nname: yes\ntemperature: !!float 1\ntoolTimeout: 0o17\n---\n", 0);
    assert_int_equal(aw_agent_file_def(f)->max_turns, 16);
    assert_string_equal(aw_agent_file_def(f)->name, "yes");
    assert_true(aw_agent_file_def(f)->temperature == 1.0);
    assert_int_equal(aw_agent_file_def(f)->tool_timeout_ms, 15);
    aw_agent_file_free(f);
}

static void test_frontmatter_shapes(void **state)
{
    (void)state;
    /* none: all of it is the prompt, the name the file's */
    aw_agent_file *f = parse_as("plain.md", "\n\nJust a prompt.\n---\nwith a rule\n", 0);
    assert_string_equal(aw_agent_file_def(f)->system_prompt, "Just a prompt.\n---\nwith a rule");
    assert_string_equal(aw_agent_file_def(f)->name, "plain");
    aw_agent_file_free(f);
    /* never closed */
    f = parse("---\nname: a\nbody without end\n", AW_EVALID);
    has_problem(f, AW_AGENT_ERROR, 1, 1, "the frontmatter opened here is not closed by a line '---'");
    aw_agent_file_free(f);
    /* empty, CRLF, a byte-order mark, blanks after the markers */
    f = parse("---\n---\nx", 0);
    assert_string_equal(aw_agent_file_def(f)->system_prompt, "x");
    aw_agent_file_free(f);
    f = parse("\xEF\xBB\xBF---  \r\nname: crlf\r\nmaxTurns: 2\r\n---\r\n\r\nLine one.\r\nLine two.\r\n", 0);
    assert_string_equal(aw_agent_file_def(f)->name, "crlf");
    assert_int_equal(aw_agent_file_def(f)->max_turns, 2);
    assert_string_equal(aw_agent_file_def(f)->system_prompt, "Line one.\r\nLine two.");
    aw_agent_file_free(f);
    /* lines are counted as editors count them, by LF: libyaml also breaks
     * lines at a lone CR and at U+2028, which must not move the places */
    f = parse("---\nname: a\rmaxTurns: [1]\ndescription: \"x\xE2\x80\xA8y\"\ntemperature: 3\n---\n", AW_EVALID);
    has_problem(f, AW_AGENT_ERROR, 2, 19, "maxTurns");
    has_problem(f, AW_AGENT_ERROR, 4, 14, "temperature");
    aw_agent_file_free(f);
    /* the frontmatter's lines are the file's: an error on the file's line 4 */
    f = parse("---\nname: a\ndescription: b\nmaxTurns: []\n---\n", AW_EVALID);
    has_problem(f, AW_AGENT_ERROR, 4, 11, "maxTurns");
    aw_agent_file_free(f);
}

static void test_hostile_input_is_bounded(void **state)
{
    (void)state;
    /* nesting past 64 levels */
    size_t depth = 100000;
    char *deep = malloc(depth + 64);
    assert_non_null(deep);
    strcpy(deep, "---\nx: ");
    memset(deep + 7, '[', depth);
    strcpy(deep + 7 + depth, "\n---\n");
    aw_agent_file *f = parse(deep, AW_EVALID);
    has_problem(f, AW_AGENT_ERROR, 2, 67, "nested deeper than 64 levels");
    aw_agent_file_free(f);
    free(deep);
    /* more than 100 000 values */
    size_t items = 120000;
    char *wide = malloc(items * 2 + 64);
    assert_non_null(wide);
    char *p = wide + sprintf(wide, "---\nx: [");
    for (size_t i = 0; i < items; i++) {
        *p++ = '1';
        *p++ = ',';
    }
    strcpy(p, "1]\n---\n");
    f = parse(wide, AW_EVALID);
    has_problem(f, AW_AGENT_ERROR, 2, 199999, "more than 100000 values");
    aw_agent_file_free(f);
    free(wide);
    /* a file past 4 MiB */
    size_t big = AW_AGENT_FILE_MAX + 1;
    char *huge = malloc(big + 1);
    assert_non_null(huge);
    memset(huge, 'a', big);
    huge[big] = 0;
    aw_error err;
    assert_int_equal(aw_agent_file_parse(huge, big, "huge.md", NULL, &f, &err), AW_EVALID);
    has_problem(f, AW_AGENT_ERROR, 0, 0, "larger than 4 MiB");
    aw_agent_file_free(f);
    FILE *out = fopen(aw_test_scratch_path("huge.md"), "w");
    assert_non_null(out);
    fwrite(huge, 1, big, out);
    fclose(out);
    free(huge);
    assert_int_equal(aw_agent_file_read(aw_test_scratch_path("huge.md"), NULL, &f, &err), AW_ELIMIT);
    assert_null(f);
    /* a NUL byte in the frontmatter */
    const char nul[] = "---\nname: a\0b\n---\n";
    assert_int_equal(aw_agent_file_parse(nul, sizeof nul - 1, "nul.md", NULL, &f, &err), AW_EVALID);
    has_problem(f, AW_AGENT_ERROR, 2, 8, "control characters are not allowed");
    aw_agent_file_free(f);
    /* a long key list of unknown keys stays one warning of bounded size */
    char many[8192] = "---\n";
    for (int i = 0; i < 300; i++)
        sprintf(many + strlen(many), "k%d: 1\n", i);
    strcat(many, "---\n");
    f = parse(many, 0);
    assert_int_equal(count_of(f, AW_AGENT_WARNING), 1);
    has_problem(f, AW_AGENT_WARNING, 2, 1, ", ...");
    aw_agent_file_free(f);
}

/* ---- models ------------------------------------------------------------------------------ */

typedef struct model_case {
    const char *model;        /* the file's, NULL when none */
    const char *fallback;     /* the file's, NULL when none */
    const char *inherit;      /* the caller's model, NULL when none */
    const char *command_line; /* --model, NULL when none */
    const char *want;         /* the specs joined by ' ', NULL for an error */
} model_case;

static void test_models_resolve(void **state)
{
    (void)state;
    unsetenv("ANTHROPIC_DEFAULT_HAIKU_MODEL");
    static const model_case cases[] = {
        {"openai:gpt-4o", NULL, "claude-cli", NULL, "openai:gpt-4o"},
        {NULL, NULL, "openai:gpt-4o", NULL, "openai:gpt-4o"},
        {"inherit", "codex-cli", "claude-cli", NULL, "claude-cli codex-cli"},
        {"sonnet", NULL, NULL, NULL, "anthropic:claude-sonnet-4-6"},
        {"opus", NULL, "openai:gpt-4o", NULL, "anthropic:claude-opus-4-6"},
        {"haiku", NULL, NULL, "claude-cli", "claude-cli:haiku"},
        {"claude-opus-4-1", NULL, NULL, "claude-cli:sonnet", "claude-cli:claude-opus-4-1"},
        {"haiku", NULL, NULL, "anthropic:claude-opus-4-6", "anthropic:claude-haiku-4-5"},
        {"sonnet", NULL, "exec:./x", "openai:gpt-4o", "openai:gpt-4o"},
        {"replay:rec.jsonl", NULL, NULL, NULL, "replay:DIR/rec.jsonl"},
        {"replay:/abs/rec.jsonl", NULL, NULL, NULL, "replay:/abs/rec.jsonl"},
        {"openai:gpt-4o", "openai:gpt-4o", NULL, NULL, "openai:gpt-4o"},
        {NULL, NULL, NULL, NULL, NULL},
        {"inherit", NULL, NULL, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const model_case *c = &cases[i];
        aw_agent_def def;
        memset(&def, 0, sizeof def);
        def.path = "x.md";
        def.dir = aw_test_scratch_dir();
        def.model = c->model;
        const char *fb[1] = {c->fallback};
        def.fallbacks = fb;
        def.fallback_count = c->fallback ? 1 : 0;
        const char *inh[1] = {c->inherit}, *cl[1] = {c->command_line};
        aw_agent_models ctx = {inh, c->inherit ? 1 : 0, cl, c->command_line ? 1 : 0};
        char **specs = NULL;
        size_t n = 0;
        aw_error err;
        int rc = aw_agent_resolve_models(&def, &ctx, NULL, &specs, &n, &err);
        if (!c->want) {
            assert_int_equal(rc, AW_EINVAL);
            assert_non_null(strstr(err.message, "no model"));
            continue;
        }
        assert_int_equal(rc, 0);
        char got[512] = "";
        for (size_t k = 0; k < n; k++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", k ? " " : "", specs[k]);
        char want[512];
        const char *d = strstr(c->want, "DIR");
        if (d)
            snprintf(want, sizeof want, "%.*s%s%s", (int)(d - c->want), c->want, aw_test_scratch_dir(), d + 3);
        else
            snprintf(want, sizeof want, "%s", c->want);
        if (strcmp(got, want))
            fail_msg("case %zu: got '%s', wanted '%s'", i, got, want);
        aw_agent_specs_free(NULL, specs, n);
    }
    /* Claude Code's own variables name the aliases' models */
    setenv("ANTHROPIC_DEFAULT_HAIKU_MODEL", "claude-3-5-haiku-latest", 1);
    aw_agent_def def = {.path = "x.md", .dir = ".", .model = "haiku"};
    aw_agent_models none = {0};
    char **specs;
    size_t n;
    assert_int_equal(aw_agent_resolve_models(&def, &none, NULL, &specs, &n, NULL), 0);
    assert_string_equal(specs[0], "anthropic:claude-3-5-haiku-latest");
    aw_agent_specs_free(NULL, specs, n);
    unsetenv("ANTHROPIC_DEFAULT_HAIKU_MODEL");

    assert_true(aw_agent_model_known("claude-cli"));
    assert_true(aw_agent_model_known("exec:./run.sh"));
    assert_false(aw_agent_model_known("exec:"));
    assert_false(aw_agent_model_known("replay"));
    assert_false(aw_agent_model_known("gemini:pro"));
    assert_false(aw_agent_model_known("claude-"));
}

/* ---- the tree check ------------------------------------------------------------------------- */

typedef struct collected {
    char text[8192];
    size_t errors, warnings;
} collected;

static void collect(void *ctx, const aw_agent_problem *p)
{
    collected *c = ctx;
    if (p->severity == AW_AGENT_ERROR)
        c->errors++;
    else
        c->warnings++;
    const char *base = strrchr(p->file, '/');
    snprintf(c->text + strlen(c->text), sizeof c->text - strlen(c->text), "%s:%zu:%zu: %s%s\n", base ? base + 1 : p->file,
             p->line, p->column, p->severity == AW_AGENT_ERROR ? "" : "warning: ", p->message);
}

static void test_check_walks_the_tree(void **state)
{
    (void)state;
    mkdir(aw_test_scratch_path("tree"), 0700);
    aw_test_scratch_write("tree/a.md", "---\nname: a\nagents: [b.md, c.md]\n---\n");
    aw_test_scratch_write("tree/b.md", "---\nname: b\nagents: [a.md, d.md]\nmaxTurns: nine\n---\n");
    aw_test_scratch_write("tree/c.md", "---\nname: c\nagents: [d.md]\n---\n");
    aw_test_scratch_write("tree/d.md", "---\nname: d\nagents: [e.md]\ncolor: red\n---\n");
    aw_test_scratch_write("tree/e.md", "---\nname: e\n---\n");
    collected c;
    memset(&c, 0, sizeof c);
    aw_error err;
    assert_int_equal(aw_agent_check(aw_test_scratch_path("tree/a.md"), 2, NULL, collect, &c, &err), AW_EVALID);
    const char *want = "b.md:4:11: maxTurns must be a whole number from 1 to 100000, not 'nine'\n"
                       "b.md:3:9: warning: agents: a -> b -> a is a cycle: the run refuses that call (an agent may "
                       "not call itself)\n"
                       "d.md:4:1: warning: unknown key, ignored: color (line 4)\n"
                       "d.md:3:9: warning: agents: " ;
    if (strncmp(c.text, want, strlen(want)))
        fail_msg("got:\n%s", c.text);
    assert_non_null(strstr(c.text, "e.md would be level 3, deeper than the limit of 2 (--max-depth)"));
    /* d is listed by b and c: checked once */
    assert_int_equal(c.errors, 1);
    assert_int_equal(c.warnings, 3);

    /* two sub-agents of one name */
    aw_test_scratch_write("tree/dup.md", "---\nagents: [e.md, e2.md]\n---\n");
    aw_test_scratch_write("tree/e2.md", "---\nname: e\n---\n");
    memset(&c, 0, sizeof c);
    assert_int_equal(aw_agent_check(aw_test_scratch_path("tree/dup.md"), 0, NULL, collect, &c, &err), AW_EVALID);
    assert_non_null(strstr(c.text, "are both offered as agent__e"));
    /* a clean tree */
    memset(&c, 0, sizeof c);
    assert_int_equal(aw_agent_check(aw_test_scratch_path("tree/e.md"), 0, NULL, collect, &c, &err), 0);
    assert_string_equal(c.text, "");
    /* an unreadable top file */
    memset(&c, 0, sizeof c);
    assert_int_equal(aw_agent_check(aw_test_scratch_path("tree/none.md"), 0, NULL, collect, &c, &err), AW_EVALID);
    assert_non_null(strstr(c.text, "none.md:0:0: "));
}

/* ---- allocation failures ------------------------------------------------------------------------ */

static char *full_text;

/* Everything the file says, as text, to compare a recovered run with. */
static void describe(const aw_agent_file *f, aw_buf *out)
{
    const aw_agent_def *d = aw_agent_file_def(f);
    aw_buf_printf(out, "%s|%s|%s|%s|%zu|%zu|%zu|%u|", d->name, d->tool_name, d->description, d->model ? d->model : "",
                  d->fallback_count, d->tool_count, d->mcp_count, d->max_turns);
    for (size_t i = 0; i < d->tool_count; i++)
        aw_buf_printf(out, "%s,", d->tools[i]);
    for (size_t i = 0; i < d->mcp_count; i++)
        aw_json_write(d->mcp[i].config, NULL, out, NULL);
    if (d->schema)
        aw_json_write(d->schema, NULL, out, NULL);
    if (d->input_schema)
        aw_json_write(d->input_schema, NULL, out, NULL);
    aw_buf_append_str(out, d->system_prompt);
    size_t n = 0;
    const aw_agent_problem *p = aw_agent_file_problems(f, &n);
    for (size_t i = 0; i < n; i++)
        aw_buf_printf(out, "|%zu:%zu:%s", p[i].line, p[i].column, p[i].message);
}

static aw_buf reference;

static int parse_under(const aw_allocator *a, void *ctx)
{
    (void)ctx;
    aw_agent_read_options ro = {.alloc = a};
    aw_agent_file *f = NULL;
    aw_error err;
    int rc = aw_agent_file_parse(full_text, strlen(full_text), aw_test_scratch_path("full.md"), &ro, &f, &err);
    if (rc)
        return rc;
    aw_buf got;
    aw_buf_init(&got, NULL);
    describe(f, &got);
    aw_agent_file_free(f);
    if (!reference.len)
        aw_buf_append(&reference, got.data, got.len);
    rc = got.len == reference.len && !memcmp(got.data, reference.data, got.len) ? 0 : 1;
    aw_buf_free(&got);
    return rc;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    aw_test_scratch_write("full.schema.json", "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"array\"}}}");
    aw_test_scratch_write("full.servers.json", "{\"mcpServers\": {\"web\": {\"command\": \"w\", \"args\": [\"1\"]}}}");
    aw_test_scratch_write("full.helper.md", "Help.\n");
    full_text = "---\n"
                "name: full\n"
                "description: Every key there is.\n"
                "model: sonnet\n"
                "fallback: [openai:gpt-4o]\n"
                "tools: Read, fs__read_file, mcp__web__fetch\n"
                "color: green\n"
                "mcpServers:\n"
                "  - full.servers.json\n"
                "  - named\n"
                "  - fs: {command: npx, args: [-y, 1], env: {A: b}}\n"
                "agents: [full.helper.md]\n"
                "transport: xml\n"
                "maxTurns: 4\n"
                "toolTimeout: 30s\n"
                "format: json\n"
                "schema: full.schema.json\n"
                "inputSchema: {type: object, properties: {q: {type: string}}}\n"
                "contract: llmQuery\n"
                "temperature: 1\n"
                "maxTokens: 100\n"
                "---\n"
                "The prompt.\n";
    aw_buf_init(&reference, NULL);
    long calls = aw_failalloc_run(parse_under, NULL, 0);
    assert_true(calls > 20);
    aw_buf_free(&reference);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_claude_code_subagent_runs_as_it_is),
        cmocka_unit_test(test_claude_code_keys_and_forms),
        cmocka_unit_test(test_every_key),
        cmocka_unit_test(test_wrong_types_are_placed),
        cmocka_unit_test(test_referenced_files_are_placed),
        cmocka_unit_test(test_bad_yaml_is_placed),
        cmocka_unit_test(test_frontmatter_shapes),
        cmocka_unit_test(test_hostile_input_is_bounded),
        cmocka_unit_test(test_models_resolve),
        cmocka_unit_test(test_check_walks_the_tree),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, aw_test_scratch_setup, aw_test_scratch_teardown);
}
