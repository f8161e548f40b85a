#!/usr/bin/env bash
# agentwire agent check|show and agentwire run --agent, end to end: every
# problem of a file as FILE:LINE:COL, the sub-agent tree, exit statuses,
# the file's keys filling the run's options and each option given on the
# command line winning, sub-agents on recorded models, and SIGINT stopping
# a nested run's tool. Every wait is bounded; no time is asserted.
#
#   tests/test_cli_agent.sh AGENTWIRE SOURCE_DIR
set -u
. "$(dirname "$0")/support/cli_checks.sh"
. "$(dirname "$0")/support/wait.sh"
. "$(dirname "$0")/support/agent_tree.sh"

export AW_NO_STATUS_LINE=1 XDG_DATA_HOME=$T/xdg # sessions go to a store of this test's own
same() { # NAME WANT GOT
    checks=$((checks + 1))
    [ "$2" = "$3" ] || fail "$1: wanted <<$2>> got <<$3>>"
}

# ---- agent check ---------------------------------------------------------------------------

# Claude Code's code-reviewer, as its subagent documentation writes it
# (https://docs.anthropic.com/en/docs/claude-code/sub-agents), plus the
# keys of its own that files carry
cat >"$T/reviewer.md" <<'EOF'
---
name: code-reviewer
description: Expert code review specialist. Proactively reviews code for quality, security, and maintainability. Use immediately after writing or modifying code.
tools: Read, Grep, Glob, Bash
model: inherit
color: blue
---

You are a senior code reviewer ensuring high standards of code quality and security.
EOF
run 0 "check: Claude Code's form" agent check "$T/reviewer.md"
same "check: Claude Code's form, stdout" "$T/reviewer.md: ok, 2 warnings" "$(cat "$T/out")"
same "check: Claude Code's form, warnings" "$T/reviewer.md:4:8: warning: tools: Read, Grep, Glob, Bash are Claude Code's built-in tools, which agentwire does not have: left out; the agent gets no tools but its sub-agents (--allow-tools to choose others)
$T/reviewer.md:6:1: warning: unknown key, ignored: color (line 6)" "$(cat "$T/err")"

cat >"$T/bad.md" <<'EOF'
---
name: bad
maxTurns: "3"
temperature: hot
model: gpt4
agents: [nobody.md]
mcpServers:
  fs:
    command: npx
    args: [-y, {a: 1}]
permissionMode: plan
---
Body.
EOF
run 1 "check: every problem" agent check "$T/bad.md"
same "check: every problem, in order" "$T/bad.md:3:11: maxTurns must be a whole number from 1 to 100000, not '3'
$T/bad.md:4:14: temperature must be a number from 0 to 2
$T/bad.md:5:8: model: 'gpt4' is not a model this build can run (a provider: openai:MODEL, anthropic:MODEL, claude-cli, codex-cli, exec:COMMAND, replay:FILE; a Claude model: sonnet, opus, haiku, claude-...; or inherit)
$T/bad.md:6:10: agents[0]: cannot read '$T/nobody.md': No such file or directory
$T/bad.md:10:16: mcpServers.fs: args[1] must be a string, not a mapping
$T/bad.md:11:1: warning: unknown key, ignored: permissionMode (line 11)" "$(cat "$T/err")"
lacks "ok" "check: no ok line on failure" "$T/out"

printf -- '---\nname: a\ndescription: Use this agent when: the user asks\n---\n' >"$T/colon.md"
run 1 "check: bad YAML" agent check "$T/colon.md"
same "check: bad YAML, placed" "$T/colon.md:3:33: YAML: mapping values are not allowed in this context; a value with ': ' in it must be quoted (\"...\")" "$(cat "$T/err")"

# a tree: a cycle, a level past --max-depth, a problem two levels down
mkdir "$T/tree"
printf -- '---\nname: a\nagents: [b.md]\n---\n' >"$T/tree/a.md"
printf -- '---\nname: b\nagents: [a.md, c.md]\n---\n' >"$T/tree/b.md"
printf -- '---\nname: c\nagents: [d.md]\nformat: yaml\n---\n' >"$T/tree/c.md"
printf -- '---\nname: d\n---\n' >"$T/tree/d.md"
run 1 "check: the tree" agent check --max-depth 2 "$T/tree/a.md"
same "check: the tree, problems" "$T/tree/b.md:3:9: warning: agents: a -> b -> a is a cycle: the run refuses that call (an agent may not call itself)
$T/tree/c.md:4:9: format is one of markdown, text, json, tty, pipe, slack-block-kit, sub-agent, not 'yaml'
$T/tree/c.md:3:9: warning: agents: $T/tree/d.md would be level 3, deeper than the limit of 2 (--max-depth): calls to it are refused" "$(cat "$T/err")"

