#!/usr/bin/env bash
# Installs the Debian packages the build and the test suite need, when they are missing:
#   libgtest-dev  GoogleTest for the C++ tests
#   clang, libclang-rt-14-dev  libFuzzer and the sanitizer runtimes for the fuzz job
set -euo pipefail
need=()
for pkg in libgtest-dev clang libclang-rt-14-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
