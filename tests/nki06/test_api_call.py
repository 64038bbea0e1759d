"""The public functions of the NKI 0.6 dialect are ``ApiCall``s (cpp/python/trace_api_call.cpp,
made by neuronxsim.nki06._api.api): C callables passing their arguments unchanged to the Python
definition, raising the explained TypeError of arguments that do not fit the signature (with the
kernel's line), letting a TypeError of the definition's body through unchanged, and answering
nisa's NkiInstruction handles. Every outcome here (module, handles, errors and their chaining) is
compared with the Python wrapper the C callable replaced (neuronxsim.nki06._api.python_call), over
the same definitions (which find the kernel's line through the frame walk when that wrapper's frame
lies between them and the kernel)."""

import copy
import inspect
import pathlib
import pickle
import re
import sys

import numpy as np
import pytest

import neuronxsim.nki06 as nki
import neuronxsim.nki06.collectives as ncc
import neuronxsim.nki06.isa as nisa
import neuronxsim.nki06.kernel as kernel_module
import neuronxsim.nki06.language as nl
import neuronxsim.nki06.registers as registers
import neuronxsim.nki06.tensor as tensor_module
from neuronxsim.nki import errors
from neuronxsim.nki.errors import NKIError
from neuronxsim.nki.tracer import peek
from neuronxsim.nki06._api import ApiCall, api, python_call
from neuronxsim.nki06.kernel import trace_kernel
from neuronxsim.starfish.lib import _core

HERE = pathlib.Path(__file__)


def line_of(marker: str) -> int:
    """The line of this file that ends with the comment ``# <marker>``."""
    lines = HERE.read_text().splitlines()
    found = [i + 1 for i, ln in enumerate(lines) if ln.rstrip().endswith(f"# <{marker}>")]
    assert len(found) == 1, marker
    return found[0]


def _python_only(monkeypatch):
    """Replaces every ApiCall of the dialect (module globals, NkiTensor's methods) by the Python
    wrapper over its definition."""
    replaced = 0
    for module in (nl, nisa, ncc, kernel_module, registers, tensor_module):
        for name, value in list(vars(module).items()):
            if isinstance(value, ApiCall):
                monkeypatch.setattr(module, name, python_call(value))
                replaced += 1
    for name, value in list(vars(nl.NkiTensor).items()):
        if isinstance(value, ApiCall):
            monkeypatch.setattr(nl.NkiTensor, name, python_call(value))
            replaced += 1
    assert replaced > 180


def _outcome(kernel, *args):
    """The traced module's JSON, or the refusal's type and message."""
    try:
        return trace_kernel(kernel, *args, schedule="source").module.to_json(-1)
    except (NKIError, TypeError, ValueError) as e:
        return f"{type(e).__name__}: {e}"


def _same_with_c_and_python(monkeypatch, kernel, *args) -> str:
    c = _outcome(kernel, *args)
    with monkeypatch.context() as m:
        _python_only(m)
        assert not isinstance(nisa.tensor_copy, ApiCall)
        python = _outcome(kernel, *args)
    assert c == python
    return c


# ---- kernels ----

HANDLES = []  # (what, handle lengths) seen by `many`, in call order


