#!/usr/bin/env bash
# tests/e2e/run.sh BUILD_DIR — `agentwire run` with the real claude and
# codex CLIs (tests/e2e/node_modules, `npm ci` here) against the suite's
# scripted model-API stub (BUILD_DIR/stub_llm) on 127.0.0.1. `make e2e`
# runs it; tests/e2e/README.md says what each case checks.
#
# Every case gets a fresh stub, a fresh HOME (and CODEX_HOME), and a marker
# in the environment of the run (AW_E2E_CASE), which every process the run
# starts inherits: while the run goes, the process groups of the marked
# processes are noted; once it has ended, no marked process may be left,
# and none of those groups. Every wait is bounded (`timeout`, the stub's
# own --timeout-ms); no check is about time.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: tests/e2e/run.sh BUILD_DIR}" && pwd)
AW=$build/agentwire
STUB=$build/stub_llm
CLAUDE=$root/tests/e2e/node_modules/.bin/claude
CODEX=$root/tests/e2e/node_modules/.bin/codex
for f in "$AW" "$STUB" "$CLAUDE" "$CODEX"; do
    [ -x "$f" ] || { echo "e2e: $f is missing (make e2e builds and installs it)" >&2; exit 2; }
done
ONLY=${AW_E2E_ONLY:-} # a case name (or a part of one) to run alone

