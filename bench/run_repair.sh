#!/usr/bin/env bash
# bench/run_repair.sh — the JSON repair benchmark of issue 4, agentwire and
# the npm package jsonrepair in one run, printed as BENCHMARKS.md rows:
#
#   | benchmark | agentwire | JS peer | ratio | goal |
#
# A corpus of broken model JSON (about AW_REPAIR_CORPUS_MB megabytes, default
# 4; tool arguments and structured answers, each broken in one to three of
# the fourteen ways aw_json_repair handles) is generated from a fixed seed by
# bench/bench_repair.c into BUILD_DIR/repair-data, repaired document by
# document with aw_json_repair and, by bench/peers/repair_peer.js, with
# jsonrepair (bench/peers/node_modules). MB/s of input bytes by the clock;
# the goal (100x) is judged by the ratio in CPU time of the two processes,
# which the load of other processes on the machine does not inflate.
#
# Checks, untimed: the corpus makes aw_json_repair apply every one of its
# steps, and every repair it returns is strict JSON (exit status 1
# otherwise). Where both succeed, JSON.parse of both results is compared;
# the section counts the disagreements, with the known difference of design
# that explains each (see repair_peer.js), and every one of them is written
# to BUILD_DIR/repair-data/repair-disagreements.txt. Takes about 10 seconds.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: run_repair.sh BUILD_DIR (a Release build with AW_BENCH=ON)}
mb=${AW_REPAIR_CORPUS_MB:-4}
data=$build/repair-data
mkdir -p "$data"
how="CMake Release, AW_BENCH=ON"

load=$(cut -d' ' -f1-3 /proc/loadavg)
"$build/bench_repair" "$data" "$mb" >"$data/aw.txt"
node "$root/bench/peers/repair_peer.js" "$data" >"$data/js.txt"

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
sum=$(sha256sum "$data/repair-corpus.jsonl" | cut -c1-16)

cat "$data/aw.txt" "$data/js.txt" | awk \
    -v date="$(date -u '+%Y-%m-%d %H:%M UTC')" -v cpu="$cpu ($(nproc) CPUs)" \
    -v cc="$(${CC:-gcc} --version | head -n1)" -v how="$how" -v sum="$sum" -v file="$data/repair-disagreements.txt" -v load="$load" '
{ v[$1] = $2; if ($1 ~ /^cmp\.why\./) { why[substr($1, 9)] = $2 } }
function rate(x) { return x >= 100 ? sprintf("%.0f MB/s", x) : sprintf("%.1f MB/s", x) }
function times(x) { return x >= 100 ? sprintf("%.0f×", x) : sprintf("%.1f×", x) }
END {
    split("code_fence surrounding_text ellipsis single_quotes unquoted_keys trailing_comma missing_comma comments python_literals control_chars invalid_escapes unclosed missing_colon missing_value", kinds, " ")
    kl = ""
    for (i = 1; i <= 14; i++) kl = kl sprintf("%s%s %d", (i > 1 ? ", " : ""), kinds[i], v["kind." kinds[i] ".docs"])
    wl = ""
    for (n = 0; ; n++) { # the reasons, most frequent first
        best = ""
        for (w in why) if (best == "" || why[w] + 0 > why[best] + 0 || (why[w] + 0 == why[best] + 0 && w < best)) best = w
        if (best == "") break
        wl = wl sprintf("%s%s %d", (n ? ", " : ""), best, why[best])
        delete why[best]
    }
    compared = v["cmp.agree"] + v["cmp.disagree"]
    printf "### JSON repair benchmark (issue 4)\n\n"
    printf "- date: %s; CPU: %s; node %s; jsonrepair %s; %s; built with %s\n", date, cpu, v["node.version"], v["jsonrepair.version"], cc, how
    printf "- corpus: bench/bench_repair.c, fixed seed: %.2f MB in %d documents of broken model JSON (sha256 %s…), each broken in 1 to 3 ways; documents per kind: %s\n",
        v["input_bytes"] / 1e6, v["docs"], sum, kl
    printf "- every repair step of aw_json_repair applied somewhere in the corpus: %s; repaired by agentwire %d, by jsonrepair %d of %d (agentwire only %d, jsonrepair only %d, neither %d)\n",
        v["aw.all_steps_seen"], v["docs"] - v["aw.failed"], v["docs"] - v["js.failed"], v["docs"], v["cmp.aw_only"], v["cmp.js_only"], v["cmp.neither"]
    printf "- same value after JSON.parse where both repaired (untimed): %d of %d agree; %d disagree (why: %s; all listed in %s)\n",
        v["cmp.agree"], compared, v["cmp.disagree"], (wl == "" ? "—" : wl), file
    printf "- a pass over the corpus, document by document: best of %d (agentwire) and of %d (jsonrepair) passes; MB = 10^6 bytes of input; the goal judged by the ratio in CPU time of each process (which the machine'\''s other load does not inflate); load average when the run began: %s\n\n", v["aw.passes"], v["js.passes"], load
    printf "| benchmark | agentwire | JS peer | ratio | goal |\n|---|---|---|---|---|\n"
    a = v["aw.mbps"]; j = v["js.mbps"]
    cr = v["aw.cpu_mbps"] / v["js.cpu_mbps"]
    printf "| json repair: %.1f MB of broken model JSON (%d documents), aw_json_repair vs jsonrepair | %s | %s | %s | ≥ 100×: %s (CPU time: %s vs %s, %s) |\n",
        v["input_bytes"] / 1e6, v["docs"], rate(a), rate(j), times(a / j), (cr >= 100 ? "met" : "missed"),
        rate(v["aw.cpu_mbps"]), rate(v["js.cpu_mbps"]), times(cr)
    if (v["aw.all_steps_seen"] != "yes") { printf "\nrun_repair.sh: the corpus does not make every repair step happen\n"; exit 1 }
}'