@nki.jit
def many(a, b):
    """A little of everything: instructions (their handles kept), nl functions of each kind,
    NkiTensor methods, positional and keyword arguments."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.ndarray((128, 64), a.dtype, nl.sbuf)
    y = nl.ndarray(shape=(128, 64), dtype=b.dtype, buffer=nl.sbuf)
    tr = peek()
    for i in range(2):
        before = len(tr.ops)
        h = nisa.dma_copy(x, a[:, nl.ds(i * 64, 64)])
        assert isinstance(h, nisa.NkiInstruction) and vars(h) == {"handle": tr.ops[before:]}
        assert h.handle is not tr.ops and len(h.handle) >= 1
        HANDLES.append(("dma_copy", len(h.handle)))
        HANDLES.append(("dma_copy kw", len(nisa.dma_copy(dst=y, src=b[:, 0:64]).handle)))
    z = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    HANDLES.append(("tensor_tensor", len(nisa.tensor_tensor(z, x, y, nl.add).handle)))
    HANDLES.append(("activation", len(nisa.activation(dst=z, op=nl.exp, data=z, scale=0.5).handle)))
    HANDLES.append(("tensor_scalar", len(nisa.tensor_scalar(z, z, nl.multiply, 2.0).handle)))
    HANDLES.append(("memset", len(nisa.memset(y, 0.0).handle)))
    w = nl.add(z, x)
    w = nl.exp(w, dtype=nl.float32)
    s = nl.sum(w, axis=1, keepdims=True)
    v = w.reshape((128, 8, 8)).permute((0, 2, 1))
    v = v.permute(dims=(0, 2, 1)).reshape(shape=(128, 64))
    nisa.tensor_tensor(dst=z, data1=v, data2=nl.broadcast_to(s, (128, 64)), op=nl.subtract)
    nisa.dma_copy(dst=out[:, 0:64], src=z)
    nisa.dma_copy(dst=out[:, 64:128], src=z.slice(1, 0, 64))
    return out


def _arrays():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((128, 128)).astype(np.float32),
            rng.standard_normal((128, 128)).astype(np.float32))


def test_a_kernel_traces_and_answers_handles_as_with_the_python_call(monkeypatch):
    HANDLES.clear()
    c = _outcome(many, *_arrays())
    c_handles = list(HANDLES)
    HANDLES.clear()
    with monkeypatch.context() as m:
        _python_only(m)
        python = _outcome(many, *_arrays())
    assert c.startswith("{") and c == python
    assert c_handles == HANDLES and len(c_handles) == 8


def test_every_public_function_is_an_api_call():
    for module in (nl, nisa, ncc):
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isfunction(value):  # (a plain function would have no explained errors)
                pytest.fail(f"{module.__name__}.{name} is not made by api")
    assert isinstance(nki.jit, ApiCall) and isinstance(nl.NkiTensor.reshape, ApiCall)
    assert nisa.tensor_copy.instruction is nisa.NkiInstruction and nl.add.instruction is None


# ---- the explained TypeErrors name the kernel's line ----

@nki.jit
def unknown_keyword(a):
    t = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a, no_such_option=1)  # <unknown keyword>
    return a


@nki.jit
def old_keyword(a):
    t = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.tensor_tensor(dst=t, data1=t, data2=t, op=nl.add, mask=None)  # <2.2x keyword>
    return a


@nki.jit
def missing_argument(a):
    t = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nl.exp(dtype=nl.float32)  # <missing argument>
    return a


@nki.jit
def missing_method_argument(a):
    t = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
    t.reshape()  # <missing method argument>
    return a


@nki.jit
def too_many(a):
    t = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
    nisa.memset(t, 0.0, nisa.engine.vector, None, "extra")  # <too many>
    return a


@pytest.mark.parametrize("kernel,marker,message", [
    (unknown_keyword, "unknown keyword",
     r"nisa\.dma_copy\(\) got an unexpected keyword argument 'no_such_option'; it takes dst, src, "
     r"priority, oob_mode, dge_mode, engine, name"),
    (old_keyword, "2.2x keyword",
     r"nisa\.tensor_tensor\(\) got an unexpected keyword argument 'mask' \('mask' is a keyword of "
     r"the 2\.2x dialect's neuronxcc\.nki\.isa\.tensor_tensor; NKI 0\.6 has no masks: slice the "
     r"operands to the part to compute\); it takes dst, data1, data2, op, engine, name"),
    (missing_argument, "missing argument", r"nl\.exp\(\): missing a required argument: 'x'$"),
    (missing_method_argument, "missing method argument",
     r"NkiTensor\.reshape\(\): missing a required argument: 'shape'$"),
    (too_many, "too many", r"nisa\.memset\(\): too many positional arguments$"),
])
def test_a_call_that_does_not_fit_is_the_explained_type_error_at_the_kernel_line(
        monkeypatch, kernel, marker, message):
    a = np.zeros((128, 64), np.float32)
    outcome = _same_with_c_and_python(monkeypatch, kernel, a)
    assert re.fullmatch(rf"TypeError: {re.escape(str(HERE))}:{line_of(marker)}: {message}", outcome), outcome
    with pytest.raises(TypeError) as e:
        trace_kernel(kernel, a)
    assert e.value.__cause__ is None and e.value.__suppress_context__
    assert type(e.value.__context__) is TypeError  # (the definition's, as `raise ... from None`)


@nki.jit
def refused_twice(a):
    t = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
    for i in range(2):  # (the second call at the line: its location remembered, not walked to)
        t.permute((0, 1) if i == 0 else (1, 0))  # <refused view>
    return a


@nki.jit
def refused_instruction(a):
    t = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
    for i in range(2):
        nisa.tensor_tensor(t, t, t, nl.add, engine=nisa.engine.vector if i == 0 else 7)  # <refused engine>
    return a


@nki.jit
def refused_slice(a):
    for i in range(2):
        nl.ds(i if i == 0 else "x", 2)  # <refused ds>
    return a


@pytest.mark.parametrize("kernel,marker", [(refused_twice, "refused view"),
                                           (refused_instruction, "refused engine"),
                                           (refused_slice, "refused ds")])
def test_a_definition_s_own_errors_name_the_kernel_line(monkeypatch, kernel, marker):
    """The definitions find the kernel's line with caller_location() (no wrapper frame)."""
    outcome = _same_with_c_and_python(monkeypatch, kernel, np.zeros((128, 64), np.float32))
    assert outcome.startswith(f"NKIError: {HERE}:{line_of(marker)}: "), outcome


