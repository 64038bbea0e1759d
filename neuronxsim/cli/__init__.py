"""The ``neuronxsim`` command line.

Every subcommand reports bad input as one line on stderr and a non-zero exit code; ``--debug``
shows the Python traceback instead. Each subcommand lives in its own module with
``add_parser(subparsers)`` and ``run(args)``.
"""

from __future__ import annotations

import argparse
import sys

import neuronxsim
from neuronxsim.errors import NeuronxsimError


def _cmd_demo(args) -> int:
    from neuronxsim.demo import run_demo

    run_demo(args.output, quiet=args.quiet)
    return 0


def _cmd_info(args) -> int:
    """A BIR JSON module (by its first character) or a KLR file."""
    import os

    from neuronxsim import bir
    from neuronxsim.bir.printer import format_module

    if not os.path.isfile(args.file):
        raise FileNotFoundError(f"{args.file}: no such file")
    with open(args.file, "rb") as f:
        first = f.read(64).lstrip()[:1]
    if first == b"{":
        print(format_module(bir.load(args.file)))
        return 0
    from neuronxsim import walrus

    info = walrus.klr_info(args.file)
    print(f"{args.file}: KLR {'.'.join(map(str, info['version']))}, format {info['format']!r}, kind {info['kind']}")
    for key in ("kernel_name", "entry", "callsite", "inputs", "outputs", "bodies", "statements", "numbering"):
        if key in info:
            print(f"  {key}: {info[key]}")
    print("  lowerable" if info["lowerable"] else f"  not lowerable: {info['lowering_refusal']}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from neuronxsim.cli import lower, profile, registry, resolve, run, simulate

    p = argparse.ArgumentParser(prog="neuronxsim", description="neuronxsim: lower, resolve, simulate and "
                                "profile NeuronCore kernels")
    p.add_argument("--version", action="version", version=f"neuronxsim {neuronxsim.__version__}")
    p.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")
    sub = p.add_subparsers(dest="command", required=True)

    run.add_parser(sub)

    demo = sub.add_parser("demo", help="build a module with all three kernel nodes, print it, write its BIR JSON")
    demo.add_argument("--output", default="neuronxsim-demo", help="output folder (default ./neuronxsim-demo)")
    demo.add_argument("--quiet", action="store_true", help="print nothing")
    demo.set_defaults(func=_cmd_demo)

    lower.add_parser(sub)
    resolve.add_parser(sub)
    simulate.add_parser(sub)
    profile.add_parser(sub)

    info = sub.add_parser("info", help="summarise a BIR JSON or KLR file")
    info.add_argument("file")
    info.set_defaults(func=_cmd_info)
    registry.add_parser(sub)
    return p


def main(argv=None) -> int:
    from neuronxsim.cli import signals

    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv[:argv.index("--")] if "--" in argv else "--debug" in argv
    try:
        with signals.handled():
            args = build_parser().parse_args(argv)  # inside: Ctrl-C while importing is one line too
            return args.func(args)
    except (NeuronxsimError, OSError) as e:
        if debug:
            raise
        print(f"neuronxsim: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("neuronxsim: interrupted", file=sys.stderr)
        return 130
    except signals.Terminated as e:
        print(f"neuronxsim: stopped by {e}", file=sys.stderr)
        return 128 + e.signum


if __name__ == "__main__":
    sys.exit(main())
