"""The values the record's C paths keep and hand out again instead of rebuilding them: the short
int tuples of shapes and block indices (cpp/python/trace_int_tuples.h), the access patterns of
plain tile views (trace_plain_access.cpp), place_matmul's region keys (trace_assign.cpp), and the
in-place compares of kinds and shapes (trace_equal.h). A value handed out again (a cache hit), a
value made afresh (a miss, also after its entry was replaced by others) and the Python
definitions all agree: the same values, the same traced module, the same refusals."""

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim.nki import instructions, isa
from neuronxsim.nki.isa import Engine
from neuronxsim.nki.tensor import BlockedTensor, _blocked_getitem, _getitem
from neuronxsim.nki.tracer import Tracer, plain_tile_access

from nki_testing import same_outcome

T = nki.typing.tensor


def _python_only(m):
    """The Python definitions of a blocked matmul's steps: nc_matmul's, matmul's general path,
    _place_matmul_general, and BlockedTensor's Python subscript."""
    m.setattr(isa, "nc_matmul", isa.nc_matmul.__wrapped__)
    m.setattr(instructions, "matmul_plain", lambda *args: NotImplemented)
    m.setattr(Tracer, "place_matmul", Tracer._place_matmul_general)
    m.setattr(BlockedTensor, "__getitem__", _blocked_getitem)


