"""The plain lane-wise instructions in C (``lanewise_plain``, cpp/python/trace_lanewise.cpp) and
the partition/free subscript in C (cpp/python/trace_subscript.cpp): every kernel here traces to
the same module with the fast paths as without them (``lanewise_plain`` refused, so the Python
path records everything), computes what NumPy does, and refuses what it refuses with the same
message."""

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim.nki import instructions
from neuronxsim.nki.errors import NKIError
from neuronxsim.nki.indexing import partition_free_subscript
from neuronxsim.nki.tensor import PSUM, SBUF, Tensor, _getitem, new_view
from neuronxsim.nki.tracer import Engine, Tracer, plain_tile_access, write_plain
from neuronxsim.starfish.lib import _core

from nki_testing import close, run_on, trace_outcome

T = nki.typing.tensor


@pytest.fixture
def general_only(monkeypatch):
    """Makes ``lanewise_plain`` refuse every instruction (the Python path records them all)."""
    monkeypatch.setattr(instructions, "lanewise_plain", lambda *args: NotImplemented)


def _module(kernel, *args):
    return nki.trace_kernel(kernel, *args).module.to_json(-1)


def _same_with_and_without(monkeypatch, kernel, *args):
    fast = _module(kernel, *args)
    with monkeypatch.context() as m:
        m.setattr(instructions, "lanewise_plain", lambda *a: NotImplemented)
        general = _module(kernel, *args)
    assert fast == general


