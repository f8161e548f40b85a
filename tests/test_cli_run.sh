#!/bin/sh
# agentwire run, as a user runs it: replay models and real command tools;
# exit statuses, usage errors, the records it leaves, --record played back,
# --trace, contracts on stdout, and keys that never reach a record.
#
#   tests/test_cli_run.sh AGENTWIRE SOURCE_DIR
#
# (or the environment variables AW_CLI, or AW_CLI_PATH, and AW_SOURCE_DIR).
set -u
. "$(dirname "$0")/support/cli_test.sh"

same() {
    checks=$((checks + 1))
    if ! cmp -s "$1" "$2"; then
        fail "$3: $(basename "$1") and $(basename "$2") differ"
        diff "$1" "$2" | head -10 | sed 's/^/    /'
    fi
}

cat >"$T/tools.json" <<'EOF'
[{"name": "upper", "description": "the arguments in capitals",
  "input_schema": {"type": "object"},
  "command": ["sh", "-c", "tr a-z A-Z"]},
 {"name": "env", "description": "the environment",
  "command": ["sh", "-c", "env; echo \"key=${OPENAI_API_KEY:-none}\""]}]
EOF

{
    printf '{"text": "Looking. %s %s", "usage": {"input_tokens": 50, "output_tokens": 9}, "chunks": 7, "expect": ["Session nonce: 1a2b3c4d"]}\n' \
        "$(call 0001 upper '{\"q\": \"abc\"}')" "$(call 0002 env '{}')"
    printf '{"text": "%s", "expect": ["ABC", "key=none"]}\n' "$(final success 'All *done*.')"
} >"$T/model.jsonl"

R="run --model replay:$T/model.jsonl --nonce 1a2b3c4d --tools $T/tools.json"

# ---- usage -----------------------------------------------------------------------------

run 0 "run --help" run --help
contains "--retry-base" "run --help"
contains "--record FILE" "run --help"
run 2 "no model" run "task"
contains "no model given" "no model" "$T/err"
run 2 "unknown option" run --model "replay:$T/model.jsonl" --frobnicate "task"
run 2 "xml context with native transport" run --model "replay:$T/model.jsonl" --context xml --transport native "task"
contains "xml context" "xml context with native transport" "$T/err"
run 2 "bad duration" run --model "replay:$T/model.jsonl" --timeout soon "task"
run 1 "malformed replay file" run --model "replay:$T/tools.json" "task"
contains "tools.json:" "malformed replay file" "$T/err"

# ---- a run and its records -----------------------------------------------------------------

OPENAI_API_KEY=sk-secret-4242 ANTHROPIC_API_KEY=sk-ant-secret-4242 \
    run 0 "a run" $R --thread "$T/thread.xml" --accounting "$T/acc.jsonl" --events "$T/events.jsonl" \
    --trace "$T/trace.txt" --record "$T/rec.jsonl" "the task"
contains "All *done*." "a run"
checks=$((checks + 1))
[ "$(cat "$T/out")" = "All *done*." ] || fail "a run: stdout is not the report alone: $(cat "$T/out")"
contains "tool upper ok" "a run: progress lines" "$T/err"

"$CLI" thread decode "$T/thread.xml" >"$T/decoded.jsonl" 2>"$T/decode.err"
checks=$((checks + 1))
[ $? -eq 0 ] || fail "the thread does not decode: $(cat "$T/decode.err")"
contains '"type":"tool_call"' "thread events" "$T/decoded.jsonl"
contains '"type":"completion"' "thread events" "$T/decoded.jsonl"
contains 'ABC' "thread holds the tool output" "$T/thread.xml"

contains '"kind":"model","provider":"replay"' "accounting: model row" "$T/acc.jsonl"
contains '"input_tokens":50' "accounting: tokens" "$T/acc.jsonl"
contains '"source":"xml","command":"upper"' "accounting: tool row" "$T/acc.jsonl"
contains '"command":"agent__final_report_xml"' "accounting: final report row" "$T/acc.jsonl"
contains '"type":"agent.tool.completed"' "envelopes" "$T/events.jsonl"
contains '"type":"agent.status"' "envelopes" "$T/events.jsonl"
lacks '"agent.stream.chunk"' "envelopes without --stream-events" "$T/events.jsonl"
contains '=== replay request' "trace" "$T/trace.txt"

# keys: not in the tools' environment, so in no record and no output
for f in out err thread.xml acc.jsonl events.jsonl trace.txt rec.jsonl; do
    lacks "secret-4242" "key in $f" "$T/$f"
done

