#!/bin/sh
# agentwire transport next | past | extract, run as a user would.
#
#   tests/test_cli_transport.sh AGENTWIRE SOURCE_DIR
#
# (or the environment variables AW_CLI, or AW_CLI_PATH, and AW_SOURCE_DIR). Exits 0 when
# every check passes; prints each failure.
set -u

. "$(dirname "$0")/support/cli_checks.sh"
V="$SRC/tests/vectors/transport"

# same_as FILE NAME: $T/out equals FILE
same_as() {
    checks=$((checks + 1))
    if ! cmp -s "$T/out" "$1"; then
        fail "$2: output differs from $1"
        diff "$1" "$T/out" | head -20 | sed 's/^/    /'
    fi
}

# contains TEXT NAME [FILE]: FILE (default $T/out) holds TEXT
contains() {
    checks=$((checks + 1))
    if ! grep -qF -- "$1" "${3:-$T/out}"; then
        fail "$2: wanted '$1' in $(basename "${3:-$T/out}"): $(head -c 600 "${3:-$T/out}")"
    fi
}

lacks() {
    checks=$((checks + 1))
    if grep -qF -- "$1" "${3:-$T/out}"; then
        fail "$2: did not want '$1'"
    fi
}

ends_with_newline() {
    checks=$((checks + 1))
    if [ -s "$T/out" ] && [ "$(tail -c 1 "$T/out" | od -An -c | tr -d ' ')" != '\n' ]; then
        fail "$1: output does not end with a newline"
    fi
}

# ---- help and usage ------------------------------------------------------------

run 0 "transport --help" transport --help
contains "Usage: agentwire transport COMMAND" "transport --help"
run 2 "transport (no command)" transport
run 2 "transport unknown" transport frobnicate
contains "unknown command" "transport unknown" "$T/err"
for verb in next past extract; do
    run 0 "transport $verb --help" transport $verb --help
    contains "Usage: agentwire transport $verb" "transport $verb --help"
    run 0 "transport $verb -h" transport $verb -h
    run 2 "transport $verb --bogus" transport $verb --bogus
    contains "unknown option '--bogus'" "transport $verb --bogus" "$T/err"
done

# ---- next ------------------------------------------------------------------------

run 0 "next xml" transport next --tools "$V/tools.json" --mode xml --turn 2 --max-turns 8 --nonce 1a2b3c4d
same_as "$V/next_xml.txt" "next xml"
run 0 "next xml-final" transport next --tools "$V/tools.json" --mode xml-final --turn 2 --max-turns 8 \
    --nonce 1a2b3c4d --format json --schema "$V/schema.json"
same_as "$V/next_xml_final.txt" "next xml-final"
run 0 "next last turn" transport next --tools="$V/tools.json" --mode=xml --turn=3 --max-turns=3 \
    --nonce=1a2b3c4d --format=json --max-calls=1 --prefix=tool
same_as "$V/next_xml_last_turn.txt" "next last turn"
run 0 "next native" transport next --tools "$V/tools.json" --mode native --turn 1 --max-turns 2
checks=$((checks + 1))
[ -s "$T/out" ] && fail "next native: printed something"
run 0 "next without tools" transport next --mode xml --turn 1 --max-turns 2 --nonce 1a2b3c4d
contains "No tools this session." "next without tools"
contains "<ai-agent-1a2b3c4d-PROGRESS" "next without tools"
ends_with_newline "next without tools"
run 0 "next random nonce" transport next --mode xml --turn 1 --max-turns 2
checks=$((checks + 1))
grep -Eq '^Turn 1 of 2\. Session nonce: [0-9a-f]{8}\.$' "$T/out" || fail "next random nonce: no nonce line"
for f in markdown text tty pipe json slack-block-kit sub-agent; do
    run 0 "next --format $f" transport next --mode xml-final --turn 1 --max-turns 2 --nonce 1a2b3c4d --format $f
    contains "format=\"$f\">" "next --format $f"