@nki.jit
def elementwise(a, b, col):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    rows, cols = a.shape
    ip = nl.arange(128)[:, None]
    ic = nl.arange(cols)[None, :]
    for t in nl.affine_range((rows + 127) // 128):
        valid = t * 128 + ip < rows  # (keeps all but the last tile's partitions)
        x = nl.load(a[t * 128 + ip, ic], mask=valid)
        y = nl.load(b[t * 128 + ip, ic], mask=valid)
        c = nl.load(col[t * 128 + ip, 0], mask=valid)
        s = nl.add(x, y, mask=valid)                      # tensor_tensor
        m = nl.multiply(s, 0.5)                           # tensor_scalar, a float
        m = nl.add(m, 2)                                  # an int
        m = nl.subtract(m, np.float32(1.0))               # a NumPy number: the general path
        p = nl.multiply(m, c)                             # tensor_scalar, a [P, 1] tile
        q = nisa.tensor_scalar(p, np.multiply, c, op1=np.add, operand1=c)  # two tiles
        r = nisa.tensor_scalar(q, np.subtract, 1.0, op1=np.add, operand1=c)  # a tile operand1
        e = nl.exp(r)                                     # activation
        f = nisa.activation(op=nl.tanh, data=e, bias=c, scale=c)  # pointer bias and scale
        g = nisa.activation(op=nl.copy, data=f, bias=0.25, scale=2.0)  # a number bias
        h = nl.sum(g, axis=[1], keepdims=True)            # tensor_reduce
        k = nl.maximum(g, h)                              # a column: tensor_scalar
        mixed = nl.add(k, nl.copy(y, dtype=nl.bfloat16))  # dtypes promoted
        nl.store(out[t * 128 + ip, ic], value=mixed, mask=valid)
    return out


@nki.jit
def stats(a):
    out = nl.ndarray((a.shape[0], 2), dtype=nl.float32, buffer=nl.shared_hbm)
    rows, cols = a.shape
    ip = nl.arange(128)[:, None]
    ic = nl.arange(cols)[None, :]
    i6 = nl.arange(6)[None, :]
    i2 = nl.arange(2)[None, :]
    for t in nl.affine_range(rows // 128):
        x = nl.load(a[t * 128 + ip, ic])
        st = nl.ndarray((128, 12), dtype=nl.float32)
        for j in nl.affine_range(2):
            st[ip, j * 6 + i6] = nisa.bn_stats(x[ip, j * 256 + nl.arange(256)[None, :]],
                                               mask=(j * 256 + nl.arange(256)[None, :] < cols))
        mv = nisa.bn_aggr(st)
        nl.store(out[t * 128 + ip, i2], value=mv)
    return out


@nki.jit
def psum_inputs(a, b):
    out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    mm = nl.matmul(x, y, transpose_x=True)   # PSUM
    s = nl.add(mm, x)                        # one PSUM input
    r = nl.exp(mm)                           # the Scalar Engine reading PSUM
    nl.store(out, value=nl.add(s, r))
    return out


def _inputs(rng, rows=300, cols=64):
    a = rng.standard_normal((rows, cols)).astype(np.float32)
    b = rng.standard_normal((rows, cols)).astype(np.float32)
    col = rng.uniform(0.5, 1.0, (rows, 1)).astype(np.float32)
    return a, b, col


def _elementwise_expected(a, b, col):
    m = (a + b) * 0.5 + 2 - 1
    p = m * col
    q = p * col + col
    r = (q - 1.0) + col
    f = np.tanh(np.exp(r) * col + col)
    g = f * 2.0 + 0.25
    return np.maximum(g, g.sum(axis=1, keepdims=True)) + b


def test_elementwise_kernel_is_the_general_paths(monkeypatch):
    types = (T[[300, 64], nl.float32], T[[300, 64], nl.float32], T[[300, 1], nl.float32])
    _same_with_and_without(monkeypatch, elementwise, *types)
    _same_with_and_without(monkeypatch, stats, T[[256, 512], nl.float32])
    _same_with_and_without(monkeypatch, psum_inputs, T[[128, 128], nl.float32],
                           T[[128, 128], nl.float32])


def test_fast_paths_take_the_plain_instructions(monkeypatch):
    """The C path records most of the kernel (else the test above compares nothing)."""
    calls = []
    real = instructions.lanewise_plain

    def counted(*args):
        made = real(*args)
        calls.append(made.__class__ is Tensor)
        return made
    monkeypatch.setattr(instructions, "lanewise_plain", counted)
    nki.trace_kernel(elementwise, T[[300, 64], nl.float32], T[[300, 64], nl.float32],
                     T[[300, 1], nl.float32])
    assert sum(calls) >= 12 and not all(calls)  # (the masked last tile takes the general path)


@pytest.mark.parametrize("fast", [True, False])
def test_elementwise_computes_what_numpy_does(rng, monkeypatch, fast):
    if not fast:
        monkeypatch.setattr(instructions, "lanewise_plain", lambda *a: NotImplemented)
    a, b, col = _inputs(rng)
    close(run_on("simulator", elementwise, a, b, col), _elementwise_expected(a, b, col),
          atol=2e-2, rtol=2e-2)


def test_bn_stats_computes_mean_and_variance(rng):
    a = rng.standard_normal((256, 512)).astype(np.float32)
    close(run_on("simulator", stats, a),
          np.stack([a.mean(axis=1), a.var(axis=1)], axis=1), atol=1e-4, rtol=1e-4)


def test_psum_inputs_compute_what_numpy_does(rng):
    a = rng.standard_normal((128, 128)).astype(np.float32)
    b = rng.standard_normal((128, 128)).astype(np.float32)
    mm = a.T @ b
    close(run_on("simulator", psum_inputs, a, b), mm + a + np.exp(mm), atol=1e-2, rtol=1e-3)


# ---- refusals: the same message on both paths ----

@nki.jit
def two_psum_inputs(a):
    x = nl.load(a)
    m1 = nl.matmul(x, x, transpose_x=True)
    m2 = nl.matmul(x, x, transpose_x=True)
    out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, value=nl.add(m1, m2))
    return out


@nki.jit
def too_many_bn_stats(a):
    x = nl.load(a)
    out = nl.ndarray((128, 6), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, value=nisa.bn_stats(x))
    return out


@nki.jit
def bad_mask(a):
    x = nl.load(a)
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    iff = nl.arange(64)[None, :]
    nl.store(out, value=nl.exp(x, mask=(ip >= iff)))  # a triangle: no box
    return out


@nki.jit
def bitvec_float(a):
    x = nl.load(a)
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, value=nl.bitwise_and(x, x))
    return out


