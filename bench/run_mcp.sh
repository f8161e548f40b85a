#!/usr/bin/env bash
# bench/run_mcp.sh — the MCP benchmark of issue 13: tool-call round trips
# against server-everything's echo tool (a real server from npm, the one
# tests/mcp pins), agentwire's client (bench/bench_mcp.c) against the
# official TypeScript SDK client (bench/peers/mcp_peer.js), in the same run:
#
#   | benchmark | agentwire | TS SDK | ratio | goal |
#
# For one call at a time and for 8 in flight: calls per second, and each
# client's own CPU time per call (getrusage / process.cpuUsage of the client
# process; the server is a separate process whose CPU is shown apart, read
# from /proc). Both sides run AW_BENCH_ROUNDS times (default 3), taking
# turns; the best round of each is shown. AW_MCP_CALLS calls a pass (5000).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: run_mcp.sh BUILD_DIR (a Release build with AW_BENCH=ON)}
rounds=${AW_BENCH_ROUNDS:-3}
calls=${AW_MCP_CALLS:-5000}
data=$build/mcp-data
mkdir -p "$data"
[ -d "$root/tests/mcp/node_modules" ] || (cd "$root/tests/mcp" && npm ci --silent --no-audit --no-fund)
server=$root/tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js
load=$(cut -d' ' -f1-3 /proc/loadavg)

: >"$data/aw.txt"
: >"$data/js.txt"
for ((round = 1; round <= rounds; round++)); do
    "$build/bench_mcp" "$server" "$calls" >>"$data/aw.txt"
    (cd "$root/bench/peers" && node mcp_peer.js "$server" "$calls") >>"$data/js.txt"
done

versions=$(cd "$root" && node -e '
const v = (p) => require(p + "/package.json").version;
console.log("server-everything " + v("./tests/mcp/node_modules/@modelcontextprotocol/server-everything") +
            "; @modelcontextprotocol/sdk " + v("./bench/peers/node_modules/@modelcontextprotocol/sdk") + "; node " + process.versions.node)')
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)

{ sed 's/^/aw /' "$data/aw.txt"; sed 's/^/js /' "$data/js.txt"; } | awk \
    -v date="$(date -u '+%Y-%m-%d %H:%M UTC')" -v cpu="$cpu ($(nproc) CPUs)" -v versions="$versions" \
    -v rounds="$rounds" -v calls="$calls" -v load="$load" '
{
    side = $1; mode = $2
    for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
    rate = f["calls"] / f["seconds"]; cpu_call = f["client_cpu_us"] / f["calls"]; srv_call = f["server_cpu_us"] / f["calls"]
    k = side "." mode
    if (!(k in best_rate) || rate > best_rate[k]) best_rate[k] = rate
    if (!(k in best_cpu) || cpu_call < best_cpu[k]) { best_cpu[k] = cpu_call; srv[k] = srv_call }
    user_call = f["client_user_us"] / f["calls"]
    if (!(k in best_user) || user_call < best_user[k]) best_user[k] = user_call
}
function times(x) { return x >= 100 ? sprintf("%.0f×", x) : sprintf("%.1f×", x) }
END {
    printf "### MCP benchmark (issue 13)\n\n"
    printf "- date: %s; CPU: %s; %s\n", date, cpu, versions
    printf "- %d echo calls a pass (`{\"message\": \"hello, world\"}`), after a warm-up; best of %d passes each, agentwire and the SDK taking turns; load average when the run began: %s\n", calls, rounds, load
    printf "- client CPU: user + system time of the client process only (getrusage; process.cpuUsage); the server runs as a child process and its CPU per call (from /proc) is shown in the goal column of the calls/s rows; user-space CPU leaves out the kernel'\''s share (system calls, and being put to sleep and woken for every answer, which both clients pay; the kernel splits a process'\''s CPU time into user and system time by sampling, so that row is an estimate)\n\n"
    printf "| benchmark | agentwire | TS SDK | ratio | goal |\n|---|---|---|---|---|\n"
    split("sequential inflight8", modes, " ")
    names["sequential"] = "one call at a time"; names["inflight8"] = "8 calls in flight"
    for (m = 1; m <= 2; m++) {
        mode = modes[m]; a = "aw." mode; j = "js." mode
        printf "| echo round trips, %s: calls/s | %.0f | %.0f | %s | bounded by the server (its CPU per call: %.0f µs with agentwire, %.0f µs with the SDK) |\n",
            names[mode], best_rate[a], best_rate[j], times(best_rate[a] / best_rate[j]), srv[a], srv[j]
        r = best_cpu[j] / best_cpu[a]
        printf "| echo round trips, %s: client CPU per call | %.1f µs | %.1f µs | %s less | ≥ 10× less: %s |\n",
            names[mode], best_cpu[a], best_cpu[j], times(r), (r >= 10 ? "met" : "missed")
        u = best_user[j] / best_user[a]
        printf "| echo round trips, %s: client user-space CPU per call (its own work, without the kernel'\''s) | %.1f µs | %.1f µs | %s less | (shown to tell the client'\''s work from the cost of waiting) |\n",
            names[mode], best_user[a], best_user[j], times(u)
    }
}'
