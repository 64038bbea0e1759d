"""The C paths of ``nisa.dma_copy``, ``nisa.nc_matmul`` and ``nl.ndarray`` (their ApiCall's
``fast``, cpp/python/trace_nki06_fast.cpp) against the Python definitions alone (``fast`` set to
None): every kernel here traces to the same module (or fails with the same error), and its
instructions answer handles of the same lengths, either way. The kernels cross tile boundaries,
use odd sizes, several dtypes, positional and keyword arguments, and the cases the C paths leave
to the definitions (indirect views, HBM operands, SBUF destinations of a matmul, names, wrong
keywords, errors)."""

import numpy as np
import pytest

import neuronxsim.nki06 as nki
import neuronxsim.nki06.isa as nisa
import neuronxsim.nki06.language as nl
from neuronxsim.nki.errors import NKIError
from neuronxsim.nki06.kernel import trace_kernel
from neuronxsim.nki06.tensor import NkiTensor

HANDLES = []  # the handle length of each instruction a kernel kept, in call order


def _outcome(kernel, *args):
    """The traced module's JSON and the handles' lengths, or the refusal's type and message."""
    HANDLES.clear()
    try:
        json = trace_kernel(kernel, *args, schedule="source").module.to_json(-1)
    except (NKIError, TypeError, ValueError) as e:
        return f"{type(e).__name__}: {e}", list(HANDLES)
    return json, list(HANDLES)


def _same_with_c_and_python(monkeypatch, kernel, *args):
    assert nisa.dma_copy.fast is not None and nisa.nc_matmul.fast is not None
    assert nl.ndarray.fast is not None
    c = _outcome(kernel, *args)
    with monkeypatch.context() as m:
        for call in (nisa.dma_copy, nisa.nc_matmul, nl.ndarray):
            m.setattr(call, "fast", None)
        python = _outcome(kernel, *args)
    assert c == python
    return c[0]


def _keep(h):
    HANDLES.append(len(h.handle))
    return h


def _arrays(*shapes, dtype=np.float32):
    rng = np.random.default_rng(0)
    return tuple(rng.standard_normal(s).astype(dtype) for s in shapes)


# ---- kernels ----

@nki.jit
def blocked_matmul(lhsT, rhs):
    """K in 128-row steps (the last one short when K is odd), N in 512-column tiles (the last one
    short), accumulate given as k > 0, and by default."""
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    ks = [(k, min(128, K - k)) for k in range(0, K, 128)]
    for n in range(0, N, 512):
        w = min(512, N - n)
        acc = nl.ndarray((M, w), dtype=nl.float32, buffer=nl.psum)
        acc2 = nl.ndarray((M, w), nl.float32, nl.psum)
        for i, (k, h) in enumerate(ks):
            a = nl.ndarray((h, M), dtype=lhsT.dtype, buffer=nl.sbuf)
            b = nl.ndarray(shape=(h, w), dtype=rhs.dtype)
            _keep(nisa.dma_copy(dst=a, src=lhsT[k:k + h, :]))
            _keep(nisa.dma_copy(b, rhs[k:k + h, n:n + w]))
            _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=b, accumulate=i > 0))
            _keep(nisa.nc_matmul(acc2, a, b))
        out = nl.ndarray((M, w), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=out, src=acc2)
        nisa.tensor_tensor(dst=out, data1=acc, data2=out, op=nl.add)
        _keep(nisa.dma_copy(dst=result[:, n:n + w], src=out))
    return result


@pytest.mark.parametrize("K, M, N, dtype", [
    (256, 128, 1024, np.float32),
    (300, 96, 600, np.float32),
    (128, 128, 512, "bfloat16"),
    (77, 5, 33, np.float32),
])
def test_blocked_matmuls_trace_alike(monkeypatch, K, M, N, dtype):
    if dtype == "bfloat16":
        import ml_dtypes
        dtype = ml_dtypes.bfloat16
    got = _same_with_c_and_python(monkeypatch, blocked_matmul, *_arrays((K, M), (K, N), dtype=dtype))
    assert got.startswith("{"), got


