"""Calls of the NKI API with arguments a function does not take.

Every public function of ``nl``, ``nisa`` and ``nki`` declares exactly its documented
parameters: there is no ``**kwargs`` that could swallow a keyword, so Python itself refuses an
unknown keyword, a missing argument or one too many with a ``TypeError``, at no cost to the
calls that are right. When such an error leaves a kernel being traced, :func:`located` makes it
say where and why: the kernel line, the function as kernels spell it (``nisa.tensor_tensor``),
and, when the keyword is one of the same function in the other dialect (``dst=``, ``data1=`` of
NKI 0.6), that it belongs there.

The function a failed call named is found from the kernel's own source: the call expression at
the failing instruction, resolved in the kernel's frame (so ``from ... import load as ld`` and
bound methods count); other ``TypeError``s pass through unchanged.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import linecache
import re
import types

from neuronxsim.starfish.lib import _core

from .errors import SourceLocation, is_internal_file


class NKIArgumentError(TypeError):
    """A call of the NKI API with arguments the function does not take; ``location`` is the
    kernel line (a :class:`~neuronxsim.nki.errors.SourceLocation`)."""

    def __init__(self, message: str, location: SourceLocation | None):
        super().__init__(message)
        self.location = location


#: How kernels spell this dialect's modules, by module name.
_SPELLINGS = {"neuronxsim.nki.language": "nl", "neuronxsim.nki.indexing": "nl",
              "neuronxsim.nki.isa": "nisa", "neuronxsim.nki.kernel": "nki",
              "neuronxsim.nki.execution": "nki", "neuronxsim.nki.tensor": "Tensor"}
#: The other dialect's module for each spelling: imported only to word an error.
_OTHER_DIALECT = ("NKI 0.6 (import nki)", {"nl": "neuronxsim.nki06.language",
                                           "nisa": "neuronxsim.nki06.isa",
                                           "nki": "neuronxsim.nki06"})

_BINDING = re.compile(r"^[\w.<>]+\(\) (got an unexpected keyword argument '(?P<keyword>\w+)'|"
                      r"takes |missing |got multiple values |got some positional-only )")


def located(error: TypeError) -> TypeError | None:
    """The :class:`NKIArgumentError` for ``error`` if it is Python refusing the arguments of a
    call the kernel made to an NKI function; None for any other ``TypeError``."""
    match = _BINDING.match(str(error))
    if match is None or error.__traceback__ is None:
        return None
    tb = error.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    frame = tb.tb_frame
    if is_internal_file(frame.f_code.co_filename):
        return None  # (a call the front end made itself: a bug to show as it is)
    fn = _called_function(frame, tb.tb_lasti)
    spelling = _spelling(fn)
    if spelling is None:
        return None
    loc = SourceLocation(frame.f_code.co_filename, tb.tb_lineno)
    text = f"{loc.path}:{loc.line}: {spelling}(): {_reason(str(error))}"
    keyword = match.group("keyword")
    if keyword is not None:
        hint = _other_dialect_hint(spelling, keyword)
        if hint:
            text += f" ({hint})"
        accepted = [p for p in inspect.signature(fn).parameters if p != "self"]
        text += f"; it takes {', '.join(accepted) if accepted else 'no arguments'}"
    return NKIArgumentError(text, loc)


def _reason(message: str) -> str:
    """Python's message without its own ``name()`` prefix."""
    return message.split(") ", 1)[1] if ") " in message else message


def _called_function(frame: types.FrameType, lasti: int):
    """The object the call at instruction offset ``lasti`` of ``frame`` called (None if it
    cannot be told without running code)."""
    try:
        line, end_line, col, end_col = list(frame.f_code.co_positions())[lasti // 2]
    except (IndexError, ValueError):
        return None
    if None in (line, end_line, col, end_col):
        return None
    lines = [linecache.getline(frame.f_code.co_filename, n).encode()
             for n in range(line, end_line + 1)]
    if not all(lines):
        return None
    lines[-1] = lines[-1][:end_col]
    lines[0] = lines[0][col:]
    try:
        call = ast.parse(b"".join(lines).decode(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, ast.Call):
        return None
    return _resolve(call.func, frame)


def _resolve(node: ast.expr, frame: types.FrameType):
    """The value of a name or attribute chain (``nl.load``, ``t.broadcast_to``) in ``frame``,
    read without running code (no properties, no ``__getattr__``)."""
    if isinstance(node, ast.Name):
        for scope in (frame.f_locals, frame.f_globals, frame.f_builtins):
            if node.id in scope:
                return scope[node.id]
        return None
    if isinstance(node, ast.Attribute):
        owner = _resolve(node.value, frame)
        if owner is None:
            return None
        try:
            value = inspect.getattr_static(owner, node.attr)
        except AttributeError:
            return None
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        return value
    return None


#: An API function whose plain calls take a C path first, standing for its Python definition
#: (``__wrapped__``): ``cpp/python/trace_fast_call.cpp``.
FastCall = _core.nki.FastCall


def definition(fn):
    """The Python definition of ``fn``: the one a :data:`FastCall` stands for, else ``fn``."""
    return fn.__wrapped__ if isinstance(fn, FastCall) else fn


def _spelling(fn) -> str | None:
    """``nl.load``, ``nisa.nc_matmul``, ``nki.jit``, ``Tensor.broadcast_to`` for a public
    function of this dialect; None for anything else."""
    fn = definition(getattr(fn, "__func__", fn))
    if not isinstance(fn, types.FunctionType):
        return None
    module = _SPELLINGS.get(fn.__module__)
    if module is None or fn.__name__.startswith("_"):
        return None
    if module == "Tensor":
        return f"Tensor.{fn.__name__}" if "." in fn.__qualname__ else None
    return f"{module}.{fn.__name__}"


def _other_dialect_hint(spelling: str, keyword: str) -> str:
    """Says that ``keyword`` belongs to the same function of the other dialect, if it does."""
    name, (module_key, short) = _OTHER_DIALECT[0], spelling.split(".", 1)
    path = _OTHER_DIALECT[1].get(module_key)
    if path is None:
        return ""
    try:
        other = getattr(importlib.import_module(path), short, None)
        params = inspect.signature(other).parameters if callable(other) else {}
    except (ImportError, TypeError, ValueError):
        return ""
    if keyword not in params:
        return ""
    return (f"'{keyword}' is a keyword of {spelling} in {name}; this kernel uses the 2.2x "
            "dialect (neuronxcc.nki), whose instructions return their results")


__all__ = ["NKIArgumentError", "located"]
