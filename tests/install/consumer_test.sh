#!/usr/bin/env bash
# Installs this build into a private prefix, then builds tests/install/consumer against it twice (CMake
# package, pkg-config) and runs both on a GGUF vocabulary; also runs the installed CLI. CTest test
# install_consumer (tests/CMakeLists.txt):
#   consumer_test.sh BUILD_DIR WORK_DIR CXX GENERATOR LIBDIR PKG_CONFIG GGUF
set -euo pipefail
build=$1 work=$2 cxx=$3 generator=$4 libdir=$5 pkg_config=$6 gguf=$7
src=$(cd "$(dirname "$0")/consumer" && pwd)
prefix=$work/prefix
rm -rf "$work" && mkdir -p "$work"

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
"$prefix/bin/realizar" --version

echo "--- find_package(trueno)"
cmake -S "$src" -B "$work/cmake" -G "$generator" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log"
cmake --build "$work/cmake" >"$work/build.log" || { cat "$work/build.log"; exit 1; }
"$work/cmake/consumer" "$gguf"

echo "--- pkg-config realizar"
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
read -ra flags <<<"$("$pkg_config" --cflags --libs realizar)"
echo "${flags[*]}"
"$cxx" -std=c++20 -O1 "$src/main.cpp" "${flags[@]}" -o "$work/consumer_pc"
"$work/consumer_pc" "$gguf"