# mcpServers: read and shown without starting anything; what the MCP
# client says of a configuration file
cat >"$T/servers.json" <<'EOF'
{"mcpServers": {"fs": {"command": 7}}}
EOF
cat >"$T/mcp.md" <<'EOF'
---
name: mcp
mcpServers:
  - servers.json
  - web: {command: web-server, args: [--port, 8080], env: {DEBUG: 1}}
---
EOF
run 0 "show: mcpServers" agent show "$T/mcp.md"
has '"mcpServers":[{"config":{"mcpServers":{"fs":{"command":7}}},"base_dir":"'"$T"'","origin":"'"$T"'/servers.json"},{"config":{"mcpServers":{"web":{"command":"web-server","args":["--port","8080"],"env":{"DEBUG":"1"}}}},"base_dir":"'"$T"'","origin":"the frontmatter"}]' "show: mcpServers, both configurations" "$T/out"
run 1 "check: an MCP configuration the client refuses" agent check "$T/mcp.md"
same "check: the client's words, placed" "$T/mcp.md:4:5: mcpServers ($T/servers.json): mcpServers.fs: 'command' must be a non-empty string" "$(cat "$T/err")"

# the README's examples stay valid
run 0 "check: the README's example agents" agent check "$SRC/examples/agents/lead.md"
has "lead.md: ok" "check: the README's example agents, ok" "$T/out"
run 2 "check: no file" agent check
run 2 "check: --max-depth 0" agent check --max-depth 0 "$T/reviewer.md"
run 0 "agent --help" agent --help
has "check [--max-depth N] FILE" "agent --help" "$T/out"
run 2 "agent: no command" agent
run 1 "check: a missing file" agent check "$T/none.md"
has "$T/none.md: $T/none.md: No such file or directory" "check: a missing file, said" "$T/err"

# ---- run --agent ---------------------------------------------------------------------------------

N=1a2b3c4d
final() { printf '<ai-agent-%s-FINAL tool=\\"agent__final_report\\" status=\\"success\\" format=\\"%s\\">%s</ai-agent-%s-FINAL>' $N "${2:-markdown}" "$1" $N; }
call() { printf '<ai-agent-%s-%s tool=\\"%s\\">%s</ai-agent-%s-%s>' $N "$1" "$2" "$3" $N "$1"; }

# the file's keys where the command line is silent: its body as the system
# prompt, its model (next to it), its name on the records
cat >"$T/solo.md" <<'EOF'
---
name: solo
model: replay:solo.jsonl
maxTurns: 1
---
You are solo, the one and only.
EOF
printf '{"text": "%s", "expect": ["You are solo, the one and only.", "Turn 1 of 1"]}\n' "$(final "solo done")" >"$T/solo.jsonl"
run 0 "run --agent: the file's keys" run --agent "$T/solo.md" --nonce $N --accounting "$T/acc.jsonl" "go"
same "run --agent: the report" "solo done" "$(cat "$T/out")"
has '"agent":"solo"' "run --agent: the name on the records" "$T/acc.jsonl"

# every option given wins: --model over model, --max-turns over maxTurns,
# --system over the body
printf '{"text": "%s", "expect": ["From the command line.", "Turn 1 of 3"]}\n' "$(final "cli won")" >"$T/cli.jsonl"
run 0 "run --agent: the command line wins" run --agent "$T/solo.md" --model "replay:$T/cli.jsonl" --max-turns 3 \
    --system "From the command line." --nonce $N "go"
same "run --agent: the command line wins, report" "cli won" "$(cat "$T/out")"
# ...exactly: an option given with the library's default value still wins
cat >"$T/ctx.md" <<'EOF'
---
model: replay:ctx.jsonl
context: xml
transport: xml
format: json
---
EOF
printf '{"text": "%s"}\n{"text": "%s"}\n' "$(final "plain text")" "$(final '{\"a\": 1}' json)" >"$T/ctx.jsonl"
run 0 "run --agent: --context messages and --format markdown win" run --agent "$T/ctx.md" --context messages \
    --format markdown --nonce $N "go"
same "run --agent: --format markdown won" "plain text" "$(cat "$T/out")"
run 0 "run --agent: the file's json format" run --agent "$T/ctx.md" --nonce $N "go"
same "run --agent: the file's format applied (the text report refused)" '{"a":1}' "$(cat "$T/out")"
# the file's xml context with --transport native is refused (the file's
# key applies); with --context messages too, it runs
printf '%s\n' '{"tool_calls": [{"id": "f", "name": "agent__final_report", "arguments": "{\"status\": \"success\", \"content\": \"native\"}"}]}' >"$T/native.jsonl"
run 2 "run --agent: the file's context with --transport native" run --agent "$T/ctx.md" --model "replay:$T/native.jsonl" \
    --transport native "go"
