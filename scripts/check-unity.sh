#!/usr/bin/env bash
# Checks that each compiled area's sources still compile as ONE translation unit, as the pip
# build's unity batches put them together (docs/architecture.md, "Building"): two file-local
# helpers of the same name in two files of one area break only the pip build, in whichever batch
# happens to hold both. This parses each area's files as one unit (no code generated: about half a
# minute), so it catches such a clash whatever the batch boundaries are. Run it after adding or
# renaming C++ files or file-local helpers; the dev build (scripts/dev-build.sh) compiles files
# one by one and cannot see it.
#   scripts/check-unity.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cxx=${CXX:-g++}
unit=$(mktemp --suffix=.cpp)
trap 'rm -f "$unit"' EXIT
python_include=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
pybind11_include=$(python3 -c 'import pybind11; print(pybind11.get_include())')
status=0
for area in bir sim walrus python; do
  find "cpp/$area" -name '*.cpp' | LC_ALL=C sort | sed "s|.*|#include \"$PWD/&\"|" >"$unit"
  if "$cxx" -std=c++20 -fsyntax-only -Icpp -Icpp/python -isystem cpp/third_party \
      -isystem "$python_include" -isystem "$pybind11_include" "$unit"; then
    echo "cpp/$area: compiles as one unit"
  else
    echo "cpp/$area: does NOT compile as one unit (see above; rename the clashing file-local names)"
    status=1
  fi
done
exit $status