done
run 2 "next without --mode" transport next --turn 1 --max-turns 2
contains "--mode is required" "next without --mode" "$T/err"
run 2 "next without --turn" transport next --mode xml --max-turns 2
run 2 "next without --max-turns" transport next --mode xml --turn 1
run 2 "next turn after max" transport next --mode xml --turn 3 --max-turns 2
run 2 "next turn 0" transport next --mode xml --turn 0 --max-turns 2
run 2 "next bad mode" transport next --mode xmlish --turn 1 --max-turns 2
run 2 "next bad format" transport next --mode xml --turn 1 --max-turns 2 --format html
run 2 "next bad nonce" transport next --mode xml --turn 1 --max-turns 2 --nonce 1A2B3C4D
contains "nonce" "next bad nonce" "$T/err"
run 2 "next bad prefix" transport next --mode xml --turn 1 --max-turns 2 --prefix "a b"
run 2 "next missing value" transport next --mode
run 2 "next with FILE" transport next --mode xml --turn 1 --max-turns 2 somefile
printf '[{"name": "a",]' >"$T/bad.json"
run 1 "next bad tools JSON" transport next --mode xml --turn 1 --max-turns 2 --tools "$T/bad.json"
contains "$T/bad.json:1:" "next bad tools JSON" "$T/err"
printf '[{"description": "no name"}]' >"$T/noname.json"
run 1 "next tools without name" transport next --mode xml --turn 1 --max-turns 2 --tools "$T/noname.json"
contains "tool 0" "next tools without name" "$T/err"
run 1 "next missing tools file" transport next --mode xml --turn 1 --max-turns 2 --tools "$T/nope.json"

# ---- past --------------------------------------------------------------------------

run 0 "past FILE" transport past "$V/past_calls.jsonl"
same_as "$V/past.txt" "past FILE"
checks=$((checks + 1))
"$CLI" transport past <"$V/past_calls.jsonl" >"$T/out" 2>"$T/err" || fail "past stdin: exit status $?"
same_as "$V/past.txt" "past stdin"
"$CLI" transport past - <"$V/past_calls.jsonl" >"$T/out" 2>"$T/err" || fail "past -: exit status $?"
same_as "$V/past.txt" "past -"
: >"$T/empty.jsonl"
run 0 "past empty" transport past "$T/empty.jsonl"
checks=$((checks + 1))
[ -s "$T/out" ] && fail "past empty: printed something"
printf '{"slot":"0001","tool":"a","status":"ok","duration_ms":1,"request":"r","response":"s"}\n{"slot":"0002",\n' >"$T/badline.jsonl"
run 1 "past bad line" transport past "$T/badline.jsonl"
contains "$T/badline.jsonl:2:" "past bad line" "$T/err"
printf '{"slot":"0001","tool":"a","status":"done"}\n' >"$T/badstatus.jsonl"
run 1 "past bad status" transport past "$T/badstatus.jsonl"
contains "$T/badstatus.jsonl:1: 'status' must be" "past bad status" "$T/err"
printf '{"slot":1,"tool":"a","status":"ok"}\n' >"$T/badslot.jsonl"
run 1 "past bad slot" transport past "$T/badslot.jsonl"
printf '[1]\n' >"$T/notobj.jsonl"
run 1 "past not an object" transport past "$T/notobj.jsonl"
printf '{"slot":"0001","tool":"a","status":"ok","duration_ms":"1"}\n' >"$T/badms.jsonl"
run 1 "past bad duration" transport past "$T/badms.jsonl"
run 1 "past missing file" transport past "$T/nope.jsonl"
run 2 "past two files" transport past "$T/empty.jsonl" "$T/empty.jsonl"
# a long response is cut, JSON values are written compactly, requests may be absent
head -c 5000 /dev/zero | tr '\0' 'x' >"$T/long.txt"
printf '{"slot":"0001","tool":"a","status":"failed","response":"%s","request":{"a": [1, 2]}}\n{"slot":"0002","tool":"b","status":"ok","duration_ms":2.6,"response":{"ok": true}}\n' \
    "$(cat "$T/long.txt")" >"$T/long.jsonl"
run 0 "past long" transport past "$T/long.jsonl"
contains '<response note="cut to 4096 of 5000 bytes">' "past long"
contains '<request>{"a":[1,2]}</request>' "past long"
contains '<tool_result slot="0002" tool="b" status="ok" duration_ms="3">' "past long"
contains '<request></request>' "past long"
contains '<response>{"ok":true}</response>' "past long"
ends_with_newline "past long"

