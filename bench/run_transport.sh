#!/usr/bin/env bash
# bench/run_transport.sh — the transport benchmark of issue 4, agentwire and
# its JavaScript peer in one run, printed as BENCHMARKS.md rows:
#
#   | benchmark | agentwire | JS peer | ratio | goal |
#
# Tag extraction from a model reply of 1, 4 and 16 MB (prose, markdown, code
# full of '<', eight tool tags a megabyte with JSON payloads, a FINAL report),
# fed whole, in 16-byte chunks and in 1-byte chunks: aw_extractor against
# a parser written the public way (append each chunk to a buffer, indexOf for
# the prefix, a regular expression for the slot, the whole buffer searched
# again on every chunk). MB/s of reply bytes by the clock; the goals (1 GB/s
# whole, 100 MB/s in 1-byte chunks, linear cost) are judged by agentwire's
# rate in CPU time, which the load of other processes on the machine does
# not inflate (both figures are shown).
#
# bench/bench_transport.c generates the replies (fixed seed) into
# BUILD_DIR/transport-data and measures agentwire; bench/peers/transport_peer.js
# (plain Node) measures the peer on the same files. A peer run that passes
# AW_TRANSPORT_PEER_BUDGET seconds (default 10) is abandoned and shown as
# "n/a (> N s)"; its ratio is then a lower bound (the peer would have needed
# more than N s for the whole reply), and the larger replies at that chunk
# size are not run. Checks, untimed: agentwire finds the
# same events at every chunking, and agentwire and the peer find the same
# calls and final report wherever the peer finished. Exit status 1 when a
# check fails. Takes about half a minute, nearly all of it the peer's.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: run_transport.sh BUILD_DIR (a Release build with AW_BENCH=ON)}
budget=${AW_TRANSPORT_PEER_BUDGET:-10}
data=$build/transport-data
mkdir -p "$data"
how="CMake Release, AW_BENCH=ON"

load=$(cut -d' ' -f1-3 /proc/loadavg)
"$build/bench_transport" "$data" >"$data/aw.txt"
nonce=$(sed -n 's/^nonce //p' "$data/aw.txt")
max_calls=$(sed -n 's/^max_calls //p' "$data/aw.txt")
node "$root/bench/peers/transport_peer.js" "$data" "$nonce" "$max_calls" "$budget" >"$data/js.txt"

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
sum=$(sha256sum "$data/reply-1MB.txt" | cut -c1-16)

