#!/usr/bin/env bash
# bench/run_thread.sh — the thread benchmark of issues 3 and 10, agentwire and
# its JavaScript peer in one run, printed as BENCHMARKS.md rows:
#
#   | benchmark | agentwire | JS peer | ratio | goal |
#
# 1. in-memory encode (aw_thread_encode vs a reference-style serializer),
#    MB/s of XML written, on prose-heavy events and on escape-dense ones
#    (a coding agent's session: code in tool arguments, JSON, diffs, HTML);
# 2. JSON lines -> XML end to end in memory, MB/s of JSONL read, both corpora;
# 3. the command as a user runs it, a whole process from a file:
#    `agentwire thread encode FILE > out` against the peer's
#    `node thread_peer.js --encode FILE > out`, wall time and peak resident
#    memory (bench/thread_process.c: getrusage of the child), both corpora;
# 4. appending one event to a thread of 1, 4 and 16 MB (aw_thread_writer vs
#    re-serializing the whole event array, as the reference does).
#
# The corpora are generated from fixed seeds by bench/gen_thread_corpus.c
# (prose: about 50 MB, AW_THREAD_CORPUS_MB changes it; escape-dense: about
# 67 MB, AW_THREAD_DENSE_MB). The peer is bench/peers/thread_peer.js (plain
# Node, no npm packages); it checks that its output is byte-identical to
# agentwire's, untimed, and the whole-process outputs are compared with cmp.
# BUILD_DIR holds the Release build (bench/run.sh makes it). Exit status 1
# when the outputs differ. Takes about a minute.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: run_thread.sh BUILD_DIR (a Release build with AW_BENCH=ON)}
mb=${AW_THREAD_CORPUS_MB:-50}
dense_mb=${AW_THREAD_DENSE_MB:-67}
data=$build/thread-data
mkdir -p "$data"
bench=$build/bench_thread
gen=$build/gen_thread_corpus
proc=$build/thread_process
peer=$root/bench/peers/thread_peer.js
how="CMake Release, AW_BENCH=ON"

corpus=$data/thread_corpus.jsonl
dense=$data/thread_dense.jsonl
extra=$data/thread_append_event.json
"$gen" "$corpus" "$mb" "$extra"
"$gen" --escape-dense "$dense" "$dense_mb"
"$bench" "$corpus" "$extra" "$data/aw" >"$data/aw.txt"
node "$peer" "$corpus" "$extra" "$data/aw" >"$data/js.txt"
"$bench" "$dense" - "$data/aw-dense" | sed 's/^/dense./' >"$data/aw-dense.txt"
node "$peer" "$dense" - "$data/aw-dense" | sed 's/^/dense./' >"$data/js-dense.txt"

# Whole processes: the best wall time of RUNS (agentwire 5, the peer 3), with
# the peak resident memory of that run; the two outputs compared.
whole_process() { # KEY FILE
    local key=$1 file=$2 best= rss= t m
    for _ in 1 2 3 4 5; do
        read -r t m < <("$proc" "$data/$key.aw.xml" "$build/agentwire" thread encode "$file")
        if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t rss=$m; fi
    done
    echo "$key.aw.seconds $best"
    echo "$key.aw.rss_kb $rss"
    best=
    for _ in 1 2 3; do
        read -r t m < <("$proc" "$data/$key.js.xml" node "$peer" --encode "$file")
        if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t rss=$m; fi
    done
    echo "$key.js.seconds $best"
    echo "$key.js.rss_kb $rss"
    echo "$key.input_bytes $(wc -c <"$file")"
    if cmp -s "$data/$key.aw.xml" "$data/$key.js.xml"; then echo "$key.identical yes"; else echo "$key.identical no"; fi
}
{ whole_process proc.prose "$corpus"; whole_process proc.dense "$dense"; } >"$data/proc.txt"

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
sum=$(sha256sum "$corpus" | cut -c1-16)
extra_bytes=$(wc -c <"$extra")

