#!/usr/bin/env bash
# The whole test suite, C++ and Python, against a build with the x86 SIMD paths compiled out
# (-DNXS_PORTABLE=ON): the code an aarch64 or pre-AVX2 host runs, which must give the same bits
# (cpp/sim/Simd.h); also with the enums bound through py::enum_ (-DNXS_ENUM_BINDER=OFF), as
# under a pybind11 other than 3.1 (cpp/python/bindings.h). The package goes into
# build/portable-site, not into the environment.
set -euo pipefail
cd "$(dirname "$0")/.."
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
scripts/install-system-deps.sh
scripts/install-python-deps.sh
SITE=build/portable-site
rm -rf "$SITE"
python3 -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps --target "$SITE" . \
  -Cbuild-dir=build/portable -Ccmake.define.NXS_TESTS=ON -Ccmake.define.NXS_PORTABLE=ON \
  -Ccmake.define.NXS_ENUM_BINDER=OFF
ctest --test-dir build/portable --output-on-failure -j2
PYTHONPATH="$PWD/$SITE" python3 -P -m pytest -q tests
