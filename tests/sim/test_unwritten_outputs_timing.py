"""Timing mode's unwritten outputs: it keeps no data, so it marks the elements each write's DRAM
pattern addresses (Simulator.h, UnwrittenOutput) and must name the same elements as full mode,
which records every byte written: columns, rows, single elements, a strided write's gaps."""

import numpy as np
import pytest

from neuronxsim import nki, sim
import neuronxsim.nki.language as nl


@nki.jit
def _store_columns(a, lo, hi):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out[:, lo:hi], value=nl.load(a[:, lo:hi]))
    return out


@nki.jit
def _store_rows(a, rows):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out[0:rows, :], value=nl.load(a[0:rows, :]))
    return out


@nki.jit
def _store_every_other_column(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    i_p, i_f = nl.mgrid[0:a.shape[0], 0:a.shape[1] // 2]
    nl.store(out[i_p, 2 * i_f], value=t[i_p, 2 * i_f])
    return out


def _unwritten(kernel, a, *args, mode):
    from neuronxsim.nki.kernel import traced_kernel
    traced = traced_kernel(kernel, (a, *args), {}, "trn1")
    inputs = {name: a for name in sim.input_tensors(traced.module)} if mode == "full" else None
    r = sim.simulate(traced.module, inputs, mode=mode, records=False)
    return [u.to_json() for u in r.unwritten_outputs]


@pytest.mark.parametrize("dtype", [np.float32, np.int8])
@pytest.mark.parametrize("lo,hi", [(0, 512), (0, 1000), (24, 512), (100, 101), (0, 1)])
def test_columns_left_alone_are_found_as_full_mode_finds_them(dtype, lo, hi):
    a = np.ones((128, 512), dtype)
    hi = min(hi, 512)
    timing = _unwritten(_store_columns, a, lo, hi, mode="timing")
    assert timing == _unwritten(_store_columns, a, lo, hi, mode="full")
    missing = 128 * (512 - (hi - lo))
    if missing == 0:
        assert timing == []
    else:
        first = [0, 0] if lo > 0 else [0, hi]
        assert timing == [{"name": timing[0]["name"], "dtype": np.dtype(dtype).name, "elements": missing,
                           "size": 128 * 512, "first_index": first}]


@pytest.mark.parametrize("rows", [1, 64, 127, 128])
def test_rows_left_alone(rows):
    a = np.ones((128, 300), np.float32)
    timing = _unwritten(_store_rows, a, rows, mode="timing")
    assert timing == _unwritten(_store_rows, a, rows, mode="full")
    assert [u["elements"] for u in timing] == ([] if rows == 128 else [(128 - rows) * 300])


def test_a_strided_writes_gaps():
    a = np.ones((128, 64), np.float32)
    timing = _unwritten(_store_every_other_column, a, mode="timing")
    assert timing == _unwritten(_store_every_other_column, a, mode="full")
    assert [(u["elements"], u["first_index"]) for u in timing] == [(128 * 32, [0, 1])]