dense_sum=$(sha256sum "$dense" | cut -c1-16)
cat "$data/aw.txt" "$data/js.txt" "$data/aw-dense.txt" "$data/js-dense.txt" "$data/proc.txt" | awk \
    -v date="$(date -u '+%Y-%m-%d %H:%M UTC')" -v cpu="$cpu ($(nproc) CPUs)" \
    -v cc="$(${CC:-gcc} --version | head -n1)" -v how="$how" -v sum="$sum" -v dsum="$dense_sum" -v extra="$extra_bytes" '
{ v[$1] = $2 }
function rate(x) { return x >= 100 ? sprintf("%.0f MB/s", x) : sprintf("%.1f MB/s", x) }
function dur(us) {
    if (us >= 1000000) return sprintf("%.2f s", us / 1e6)
    if (us >= 1000) return sprintf("%.1f ms", us / 1e3)
    return sprintf("%.1f µs", us)
}
function times(x) { return x >= 100 ? sprintf("%.0f×", x) : sprintf("%.1f×", x) }
function proc_row(key, label,    a, j, ratio, in_mb, rss, over) {
    a = v[key ".aw.seconds"]; j = v[key ".js.seconds"]; ratio = j / a
    in_mb = v[key ".input_bytes"] / 1e6; rss = v[key ".aw.rss_kb"] * 1024 / 1e6; over = rss - in_mb
    printf "| thread: whole process `agentwire thread encode FILE > out`, %s (%.1f MB file) | %s (%.0f MB/s), peak RSS %.1f MB | %s, peak RSS %.0f MB | %s | ≥ 20× peer: %s; peak RSS ≤ input + 8 MB: %s (input + %.1f MB) |\n",
        label, in_mb, dur(a * 1e6), in_mb / a, rss, dur(j * 1e6), v[key ".js.rss_kb"] * 1024 / 1e6, times(ratio),
        (ratio >= 20 ? "met" : "missed"), (over <= 8 ? "met" : "missed"), over
}
END {
    ok = (v["identical.encode"] == "yes" && v["identical.append"] == "yes" && v["dense.identical.encode"] == "yes" &&
          v["proc.prose.identical"] == "yes" && v["proc.dense.identical"] == "yes")
    printf "### Thread benchmark (issues 3 and 10)\n\n"
    printf "- date: %s; CPU: %s; node %s; %s; built with %s\n", date, cpu, v["node.version"], cc, how
    printf "- command: `make bench BENCH=thread` (bench/run_thread.sh)\n"
    printf "- prose-heavy corpus: bench/gen_thread_corpus.c, fixed seed: %.1f MB of JSON lines, %d events (sha256 %s…); appended event: a %d-byte assistant message\n",
        v["input_bytes"] / 1e6, v["events"], sum, extra
    printf "- escape-dense corpus: `gen_thread_corpus --escape-dense`, fixed seed: %.1f MB of JSON lines, %d events (sha256 %s…): a coding agent at work, code in edit and write arguments, JSON results (values and JSON text), source files, diffs, HTML, shell output\n",
        v["dense.input_bytes"] / 1e6, v["dense.events"], dsum
    printf "- byte-identical output, agentwire vs the peer: prose %s, escape-dense %s; each thread after its first append %s; whole processes: prose %s, escape-dense %s\n",
        v["identical.encode"], v["dense.identical.encode"], v["identical.append"], v["proc.prose.identical"], v["proc.dense.identical"]
    printf "- encode and end to end: best of 5; whole process: best of 5 (agentwire) and 3 (peer) runs, wall time, with that run'"'"'s peak RSS (getrusage); append: median of %d (agentwire, appends in a row) and %d/%d/%d (peer) appends\n\n",
        v["aw.append.1.appends"], v["js.append.1.appends"], v["js.append.4.appends"], v["js.append.16.appends"]

    printf "| benchmark | agentwire | JS peer | ratio | goal |\n|---|---|---|---|---|\n"
    a = v["aw.encode.mbps"]; j = v["js.encode.mbps"]
    printf "| thread: in-memory encode, prose-heavy events (%.1f MB of XML out) | %s | %s | %s | ≥ 2 GB/s: %s |\n",
        v["aw.encode.out_bytes"] / 1e6, rate(a), rate(j), times(a / j), (a >= 2000 ? "met" : "missed")
    a = v["dense.aw.encode.mbps"]; j = v["dense.js.encode.mbps"]
    printf "| thread: in-memory encode, escape-dense events (%.1f MB of XML out) | %s | %s | %s | (no goal of its own) |\n",
        v["dense.aw.encode.out_bytes"] / 1e6, rate(a), rate(j), times(a / j)
    a = v["aw.e2e.mbps"]; j = v["js.e2e.mbps"]
    printf "| thread: JSON lines → XML end to end in memory, prose-heavy (%.1f MB of JSONL in) | %s | %s | %s | ≥ 20× peer: %s |\n",
        v["input_bytes"] / 1e6, rate(a), rate(j), times(a / j), (a / j >= 20 ? "met" : "missed")
    a = v["dense.aw.e2e.mbps"]; j = v["dense.js.e2e.mbps"]
    printf "| thread: JSON lines → XML end to end in memory, escape-dense (%.1f MB of JSONL in) | %s | %s | %s | ≥ 20× peer: %s |\n",
        v["dense.input_bytes"] / 1e6, rate(a), rate(j), times(a / j), (a / j >= 20 ? "met" : "missed")
    proc_row("proc.prose", "prose-heavy")
    proc_row("proc.dense", "escape-dense")
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
