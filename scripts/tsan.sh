#!/usr/bin/env bash
# The C++ tests under ThreadSanitizer (the matmul kernel and lane-parallel instructions run on
# worker threads). Not part of CI: the extra clang build costs about 5 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-system-deps.sh
BUILD=build/tsan
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ -DNXS_PYTHON=OFF -DNXS_TESTS=ON -DCMAKE_CXX_FLAGS=-fsanitize=thread \
    -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread >/dev/null
fi
cmake --build "$BUILD" -j "${CMAKE_BUILD_PARALLEL_LEVEL:-2}" --target nxs_tests
TSAN_OPTIONS=halt_on_error=1 "$BUILD/cpp/nxs_tests"