# ---- extract -------------------------------------------------------------------------

X="transport extract --nonce 1a2b3c4d --tools $V/tools.json"
cat >"$T/r1.txt" <<'EOF'
Let me look that up.
<ai-agent-1a2b3c4d-0011 tool="search">{"query": "closing </ai-agent-1a2b3c4d-0011> inside"}</ai-agent-1a2b3c4d-0011>
<ai-agent-1a2b3c4d-0001 tool="search">{"query": "old"}</ai-agent-1a2b3c4d-0001>
<ai-agent-deadbeef-0012 tool="search">{"query": "x"}</ai-agent-deadbeef-0012>
<think>maybe <ai-agent-1a2b3c4d-0013 tool="fetch">{"url": "u"}</ai-agent-1a2b3c4d-0013></think>
<ai-agent-1a2b3c4d-PROGRESS tool='agent__progress_report'>{"progress": "searching"}</ai-agent-1a2b3c4d-PROGRESS>
<ai-agent-1a2b3c4d-FINAL tool="agent__final_report" status="success" format="markdown"># Done
All good.</ai-agent-1a2b3c4d-FINAL>
Bye.
EOF
run 0 "extract" $X --mode xml --turn 2 "$T/r1.txt"
cp "$T/out" "$T/whole.jsonl"
contains '{"kind":"call","slot":"0011","tool":"search","args":{"query":"closing </ai-agent-1a2b3c4d-0011> inside"},"payload":"{\"query\": \"closing </ai-agent-1a2b3c4d-0011> inside\"}","source":"xml","command":"search","repairs":[]}' "extract"
contains '{"kind":"rejected","slot":"0001","tool":"search","reason":"dead_slot","message":' "extract"
contains '{"kind":"rejected","slot":"0012","tool":"search","reason":"wrong_nonce","message":' "extract"
contains '{"kind":"call","slot":"PROGRESS","tool":"agent__progress_report","args":{"progress":"searching"}' "extract"
contains '{"kind":"final","status":"success","format":"markdown","content":"# Done\nAll good.","json":null,"truncated":false,"repairs":[],"command":"agent__final_report_xml"}' "extract"
lacks '0013' "extract"
checks=$((checks + 1))
tail -n 1 "$T/out" | grep -q '^{"kind":"feedback","text":"TURN-FAILED' || fail "extract: the feedback is not the last record"
checks=$((checks + 1))
[ "$(wc -l <"$T/out")" -eq 6 ] || fail "extract: wanted 6 records, got $(wc -l <"$T/out")"
ends_with_newline "extract"
for n in 1 2 3 7 64; do
    run 0 "extract --chunk $n" $X --mode xml --turn 2 --chunk $n "$T/r1.txt"
    same_as "$T/whole.jsonl" "extract --chunk $n"
done
checks=$((checks + 1))
"$CLI" $X --mode xml --turn 2 <"$T/r1.txt" >"$T/out" 2>"$T/err" || fail "extract stdin: exit status $?"
same_as "$T/whole.jsonl" "extract stdin"

# the tags rejected as they open (a dead slot, a foreign nonce) are not tags:
# they stay in the visible text
run 0 "extract --visible" $X --mode xml --turn 2 --visible --chunk 5 "$T/r1.txt"
cat >"$T/visible.txt" <<'EOF'
Let me look that up.

<ai-agent-1a2b3c4d-0001 tool="search">{"query": "old"}</ai-agent-1a2b3c4d-0001>
<ai-agent-deadbeef-0012 tool="search">{"query": "x"}</ai-agent-deadbeef-0012>



Bye.
EOF
same_as "$T/visible.txt" "extract --visible"
printf 'no newline at the end' >"$T/r2.txt"
run 0 "extract --visible adds the newline" $X --mode xml --turn 1 --visible "$T/r2.txt"
ends_with_newline "extract --visible adds the newline"

