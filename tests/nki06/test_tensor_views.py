"""NkiTensor: attributes, subscripts and view methods as NKI 0.6 documents them, each view
checked by moving data through it and comparing with the NumPy view of the same elements
(exact: views and DMA copy bits)."""

import numpy as np
import pytest

import neuronxsim.nki06 as nki
import neuronxsim.nki06.isa as nisa
import neuronxsim.nki06.language as nl
from neuronxsim.nki.errors import NKIError
from nki06_testing import run


def traced_with(check):
    """Runs ``check(x)`` inside a kernel, ``x`` the (4, 128, 24) HBM input."""
    @nki.jit
    def k(a):
        check(a)
        out = nl.ndarray((1, 1), dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((1, 1), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[0, 0:1, 0:1])
        nisa.dma_copy(dst=out, src=t)
        return out
    run(k, np.zeros((4, 128, 24), np.float32))


def test_attributes_as_documented():
    def check(a):
        t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        assert t.shape == (128, 64) and t.strides == (64, 1) and t.offset == 0
        assert t.dtype == nl.float32 and t.buffer == nl.sbuf and t.ndim == 2
        assert t.size == 128 * 64 and t.is_contiguous()
        assert a.buffer == nl.hbm and a.shape == (4, 128, 24)
        u = t.slice(dim=1, start=8, end=24)
        assert u.get_pattern() == [[64, 128], [1, 16]] and u.offset == 8
        v = t.ap(pattern=[[64, 128], [1, 16]], offset=8)
        assert v.get_pattern() == u.get_pattern() and v.offset == u.offset
    traced_with(check)


def test_subscript_rules_on_chip_and_in_hbm():
    def check(a):
        t = nl.ndarray((64, 64, 64), dtype=nl.float32, buffer=nl.sbuf)
        assert t[0, 0, 10].shape == (1, 1)
        assert t[:, 0].shape == (64, 64)
        assert t[:, 0, 10].shape == (64, 1)
        assert t[0:64, 0, 0:64].shape == (64, 64)
        assert t[:, :, ::2].shape == (64, 64, 32)
        assert t[...].shape == (64, 64, 64)
        assert t[0, ..., :].shape == (1, 64, 64)
        assert t[0, ...][:, 0:32, :].shape == (1, 32, 64)
        h = nl.ndarray((4, 128, 32), dtype=nl.float32, buffer=nl.shared_hbm)
        assert h[0, :, :].shape == (128, 32)
        assert h[-1, 3, 5].shape == (1,)
        assert t[nl.ds(8, 16), :, 0].shape == (16, 64)
        u = nl.ndarray((128, 4, 16), dtype=nl.float32, buffer=nl.sbuf)
        assert u[0:64, :, :].permute((0, 2, 1))[:, 0, :].shape == (64, 4)
    traced_with(check)


@pytest.mark.parametrize("make,expect", [
    (lambda t: t.permute((0, 2, 1)), lambda x: x.transpose(0, 2, 1)),
    (lambda t: t[:, 1:2, :].broadcast(1, 5),
     lambda x: np.broadcast_to(x[:, 1:2, :], (x.shape[0], 5, x.shape[2]))),
    (lambda t: t.expand_dim(2), lambda x: x[:, :, None, :]),
    (lambda t: t[:, 2:3, :].squeeze_dim(1), lambda x: x[:, 2, :]),
    (lambda t: t.reshape_dim(2, (2, -1)), lambda x: x.reshape(x.shape[0], 4, 2, 3)),
    (lambda t: t.flatten_dims(1, 2), lambda x: x.reshape(x.shape[0], 24)),
    (lambda t: t.reshape((32, 2, 12)), lambda x: x.reshape(32, 2, 12)),
    (lambda t: t.rearrange(("p", "a", ("h", "w")), ("p", "w", "h", "a"), {"h": 2}),
     lambda x: x.reshape(32, 4, 2, 3).transpose(0, 3, 2, 1)),
    (lambda t: t.slice(2, 1, 6, 2), lambda x: x[:, :, 1:6:2]),
    (lambda t: t.select(1, 3), lambda x: x[:, 3, :]),
    (lambda t: t.select(0, 0), lambda x: x[0:1]),
    (lambda t: t.ap([[24, 32], [6, 4], [1, 3]], offset=1), lambda x: x[:, :, 1:4]),
    (lambda t: t.view(nl.float32), lambda x: x),
    (lambda t: t.reinterpret_cast(nl.float32), lambda x: x),
])
def test_on_chip_views_move_the_viewed_elements(make, expect, rng):
    x = rng.standard_normal((32, 4, 6)).astype(np.float32)

    @nki.jit
    def k(a):
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        v = make(t)
        c = nl.ndarray(v.shape, dtype=v.dtype, buffer=nl.sbuf)
        nisa.tensor_copy(dst=c, src=v)
        out = nl.ndarray(v.shape, dtype=v.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=c)
        return out

    np.testing.assert_array_equal(run(k, x), expect(x))


@pytest.mark.parametrize("make,expect", [
    (lambda h: h[1], lambda x: x[1]),
    (lambda h: h.permute((2, 0, 1))[:, 0:2, :], lambda x: x.transpose(2, 0, 1)[:, 0:2, :]),
    (lambda h: h.reshape((6, 4, 4)), lambda x: x.reshape(6, 4, 4)),
    (lambda h: h.flatten_dims(0, 1), lambda x: x.reshape(12, 8)),
    (lambda h: h.ap([[8, 3], [32, 2], [1, 8]], offset=0), lambda x: x[0:2, 0:3].transpose(1, 0, 2)),
])
def test_hbm_views(make, expect, rng):
    x = rng.standard_normal((3, 4, 8)).astype(np.float32)

    @nki.jit
    def k(a):
        v = make(a)
        out = nl.ndarray(v.shape, dtype=v.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray(v.shape if len(v.shape) > 1 else v.shape + (1,), dtype=v.dtype,
                       buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=v)
        nisa.dma_copy(dst=out, src=t)
        return out

    np.testing.assert_array_equal(run(k, x), expect(x))


def test_views_share_storage(rng):
    x = rng.standard_normal((128, 64)).astype(np.float32)

    @nki.jit
    def k(a):
        t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        u = t.reshape((128, 8, 8))
        nisa.memset(dst=u[:, 2:4, :], value=1.0)  # elements 16:32 of each partition
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out

    expected = x.copy()
    expected[:, 16:32] = 1.0
    np.testing.assert_array_equal(run(k, x), expected)


def test_setitem_copies_and_fills(rng):
    x = rng.standard_normal((16, 32)).astype(np.float32)

    @nki.jit
    def k(a):
        t = nl.ndarray((16, 32), dtype=nl.float32, buffer=nl.sbuf)
        t[...] = 0.0
        u = nl.ndarray((16, 32), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=u, src=a)
        t[:, 0:16] = u[:, 16:32]
        out = nl.ndarray((16, 32), dtype=nl.float32, buffer=nl.shared_hbm)
        out[...] = t
        return out

    expected = np.zeros_like(x)
    expected[:, :16] = x[:, 16:]
    np.testing.assert_array_equal(run(k, x), expected)


@pytest.mark.parametrize("make,match", [
    (lambda t: t.permute((1, 0)), "partition dimension of an on-chip"),
    (lambda t: t.broadcast(0, 4), "size 128"),
    (lambda t: t[0:1].broadcast(0, 4), "partition dimension"),
    (lambda t: t.expand_dim(0), "partition dimension"),
    (lambda t: t.reshape((64, 128)), "keeps its partition dimension"),
    (lambda t: t.reshape((128, 65)), "holds 8320 elements, not 8192"),
    (lambda t: t.permute((0, 1)).slice(1, 4, 2), "0 <= start < end"),
    (lambda t: t[:, ::2].reshape((128, 2, 16)).flatten_dims(0, 1), "partition dimension"),
    (lambda t: t.reshape_dim(0, (2, 64)), "cannot be split"),
    (lambda t: t[:, 0:64:2].flatten_dims(1, 1).reshape((128, 4, 8)).permute((0, 2, 1))
     .flatten_dims(1, 2), "not contiguous"),
    (lambda t: t.ap([[128, 128], [1, 64]]), "step 64"),
    (lambda t: t.ap([[64, 128], [1, 65]]), "reaches outside"),
    (lambda t: t[128], "outside dimension 0"),
    (lambda t: t[:, 0:65], "reaches outside"),
    (lambda t: t.view(nl.int32), "not supported yet"),
    (lambda t: t.vector_select(0, t), "HBM tensors"),
    (lambda t: t.indirect(t), r"NeuronCore-v4 \(trn3\)"),
])
def test_view_errors(make, match):
    def check(a):
        make(nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf))
    with pytest.raises(NKIError, match=match):
        traced_with(check)


def test_view_errors_name_the_kernel_line():
    def check(a):
        t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        t.permute((1, 0))  # the line the error names
    with pytest.raises(NKIError) as e:
        traced_with(check)
    assert "test_tensor_views.py" in str(e.value) and "t.permute((1, 0))" in str(e.value)


def test_indirect_views_refuse_slicing_their_indirect_dim():
    def check(a):
        idx = nl.ndarray((16, 1), dtype=nl.int32, buffer=nl.sbuf)
        v = a.reshape((512, 24)).vector_select(0, idx)
        assert v.is_indirect() and v.shape == (16, 24)
        v[:, 0:4]  # free dims may still be sliced
        v[0:8]
    with pytest.raises(NKIError, match="indirect"):
        traced_with(check)
