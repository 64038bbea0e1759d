#!/usr/bin/env bash
# Installs the Python packages that build and test neuronxsim (all from PyPI).
# pybind11 as pinned in pyproject.toml (the enum bindings are built for 3.1: cpp/python/bindings.h).
set -euo pipefail
python3 -m pip install -q --disable-pip-version-check \
  "scikit-build-core>=0.10" "pybind11>=3.1,<3.2" "cython>=3.0" "numpy>=1.24" "ml_dtypes>=0.3" \
  "pytest>=7" "ninja>=1.10" "cmake>=3.24" "dask[distributed]>=2023.1" \
  "atheris>=2.3"  # atheris: the Python fuzzers (scripts/fuzz.sh)
