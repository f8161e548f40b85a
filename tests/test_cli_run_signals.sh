#!/bin/sh
# agentwire run and its processes: SIGINT and SIGTERM while tools run
# (exit 130 / 143, records whole, no tool process left), a second SIGINT
# when the process is stuck (exits at once), a tool whose background child
# would outlive it. Every wait is bounded; no time is asserted.
#
#   tests/test_cli_run_signals.sh AGENTWIRE
set -u
. "$(dirname "$0")/support/cli_test.sh"
. "$(dirname "$0")/support/wait.sh"
READER=
trap '[ -n "$READER" ] && kill "$READER" 2>/dev/null; rm -rf "$T"' EXIT INT TERM

lines_at_least() { [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; }
holds() { grep -qF -- "$2" "$1" 2>/dev/null; }

# The exit status of background job $1 once it has ended (at most 10 s).
status_of() {
    if ! wait_for 10 gone "$1"; then
        fail "process $1 did not end"
        kill -KILL "$1" 2>/dev/null
    fi
    wait "$1"
}

# no_tool_left NAME: every pid in $T/pids is gone.
no_tool_left() {
    for p in $(cat "$T/pids"); do
        checks=$((checks + 1))
        if ! wait_for 2 eval "! alive $p"; then
            fail "$1: tool process $p outlived the run"
            kill -KILL "$p" 2>/dev/null
        fi
    done
}

# Two tools that hang, each with a child; both write their pids.
cat >"$T/tools.json" <<EOF
[{"name": "hang", "command": ["sh", "-c", "echo \$\$ >> $T/pids; sleep 30 & echo \$! >> $T/pids; wait"]},
 {"name": "bg", "command": ["sh", "-c", "sleep 30 & echo \$! >> $T/pids; echo started"]}]
EOF
printf '{"text": "%s%s"}\n' "$(call 0001 hang '{}')" "$(call 0002 hang '{}')" >"$T/hang.jsonl"

# ---- SIGINT and SIGTERM while tools run -------------------------------------------------------

for sig in INT TERM; do
    want=130
    [ $sig = TERM ] && want=143
    : >"$T/pids"
    "$CLI" run --model "replay:$T/hang.jsonl" --nonce 1a2b3c4d --tools "$T/tools.json" \
        --thread "$T/thread.xml" --accounting "$T/acc.jsonl" --events "$T/events.jsonl" "task" \
        >"$T/out" 2>"$T/err" &
    pid=$!
    wait_for 10 lines_at_least "$T/pids" 4
    check $? "SIG$sig: the tools did not start"
    kill -$sig $pid
    status_of $pid
    got=$?
    check $((got != want)) "SIG$sig: exit status $got, wanted $want ($(cat "$T/err"))"
    holds "$T/out" "the run was"
    check $? "SIG$sig: the report says why the run ended: $(cat "$T/out")"
    "$CLI" thread decode "$T/thread.xml" >"$T/decoded" 2>&1
    check $? "SIG$sig: the thread is not a whole document: $(cat "$T/decoded")"
    holds "$T/decoded" '"type":"completion"'
    check $? "SIG$sig: the thread lacks the completion"
    holds "$T/events.jsonl" '"type":"agent.status"'
    check $? "SIG$sig: no status envelope"
    no_tool_left "SIG$sig"
done

# ---- a background child does not outlive its call ----------------------------------------------

: >"$T/pids"
printf '{"text": "%s"}\n{"text": "<ai-agent-1a2b3c4d-FINAL tool=\\"agent__final_report\\" status=\\"success\\">ok</ai-agent-1a2b3c4d-FINAL>", "expect": ["started"]}\n' \
    "$(call 0001 bg '{}')" >"$T/bg.jsonl"
"$CLI" run --model "replay:$T/bg.jsonl" --nonce 1a2b3c4d --tools "$T/tools.json" --accounting "$T/acc.jsonl" \
    "task" >"$T/out" 2>"$T/err" &
pid=$!
# while the run goes on, the call is over: its child must be gone
wait_for 10 holds "$T/acc.jsonl" '"command":"bg"'
check $? "bg: the call did not end"
no_tool_left "bg (during the run)"
status_of $pid
check $? "bg: the run failed: $(cat "$T/err")"

# ---- a second SIGINT when the process is stuck ----------------------------------------------------

# A 300 KB report for a stdout nobody reads: agentwire blocks writing it,
# where the first SIGINT cannot help; the second ends it at once.
big=$(head -c 300000 /dev/zero | tr '\000' r)
printf '{"text": "<ai-agent-1a2b3c4d-FINAL tool=\\"agent__final_report\\" status=\\"success\\">%s</ai-agent-1a2b3c4d-FINAL>"}\n' \
    "$big" >"$T/big.jsonl"
mkfifo "$T/stdout"
sleep 60 <"$T/stdout" &
READER=$!
"$CLI" run --model "replay:$T/big.jsonl" --nonce 1a2b3c4d --thread "$T/thread.xml" "task" >"$T/stdout" 2>"$T/err" &
pid=$!
wait_for 10 holds "$T/thread.xml" 'type="completion"'
check $? "stuck: the run did not reach its report"
sleep 0.2
kill -INT $pid
sleep 0.2
checks=$((checks + 1))
kill -0 $pid 2>/dev/null || echo "note: the first SIGINT already ended the stuck process"
kill -INT $pid
status_of $pid
got=$?
check $((got != 130)) "stuck: exit status $got after two SIGINTs, wanted 130"
kill $READER 2>/dev/null
READER=

finish