@nki.jit
def matmul_cases(lhsT, rhs, case):
    """One matmul of each kind the C path declines or fails on (``case`` picks it)."""
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.ndarray((K, M), dtype=lhsT.dtype, buffer=nl.sbuf)
    b = nl.ndarray((K, N), dtype=rhs.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a, src=lhsT)
    nisa.dma_copy(dst=b, src=rhs)
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
    if case == "accumulate onto nothing":
        _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=b, accumulate=True))
    elif case == "accumulate twice":
        _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=b, accumulate=False))
        _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=b, accumulate=True))
        _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=b))
    elif case == "accumulate an int":
        _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=b, accumulate=0))
    elif case == "dst in sbuf":
        _keep(nisa.nc_matmul(dst=out, stationary=a, moving=b))
    elif case == "dst reshaped":
        flat = nl.ndarray((M, N // 2, 2), dtype=nl.float32, buffer=nl.psum)
        _keep(nisa.nc_matmul(dst=flat, stationary=a, moving=b))
        acc = flat.reshape((M, N))
    elif case == "dst of another shape":
        wrong = nl.ndarray((M, N - 1), dtype=nl.float32, buffer=nl.psum)
        _keep(nisa.nc_matmul(dst=wrong, stationary=a, moving=b))
    elif case == "stationary in hbm":
        _keep(nisa.nc_matmul(dst=acc, stationary=lhsT, moving=b))
    elif case == "moving not a tensor":
        _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=3))
    elif case == "transpose":
        _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=b, is_transpose=False, accumulate=None))
    elif case == "named":
        _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=b, name="mm"))
    elif case == "wrong keyword":
        _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=b, mask=None))
    elif case == "moving twice":
        _keep(nisa.nc_matmul(acc, a, b, moving=b))
    elif case == "positional onezero":
        _keep(nisa.nc_matmul(acc, a, b, False))
    elif case == "sliced operands":
        _keep(nisa.nc_matmul(dst=acc[0:M - 1, :], stationary=a[:, 0:M - 1], moving=b))
    elif case == "unwritten operand":
        c = nl.ndarray((K, N), dtype=rhs.dtype, buffer=nl.sbuf)
        _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=c))
    if case not in ("dst in sbuf",):
        nisa.tensor_copy(dst=out, src=acc)
    nisa.dma_copy(dst=result, src=out)
    return result


MATMUL_CASES = ["accumulate onto nothing", "accumulate twice", "accumulate an int", "dst in sbuf",
                "dst reshaped", "dst of another shape", "stationary in hbm", "moving not a tensor",
                "transpose", "named", "wrong keyword", "moving twice", "positional onezero",
                "sliced operands", "unwritten operand"]


@pytest.mark.parametrize("case", MATMUL_CASES)
def test_matmul_cases_trace_alike(monkeypatch, case):
    _same_with_c_and_python(monkeypatch, matmul_cases, *_arrays((64, 96), (64, 40)), case)


def test_the_error_cases_fail():
    for case, text in [("accumulate onto nothing", "accumulate=True onto PSUM tensor"),
                       ("dst of another shape", "stationary.T @ moving is"),
                       ("wrong keyword", "unexpected keyword argument 'mask'"),
                       ("moving twice", "multiple values for argument 'moving'"),
                       ("moving not a tensor", "moving must be an SBUF or PSUM tensor")]:
        got, _ = _outcome(matmul_cases, *_arrays((64, 96), (64, 40)), case)
        assert text in got, (case, got)


