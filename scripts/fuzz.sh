#!/usr/bin/env bash
# Fuzzes the input readers for a bounded time each, starting from the seed corpora under
# cpp/fuzz/corpus/: the C++ readers (BIR JSON, BIR binary, KLR) with libFuzzer under ASan + UBSan, and the
# Python ones (the Penguin program loader, the .npz input reader) with atheris (libFuzzer's engine
# for Python) against the installed package. A crash, sanitizer report, uncaught exception or
# timeout fails the run.
#   FUZZ_SECONDS  seconds per harness (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
for harness in cpp/fuzz/fuzz_*.py; do
  name=$(basename "$harness" .py)
  corpus_name=${name#fuzz_}
  work=$(mktemp -d)
  cp cpp/fuzz/corpus/"$corpus_name"/* "$work"/
  echo "fuzzing $name for ${FUZZ_SECONDS:-60} s"
  # -P: the installed package, as the tests use it.
  python3 -P "$harness" -dict="cpp/fuzz/$corpus_name.dict" -max_total_time="${FUZZ_SECONDS:-60}" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/" "$work" 2>&1 | grep -v "INFO: Instrumenting" | tail -n 12
  status=${PIPESTATUS[0]}
  rm -rf "$work"
  [ "$status" -eq 0 ] || { echo "$name found a failure"; exit 1; }
done
scripts/asan-build.sh
BUILD=build/asan
for harness in "$BUILD"/cpp/fuzz_*; do
  name=$(basename "$harness")
  corpus_name=${name#fuzz_}
  work="$BUILD/corpus-$corpus_name"
  mkdir -p "$work"
  cp -n cpp/fuzz/corpus/"$corpus_name"/* "$work"/ 2>/dev/null || true
  dict=()
  [ -f "cpp/fuzz/$corpus_name.dict" ] && dict=(-dict="cpp/fuzz/$corpus_name.dict")
  echo "fuzzing $name for ${FUZZ_SECONDS:-60} s"
  "$harness" "${dict[@]}" -max_total_time="${FUZZ_SECONDS:-60}" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "$work" 2>&1 | tail -n 12
  [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "$name found a failure"; exit 1; }
done
