#!/usr/bin/env bash
# The long leaf sweep: every IT54 leaf (tests/walrus/test_sweep_leaves.py) and every registry leaf
# (tests/private_kernels/test_sweep_registry.py) over their long level lists (NXS_LONG_SWEEP=1):
# attention up to 4097 tokens, GQA groups to 8 over up to 3 kv heads, head dims 32..160, more
# residues of every tiled size (255..257, 1023..1025, ...), about 4,600 cases against NumPy. The
# CI sweep (the same modules without the variable) takes about a minute of CPU; this one about
# 45 minutes in 2 processes on a busy 2-core machine, so it runs the cases in JOBS pytest
# processes (default: every core).
#
#   bash scripts/sweep-leaves.sh                   # everything
#   bash scripts/sweep-leaves.sh -k attention      # a subset (arguments go to pytest's collection)
#
# Uses the in-place build (scripts/dev-build.sh). Prints the cases run, passed and failed, and the
# time taken; exits non-zero if a case failed. Each process's log is kept in $SWEEP_LOGS (default:
# a temporary folder, removed when every case passed).
set -euo pipefail
cd "$(dirname "$0")/.."
export NXS_LONG_SWEEP=1 PYTHONPATH=$PWD
jobs=${JOBS:-$(nproc)}
logs=${SWEEP_LOGS:-$(mktemp -d)}
mkdir -p "$logs"
start=$SECONDS
python3 -P -m pytest -q --collect-only -p no:cacheprovider \
  tests/walrus/test_sweep_leaves.py tests/private_kernels/test_sweep_registry.py "$@" | grep '::' > "$logs/cases"
echo "long sweep: $(wc -l < "$logs/cases") cases in $jobs processes (logs in $logs)"
split -n "r/$jobs" -d "$logs/cases" "$logs/shard."
pids=()
for shard in "$logs"/shard.*; do
  # Node ids hold no spaces: one argument each.
  # shellcheck disable=SC2046
  python3 -P -m pytest -q -p no:cacheprovider $(cat "$shard") > "$shard.log" 2>&1 &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
read -r passed failed < <({ grep -Eho '[0-9]+ (passed|failed)' "$logs"/shard.*.log || true; } |
  awk '{n[$2] += $1} END {print n["passed"] + 0, n["failed"] + 0}')
grep -h '^FAILED' "$logs"/shard.*.log || true
echo "long sweep: $passed passed, $failed failed in $((SECONDS - start)) s"
if [ "$status" -eq 0 ] && [ -z "${SWEEP_LOGS:-}" ]; then rm -rf "$logs"; fi
exit "$status"
