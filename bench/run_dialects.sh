#!/usr/bin/env bash
# bench/run_dialects.sh — the dialects benchmark of issue 18, agentwire and
# its Python peer in one run, printed as BENCHMARKS.md rows:
#
#   | benchmark | agentwire | vLLM's parsers (Python) | ratio | goal |
#
# Per dialect: the real replies of tests/vectors/dialects/NAME.json, each read
# whole by a fresh extractor with that dialect on (bench/bench_dialects.c),
# against bench/peers/dialects_peer.py, which does what vLLM's tool parser
# for that dialect does with a complete reply (its regular expressions and
# json/ast calls, written for this benchmark: vLLM cannot be installed here).
# Both are timed by the CPU time of their process (the machine's other load
# falls on neither), best of 3 rounds of at least 0.3 s. MB/s of reply bytes.
# Then the 1 MB prose reply with every dialect on ("auto"), whole and in
# 16-byte chunks, by the clock and by CPU time.
#
# Checks, untimed: agentwire finds every call the corpus names, and none (and
# no text lost) in the prose; exit status 1 otherwise.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: run_dialects.sh BUILD_DIR (a Release build with AW_BENCH=ON)}
data=$build/dialects-data
mkdir -p "$data"
command -v python3 >/dev/null || { echo "run_dialects.sh: python3 is needed for the peer (Debian: python3)" >&2; exit 1; }
names="hermes qwen3_coder glm45 granite llama3 pythonic mistral deepseek kimi_k2 minimax function_calls harmony fenced"

load=$(cut -d' ' -f1-3 /proc/loadavg)
"$build/bench_dialects" "$root/tests/vectors/dialects" "$data" >"$data/aw.txt"
# shellcheck disable=SC2086
python3 "$root/bench/peers/dialects_peer.py" "$root/tests/vectors/dialects" $names >"$data/py.txt"

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
sum=$(sha256sum "$data/prose-1MB.txt" | cut -c1-16)

cat "$data/aw.txt" "$data/py.txt" | awk \
    -v date="$(date -u '+%Y-%m-%d %H:%M UTC')" -v cpu="$cpu ($(nproc) CPUs)" \
    -v cc="$(${CC:-gcc} --version | head -n1)" -v sum="$sum" -v load="$load" -v names="$names" '
{ v[$1] = $2 }
function rate(x) { return x >= 100 ? sprintf("%.0f MB/s", x) : x >= 1 ? sprintf("%.1f MB/s", x) : sprintf("%.4f MB/s", x) }
function times(x) { return x >= 100 ? sprintf("%.0f×", x) : sprintf("%.1f×", x) }
END {
    n = split(names, ds, " ")
    ok = (v["aw.consistent"] == "yes")
    printf "### Dialects benchmark (issue 18)\n\n"
    printf "- date: %s; CPU: %s; Python %s; %s; CMake Release, AW_BENCH=ON; load average when the run began: %s\n", date, cpu, v["py.version"], cc, load
    printf "- inputs: the real replies of tests/vectors/dialects/ (each dialect'\''s file: %d replies in all, 5 to 12 a dialect, 80 to 400 bytes each, with their declared tools); a 1 MB prose reply from bench/bench_dialects.c (fixed seed, sha256 %s…: paragraphs, lists, links and citations in brackets, inline code with `<`, fences of Python, C and HTML, tables; no call)\n", v["aw.replies"], sum
    printf "- agentwire: a fresh extractor per reply (native mode, only that dialect on), fed the whole reply, then finish; the peer: bench/peers/dialects_peer.py, what vLLM'\''s parser for the dialect does with a complete reply (extract_tool_calls: its regular expressions, json.loads / raw_decode / ast.literal_eval, its schema conversion of string parameters, and the result objects it returns: %s models ToolCall / FunctionCall / ExtractedToolCallInformation, arguments written back with json.dumps, ids from uuid4), written for this benchmark from the parsers'\'' published logic because vLLM cannot be installed on this machine (no PyPI); vLLM has no parser for function_calls and fenced, so the peer uses the same kind of regular expression there, and gpt-oss'\''s parser in vLLM decodes token ids with openai_harmony (Rust) where the peer uses a regular expression on the text\n", v["py.protocol"]
    printf "- both by the CPU time of their process, best of 3 rounds of at least 0.3 s; MB = 10^6 bytes of reply; the calls each found on the corpus are shown (agentwire must find every one the corpus names: %s)\n\n", v["aw.consistent"]
    printf "| benchmark | agentwire | vLLM'\''s parsers (Python) | ratio | goal |\n|---|---|---|---|---|\n"
    met = 0
    for (i = 1; i <= n; i++) {
        d = ds[i]
        a = v["aw." d ".cpu_mbps"]; p = v["py." d ".mbps"]
        r = a / p
        if (r >= 20) met++
        printf "| dialects: %s, %d replies (calls found: agentwire %d, peer %d) | %s | %s | %s | ≥ 20×: %s |\n", d, v["aw." d ".replies"], v["aw." d ".calls"], v["py." d ".calls"], rate(a), rate(p), times(r), (r >= 20 ? "met" : "missed")
    }
    w = v["aw.prose.whole.cpu_mbps"]
    printf "| dialects: a 1 MB prose reply, auto, whole | %s (by the clock: %s) | — | — | ≥ 1 GB/s: %s |\n", rate(w), rate(v["aw.prose.whole.mbps"]), (w >= 1000 ? "met" : "missed")
    printf "| dialects: a 1 MB prose reply, auto, in 16-byte chunks | %s (by the clock: %s) | — | — | — |\n", rate(v["aw.prose.16.cpu_mbps"]), rate(v["aw.prose.16.mbps"])
    printf "\n%d of %d dialects at 20× or more.\n", met, n
    if (!ok) { printf "\nrun_dialects.sh: a check failed (see above)\n"; exit 1 }
}'
