#!/usr/bin/env bash
# bench/run_contract.sh — the contract benchmark of issue 5, agentwire and
# its JavaScript peer in one run, printed as BENCHMARKS.md rows:
#
#   | benchmark | agentwire | JS peer | ratio | goal |
#
# Parse and validate a 10 KB <llmResponse> (valid per
# contracts/llmResponse.json, written by bench/bench_contract.c into
# BUILD_DIR/contract-data) to the typed result: aw_contract_parse with the
# built-in contract, against npm fast-xml-parser configured as the seed's
# project did plus the same validation rules in JavaScript
# (bench/peers/contract_peer.js). µs per document by the clock; the goal
# (10x) is judged by the ratio in CPU time of the two processes, which the
# load of other processes on the machine does not inflate.
#
# Rows: (1) the issue's comparison: agentwire (well-formedness, the
# contract's rules, typed JSON) against XMLParser.parse + the rules (which
# does not check well-formedness); (2) the same with the peer calling
# XMLValidator.validate first, so that both sides enforce the seed's rule 1;
# (3) aw_contract_validate alone (no JSON result) against the same peer.
# Check, untimed: the peer's typed result equals agentwire's (exit status 1
# otherwise). Takes about 10 seconds.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: run_contract.sh BUILD_DIR (a Release build with AW_BENCH=ON)}
data=$build/contract-data
mkdir -p "$data"
how="CMake Release, AW_BENCH=ON"

load=$(cut -d' ' -f1-3 /proc/loadavg)
"$build/bench_contract" "$data" >"$data/aw.txt"
node "$root/bench/peers/contract_peer.js" "$data" >"$data/js.txt"

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
sum=$(sha256sum "$data/llmResponse-10KB.xml" | cut -c1-16)

cat "$data/aw.txt" "$data/js.txt" | awk \
    -v date="$(date -u '+%Y-%m-%d %H:%M UTC')" -v cpu="$cpu ($(nproc) CPUs)" \
    -v cc="$(${CC:-gcc} --version | head -n1)" -v how="$how" -v sum="$sum" -v load="$load" '
{ v[$1] = $2 }
function dur(us) { return us >= 1000 ? sprintf("%.2f ms", us / 1e3) : sprintf("%.1f µs", us) }
function times(x) { return x >= 100 ? sprintf("%.0f×", x) : sprintf("%.1f×", x) }
END {
    printf "### Contract benchmark (issue 5)\n\n"
    printf "- date: %s; CPU: %s; node %s; fast-xml-parser %s; %s; built with %s\n", date, cpu, v["node.version"], v["fxp.version"], cc, how
    printf "- document: bench/bench_contract.c, a %d-byte `<llmResponse>` (sha256 %s…): a %.1f KB response with entities, 3 subjects × 10 keywords (the contract maxima), a summary; valid, also with `--strict`\n",
        v["doc_bytes"], sum, v["response_bytes"] / 1024
    printf "- peer: bench/peers/contract_peer.js: fast-xml-parser as the seed project set it up (`ignoreAttributes: false`, `attributeNamePrefix: '\'''\''`, `parseAttributeValue: true`, `trimValues: true`), then the seed'\''s ten response rules and the issue'\''s attribute rules in JavaScript, ending in the same typed result as agentwire'\''s (checked, untimed: %s)\n", v["same_result"]
    printf "- %d (agentwire) and %d (peer, after as many to warm up) documents in a row, 7 batches, the best batch'\''s mean per document; the goal judged by the ratio in CPU time of each process (all its threads; the machine'\''s other load does not inflate it); load average when the run began: %s\n\n", v["aw.iterations"], v["js.iterations"], load
    printf "| benchmark | agentwire | JS peer | ratio | goal |\n|---|---|---|---|---|\n"
    a = v["aw.parse.us"]; j = v["js.parse.us"]; cr = v["js.parse.cpu_us"] / v["aw.parse.cpu_us"]
    printf "| contract: parse + validate a %.0f KB `<llmResponse>` to typed JSON (peer: `XMLParser.parse` + rules) | %s | %s | %s | ≥ 10×: %s (CPU time: %s vs %s, %s) |\n",
        v["doc_bytes"] / 1024, dur(a), dur(j), times(j / a), (cr >= 10 ? "met" : "missed"),
        dur(v["aw.parse.cpu_us"]), dur(v["js.parse.cpu_us"]), times(cr)
    j = v["js.checked.us"]; cr = v["js.checked.cpu_us"] / v["aw.parse.cpu_us"]
    printf "| contract: the same, the peer also checking well-formedness first (`XMLValidator.validate`, seed rule 1) | %s | %s | %s | ≥ 10×: %s (CPU time: %s vs %s, %s) |\n",
        dur(a), dur(j), times(j / a), (cr >= 10 ? "met" : "missed"),
        dur(v["aw.parse.cpu_us"]), dur(v["js.checked.cpu_us"]), times(cr)
    a = v["aw.validate.us"]
    printf "| contract: validate only, no JSON result (`aw_contract_validate`; peer as in the first row) | %s | %s | %s | — |\n",
        dur(a), dur(v["js.parse.us"]), times(v["js.parse.us"] / a)
    if (v["same_result"] != "yes") { printf "\nrun_contract.sh: the peer'\''s typed result differs from agentwire'\''s\n"; exit 1 }
}'
