#!/usr/bin/env bash
# `agentwire thread encode|decode` end to end: exact outputs (written by hand
# from the issue's rules), JSON lines and JSON array input, stdin, --prefill,
# --strip-ansi, the round trip of examples/session.jsonl, errors with
# FILE:line:col (exit 1), usage errors (exit 2), --help (exit 0).
set -u
AW=${AW_CLI:?AW_CLI not set}
SRC=${AW_SOURCE_DIR:?AW_SOURCE_DIR not set}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # name expected actual
  if [ "$2" != "$3" ]; then echo "FAIL $1"; echo "  want: $2"; echo "  got:  $3"; fail=1; else echo "ok   $1"; fi
}
check_file() { # name expected-file actual-file (byte for byte, trailing newline included)
  if cmp -s "$2" "$3"; then echo "ok   $1"; else echo "FAIL $1"; diff "$2" "$3" | head -20; fail=1; fi
}

# ---- a small session: every event type, parallel results out of order,
# ---- plan/approval (ids used, not written), colour codes, markup, JSON result
cat > "$tmp/events.jsonl" <<'J'
{"type":"message","role":"user","content":"What's 2+2 & <why>?","timestamp":1,"iteration":0}
{"type":"tool_call","toolName":"calc","toolCallId":"a","args":{"expr":"2+2"},"parallelGroup":"p","timestamp":2,"iteration":1}
{"type":"tool_call","toolName":"search","toolCallId":"b","args":{"q":"\"sum\""},"parallelGroup":"p","timestamp":3,"iteration":1}
{"type":"tool_result","toolCallId":"b","result":{"hits":[1,2]},"durationMs":7.5,"parallelGroup":"p","timestamp":4,"iteration":1}
{"type":"tool_result","toolCallId":"a","result":"\u001b[32m4\u001b[0m","durationMs":12,"timestamp":5,"iteration":1}
{"type":"plan","steps":["answer"],"timestamp":6,"iteration":1}
{"type":"error","error":"search: rate limited","toolCallId":"b","recoverable":true,"timestamp":7,"iteration":1}
{"type":"human_input_requested","question":"OK?","timestamp":8,"iteration":2}
{"type":"approval","decision":"approved","timestamp":9,"iteration":2}
{"type":"human_input_received","response":"yes","timestamp":10,"iteration":2}
{"type":"summary","summarizedIterations":[1],"summary":"computed","timestamp":11,"iteration":2}
{"type":"message","role":"assistant","content":"4","timestamp":12,"iteration":2}
{"type":"completion","result":"4","verified":true,"timestamp":13,"iteration":2}
J
cat > "$tmp/want.xml" <<'X'
<thread>
  <event type="human" id="0" iteration="0">What&apos;s 2+2 &amp; &lt;why&gt;?</event>
  <event type="tool_input" id="1" name="calc" iteration="1">{&quot;expr&quot;:&quot;2+2&quot;}</event>
  <event type="tool_input" id="2" name="search" iteration="1">{&quot;q&quot;:&quot;\&quot;sum\&quot;&quot;}</event>
  <event type="tool_output" id="3" name="search" status="success" iteration="1" duration_ms="7.5" parallel_group="p">{&quot;hits&quot;:[1,2]}</event>
  <event type="tool_output" id="4" name="calc" status="success" iteration="1" duration_ms="12">�[32m4�[0m</event>
  <event type="error" id="6" iteration="1" recoverable="true">search: rate limited</event>
  <event type="human_input_requested" id="7" iteration="2">OK?</event>
  <event type="human_input_received" id="9" iteration="2">yes</event>
  <event type="summary" id="10" iteration="2" summarizedIterations="1">computed</event>
  <event type="ai" id="11" iteration="2">4</event>
  <event type="completion" id="12" iteration="2">4</event>
</thread>
X
sed 's/>�\[32m4�\[0m</>4</' "$tmp/want.xml" > "$tmp/want_strip.xml"
cat > "$tmp/want_decoded.jsonl" <<'J'
{"type":"message","role":"user","content":"What's 2+2 & <why>?","timestamp":0,"iteration":0}
{"type":"tool_call","toolName":"calc","toolCallId":"call_1","args":{"expr":"2+2"},"timestamp":0,"iteration":1}
{"type":"tool_call","toolName":"search","toolCallId":"call_2","args":{"q":"\"sum\""},"timestamp":0,"iteration":1}
{"type":"tool_result","toolCallId":"call_2","result":"{\"hits\":[1,2]}","durationMs":7.5,"parallelGroup":"p","timestamp":0,"iteration":1}
{"type":"tool_result","toolCallId":"call_1","result":"4","durationMs":12,"timestamp":0,"iteration":1}
{"type":"error","error":"search: rate limited","recoverable":true,"timestamp":0,"iteration":1}
{"type":"human_input_requested","question":"OK?","timestamp":0,"iteration":2}
{"type":"human_input_received","response":"yes","timestamp":0,"iteration":2}
{"type":"summary","summarizedIterations":[1],"summary":"computed","timestamp":0,"iteration":2}
{"type":"message","role":"assistant","content":"4","timestamp":0,"iteration":2}
{"type":"completion","result":"4","verified":false,"timestamp":0,"iteration":2}
J

"$AW" thread encode "$tmp/events.jsonl" > "$tmp/out.xml"; check "encode exit" 0 $?
check_file "encode output (ends with a newline)" "$tmp/want.xml" "$tmp/out.xml"
"$AW" thread encode --strip-ansi "$tmp/events.jsonl" > "$tmp/out.xml"
check_file "encode --strip-ansi" "$tmp/want_strip.xml" "$tmp/out.xml"
"$AW" thread encode < "$tmp/events.jsonl" > "$tmp/out.xml"
check_file "encode from stdin" "$tmp/want.xml" "$tmp/out.xml"
"$AW" thread encode - < "$tmp/events.jsonl" > "$tmp/out.xml"
check_file "encode from -" "$tmp/want.xml" "$tmp/out.xml"
# the same events as one JSON array (pretty, CRLF line ends)
{ echo "["; sed '$!s/$/,/' "$tmp/events.jsonl"; echo "]"; } | sed 's/$/\r/' > "$tmp/events.json"
"$AW" thread encode "$tmp/events.json" > "$tmp/out.xml"
check_file "encode a JSON array" "$tmp/want.xml" "$tmp/out.xml"

"$AW" thread encode --strip-ansi "$tmp/events.jsonl" | "$AW" thread decode > "$tmp/out.jsonl"; check "decode exit" 0 $?
check_file "decode output" "$tmp/want_decoded.jsonl" "$tmp/out.jsonl"
"$AW" thread decode "$tmp/want_strip.xml" > "$tmp/out.jsonl"
check_file "decode a file" "$tmp/want_decoded.jsonl" "$tmp/out.jsonl"

# ---- prefill
out=$(printf '' | "$AW" thread encode --prefill "Based on the thread above," | od -An -c | tr -s ' ')
check "prefill on an empty thread" "$(printf '<thread>\n</thread>\nBased on the thread above,\n' | od -An -c | tr -s ' ')" "$out"
out=$("$AW" thread encode --prefill='<answer> & so' "$tmp/events.jsonl" | tail -n 2)
check "prefill written raw after </thread>" "</thread>
<answer> & so" "$out"
out=$(printf '' | "$AW" thread encode --prefill "" | od -An -c | tr -s ' ')
check "empty prefill" "$(printf '<thread>\n</thread>\n' | od -An -c | tr -s ' ')" "$out"
out=$(printf '\n\n' | "$AW" thread encode)
check "blank input" "<thread>
</thread>" "$out"
out=$(echo '[]' | "$AW" thread encode)
check "empty array" "<thread>
</thread>" "$out"

# ---- examples/session.jsonl: encode | decode
session="$SRC/examples/session.jsonl"
"$AW" thread encode --strip-ansi "$session" > "$tmp/session.xml"; check "session encode exit" 0 $?
"$AW" thread decode "$tmp/session.xml" > "$tmp/session.decoded"; check "session decode exit" 0 $?
written=$(grep -cv '"type":"\(plan\|approval\)"' "$session")
check "session: one decoded line per written event" "$written" "$(wc -l < "$tmp/session.decoded" | tr -d ' ')"
check "session: no escape sequence left" "0" "$(grep -c $'\x1b' "$tmp/session.xml")"
grep -q '"type":"tool_result","toolCallId":"call_[0-9]*","result":"' "$tmp/session.decoded"; check "session: results decoded" 0 $?
# without plan/approval (whose ids the decoder cannot know), the round trip
# is a fixed point: encode == encode(decode(encode))
grep -v '"type":"\(plan\|approval\)"' "$session" > "$tmp/written.jsonl"
for opt in "" "--strip-ansi"; do
  "$AW" thread encode $opt "$tmp/written.jsonl" > "$tmp/x1"
  "$AW" thread encode $opt "$tmp/written.jsonl" | "$AW" thread decode | "$AW" thread encode $opt > "$tmp/x2"
  check_file "session round trip is a fixed point ${opt:-(plain)}" "$tmp/x1" "$tmp/x2"
done
# decoding twice gives the same events
"$AW" thread decode "$tmp/session.xml" | "$AW" thread encode | "$AW" thread decode > "$tmp/again"
grep -v '"type":"\(plan\|approval\)"' "$session" | "$AW" thread encode --strip-ansi | "$AW" thread decode > "$tmp/once"
check_file "decode(encode(decode(...))) is stable" "$tmp/once" "$tmp/again"

# ---- input errors: exit 1, FILE:line:col on stderr, nothing on stdout
printf '%s\n' '{"type":"plan","timestamp":1,"iteration":1}' '{"type":"message","role":"user","content":"x",}' > "$tmp/bad.jsonl"
out=$("$AW" thread encode "$tmp/bad.jsonl" 2> "$tmp/err"); rc=$?
check "bad JSON exit" 1 "$rc"
check "bad JSON no output" "" "$out"
grep -q "^$tmp/bad.jsonl:2:47: " "$tmp/err"; check "bad JSON names file:line:col ($(cat "$tmp/err"))" 0 $?
printf '%s\n' '{"type":"plan","timestamp":1,"iteration":1}' '' '{"type":"tool_call","toolName":"t","toolCallId":"c","args":[],"timestamp":1,"iteration":1}' > "$tmp/field.jsonl"
"$AW" thread encode "$tmp/field.jsonl" > /dev/null 2> "$tmp/err"; rc=$?
check "bad field exit" 1 "$rc"
grep -q "^$tmp/field.jsonl:3:53: .*'args'" "$tmp/err"; check "bad field names file:line:col of its key ($(cat "$tmp/err"))" 0 $?
printf '{"type":"message","role":"user","timestamp":1,"iteration":1}\n' | "$AW" thread encode > /dev/null 2> "$tmp/err"; rc=$?
check "missing field from stdin exit" 1 "$rc"
grep -q "^<stdin>:1:1: .*'content'" "$tmp/err"; check "missing field names <stdin>:1:1, where the event starts ($(cat "$tmp/err"))" 0 $?
printf '{"type":"plan","timestamp":1,"iteration":1}\n{"type":"plan","timest' > "$tmp/cut.jsonl"
"$AW" thread encode "$tmp/cut.jsonl" > /dev/null 2> "$tmp/err"; rc=$?
check "truncated file exit" 1 "$rc"
grep -q "^$tmp/cut.jsonl:2:[0-9][0-9]*: " "$tmp/err"; check "truncated file names line 2 ($(cat "$tmp/err"))" 0 $?
"$AW" thread encode "$tmp/does-not-exist.jsonl" > /dev/null 2> "$tmp/err"; rc=$?
check "missing file exit" 1 "$rc"
grep -q "does-not-exist.jsonl" "$tmp/err"; check "missing file named" 0 $?

printf '<thread>\n  <event type="human" id="0" iteration="0">x</evnt>\n</thread>\n' > "$tmp/bad.xml"
out=$("$AW" thread decode "$tmp/bad.xml" 2> "$tmp/err"); rc=$?
check "malformed XML exit" 1 "$rc"
check "malformed XML no output" "" "$out"
check "malformed XML message" "$tmp/bad.xml:2:47: malformed XML: mismatched tag" "$(cat "$tmp/err")"
printf '<!DOCTYPE thread [<!ENTITY e "x">]>\n<thread>&e;</thread>\n' | "$AW" thread decode > /dev/null 2> "$tmp/err"; rc=$?
check "DOCTYPE exit" 1 "$rc"
grep -q "^<stdin>:1:[0-9][0-9]*: .*DOCTYPE" "$tmp/err"; check "DOCTYPE refused with position ($(cat "$tmp/err"))" 0 $?
printf '<thread>\n<event type="nope" id="0" iteration="0">x</event>\n</thread>' | "$AW" thread decode > /dev/null 2> "$tmp/err"; rc=$?
check "unknown event type exit" 1 "$rc"
grep -q "^<stdin>:2:[0-9][0-9]*: .*nope" "$tmp/err"; check "unknown event type named ($(cat "$tmp/err"))" 0 $?
head -c 200 "$tmp/want.xml" | "$AW" thread decode > /dev/null 2> "$tmp/err"; rc=$?
check "truncated XML exit" 1 "$rc"
grep -q "^<stdin>:[0-9][0-9]*:[0-9][0-9]*: " "$tmp/err"; check "truncated XML position ($(cat "$tmp/err"))" 0 $?
printf '' | "$AW" thread decode > /dev/null 2>&1; check "empty XML exit" 1 $?

# ---- fields the format never writes are optional (issue 10)
printf '%s\n' '{"type":"message","role":"user","content":"hi","iteration":0}' \
  '{"type":"completion","result":"done","iteration":1}' '{"type":"plan"}' > "$tmp/bare.jsonl"
out=$("$AW" thread encode "$tmp/bare.jsonl"); rc=$?
check "no timestamp, no verified: exit" 0 "$rc"
check "no timestamp, no verified: the reference's thread" '<thread>
  <event type="human" id="0" iteration="0">hi</event>
  <event type="completion" id="1" iteration="1">done</event>
</thread>' "$out"
printf '{"type":"completion","result":"done","iteration":1,"verified":"yes"}\n' | "$AW" thread encode > /dev/null 2> "$tmp/err"
check "a mistyped optional field is still an error" "<stdin>:1:52: completion event: field 'verified' must be true or false" "$(cat "$tmp/err")"

# ---- events of an unknown type: named once per type on stderr, --strict rejects
printf '%s\n' '{"type":"human","content":"hi"}' '{"type":"message","role":"user","content":"x","iteration":0}' \
  '{"type":"human","content":"again"}' '  {"type":"tool_use"}' > "$tmp/unknown.jsonl"
"$AW" thread encode "$tmp/unknown.jsonl" > "$tmp/out.xml" 2> "$tmp/err"; rc=$?
check "unknown types: exit 0" 0 "$rc"
check "unknown types: the known event written, ids kept" '<thread>
  <event type="human" id="1" iteration="0">x</event>
</thread>' "$(cat "$tmp/out.xml")"
check "unknown types: once per type, with line and column" "$tmp/unknown.jsonl:1:9: warning: event type 'human' is not one the thread format knows; events of this type are not written (--strict rejects them)
$tmp/unknown.jsonl:4:11: warning: event type 'tool_use' is not one the thread format knows; events of this type are not written (--strict rejects them)" "$(cat "$tmp/err")"
out=$("$AW" thread encode --strict "$tmp/unknown.jsonl" 2> "$tmp/err"); rc=$?
check "--strict: exit 1" 1 "$rc"
check "--strict: no output" "" "$out"
check "--strict: the error names file:line:col" "$tmp/unknown.jsonl:1:9: event type 'human' is not one the thread format knows" "$(cat "$tmp/err")"
printf '[{"type":"plan"},\n {"type":"human"}]' | "$AW" thread encode --strict > /dev/null 2> "$tmp/err"
check "--strict, array form: line and column in the text" "<stdin>:2:10: event type 'human' is not one the thread format knows" "$(cat "$tmp/err")"
"$AW" thread encode --strict "$tmp/events.jsonl" > "$tmp/out.xml"; check "--strict passes known types (approval, plan)" 0 $?
check_file "--strict output" "$tmp/want.xml" "$tmp/out.xml"

: > "$tmp/empty.jsonl"
check "an empty file (not mapped)" "<thread>
</thread>" "$("$AW" thread encode "$tmp/empty.jsonl")"

# ---- streamed: read from a pipe as from a file; output written as produced,
# ---- so a late error leaves what came before it (and says where)
cat "$tmp/events.jsonl" | "$AW" thread encode > "$tmp/out.xml"
check_file "encode from a pipe" "$tmp/want.xml" "$tmp/out.xml"
: > "$tmp/big.jsonl"
line='{"type":"message","role":"assistant","content":"'$(printf "<p class='x'>&amp; %.0s" $(seq 200))'","iteration":1}'
for i in $(seq 400); do echo "$line"; done > "$tmp/big.jsonl"
n=$(wc -l < "$tmp/big.jsonl")
"$AW" thread encode "$tmp/big.jsonl" > "$tmp/big.xml"; check "big input exit" 0 $?
check "big input: every event written" "$n" "$(grep -c '<event type="ai"' "$tmp/big.xml")"
cat "$tmp/big.jsonl" | "$AW" thread encode > "$tmp/big_pipe.xml"
check_file "big input from a pipe" "$tmp/big.xml" "$tmp/big_pipe.xml"
echo '{"type":"message","role":"robot","content":"x","iteration":1}' >> "$tmp/big.jsonl"
"$AW" thread encode "$tmp/big.jsonl" > "$tmp/partial.xml" 2> "$tmp/err"; rc=$?
check "late error: exit 1" 1 "$rc"
check "late error: named" "$tmp/big.jsonl:$((n + 1)):19: message event: field 'role' must be \"user\", \"assistant\" or \"system\"" "$(cat "$tmp/err")"
size=$(wc -c < "$tmp/partial.xml")
[ "$size" -gt 0 ] && cmp -s -n "$size" "$tmp/partial.xml" "$tmp/big.xml"
check "late error: what was written is the start of the thread ($size bytes)" 0 $?

# ---- usage errors: exit 2
"$AW" thread encode --bogus "$tmp/events.jsonl" > /dev/null 2> "$tmp/err"; check "unknown option exit" 2 $?
grep -q "bogus" "$tmp/err"; check "unknown option named" 0 $?
"$AW" thread encode --prefill > /dev/null 2>&1 < /dev/null; check "--prefill without value" 2 $?
"$AW" thread encode "$tmp/events.jsonl" "$tmp/events.jsonl" > /dev/null 2>&1; check "two files" 2 $?
"$AW" thread decode --strip-ansi "$tmp/want.xml" > /dev/null 2>&1; check "decode takes no --strip-ansi" 2 $?
"$AW" thread decode "$tmp/want.xml" "$tmp/want.xml" > /dev/null 2>&1; check "decode two files" 2 $?
"$AW" thread frobnicate > /dev/null 2>&1; check "unknown thread command" 2 $?
"$AW" thread > /dev/null 2>&1; check "thread without command" 2 $?

# ---- help: exit 0, on stdout
"$AW" thread encode --help | grep -q -- "--strict"; check "encode --help names --strict" 0 $?
for args in "thread --help" "thread -h" "thread encode --help" "thread decode --help" "thread encode -h"; do
  out=$("$AW" $args 2>/dev/null); rc=$?
  check "$args exit" 0 "$rc"
  case "$out" in *"thread"*"encode"*) echo "ok   $args text";; *) echo "FAIL $args text: $out"; fail=1;; esac
done
"$AW" --help | grep -q "thread"; check "top-level help lists thread" 0 $?

exit $fail
