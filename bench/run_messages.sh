#!/usr/bin/env bash
# bench/run_messages.sh — the messages benchmark of issue 10: `agentwire
# messages encode FILE > out` against the reference's messagesToXml in
# JavaScript (bench/peers/messages_peer.js), both as a user runs them, a
# whole process from a file, on large OpenAI-shape histories:
#
#   | benchmark | agentwire | JS peer | ratio | goal |
#
# The histories are made by bench/gen_messages_corpus.c from the thread
# benchmark's corpora (bench/gen_thread_corpus.c, fixed seeds): an
# escape-dense one (a coding agent: tool calls whose JSON arguments hold
# source code, JSON, HTML, diffs and shell output as tool results, prose
# between; about AW_MESSAGES_DENSE_MB, default 60, MB of events) and a
# prose-heavy one (AW_MESSAGES_PROSE_MB, default 50). Wall time and peak
# resident memory come from bench/thread_process.c (getrusage of the child):
# the best of 5 runs (agentwire) and 3 (the peer), with that run's peak RSS.
# The two outputs are compared with cmp; exit status 1 when they differ.
# BUILD_DIR holds the Release build (bench/run.sh makes it).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: run_messages.sh BUILD_DIR (a Release build with AW_BENCH=ON)}
data=$build/messages-data
mkdir -p "$data"
peer=$root/bench/peers/messages_peer.js
proc=$build/thread_process
how="CMake Release, AW_BENCH=ON"

"$build/gen_thread_corpus" --escape-dense "$data/dense.jsonl" "${AW_MESSAGES_DENSE_MB:-60}" >/dev/null
"$build/gen_thread_corpus" "$data/prose.jsonl" "${AW_MESSAGES_PROSE_MB:-50}" >/dev/null
dense_n=$("$build/gen_messages_corpus" "$data/dense.jsonl" "$data/dense.json" | awk '{ print $2 }')
prose_n=$("$build/gen_messages_corpus" "$data/prose.jsonl" "$data/prose.json" | awk '{ print $2 }')
rm -f "$data/dense.jsonl" "$data/prose.jsonl"

best_of() { # RUNS OUT PROGRAM...: "seconds rss_kb" of the fastest run
    local runs=$1 out=$2 best= rss= t m
    shift 2
    for _ in $(seq "$runs"); do
        read -r t m < <("$proc" "$out" "$@")
        if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t rss=$m; fi
    done
    echo "$best $rss"
}

whole_process() { # KEY FILE
    local key=$1 file=$2 t m
    read -r t m < <(best_of 5 "$data/$key.aw.xml" "$build/agentwire" messages encode "$file")
    echo "$key.aw.seconds $t"
    echo "$key.aw.rss_kb $m"
    read -r t m < <(best_of 3 "$data/$key.js.xml" node "$peer" --encode "$file")
    echo "$key.js.seconds $t"
    echo "$key.js.rss_kb $m"
    echo "$key.input_bytes $(wc -c <"$file")"
    if cmp -s "$data/$key.aw.xml" "$data/$key.js.xml"; then echo "$key.identical yes"; else echo "$key.identical no"; fi
}
{
    whole_process dense "$data/dense.json"
    whole_process prose "$data/prose.json"
    echo "dense.messages $dense_n"
    echo "prose.messages $prose_n"
    echo "node.version $(node --version)"
} >"$data/proc.txt"

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
awk -v date="$(date -u '+%Y-%m-%d %H:%M UTC')" -v cpu="$cpu ($(nproc) CPUs)" \
    -v cc="$(${CC:-gcc} --version | head -n1)" -v how="$how" \
    -v dsum="$(sha256sum "$data/dense.json" | cut -c1-16)" -v psum="$(sha256sum "$data/prose.json" | cut -c1-16)" '
{ v[$1] = $2 }
function dur(s) { return s >= 1 ? sprintf("%.2f s", s) : sprintf("%.0f ms", s * 1e3) }
function times(x) { return x >= 100 ? sprintf("%.0f×", x) : sprintf("%.1f×", x) }
function row(key, label,    a, j, ratio, in_mb, rss, over) {
    a = v[key ".aw.seconds"]; j = v[key ".js.seconds"]; ratio = j / a
    in_mb = v[key ".input_bytes"] / 1e6; rss = v[key ".aw.rss_kb"] * 1024 / 1e6; over = rss - in_mb
    printf "| messages: whole process `agentwire messages encode FILE > out`, %s (%.1f MB, %d messages) | %s (%.0f MB/s), peak RSS %.1f MB | %s, peak RSS %.0f MB | %s | ≥ 20× peer: %s; peak RSS ≤ input + 8 MB: %s (input + %.1f MB) |\n",
        label, in_mb, v[key ".messages"], dur(a), in_mb / a, rss, dur(j), v[key ".js.rss_kb"] * 1024 / 1e6, times(ratio),
        (ratio >= 20 ? "met" : "missed"), (over <= 8 ? "met" : "missed"), over
}
END {
    printf "### Messages benchmark (issue 10)\n\n"
    printf "- date: %s; CPU: %s; node %s; %s; built with %s\n", date, cpu, v["node.version"], cc, how
    printf "- command: `make bench BENCH=messages` (bench/run_messages.sh)\n"
    printf "- escape-dense history: bench/gen_messages_corpus.c over `gen_thread_corpus --escape-dense`, fixed seed: %.1f MB of OpenAI-shape JSON, %d messages (sha256 %s…): tool calls with JSON arguments holding code, JSON/HTML/diff/shell tool results, prose\n",
        v["dense.input_bytes"] / 1e6, v["dense.messages"], dsum
    printf "- prose-heavy history: the same over the prose thread corpus: %.1f MB, %d messages (sha256 %s…)\n",
        v["prose.input_bytes"] / 1e6, v["prose.messages"], psum
    printf "- peer: bench/peers/messages_peer.js, the reference messagesToXml (seed 002) on plain objects; byte-identical output: escape-dense %s, prose %s\n",
        v["dense.identical"], v["prose.identical"]
    printf "- best of 5 (agentwire) and 3 (peer) runs, wall time, with that run'"'"'s peak RSS (getrusage)\n\n"
    printf "| benchmark | agentwire | JS peer | ratio | goal |\n|---|---|---|---|---|\n"
    row("dense", "escape-dense")
    row("prose", "prose-heavy")
    if (v["dense.identical"] != "yes" || v["prose.identical"] != "yes") {
        printf "\nrun_messages.sh: agentwire and the peer do NOT produce the same bytes\n"; exit 1
    }
}' "$data/proc.txt"