has "the xml context keeps the whole history in one message" "run --agent: the file's context applied" "$T/err"
run 0 "run --agent: --context and --transport win" run --agent "$T/ctx.md" --model "replay:$T/native.jsonl" \
    --transport native --context messages --format text "go"
same "run --agent: native report" "native" "$(cat "$T/out")"

# Claude Code's file: no model of its own (inherit) takes --model
printf '{"text": "%s", "expect": ["You are a senior code reviewer"]}\n' "$(final "reviewed")" >"$T/rev.jsonl"
run 0 "run --agent: Claude Code's file as it is" run --agent "$T/reviewer.md" --model "replay:$T/rev.jsonl" --nonce $N "review"
same "run --agent: Claude Code's file, report" "reviewed" "$(cat "$T/out")"
has "Claude Code's built-in tools" "run --agent: its warnings shown" "$T/err"
run 2 "run --agent: inherit and no --model" run --agent "$T/reviewer.md" "review"
has "no model" "run --agent: no model, said" "$T/err"
run 1 "run --agent: a bad file" run --agent "$T/bad.md" --model "replay:$T/rev.jsonl" "x"
has "$T/bad.md:3:11: maxTurns must be a whole number" "run --agent: a bad file, placed" "$T/err"
run 2 "run: --max-depth without --agent" run --model "replay:$T/rev.jsonl" --max-depth 2 "x"
run 2 "run: --agent twice" run --agent "$T/solo.md" --agent "$T/solo.md" "x"

# sub-agents: the lead calls helper, whose recorded model answers natively
write_agent_tree "$T" "$(call 0001 agent__helper '{\"task\": \"the question\"}')" "$(final "the helper says forty-two")"
run 0 "run --agent: a sub-agent" run --agent "$T/lead.md" --nonce $N --accounting "$T/acc2.jsonl" --thread "$T/thread.xml" --verbose "ask"
same "run --agent: a sub-agent, report" "the helper says forty-two" "$(cat "$T/out")"
has "helper: turn 1" "run --agent: the sub-agent's turns on stderr" "$T/err"
session=$(grep -o '"session_id":"[^"]*","agent":"lead"' "$T/acc2.jsonl" | head -1 | cut -d'"' -f4)
has "\"parent_session_id\":\"$session\",\"agent\":\"helper\"" "run --agent: the helper's rows name the lead's session" "$T/acc2.jsonl"
lacks "You help." "run --agent: the helper's events stay out of the lead's thread" "$T/thread.xml"
has "forty-two" "run --agent: the result in the lead's thread" "$T/thread.xml"
# the run is stored as a session of the agent's name; the helper is not one
run 0 "run --agent: stored under the agent's name" sessions list --agent lead
has "$session" "run --agent: the lead's session listed" "$T/out"
run 0 "run --agent: no session for the helper" sessions list --agent helper
lacks "$session" "run --agent: the helper's calls are the lead's" "$T/out"
# --max-depth 1 still allows the helper; its own sub-agents would be refused
run 0 "run --agent: --max-depth 1" run --agent "$T/lead.md" --nonce $N --max-depth 1 "ask"

# --allow-tools instead of the file's tools: only what it names is offered
cat >"$T/tools.json" <<'EOF'
[{"name": "hello", "description": "Greets.", "command": ["echo", "hi"]},
 {"name": "bye", "description": "Leaves.", "command": ["echo", "bye"]}]
EOF
printf -- '---\nmodel: replay:allow.jsonl\ntools: hello\n---\n' >"$T/allow.md"
printf '{"text": "%s", "expect": ["Greets."]}\n' "$(final "x")" >"$T/allow.jsonl"
run 0 "run --agent: the file's tools" run --agent "$T/allow.md" --tools "$T/tools.json" --nonce $N "x"
printf '{"text": "%s", "expect": ["Leaves."]}\n' "$(final "x")" >"$T/allow.jsonl"
run 1 "run --agent: the file's tools hide the others" run --agent "$T/allow.md" --tools "$T/tools.json" --nonce $N "x"
run 0 "run --agent: --allow-tools wins" run --agent "$T/allow.md" --tools "$T/tools.json" --allow-tools 'b*' --nonce $N "x"

# ---- a sub-agent with a real MCP server of its own -------------------------------------------

