#!/usr/bin/env bash
# bench/run.sh BUILD_DIR [NAME...] — run the benchmarks, agentwire and its
# JavaScript peer in the same run, and print BENCHMARKS.md sections.
#
# Each bench/run_NAME.sh takes the Release build directory (CMake, AW_BENCH=ON,
# made by `make bench`) and prints one Markdown section with a row per
# measurement: agentwire, the peer, the ratio and the issue's goal. Without
# NAME every benchmark runs. The whole output is also kept in
# BUILD_DIR/BENCHMARKS.latest.md, ready to be copied into BENCHMARKS.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: bench/run.sh BUILD_DIR [NAME...]}" && pwd)
shift
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    for f in "$root"/bench/run_*.sh; do
        n=$(basename "$f" .sh)
        names+=("${n#run_}")
    done
fi
out=$build/BENCHMARKS.latest.md
: >"$out"
status=0
for n in "${names[@]}"; do
    script=$root/bench/run_$n.sh
    [ -f "$script" ] || { echo "bench/run.sh: no benchmark '$n' ($script)" >&2; exit 2; }
    echo "== $n" >&2
    if ! bash "$script" "$build" | tee -a "$out"; then
        echo "bench/run.sh: benchmark '$n' failed" >&2
        status=1
    fi
    echo >>"$out"
done
echo "(written to $out)" >&2
exit $status