@nki.jit
def dma_cases(x, idx, case):
    """Transfers of each kind: odd sizes, strided and partial views, a cast, an indirect source,
    keywords the C path leaves to the definition, errors."""
    R, C = x.shape
    out = nl.ndarray((R, C), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((R, C), dtype=x.dtype, buffer=nl.sbuf)
    _keep(nisa.dma_copy(dst=t, src=x))
    if case == "strided":
        half = nl.ndarray((R, (C + 1) // 2), dtype=x.dtype, buffer=nl.sbuf)
        _keep(nisa.dma_copy(dst=half, src=x[:, 0:C:2]))
        _keep(nisa.dma_copy(dst=t[:, 0:C:2], src=half))
    elif case == "cast":
        f = nl.ndarray((R, C), dtype=nl.bfloat16, buffer=nl.sbuf)
        _keep(nisa.dma_copy(dst=f, src=t))
        _keep(nisa.dma_copy(dst=t, src=f))
    elif case == "sbuf to sbuf":
        u = nl.ndarray((R, C), dtype=x.dtype)
        _keep(nisa.dma_copy(u, t))
        t = u
    elif case == "gather":
        i = nl.ndarray((R, 1), dtype=nl.int32, buffer=nl.sbuf)
        _keep(nisa.dma_copy(dst=i, src=idx))
        _keep(nisa.dma_copy(dst=t, src=x.ap([[C, R], [1, C]], vector_offset=i)))
    elif case == "named":
        _keep(nisa.dma_copy(dst=t, src=x, name="load"))
    elif case == "engine":
        _keep(nisa.dma_copy(dst=t, src=x, dge_mode=nisa.dge_mode.swdge))
    elif case == "not a tensor":
        _keep(nisa.dma_copy(dst=t, src=1.0))
    elif case == "wrong keyword":
        _keep(nisa.dma_copy(dst=t, src=x, mask=None))
    elif case == "too many":
        _keep(nisa.dma_copy(t, x, None, nisa.oob_mode.error, nisa.dge_mode.unknown,
                            nisa.engine.unknown, None, 1))
    elif case == "shape mismatch":
        _keep(nisa.dma_copy(dst=t[:, 0:C - 1], src=x))
    elif case == "hbm to hbm":
        _keep(nisa.dma_copy(dst=out, src=x))
    elif case == "partitions":
        _keep(nisa.dma_copy(dst=t[1:R, :], src=x[0:R - 1, :]))
    _keep(nisa.dma_copy(dst=out, src=t))
    return out


DMA_CASES = ["plain", "strided", "cast", "sbuf to sbuf", "gather", "named", "engine",
             "not a tensor", "wrong keyword", "too many", "shape mismatch", "hbm to hbm",
             "partitions"]


@pytest.mark.parametrize("case", DMA_CASES)
@pytest.mark.parametrize("rows, cols", [(128, 64), (100, 77), (3, 1)])
def test_dma_cases_trace_alike(monkeypatch, case, rows, cols):
    x, = _arrays((rows, cols))
    idx = (np.arange(rows, dtype=np.int32)[::-1] % rows).reshape(rows, 1)
    _same_with_c_and_python(monkeypatch, dma_cases, x, idx, case)


@nki.jit
def ndarray_cases(x, case):
    """Tensors of each kind: repeated specs, dtypes, PSUM, HBM, names, addresses, list shapes,
    wrong arguments."""
    R, C = x.shape
    out = nl.ndarray((R, C), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in range(3):
        t = nl.ndarray((R, C), x.dtype, nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
    if case == "list shape":
        t = nl.ndarray([R, C], dtype=x.dtype)
    elif case == "dtypes":
        for dtype in (nl.bfloat16, nl.float16, nl.int32, nl.float32):
            u = nl.ndarray((R, C), dtype=dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=u, src=t)
    elif case == "psum":
        p = nl.ndarray((R, C), dtype=nl.float32, buffer=nl.psum)
        nisa.tensor_copy(dst=p, src=t)
        nisa.tensor_copy(dst=t, src=p)
    elif case == "hbm":
        h = nl.ndarray((R, C), dtype=x.dtype, buffer=nl.hbm)
        nisa.dma_copy(dst=h, src=t)
        nisa.dma_copy(dst=t, src=h)
    elif case == "named":
        t2 = nl.ndarray((R, C), dtype=x.dtype, name="mine")
        nisa.tensor_copy(dst=t2, src=t)
        t = t2
    elif case == "address":
        t2 = nl.ndarray((R, C), dtype=x.dtype, address=(0, 1024))
        nisa.tensor_copy(dst=t2, src=t)
        t = t2
    elif case == "too many partitions":
        nl.ndarray((R + 128, C), dtype=x.dtype)
    elif case == "string buffer":
        nl.ndarray((R, C), dtype=x.dtype, buffer="sbuf")
    elif case == "no dtype":
        nl.ndarray((R, C))
    elif case == "wrong keyword":
        nl.ndarray((R, C), dtype=x.dtype, mask=None)
    elif case == "dtype twice":
        nl.ndarray((R, C), x.dtype, dtype=x.dtype)
    elif case == "unhashable dtype":
        nl.ndarray((R, C), dtype=[x.dtype])
    elif case == "zero size":
        nl.ndarray((R, 0), dtype=x.dtype)
    assert type(t) is NkiTensor and t.buffer is nl.sbuf and not t.is_indirect()
    nisa.dma_copy(dst=out, src=t)
    return out


NDARRAY_CASES = ["plain", "list shape", "dtypes", "psum", "hbm", "named", "address",
                 "too many partitions", "string buffer", "no dtype", "wrong keyword", "dtype twice",
                 "unhashable dtype", "zero size"]


@pytest.mark.parametrize("case", NDARRAY_CASES)
def test_ndarray_cases_trace_alike(monkeypatch, case):
    _same_with_c_and_python(monkeypatch, ndarray_cases, *_arrays((96, 40)), case)


def test_the_c_paths_decline_outside_a_trace():
    """Without a tracer each call is its definition's (which refuses it)."""
    x = nl.ndarray  # (an ApiCall: its fast declines, the definition raises)
    with pytest.raises(Exception) as c:
        x((128, 4), dtype=nl.float32)
    with pytest.raises(Exception) as python:
        x.__wrapped__((128, 4), dtype=nl.float32)
    assert type(c.value) is type(python.value) and c.value.reason == python.value.reason
    for call in (nisa.dma_copy, nisa.nc_matmul):
        assert call.fast(None, None) is NotImplemented


@nki.jit
def matmul_into_cases(lhsT, rhs, case):
    """nc_matmul (accumulate a bool or by default) into PSUM destinations the C path records the matmul into
    directly (cpp/python/trace_matmul.cpp, matmul_into), the ones it leaves to matmul_plain and
    _place_matmul (pending zeros under accumulate=False, nothing written under accumulate=True),
    and the placement's refusals, which must keep the definition's wording and line."""
    K, M = lhsT.shape
    _, N = rhs.shape
    half = M // 2
    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.ndarray((K, M), dtype=lhsT.dtype, buffer=nl.sbuf)
    b = nl.ndarray((K, N), dtype=rhs.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a, src=lhsT)
    nisa.dma_copy(dst=b, src=rhs)
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
    if case == "start, join, restart, join":
        for accumulate in (False, True, False, True, True):
            _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=b, accumulate=accumulate))
    elif case == "onto zeros":
        acc = nl.zeros((M, N), dtype=nl.float32, buffer=nl.psum)
        _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=b, accumulate=True))
        _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=b, accumulate=True))
    elif case == "half onto zeros":
        acc = nl.zeros((M, N), dtype=nl.float32, buffer=nl.psum)
        _keep(nisa.nc_matmul(dst=acc[0:half, :], stationary=a[:, 0:half], moving=b, accumulate=True))
    elif case == "start over zeros":
        acc = nl.zeros((M, N), dtype=nl.float32, buffer=nl.psum)
        _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=b, accumulate=False))
        _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=b, accumulate=True))
    elif case == "two regions":
        for accumulate in (False, True):
            _keep(nisa.nc_matmul(dst=acc[0:half, :], stationary=a[:, 0:half], moving=b, accumulate=accumulate))
            _keep(nisa.nc_matmul(dst=acc[half:M, :], stationary=a[:, half:M], moving=b, accumulate=accumulate))
    elif case == "two tiles":
        acc2 = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
        for accumulate in (False, True, True):
            _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=b, accumulate=accumulate))
            _keep(nisa.nc_matmul(dst=acc2, stationary=a, moving=b, accumulate=accumulate))
        nisa.tensor_copy(dst=out, src=acc2)
        nisa.tensor_tensor(dst=out, data1=acc, data2=out, op=nl.add)
    elif case == "onto a copy":
        nisa.tensor_copy(dst=acc, src=b)
        _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=b, accumulate=True))
    elif case == "onto part of a group":
        _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=b, accumulate=False))
        _keep(nisa.nc_matmul(dst=acc[0:half, :], stationary=a[:, 0:half], moving=b, accumulate=True))
    elif case == "part over a group":
        _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=b, accumulate=False))
        _keep(nisa.nc_matmul(dst=acc[0:half, :], stationary=a[:, 0:half], moving=b, accumulate=False))
    elif case == "by default":
        for _ in range(3):
            _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=b))
    elif case == "by default onto zeros":
        acc = nl.zeros((M, N), dtype=nl.float32, buffer=nl.psum)
        for _ in range(2):
            _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=b))
    elif case == "by default, two regions":
        for _ in range(2):
            _keep(nisa.nc_matmul(acc[0:half, :], a[:, 0:half], b))
            _keep(nisa.nc_matmul(acc[half:M, :], a[:, half:M], b))
        _keep(nisa.nc_matmul(acc, a, b))
        _keep(nisa.nc_matmul(acc, a, b))
    elif case == "by default onto a copy":
        nisa.tensor_copy(dst=acc, src=b)
        _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=b))
    elif case == "by default onto part of a group":
        _keep(nisa.nc_matmul(dst=acc, stationary=a, moving=b))
        _keep(nisa.nc_matmul(dst=acc[0:half, :], stationary=a[:, 0:half], moving=b))
    if case != "two tiles":
        nisa.tensor_copy(dst=out, src=acc)
    nisa.dma_copy(dst=result, src=out)
    return result


MATMUL_INTO_CASES = ["start, join, restart, join", "onto zeros", "half onto zeros", "start over zeros",
                     "two regions", "two tiles", "onto a copy", "onto part of a group", "part over a group",
                     "by default", "by default onto zeros", "by default, two regions", "by default onto a copy",
                     "by default onto part of a group"]


@pytest.mark.parametrize("case", MATMUL_INTO_CASES)
def test_matmul_into_cases_trace_alike(monkeypatch, case):
    _same_with_c_and_python(monkeypatch, matmul_into_cases, *_arrays((128, 128), (128, 96)), case)


def test_matmul_into_refusals_name_the_instruction_and_line():
    for case, text in [("onto a copy", "nisa.nc_matmul: accumulates a matmul into PSUM tile"),
                       ("onto part of a group", "nisa.nc_matmul: accumulates a matmul into partitions")]:
        got, _ = _outcome(matmul_into_cases, *_arrays((128, 128), (128, 96)), case)
        assert text in got and "test_fast_calls06.py:" in got, (case, got)
