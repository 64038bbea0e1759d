"""The ``neuronxsim`` command line.

Each subcommand lives in its own module with ``add_parser(subparsers)`` and ``run(args)``; every
one takes ``--json`` (one JSON document on stdout instead of text) and ``--quiet``.

Failures are one line on stderr (``neuronxsim: error: <what and where>``) and a non-zero exit
status: 1 for bad input or a failed step, 2 for a bad argument (and ``run``'s outputs outside
their tolerance), 130 for Ctrl-C, 128 + N when stopped by signal N; ``--debug`` shows the Python
traceback instead. A closed pipe (``neuronxsim registry | head``) ends the command quietly.
"""

from __future__ import annotations

import json
import os
import sys

import neuronxsim
from neuronxsim.errors import NeuronxsimError

#: The subcommand modules, in the order ``--help`` lists them.
COMMANDS = ("run", "demo", "lower", "resolve", "simulate", "profile", "sweep", "exec", "info", "registry")

#: Commands that run a user's script as ``python`` would: its own exceptions show their traceback
#: as under ``python`` (neuronxsim's errors are still one line).
SCRIPT_COMMANDS = ("exec",)


def build_parser():
    import importlib

    from neuronxsim.cli.arguments import ArgumentParser

    p = ArgumentParser(prog="neuronxsim", description="neuronxsim: lower, resolve, simulate and "
                       "profile NeuronCore kernels")
    p.add_argument("--version", action="version", version=f"neuronxsim {neuronxsim.__version__}")
    p.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")
    sub = p.add_subparsers(dest="command", required=True, parser_class=ArgumentParser)
    for name in COMMANDS:
        importlib.import_module(f"neuronxsim.cli.{name}").add_parser(sub)
    return p


def _wants_json(argv) -> bool:
    return "--json" in (argv[:argv.index("--")] if "--" in argv else argv)


def _quiet_stdout() -> None:
    """After a broken pipe: later writes (and the flush at exit) go nowhere instead of failing."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _fail(message: str, argv, status: int) -> int:
    from neuronxsim.cli.failures import one_line

    line = one_line(message)
    print(f"neuronxsim: {line}", file=sys.stderr)
    if _wants_json(argv):
        command = next((a for a in argv if a in COMMANDS), None)
        print(json.dumps({"neuronxsim": neuronxsim.__version__, "command": command, "error": line,
                          "exit_status": status}))
    return status


def main(argv=None) -> int:
    from neuronxsim.cli import memory, signals
    from neuronxsim.cli.failures import describe

    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in (argv[:argv.index("--")] if "--" in argv else argv)
    command = None
    try:
        try:
            with signals.handled(), memory.ceiling():
                args = build_parser().parse_args(argv)  # inside: Ctrl-C while importing is one line too
                command = args.command
                status = args.func(args)
                sys.stdout.flush()  # a closed pipe shows here, not at exit
                return status
        except BrokenPipeError:
            _quiet_stdout()
            return 141  # as if killed by SIGPIPE, like other tools in a pipeline
        except SystemExit as e:  # argparse: --help, --version (0) or a bad argument (2, already said)
            return e.code if isinstance(e.code, int) else 1
        except KeyboardInterrupt:
            return _fail("interrupted", argv, 130)
        except signals.Terminated as e:
            return _fail(f"stopped by {e}", argv, 128 + e.signum)
        except Exception as e:  # every failure, neuronxsim's or not, is one line (MemoryError included)
            if debug or (command in SCRIPT_COMMANDS and not isinstance(e, NeuronxsimError)):
                raise
            return _fail(f"error: {describe(e)}", argv, 1)
    except BrokenPipeError:  # stderr or the JSON error document went to a closed pipe too
        _quiet_stdout()
        return 141


if __name__ == "__main__":
    sys.exit(main())
