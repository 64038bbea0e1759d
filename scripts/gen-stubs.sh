#!/usr/bin/env bash
# Writes the type stubs (.pyi) of the compiled modules (the pybind11 core `_core` and the Cython
# codegen) from the built package with pybind11-stubgen (PyPI). The stubs are checked in;
# tests/test_api_typed_stubs.py fails when a module no longer matches its stub.
#   scripts/dev-build.sh && scripts/gen-stubs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --disable-pip-version-check "pybind11-stubgen>=2.5"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
codegen=neuronxsim.starfish.penguin.targets.codegen
for module in neuronxsim.starfish.lib._core $codegen.BirCodeGenLoop $codegen.KernelBuilder; do
  PYTHONPATH=$PWD python3 -m pybind11_stubgen --exit-code -o "$out" \
    --enum-class-locations "DType|TensorKind|MemoryType|Engine:neuronxsim.starfish.lib._core.bir" "$module"
done
# An enum member named after a Python keyword (PerfMode.None) is no valid stub line.
find "$out" -name '*.pyi' -exec sed -i -E 's/^( +)(None|True|False): (typing\.ClassVar.*)$/\1# \2: \3  (a keyword: use getattr)/' {} +
cp -r "$out"/neuronxsim/. neuronxsim/
git status --short -- 'neuronxsim/**.pyi'
