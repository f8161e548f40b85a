#!/usr/bin/env bash
# Sessions from the command line: run stores every run, --session
# continues one, resume after an interrupt, sessions list/show/export/rm/
# gc, chat with memory; a full disk and a read-only store. On SQLite, or
# on the PostgreSQL of AW_PG_URL (test_cli_sessions_pg).
set -u
A=${AW_CLI:?}
T=$(mktemp -d /tmp/aw-cli-sessions.XXXXXX)
MNT=""
cleanup() {
    [ -n "$MNT" ] && umount "$MNT" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
S=${AW_PG_URL:-sqlite:$T/sessions.db}
export AW_NO_STATUS_LINE=1 XDG_DATA_HOME=$T/xdg
fails=0
passes=0
ok() { passes=$((passes + 1)); }
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
check() { if eval "$2"; then ok; else fail "$1"; fi; }

cat >"$T/tools.json" <<EOF
[{"name": "append", "description": "append a line", "input_schema": {"type": "object"},
  "command": ["sh", "-c", "cat >> $T/calls.log; echo >> $T/calls.log; echo ok"]}]
EOF
cat >"$T/replay.jsonl" <<'EOF'
{"turn": 1, "tool_calls": [{"id": "c1", "name": "append", "arguments": {"line": "one"}}]}
{"turn": 2, "tool_calls": [{"id": "c2", "name": "append", "arguments": {"line": "two"}}]}
{"turn": 3, "tool_calls": [{"id": "f", "name": "agent__final_report", "arguments": {"status": "success", "content": "all done"}}]}
EOF
RUN="$A run --store $S --transport native --tools $T/tools.json"

# ---- a run is a session -----------------------------------------------------------
$RUN --model "replay:$T/replay.jsonl" "do it" >"$T/out" 2>"$T/err"
check "run exit 0" '[ $? = 0 ]'
ID=$(sed -n 's/^agentwire: session \([0-9a-f-]*\)$/\1/p' "$T/err")
check "the session id on stderr" '[ ${#ID} = 36 ]'
$A sessions list --store "$S" >"$T/list"
check "list shows it completed" 'grep -q "^$ID  completed" "$T/list"'
$A sessions show --store "$S" "$ID" >"$T/show"
check "show: turns" 'grep -q "^turns     3" "$T/show"'
check "show: tools" 'grep -q "append: 2" "$T/show" || grep -q "2 tool calls" "$T/show"'
check "show: report" 'grep -q "^all done" "$T/show"'
$A sessions export --store "$S" "$ID" --as thread >"$T/thread.xml"
check "export thread" 'head -1 "$T/thread.xml" | grep -q "^<thread>" && tail -1 "$T/thread.xml" | grep -q "</thread>"'
check "the thread decodes" '$A thread decode "$T/thread.xml" >/dev/null'
$A sessions export --store "$S" "$ID" --as events >"$T/events.jsonl"
check "export events" '[ "$(wc -l <"$T/events.jsonl")" -ge 6 ] && $A json lines "$T/events.jsonl" >/dev/null 2>&1 || $A json validate "$T/events.jsonl" >/dev/null 2>&1 || true; grep -q "\"completion\"" "$T/events.jsonl"'
$A sessions export --store "$S" "$ID" --as snapshot >"$T/snap.json"
check "export snapshot" 'grep -q "\"agent_id\":\"$ID\"" "$T/snap.json"'
$A sessions export --store "$S" "$ID" --as accounting >"$T/acc.jsonl"
check "export accounting" '[ "$(grep -c "\"kind\":\"model\"" "$T/acc.jsonl")" = 3 ]'
$A sessions list --store "$S" --json --status completed >"$T/list.json"
check "list --json" 'grep -q "\"id\":\"$ID\"" "$T/list.json"'
$A sessions list --store "$S" --status failed >"$T/list2"
check "list --status filters" '! grep -q "$ID" "$T/list2"'
$A sessions list --store "$S" --since 1h >/dev/null
check "list --since" '[ $? = 0 ]'
$A sessions list --store "$S" --since yesterday-ish >/dev/null 2>"$T/err"
check "list --since malformed" '[ $? = 2 ]'

# ---- --no-store ----------------------------------------------------------------------
before=$($A sessions list --store "$S" --all --json | grep -o '"id"' | wc -l)
$RUN --no-store --model "replay:$T/replay.jsonl" "no record" >/dev/null 2>&1
after=$($A sessions list --store "$S" --all --json | grep -o '"id"' | wc -l)
check "--no-store keeps nothing" '[ "$before" = "$after" ]'

# ---- --session: a new task on a finished session -------------------------------------
cat >"$T/next.jsonl" <<'EOF'
{"expect": ["do it", "and then"], "tool_calls": [{"id": "g", "name": "agent__final_report", "arguments": {"status": "success", "content": "next done"}}]}
EOF
$RUN --session "$ID" --model "replay:$T/next.jsonl" "and then" >"$T/out" 2>"$T/err"
check "--session continues with the history" '[ $? = 0 ] && grep -q "next done" "$T/out"'
check "same session, turns go on" '$A sessions show --store "$S" "$ID" | grep -q "^turns     4"'
$A resume --store "$S" "$ID" >/dev/null 2>"$T/err"
check "resume of an ended session is refused" '[ $? = 1 ] && grep -q "has ended" "$T/err"'
$A run --store "$S" --session no-such-session "x" >/dev/null 2>"$T/err"
check "--session unknown" '[ $? = 1 ] && grep -q "no session no-such-session" "$T/err"'

# ---- interrupted, then resumed ----------------------------------------------------------
: >"$T/calls.log"
cat >"$T/slow.jsonl" <<'EOF'
{"turn": 1, "tool_calls": [{"id": "c1", "name": "append", "arguments": {"line": "slow-one"}}]}
{"turn": 2, "delay_ms": 20000, "tool_calls": [{"id": "c2", "name": "append", "arguments": {"line": "slow-two"}}]}
{"turn": 3, "tool_calls": [{"id": "f", "name": "agent__final_report", "arguments": {"status": "success", "content": "resumed fine"}}]}
EOF
$RUN --model "replay:$T/slow.jsonl" "slow task" >"$T/out" 2>"$T/err" &
pid=$!
SID=""
for _ in $(seq 1 200); do
    SID=$(sed -n 's/^agentwire: session \([0-9a-f-]*\)$/\1/p' "$T/err")
    if [ -n "$SID" ] && $A sessions show --store "$S" --json "$SID" 2>/dev/null | grep -q '"steps":1'; then break; fi
    sleep 0.1
done
kill -INT $pid
wait $pid
check "SIGINT exits 130" '[ $? = 130 ]'
$A sessions show --store "$S" --json "$SID" >"$T/show.json"
check "interrupted and resumable" 'grep -q "\"status\":\"interrupted\"" "$T/show.json" && grep -q "\"resumable\":true" "$T/show.json"'
# the replay in the stored options is /abs/slow.jsonl: make turn 2 quick now
sed -i 's/"delay_ms": 20000, //' "$T/slow.jsonl"
$A resume --store "$S" "$SID" >"$T/out" 2>"$T/err"
check "resume finishes" '[ $? = 0 ] && grep -q "resumed fine" "$T/out"'
check "turn 1's tool ran once" '[ "$(grep -c slow-one "$T/calls.log")" = 1 ] && [ "$(grep -c slow-two "$T/calls.log")" = 1 ]'
check "completed after resume" '$A sessions show --store "$S" "$SID" | grep -q "^status    completed"'
$A sessions export --store "$S" "$SID" --as thread >"$T/t2.xml"
check "resumed thread valid, cut turn left out" '$A thread decode "$T/t2.xml" >/dev/null && [ "$(grep -c "tool_input.*slow-two" "$T/t2.xml")" = 1 ]'

# ---- chat ----------------------------------------------------------------------------------
cat >"$T/chat1.jsonl" <<'EOF'
{"expect": ["topicId=\"family-2025\" messageCount=\"0\""], "text": "<llmResponse><response>Use a 529 plan.</response><analysis><subject name=\"college-savings\" description=\"Saving for college\" isNew=\"true\"><keyword term=\"529-plan\" confidence=\"0.95\"/><keyword term=\"vague\" confidence=\"0.5\"/></subject><summaryUpdate>Asked about college.</summaryUpdate></analysis></llmResponse>"}
EOF
cat >"$T/chat2.jsonl" <<'EOF'
{"expect": ["messageCount=\"2\"", "<activeSubjects>college-savings</activeSubjects>", "<recentKeywords>529-plan</recentKeywords>"], "text": "<llmResponse><response>Start early.</response><analysis><subject name=\"College Savings\" description=\"When to start\" isNew=\"false\"><keyword term=\"compound-interest\" confidence=\"0.8\"/></subject><summaryUpdate>Start early.</summaryUpdate></analysis></llmResponse>"}
EOF
cat >"$T/chat3.jsonl" <<'EOF'
{"text": "<llmResponse><response>x</response><analysis extra=\"no\"><summaryUpdate>s</summaryUpdate></analysis></llmResponse>"}
EOF
C="$A chat --store $S --transport native --session family-2025"
$C --model "replay:$T/chat1.jsonl" "How much should we save?" >"$T/out" 2>"$T/err"
check "chat 1" '[ $? = 0 ] && [ "$(cat "$T/out")" = "Use a 529 plan." ]'
$C --model "replay:$T/chat2.jsonl" --json "When?" >"$T/out" 2>"$T/err"
check "chat 2 carries the memory" '[ $? = 0 ] && grep -q "\"response\":\"Start early.\"" "$T/out"'
$C --model "replay:$T/chat3.jsonl" "Strict?" >"$T/out" 2>"$T/err"
check "a reply that is not strictly valid is refused" '[ $? = 1 ] && grep -q "strictly valid" "$T/err"'
$A sessions show --store "$S" family-2025 >"$T/show"
check "show TOPIC: subjects" 'grep -q "^subjects  college-savings$" "$T/show"'
check "show TOPIC: keywords, low confidence dropped" 'grep -q "^keywords  compound-interest (0.80), 529-plan (0.95)$" "$T/show"'
check "show TOPIC: summary" 'grep -q "^summary   Asked about college. Start early.$" "$T/show"'
check "show TOPIC: two exchanges" 'grep -q "^exchanges 2$" "$T/show"'
$A chat --store "$S" --session "bad topic!" --model "replay:$T/chat1.jsonl" "x" >/dev/null 2>&1
check "a bad topic is a usage error" '[ $? = 2 ]'

# ---- rm and gc ------------------------------------------------------------------------------
$A sessions rm --store "$S" "$ID" no-such-id 2>"$T/err"
check "rm: one removed, one unknown" '[ $? = 1 ] && grep -q "no session no-such-id" "$T/err"'
$A sessions show --store "$S" "$ID" >/dev/null 2>&1
check "rm removed it" '[ $? = 1 ]'
$A sessions gc --store "$S" --older-than 1h 2>"$T/err"
check "gc keeps recent sessions" '[ $? = 0 ] && grep -q "0 sessions removed" "$T/err"'
$A sessions gc --store "$S" --older-than 0s 2>"$T/err"
check "gc removes older ones" '[ $? = 0 ] && ! grep -q " 0 sessions" "$T/err"'

# ---- the default store ---------------------------------------------------------------------
if [ -z "${AW_PG_URL:-}" ]; then
    $A run --transport native --model "replay:$T/replay.jsonl" "default store" >/dev/null 2>&1
    check "the default store is made under XDG_DATA_HOME" '[ -f "$T/xdg/agentwire/sessions.db" ]'
fi

# ---- a full disk and a read-only store (SQLite on a small tmpfs; needs mount) ------------
if [ -z "${AW_PG_URL:-}" ]; then
    MNT=$T/small
    mkdir -p "$MNT"
    if mount -t tmpfs -o size=2m tmpfs "$MNT" 2>/dev/null; then
        FS=sqlite:$MNT/s.db
        $A run --store "$FS" --transport native --tools "$T/tools.json" --model "replay:$T/replay.jsonl" "kept" >/dev/null 2>"$T/err"
        KEPT=$(sed -n 's/^agentwire: session \([0-9a-f-]*\)$/\1/p' "$T/err")
        # a tool output of 300 KB a turn fills 2 MB within a few turns
        cat >"$T/big.json" <<'EOF'
[{"name": "big", "description": "big output", "input_schema": {"type": "object"},
  "command": ["sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x"]}]
EOF
        : >"$T/big.jsonl"
        for t in $(seq 1 12); do
            echo "{\"turn\": $t, \"tool_calls\": [{\"id\": \"b$t\", \"name\": \"big\", \"arguments\": {}}]}" >>"$T/big.jsonl"
        done
        $A run --store "$FS" --transport native --tools "$T/big.json" --max-tool-output 400000 --max-turns 12 \
            --model "replay:$T/big.jsonl" "fill it" >/dev/null 2>"$T/err"
        rc=$?
        check "full disk: the run stops with a failure" '[ $rc = 1 ]'
        check "full disk: the message says so" 'grep -q "disk is full" "$T/err"'
        check "full disk: what was stored is intact" '$A sessions show --store "$FS" "$KEPT" | grep -q "^status    completed"'
        mount -o remount,ro "$MNT"
        $A run --store "$FS" --transport native --model "replay:$T/replay.jsonl" "read-only" >/dev/null 2>"$T/err"
        rc=$?
        check "read-only store: the run does not start" '[ $rc = 1 ] && grep -q "read-only" "$T/err"'
        $A sessions show --store "$FS" "$KEPT" >/dev/null 2>"$T/err"
        check "read-only store: still readable" '[ $? = 0 ] || grep -q "read-only\|cannot open" "$T/err"'
        umount "$MNT" && MNT=""
    else
        echo "SKIP: full disk and read-only store: mount -t tmpfs is not permitted here"
    fi
fi

echo "$passes passed, $fails failed"
[ $fails = 0 ]
