#!/bin/sh
# agentwire run --events to Redis and to webhooks, against a real
# redis-server (tests/support/redis_harness.sh, 127.0.0.1, a free port) and
# a real HTTP receiver (tests/support/webhook_receiver.js):
#
#   - every envelope of a run reaches a Redis subscriber, in order, in
#     Laravel's broadcast payload, on agent.<session>;
#   - Redis stopped in the middle of a run: the run goes on and succeeds,
#     the envelopes it could not hold are counted and reported, the ones
#     after Redis is back arrive in order; a wrong password is an error in
#     words that never shows the password;
#   - a webhook: each envelope POSTed in order, signed (checked with Node's
#     own HMAC), retried after a 500 (every fifth one gets one); a receiver that is down or hangs costs
#     dead letters, never the run.
#
# The run waits at "gates" (a tool that waits for a file), so the test
# moves Redis and the receiver at known points of the run, never by time.
#
#   tests/test_cli_events.sh AGENTWIRE SOURCE_DIR
set -u
. "$(dirname "$0")/support/cli_test.sh"
HARNESS="$SRC/tests/support/redis_harness.sh"

if ! command -v redis-server >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
    echo "SKIP: needs redis-server and node"
    exit 77
fi
PORT=$(bash "$HARNESS" start "$T/redis") || exit 1
SUB_PID=
REC_PID=
cleanup() {
    [ -n "$SUB_PID" ] && kill "$SUB_PID" 2>/dev/null
    [ -n "$REC_PID" ] && kill "$REC_PID" 2>/dev/null
    bash "$HARNESS" stop "$T/redis"
    rm -rf "$T"
}
trap cleanup EXIT
[ -n "${AW_KEEP:-}" ] && { echo "T=$T"; trap "bash $HARNESS stop $T/redis" EXIT; }
trap 'exit 130' INT TERM

# wait_for NAME COMMAND...: until COMMAND succeeds, at most 30 s
wait_for() {
    name=$1
    shift
    i=0
    while ! "$@" 2>/dev/null; do
        i=$((i + 1))
        if [ $i -gt 600 ]; then
            fail "timed out waiting: $name"
            return 1
        fi
        sleep 0.05
    done
}
lines_at_least() { [ "$(wc -l <"$1" 2>/dev/null || echo 0)" -ge "$2" ]; }
has() { grep -qF -- "$2" "$1"; }

# start_subscriber FILE: a new subscriber writing into FILE
start_subscriber() {
    [ -n "$SUB_PID" ] && kill "$SUB_PID" 2>/dev/null
    : >"$T/ready"
    node "$SRC/tests/support/redis_subscriber.js" "$PORT" 'agent.*' "$T/ready" >"$1" &
    SUB_PID=$!
    wait_for "the subscriber" lines_at_least "$T/ready" 1
}

# tools: `gate` waits for the file named in its arguments, `note` says ok
cat >"$T/tools.json" <<'EOF'
[{"name": "gate", "description": "wait for a file", "input_schema": {"type": "object"},
  "command": ["sh", "-c", "f=$(tr -d '{}\\\" ' | sed 's/^file://'); while [ ! -f \"$f\" ]; do sleep 0.02; done; echo open"]},
 {"name": "note", "description": "say ok", "input_schema": {"type": "object"},
  "command": ["sh", "-c", "cat >/dev/null; echo ok"]}]
EOF
# gate_started FILE N: the run has started its Nth gate
gate_started() { [ "$(grep '"agent.tool.started"' "$1" | grep -c '"tool_name":"gate"')" -ge "$2" ]; }
# turns: note, note, gate1, note x5, gate2, note x2, the final report
{
    n=0
    for t in note note gate1 note note note note note gate2 note note; do
        n=$((n + 1))
        id=$(printf '%04d' $(((n - 1) * 10 + 1))) # the xml transport's slots: 0001, 0011, ...
        case $t in
        gate*) printf '{"text": "%s"}\n' "$(call "$id" gate "{\\\"file\\\": \\\"$T/$t\\\"}")" ;;
        *) printf '{"text": "%s"}\n' "$(call "$id" note '{\"n\": '"$n"'}')" ;;
        esac
    done
    printf '{"text": "%s"}\n' "$(final success 'all done')"
} >"$T/model.jsonl"
RUN="run --model replay:$T/model.jsonl --nonce 1a2b3c4d --tools $T/tools.json --no-store --quiet --max-turns 20"
open_gates() { : >"$T/gate1"; : >"$T/gate2"; }
close_gates() { rm -f "$T/gate1" "$T/gate2"; }

