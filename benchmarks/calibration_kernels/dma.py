"""DMA experiments of the DMA overview (``nki/get-started/about/nki-dma-overview.rst``), the DMA
bandwidth guide (``nki/deep-dives/nki-dma-bandwidth-guide.rst``) and the DGE guide
(``nki/deep-dives/nki-dge.rst``). The NKI kernels are in the 2.2x dialect of ``neuronxsim.nki``;
the DGE experiment is written in BIR (``neuronxsim.sim.build``), as the front end does not place
DMAs on a DGE."""

from __future__ import annotations

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim import bir
from neuronxsim.bir import DType
from neuronxsim.sim.build import ModuleBuilder


@nki.jit
def exp_round_trip(x):
    """The DMA overview's Example 1: load a [4, 4096] bf16 tensor (32 KiB, four partitions: one
    DMA engine), exp on ScalarE, store it back."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.dma_copy(dst=out, src=nisa.activation(op=nl.exp, data=t))
    return out


@nki.jit
def load_stream(x, row_bytes):
    """Loads ``x`` ([128, n]) into SBUF as back-to-back [128, row_bytes] transfers, each into
    its own slice of one SBUF tensor (no transfer waits for another), and stores one element so
    the loads are live: the bandwidth-vs-bytes-per-partition experiment."""
    out = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    esize = 2 if x.dtype == nl.bfloat16 else 4
    cols = row_bytes // esize
    n = x.shape[1] // cols
    t = nl.ndarray((nl.par_dim(128), x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(n):
        nisa.dma_copy(dst=t[:, i * cols:(i + 1) * cols], src=x[:, i * cols:(i + 1) * cols])
    nl.store(out, nl.copy(t[:, 0:1]))
    return out


def dge_loads(arch: str, count: int, cols: int, dge: str, trigger: str):
    """``count`` independent loads of [4, cols] bf16 into four partitions, triggered from
    ``trigger`` ("SP" or "Activation") with descriptors from ``dge`` ("HWDGE" or "None")."""
    b = ModuleBuilder(arch)
    x = b.input("x", [count * 4, cols], DType.bfloat16)
    y = b.output("y", [4, 1], DType.bfloat16)
    tiles = [b.sbuf(f"t{i}", 4, cols, DType.bfloat16) for i in range(count)]
    for i, t in enumerate(tiles):
        b.dma(b.tile(t), b.ap(x, i * 4 * cols, [[cols, 4], [1, cols]]), queue=i % 16,
              dge_type=getattr(bir.DgeType, dge), engine=getattr(bir.Engine, trigger))
    b.dma(b.full(y), b.tile(tiles[-1], elems=1), queue=0)
    return b.module
