"""Writes output sets into one folder, generation after generation, until it is killed; the kill
tests (test_output_set.py) interrupt it at random moments and check the folder.

    python output_set_driver.py FOLDER FIRST_GENERATION

Every file of generation g starts with ``gen=<g> <name> <size>`` and ends with ``END``; sizes
vary by name and generation so that a mix of generations is always visible. Prints ``ready``
once before the first set.
"""

import sys

from neuronxsim.cli import signals
from neuronxsim.cli.output_set import OutputSet

#: (name, bytes): a few small files, a large one, and one in a subfolder like klr/.
FILES = (("report.json", 300), ("trace.json", 3_000_000), ("timeline.png", 40_000), ("klr/kernel.klr", 5_000))


def payload(generation: int, name: str, size: int) -> bytes:
    size += generation % 7
    head = f"gen={generation} {name} {size}\n".encode()
    return head + b"x" * (size - len(head) - 4) + b"END\n"


def main() -> None:
    folder, generation = sys.argv[1], int(sys.argv[2])
    print("ready", flush=True)
    with signals.handled():
        while True:
            with OutputSet(folder, "test") as out:
                for name, size in FILES:
                    out.write_bytes(name, payload(generation, name, size))
            generation += 1


if __name__ == "__main__":
    try:
        main()
    except (KeyboardInterrupt, signals.Terminated):
        sys.exit(1)
