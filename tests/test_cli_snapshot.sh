#!/usr/bin/env bash
# The snapshot and envelope commands, end to end: outputs, exit statuses,
# messages, --help.
set -u
AW=${AW_CLI:?AW_CLI not set}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # name expected actual
  if [ "$2" != "$3" ]; then echo "FAIL $1"; echo "  want: $2"; echo "  got:  $3"; fail=1; else echo "ok   $1"; fi
}
cat > "$tmp/state.json" <<'J'
{"agent_id":"a-1","status":"completed","usage":{"prompt":1,"completion":2,"total":3},
 "execution":{"started_at":"2026-01-16T10:00:00Z","updated_at":1768557900,"cumulative_seconds":4.5},
 "messages":[{"role":"user","content":"0123456789"},{"role":"tool","content":"secret","metadata":{"tool_call_id":"c"}}],
 "steps":[{"type":"final","tool_calls":[{"id":"c","function":{"name":"f"}}]}]}
J
out=$("$AW" snapshot slim --preset minimal --max-content 4 "$tmp/state.json")
check "slim minimal" '{"agent_id":"a-1","parent_agent_id":null,"status":"completed","step_count":1,"usage":{"prompt":1,"completion":2,"total":3},"execution":{"started_at":"2026-01-16T10:00:00Z","updated_at":"2026-01-16T10:05:00Z","cumulative_seconds":4.5},"messages":[{"role":"user","content":"0123...","metadata":{}},{"role":"tool","content":"[tool result omitted]","metadata":{"tool_call_id":"c"}}],"steps":[],"last_continuation":null,"metadata":{}}' "$out"
out=$("$AW" snapshot slim --redact-args --max-steps 5 < "$tmp/state.json" | "$AW" snapshot restore | "$AW" snapshot slim --no-steps | head -c 61)
check "restore pipeline" '{"agent_id":"a-1","parent_agent_id":null,"status":"completed"' "$out"
echo '{"agent_id":3}' > "$tmp/bad.json"
err=$("$AW" snapshot slim "$tmp/bad.json" 2>&1 >/dev/null); rc=$?
check "bad state exit" 1 "$rc"
check "bad state message" "$tmp/bad.json: agent_id must be a string" "$err"
"$AW" snapshot slim --preset huge "$tmp/state.json" 2>/dev/null; check "bad preset exit" 2 $?
"$AW" snapshot slim --max-messages x "$tmp/state.json" 2>/dev/null; check "bad number exit" 2 $?
"$AW" snapshot --help | grep -q "snapshot COMMAND"; check "snapshot help" 0 $?
"$AW" envelope --help | grep -q "envelope"; check "envelope help" 0 $?
out=$(printf '%s\n' '{"event":"tool_started","tool_name":"search","tool_call_id":"c1","args":{"q":"hi"},"at":"2026-01-16T10:05:00.123Z"}' | "$AW" envelope --session s9 --execution e1)
check "envelope line" '{"channel":"agent.s9","envelope":{"type":"agent.tool.started","session_id":"s9","execution_id":"e1","timestamp":"2026-01-16T10:05:00.123Z","payload":{"tool_name":"search","tool_call_id":"c1","args_summary":"q: '"'"'hi'"'"'"}}}' "$out"
err=$(printf '%s\n' '{"event":"stream_chunk","chunk":"a"}' 'not json' '{"event":"x"}' | "$AW" envelope --preset minimal 2>&1 >/dev/null); rc=$?
check "envelope bad lines exit" 1 "$rc"
check "envelope bad lines" "<stdin>:2:1: unexpected 'n': expected a value
<stdin>:3:1: unknown event 'x'" "$err"
# an event at fault as a whole is named by where it starts (line and
# column), also past the 64 KB chunks the input is read in
{ for i in $(seq 3000); do echo '{"event":"stream_chunk","chunk":"abcdefghijklmnopqrstuvwxyz"}'; done
  printf '  \t{"event":"tool_started","tool_name":5}\n'; } > "$tmp/env.jsonl"
err=$("$AW" envelope "$tmp/env.jsonl" 2>&1 >/dev/null); rc=$?
check "envelope late bad event exit" 1 "$rc"
check "envelope late bad event: file:line:col" "$tmp/env.jsonl:3001:4: field 'tool_name' must be a string" "$err"
"$AW" envelope --preset loud </dev/null 2>/dev/null; check "envelope bad preset" 2 $?
exit $fail
