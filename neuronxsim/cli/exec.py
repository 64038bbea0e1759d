"""``neuronxsim exec script.py [args...]`` (or ``-m module``): runs a user's script as ``python``
would, with ``import nki`` resolved to neuronxsim's NKI 0.6 dialect and ``import neuronxcc.nki``
to its 2.2x dialect (``neuronxsim.importer``), so kernel files and test scripts written for the
Neuron SDK run on the simulator without an edit. The script's exit status is the command's;
its exceptions propagate as they would under ``python``."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import runpy
import sys
import time

import neuronxsim
from neuronxsim.cli import arguments
from neuronxsim.cli.inputs import check_file
from neuronxsim.errors import NeuronxsimError


class ExecError(NeuronxsimError, ValueError):
    """A bad script or module argument."""


def add_parser(sub) -> None:
    p = sub.add_parser("exec", help="run a Python script (or -m module) with `import nki` and "
                       "`import neuronxcc.nki` resolved to neuronxsim")
    p.add_argument("--allow-shadowing", action="store_true",
                   help="run even when a real nki/neuronxcc package is importable (it is hidden "
                        "while the script runs)")
    p.add_argument("--max-instructions", type=arguments.size, default=None, metavar="N",
                   help="refuse a kernel's trace past N instructions (default: "
                        "$NEURONXSIM_MAX_INSTRUCTIONS or one million); sets that variable for "
                        "the script")
    p.add_argument("--json", action="store_true",
                   help="after the script, print one JSON document (the script, its arguments, its "
                        "exit status, host seconds) to stdout; the script's own output goes to stderr")
    p.add_argument("-m", dest="module", nargs=argparse.REMAINDER, metavar="MODULE [ARGS]",
                   help="run a library module as a script, as python -m does (e.g. -m pytest "
                        "tests/); everything after it is the module's arguments")
    p.add_argument("script", nargs="?", help="the script to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    p.set_defaults(func=run)


def run(args) -> int:
    if args.module is not None and (args.script is not None or not args.module):
        raise ExecError("exec: -m takes a module name and its arguments, after every "
                        "neuronxsim option (neuronxsim exec -m pytest tests/)")
    if args.module is None and args.script is None:
        raise ExecError("exec: give a script (neuronxsim exec script.py [args]) or a module "
                        "(neuronxsim exec -m module [args])")
    if args.script is not None:
        check_file(args.script, "script")  # a neuronxsim error (one line), not the script's own
    start = time.perf_counter()
    status = _run_script(args)
    if args.json:
        print(json.dumps({"neuronxsim": neuronxsim.__version__, "command": "exec",
                          "module" if args.module is not None else "script":
                              args.module[0] if args.module is not None else args.script,
                          "args": args.module[1:] if args.module is not None else args.args,
                          "exit_status": status, "seconds": time.perf_counter() - start}, indent=1))
    return status


def _run_script(args) -> int:
    from neuronxsim.importer import installed

    # --json: stdout carries the document only, so the script's output goes to stderr.
    stdout = contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext()
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    with installed(allow_shadowing=args.allow_shadowing), _instruction_cap(args.max_instructions), stdout:
        try:
            if args.module is not None:
                module, *module_args = args.module
                sys.argv = [module] + module_args
                sys.path.insert(0, os.getcwd())
                runpy.run_module(module, run_name="__main__", alter_sys=True)
            else:
                sys.argv = [args.script] + args.args
                sys.path.insert(0, os.path.dirname(os.path.abspath(args.script)))
                runpy.run_path(args.script, run_name="__main__")
        except SystemExit as e:
            return _exit_status(e.code)
        finally:
            sys.argv[:] = saved_argv
            sys.path[:] = saved_path
    return 0


@contextlib.contextmanager
def _instruction_cap(max_instructions):
    """``$NEURONXSIM_MAX_INSTRUCTIONS`` set to ``max_instructions`` while the script runs (every
    trace it makes reads it, as do processes it starts)."""
    from neuronxsim.nki.tracer import MAX_INSTRUCTIONS_ENV, instruction_cap

    if max_instructions is None:
        yield
        return
    instruction_cap(max_instructions)  # (refuses a bad count before the script starts)
    saved = os.environ.get(MAX_INSTRUCTIONS_ENV)
    os.environ[MAX_INSTRUCTIONS_ENV] = str(max_instructions)
    try:
        yield
    finally:
        if saved is None:
            del os.environ[MAX_INSTRUCTIONS_ENV]
        else:
            os.environ[MAX_INSTRUCTIONS_ENV] = saved


def _exit_status(code) -> int:
    """What ``python`` exits with for ``sys.exit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1