@pytest.mark.parametrize("kernel,shape,text", [
    (two_psum_inputs, [128, 128], "PSUM"),
    (too_many_bn_stats, [128, 1024], "bn_stats"),
    (bad_mask, [128, 64], "mask"),
    (bitvec_float, [128, 64], "bitwise_and"),
])
def test_refusals_are_the_general_paths(monkeypatch, kernel, shape, text):
    with pytest.raises(NKIError) as fast:
        nki.trace_kernel(kernel, T[shape, nl.float32])
    with monkeypatch.context() as m:
        m.setattr(instructions, "lanewise_plain", lambda *a: NotImplemented)
        with pytest.raises(NKIError) as general:
            nki.trace_kernel(kernel, T[shape, nl.float32])
    assert fast.value.reason == general.value.reason
    assert str(fast.value).splitlines()[0] == str(general.value).splitlines()[0]  # (kernel line)
    assert text in fast.value.reason


def test_too_many_bn_stats_is_refused_every_time():
    """(the rule's verdict is remembered per tile shape: the second trace asks it again)"""
    for _ in range(2):
        with pytest.raises(NKIError, match="bn_stats"):
            nki.trace_kernel(too_many_bn_stats, T[[128, 1024], nl.float32])


def test_a_result_write_plain_refuses_is_recorded_by_the_general_path(monkeypatch):
    """lanewise_plain's third answer, ``(result,)``: the general path records the new result."""
    types = (T[[300, 64], nl.float32], T[[300, 64], nl.float32], T[[300, 1], nl.float32])
    expected = _module(elementwise, *types)
    seen = []

    def refusing(view, engine, matmul=False):
        seen.append(view)
        return None
    configure = (Tensor, plain_tile_access, refusing, Engine.Activation, PSUM, SBUF,
                 instructions.NUM_PARTITIONS, instructions.CUT_OPCODES)
    _core.nki.configure_lanewise(*configure)
    try:
        assert _module(elementwise, *types) == expected
    finally:
        _core.nki.configure_lanewise(*configure[:2], write_plain, *configure[3:])
    assert seen
    assert _module(elementwise, *types) == expected


# ---- the C subscript's partition/free case ----

def _fields(t):
    return (t.storage, t.offset, t.shape, t.strides, [(c.const, c.coefs, c.size, c.axis)
                                                      for c in t.checks])


def test_partition_free_subscript_in_c_is_the_python_one():
    with Tracer("trn2", 1):
        t = nl.ndarray((256, 96), dtype=nl.float32, buffer=nl.shared_hbm)
        views = [t, t[8:136, 0:64], t[:, 1:80:2]]
        ip, iq = nl.arange(128)[:, None], nl.arange(1)[:, None]
        ic, iw = nl.arange(32)[None, :], nl.arange(200)[None, :]
        grid = nl.mgrid[0:128, 0:32]
        rows = [ip, ip + 64, ip + 200, ip * 2, ip - 1, iq, iq + 5, grid.p, ip * 0]
        cols = [ic, ic + 7, ic * 2, iw, ic - 1, grid.x, 0, 31, 95, 96, -1, nl.arange(32)[:, None]]
        checked = 0
        for view in views:
            for r in rows:
                for c in cols:
                    key = (r, c)
                    try:
                        expected = _fields(_getitem(view, key))
                    except NKIError as e:
                        with pytest.raises(NKIError) as got:
                            view[key]
                        assert got.value.reason == e.reason, key
                        continue
                    got = view[key]
                    assert _fields(got) == expected, key
                    made = partition_free_subscript(r, c, view.shape, view.strides, view.offset)
                    if made is not None:
                        checked += 1
                        assert (got.offset, got.shape, got.strides) == made
                        if c.__class__ is int:
                            assert got.shape is r.shape  # (as the Python path shares it)
        assert checked > 30


# ---- partial tiles (a loop's last, its tiles written in their leading partitions) in C ----

