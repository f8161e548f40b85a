#!/bin/sh
# Workers on a real PostgreSQL (tests/support/pg_harness.sh) with a real
# redis-server (tests/support/redis_harness.sh): four workers drain 200
# queued runs (replay models, a command tool that appends to a file) while
# one of them is killed with SIGKILL every few seconds and started again.
#
#   - every run finishes exactly once: completed, one completion event, its
#     whole steps one per turn, turns 1..N;
#   - no tool call of a completed step ran twice: a call in the tools' log
#     more than once was first run by a worker that was then killed (or
#     frozen with SIGSTOP past its lease, every third time), and no turn
#     has two whole steps;
#   - every envelope reaches a Redis subscriber in order: for each run's
#     execution (each worker that took it up), what the subscriber got is
#     the start of what that worker emitted (its file sink, written as the
#     envelopes happen), and all of it for the execution that finished;
#     the status goes out after the store has the run's end, so a worker
#     killed in between takes only that news with it, and no run is
#     finished twice.
#
#   tests/test_cli_workers.sh AGENTWIRE SOURCE_DIR
# AW_WORKER_RUNS (200) and AW_WORKER_KILL_EVERY (3 s) change the load;
# AW_KEEP=DIR keeps the scratch folder there and the database running
# (its URL in DIR/pgurl), to look at a failure.
set -u
. "$(dirname "$0")/support/cli_test.sh"
RUNS=${AW_WORKER_RUNS:-200}
KILL_EVERY=${AW_WORKER_KILL_EVERY:-3}
WORKERS=4

for tool in redis-server node psql; do
    if ! command -v $tool >/dev/null 2>&1; then
        echo "SKIP: needs $tool"
        exit 77
    fi
