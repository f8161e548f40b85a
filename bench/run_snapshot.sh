#!/usr/bin/env bash
# bench/run_snapshot.sh — the snapshot benchmark of issue 6, agentwire and
# its JavaScript peer in one run, printed as BENCHMARKS.md rows:
#
#   | benchmark | agentwire | JS peer | ratio | goal |
#
# A full agent state of about 20 MB with 10,000 messages (AW_STATE_MB and
# AW_STATE_MESSAGES change it), generated from a fixed seed by
# bench/gen_state_corpus.c, is slimmed with the 'standard' configuration end
# to end from its bytes in memory: aw_json_parse + aw_snapshot_slim +
# aw_json_write (bench/bench_snapshot.c) vs JSON.parse + slice/map +
# JSON.stringify (bench/peers/snapshot_peer.js, plain Node, the seed's
# serializer). Best of 5, MB/s of input; the phases are shown too.
#
# A second row runs agentwire again with glibc's malloc told to keep freed
# memory (GLIBC_TUNABLES mmap_threshold and trim_threshold): by default each
# parse gets its arena from a fresh mmap, whose page faults once cost more
# than the parsing (85 of 105 ms here). Large arena blocks now ask for
# transparent huge pages (src/arena.c), which takes most of that away where
# the kernel grants them (THP in "madvise" or "always" mode); the gap
# between the two rows shows what is left. The row is for diagnosis; the
# goal is judged on the first, the library as users get it.
#
# The peer compares the two snapshots, untimed: byte for byte, and else
# everything but the message contents whose cut differs for the one
# documented reason (JavaScript cuts at 2,000 UTF-16 units, agentwire at
# 2,000 characters; see snapshot_peer.js). Exit status 1 when anything else
# differs. BUILD_DIR holds the Release build (bench/run.sh makes it). Both
# sides run AW_BENCH_ROUNDS times (default 2), taking turns; each reports its
# best of 5, and the section the best of all rounds. Takes about 20 seconds.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: run_snapshot.sh BUILD_DIR (a Release build with AW_BENCH=ON)}
mb=${AW_STATE_MB:-20}
nmsg=${AW_STATE_MESSAGES:-10000}
rounds=${AW_BENCH_ROUNDS:-2}
data=$build/snapshot-data
mkdir -p "$data"
how="CMake Release, AW_BENCH=ON"

state=$data/state.json
"$build/gen_state_corpus" "$state" "$nmsg" "$mb"
# agentwire and the peer take turns, ROUNDS times (best of 5 in each round;
# the best of all rounds is shown), so that a burst of load from other
# processes on a shared machine is less likely to hit one side only
tunables=glibc.malloc.mmap_threshold=1073741824:glibc.malloc.trim_threshold=4294967296
: >"$data/aw.txt"
: >"$data/aw.reused.txt"
: >"$data/js.txt"
for ((round = 1; round <= rounds; round++)); do
    "$build/bench_snapshot" "$state" "$data/aw.snapshot.json" >>"$data/aw.txt"
    GLIBC_TUNABLES=$tunables "$build/bench_snapshot" "$state" "$data/aw.snapshot.reused.json" |
        sed 's/^aw\./reused./' >>"$data/aw.reused.txt"
    cmp -s "$data/aw.snapshot.json" "$data/aw.snapshot.reused.json" ||
        { echo "run_snapshot.sh: agentwire's snapshot changes with GLIBC_TUNABLES" >&2; exit 1; }
    node "$root/bench/peers/snapshot_peer.js" "$state" "$data/aw.snapshot.json" >>"$data/js.txt"
done

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
sum=$(sha256sum "$state" | cut -c1-16)