run 0 "--stream-events" $R --stream-events --events "$T/events2.jsonl" "the task"
contains '"type":"agent.stream.chunk"' "--stream-events" "$T/events2.jsonl"

# ---- --record then replay:RECORDED -----------------------------------------------------------

run 0 "replaying the recording" run --model "replay:$T/rec.jsonl" --nonce 1a2b3c4d --tools "$T/tools.json" \
    --thread "$T/thread2.xml" "the task"
contains "All *done*." "replaying the recording"
grep 'type="tool_input"' "$T/thread.xml" >"$T/calls1"
grep 'type="tool_input"' "$T/thread2.xml" >"$T/calls2"
same "$T/calls1" "$T/calls2" "the recording makes the same calls"
checks=$((checks + 1))
[ -s "$T/calls1" ] || fail "the run made no calls"

# ---- budgets and failures ---------------------------------------------------------------------

{
    printf '{"text": "%s"}\n' "$(call 0001 upper '{}')"
    printf '{"text": "%s", "expect": ["This is the last turn"]}\n' "$(call 0011 upper '{}')"
} >"$T/endless.jsonl"
run 1 "max turns" run --model "replay:$T/endless.jsonl" --nonce 1a2b3c4d --tools "$T/tools.json" --max-turns 2 \
    --events "$T/events3.jsonl" --events-preset debug "the task"
contains "turn 2 of 2 ended without a final report" "max turns"
contains "the run failed" "max turns" "$T/err"
contains '"status":"stopped"' "max turns: the status envelope" "$T/events3.jsonl"
contains '"error_message":"turn 2 of 2 ended without a final report"' "max turns: why" "$T/events3.jsonl"
contains '"criterion":"StepsLimit"' "max turns: the continuation decision" "$T/events3.jsonl"
run 2 "bad --events-preset" $R --events-preset loud "task"

{
    printf '{"error": "503 overloaded", "retryable": true, "retry_after_ms": 30}\n'
    printf '{"text": "%s"}\n' "$(final success ok)"
} >"$T/flaky.jsonl"
run 0 "retried" run --model "replay:$T/flaky.jsonl" --nonce 1a2b3c4d --retry-base 1ms --accounting "$T/acc4.jsonl" "task"
contains '"attempt":2' "retried: second attempt" "$T/acc4.jsonl"
contains '"retry_in_ms":' "retried: the wait" "$T/acc4.jsonl"

printf '{"error": "401 Unauthorized: bad key", "retryable": false}\n' >"$T/dead.jsonl"
printf '{"text": "%s"}\n' "$(final success 'from the fallback')" >"$T/alive.jsonl"
run 0 "fallback" run --model "replay:$T/dead.jsonl" --fallback "replay:$T/alive.jsonl" --nonce 1a2b3c4d "task"
contains "from the fallback" "fallback"
contains "falling back to replay:" "fallback" "$T/err"
run 1 "every model failing" run --model "replay:$T/dead.jsonl" --retries 0 --nonce 1a2b3c4d "task"
contains "401 Unauthorized: bad key" "every model failing"

# ---- contracts ------------------------------------------------------------------------------

good='<llmResponse><response>Hello</response><analysis><subject name=\"greeting\" description=\"saying hi\" isNew=\"true\"><keyword term=\"hello\" confidence=\"0.9\"/></subject><summaryUpdate>Said hello.</summaryUpdate></analysis></llmResponse>'
bad='<llmResponse><response>Hi</response><analysis><subject name=\"x\" description=\"y\" isNew=\"maybe\"/></analysis></llmResponse>'
printf '{"text": "%s", "expect": ["<llmQuery>", "hi there"]}\n' "$(final success "$good")" >"$T/c-good.jsonl"
run 0 "contract: valid reply" run --model "replay:$T/c-good.jsonl" --nonce 1a2b3c4d --contract llmResponse "hi there"
contains '"response":"Hello"' "contract: typed JSON on stdout"
contains '"confidence":0.9' "contract: typed JSON on stdout"

printf '{"text": "%s"}\n{"text": "%s"}\n' "$(final success "$bad")" "$(final success "$good")" >"$T/c-bad.jsonl"
run 1 "contract: invalid reply" run --model "replay:$T/c-bad.jsonl" --nonce 1a2b3c4d --contract llmResponse "hi"
contains "isNew" "contract: every issue"
contains "summaryUpdate" "contract: every issue"
run 0 "contract: retried" run --model "replay:$T/c-bad.jsonl" --nonce 1a2b3c4d --contract llmResponse \
    --contract-retries 1 "hi"
contains '"response":"Hello"' "contract: retried"

finish