T=$(mktemp -d "${TMPDIR:-/tmp}/aw-e2e.XXXXXX")
stub_pid=
cleanup() {
    [ -n "$stub_pid" ] && kill "$stub_pid" 2>/dev/null
    [ -n "${AW_E2E_KEEP:-}" ] && echo "e2e: kept $T" || rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

passed=0
failed=0
case_failed=0
fail() {
    echo "  FAIL: $*"
    case_failed=1
}
# contains TEXT WHAT FILE
contains() {
    grep -qF -- "$1" "$3" || fail "$2: wanted '$1' in $(basename "$3"): $(head -c 400 "$3")"
}

# ---- the stub ------------------------------------------------------------------

# start_stub SCRIPT: a stub answering SCRIPT; sets PORT, logs to $C/log.jsonl
start_stub() {
    : >"$C/port"
    "$STUB" --script "$1" --log "$C/log.jsonl" --timeout-ms 180000 >"$C/port" 2>"$C/stub.err" &
    stub_pid=$!
    for _ in $(seq 100); do
        [ -s "$C/port" ] && break
        sleep 0.05
    done
    PORT=$(head -n 1 "$C/port")
    [ -n "$PORT" ] || { fail "the stub did not start: $(cat "$C/stub.err")"; return 1; }
}

stop_stub() {
    [ -n "$stub_pid" ] && kill "$stub_pid" 2>/dev/null && wait "$stub_pid" 2>/dev/null
    stub_pid=
}

# log_field N FIELD: the FIELD of the stub's N-th request (from 1) whose
# method is POST; "prompt" is the text the CLI made of our stdin: claude's
# last text block of the last message, codex's last input item's text.
log_field() {
    node -e '
const fs = require("fs");
const [file, n, field] = process.argv.slice(1);
const posts = fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map(JSON.parse)
    .filter(r => r.method === "POST");
const r = posts[Number(n) - 1];
if (!r) process.exit(0);
let out;
if (field === "count") out = String(posts.length);
else if (field === "prompt") {
    const body = JSON.parse(r.body);
    if (body.messages) {
        const content = body.messages[body.messages.length - 1].content;
        out = typeof content === "string" ? content : content[content.length - 1].text;
    } else {
        const items = body.input;
        const content = items[items.length - 1].content;
        out = content[content.length - 1].text;
    }
} else if (field.startsWith("header:")) out = r.headers[field.slice(7)] || "";
else out = String(r[field]);
process.stdout.write(out);' "$C/log.jsonl" "$1" "$2"
}

posts() {
    [ -f "$C/log.jsonl" ] || { echo 0; return; }
    grep -c '"method":"POST"' "$C/log.jsonl"
}

# ---- the CLIs' configuration ---------------------------------------------------------

# claude_env: the variables claude-cli needs to reach the stub (see README.md)
claude_env() {
    mkdir -p "$C/home"
    ENVS=(HOME="$C/home" ANTHROPIC_BASE_URL="http://127.0.0.1:$PORT" ANTHROPIC_API_KEY=sk-ant-e2e
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 CLAUDE_CODE_MAX_RETRIES=0)
}

# codex_env: a CODEX_HOME whose config.toml sends codex to the stub
codex_env() {
    mkdir -p "$C/home" "$C/codex_home"
    cat >"$C/codex_home/config.toml" <<EOF
model = "stub-model"
model_provider = "stub"

[model_providers.stub]
name = "agentwire stub"
base_url = "http://127.0.0.1:$PORT/v1"
env_key = "STUB_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
EOF
    ENVS=(HOME="$C/home" CODEX_HOME="$C/codex_home" STUB_API_KEY=sk-e2e)
}

# ---- a run, and what it leaves ------------------------------------------------------

# marked_pids: the processes carrying this case's marker
marked_pids() {
    local e pid
    for e in /proc/[0-9]*/environ; do
        grep -qzx -- "AW_E2E_CASE=$MARK" "$e" 2>/dev/null || continue
        pid=${e#/proc/}
        echo "${pid%/environ}"
    done
}

# run_agent [AGENTWIRE OPTIONS...]: agentwire run with $ENVS and the marker,
# stdin from $C/task, bounded by 150 s; RC, $C/out, $C/err. `timeout` puts
# the run in a process group of its own (RUN_GROUP); while the run goes,
# the marked processes are noted in $C/seen ("pid pgid command" lines).
run_agent() {
    : >"$C/seen"
    timeout -k 5 150 env "${ENVS[@]}" AW_E2E_CASE="$MARK" AW_NO_STATUS_LINE=1 \
        "$AW" run --no-store --retries 0 --request-timeout 120s "$@" <"$C/task" >"$C/out" 2>"$C/err" &
    local run_pid=$! pids
    RUN_GROUP=$run_pid
    while kill -0 "$run_pid" 2>/dev/null; do
        pids=$(marked_pids | tr '\n' ',')
        [ -z "$pids" ] || ps -o pid=,pgid=,comm= -p "${pids%,}" >>"$C/seen" 2>/dev/null
        sleep 0.1
    done
    wait "$run_pid"
    RC=$?
}

# no_process_left: nothing the run started outlives it; the CLI (any
# process but timeout and agentwire) ran in a process group of its own
no_process_left() {
    local left group pid comm
    left=$(marked_pids | tr '\n' ',')
    [ -z "$left" ] || left=$(ps -o pid=,stat= -p "${left%,}" | awk '$2 !~ /^Z/ {printf "%s,", $1}')
    [ -z "$left" ] || fail "processes left after the run: $(ps -o pid=,pgid=,args= -p "${left%,}" 2>/dev/null | head -5)"
    [ -f "$C/seen" ] || return 0
    while read -r pid group comm; do
        case "$comm" in timeout|agentwire) continue ;; esac
        [ "$group" != "$RUN_GROUP" ] || fail "$comm ($pid) ran in agentwire's process group"
    done <"$C/seen"
    for group in $(awk '{print $2}' "$C/seen" | sort -u); do
        # a zombie is dead, only not yet reaped by its new parent
        left=$(ps -eo pid=,pgid=,stat=,args= | awk -v g="$group" '$2 == g && $3 !~ /^Z/')
        [ -z "$left" ] || fail "process group $group is still there: $left"
    done
}

# ---- cases -------------------------------------------------------------------------

# e2e NAME: the case NAME (a function) in a directory of its own
e2e() {
    [ -z "$ONLY" ] || [[ $1 == *"$ONLY"* ]] || return 0
    C=$T/$1
    mkdir -p "$C"
    MARK="$1.$$"
    case_failed=0
    echo "e2e: $1"
    "$1"
    stop_stub
    no_process_left
    if [ "$case_failed" = 0 ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "  stderr of the run: $(tail -c 1500 "$C/err" 2>/dev/null)"
    fi
}

NONCE=1a2b3c4d
# tag SLOT TOOL JSON: a tool call of the session, as a JSON string's contents
tag() { printf '<ai-agent-%s-%s tool=\\"%s\\">%s</ai-agent-%s-%s>' "$NONCE" "$1" "$2" "$3" "$NONCE" "$1"; }
final() {
    printf '<ai-agent-%s-FINAL tool=\\"agent__final_report\\" status=\\"success\\" format=\\"markdown\\">%s</ai-agent-%s-FINAL>' \
        "$NONCE" "$1" "$NONCE"
}

# Two command tools whose answers the stub cannot know, so finding them in
# a later prompt shows the tool ran and its result reached the model.
write_tools() {
    cat >"$C/tools.json" <<'EOF'
[
  {"name": "checksum", "description": "The first 16 hex digits of the SHA-256 of the arguments.",
   "input_schema": {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]},
   "command": ["sh", "-c", "sha256sum | cut -c1-16"], "timeout_ms": 10000},
  {"name": "byte_count", "description": "How many bytes the arguments are.",
   "input_schema": {"type": "object"},
   "command": ["sh", "-c", "echo \"bytes: $(wc -c)\""], "timeout_ms": 10000}
]
EOF
}
checksum_of() { printf '%s' "$1" | sha256sum | cut -c1-16; }

# setup MODEL SCRIPT_LINES...: a stub answering these lines (each with
# "endpoint" set to the API MODEL's CLI calls), MODEL's environment, and
# "Anything." as the task
setup() {
    MODEL=$1
    shift
    case $MODEL in
    claude-cli) ENDPOINT=/v1/messages ;;
    codex-cli) ENDPOINT=/v1/responses ;;
    esac
    local line
    : >"$C/script.jsonl"
    for line in "$@"; do
        printf '{"endpoint":"%s",%s}\n' "$ENDPOINT" "$line" >>"$C/script.jsonl"
    done
    echo "Anything." >"$C/task"
    start_stub "$C/script.jsonl" || return
    "${MODEL%-cli}_env"
}

