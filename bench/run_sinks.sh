#!/usr/bin/env bash
# bench/run_sinks.sh — the event sinks' benchmark (issue 15), printed as
# BENCHMARKS.md rows. bench/bench_sinks.c sends real envelopes (about 500
# bytes each) through each destination: a burst (envelopes per second the
# sink delivers) and a run that emits 1,000 envelopes a second (1 ms of
# work before each), whose slowdown against the same run with no
# destination is what the sink costs the run. Redis: a redis-server on
# loopback (tests/support/redis_harness.sh) with a subscriber on the
# channel; webhook: the Node receiver of the tests (keep-alive, answering
# 200) on loopback. BUILD_DIR holds the Release build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$1
burst=${AW_SINK_BURST:-20000}
paced=${AW_SINK_PACED:-2000}
tmp=$(mktemp -d /tmp/aw-bench-sinks.XXXXXX)
sub=
rec=
cleanup() {
    [ -n "$sub" ] && kill "$sub" 2>/dev/null
    [ -n "$rec" ] && kill "$rec" 2>/dev/null
    bash "$root/tests/support/redis_harness.sh" stop "$tmp/redis" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

row() { awk -v k="$2" '$1 == k {print $2}' "$1"; }

"$build/bench_sinks" "$tmp/events.jsonl" "$burst" "$paced" >"$tmp/file.txt"
if port=$(bash "$root/tests/support/redis_harness.sh" start "$tmp/redis"); then
    redis-cli -p "$port" psubscribe 'agent.*' >/dev/null &
    sub=$!
    "$build/bench_sinks" "redis://127.0.0.1:$port/0" "$burst" "$paced" >"$tmp/redis.txt"
fi
if command -v node >/dev/null 2>&1; then
    node "$root/tests/support/webhook_receiver.js" "$tmp/port" /dev/null &
    rec=$!
    for _ in $(seq 1 200); do [ -s "$tmp/port" ] && break; sleep 0.05; done
    "$build/bench_sinks" "http://127.0.0.1:$(cat "$tmp/port")/hook" "$((burst / 4))" "$paced" >"$tmp/webhook.txt"
fi

val() { [ -s "$tmp/$1.txt" ] && row "$tmp/$1.txt" "$2" || echo "n/a"; }
echo "## Event sinks benchmark (issue 15)"
echo
echo "Envelopes of about 500 bytes on one channel (one run's). Burst: $burst envelopes at once ($((burst / 4)) for"
echo "the webhook), time until the last is delivered. Run: $paced envelopes, 1 ms of work before each (1,000"
echo "envelopes a second), best of 3; its slowdown is its CPU time (and wall time) against the same run with"
echo "no destination."
echo
echo "| destination | envelopes/s delivered (burst) | CPU per envelope | run's slowdown at 1,000/s, CPU | wall | goal |"
echo "|---|---|---|---|---|---|"
for k in file redis webhook; do
    name=$k
    [ $k = redis ] && name="redis:// (PUBLISH, a subscriber)"
    [ $k = webhook ] && name="http:// webhook (local receiver)"
    [ $k = file ] && name="file (JSON lines)"
    echo "| $name | $(val $k burst_per_second) | $(val $k burst_cpu_us_per_envelope) µs | $(val $k paced_slowdown_cpu_pct) % | $(val $k paced_slowdown_wall_pct) % | < 2 % |"
done