# @modelcontextprotocol/server-filesystem, pinned in tests/mcp (npm ci on
# first use, as test_mcp_e2e.sh does)
mods=$SRC/tests/mcp/node_modules
if [ ! -d "$mods/@modelcontextprotocol/server-filesystem" ] && command -v npm >/dev/null; then
    (cd "$SRC/tests/mcp" && npm ci --silent --no-audit --no-fund) >/dev/null 2>&1
fi
fs_js=$mods/@modelcontextprotocol/server-filesystem/dist/index.js
if [ -f "$fs_js" ] && command -v node >/dev/null; then
    mkdir -p "$T/work"
    echo "the secret is 7" >"$T/work/note.txt"
    cat >"$T/reader.md" <<MD
---
name: reader
description: Reads files.
model: replay:reader.jsonl
transport: native
tools: Read, mcp__fs__read_text_file
mcpServers:
  - fs: {command: node, args: ["$fs_js", "$T/work"]}
---
You read.
MD
    # offered only the tool its tools allow, it reads through its own server
    cat >"$T/reader.jsonl" <<JSON
{"expect": ["fs__read_text_file"], "tool_calls": [{"id": "r", "name": "fs__read_text_file", "arguments": {"path": "$T/work/note.txt"}}, {"id": "w", "name": "fs__write_file", "arguments": {"path": "$T/work/x", "content": "x"}}]}
{"expect": ["the secret is 7", "there is no tool named 'fs__write_file'"], "tool_calls": [{"id": "f", "name": "agent__final_report", "arguments": {"status": "success", "content": "it says 7"}}]}
JSON
    printf -- '---\nname: asker\nmodel: replay:asker.jsonl\nagents: [reader.md]\n---\n' >"$T/asker.md"
    printf '{"text": "%s"}\n{"text": "%s", "expect": ["it says 7"]}\n' \
        "$(call 0001 agent__reader '{\"task\": \"read note.txt\"}')" "$(final "seven")" >"$T/asker.jsonl"
    run 0 "run --agent: a sub-agent's own MCP server" run --agent "$T/asker.md" --nonce $N "what is the secret?"
    same "run --agent: a sub-agent's own MCP server, report" "seven" "$(cat "$T/out")"
    checks=$((checks + 1))
    [ ! -e "$T/work/x" ] || fail "run --agent: a tool its tools exclude was run"
    run 0 "check: the sub-agent's servers, by the MCP client" agent check "$T/asker.md"
else
    echo "skipped: a sub-agent with a real MCP server (no node, or tests/mcp's npm packages could not be installed)"
fi

# ---- SIGINT while a sub-agent's tool runs --------------------------------------------------------

has_pid() { [ -s "$T/pid" ]; }
cat >"$T/hang.json" <<EOF
[{"name": "hang", "description": "Hangs.", "command": ["sh", "-c", "echo \$\$ > $T/pid; exec sleep 60"]}]
EOF
printf -- '---\nname: boss\nmodel: replay:boss.jsonl\nagents: [worker.md]\n---\n' >"$T/boss.md"
printf -- '---\nname: worker\nmodel: replay:worker.jsonl\ntransport: native\n---\n' >"$T/worker.md"
printf '%s\n' '{"tool_calls": [{"id": "h", "name": "hang", "arguments": "{}"}]}' >"$T/worker.jsonl"
printf '{"text": "%s"}\n' "$(call 0001 agent__worker '{\"task\": \"hang\"}')" >"$T/boss.jsonl"
"$CLI" run --agent "$T/boss.md" --tools "$T/hang.json" --nonce $N --accounting "$T/acc3.jsonl" "go" >"$T/out" 2>"$T/err" &
pid=$!
checks=$((checks + 1))
if wait_for 20 has_pid; then
    tool=$(cat "$T/pid")
    checks=$((checks + 1))
    alive "$tool" || fail "SIGINT: the sub-agent's tool is not running"
    kill -INT $pid
    checks=$((checks + 1))
    wait_for 20 gone $pid || { fail "SIGINT: agentwire run did not end"; kill -KILL $pid; }
    wait $pid
    same "SIGINT: exit status" 130 $?
    checks=$((checks + 1))
    wait_for 5 eval "! alive $tool" || { fail "SIGINT: the sub-agent's tool outlived the run"; kill -KILL "$tool"; }
    has '"agent":"worker"' "SIGINT: the sub-agent's records kept" "$T/acc3.jsonl"
else
    fail "SIGINT: the sub-agent's tool never started: $(cat "$T/err")"
    kill -KILL $pid
fi

finish