cat "$data/aw.txt" "$data/aw.reused.txt" "$data/js.txt" | awk \
    -v date="$(date -u '+%Y-%m-%d %H:%M UTC')" -v cpu="$cpu ($(nproc) CPUs)" \
    -v cc="$(${CC:-gcc} --version | head -n1)" -v how="$how" -v sum="$sum" -v rounds="$rounds" '
{   # over the rounds: the best rate and time, "no" if any round said it, else the last
    k = $1; x = $2
    if (k ~ /mbps$/) { if (!(k in v) || x + 0 > v[k] + 0) v[k] = x }
    else if (k ~ /(seconds|_ms)$/) { if (!(k in v) || x + 0 < v[k] + 0) v[k] = x }
    else if (k ~ /^identical\./) { if (!(k in v) || x == "no") v[k] = x }
    else v[k] = x
}
function rate(x) { return x >= 100 ? sprintf("%.0f MB/s", x) : sprintf("%.1f MB/s", x) }
function times(x) { return sprintf("%.2f×", x) }
function dur(ms) { return ms >= 100 ? sprintf("%.0f ms", ms) : (ms >= 1 ? sprintf("%.1f ms", ms) : sprintf("%.0f µs", ms * 1000)) }
END {
    ok = (v["identical.rest"] == "yes")
    printf "### Snapshot benchmark (issue 6)\n\n"
    printf "- date: %s; CPU: %s; node %s; %s; %s\n", date, cpu, v["node.version"], cc, how
    printf "- input: bench/gen_state_corpus.c, fixed seed: a %.1f MB agent state, %d messages, %d steps (sha256 %s…); slimmed with the standard configuration (50 messages, 20 steps, 2,000 characters of content) to %.1f KB\n",
        v["input_bytes"] / 1e6, v["messages"], v["steps"], sum, v["aw.out_bytes"] / 1e3
    if (v["identical.bytes"] == "yes")
        same = "byte-identical"
    else
        same = sprintf("not byte-identical, for the one documented reason: %d message contents differ because the peer cuts at 2,000 UTF-16 units and agentwire at 2,000 characters, which differ when emoji come before the cut (%d of the %d kept contents are cut); with those contents taken from agentwire, the rest is byte for byte the same: %s",
            v["cmp.contents_utf16_vs_chars"], v["cmp.contents_cut"], v["cmp.messages"], v["identical.rest"])
    printf "- snapshots, agentwire vs the peer (untimed): %s\n", same
    printf "- best of 5 in each of %d rounds, agentwire and the peer taking turns (the best shown), end to end from the state in memory (for Node: already decoded to a string); phases (best of each): agentwire parse %s, slim %s, write %s, free %s; peer JSON.parse %s, slice/map %s, JSON.stringify %s\n\n", rounds,
        dur(v["aw.parse_ms"]), dur(v["aw.slim_ms"]), dur(v["aw.write_ms"]), dur(v["aw.free_ms"]),
        dur(v["js.parse_ms"]), dur(v["js.slim_ms"]), dur(v["js.write_ms"])

    printf "| benchmark | agentwire | JS peer | ratio | goal |\n|---|---|---|---|---|\n"
    a = v["aw.mbps"]; j = v["js.mbps"]
    printf "| snapshot: slim a %.0f MB state of %d messages, parse + slim + write (MB/s of input; time) | %s (%s) | %s (%s) | %s | ≥ 5× peer: %s |\n",
        v["input_bytes"] / 1e6, v["messages"], rate(a), dur(v["aw.seconds"] * 1000), rate(j), dur(v["js.seconds"] * 1000),
        times(a / j), (a / j >= 5 ? "met" : "missed")
    a = v["reused.mbps"]
    printf "| snapshot: the same, agentwire with malloc keeping freed memory (no fresh pages per parse; agentwire parse %s) | %s (%s) | %s (%s) | %s | (diagnosis, not the goal) |\n",
        dur(v["reused.parse_ms"]), rate(a), dur(v["reused.seconds"] * 1000), rate(j), dur(v["js.seconds"] * 1000), times(a / j)
    if (!ok) { printf "\nrun_snapshot.sh: agentwire and the peer do NOT produce the same snapshot (beyond the documented difference)\n"; exit 1 }
}'