@nki.jit
def blocked_matmul(lhsT, rhs):
    """The sweep's blocked matmul (tests/sweep/kernels/blocked_matmul.py) at two tiles per block
    dimension: block indices, subscripts of blocks and matmuls accumulated per block."""
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for mb in nl.affine_range(M // 256):
        for nb in nl.affine_range(N // 1024):
            acc = nl.zeros((2, 2, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
            for kb in nl.sequential_range(K // 256):
                a = nl.ndarray((2, nl.par_dim(128), 256), dtype=lhsT.dtype, buffer=nl.sbuf)
                b = nl.ndarray((2, nl.par_dim(128), 1024), dtype=rhs.dtype, buffer=nl.sbuf)
                for t in nl.affine_range(2):
                    k0 = (kb * 2 + t) * 128
                    a[t] = nl.load(lhsT[k0:k0 + 128, mb * 256:(mb + 1) * 256])
                    b[t] = nl.load(rhs[k0:k0 + 128, nb * 1024:(nb + 1) * 1024])
                for i in nl.affine_range(2):
                    for j in nl.affine_range(2):
                        for t in nl.affine_range(2):
                            acc[i, j] += nisa.nc_matmul(a[t, :, i * 128:(i + 1) * 128],
                                                        b[t, :, j * 512:(j + 1) * 512])
            for i in nl.affine_range(2):
                for j in nl.affine_range(2):
                    m0, n0 = mb * 256 + i * 128, nb * 1024 + j * 512
                    nl.store(result[m0:m0 + 128, n0:n0 + 512], value=nl.copy(acc[i, j], dtype=result.dtype))
    return result


@nki.jit
def many_regions(lhsT, rhs):
    """Matmuls accumulated into 80 regions of one PSUM tile (more than place_matmul keeps
    region keys for), twice each, then one region accumulated that no matmul started."""
    out = nl.ndarray((128, 320), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((nl.par_dim(128), 320), dtype=nl.float32, buffer=nl.psum)
    a = nl.load(lhsT[0:128, 0:128])
    b = nl.load(rhs[0:128, 0:320])
    for k in range(2):
        for j in range(80):
            acc[:, j * 4:(j + 1) * 4] += nisa.nc_matmul(a, b[:, j * 4:(j + 1) * 4])
    nl.store(out[0:128, 0:320], value=nl.copy(acc, dtype=nl.float32))
    return out


@nki.jit
def regions_then_overlap(lhsT, rhs):
    """Regions started by `=` then accumulated, then `+=` into a region overlapping two open
    groups (refused)."""
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
    a = nl.load(lhsT[0:128, 0:128])
    b = nl.load(rhs[0:128, 0:512])
    for j in range(4):
        acc[:, j * 128:(j + 1) * 128] = nisa.nc_matmul(a, b[:, j * 128:(j + 1) * 128])
        acc[:, j * 128:(j + 1) * 128] += nisa.nc_matmul(a, b[:, j * 128:(j + 1) * 128])
    acc[:, 64:192] += nisa.nc_matmul(a, b[:, 64:192])
    nl.store(out[0:128, 0:512], value=nl.copy(acc, dtype=nl.float32))
    return out


def test_the_blocked_matmul_traces_as_in_python(monkeypatch):
    args = (T[[512, 512], nl.bfloat16], T[[512, 2048], nl.bfloat16])
    assert same_outcome(monkeypatch, _python_only, blocked_matmul, *args).startswith("{")
    # (again: the tuples, patterns and regions of the first trace are the caches' hits now)
    assert same_outcome(monkeypatch, _python_only, blocked_matmul, *args).startswith("{")


def test_matmuls_into_many_regions_trace_as_in_python(monkeypatch):
    args = (T[[128, 128], nl.bfloat16], T[[128, 320], nl.bfloat16])
    assert same_outcome(monkeypatch, _python_only, many_regions, *args).startswith("{")


def test_an_overlapping_accumulation_is_refused_as_in_python(monkeypatch):
    args = (T[[128, 128], nl.bfloat16], T[[128, 512], nl.bfloat16])
    outcome = same_outcome(monkeypatch, _python_only, regions_then_overlap, *args)
    assert not outcome.startswith("{"), outcome


def _fields(t):
    return (t.storage, t.offset, t.shape, t.strides, [(c.const, c.coefs, c.size) for c in t.checks])


def test_subscripts_of_equal_shapes_share_one_tuple_and_every_shape_is_right():
    with Tracer("trn2", 1):
        x = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.sbuf)
        v, w = x[0:128, 0:512], x[0:128, 512:1024]
        assert v.shape == (128, 512) and v.shape is w.shape  # (the second: the held tuple)
        # (more shapes than the table holds: entries replaced, each shape still its own values)
        keys = [(slice(0, p), slice(f, f + n)) for p in (1, 7, 64, 128) for f in (0, 3, 500)
                for n in range(1, 400, 5)]
        for _ in range(2):
            for key in keys:
                got = x[key]
                assert _fields(got) == _fields(_getitem(x, key))
                assert type(got.shape) is tuple and all(type(d) is int for d in got.shape)
        assert x[0:128, 0:512].shape == (128, 512)


@pytest.mark.parametrize("dims", [(128, 64), (4, 6, 10), (2, 3, 4, 5), (2, 2, 3, 2, 4)])
def test_slice_subscripts_give_the_python_subscripts_views(dims):
    """`:` and a:b entries (the C walk without a View, up to four dims; five: the View's walk),
    with an ellipsis, loop-index bounds and fewer entries than dims, against _getitem; keys the
    walk does not take (a step, an index, a slice past its dim) as well."""
    from neuronxsim.nki.indexing import LoopIndex
    with Tracer("trn2", 1):
        x = nl.ndarray(dims, dtype=nl.float32, buffer=nl.hbm)
        x = x[tuple(slice(1, d) for d in dims)]  # (an offset and strides of a larger tensor)
        keys = []
        for d, size in enumerate(x.shape):
            lead = (slice(None),) * d
            keys += [lead + (slice(0, size),), lead + (slice(1, size),), lead + (slice(size - 1, size),),
                     lead + (slice(LoopIndex(0), LoopIndex(size)),), lead + (slice(0, size), Ellipsis),
                     (Ellipsis,) + (slice(0, 1),) * (len(x.shape) - d), lead + (slice(None, 1),),
                     lead + (slice(0, size, 1),), lead + (0,), lead + (slice(0, size + 1),)]
        for key in keys:
            try:
                want = _fields(_getitem(x, key))
            except Exception as e:  # (the same error from the C subscript)
                with pytest.raises(type(e)):
                    x[key]
                continue
            got = x[key]
            assert _fields(got) == want, key
            assert type(got.shape) is tuple and all(type(d) is int for d in got.shape)


def test_matmul_results_of_one_shape_share_their_shape_tuple():
    seen = []

    @nki.jit
    def kernel(lhsT, rhs):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        a = nl.load(lhsT[0:128, 0:128])
        b = nl.load(rhs[0:128, 0:1024])
        p = nisa.nc_matmul(a, b[:, 0:512])
        q = nisa.nc_matmul(a, b[:, 512:1024])
        r = nisa.nc_matmul(a[:, 0:64], b[:, 0:100])
        seen.extend([p, q, r])
        nl.store(out[0:128, 0:512], value=nl.copy(p, dtype=nl.float32))
        nl.store(out[0:128, 0:512], value=nl.copy(q, dtype=nl.float32))
        nl.store(out[0:64, 0:100], value=nl.copy(r, dtype=nl.float32))
        return out

    nki.trace_kernel(kernel, T[[128, 128], nl.bfloat16], T[[128, 1024], nl.bfloat16])
    p, q, r = seen
    assert p.shape == (128, 512) and p.shape is q.shape  # (q's: the held tuple)
    assert r.shape == (64, 100) and all(type(d) is int for d in r.shape)
    assert p.storage is not q.storage


def test_block_indices_name_their_blocks_past_the_tables_size():
    with Tracer("trn2", 1):
        t = nl.ndarray((20, 20, nl.par_dim(4), 6), dtype=nl.float32, buffer=nl.sbuf)
        views = {}
        for i in range(20):
            for j in range(20):
                views[i, j] = t[i, j]
                assert t.blocks[(i, j)] is views[i, j]
        for i in range(20):
            for j in range(20):
                assert t[i, j] is views[i, j] and t[i - 20, j - 20] is views[i, j]
                assert t.block((i, j)) is views[i, j]
        assert sorted(t.blocks) == sorted(views)
        assert all(type(k) is tuple and all(type(x) is int for x in k) for k in t.blocks)
        u = nl.ndarray((2, 2, 2, 2, 2, nl.par_dim(4), 6), dtype=nl.float32, buffer=nl.sbuf)
        assert u[1, 0, 1, 0, 1] is u.block((1, 0, 1, 0, 1))  # (five block dims: built as asked)


def test_plain_tile_accesses_agree_with_the_tracers_access_on_hits_and_misses():
    with Tracer("trn2", 1) as tr:
        x = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        keys = [(slice(0, p), slice(f, f + n, s)) for p in (1, 2, 128) for f in (0, 1, 300)
                for n in (1, 2, 5, 100) for s in (1, 2, 3) if f + n * s <= 512]
        assert len(keys) > 64  # (more patterns than the table holds)
        for _ in range(2):
            for key in keys:
                view = x[key]  # (a new view each time: nothing kept on it)
                acc = plain_tile_access(view, view.storage, Engine.DVE)
                assert acc is not None, key
                assert tuple(acc[:3]) == tuple(tr.access(view, None)[:3]), key
        # (a view past its tile's first row is the general path's: None, hit or miss)
        y = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
        wide = _getitem(y, (slice(0, 2), slice(0, 16)))
        for _ in range(2):
            assert plain_tile_access(wide, wide.storage, Engine.DVE) is None


def test_kinds_and_shapes_compare_by_value_not_identity(monkeypatch):
    """A kind that is an equal str but not the same object, a shape that is an equal tuple made
    elsewhere: the C paths take them as their equals (as == does), as the Python definitions."""
    args = (T[[128, 128], nl.bfloat16], T[[128, 512], nl.bfloat16])

    @nki.jit
    def kernel(lhsT, rhs):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.zeros((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
        a = nl.load(lhsT[0:128, 0:128])
        b = nl.load(rhs[0:128, 0:512])
        acc.storage.kind = "".join(["ps", "um"])  # (equal, another object)
        acc.shape = tuple(np.array([128, 512]).tolist())
        acc += nisa.nc_matmul(a, b)
        nl.store(out[0:128, 0:512], value=nl.copy(acc, dtype=nl.float32))
        return out

    assert same_outcome(monkeypatch, _python_only, kernel, *args).startswith("{")


@nki.jit
def loads_zeros_copies(lhsT, rhs):
    """nl.load, nl.zeros of a tile and of blocks, nl.copy and nl.store: the C paths that call
    new_result, write_fresh, record and zero_fill through their method sites."""
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((2, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
    tile = nl.zeros((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
    a = nl.load(lhsT[0:128, 0:128])
    b = nl.load(rhs[0:128, 0:512])
    for j in nl.affine_range(2):
        acc[j] += nisa.nc_matmul(a, b)
    tile += nisa.nc_matmul(a, b)
    nl.store(out[0:128, 0:512], value=nl.copy(acc[1], dtype=nl.float32))
    nl.store(out[0:128, 0:512], value=nl.copy(tile, dtype=nl.float32))
    return out


@pytest.mark.parametrize("name", ["new_result", "write_fresh", "record", "zero_fill"])
def test_the_load_store_copy_and_zeros_paths_call_a_replaced_tracer_method(monkeypatch, name):
    """A tracer method the C paths of nl.load, nl.store, nl.copy and nl.zeros call through a
    method site, replaced on the class by a Python one: they call the replacement (the same
    trace), and the C method again once it is back."""
    from nki_testing import trace_outcome
    args = (T[[128, 128], nl.bfloat16], T[[128, 512], nl.bfloat16])
    expected = trace_outcome(loads_zeros_copies, *args)
    original = getattr(Tracer, name)
    calls = []

    def replacement(self, *a):
        calls.append(name)
        return original(self, *a)

    with monkeypatch.context() as m:
        m.setattr(Tracer, name, replacement)
        assert trace_outcome(loads_zeros_copies, *args) == expected
    assert calls
    calls.clear()
    assert trace_outcome(loads_zeros_copies, *args) == expected
    assert not calls


def test_the_06_ndarray_path_calls_a_replaced_new_result(monkeypatch):
    import neuronxsim.nki06 as nki06
    import neuronxsim.nki06.isa as nisa06
    import neuronxsim.nki06.language as nl06
    from neuronxsim.nki06.kernel import trace_kernel

    @nki06.jit
    def kernel(a):
        out = nl06.ndarray((128, 64), dtype=nl06.float32, buffer=nl06.shared_hbm)
        t = nl06.ndarray((128, 64), dtype=nl06.float32, buffer=nl06.sbuf)
        nisa06.dma_copy(dst=t, src=a)
        nisa06.dma_copy(dst=out, src=t)
        return out

    x = np.zeros((128, 64), dtype=np.float32)
    expected = trace_kernel(kernel, x).module.to_json(-1)
    original = Tracer.new_result
    calls = []

    def replacement(self, *a):
        calls.append(a)
        return original(self, *a)

    with monkeypatch.context() as m:
        m.setattr(Tracer, "new_result", replacement)
        assert trace_kernel(kernel, x).module.to_json(-1) == expected
    assert calls


def test_new_result_makes_the_state_new_state_makes():
    """Tracer.new_result (C) makes a result's StorageState as tracer.new_state's partial of
    new_slotted would (without calling it), and calls any other new_state factory it is given:
    the same states, the same traced module."""
    import tutorial_kernels as tk
    from neuronxsim.nki import tracer as tracer_module
    from neuronxsim.nki.record import Access, Op
    from neuronxsim.nki.tensor import Storage, Tensor
    from neuronxsim.nki.tracer import IT, StorageState

    def slots(state):
        return [getattr(state, name) for name in StorageState.__slots__]

    args = (T[[300, 200], nl.float32], T[[200], nl.float32])
    seen = []
    original = tracer_module.new_state
    fast = nki.trace_kernel(tk.rmsnorm_kernel, *args).module.to_json(-1)

    def factory():
        state = original()
        seen.append(slots(state))
        return state

    nki_core = tracer_module._core.nki
    try:
        nki_core.configure_tracer_methods(Op, Storage, Tensor, factory, IT.Matmult, Access)
        called = nki.trace_kernel(tk.rmsnorm_kernel, *args).module.to_json(-1)
    finally:
        nki_core.configure_tracer_methods(Op, Storage, Tensor, original, IT.Matmult, Access)
    assert seen and all(s == slots(original()) for s in seen)
    assert called == fast


@nki.jit
def results_of_many_shapes(a):
    """Results of [P, F] and [P] shapes, made again and again."""
    out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    acc = nl.sum(x, axis=1, keepdims=True)
    for i in nl.affine_range(3):
        for f in (1, 9, 17, 24):
            y = nl.exp(x[:, 0:f])
            acc = acc + nl.sum(y, axis=1, keepdims=True)
        v = nl.max(x, axis=1)  # (a [128] result)
        acc = acc + nl.sum(nl.exp(x[:, 0:24]), axis=1, keepdims=True) * nl.max(x, axis=1, keepdims=True)
        acc = acc - nl.sum(nl.exp(x[:, 0:9]), axis=1, keepdims=True) + nl.sum(x, axis=1, keepdims=True)
    nl.store(out[0:128, 0:1], value=acc + nl.sum(nl.exp(x[:, 0:2]), axis=1, keepdims=True))
    del v
    return out


def test_new_result_layouts_as_the_python_definition(monkeypatch):
    """Tracer.new_result (C, remembering the layouts it found in the tracer's tile_layouts) makes
    the results _new_result_general (Python) makes: kernels traced one after another (each tracer
    its own tile_layouts), [P] and [P, F] results of many shapes."""
    import tutorial_kernels as tk
    from neuronxsim.nki.tracer import Tracer
    cases = [(results_of_many_shapes, (T[[128, 32], nl.float32],)),
             (tk.rmsnorm_kernel, (T[[300, 200], nl.float32], T[[200], nl.float32])),
             (results_of_many_shapes, (T[[128, 32], nl.float32],)),
             (tk.layernorm_v2, (T[[300, 1100], nl.float32], 1e-5, T[[1100], nl.float32],
                                T[[1100], nl.float32]))]
    fast = [nki.trace_kernel(k, *a).module.to_json(-1) for k, a in cases]
    with monkeypatch.context() as m:
        m.setattr(Tracer, "new_result", Tracer._new_result_general)
        general = [nki.trace_kernel(k, *a).module.to_json(-1) for k, a in cases]
    assert fast == general
