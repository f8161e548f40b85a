#!/usr/bin/env bash
# bench/run_schema.sh — the schema benchmark of issue 11, agentwire and ajv
# in one run, printed as BENCHMARKS.md rows:
#
#   | benchmark | agentwire | ajv | ratio | goal |
#
# The same instances against the same compiled schemas (bench/bench_schema.c
# writes them to BUILD_DIR/schema-data; bench/peers/schema_peer.js reads
# them): tool-argument-sized instances (100 bytes to 5 KB) against the
# inputSchemas of @modelcontextprotocol/server-filesystem and OpenAI-style
# functions (tests/schema-ajv/fixtures), and one 1 MB instance against a
# schema with $ref, patternProperties and unevaluatedProperties. Both sides
# validate parsed values (aw_json_value, JavaScript objects) for the verdict
# (agentwire: max_errors 0; ajv: its defaults, its fastest mode), formats
# asserted on both. Throughput in MB/s of instance JSON, µs per instance;
# compile time per schema (every fixture schema and the 1 MB row's; ajv: a
# fresh copy of each schema object so its cache never answers). Checked,
# untimed: both sides find the same number of valid instances per row (exit
# status 1 otherwise). Takes about 20 seconds.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: run_schema.sh BUILD_DIR (a Release build with AW_BENCH=ON)}
data=$build/schema-data
mkdir -p "$data"
how="CMake Release, AW_BENCH=ON"

load=$(cut -d' ' -f1-3 /proc/loadavg)
"$build/bench_schema" "$data" "$root/tests/schema-ajv/fixtures" >"$data/aw.txt"
node "$root/bench/peers/schema_peer.js" "$data" >"$data/js.txt"

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)

cat "$data/aw.txt" "$data/js.txt" | awk \
    -v date="$(date -u '+%Y-%m-%d %H:%M UTC')" -v cpu="$cpu ($(nproc) CPUs)" \
    -v cc="$(${CC:-gcc} --version | head -n1)" -v how="$how" -v load="$load" '
{ v[$1] = $2 }
function dur(us) { return us >= 1000 ? sprintf("%.2f ms", us / 1e3) : us >= 10 ? sprintf("%.1f µs", us) : sprintf("%.2f µs", us) }
function times(x) { return x >= 100 ? sprintf("%.0f×", x) : sprintf("%.2f×", x) }
function row(name, label,    a, j, r, cr) {
    a = v["aw." name ".mbps"]; j = v["js." name ".mbps"]; r = a / j
    cr = v["js." name ".cpu_us"] / v["aw." name ".cpu_us"]
    printf "| %s (%d instance%s, %.0f bytes on average) | %.1f MB/s, %s each | %.1f MB/s, %s each | %s | ≥ 1×: %s (CPU time: %s) |\n",
        label, v[name ".count"], v[name ".count"] == 1 ? "" : "s", v[name ".bytes"] / v[name ".count"],
        a, dur(v["aw." name ".us"]), j, dur(v["js." name ".us"]), times(r), (r >= 1 ? "met" : "missed"), times(cr)
    if (v["aw." name ".valid"] != v["js." name ".valid"] || v["aw." name ".valid"] != v[name ".count"]) {
        bad = bad sprintf("%s: agentwire finds %d valid, ajv %d, of %d\n", name, v["aw." name ".valid"], v["js." name ".valid"], v[name ".count"])
    }
}
END {
    printf "### Schema benchmark (issue 11)\n\n"
    printf "- date: %s; CPU: %s; node %s; ajv %s with ajv-formats %s; %s; built with %s\n", date, cpu, v["node.version"], v["ajv.version"], v["ajv-formats.version"], cc, how
    printf "- data: bench/bench_schema.c (fixed seed): valid tool arguments for the inputSchemas of @modelcontextprotocol/server-filesystem (read_text_file, list_directory_with_sizes, move_file, search_files, write_file; edit_file, read_multiple_files, directory_tree) and OpenAI-style functions (formats, $ref, anyOf, multipleOf), and a 1 MB inventory (%d bytes) against a 2020-12 schema with $ref, patternProperties and unevaluatedProperties; the same verdicts on both sides (checked, untimed)\n", v["big.bytes"]
    printf "- both validate parsed values for the verdict, schemas compiled once: agentwire `aw_schema_validate` with `max_errors` 0; ajv compiled to JavaScript, its defaults (the first error ends it), draft by `$schema`; formats asserted on both; best of 7 batches; the ratio is agentwire'\''s throughput over ajv'\''s; load average when the run began: %s\n\n", load
    printf "| benchmark | agentwire | ajv | ratio | goal |\n|---|---|---|---|---|\n"
    row("mcp-small", "MCP tool arguments, 100-300 B")
    row("mcp-1kb", "MCP tool arguments, about 1 KB")
    row("mcp-5kb", "MCP tool arguments, about 5 KB")
    row("openai", "OpenAI function arguments")
    row("big", "1 MB instance: $ref + patternProperties + unevaluatedProperties")
    a = v["aw.compile.us"]; j = v["js.compile.us"]
    printf "| compile, per schema (the %d schemas, mean) | %s | %s | %s faster | below ajv: %s |\n", v["compile.schemas"], dur(a), dur(j), times(j / a), (a < j ? "met" : "missed")
    a = v["aw.compile_big.us"]; j = v["js.compile_big.us"]
    printf "| compile the 1 MB row'\''s schema | %s | %s | %s faster | below ajv: %s |\n", dur(a), dur(j), times(j / a), (a < j ? "met" : "missed")
    if (bad != "") { printf "\nrun_schema.sh: the verdicts differ:\n%s", bad; exit 1 }
}'
