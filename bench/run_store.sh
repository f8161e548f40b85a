#!/usr/bin/env bash
# bench/run_store.sh — the session store's benchmark (issue 14), printed as
# BENCHMARKS.md rows. bench/bench_store.c measures what the store adds to
# each step of a run (a step of 5 tool calls, about 20 KB of events,
# through the store's observer as a run calls it: slim snapshot + one
# transaction; a run with no store does none of it, so the time is the
# added latency), and how fast a store of 10,000 sessions lists and shows.
# SQLite in a temporary file (WAL, synchronous=NORMAL, the defaults), and a
# local PostgreSQL started by tests/support/pg_harness.sh on a Unix socket
# with fsync on (AW_PG_FSYNC=on). BUILD_DIR holds the Release build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$1
steps=${AW_STORE_STEPS:-1000}
sessions=${AW_STORE_SESSIONS:-10000}
tmp=$(mktemp -d /tmp/aw-bench-store.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

row() { # file key -> value
    awk -v k="$2" '$1 == k {print $2}' "$1"
}

"$build/bench_store" "sqlite:$tmp/sessions.db" "$steps" "$sessions" >"$tmp/sqlite.txt"
bash "$root/tests/support/pg_harness.sh" run sh -c \
    "\"$build/bench_store\" \"\$AW_PG_URL\" $steps $sessions" >"$tmp/pg.txt" || echo "(postgres skipped)" >&2
# the same steps with the server's fsync on (each commit waits for the disk)
AW_PG_FSYNC=on bash "$root/tests/support/pg_harness.sh" run sh -c \
    "\"$build/bench_store\" \"\$AW_PG_URL\" $steps 0" >"$tmp/pgsync.txt" || echo "(postgres skipped)" >&2

echo "## Store benchmark (issue 14)"
echo
echo "Per step: $(row "$tmp/sqlite.txt" event_bytes) bytes of agent events (5 tool calls and their results), 6"
echo "accounting rows, the slim snapshot; $steps steps. Listing and showing: a store of $sessions sessions."
echo
echo "| measurement | SQLite | PostgreSQL (local, Unix socket, fsync off) | PostgreSQL (fsync on) | goal |"
echo "|---|---|---|---|---|"
pg() { [ -s "$tmp/$2" ] && row "$tmp/$2" "$1" || echo "n/a"; }
echo "| added latency per step, median | $(row "$tmp/sqlite.txt" step_median) ms | $(pg step_median pg.txt) ms | $(pg step_median pgsync.txt) ms | < 1 ms SQLite, < 3 ms Postgres |"
echo "| added latency per step, 95th percentile | $(row "$tmp/sqlite.txt" step_p95) ms | $(pg step_p95 pg.txt) ms | $(pg step_p95 pgsync.txt) ms | |"
echo "| steps persisted per second | $(row "$tmp/sqlite.txt" steps_per_second) | $(pg steps_per_second pg.txt) | $(pg steps_per_second pgsync.txt) | |"
echo "| list all $sessions sessions | $(row "$tmp/sqlite.txt" list_all) ms | $(pg list_all pg.txt) ms | | < 50 ms |"
echo "| list the newest 50 | $(row "$tmp/sqlite.txt" list_50) ms | $(pg list_50 pg.txt) ms | | < 50 ms |"
echo "| show one session | $(row "$tmp/sqlite.txt" show) ms | $(pg show pg.txt) ms | | < 50 ms |"
