#!/usr/bin/env bash
# bench/run_runtime.sh BUILD_DIR — the runtime benchmark of issue 12: the same
# agent job run by `agentwire run` and by a Node.js loop on the official
# `openai` SDK (bench/peers/runtime_peer.js), both against the same local
# stub of the Chat Completions API (stub_llm, 127.0.0.1) and the same
# command tool, in the same run:
#
#   the job: 50 turns of 5 read_file calls each (a command tool: `sh`
#   reading the arguments on stdin, then printing a 1 KB file), then the
#   answer; every reply one write of the stub, streamed as SSE.
#
# Each runtime starts through bench/runtime_launch (its start time; its pid
# for the stub) with bench/preload/rusage_at_exit.so preloaded (its own
# getrusage at exit: CPU of all its threads and peak RSS, no child's). The
# stub logs when each request arrived and the runtime's CPU time then. The
# runtimes take turns, AW_BENCH_ROUNDS rounds (default 3), best of each,
# with bench/first_request_floor (libcurl and one POST, nothing else) for
# the time to the first request. Then one 200-turn run of each, for the
# CPU a turn early, midway and late, and the 200 turns of agentwire once
# more under callgrind (when valgrind is installed), for its user-space
# instructions a turn, which no other load on the machine changes.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: run_runtime.sh BUILD_DIR (a Release build with AW_BENCH=ON)}" && pwd)
rounds=${AW_BENCH_ROUNDS:-3}
turns=${AW_RUNTIME_TURNS:-50}
calls=${AW_RUNTIME_CALLS:-5}
long_turns=${AW_RUNTIME_LONG_TURNS:-200}
nonce=5eed1e55
data=$build/runtime-data
rm -rf "$data"
mkdir -p "$data"
[ -d "$root/bench/peers/node_modules/openai" ] || (cd "$root/bench/peers" && npm ci --silent --no-audit --no-fund)
for f in agentwire stub_llm runtime_launch rusage_at_exit.so first_request_floor; do
    [ -e "$build/$f" ] || { echo "run_runtime.sh: $build/$f is missing (make bench builds it)" >&2; exit 1; }
done
job="node $root/bench/runtime_job.js"

# the tool: its arguments read (as any tool does), then 1 KB of "source"
head -c 1024 "$root/runtime/run.c" >"$data/file.txt"
cat >"$data/tools.json" <<EOF
[{"name": "read_file", "description": "Read a file of the project.",
  "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
  "command": ["sh", "-c", "cat >/dev/null && cat \"\$1\"", "read_file", "$data/file.txt"]}]
EOF
system="You are a coding agent. Read the files you are asked about."
task="Read the files of the project, five at a time."

# stub DIR TURNS MODE: a stub for a job of TURNS turns in DIR (emptied);
# sets STUB (its pid) and URL
stub() {
    rm -rf "$1"
    mkdir -p "$1/xdg"
    $job script "$2" "$calls" "$3" "$nonce" >"$1/script.jsonl"
    "$build/stub_llm" --script "$1/script.jsonl" --log "$1/log.jsonl" --timeout-ms 600000 \
        --client-pid-file "$1/pid" >"$1/port" 2>"$1/stub.err" &
    STUB=$!
    local port=
    for _ in $(seq 200); do
        port=$(head -n 1 "$1/port" 2>/dev/null || true)
        [ -n "$port" ] && break
        sleep 0.05
    done
    URL=http://127.0.0.1:$port/v1
}

# agentwire TURNS: the command line of agentwire for a job of TURNS turns
agentwire() {
    AGENTWIRE=("$build/agentwire" run --model openai:stub-model --base-url "$URL" --tools "$data/tools.json"
               --system "$system" --parallel "$calls" --max-turns $(($1 + 10)) --quiet)
}