# check_laravel FILE_SINK SUBSCRIBER MODE: the subscriber's messages are the
# file sink's envelopes in Laravel's payload, on agent.<session>, in order;
# MODE all: every one of them; MODE subsequence: some may be missing.
check_laravel() {
    checks=$((checks + 1))
    node - "$1" "$2" "$3" >"$T/check.out" 2>&1 <<'EOF' || { fail "laravel ($3): $(head -c 800 "$T/check.out")"; return 1; }
const fs = require('fs');
const [fileSink, sub, mode] = process.argv.slice(2);
const want = fs.readFileSync(fileSink, 'utf8').split('\n').filter(Boolean);
const got = fs.readFileSync(sub, 'utf8').split('\n').filter(Boolean).map(JSON.parse);
let i = 0;
for (const m of got) {
  const p = JSON.parse(m.payload);
  if (Object.keys(p).join() !== 'event,data,socket') throw new Error('keys: ' + m.payload);
  if (p.socket !== null || p.event !== p.data.type) throw new Error('shape: ' + m.payload);
  if (m.channel !== 'agent.' + p.data.session_id) throw new Error('channel ' + m.channel);
  const line = JSON.stringify(p.data);
  while (i < want.length && want[i] !== line) {
    if (mode === 'all') throw new Error('missing or out of order at ' + i + ': wanted ' + want[i] + ' got ' + line);
    i++;
  }
  if (i === want.length) throw new Error('not in the file sink, or out of order: ' + line);
  if (m.payload !== '{"event":' + JSON.stringify(p.event) + ',"data":' + want[i] + ',"socket":null}')
    throw new Error('payload bytes: ' + m.payload);
  i++;
}
if (mode === 'all' && (got.length !== want.length)) throw new Error(`got ${got.length} of ${want.length}`);
console.log(`${got.length} of ${want.length} in order`);
EOF
}

# ---- 1. Redis: every envelope, in order, Laravel's shape -----------------------------
start_subscriber "$T/sub.jsonl"
open_gates
"$CLI" $RUN --events "$T/ev1.jsonl" --events "redis://127.0.0.1:$PORT/0" --accounting "$T/acc1.jsonl" task \
    >"$T/out" 2>"$T/err"
check $? "redis: the run succeeds ($(head -c 300 "$T/err"))"
wait_for "all envelopes at the subscriber" lines_at_least "$T/sub.jsonl" "$(wc -l <"$T/ev1.jsonl")"
check_laravel "$T/ev1.jsonl" "$T/sub.jsonl" all
contains '"kind":"events","destination":"redis://127.0.0.1:'"$PORT"'/0","sink":"redis","sent":'"$(wc -l <"$T/ev1.jsonl")"',"dropped":0' \
    "redis: the accounting's row" "$T/acc1.jsonl"

# ---- 2. Redis stopped mid-run, then back -------------------------------------------------
start_subscriber "$T/sub2.jsonl"
close_gates
# a queue of 16: more than the run's bursts (a few turns without delays: the
# sink hands envelopes over every 25 ms), fewer than the ~24 envelopes the
# run emits while Redis is away
"$CLI" $RUN --events "$T/ev2.jsonl" --events "redis://127.0.0.1:$PORT/0" --events-queue 16 \
    --accounting "$T/acc2.jsonl" task >"$T/out" 2>"$T/err2" &
