#!/usr/bin/env bash
# Development build: compiles the core, the bindings, the Cython codegen and the C++ tests into
# build/dev and puts the Python extension modules into the source tree, so that
# `PYTHONPATH=$PWD python -c "import neuronxsim"` works without installing. Incremental.
#   scripts/dev-build.sh [extra cmake -D options]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${NXS_BUILD_DIR:-build/dev}
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=${NXS_BUILD_TYPE:-RelWithDebInfo} \
    -DNXS_PYTHON=ON -DNXS_INPLACE=ON -DNXS_TESTS=ON \
    -Dpybind11_DIR="$(python3 -c 'import pybind11; print(pybind11.get_cmake_dir())')" "$@"
fi
cmake --build "$BUILD" -j "${NXS_JOBS:-2}"
