"""The public functions of the NKI 0.6 dialect take exactly their documented arguments.

:func:`api` wraps each one: a call whose arguments do not fit the documented signature (an
unknown keyword, a missing argument, one too many) is a ``TypeError`` that names the function
as kernels spell it (``nisa.tensor_tensor``), the argument, the kernel line, and, when the
keyword belongs to the same function of the 2.2x dialect (``neuronxcc.nki``), says so. Nothing
is ever dropped: there is no ``**kwargs`` anywhere in this package.
"""

from __future__ import annotations

import functools
import inspect

from neuronxsim.nki.errors import caller_location
from neuronxsim.nki.tracer import peek as _peek
from neuronxsim.starfish.lib import _core

#: A public function of this dialect as :func:`api` makes it: a C callable
#: (``cpp/python/trace_api_call.cpp``) that passes its arguments unchanged to the Python
#: definition (``__wrapped__``) and stands for it (name, docstring, signature, binding as a
#: method, pickling).
ApiCall = _core.nki.ApiCall

#: How kernels spell this package's modules.
_ALIASES = {"language": "nl", "isa": "nisa", "collectives": "ncc", "typing": "nt", "kernel": "nki",
            "tensor": "NkiTensor", "registers": "nisa"}
#: The 2.2x dialect's module of the same role, for the hint.
_OLD = {"nl": ("neuronxsim.nki.language", "neuronxcc.nki.language"),
        "nisa": ("neuronxsim.nki.isa", "neuronxcc.nki.isa"),
        "nki": ("neuronxsim.nki", "neuronxcc.nki")}
#: Why a 2.2x keyword has no NKI 0.6 counterpart.
_WHY = {
    "mask": "NKI 0.6 has no masks: slice the operands to the part to compute",
    "dtype": "NKI 0.6 instructions write their dst, whose dtype is the result's",
    "dst_rmw_op": "NKI 0.6 accumulates with nisa.dma_compute",
}

#: Keywords NKI itself removed, by (function, keyword).
_REMOVED = {
    ("nki.jit", "mode"): "nki.jit(mode=...) was removed in NKI 0.3; kernels called with NumPy "
                         "arrays run on the simulator",
    ("nki.jit", "platform_target"): "removed in NKI 0.3: set NEURON_PLATFORM_TARGET_OVERRIDE",
}


def api(fn=None, *, alias: str | None = None, instruction=None):
    """Wraps a public function (see the module docstring); ``alias``: the module name kernels
    spell it with, when not its own module's (``@api(alias="nl")``); ``instruction``: a class
    the call returns an instance of, whose ``handle`` is the list of instructions the call
    recorded (``nisa``'s NkiInstruction; made without running its ``__init__``).

    The result is an :data:`ApiCall`: a call goes to ``fn`` with its arguments as they are; a
    TypeError out of ``fn`` is replaced by what ``explained`` makes of the arguments, when they do
    not fit the signature, and propagates unchanged otherwise (a TypeError of ``fn``'s body). It
    has no Python frame: ``fn`` is called by the kernel directly, and finds the kernel's line with
    ``caller_location()``."""
    if fn is None:
        return lambda f: api(f, alias=alias, instruction=instruction)
    sig = inspect.signature(fn)
    module = fn.__module__.rpartition(".")[2]
    alias = alias or _ALIASES.get(module, module)
    name = f"{alias}.{fn.__name__}" if alias != "NkiTensor" else f"NkiTensor.{fn.__name__}"

    def explained(args, kwargs):
        """The TypeError of a call that does not fit the signature, else None."""
        try:
            sig.bind(*args, **kwargs)
        except TypeError as binding:
            return signature_error(name, alias, fn.__name__, sig, kwargs, binding)
        return None

    wrapper = ApiCall(fn, explained, instruction)
    wrapper.__dict__.update(fn.__dict__)  # (functools.wraps's: the nl functions' ALU markers)
    return wrapper


def python_call(call: ApiCall):
    """What the C callable ``call`` does, as the Python function it replaced (a frame of this
    package's between the kernel and the definition, whose caller_location() then walks past it to
    the same line): for the tests that compare the two (tests/nki06/test_api_call.py)."""
    fn, explained, instruction = call.__wrapped__, call.explain, call.instruction
    if instruction is None:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except TypeError:
                error = explained(args, kwargs)
                if error is None:
                    raise
                raise error from None
        return wrapper

    @functools.wraps(fn)
    def instruction_wrapper(*args, **kwargs):
        tr = _peek()
        ops = tr.ops if tr is not None else None
        first = len(ops) if ops is not None else 0
        try:
            fn(*args, **kwargs)
        except TypeError:
            error = explained(args, kwargs)
            if error is None:
                raise
            raise error from None
        made = object.__new__(instruction)
        made.handle = ops[first:]
        return made
    return instruction_wrapper


def signature_error(name: str, alias: str, short: str, sig, kwargs: dict,
                    binding: TypeError) -> TypeError:
    loc = caller_location()
    where = f"{loc.path}:{loc.line}: " if loc is not None else ""
    unknown = [k for k in kwargs if k not in sig.parameters]
    if not unknown:
        return TypeError(f"{where}{name}(): {binding}")
    key = unknown[0]
    text = f"{where}{name}() got an unexpected keyword argument '{key}'"
    old = _old_parameters(alias, short)
    removed = _REMOVED.get((name, key))
    if removed:
        text += f" ({removed})"
    elif key in old:
        text += f" ('{key}' is a keyword of the 2.2x dialect's {old[key]}"
        why = _WHY.get(key)
        text += f"; {why})" if why else ")"
    accepted = [p for p in sig.parameters if p != "self"]
    text += f"; it takes {', '.join(accepted) if accepted else 'no arguments'}"
    return TypeError(text)


def _old_parameters(alias: str, short: str) -> dict:
    """{keyword: 'neuronxcc.nki...function'} of the 2.2x function of the same name."""
    if alias not in _OLD:
        return {}
    module_name, public_name = _OLD[alias]
    import importlib
    fn = getattr(importlib.import_module(module_name), short, None)
    if fn is None or not callable(fn):
        return {}
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}
    return {p.name: f"{public_name}.{short}" for p in params.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


__all__ = ["api", "ApiCall"]