# agent [OPTIONS...]: the run of this case's MODEL
agent() { run_agent --model "$MODEL" --claude-path "$CLAUDE" --codex-path "$CODEX" --nonce "$NONCE" "$@"; }

# failed_with TEXT...: the run failed (exit 1), its stderr holding each TEXT
failed_with() {
    [ "$RC" = 1 ] || fail "exit status $RC, wanted 1"
    local text
    for text in "$@"; do
        contains "$text" "the error" "$C/err"
    done
}

# requests N WHY: the stub got N model requests
requests() { [ "$(posts)" = "$1" ] || fail "the stub got $(posts) model requests, wanted $1 ($2)"; }

# A three-turn xml-transport run with tools: turn 1 calls two tools, turn 2
# one, turn 3 writes the final report.
multi_turn() {
    write_tools
    setup "$1" \
        "$(printf '"text":"Two checks first.\\n%s\\n%s","usage":{"input_tokens":120,"output_tokens":30}' \
            "$(tag 0001 checksum '{\"word\": \"marmalade\"}')" "$(tag 0002 byte_count '{\"n\": 12345}')")" \
        "$(printf '"text":"One more.\\n%s","usage":{"input_tokens":240,"output_tokens":20}' \
            "$(tag 0011 checksum '{\"word\": \"quince\"}')")" \
        "$(printf '"text":"%s","usage":{"input_tokens":300,"output_tokens":25}' "$(final 'Both words checked.')")" ||
        return
    echo "Check two words with the tools." >"$C/task"
    agent --transport xml --tools "$C/tools.json" --max-turns 5 --accounting "$C/accounting.jsonl" \
        --thread "$C/thread.xml"
    [ "$RC" = 0 ] || fail "exit status $RC, wanted 0"
    contains "Both words checked." "the final report on stdout" "$C/out"
    requests 3 "three turns"
    local sum1 sum2
    sum1=$(checksum_of '{"word":"marmalade"}')
    sum2=$(checksum_of '{"word":"quince"}')
    log_field 1 prompt >"$C/prompt1"
    log_field 2 prompt >"$C/prompt2"
    log_field 3 prompt >"$C/prompt3"
    contains "<thread>" "turn 1's prompt is the thread" "$C/prompt1"
    contains "Session nonce: $NONCE" "turn 1's prompt offers the slots" "$C/prompt1"
    contains "Check two words with the tools." "turn 1's prompt holds the task" "$C/prompt1"
    contains "<thread>" "turn 2's prompt is the thread" "$C/prompt2"
    contains "&lt;response&gt;$sum1" "turn 2's prompt holds the checksum tool's result" "$C/prompt2"
    contains "bytes: 11" "turn 2's prompt holds the byte_count tool's result" "$C/prompt2"
    contains "&lt;response&gt;$sum2" "turn 3's prompt holds turn 2's tool result" "$C/prompt3"
    contains "&lt;response&gt;$sum1" "turn 3's prompt still holds turn 1's" "$C/prompt3"
    contains '"command":"checksum"' "the accounting has the tool calls" "$C/accounting.jsonl"
    contains "\"provider\":\"$MODEL\"" "the accounting names the provider" "$C/accounting.jsonl"
    contains 'type="completion"' "the thread ends with the report" "$C/thread.xml"
}

claude_multi_turn() {
    multi_turn claude-cli
    [ "$(log_field 1 path)" = "/v1/messages?beta=true" ] || fail "claude called $(log_field 1 path)"
    [ "$(log_field 1 header:x-api-key)" = sk-ant-e2e ] || fail "claude sent no x-api-key"
}

