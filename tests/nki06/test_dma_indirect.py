"""DMA with run-time addresses in NKI 0.6: scatters (an indirect ``dst``: one IndirectSave),
the read-modify-write modes of ``dma_compute`` (scatter-add, gather-add), and transfers at a
run-time scalar offset (``.ap(scalar_offset=tensor)``: one DMA of mode Dynamic), against NumPy.
Exact: the DMA copies bytes, and adds small multiples of powers of two in fp32."""

import numpy as np
import pytest

import neuronxsim.nki06 as nki
import neuronxsim.nki06.isa as nisa
import neuronxsim.nki06.language as nl
from neuronxsim import SimulationError, bir
from nki06_testing import emitted, run


def _load(x, dtype=None):
    t = nl.ndarray(x.shape, dtype=dtype or x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    return t


@pytest.mark.parametrize("rows,width,table", [(1, 1, 1), (32, 24, 50), (128, 600, 300)])
def test_scatter_rows_by_vector_offset(rows, width, table, rng):
    data = rng.standard_normal((rows, width)).astype(np.float32)
    base = rng.standard_normal((table, width)).astype(np.float32)
    idx = rng.permutation(table)[:rows].reshape(rows, 1).astype(np.int32)

    @nki.jit
    def scatter(d, b, i):
        t, ix = _load(d), _load(i)
        out = nl.ndarray(b.shape, dtype=b.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=b)
        nisa.dma_copy(dst=out.ap(pattern=[[b.shape[1], d.shape[0]], [1, b.shape[1]]],
                                 vector_offset=ix, indirect_dim=0), src=t)
        return out

    want = base.copy()
    want[idx[:, 0]] = data
    np.testing.assert_array_equal(run(scatter, data, base, idx), want)
    assert [i.opcode_name for i in emitted(scatter, data, base, idx)].count("IndirectSave") == 1


def test_scatter_repeated_index_keeps_the_last_row_and_oob_skips(rng):
    data = (np.arange(8 * 4).reshape(8, 4) / 4).astype(np.float32)
    idx = np.array([[1], [3], [1], [9], [0], [3], [2], [1]], np.int32)

    def kernel(mode):
        @nki.jit
        def k(d, i):
            t, ix = _load(d), _load(i)
            out = nl.ndarray((5, 4), dtype=nl.float32, buffer=nl.shared_hbm)
            z = nl.ndarray((5, 4), dtype=nl.float32, buffer=nl.sbuf)
            nisa.memset(dst=z, value=-1.0)
            nisa.dma_copy(dst=out, src=z)
            nisa.dma_copy(dst=out.vector_select(0, ix), src=t, oob_mode=mode)
            return out
        return k

    got = run(kernel(nisa.oob_mode.skip), data, idx)
    np.testing.assert_array_equal(got[[0, 1, 2, 3]], data[[4, 7, 6, 5]])
    np.testing.assert_array_equal(got[4], -1.0)
    with pytest.raises(SimulationError, match="index 9 for source row 3 is outside"):
        run(kernel(nisa.oob_mode.error), data, idx)


def test_dma_compute_scatter_and_gather_add(rng):
    table = (rng.integers(-8, 9, (40, 16)) / 4).astype(np.float32)
    data = (rng.integers(-8, 9, (24, 16)) / 4).astype(np.float32)
    idx = rng.permutation(40)[:24].reshape(24, 1).astype(np.int32)

    @nki.jit
    def scatter_add(tb, d, i):
        t, ix = _load(d), _load(i)
        out = nl.ndarray(tb.shape, dtype=tb.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=tb)
        rows = out.vector_select(0, ix)
        nisa.dma_compute(dst=rows, srcs=[rows, t], reduce_op=nl.add)
        return out

    want = table.copy()
    want[idx[:, 0]] += data
    np.testing.assert_array_equal(run(scatter_add, table, data, idx), want)
    assert [i.opcode_name for i in emitted(scatter_add, table, data, idx)].count("IndirectSave") == 1

    @nki.jit
    def gather_add(tb, d, i):
        acc, ix = _load(d), _load(i)
        nisa.dma_compute(dst=acc, srcs=[acc, tb.vector_select(0, ix)], reduce_op=nl.add)
        out = nl.ndarray(d.shape, dtype=d.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=acc)
        return out

    np.testing.assert_array_equal(run(gather_add, table, data, idx), data + table[idx[:, 0]])


@pytest.mark.parametrize("offset", [0, 5, 36])
def test_dma_at_a_run_time_scalar_offset(offset, rng):
    data = rng.standard_normal((40, 12)).astype(np.float32)

    @nki.jit
    def moved(d, off):
        o = _load(off)
        t = nl.ndarray((4, 12), dtype=d.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=d.ap([[12, 4], [1, 12]], scalar_offset=o, indirect_dim=0))
        out = nl.ndarray(d.shape, dtype=d.dtype, buffer=nl.shared_hbm)
        z = nl.ndarray(d.shape, dtype=d.dtype, buffer=nl.sbuf)
        nisa.memset(dst=z, value=0.0)
        nisa.dma_copy(dst=out, src=z)
        nisa.dma_copy(dst=out.ap([[12, 4], [1, 12]], scalar_offset=o, indirect_dim=0), src=t)
        return out

    want = np.zeros_like(data)
    want[offset:offset + 4] = data[offset:offset + 4]
    np.testing.assert_array_equal(run(moved, data, np.array([[offset]], np.int32)), want)
    modes = [i.mode for i in emitted(moved, data, np.array([[offset]], np.int32))
             if i.opcode_name in ("DMACopy", "IndirectSave") and len(i.ins) == 2]
    assert modes == [bir.DmaMode.Dynamic] * 2
    with pytest.raises(SimulationError, match="index 40 .* is outside"):
        run(moved, data, np.array([[37]], np.int32))


def test_dma_compute_scatter_add_names_dst_by_what_it_addresses(rng):
    # (dst and the source matching it, written as two views alike, were compared as objects and
    # refused; a view indexed by another tensor of the same indices is another address)
    from neuronxsim.nki.errors import NKIError
    table = (rng.integers(-8, 9, (300, 40)) / 4).astype(np.float32)
    data = (rng.integers(-8, 9, (128, 40)) / 4).astype(np.float32)
    idx = rng.permutation(300)[:128].reshape(128, 1).astype(np.int32)

    def kernel(second_index):
        @nki.jit
        def scatter_add(tb, d, i):
            t, ix = _load(d), _load(i)
            iy = _load(i) if second_index else ix
            out = nl.ndarray(tb.shape, dtype=tb.dtype, buffer=nl.shared_hbm)
            nisa.dma_copy(dst=out, src=tb)
            nisa.dma_compute(dst=out.vector_select(0, ix), srcs=[out.vector_select(0, iy), t],
                             reduce_op=nl.add)
            return out
        return scatter_add

    want = table.copy()
    want[idx[:, 0]] += data
    np.testing.assert_array_equal(run(kernel(False), table, data, idx), want)
    with pytest.raises(NKIError, match=r"test_dma_indirect\.py:\d+: nisa\.dma_compute: with "
                                       r"vector_offset, srcs holds dst and one data tensor"):
        run(kernel(True), table, data, idx)
