#!/usr/bin/env python3
"""The slowest steps of a Ninja build, from its .ninja_log: where a clean build spends its time.

    python3 scripts/slowest-units.py BUILD_DIR [N]

BUILD_DIR is the directory of a clean CMake/Ninja build (pip's with -Cbuild-dir=DIR; the log of a
reused directory also lists steps of earlier configurations). Prints the
N (default 25) longest steps (each step's latest run) and each target's total. Times are wall seconds
per step: on a loaded machine they grow with the load, so compare steps of one build, not builds.
"""
import collections
import pathlib
import sys


def main() -> None:
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip())
    log = pathlib.Path(sys.argv[1]) / ".ninja_log"
    count = int(sys.argv[2]) if len(sys.argv) == 3 else 25
    if not log.is_file():
        sys.exit(f"slowest-units: no {log} (not a Ninja build directory?)")
    runs = {}  # output -> (start, end, command hash); a later run (a rebuild) replaces an earlier one
    for line in log.read_text().splitlines():
        if line.startswith("#"):
            continue
        start, end, _mtime, output, command = line.split("\t")
        runs[output] = (int(start), int(end), command)
    steps = {}  # one entry per run: a step with several outputs is listed under its first
    for output, (start, end, command) in runs.items():
        steps.setdefault((start, end, command), (output, (end - start) / 1000))
    steps = dict(steps.values())
    per_target = collections.Counter()
    for output, seconds in steps.items():
        parts = output.split("/")
        target = next((p[: -len(".dir")] for p in parts if p.endswith(".dir")), "(other)")
        per_target[target] += seconds
    print(f"{sum(steps.values()):8.1f} s in {len(steps)} steps")
    for output, seconds in sorted(steps.items(), key=lambda kv: -kv[1])[:count]:
        print(f"{seconds:8.1f}  {output}")
    print("per target:")
    for target, seconds in per_target.most_common():
        print(f"{seconds:8.1f}  {target}")


if __name__ == "__main__":
    main()
