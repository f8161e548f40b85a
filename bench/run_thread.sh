#!/usr/bin/env bash
# bench/run_thread.sh — the thread benchmark of issue 3, agentwire and its
# JavaScript peer in one run, printed as BENCHMARKS.md rows:
#
#   | benchmark | agentwire | JS peer | ratio | goal |
#
# 1. in-memory encode of prose-heavy events (aw_thread_encode vs a
#    reference-style serializer), MB/s of XML written;
# 2. JSON lines -> XML end to end, MB/s of JSONL read;
# 3. appending one event to a thread of 1, 4 and 16 MB (aw_thread_writer vs
#    re-serializing the whole event array, as the reference does).
#
# The corpus is generated from a fixed seed by bench/gen_thread_corpus.c
# (about 50 MB; AW_THREAD_CORPUS_MB changes it). The peer is
# bench/peers/thread_peer.js (plain Node, no npm packages); it checks that
# its output is byte-identical to agentwire's, untimed. BUILD_DIR holds the
# Release build (bench/run.sh makes it). Exit status 1 when the outputs
# differ. Takes about 20 seconds.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: run_thread.sh BUILD_DIR (a Release build with AW_BENCH=ON)}
mb=${AW_THREAD_CORPUS_MB:-50}
data=$build/thread-data
mkdir -p "$data"
bench=$build/bench_thread
gen=$build/gen_thread_corpus
how="CMake Release, AW_BENCH=ON"

corpus=$data/thread_corpus.jsonl
extra=$data/thread_append_event.json
"$gen" "$corpus" "$mb" "$extra"
"$bench" "$corpus" "$extra" "$data/aw" >"$data/aw.txt"
node "$root/bench/peers/thread_peer.js" "$corpus" "$extra" "$data/aw" >"$data/js.txt"

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
sum=$(sha256sum "$corpus" | cut -c1-16)
extra_bytes=$(wc -c <"$extra")

cat "$data/aw.txt" "$data/js.txt" | awk \
    -v date="$(date -u '+%Y-%m-%d %H:%M UTC')" -v cpu="$cpu ($(nproc) CPUs)" \
    -v cc="$(${CC:-gcc} --version | head -n1)" -v how="$how" -v sum="$sum" -v extra="$extra_bytes" '
{ v[$1] = $2 }
function rate(x) { return x >= 100 ? sprintf("%.0f MB/s", x) : sprintf("%.1f MB/s", x) }
function dur(us) {
    if (us >= 1000000) return sprintf("%.2f s", us / 1e6)
    if (us >= 1000) return sprintf("%.1f ms", us / 1e3)
    return sprintf("%.1f µs", us)
}
function times(x) { return x >= 100 ? sprintf("%.0f×", x) : sprintf("%.1f×", x) }
END {
    ok = (v["identical.encode"] == "yes" && v["identical.append"] == "yes")
    printf "### Thread benchmark (issue 3)\n\n"
    printf "- date: %s; CPU: %s; node %s; %s; built with %s\n", date, cpu, v["node.version"], cc, how
    printf "- corpus: bench/gen_thread_corpus.c, fixed seed: %.1f MB of JSON lines, %d events (sha256 %s…); appended event: a %d-byte assistant message\n",
        v["input_bytes"] / 1e6, v["events"], sum, extra
    printf "- byte-identical output, agentwire vs the peer: whole corpus %s; each thread after its first append %s\n",
        v["identical.encode"], v["identical.append"]
    printf "- encode and end to end: best of 5; append: median of %d (agentwire, appends in a row) and %d/%d/%d (peer) appends\n\n",
        v["aw.append.1.appends"], v["js.append.1.appends"], v["js.append.4.appends"], v["js.append.16.appends"]

    printf "| benchmark | agentwire | JS peer | ratio | goal |\n|---|---|---|---|---|\n"
    a = v["aw.encode.mbps"]; j = v["js.encode.mbps"]
    printf "| thread: in-memory encode, prose-heavy events (%.1f MB of XML out) | %s | %s | %s | ≥ 2 GB/s: %s |\n",
        v["aw.encode.out_bytes"] / 1e6, rate(a), rate(j), times(a / j), (a >= 2000 ? "met" : "missed")
    a = v["aw.e2e.mbps"]; j = v["js.e2e.mbps"]
    printf "| thread: JSON lines → XML end to end (%.1f MB of JSONL in) | %s | %s | %s | ≥ 20× peer: %s |\n",
        v["input_bytes"] / 1e6, rate(a), rate(j), times(a / j), (a / j >= 20 ? "met" : "missed")
    flat = v["aw.append.16.median_us"] / v["aw.append.1.median_us"]
    grow = v["js.append.16.median_us"] / v["js.append.1.median_us"]
    split("1 4 16", sizes, " ")
    for (i = 1; i <= 3; i++) {
        s = sizes[i]; a = v["aw.append." s ".median_us"]; j = v["js.append." s ".median_us"]
        goal = "time independent of thread length"
        if (s == 16) goal = sprintf("independent of length: %s (16 MB vs 1 MB: agentwire %.2f×, peer %.0f×)",
                                    (flat <= 2 ? "met" : "missed"), flat, grow)
        printf "| thread: append one event to a %d MB thread | %s | %s | %s | %s |\n", s, dur(a), dur(j), times(j / a), goal
    }
    if (!ok) { printf "\nrun_thread.sh: agentwire and the peer do NOT produce the same bytes\n"; exit 1 }
}'
