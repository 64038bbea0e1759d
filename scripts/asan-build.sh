#!/usr/bin/env bash
# The instrumented build shared by scripts/sanitize.sh and scripts/fuzz.sh: clang with
# AddressSanitizer + UndefinedBehaviorSanitizer everywhere, libFuzzer coverage on every library,
# the GoogleTest suite and the fuzz harnesses, in build/asan. Incremental.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-system-deps.sh
BUILD=build/asan
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ -DNXS_PYTHON=OFF -DNXS_TESTS=ON -DNXS_SANITIZE=ON -DNXS_FUZZ=ON >/dev/null
fi
cmake --build "$BUILD" -j "${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
