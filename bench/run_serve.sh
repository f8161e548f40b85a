#!/usr/bin/env bash
# bench/run_serve.sh — agentwire serve's event streams (issue 15), printed
# as BENCHMARKS.md rows. bench/bench_serve.c times a real `agentwire run`
# (replay provider, 500 turns of 4 agent__progress_report calls: 10
# envelopes a turn) alone and while a server streams its envelopes to a
# local client following it, interleaved, and reads a finished session's
# whole stream from the start. Twice: the run paced at about 1,000
# envelopes per second (each reply 8 ms in coming), the issue's goal's
# rate, and as fast as it goes. SQLite in a temporary folder. BUILD_DIR
# holds the Release build.
set -euo pipefail
build=$1
turns=${AW_SERVE_TURNS:-500}
rounds=${AW_SERVE_ROUNDS:-7}
tmp=$(mktemp -d /tmp/aw-bench-serve.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/paced" "$tmp/fast"

row() { # file key -> value
    awk -v k="$2" '$1 == k {print $2}' "$1"
}

"$build/bench_serve" "$build/agentwire" "$tmp/paced" "$turns" 4 8 "$rounds" >"$tmp/paced.txt"
"$build/bench_serve" "$build/agentwire" "$tmp/fast" "$turns" 4 0 "$rounds" >"$tmp/fast.txt"

echo "## Serve benchmark (issue 15)"
echo
echo "A real \`agentwire run\` on the replay provider: $turns turns of 4 agent__progress_report calls"
echo "($(row "$tmp/paced.txt" envelopes_per_run) envelopes), stored in SQLite; the server (default options: the store"
echo "looked at every 250 ms) streams them to one local client following the session from its start."
echo "Medians of $rounds runs alone and $rounds followed, interleaved."
echo
echo "| measurement | paced (each reply 8 ms) | as fast as it goes | goal |"
echo "|---|---|---|---|"
both() { echo "$(row "$tmp/paced.txt" "$1")$2 | $(row "$tmp/fast.txt" "$1")$2"; }
echo "| envelopes per second the run makes, SSE to a local client | $(both run_envelopes_per_second "") | 1,000 |"
echo "| the run alone | $(both run_alone_ms " ms") | |"
echo "| the run followed | $(both run_followed_ms " ms") | |"
echo "| the run's slowdown (wall clock) | $(both slowdown_pct " %") | < 2 % |"
echo "| the run's CPU time, alone / followed | $(row "$tmp/paced.txt" run_cpu_alone_ms) / $(row "$tmp/paced.txt" run_cpu_followed_ms) ms | $(row "$tmp/fast.txt" run_cpu_alone_ms) / $(row "$tmp/fast.txt" run_cpu_followed_ms) ms | |"
echo "| the server's and the client's CPU time while following | $(both server_and_client_cpu_ms " ms") | |"
echo "| a step's envelopes reach the client after the step ends, median | $(both delay_median_ms " ms") | |"
echo "| the same, 95th percentile | $(both delay_p95_ms " ms") | |"
echo "| a finished session's whole stream read from the start | $(row "$tmp/paced.txt" catchup_envelopes_per_second) envelopes/s ($(row "$tmp/paced.txt" catchup_ms) ms) | $(row "$tmp/fast.txt" catchup_envelopes_per_second) envelopes/s ($(row "$tmp/fast.txt" catchup_ms) ms) | |"