run 0 "extract --events" $X --mode xml --turn 2 --events "$T/r1.txt"
contains '{"kind":"text","text":"Let me look that up.\n"}' "extract --events"
contains '{"kind":"tag_open","slot":"0011","tool":"search"}' "extract --events"
contains '{"kind":"tag_close","slot":"0011"}' "extract --events"
contains '{"kind":"payload","text":' "extract --events"
run 2 "extract --visible --events" $X --mode xml --turn 2 --events --visible "$T/r1.txt"

# xml-final: tool tags rejected, native calls kept
printf '[{"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{\\"query\\": \\"n\\"}"}}]' >"$T/native.json"
run 0 "extract xml-final" $X --mode xml-final --turn 1 --native-calls "$T/native.json" "$T/r1.txt"
contains '"reason":"not_allowed_in_mode"' "extract xml-final"
contains '{"kind":"call","slot":"","tool":"search","args":{"query":"n"}' "extract xml-final"
contains '"source":"native"' "extract xml-final"
contains '{"kind":"final"' "extract xml-final"
run 0 "extract xml native ignored" $X --mode xml --turn 2 --native-calls "$T/native.json" "$T/r1.txt"
lacks '"source":"native"' "extract xml native ignored"
contains '{"kind":"rejected","slot":"","tool":"search","reason":"not_allowed_in_mode"' "extract xml native ignored"
printf '{"not": "an array"}' >"$T/native_bad.json"
run 1 "extract bad native calls" $X --mode xml-final --turn 1 --native-calls "$T/native_bad.json" "$T/r1.txt"

# the end of the reply inside FINAL, by stop reason
printf '<ai-agent-1a2b3c4d-FINAL tool="agent__final_report" status="partial" format="markdown">cut sho' >"$T/cut.txt"
run 0 "extract unclosed stop" $X --mode xml --turn 1 --stop-reason end_turn "$T/cut.txt"
contains '"content":"cut sho","json":null,"truncated":false' "extract unclosed stop"
lacks '"kind":"warning"' "extract unclosed stop"
run 0 "extract unclosed length" $X --mode xml --turn 1 --stop-reason length "$T/cut.txt"
contains '"truncated":true' "extract unclosed length"
run 0 "extract unclosed unknown" $X --mode xml --turn 1 "$T/cut.txt"
contains '{"kind":"warning","text":' "extract unclosed unknown"
printf '<ai-agent-1a2b3c4d-FINAL tool="agent__final_report" status="partial" format="json">{"a": 1' >"$T/cutjson.txt"
run 0 "extract unclosed json length" $X --mode xml --turn 1 --format json --stop-reason max_tokens "$T/cutjson.txt"
contains '"reason":"unclosed"' "extract unclosed json length"

# formats
printf '<ai-agent-1a2b3c4d-FINAL tool="agent__final_report" status="success" format="json">{"answer": "42"}</ai-agent-1a2b3c4d-FINAL>' >"$T/json.txt"
run 0 "extract json" $X --mode xml --turn 1 --format json --schema "$V/schema.json" "$T/json.txt"
contains '"format":"json","content":"{\"answer\": \"42\"}","json":{"answer":"42"}' "extract json"
run 0 "extract wrong format" $X --mode xml --turn 1 --format text "$T/json.txt"
contains '"reason":"wrong_format","message":"Final report format must be text. Received json."' "extract wrong format"

# other dialects
printf 'Sure.\n<tool_call>{"name": "search", "arguments": {"query": "h"}}</tool_call>\n<function_calls><invoke name="fetch"><parameter name="url">u</parameter></invoke></function_calls>' >"$T/dialects.txt"
run 0 "extract dialects off" $X --mode xml --turn 1 "$T/dialects.txt"
checks=$((checks + 1))
[ -s "$T/out" ] && fail "extract dialects off: records printed"
run 0 "extract dialects" $X --mode xml --turn 1 --dialects hermes,function_calls "$T/dialects.txt"
contains '"source":"hermes"' "extract dialects"
contains '"source":"function_calls"' "extract dialects"
run 2 "extract bad dialect" $X --mode xml --turn 1 --dialects hermes,smoke "$T/dialects.txt"
contains "unknown dialect 'smoke'" "extract bad dialect" "$T/err"
contains "qwen3_coder" "extract bad dialect: the names" "$T/err"

