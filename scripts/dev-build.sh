#!/usr/bin/env bash
# Development build: compiles the core, the bindings, the Cython codegen and the C++ tests into
# build/dev and puts the Python extension modules into the source tree, so that
# `PYTHONPATH=$PWD python -c "import neuronxsim"` works without installing. Incremental; uses
# ccache when it is installed (with `base_dir` set, worktrees of one clone share its cache).
#   scripts/dev-build.sh [extra cmake -D options]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${NXS_BUILD_DIR:-build/dev}
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=${NXS_BUILD_TYPE:-RelWithDebInfo} \
    -DNXS_PYTHON=ON -DNXS_INPLACE=ON -DNXS_TESTS=ON "${launcher[@]}" \
    -Dpybind11_DIR="$(python3 -c 'import pybind11; print(pybind11.get_cmake_dir())')" "$@"
fi
cmake --build "$BUILD" -j "${NXS_JOBS:-2}"