cat "$data/aw.txt" "$data/js.txt" | awk \
    -v date="$(date -u '+%Y-%m-%d %H:%M UTC')" -v cpu="$cpu ($(nproc) CPUs)" \
    -v cc="$(${CC:-gcc} --version | head -n1)" -v how="$how" -v sum="$sum" -v load="$load" '
{ v[$1] = $2 }
function rate(x) { return x >= 100 ? sprintf("%.0f MB/s", x) : sprintf("%.1f MB/s", x) }
function times(x) { return x >= 100 ? sprintf("%.0f×", x) : sprintf("%.1f×", x) }
function label(c) { return c == "whole" ? "whole" : (c == "16" ? "in 16-byte chunks" : "in 1-byte chunks") }
END {
    split("1 4 16", sizes, " "); split("whole 16 1", chunks, " ")
    ok = (v["aw.consistent"] == "yes"); agree = "yes"; compared = 0
    for (i = 1; i <= 3; i++) for (k = 1; k <= 3; k++) {
        key = sizes[i] "." chunks[k]
        if (("js." key ".calls") in v) {
            compared++
            if (v["js." key ".calls"] != v["aw." key ".calls"] || v["js." key ".finals"] != v["aw." key ".finals"]) agree = "no"
        }
    }
    if (agree != "yes" || compared == 0) ok = 0
    printf "### Transport benchmark (issue 4)\n\n"
    printf "- date: %s; CPU: %s; node %s; %s; built with %s\n", date, cpu, v["node.version"], cc, how
    printf "- replies: bench/bench_transport.c, fixed seed: %.2f, %.2f and %.2f MB of prose, markdown and code with `<` (1 MB reply: sha256 %s…), %d/%d/%d tool tags with JSON payloads and one FINAL report; session: xml mode, nonce %s, %d calls a turn\n",
        v["reply.1.bytes"] / 1e6, v["reply.4.bytes"] / 1e6, v["reply.16.bytes"] / 1e6, sum,
        v["reply.1.tool_tags"], v["reply.4.tool_tags"], v["reply.16.tool_tags"], v["nonce"], v["max_calls"]
    printf "- peer: bench/peers/transport_peer.js, the public approach: each chunk appended to a string, the whole string searched again on every chunk (`indexOf` for the prefix, a sticky regular expression for nonce, slot and attributes, `indexOf` for the closing tag); a run past %d s is abandoned (n/a; the ratio is then a lower bound: the peer would need more than %d s for the whole reply) and the larger replies at that chunk size are not run (its cost grows with the square of the length)\n",
        v["js.budget_s"], v["js.budget_s"]
    printf "- checks (untimed): agentwire reports the same events at every chunking and a call for every tag: %s; agentwire and the peer find the same calls and final report in every run the peer finished (%d runs): %s\n",
        v["aw.consistent"], compared, agree
    printf "- agentwire: the best of %d rounds of the nine runs (sizes and chunkings interleaved, so that load from elsewhere falls on all alike); the peer: the best of up to 5 runs, fewer once 3 s are spent; MB = 10^6 bytes of reply; goals judged by agentwire'\''s rate in CPU time of the process (which the machine'\''s other load does not inflate), shown in the goal column; linearity: the rate at 4 and 16 MB over the rate at 1 MB, by CPU time (met at 0.75× or more); load average when the run began: %s\n\n", v["aw.rounds"], load

    printf "| benchmark | agentwire | JS peer | ratio | goal |\n|---|---|---|---|---|\n"
    # linearity: the rate at 4 and 16 MB against the rate at 1 MB, by CPU time
    for (k = 1; k <= 3; k++) lin[chunks[k]] = v["aw.16." chunks[k] ".cpu_mbps"] / v["aw.1." chunks[k] ".cpu_mbps"]
    for (i = 1; i <= 3; i++) for (k = 1; k <= 3; k++) {
        s = sizes[i]; c = chunks[k]; key = s "." c
        a = v["aw." key ".mbps"]
        if (("js." key ".mbps") in v) { j = rate(v["js." key ".mbps"]); r = times(a / v["js." key ".mbps"]) }
        else if (("js." key ".timeout_s") in v) {
            j = sprintf("n/a (> %d s; %.2f MB done)", v["js." key ".timeout_s"], v["js." key ".done_bytes"] / 1e6)
            r = "> " times(a / (v["reply." s ".bytes"] / 1e6 / v["js." key ".timeout_s"]))
        } else { j = "n/a (not run: a smaller reply took > " v["js.budget_s"] " s)"; r = "n/a" }
        goal = "—"
        cpu = v["aw." key ".cpu_mbps"]
        if (s == 1 && c == "whole") goal = sprintf("≥ 1 GB/s: %s (CPU time: %s)", cpu >= 1000 ? "met" : "missed", rate(cpu))
        if (s == 1 && c == "1") goal = sprintf("≥ 100 MB/s: %s (CPU time: %s)", cpu >= 100 ? "met" : "missed", rate(cpu))
        if (s == 4) goal = sprintf("linear: %.2f× the 1 MB rate", v["aw.4." c ".cpu_mbps"] / v["aw.1." c ".cpu_mbps"])
        if (s == 16) goal = sprintf("linear: %.2f× the 1 MB rate: %s", lin[c], lin[c] >= 0.75 ? "met" : "missed")
        printf "| transport: extract from a %d MB reply, %s | %s | %s | %s | %s |\n", s, label(c), rate(a), j, r, goal
    }
    if (!ok) { printf "\nrun_transport.sh: a check failed (see above)\n"; exit 1 }
}'
