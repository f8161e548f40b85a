#!/usr/bin/env bash
# bench/run_queue.sh — runs per second through the PostgreSQL queue
# (issue 15), printed as BENCHMARKS.md rows. R runs are queued with
# `agentwire submit` (the replay provider: two turns, no delays, no tools,
# so the model costs nothing and the queue, the store and the workers are
# what is measured), then 1, 2 and 4 `agentwire worker --idle-exit`
# processes (4 runs at once each) drain the queue; the time from the
# workers' start to the last one's exit gives runs per second. A local
# PostgreSQL (tests/support/pg_harness.sh, Unix socket, fsync off as in
# the tests). BUILD_DIR holds the Release build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$1
runs=${AW_QUEUE_RUNS:-400}
tmp=$(mktemp -d /tmp/aw-bench-queue.XXXXXX)
pgdir=$(mktemp -d /tmp/aw-pg.XXXXXX)
trap 'bash "$root/tests/support/pg_harness.sh" stop "$pgdir"; rm -rf "$tmp"' EXIT
url=$(bash "$root/tests/support/pg_harness.sh" start "$pgdir") || { echo "(postgres skipped)" >&2; exit 0; }
aw=$build/agentwire
cat >"$tmp/model.jsonl" <<'JSON'
{"turn": 1, "text": "Thinking about it."}
{"turn": 2, "text": "<ai-agent-1a2b3c4d-FINAL tool=\"agent__final_report\" status=\"success\" format=\"markdown\">done</ai-agent-1a2b3c4d-FINAL>"}
JSON
sql() { psql -X -q -t -A -d "$url" -c "$1"; }

declare -A rate
for workers in 1 2 4; do
    # the tables are made by the first submit; emptied before the next round
    [ "$workers" = 1 ] || sql "DELETE FROM aw_queue; DELETE FROM aw_events; DELETE FROM aw_accounting;
        DELETE FROM aw_steps; DELETE FROM aw_snapshots; DELETE FROM aw_sessions" >/dev/null
    for i in $(seq 1 "$runs"); do
        "$aw" submit --store "$url" --model "replay:$tmp/model.jsonl" --nonce 1a2b3c4d "run $i" >/dev/null
    done
    start=$(date +%s.%N)
    pids=()
    for _ in $(seq 1 "$workers"); do
        "$aw" worker --store "$url" --concurrency 4 --poll 20ms --idle-exit --quiet &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
    end=$(date +%s.%N)
    finished=$(sql "SELECT count(*) FROM aw_sessions WHERE status = 'completed'")
    rate[$workers]=$(echo "$finished $start $end" | awk '{printf "%.0f", $1 / ($3 - $2)}')
    echo "$workers workers: $finished of $runs runs, ${rate[$workers]} runs/s" >&2
done

echo "## Queue benchmark (issue 15)"
echo
echo "$runs queued runs (replay provider: two turns, no tools, no delays), drained by \`agentwire worker\`"
echo "processes of 4 runs at once each, on a local PostgreSQL (Unix socket, fsync off); from the workers' start"
echo "to the last one's exit. Each run: its claim, its lease, 3 transactions of its own (begin, two steps), its"
echo "release."
echo
echo "| workers | runs/s | vs 1 worker | goal |"
echo "|---|---|---|---|"
for w in 1 2 4; do
    echo "| $w | ${rate[$w]} | $(awk -v a="${rate[$w]}" -v b="${rate[1]}" 'BEGIN {printf "%.2fx", a / b}') | grows with workers until the database is the limit |"
done
