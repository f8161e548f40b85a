#!/usr/bin/env bash
# Install the build into a scratch prefix, then build and run a tiny
# program against the installed copy twice: through pkg-config and through
# the CMake package. Args: CMAKE BUILD_DIR SCRATCH [SANITIZER_FLAGS]
set -euo pipefail
cmake_bin=$1 build=$2 scratch=$3 san=${4:-}
san=${san//;/ }
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$scratch"
mkdir -p "$scratch"
prefix=$scratch/prefix
"$cmake_bin" --install "$build" --prefix "$prefix" > "$scratch/install.log"
libdir=$(dirname "$(find "$prefix" -name agentwire.pc | head -n 1)")/..
libdir=$(cd "$libdir" && pwd)

# 1. pkg-config, shared library
export PKG_CONFIG_PATH=$libdir/pkgconfig
cc $san -o "$scratch/consumer_pc" "$here/consumer.c" $(pkg-config --cflags --libs agentwire) -Wl,-rpath,"$libdir"
"$scratch/consumer_pc"

# 2. pkg-config, static library
cc $san -o "$scratch/consumer_static" "$here/consumer.c" -I"$prefix/include" "$libdir/libagentwire.a" \
   $(pkg-config --static --libs-only-l agentwire | sed 's/-lagentwire//')
"$scratch/consumer_static"

# 3. the CMake package
"$cmake_bin" -S "$here/cmake_consumer" -B "$scratch/cmake_build" -DCMAKE_PREFIX_PATH="$prefix" \
   -DCMAKE_C_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="$san" > "$scratch/cmake.log"
"$cmake_bin" --build "$scratch/cmake_build" > "$scratch/cmake_build.log"
LD_LIBRARY_PATH=$libdir "$scratch/cmake_build/consumer"
echo "install_consumer: pkg-config (shared and static) and CMake package all work"