@nki.jit
def partial_rows(a, col):
    """rmsnorm's loop: masked loads write the last tile's leading rows only, and the unmasked
    instructions after them compute those rows."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    rows, cols = a.shape
    ip = nl.arange(128)[:, None]
    ic = nl.arange(cols)[None, :]
    for t in nl.affine_range((rows + 127) // 128):
        valid = t * 128 + ip < rows
        x = nl.load(a[t * 128 + ip, ic], mask=valid)
        c = nl.load(col[t * 128 + ip, 0], mask=valid)
        s = nl.sum(nl.square(x), axis=[1])           # activation; tensor_reduce (general)
        r = nl.rsqrt(s / cols)                       # tensor_scalar of an int; activation of [P]
        y = nl.multiply(x, r)                        # tensor_scalar, a [P] tile
        z = nl.add(y, x)                             # tensor_tensor
        z += x                                       # in place
        z = nl.multiply(z, nl.full((128, cols), 0.5, dtype=nl.float32))  # and a whole tile
        w = nisa.activation(op=nl.tanh, data=z, bias=c, scale=c)  # pointer bias and scale
        v = nisa.tensor_scalar(w, np.multiply, c, op1=np.add, operand1=c)  # two [P, 1] tiles
        u = nl.multiply(v, 2.0, mask=valid)          # a mask cutting the box: the general path
        nl.store(out[t * 128 + ip, ic], value=u, mask=valid)
    return out


def _partial_rows_expected(a, col):
    x = a.astype(np.float64)
    r = 1.0 / np.sqrt((x * x).sum(axis=1, keepdims=True) / a.shape[1])
    z = (x * r + x + x) * 0.5
    w = np.tanh(z * col + col)
    return 2.0 * (w * col + col)


_ROWS = [1, 127, 128, 129, 300, 4000]


@pytest.mark.parametrize("rows", _ROWS)
def test_partial_tiles_trace_as_the_general_path(monkeypatch, rows):
    _same_with_and_without(monkeypatch, partial_rows, T[[rows, 64], nl.float32],
                           T[[rows, 1], nl.float32])


@pytest.mark.parametrize("rows", [1, 127, 129, 300])
def test_partial_tiles_are_recorded_in_c(monkeypatch, rows):
    """Of a partial tile's lane-wise instructions, only the masked multiply (a mask cutting the
    box) reaches the general path's record_lanewise."""
    IT = instructions.IT
    general = []
    record_lanewise = instructions.record_lanewise
    monkeypatch.setattr(instructions, "record_lanewise",
                        lambda tr, opcode, *a: general.append(opcode) or
                        record_lanewise(tr, opcode, *a))
    nki.trace_kernel(partial_rows, T[[rows, 64], nl.float32], T[[rows, 1], nl.float32])
    assert general == [IT.TensorScalar]


@pytest.mark.parametrize("executor", ["simulator", "reference"])
@pytest.mark.parametrize("rows", _ROWS)
def test_partial_tiles_compute_what_numpy_does(rng, executor, rows):
    a = rng.standard_normal((rows, 64)).astype(np.float32)
    col = rng.uniform(0.5, 1.5, (rows, 1)).astype(np.float32)
    close(run_on(executor, partial_rows, a, col), _partial_rows_expected(a, col),
          atol=1e-4, rtol=1e-4)


@nki.jit
def partial_and_unwritten(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    ic = nl.arange(a.shape[1])[None, :]
    x = nl.load(a[ip, ic], mask=ip < a.shape[0])
    never = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
    nl.store(out[ip, ic], value=nl.add(x, never), mask=ip < a.shape[0])
    return out


def test_a_partial_tile_with_an_unwritten_one_is_refused_as_the_general_path(monkeypatch):
    fast = trace_outcome(partial_and_unwritten, T[[40, 64], nl.float32])
    with monkeypatch.context() as m:
        m.setattr(instructions, "lanewise_plain", lambda *a: NotImplemented)
        general = trace_outcome(partial_and_unwritten, T[[40, 64], nl.float32])
    assert fast == general
    assert "before anything writes it" in fast


@pytest.mark.parametrize("kind", [nl.sbuf, nl.psum])
@pytest.mark.parametrize("count", [1, 44, 127])
def test_a_column_view_has_the_tracers_access(kind, count):
    """plain_tile_access of a [p] view of a [P] tile (a partial tile's cut of a reduction's
    result) is the access the tracer makes of it: a [p, 1] one."""
    with Tracer("trn2", 1) as tr:
        t = nl.ndarray((128,), dtype=nl.float32, buffer=kind)
        st = t.storage
        made = plain_tile_access(new_view(st, 0, (count,), t.strides, ()), st, Engine.DVE)
        expected = tr.access(new_view(st, 0, (count,), t.strides, ()), None)
    assert made is not None
    assert (made.offset, made.pairs) == (expected.offset, expected.pairs)
