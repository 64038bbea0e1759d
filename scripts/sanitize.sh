#!/usr/bin/env bash
# The C++ tests under AddressSanitizer + UndefinedBehaviorSanitizer (any report fails the run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-system-deps.sh
BUILD=build/asan
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNXS_PYTHON=OFF -DNXS_TESTS=ON \
  -DNXS_SANITIZE=ON >/dev/null
cmake --build "$BUILD" -j "${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$BUILD" --output-on-failure -j2
