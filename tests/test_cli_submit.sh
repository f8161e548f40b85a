#!/bin/sh
# agentwire submit, worker and sessions wait on one machine (an SQLite
# store): what a queued run may not carry is refused in words; a queued
# run waits (sessions wait --timeout says so); a worker runs the queue and
# exits when it is empty (--idle-exit); a run that cannot start here is
# given up after its attempts; a queued run's own --events get its
# envelopes. (Many workers, kills and PostgreSQL: test_cli_workers.sh.)
#
#   tests/test_cli_submit.sh AGENTWIRE SOURCE_DIR
set -u
. "$(dirname "$0")/support/cli_test.sh"
. "$(dirname "$0")/support/agent_tree.sh"
STORE="sqlite:$T/sessions.db"
cat >"$T/tools.json" <<EOF
[{"name": "note", "description": "note the arguments", "input_schema": {"type": "object"},
  "command": ["sh", "-c", "cat >> $T/calls.log; echo >> $T/calls.log; echo ok"]}]
EOF
{
    printf '{"turn": 1, "text": "%s"}\n' "$(call 0001 note '{\"n\": 1}')"
    printf '{"turn": 2, "text": "%s"}\n' "$(final success 'queued and done')"
} >"$T/model.jsonl"
Q="submit --store $STORE --model replay:$T/model.jsonl --nonce 1a2b3c4d --tools $T/tools.json"

# ---- refused, in words
run 2 "no model" submit --store "$STORE" "task"
contains "no model given" "no model: why" "$T/err"
run 2 "interactive" $Q --interactive "task"
contains "nobody is at a queued run's terminal" "interactive: why" "$T/err"
run 2 "a file destination" $Q --events "$T/ev.jsonl" "task"
contains "a file would be on the worker's machine" "a file destination: why" "$T/err"
run 2 "a password in a destination" $Q --events "redis://:pw@127.0.0.1:6379/0" "task"
contains "would be kept in the store" "a password: why" "$T/err"
lacks ":pw@" "a password: not repeated" "$T/err"
run 2 "a thread file" $Q --thread "$T/t.xml" "task"
run 1 "a tools file that is not JSON" submit --store "$STORE" --model "replay:$T/model.jsonl" --tools "$T/model.jsonl" x

# ---- queued, waited for, run
run 0 "submit" $Q --events "http://127.0.0.1:9/unreachable" "the first task"
ID1=$(cat "$T/out")
run 0 "submit 2" $Q "the second task"
ID2=$(cat "$T/out")
checks=$((checks + 1))
[ "$ID1" != "$ID2" ] && [ ${#ID1} -eq 36 ] || fail "two session ids: '$ID1' '$ID2'"
run 1 "wait: still queued" sessions wait "$ID1" --store "$STORE" --timeout 200ms
contains "is still queued" "wait: says so" "$T/err"
run 0 "list" sessions list --store "$STORE"
contains "queued" "list: queued"
run 0 "worker" worker --store "$STORE" --idle-exit --poll 50ms --events "$T/worker-events.jsonl"
contains "2 runs completed, 0 failed" "worker: both runs" "$T/err"
cp "$T/err" "$T/worker.err"
run 0 "wait: done" sessions wait "$ID1" --store "$STORE"
contains "completed" "wait: prints the status"
run 0 "show" sessions show "$ID2" --store "$STORE"
contains "queued and done" "show: the report"
checks=$((checks + 1))
[ "$(grep -o '"n":1' "$T/calls.log" | wc -l)" -eq 2 ] || fail "the tool ran once per run: $(cat "$T/calls.log")"
# the worker's own destination got both runs' envelopes; the first run's own
# (a webhook nobody answers) dropped its envelopes and said so
contains "\"session_id\":\"$ID1\"" "worker events: run 1" "$T/worker-events.jsonl"
contains "\"session_id\":\"$ID2\"" "worker events: run 2" "$T/worker-events.jsonl"
contains "http://127.0.0.1:9/unreachable: " "the run's own webhook: its drops reported" "$T/worker.err"
run 1 "wait: unknown" sessions wait "no-such-session" --store "$STORE"

# ---- a run that cannot start here: back in the queue, given up after its attempts
run 0 "submit 3" $Q "needs its tools"
ID3=$(cat "$T/out")
mv "$T/tools.json" "$T/tools.moved"
run 0 "worker: nothing it can run" worker --store "$STORE" --idle-exit --poll 50ms --max-attempts 2
contains "cannot be run here" "cannot start: said" "$T/err"
contains "given up after 2 attempts" "cannot start: given up" "$T/err"
run 1 "wait: failed" sessions wait "$ID3" --store "$STORE"
contains "failed" "wait: failed"

# ---- an agent file: its keys stored resolved, the file read again by the
# worker for its sub-agent (the lead calls helper, whose recorded model
# answers natively)
write_agent_tree "$T/agents" "$(call 0001 agent__helper '{\"task\": \"the question\"}')" \
    "$(final success "the helper says forty-two")"
run 0 "submit --agent" submit --store "$STORE" --agent "$T/agents/lead.md" --nonce 1a2b3c4d "ask"
ID4=$(cat "$T/out")
run 0 "worker: the agent file's run" worker --store "$STORE" --idle-exit --poll 50ms
contains "1 run completed, 0 failed" "worker: the agent file's run completed" "$T/err"
run 0 "wait: the agent file's run" sessions wait "$ID4" --store "$STORE"
run 0 "show: the agent file's run" sessions show "$ID4" --store "$STORE" --json
contains "the helper says forty-two" "the agent file's run: its report, after the sub-agent's answer" "$T/out"
contains '"agent":"lead"' "the agent file's run: its name stored" "$T/out"
run 1 "submit --agent: a bad file" submit --store "$STORE" --agent "$T/none.md" "x"
contains "$T/none.md" "submit --agent: a bad file, named" "$T/err"

# ---- options
run 2 "worker: an argument" worker --store "$STORE" extra
run 2 "worker: a bad lease" worker --store "$STORE" --lease 5ms
run 0 "worker --help" worker --help
contains "--concurrency N" "worker --help"
run 0 "submit --help" submit --help
contains "Queue a run" "submit --help"

finish