# ---- the C callable itself, on functions of this file ----

def echo(x, y=2, *rest, z=3):
    """Answers its arguments."""
    return (x, y, rest, z)


def body_type_error(x):
    raise BODY_ERROR


BODY_ERROR = TypeError("a TypeError of the body, not of the call")


def explain_fails(args, kwargs):
    raise ValueError("explain failed")


class Handle:
    """A class for the `instruction` variant (its __init__ must not run)."""

    def __init__(self):
        raise AssertionError("not to be called")


def returns(x):
    return x


def outcome_of(f, *args, **kwargs):
    """f's result, or its error's type, message and chaining."""
    try:
        r = f(*args, **kwargs)
        return ("value", vars(r) if isinstance(r, Handle) else r)
    except Exception as e:  # noqa: BLE001  (every error is compared)
        context = e.__context__
        return ("error", type(e).__name__, str(e), e.__cause__, e.__suppress_context__,
                type(context).__name__ if context is not None else None,
                str(context) if context is not None else None)


CALLS = [((1,), {}), ((1, 5), {}), ((1, 5, 6, 7), {"z": 8}), ((), {"x": 1, "y": 4}),
         ((), {"y": 4}), ((1,), {"x": 2}), ((1,), {"w": 2}), ((1,), {"mask": 2}), ((), {})]


@pytest.mark.parametrize("args,kwargs", CALLS)
def test_the_c_callable_answers_as_the_python_call(args, kwargs):
    c = api(echo)
    assert outcome_of(c, *args, **kwargs) == outcome_of(python_call(c), *args, **kwargs)


def test_positional_and_keyword_arguments_are_forwarded():
    c = api(echo)
    assert c(1) == (1, 2, (), 3)
    assert c(1, 5, 6, 7, z=8) == (1, 5, (6, 7), 8)
    assert c(y=4, x=1) == (1, 4, (), 3)
    assert c(*[1, 2], **{"z": 0}) == (1, 2, (), 0)


def test_an_unknown_keyword_names_the_function_and_the_caller_line():
    c = api(echo)
    with pytest.raises(TypeError) as e:
        c(1, w=2)  # <caller line>
    assert str(e.value) == (f"{HERE}:{line_of('caller line')}: test_api_call.echo() got an "
                            "unexpected keyword argument 'w'; it takes x, y, rest, z")


def test_a_type_error_of_the_body_propagates_unchanged():
    c = api(body_type_error)
    with pytest.raises(TypeError) as e:
        c(1)
    assert e.value is BODY_ERROR and e.value.__context__ is None and not e.value.__suppress_context__
    assert e.traceback[-1].name == "body_type_error"
    assert outcome_of(c, 1) == outcome_of(python_call(c), 1)
    with pytest.raises(TypeError, match=r"body_type_error\(\): missing a required argument: 'x'"):
        c()


def test_an_error_of_explain_propagates_with_the_type_error_as_its_context():
    c = ApiCall(echo, explain_fails, None)
    assert outcome_of(c, w=1)[:3] == ("error", "ValueError", "explain failed")
    assert outcome_of(c, w=1) == outcome_of(python_call(c), w=1)