done
# its own folder: as root the server runs as postgres, who cannot enter $T
PGDIR=$(mktemp -d /tmp/aw-pg.XXXXXX)
PG=$(bash "$SRC/tests/support/pg_harness.sh" start "$PGDIR")
rc=$?
[ $rc = 0 ] || { bash "$SRC/tests/support/pg_harness.sh" stop "$PGDIR"; [ $rc = 77 ] && exit 77; exit 1; }
PORT=$(bash "$SRC/tests/support/redis_harness.sh" start "$T/redis") || exit 1
SUB_PID=
cleanup() {
    [ -n "${AW_KEEP:-}" ] && cp -r "$T" "$AW_KEEP"
    for f in "$T"/worker*.pid; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done
    [ -n "$SUB_PID" ] && kill "$SUB_PID" 2>/dev/null
    bash "$SRC/tests/support/redis_harness.sh" stop "$T/redis"
    if [ -n "${AW_KEEP:-}" ]; then echo "$PG" >"$AW_KEEP/pgurl"; else bash "$SRC/tests/support/pg_harness.sh" stop "$PGDIR"; fi
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
sql() { psql -X -q -t -A -d "$PG" -c "$1"; }

# ---- the runs: each its own replay (its number in every call), 3 turns of calls, then the
# report; each line marks its turn, so a resumed run is answered from where it was cut
cat >"$T/tools.json" <<EOF
[{"name": "append", "description": "append the arguments to the log", "input_schema": {"type": "object"},
  "command": ["sh", "-c", "printf '%s %s\\\\n' \"\$(cat)\" \"\$PPID\" >> $T/calls.log; echo ok"]}]
EOF
mkdir -p "$T/models"
i=0
while [ $i -lt "$RUNS" ]; do
    i=$((i + 1))
    {
        for t in 1 2 3; do
            printf '{"turn": %d, "delay_ms": 150, "text": "' "$t"
            c=0
            while [ $c -lt "$t" ]; do
                c=$((c + 1))
                call "$(printf '%04d' $(((t - 1) * 10 + c)))" append "{\\\"run\\\": $i, \\\"turn\\\": $t, \\\"call\\\": $c}"
            done
            printf '"}\n'
        done
        printf '{"turn": 4, "delay_ms": 150, "text": "%s"}\n' "$(final success "run $i done")"
    } >"$T/models/$i.jsonl"
done
i=0
while [ $i -lt "$RUNS" ]; do
    i=$((i + 1))
    "$CLI" submit --store "$PG" --model "replay:$T/models/$i.jsonl" --nonce 1a2b3c4d --tools "$T/tools.json" \
        "run $i" >>"$T/ids" 2>>"$T/submit.err" || fail "submit $i: $(tail -1 "$T/submit.err")"
done
checks=$((checks + 1))
[ "$(sort -u "$T/ids" | wc -l)" -eq "$RUNS" ] || fail "submit: $RUNS distinct session ids"
checks=$((checks + 1))
[ "$(sql "SELECT count(*) FROM aw_queue")" = "$RUNS" ] || fail "submit: $RUNS runs queued"

# ---- the subscriber, then the workers
: >"$T/ready"
node "$SRC/tests/support/redis_subscriber.js" "$PORT" 'agent.*' "$T/ready" >"$T/sub.jsonl" &
SUB_PID=$!
n=0
while [ ! -s "$T/ready" ] && [ $n -lt 600 ]; do sleep 0.05; n=$((n + 1)); done

# start_worker K: worker K's next life, its envelopes also in its own file
start_worker() {
    gen=$(($(cat "$T/worker$1.gen" 2>/dev/null || echo 0) + 1))
    echo $gen >"$T/worker$1.gen"
    "$CLI" worker --store "$PG" --concurrency 4 --lease 2s --poll 100ms --max-attempts 100 --quiet \
        --events "redis://127.0.0.1:$PORT/0" --events "$T/events-$1-$gen.jsonl" 2>>"$T/worker$1.err" &
    echo $! >"$T/worker$1.pid"
    echo "events-$1-$gen.jsonl $!" >>"$T/lives"
}
k=0
while [ $k -lt $WORKERS ]; do
    k=$((k + 1))
    start_worker $k
done
remaining() { sql "SELECT count(*) FROM aw_sessions WHERE status IN ('queued', 'running')"; }
# one worker killed every KILL_EVERY seconds, round robin, until all ran (at most 4 minutes)
: >"$T/killed"
: >"$T/stopped"
victim=0
actions=0
start=$(date +%s)
while [ "$(remaining)" != 0 ]; do
    if [ $(($(date +%s) - start)) -gt 240 ]; then
        fail "the runs did not all finish: $(remaining) left"
        break
    fi
    sleep "$KILL_EVERY"
    [ "$(remaining)" = 0 ] && break
    victim=$((victim % WORKERS + 1))
    pid=$(cat "$T/worker$victim.pid")
    actions=$((actions + 1))
    if [ $((actions % 3)) = 0 ]; then
        # a worker that stalls past its lease (a frozen machine): its runs are
        # taken over; woken, it must stop them rather than write beside them
        kill -STOP "$pid" && echo "$pid" >>"$T/stopped"
        sleep 3.5
        kill -CONT "$pid"
        continue
    fi
    kill -9 "$pid" 2>/dev/null && echo "$pid" >>"$T/killed"
    wait "$pid" 2>/dev/null
    start_worker $victim
done
echo "$(wc -l <"$T/killed") workers killed, $(wc -l <"$T/stopped") stopped past their lease"
# the rest stop as asked (their runs are over): SIGTERM, a clean exit
k=0
while [ $k -lt $WORKERS ]; do
    k=$((k + 1))
    pid=$(cat "$T/worker$k.pid")
    kill -TERM "$pid"
    wait "$pid"
    check $? "worker $k stops cleanly on SIGTERM ($(tail -2 "$T/worker$k.err"))"
done
checks=$((checks + 1))
[ "$(wc -l <"$T/killed")" -ge 1 ] || fail "no worker was killed: the test proved nothing"

# ---- every run exactly once
checks=$((checks + 1))
got=$(sql "SELECT count(*) FROM aw_sessions WHERE status = 'completed' AND final_status = 'success'")
[ "$got" = "$RUNS" ] || fail "completed: $got of $RUNS ($(sql "SELECT status, count(*) FROM aw_sessions GROUP BY 1"))"
checks=$((checks + 1))
bad=$(sql "SELECT session_id FROM aw_events WHERE type = 'completion' GROUP BY 1 HAVING count(*) <> 1 LIMIT 3")
[ -z "$bad" ] || fail "a run with more than one completion: $bad"
checks=$((checks + 1))
bad=$(sql "SELECT session_id, turn FROM aw_steps WHERE state = 'whole' GROUP BY 1, 2 HAVING count(*) > 1 LIMIT 3")
[ -z "$bad" ] || fail "a turn stored twice (a completed step run again): $bad"
checks=$((checks + 1))
bad=$(sql "SELECT session_id FROM aw_steps WHERE state = 'whole' GROUP BY 1 HAVING count(*) <> 4 OR min(turn) <> 1 OR max(turn) <> 4 LIMIT 3")
[ -z "$bad" ] || fail "a run without its four whole steps: $bad"
checks=$((checks + 1))
[ "$(sql "SELECT count(*) FROM aw_queue")" = 0 ] || fail "runs left in the queue"

# ---- no tool call of a completed step twice
sql "SELECT s.task, st.turn FROM aw_steps st JOIN aw_sessions s ON s.id = st.session_id WHERE st.state = 'whole'" \
    >"$T/whole.txt"
checks=$((checks + 1))
node - "$T/calls.log" "$T/killed" "$T/stopped" "$RUNS" >"$T/check.out" 2>&1 <<'EOF' || fail "tool calls: $(head -c 1500 "$T/check.out")"
const fs = require('fs');
const [logFile, killedFile, stoppedFile, runs] = process.argv.slice(2);
const killed = new Set(fs.readFileSync(killedFile, 'utf8').split('\n').filter(Boolean));
const stopped = new Set(fs.readFileSync(stoppedFile, 'utf8').split('\n').filter(Boolean));
const byCall = new Map(); // "run/turn/call" -> [pid, ...] in the order they ran
for (const line of fs.readFileSync(logFile, 'utf8').split('\n').filter(Boolean)) {
  const at = line.lastIndexOf(' ');
  if (at === 0) { // the tool started, its worker killed before it sent the arguments
    if (!killed.has(line.slice(1)) && !stopped.has(line.slice(1))) throw new Error('a call without arguments from ' + line);
    continue;
  }
  const args = JSON.parse(line.slice(0, at));
  const key = `${args.run}/${args.turn}/${args.call}`;
  if (!byCall.has(key)) byCall.set(key, []);
  byCall.get(key).push(line.slice(at + 1));
}
let twice = 0;
for (let r = 1; r <= Number(runs); r++)
  for (let t = 1; t <= 3; t++)
    for (let c = 1; c <= t; c++) {
      const pids = byCall.get(`${r}/${t}/${c}`);
      if (!pids) throw new Error(`run ${r} turn ${t} call ${c} never ran`);
      // every execution but the last was by a worker that died before its
      // step was stored; a worker frozen past its lease may, woken, run the
      // calls of the turn it was in before its renewal stops it (its step
      // is refused): its executions may come anywhere
      const live = pids.filter((pid) => !stopped.has(pid));
      for (const pid of live.slice(0, -1))
        if (!killed.has(pid)) throw new Error(`run ${r} turn ${t} call ${c} ran twice, first by ${pid}, never killed`);
      if (pids.length > 1) twice++;
    }
console.log(`${byCall.size} calls; ${twice} run again after their worker was killed (or frozen) mid-turn`);
EOF
cat "$T/check.out"

# ---- every envelope at the subscriber, in order, per execution
checks=$((checks + 1))
node - "$T" "$RUNS" >"$T/check2.out" 2>&1 <<'EOF' || fail "envelopes: $(head -c 1500 "$T/check2.out")"
const fs = require('fs');
const [dir, runs] = process.argv.slice(2);
const killed = new Set(fs.readFileSync(`${dir}/killed`, 'utf8').split('\n').filter(Boolean));
const stopped = new Set(fs.readFileSync(`${dir}/stopped`, 'utf8').split('\n').filter(Boolean));
const stale = new Set(); // executions of a worker that was frozen past its lease
const pidOf = new Map(fs.readFileSync(`${dir}/lives`, 'utf8').split('\n').filter(Boolean).map((l) => l.split(' ')));
const emitted = new Map(); // execution_id -> [envelope text, ...] as its worker emitted them
const diedWith = new Set(); // executions whose worker was killed later
for (const f of fs.readdirSync(dir).filter((f) => /^events-\d+-\d+\.jsonl$/.test(f)))
  for (const line of fs.readFileSync(`${dir}/${f}`, 'utf8').split('\n').filter(Boolean)) {
    const e = JSON.parse(line);
    if (!emitted.has(e.execution_id)) emitted.set(e.execution_id, []);
    emitted.get(e.execution_id).push(line);
    if (killed.has(pidOf.get(f))) diedWith.add(e.execution_id);
    if (stopped.has(pidOf.get(f))) stale.add(e.execution_id);
  }
const got = new Map();
for (const line of fs.readFileSync(`${dir}/sub.jsonl`, 'utf8').split('\n').filter(Boolean)) {
  const m = JSON.parse(line);
  const p = JSON.parse(m.payload);
  if (p.event !== p.data.type || p.socket !== null || m.channel !== 'agent.' + p.data.session_id)
    throw new Error('not Laravel\'s shape: ' + line);
  const id = p.data.execution_id;
  if (!got.has(id)) got.set(id, []);
  got.get(id).push(JSON.stringify(p.data));
}
let finished = 0, cut = 0, lost = 0;
const finishers = new Map(); // session -> executions that finished it
for (const [id, want] of emitted) {
  const have = got.get(id) || [];
  for (let i = 0; i < have.length; i++)
    if (have[i] !== want[i]) throw new Error(`execution ${id}: envelope ${i} out of order or foreign:\n${have[i]}\nwanted\n${want[i]}`);
  const done = want.some((l) => l.includes('"type":"agent.status"') && l.includes('"status":"completed"'));
  if (done) {
    finished++;
    const session = JSON.parse(want[0]).session_id;
    finishers.set(session, (finishers.get(session) || []).concat([id]));
    /* a worker killed a moment after a run ended may take its last
     * envelopes with it (they were on their way); any other may not */
    if (have.length !== want.length && !diedWith.has(id))
      throw new Error(`execution ${id} finished its run but ${want.length - have.length} of its ${want.length} envelopes never arrived`);
    lost += want.length - have.length;
  } else {
    cut++;
    lost += want.length - have.length;
  }
}
/* One execution finished each run; a second may only be a frozen
 * worker's, which went on after waking until the store refused its last
 * step (its envelopes had said so before: the store is the truth). None
 * only when a worker was killed between storing the run's end and
 * sending its status (the status goes out after the store has the end):
 * the store says completed (checked above), the news died with it. */
const sessionOf = new Map();
for (const [id, want] of emitted) sessionOf.set(id, JSON.parse(want[0]).session_id);
const sessions = new Set(sessionOf.values());
if (sessions.size !== Number(runs)) throw new Error(`${sessions.size} runs emitted envelopes, wanted ${runs}`);
let unannounced = 0;
for (const session of sessions) {
  if (finishers.has(session)) continue;
  const execs = [...sessionOf].filter(([, s]) => s === session).map(([id]) => id);
  if (!execs.some((id) => diedWith.has(id)))
    throw new Error(`session ${session}: no execution sent its end, and no worker of it was killed`);
  unannounced++;
}
let staleFinishes = 0;
for (const [session, ids] of finishers) {
  const fresh = ids.filter((id) => !stale.has(id));
  if (fresh.length > 1 || (fresh.length === 0 && ids.length > 1))
    throw new Error(`session ${session} finished by ${ids.length} executions: ${ids.join(', ')}`);
  staleFinishes += ids.length - 1;
}
for (const id of got.keys()) if (!emitted.has(id)) throw new Error('an execution no worker emitted: ' + id);
console.log(`${finished - staleFinishes} executions finished their run, ${cut} were cut, ${staleFinishes} went on ` +
  `frozen past their lease; ${lost} envelopes died with their worker; ${unannounced} ends stored, their status ` +
  `never sent (worker killed in between)`);
EOF
cat "$T/check2.out"

finish
