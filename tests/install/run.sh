#!/usr/bin/env bash
# Install the build into a scratch prefix, then build and run a tiny program
# against the installed copy four ways: pkg-config with the shared library,
# pkg-config --static with the static one, and the CMake package's
# agentwire::agentwire_shared and agentwire::agentwire_static. Each static
# program must not need libagentwire.so; each shared one must.
# Args: CMAKE BUILD_DIR SCRATCH [SANITIZER_FLAGS]
set -euo pipefail
cmake_bin=$1 build=$2 scratch=$3 san=${4:-}
san=${san//;/ }
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$scratch"
mkdir -p "$scratch"
prefix=$scratch/prefix
"$cmake_bin" --install "$build" --prefix "$prefix" >"$scratch/install.log"
libdir=$(dirname "$(find "$prefix" -name agentwire.pc | head -n 1)")/..
libdir=$(cd "$libdir" && pwd)
[ -f "$prefix/share/doc/agentwire/LICENSE" ] || { echo "LICENSE not installed" >&2; exit 1; }

# the program prints its checks; "needs": whether it loads libagentwire.so
run() {
    local exe=$1 needs=$2
    if readelf -d "$exe" | grep -q 'NEEDED.*libagentwire\.so'; then
        [ "$needs" = shared ] || { echo "$exe: linked to libagentwire.so, expected the static library" >&2; exit 1; }
    else
        [ "$needs" = static ] || { echo "$exe: not linked to libagentwire.so" >&2; exit 1; }
    fi
    "$exe" >"$exe.out" || { cat "$exe.out"; echo "$exe failed" >&2; exit 1; }
    grep -q '^thread decoded$' "$exe.out" || { echo "$exe: wrong output" >&2; cat "$exe.out"; exit 1; }
    grep -q '^schema checked$' "$exe.out" || { echo "$exe: wrong output" >&2; cat "$exe.out"; exit 1; }
}

# 1. pkg-config, shared library
export PKG_CONFIG_PATH=$libdir/pkgconfig
cc $san -o "$scratch/pc_shared" "$here/consumer.c" $(pkg-config --cflags --libs agentwire) -Wl,-rpath,"$libdir"
run "$scratch/pc_shared" shared

# 2. pkg-config --static: its libraries (expat, libm) complete the static
# link; -l:libagentwire.a picks the archive where -lagentwire would find
# the shared library beside it
static_libs=$(pkg-config --static --libs agentwire | sed 's/-lagentwire\b/-l:libagentwire.a/')
case $static_libs in *-lexpat*) ;; *) echo "pkg-config --static does not name expat: $static_libs" >&2; exit 1 ;; esac
case $static_libs in *-lpcre2-8*) ;; *) echo "pkg-config --static does not name PCRE2: $static_libs" >&2; exit 1 ;; esac
cc $san -o "$scratch/pc_static" "$here/consumer.c" $(pkg-config --static --cflags agentwire) $static_libs
run "$scratch/pc_static" static

# 3. the CMake package, both targets
"$cmake_bin" -S "$here/cmake_consumer" -B "$scratch/cmake_build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="$san" >"$scratch/cmake.log" ||
    { cat "$scratch/cmake.log"; exit 1; }
"$cmake_bin" --build "$scratch/cmake_build" >"$scratch/cmake_build.log" || { cat "$scratch/cmake_build.log"; exit 1; }
run "$scratch/cmake_build/consumer_shared" shared
run "$scratch/cmake_build/consumer_static" static
# 4. libagentwire-runtime, the same four ways: pkg-config (shared and
# --static, which must bring libcurl and the codec library) and the CMake
# package's two runtime targets
printf '{"text":"hello"}\n' >"$scratch/replay.jsonl"
run_rt() {
    local exe=$1 needs=$2
    if readelf -d "$exe" | grep -q 'NEEDED.*libagentwire-runtime\.so'; then
        [ "$needs" = shared ] || { echo "$exe: linked to libagentwire-runtime.so, expected the static library" >&2; exit 1; }
    else
        [ "$needs" = static ] || { echo "$exe: not linked to libagentwire-runtime.so" >&2; exit 1; }
    fi
    "$exe" "$scratch/replay.jsonl" >"$exe.out" || { cat "$exe.out"; echo "$exe failed" >&2; exit 1; }
    grep -q '^runtime ok$' "$exe.out" || { echo "$exe: wrong output" >&2; cat "$exe.out"; exit 1; }
}
cc $san -o "$scratch/rt_pc_shared" "$here/runtime_consumer.c" $(pkg-config --cflags --libs agentwire-runtime) \
    -Wl,-rpath,"$libdir"
run_rt "$scratch/rt_pc_shared" shared
rt_static_libs=$(pkg-config --static --libs agentwire-runtime |
    sed 's/-lagentwire-runtime\b/-l:libagentwire-runtime.a/; s/-lagentwire\b/-l:libagentwire.a/')
case $rt_static_libs in *-lcurl*) ;; *) echo "pkg-config --static does not name libcurl: $rt_static_libs" >&2; exit 1 ;; esac
case $rt_static_libs in *-lyaml*) ;; *) echo "pkg-config --static does not name libyaml: $rt_static_libs" >&2; exit 1 ;; esac
cc $san -o "$scratch/rt_pc_static" "$here/runtime_consumer.c" $(pkg-config --static --cflags agentwire-runtime) \
    $rt_static_libs
run_rt "$scratch/rt_pc_static" static
run_rt "$scratch/cmake_build/runtime_consumer_shared" shared
run_rt "$scratch/cmake_build/runtime_consumer_static" static
echo "install_consumer: pkg-config (shared, --static) and the CMake package (shared and static targets) all build and run, for libagentwire and libagentwire-runtime"