def test_other_errors_are_not_explained():
    c = ApiCall(lambda: 1 / 0, explain_fails, None)
    assert outcome_of(c)[:2] == ("error", "ZeroDivisionError")


def test_the_instruction_variant_without_a_tracer_fails_as_the_python_call():
    c = ApiCall(returns, explain_fails, Handle)
    assert outcome_of(c, 1) == outcome_of(python_call(c), 1)
    assert outcome_of(c, 1)[1:3] == ("TypeError", "'NoneType' object is not subscriptable")


def test_it_stands_for_its_definition():
    for f, definition in ((nisa.tensor_tensor, nisa.tensor_tensor.__wrapped__),
                          (nl.add, nl.add.__wrapped__), (nl.NkiTensor.reshape, nl.NkiTensor.reshape.__wrapped__)):
        assert inspect.isfunction(definition) and not inspect.isfunction(f)
        for attr in ("__name__", "__qualname__", "__module__", "__doc__", "__code__", "__defaults__"):
            assert getattr(f, attr) == getattr(definition, attr)
        assert inspect.signature(f) == inspect.signature(definition)
        assert inspect.unwrap(f) is definition
        assert pickle.loads(pickle.dumps(f)) is f and copy.deepcopy(f) is f
        assert repr(f) == repr(definition)
    assert nl.add.alu_op is nl.add.__wrapped__.alu_op  # (functools.wraps's __dict__ copy)
    assert nl.copy.act_func is not None and "act_func" not in vars(nl.copy.__wrapped__)
    assert list(inspect.signature(nisa.memset).parameters) == ["dst", "value", "engine", "name"]


def test_methods_bind_as_functions_do():
    t = trace_kernel  # (any object: binding does not look at it)
    reshape = vars(nl.NkiTensor)["reshape"]
    assert nl.NkiTensor.reshape is reshape and reshape.__get__(None, nl.NkiTensor) is reshape
    bound = reshape.__get__(t, type(t))
    assert inspect.ismethod(bound) and bound.__self__ is t and bound.__func__ is reshape
    assert str(inspect.signature(bound)) == str(inspect.signature(reshape.__wrapped__.__get__(t)))
    assert list(inspect.signature(bound).parameters) == ["shape"]


# ---- the definitions' caller_location() looks at the kernel's frame ----

def _walks(rounds: int) -> int:
    """How many times tracing `looped` for `rounds` rounds walks the frames to a kernel line
    (caller_location's answer for a call site not seen before)."""
    walk = errors._walk_to_kernel.__code__
    count = 0

    def profile(frame, event, arg):
        nonlocal count
        if event == "call" and frame.f_code is walk:
            count += 1

    LOOPED_ROUNDS[0] = rounds
    _core.nki.forget_call_sites()
    sys.setprofile(profile)
    try:
        trace_kernel(looped, np.zeros((128, 128), np.float32), schedule="source")
    finally:
        sys.setprofile(None)
    return count


LOOPED_ROUNDS = [1]


@nki.jit
def looped(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in range(LOOPED_ROUNDS[0]):
        x = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x, src=a[:, nl.ds(64 * (i % 2), 64)])
        y = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(y, 1.0)
        nisa.tensor_tensor(dst=y, data1=x, data2=y, op=nl.add)
        nisa.activation(dst=y, op=nl.exp, data=y)
        nisa.tensor_scalar(y, y, nl.multiply, 0.5)
        z = nl.exp(nl.add(x, y))
        s = nl.sum(z, axis=1, keepdims=True)
        z = nl.subtract(z, nl.broadcast_to(s, (128, 64)))
        v = z.reshape((128, 8, 8)).permute((0, 2, 1)).permute((0, 2, 1)).reshape((128, 64))
        nisa.dma_copy(dst=out[:, 0:64], src=v)
    return out


def test_calls_at_a_line_seen_before_do_not_walk_the_frames():
    """With a wrapper frame (or any frame) between the kernel and a definition that is not
    counted, caller_location would walk on every call."""
    once, many_rounds = _walks(1), _walks(6)
    assert once > 10 and many_rounds == once
