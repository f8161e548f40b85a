#!/bin/sh
# The agent of `make demo`, run through the very Makefile target the demo
# uses (make demo-agent), so the demo cannot rot: the report, the calls the
# tools really made, and the records it leaves.
#
#   tests/test_cli_demo.sh AGENTWIRE SOURCE_DIR
set -u
. "$(dirname "$0")/support/cli_test.sh"

count_is() { # count_is N TEXT FILE NAME
    checks=$((checks + 1))
    n=$(grep -cF -- "$2" "$3")
    [ "$n" = "$1" ] || fail "$4: $n lines with '$2', wanted $1"
}

checks=$((checks + 1))
AW_NO_STATUS_LINE=1 make -s --no-print-directory -C "$SRC" demo-agent AGENTWIRE="$CLI" DEMO_OUT="$T" \
    >"$T/out" 2>"$T/err"
status=$?
[ $status -eq 0 ] || { fail "make demo-agent: exit status $status"; sed 's/^/    /' "$T/err" | head -20; }

# the report, as the model wrote it after reading the tools' outputs (the
# recording's "expect" fails the run when an output did not reach it)
contains "**18 events**" "the report" "$T/out"
contains "**4 tool calls**" "the report" "$T/out"
contains "tool list_files ok" "progress" "$T/err"
contains "tool grep ok" "progress" "$T/err"

# the records, next to it
"$CLI" thread decode "$T/thread.xml" >"$T/events.decoded" 2>&1 || fail "the thread does not decode: $(cat "$T/events.decoded")"
count_is 3 '"type":"tool_call"' "$T/events.decoded" "thread: calls"
count_is 3 '"type":"tool_result"' "$T/events.decoded" "thread: results"
contains '18 lines in session.jsonl' "thread: count_lines' output" "$T/thread.xml"
contains '3439 session.jsonl' "thread: list_files' output" "$T/thread.xml"
contains '&quot;toolName&quot;:&quot;search_code&quot;' "thread: grep's output" "$T/thread.xml"
count_is 3 '"kind":"model"' "$T/accounting.jsonl" "accounting: requests"
for tool in list_files count_lines grep; do
    contains "\"source\":\"xml\",\"command\":\"$tool\"" "accounting: $tool" "$T/accounting.jsonl"
done
count_is 0 '"status":"failed"' "$T/accounting.jsonl" "accounting: failures"
contains '"command":"agent__final_report_xml"' "accounting: the report" "$T/accounting.jsonl"
count_is 3 '"type":"agent.tool.completed"' "$T/events.jsonl" "envelopes: tools"
contains '"type":"agent.status"' "envelopes: status" "$T/events.jsonl"

# the tools refuse paths outside the examples
checks=$((checks + 1))
if (cd "$SRC/examples" && echo '{"path": "../Makefile"}' | sh agent/tools/count_lines.sh) >/dev/null 2>&1; then
    fail "count_lines read a file outside the examples"
fi

finish