codex_multi_turn() {
    multi_turn codex-cli
    [ "$(log_field 1 path)" = "/v1/responses" ] || fail "codex called $(log_field 1 path)"
    [ "$(log_field 1 header:authorization)" = "Bearer sk-e2e" ] || fail "codex sent no bearer key"
}

# A task of 2 MB in the xml context: the thread goes on stdin, past the
# kernel's limit for an argument.
two_mb_thread() {
    setup "$1" "$(printf '"text":"%s","usage":{"input_tokens":600000,"output_tokens":10}' "$(final 'Read it all.')")" ||
        return
    head -c 2097152 /dev/zero | tr '\0' 'x' | fold -w 99 >"$C/task"
    echo "END-OF-THE-LONG-TASK" >>"$C/task"
    agent --transport xml --context xml
}

claude_2mb_thread() {
    two_mb_thread claude-cli
    [ "$RC" = 0 ] || fail "exit status $RC, wanted 0"
    contains "Read it all." "the final report on stdout" "$C/out"
    log_field 1 prompt >"$C/prompt1"
    local size
    size=$(wc -c <"$C/prompt1")
    [ "$size" -gt 2097152 ] || fail "the prompt that reached the API is $size bytes, wanted the whole 2 MB thread"
    contains "END-OF-THE-LONG-TASK" "the prompt holds the task's end" "$C/prompt1"
}

# codex refuses input over 1,048,576 characters itself, before any request
codex_2mb_thread() {
    two_mb_thread codex-cli
    failed_with "codex-cli: exited with status 1" "Input exceeds the maximum length of 1048576 characters"
    requests 0 "codex sends nothing"
}

# The API refuses: the CLI exits non-zero, and the run fails saying why,
# after one request (the CLIs' own retries are off)
claude_exits_400() {
    setup claude-cli '"status":400,"error":"stub says no"' || return
    agent
    failed_with "claude-cli: API Error: 400" "stub says no"
    requests 1 "no retry"
}

claude_exits_500() {
    setup claude-cli '"status":500,"error":"stub is down"' || return
    agent
    failed_with "claude-cli: API Error: 500" "stub is down"
    requests 1 "CLAUDE_CODE_MAX_RETRIES=0"
}

codex_exits_400() {
    setup codex-cli '"status":400,"error":"stub says no"' || return
    agent
    failed_with "codex-cli: the turn failed" "stub says no"
    requests 1 "no retry"
}

codex_exits_500() {
    setup codex-cli '"status":500,"error":"stub is down"' || return
    agent
    failed_with "codex-cli: the turn failed"
    requests 1 "request_max_retries = 0"
}

# The API takes the request and never answers: the request timeout stops
# the CLI, its whole process group.
hang() {
    setup "$1" '"text":"late","delay_ms":170000' || return
    agent --request-timeout 15s
    failed_with "$1: no reply within 15 s (the request timeout); the command was stopped"
    requests 1 "the CLI reached the stub before it hung"
    awk '$3 != "timeout" && $3 != "agentwire"' "$C/seen" | grep -q . || fail "no process of the CLI was seen while it ran"
}
claude_hangs() { hang claude-cli; }
codex_hangs() { hang codex-cli; }

# The real CLI behind a wrapper that adds a line of its own to stdout, as a
# CLI with a banner or an update notice would: not the JSON the provider
# reads.
wrapper() {
    printf '#!/bin/sh\n%s\n' "$2" >"$C/$1"
    chmod +x "$C/$1"
}

claude_not_its_json() {
    setup claude-cli "$(printf '"text":"%s"' "$(final 'fine')")" || return
    # the real object, then a notice after it
    wrapper claude "\"$CLAUDE\" \"\$@\"; rc=\$?; echo 'A new version of claude is available'; exit \$rc"
    CLAUDE=$C/claude agent
    failed_with "claude-cli: stdout is not JSON" 'it starts with "{\"type\":\"result\"'
    requests 1 "the real claude ran"
}

codex_not_its_json() {
    setup codex-cli "$(printf '"text":"%s"' "$(final 'fine')")" || return
    # a banner, then the real codex in the same process: the provider stops
    # it at the first line, while it runs
    wrapper codex "echo 'codex: starting up'; exec \"$CODEX\" \"\$@\""
    CODEX=$C/codex agent
    failed_with "codex-cli: stdout line 1 is not JSON" "codex: starting up"
}

for name in claude_multi_turn codex_multi_turn claude_2mb_thread codex_2mb_thread \
    claude_exits_400 claude_exits_500 codex_exits_400 codex_exits_500 \
    claude_hangs codex_hangs claude_not_its_json codex_not_its_json; do
    e2e "$name"
done

echo "e2e: $passed passed, $failed failed"
[ "$failed" = 0 ]
