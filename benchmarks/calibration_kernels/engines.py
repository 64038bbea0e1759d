"""Compute-engine experiments of the NKI performance guide (``nki/deep-dives/nki_perf_guide.rst``)
and the fused_mamba tutorial's scan discussion: tiny dependent instructions, combined
instructions, partition vectorization and the two ways to map a matrix-vector product onto the
PE. Written in the 2.2x dialect of ``neuronxsim.nki``."""

from __future__ import annotations

import numpy as np

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl


@nki.jit
def act_dependent_chain(x, steps):
    """``steps`` back-to-back ScalarE activations on one element per partition, each reading
    the previous one's output (perf guide, Opt #5a: "fp32@...[1,1,1][1,1,1]", every instruction
    depending on the one before)."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    for _ in nl.sequential_range(steps):
        t = nisa.activation(op=nl.copy, data=t, scale=0.5)
    nl.store(out, t)
    return out


@nki.jit
def act_three_instructions(data):
    """impl 1 of the perf guide's Opt #6 ("combining three instructions into a single one on
    ScalarE"): multiply, add and exp as three ScalarE instructions on a [128, 512] tile, with
    [128, 1] scale and bias tiles made on chip (so the data's load is the only one)."""
    out = nl.ndarray(data.shape, dtype=data.dtype, buffer=nl.shared_hbm)
    s = nl.full((data.shape[0], 1), 0.5, dtype=nl.float32)
    b = nl.full((data.shape[0], 1), 0.25, dtype=nl.float32)
    d = nl.load(data)
    scaled = nisa.activation(op=nl.copy, data=d, scale=s)
    shifted = nisa.activation(op=nl.copy, data=scaled, bias=b)
    nl.store(out, nisa.activation(op=nl.exp, data=shifted))
    return out


@nki.jit
def act_one_instruction(data):
    """impl 2 of the perf guide's Opt #6: ``exp(data * scale + bias)`` in one activation."""
    out = nl.ndarray(data.shape, dtype=data.dtype, buffer=nl.shared_hbm)
    s = nl.full((data.shape[0], 1), 0.5, dtype=nl.float32)
    b = nl.full((data.shape[0], 1), 0.25, dtype=nl.float32)
    d = nl.load(data)
    nl.store(out, nisa.activation(op=nl.exp, data=d, bias=b, scale=s))
    return out


@nki.jit
def reduce_two_halves(a, b):
    """Opt #5b option 1: two matmuls, each a 64-partition PSUM tile, each reduced on VectorE by
    its own tensor_reduce."""
    out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    sa = nl.load(a)
    sb = nl.load(b)
    r = nl.ndarray((nl.par_dim(128), 1), dtype=nl.float32, buffer=nl.sbuf)
    mm0 = nisa.nc_matmul(sa[:, 0:64], sb)
    mm1 = nisa.nc_matmul(sa[:, 64:128], sb)
    r[0:64, :] = nisa.tensor_reduce(np.add, mm0, axis=[1])
    r[64:128, :] = nisa.tensor_reduce(np.add, mm1, axis=[1])
    nl.store(out, r)
    return out


@nki.jit
def reduce_vectorized(a, b):
    """Opt #5b option 2: the two matmuls write partitions 0-63 and 64-127 of one PSUM tile and a
    single 128-partition tensor_reduce reduces both."""
    out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    sa = nl.load(a)
    sb = nl.load(b)
    mm = nl.ndarray((nl.par_dim(128), b.shape[1]), dtype=nl.float32, buffer=nl.psum)
    mm[0:64, :] = nisa.nc_matmul(sa[:, 0:64], sb)
    mm[64:128, :] = nisa.nc_matmul(sa[:, 64:128], sb)
    nl.store(out, nisa.tensor_reduce(np.add, mm, axis=[1]))
    return out


@nki.jit
def scan_two_instructions(a, b, steps):
    """The fused_mamba tutorial's naive scan, Step 4: per time step, a multiply and an add on
    [P, 1] tiles, each step depending on the one before."""
    out = nl.ndarray((a.shape[0], steps), dtype=a.dtype, buffer=nl.shared_hbm)
    da = nl.load(a)
    db = nl.load(b)
    h = nl.ndarray((nl.par_dim(a.shape[0]), steps), dtype=a.dtype, buffer=nl.sbuf)
    h[:, 0:1] = nl.copy(db[:, 0:1])
    for i in nl.sequential_range(steps - 1):
        prod = nl.multiply(da[:, i + 1:i + 2], h[:, i:i + 1])
        h[:, i + 1:i + 2] = nl.add(prod, db[:, i + 1:i + 2])
    nl.store(out, h)
    return out


@nki.jit
def scan_one_instruction(a, b, steps):
    """The same scan with each step's multiply and add combined into one tensor_scalar (the
    tutorial: "could provide 2x speedup")."""
    out = nl.ndarray((a.shape[0], steps), dtype=a.dtype, buffer=nl.shared_hbm)
    da = nl.load(a)
    db = nl.load(b)
    h = nl.ndarray((nl.par_dim(a.shape[0]), steps), dtype=a.dtype, buffer=nl.sbuf)
    h[:, 0:1] = nl.copy(db[:, 0:1])
    for i in nl.sequential_range(steps - 1):
        h[:, i + 1:i + 2] = nisa.tensor_scalar(da[:, i + 1:i + 2], op0=np.multiply,
                                               operand0=h[:, i:i + 1], op1=np.add,
                                               operand1=db[:, i + 1:i + 2])
    nl.store(out, h)
    return out


@nki.jit
def matvec(stationary, moving, repeats):
    """``repeats`` back-to-back independent matmuls of the same [128, M] stationary and [128, N]
    moving tiles (perf guide, Opt #7: "short moving" is M=128, N=1; "short stationary" is M=1,
    N=128), accumulating into one PSUM tile."""
    out = nl.ndarray((stationary.shape[1], moving.shape[1]), dtype=nl.float32,
                     buffer=nl.shared_hbm)
    s = nl.load(stationary)
    m = nl.load(moving)
    acc = nl.zeros((nl.par_dim(stationary.shape[1]), moving.shape[1]), dtype=nl.float32,
                   buffer=nl.psum)
    for _ in nl.affine_range(repeats):
        acc += nisa.nc_matmul(s, m)
    nl.store(out, nl.copy(acc))
    return out
