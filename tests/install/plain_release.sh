#!/usr/bin/env bash
# The build every packager and most users run, exactly as README.md gives
# it: nothing but -DCMAKE_BUILD_TYPE=Release (tests included, by default),
# with the compiler's default flags. It must configure and build, and the
# command it builds must run. Args: [BUILD_DIR] (default build/plain-release)
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-build/plain-release}
rm -rf "$dir"
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release && cmake --build "$dir" -j "$(nproc)"
"$dir/agentwire" --version
