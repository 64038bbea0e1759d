"""A matmul whose moving tile has columns no instruction wrote (a weight tile loaded for fewer
columns than the matmul reads: nki-samples' fused RMSNorm-QKV at head_dim 384) leaves the matching
PSUM columns unwritten, and a copy of them out of PSUM leaves its destination's columns unwritten:
a store that masks them runs; every other read of them is refused, as the matmul's read was."""

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim import SimulationError
from nki_testing import run_on

UNWRITTEN = r"which no instruction has written"


@nki.jit
def holes_kernel(x, w, v, read="masked"):
    # x: [K, M] stationary; w: [K, n] loaded into the first n columns of a [K, 512] moving tile
    k, m = x.shape
    n = w.shape[1]
    out = nl.ndarray((m, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    ik = nl.arange(k)[:, None]
    im = nl.arange(m)[:, None]
    ic = nl.arange(512)[None, :]
    wt = nl.ndarray((k, 512), dtype=nl.float32, buffer=nl.sbuf)
    wt[ik, ic] = nl.load(w[ik, ic], mask=ic < n)
    xt = nl.load(x)
    acc = nl.ndarray((m, 512), dtype=nl.float32, buffer=nl.psum)
    if read == "half":  # PSUM columns no matmul wrote beside the holes: the copy is refused
        acc[:, 0:256] += nisa.nc_matmul(xt, wt[:, 0:256])
    else:
        acc[...] += nisa.nc_matmul(xt, wt)
    if read == "accumulate":  # a written moving accumulated into the unwritten columns
        acc[...] += nisa.nc_matmul(xt, nl.load(v))
    if read == "exp":  # an instruction other than a copy reads the unwritten PSUM columns
        res = nl.exp(acc)
    else:
        res = nl.copy(acc, dtype=nl.float32)
    if read == "all":  # the store reads the unwritten SBUF columns
        nl.store(out, res)
    else:
        nl.store(out[im, ic], value=res, mask=ic < n)
    return out


def _inputs(rng, n=200):
    x = rng.random((128, 128)).astype(np.float32)
    w = rng.random((128, n)).astype(np.float32)
    v = rng.random((128, 512)).astype(np.float32)
    return x, w, v


@pytest.mark.parametrize("read", ["masked", "accumulate"])
def test_a_store_that_masks_the_unwritten_columns_gets_the_product(rng, read):
    x, w, v = _inputs(rng)
    out = run_on("simulator", holes_kernel, x, w, v, read=read)
    want = x.T @ w + (x.T @ v[:, :200] if read == "accumulate" else 0)
    np.testing.assert_allclose(out[:, :200], want, rtol=1e-5)


@pytest.mark.parametrize("read, where", [("all", r"Save '.*': ins\[0\] reads SBUF"),
                                         ("exp", r"Activation '.*': ins\[0\] reads PSUM"),
                                         ("half", r"TensorCopy '.*': ins\[0\] reads PSUM")])
def test_every_other_read_of_the_unwritten_columns_is_refused(rng, read, where):
    x, w, v = _inputs(rng)
    with pytest.raises(SimulationError, match=where + r".*" + UNWRITTEN):
        run_on("simulator", holes_kernel, x, w, v, read=read)


@nki.jit
def stationary_after_holes(x, w):
    # `t` is read whole as a matmul's stationary (and so known written), then a copy of PSUM holes
    # overwrites its columns: the next matmul that reads them as its stationary is refused
    k, m = x.shape
    n = w.shape[1]
    out = nl.ndarray((m, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    ik = nl.arange(k)[:, None]
    ic = nl.arange(128)[None, :]
    xt = nl.load(x)
    t = nl.ndarray((k, 128), dtype=nl.float32, buffer=nl.sbuf)
    t[...] = nl.copy(xt)
    first = nl.copy(nisa.nc_matmul(t, xt))
    wt = nl.ndarray((k, 128), dtype=nl.float32, buffer=nl.sbuf)
    wt[ik, ic] = nl.load(w[ik, ic], mask=ic < n)
    t[...] = nl.copy(nisa.nc_matmul(xt, wt))  # columns n.. of t: unwritten
    second = nl.copy(nisa.nc_matmul(t, xt))
    nl.store(out, nl.add(first, second))
    return out


def test_a_tile_a_copy_of_holes_overwrites_is_no_longer_known_written(rng):
    x = rng.random((128, 128)).astype(np.float32)
    w = rng.random((128, 100)).astype(np.float32)
    with pytest.raises(SimulationError, match=r"Matmult '.*': ins\[0\] reads SBUF.*" + UNWRITTEN):
        run_on("simulator", stationary_after_holes, x, w)