# calls recovered from the text in native and xml-final modes (issue 18)
printf 'Let me check.\n\n<function=read_file>\n<parameter=path>\n/etc/hosts\n</parameter>\n</function>\n</tool_call>\nDone.' >"$T/qwen.txt"
echo '[{"name": "read_file", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]' >"$T/rtools.json"
for mode in native xml-final; do
    run 0 "extract recovered $mode" $X --mode $mode --turn 1 --tools "$T/rtools.json" --dialects auto "$T/qwen.txt"
    contains '"kind":"call","slot":"","tool":"read_file","args":{"path":"/etc/hosts"}' "extract recovered $mode"
    contains '"source":"recovered","dialect":"qwen3_coder"' "extract recovered $mode"
done
run 0 "extract recovered xml" $X --mode xml --turn 1 --tools "$T/rtools.json" --dialects auto "$T/qwen.txt"
contains '"source":"qwen3_coder","dialect":"qwen3_coder"' "extract recovered xml"
run 0 "extract recovered, visible" $X --mode native --turn 1 --tools "$T/rtools.json" --dialects auto --visible "$T/qwen.txt"
checks=$((checks + 1))
[ "$(cat "$T/out")" = "$(printf 'Let me check.\n\n\nDone.')" ] || fail "extract recovered, visible: $(cat "$T/out")"
run 0 "extract recovered, chunks" $X --mode native --turn 1 --tools "$T/rtools.json" --dialects auto --chunk 1 "$T/qwen.txt"
contains '"source":"recovered","dialect":"qwen3_coder"' "extract recovered, chunks"
run 0 "extract dialects not on" $X --mode native --turn 1 --tools "$T/rtools.json" "$T/qwen.txt"
checks=$((checks + 1))
[ -s "$T/out" ] && fail "extract dialects not on: records printed"
printf '<tool_call>\n<function=read_file>\n<parameter=path=/etc</parameter>\n</function>\n</tool_call>' >"$T/bad.txt"
run 0 "extract malformed dialect" $X --mode native --turn 1 --tools "$T/rtools.json" --dialects qwen3_coder "$T/bad.txt"
contains '"reason":"malformed_call"' "extract malformed dialect"
contains '<parameter=NAME>VALUE</parameter>' "extract malformed dialect"
printf 'Write `<tool_call>{"name": "read_file", "arguments": {}}</tool_call>` to call.' >"$T/mention.txt"
run 0 "extract code span" $X --mode native --turn 1 --tools "$T/rtools.json" --dialects auto "$T/mention.txt"
checks=$((checks + 1))
[ -s "$T/out" ] && fail "extract code span: records printed"

# reasoning tags
printf '<scratch><ai-agent-1a2b3c4d-0001 tool="search">{"query": "a"}</ai-agent-1a2b3c4d-0001></scratch>' >"$T/scratch.txt"
run 0 "extract --reasoning" $X --mode xml --turn 1 --reasoning scratch,think "$T/scratch.txt"
checks=$((checks + 1))
[ -s "$T/out" ] && fail "extract --reasoning: a call inside a reasoning block"
run 0 "extract without --reasoning" $X --mode xml --turn 1 "$T/scratch.txt"
contains '"kind":"call"' "extract without --reasoning"

# usage
run 2 "extract without --nonce" transport extract --mode xml --turn 1 "$T/r1.txt"
run 2 "extract without --mode" transport extract --nonce 1a2b3c4d --turn 1 "$T/r1.txt"
run 2 "extract without --turn" transport extract --nonce 1a2b3c4d --mode xml "$T/r1.txt"
run 2 "extract bad --chunk" $X --mode xml --turn 1 --chunk 0 "$T/r1.txt"
run 2 "extract bad nonce" transport extract --nonce xyz --mode xml --turn 1 "$T/r1.txt"
run 1 "extract missing FILE" $X --mode xml --turn 1 "$T/nope.txt"
run 0 "extract empty reply" $X --mode xml --turn 1 "$T/empty.jsonl"
checks=$((checks + 1))
[ -s "$T/out" ] && fail "extract empty reply: printed something"

echo "$checks checks, $failures failures"
[ "$failures" -eq 0 ]