# run NAME TURNS MODE: one run of the runtime NAME, its measurement on stdout
run() {
    local name=$1 n=$2 mode=$3 dir=$data/$1-$2
    stub "$dir" "$n" "$mode"
    local stub_pid=$STUB
    local launch=("$build/runtime_launch" "$build/rusage_at_exit.so" "$dir/pid" "$dir/rusage.json" "$dir/launch.json" --)
    agentwire "$n"
    case $name in
    agentwire-native) "${launch[@]}" "${AGENTWIRE[@]}" --no-store "$task" ;;
    agentwire-xml) "${launch[@]}" "${AGENTWIRE[@]}" --no-store --transport xml --nonce "$nonce" "$task" ;;
    agentwire-native-store) XDG_DATA_HOME=$dir/xdg "${launch[@]}" "${AGENTWIRE[@]}" "$task" ;;
    curl-floor) "${launch[@]}" "$build/first_request_floor" "$URL/chat/completions" ;;
    openai-sdk) "${launch[@]}" node "$root/bench/peers/runtime_peer.js" "$URL" stub-model "$data/tools.json" \
        "$system" "$task" $((n + 10)) ;;
    esac >"$dir/out" 2>"$dir/err" </dev/null
    wait "$stub_pid" || { echo "run_runtime.sh: the stub failed for $name: $(cat "$dir/stub.err")" >&2; exit 1; }
    [ -s "$dir/rusage.json" ] || { echo "run_runtime.sh: $name left no rusage: $(tail -c 600 "$dir/err")" >&2; exit 1; }
    $job measure "$name" "$dir/launch.json" "$dir/rusage.json" "$dir/log.jsonl"
}

export OPENAI_API_KEY=sk-bench
: >"$data/results.jsonl"
for ((round = 1; round <= rounds; round++)); do
    for name in agentwire-native agentwire-xml agentwire-native-store openai-sdk; do
        mode=native
        [ "$name" = agentwire-xml ] && mode=xml
        run "$name" "$turns" "$mode" >>"$data/results.jsonl"
    done
    run curl-floor 0 native >>"$data/results.jsonl"
done
: >"$data/long.jsonl"
run agentwire-native "$long_turns" native >>"$data/long.jsonl"
run agentwire-xml "$long_turns" xml >>"$data/long.jsonl"
run openai-sdk "$long_turns" native >>"$data/long.jsonl"
# agentwire's own work a turn, counted in instructions (deterministic,
# whatever else the machine runs): the long native run again under
# callgrind, dumped at each model request (when valgrind is installed).
if command -v valgrind >/dev/null 2>&1; then
    cdir=$data/callgrind
    stub "$cdir" "$long_turns" native
    agentwire "$long_turns"
    # under valgrind a turn takes longer: no request timeout to fear here
    valgrind --tool=callgrind --dump-before=aw_http_start --callgrind-out-file="$cdir/cg.%p" \
        --log-file="$cdir/valgrind.log" "${AGENTWIRE[@]}" --no-store "$task" >"$cdir/out" 2>"$cdir/err" </dev/null
    wait "$STUB"
    $job callgrind "$cdir" >"$data/callgrind.json"
else
    echo "(valgrind is not installed: no instruction count a turn)" >&2
fi

versions="openai $(node -p 'require(process.argv[1]).version' "$root/bench/peers/node_modules/openai/package.json") on node $(node -p process.versions.node)"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
echo "### Runtime benchmark (issue 12)"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); CPU: $cpu ($(nproc) CPUs); $versions; load average when it ended: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- the job: $turns turns of $calls \`read_file\` calls each (a command tool: \`sh\` reads the arguments, prints a 1 KB file), then the answer; the stub (\`stub_llm\`, 127.0.0.1) streams each reply as SSE in one write; best of $rounds rounds, the runtimes taking turns"
echo "- CPU time and peak RSS: \`getrusage(RUSAGE_SELF)\` of the runtime's own process at its exit (all its threads; the tools, the stub and the launcher not counted), written by a preloaded shim (\`bench/preload/rusage_at_exit.c\`) the same way for both (the user/sys split is the kernel's estimate, the sum is exact); time to first request: from the moment the launcher execs the runtime (\`bench/runtime_launch.c\`) to the stub having the whole first request, and in brackets the runtime's CPU time by then (the wall time waits for the CPU when other work runs)"
echo "- CPU a turn: in a $long_turns-turn run, the runtime's CPU time as the stub reads it (\`/proc/PID/task/*/schedstat\`) when turn t's request arrives and when turn t+1's does: what the runtime spent on one turn (reading the reply, starting $calls tools and reading their output, building and sending the next request, the kernel's work for it included); instructions a turn: the same turns of agentwire under callgrind, dumped at each request (user space only, the same whatever else runs)"
echo
$job table "$data/results.jsonl" "$data/long.jsonl" "$data/callgrind.json"