RUN_PID=$!
wait_for "the run at gate 1" gate_started "$T/ev2.jsonl" 1
before=$(wc -l <"$T/ev2.jsonl")
wait_for "what came before at the subscriber" lines_at_least "$T/sub2.jsonl" "$before"
bash "$HARNESS" stop "$T/redis"
: >"$T/gate1"
wait_for "the run at gate 2" gate_started "$T/ev2.jsonl" 2
bash "$HARNESS" start "$T/redis" "$PORT" >/dev/null || fail "redis did not come back on $PORT"
wait_for "the subscriber back" lines_at_least "$T/ready" 2
# the sink back too (it has published again) before the run goes on
wait_for "the sink back" sh -c "redis-cli -p $PORT client list | grep -q 'cmd=publish'"
mark=$(wc -l <"$T/ev2.jsonl")
: >"$T/gate2"
wait "$RUN_PID"
check $? "redis stopped: the run still succeeds ($(head -c 300 "$T/err2"))"
total=$(wc -l <"$T/ev2.jsonl")
# Redis has answered the last PUBLISH; the subscriber may still be writing it
wait_for "the run's last envelope at the subscriber" has "$T/sub2.jsonl" 'agent.status'
check_laravel "$T/ev2.jsonl" "$T/sub2.jsonl" subsequence
# what came before the stop and after the return all arrived, in order
checks=$((checks + 1))
node -e '
const fs = require("fs");
const want = fs.readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean);
const got = new Set(fs.readFileSync(process.argv[2], "utf8").split("\n").filter(Boolean)
  .map((l) => JSON.stringify(JSON.parse(JSON.parse(l).payload).data)));
const [before, mark] = [Number(process.argv[3]), Number(process.argv[4])];
for (let i = 0; i < want.length; i++)
  if ((i < before || i >= mark) && !got.has(want[i])) { console.log("missing " + i + ": " + want[i]); process.exit(1); }
' "$T/ev2.jsonl" "$T/sub2.jsonl" "$before" "$mark" >"$T/check.out" 2>&1 || fail "redis back: $(cat "$T/check.out")"
contains "envelopes dropped" "redis stopped: the drops on stderr" "$T/err2"
checks=$((checks + 1))
node -e '
const fs = require("fs");
const rows = fs.readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map(JSON.parse);
const r = rows.find((x) => x.kind === "events" && x.sink === "redis");
if (!r || r.dropped < 1 || r.sent + r.dropped !== Number(process.argv[2])) { console.log(JSON.stringify(r)); process.exit(1); }
' "$T/acc2.jsonl" "$total" >"$T/check.out" 2>&1 || fail "redis stopped: sent + dropped = every envelope: $(cat "$T/check.out")"

# ---- 3. a wrong password: refused in words, the password never shown -----------------------
redis-cli -p "$PORT" config set requirepass right-one >/dev/null
open_gates
"$CLI" $RUN --events "redis://:sekret-pw@127.0.0.1:$PORT/0" --accounting "$T/acc3.jsonl" task >"$T/out" 2>"$T/err3"
check $? "wrong password: the run still succeeds"
contains "envelopes dropped" "wrong password: drops reported" "$T/err3"
contains "redis://127.0.0.1:$PORT/0" "wrong password: the destination named" "$T/err3"
lacks "sekret-pw" "wrong password: never printed" "$T/err3"
lacks "sekret-pw" "wrong password: never in the accounting" "$T/acc3.jsonl"
redis-cli -p "$PORT" -a right-one --no-auth-warning config set requirepass "" >/dev/null

# ---- 4. a webhook: in order, signed, retried after a 500 -----------------------------------
start_receiver() {
    rm -f "$T/port"
    node "$SRC/tests/support/webhook_receiver.js" "$T/port" "$T/hook.jsonl" "$@" &
    REC_PID=$!
    wait_for "the receiver" test -s "$T/port"
    HOOK="http://127.0.0.1:$(cat "$T/port")/hook"
}
stop_receiver() { kill "$REC_PID" 2>/dev/null; wait "$REC_PID" 2>/dev/null; REC_PID=; }
: >"$T/hook.jsonl"
start_receiver --secret 's3cret' --fail-every 5
"$CLI" $RUN --events "$T/ev4.jsonl" --events "$HOOK" --events-secret 's3cret' --accounting "$T/acc4.jsonl" task \
    >"$T/out" 2>"$T/err4"
