#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what it needs, builds and installs the
# package (with the C++ tests), then runs the C++ tests (GoogleTest through CTest) and the Python
# tests (pytest) against the installed package.
set -euo pipefail
cd "$(dirname "$0")/.."
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
scripts/install-system-deps.sh
scripts/install-python-deps.sh
python3 -m pip install -q --disable-pip-version-check --no-build-isolation . \
  -Cbuild-dir=build/pip -Ccmake.define.NXS_TESTS=ON
ctest --test-dir build/pip --output-on-failure -j2
# -P keeps the source tree off sys.path, so the tests import the installed package.
python3 -P -m pytest -q tests