check $? "webhook: the run succeeds ($(head -c 300 "$T/err4"))"
stop_receiver
checks=$((checks + 1))
node -e '
const fs = require("fs");
const want = fs.readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean);
const log = fs.readFileSync(process.argv[2], "utf8").split("\n").filter(Boolean).map(JSON.parse);
const ok = log.filter((r) => r.status === 200).map((r) => r.body);
if (JSON.stringify(ok) !== JSON.stringify(want)) throw new Error("delivered bodies differ from the envelopes, or their order");
for (const r of log) {
  if (r.signature_ok !== true) throw new Error("bad signature on " + r.n);
  if (r.content_type !== "application/json") throw new Error("content type " + r.content_type);
  if (r.channel !== "agent." + JSON.parse(r.body).session_id) throw new Error("channel " + r.channel);
}
want.forEach((b, i) => { if (log.filter((r) => r.body === b).length !== (i % 5 ? 1 : 2)) throw new Error("envelope " + i + " not retried once after its 500"); });
' "$T/ev4.jsonl" "$T/hook.jsonl" >"$T/check.out" 2>&1 || fail "webhook: $(cat "$T/check.out")"
contains '"sink":"webhook","sent":'"$(wc -l <"$T/ev4.jsonl")"',"dropped":0' "webhook: the accounting's row" "$T/acc4.jsonl"

# a wrong secret: the receiver's check fails (the signature is not a constant)
: >"$T/hook.jsonl"
start_receiver --secret 'other'
"$CLI" $RUN --events "$HOOK" --events-secret 's3cret' task >"$T/out" 2>&1
stop_receiver
contains '"signature_ok":false' "webhook: another secret does not verify" "$T/hook.jsonl"
lacks '"signature_ok":true' "webhook: another secret never verifies" "$T/hook.jsonl"

# ---- 5. a webhook that is down, and one that hangs: dead letters, the run unharmed ---------
start_receiver
stop_receiver # its port now has nobody
"$CLI" $RUN --events "$T/ev5.jsonl" --events "$HOOK" --events-dead-letter "$T/dead5.jsonl" task >"$T/out" 2>"$T/err5"
check $? "webhook down: the run succeeds"
contains "envelopes dropped ($(wc -l <"$T/ev5.jsonl") in the dead-letter file)" "webhook down: reported" "$T/err5"
checks=$((checks + 1))
node -e '
const fs = require("fs");
const want = fs.readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean);
const dead = fs.readFileSync(process.argv[2], "utf8").split("\n").filter(Boolean).map(JSON.parse);
const got = dead.map((d) => JSON.stringify(d.envelope));
if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error("dead letters differ from the envelopes");
if (!/connect/.test(dead[0].error) || dead[0].channel !== "agent." + dead[0].envelope.session_id) throw new Error(JSON.stringify(dead[0]));
' "$T/ev5.jsonl" "$T/dead5.jsonl" >"$T/check.out" 2>&1 || fail "webhook down: $(cat "$T/check.out")"

: >"$T/hook.jsonl"
start_receiver --stall
"$CLI" $RUN --events "$T/ev6.jsonl" --events "$HOOK" --events-dead-letter "$T/dead6.jsonl" task >"$T/out" 2>"$T/err6"
check $? "webhook hangs: the run succeeds"
stop_receiver
contains "in the dead-letter file" "webhook hangs: reported" "$T/err6"
checks=$((checks + 1))
[ "$(wc -l <"$T/dead6.jsonl")" -eq "$(wc -l <"$T/ev6.jsonl")" ] ||
    fail "webhook hangs: $(wc -l <"$T/dead6.jsonl") dead letters for $(wc -l <"$T/ev6.jsonl") envelopes"

# ---- 6. destinations refused at once --------------------------------------------------------
"$CLI" $RUN --events "redis://127.0.0.1:99999/0" task >"$T/out" 2>&1
check $(($? != 1)) "a bad port: refused"
contains "the port must be a number" "a bad port: why"
"$CLI" $RUN --events "ftp://example/x" task >"$T/out" 2>&1
contains "not supported" "an unknown scheme"

finish
