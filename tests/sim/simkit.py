"""Helpers of the simulator tests (imported by the test modules; tests/sim/conftest.py puts this
directory on sys.path): a Kit that stages NumPy arrays into SBUF through DMA, runs instructions on
them and brings results back, and NumPy references for the store rules of docs/isa-semantics.md §2."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from neuronxsim import sim
from neuronxsim.bir import DType, Engine, MemoryType
from neuronxsim.sim.build import ModuleBuilder



def to_dtype(x, dtype: DType) -> np.ndarray:
    """fp32 values stored as ``dtype`` the way the engines store them: RNE; fp8 saturates; integers
    round to nearest even, saturate and map NaN to 0."""
    x = np.asarray(x, dtype=np.float32)
    nd = sim.dtype_to_numpy(dtype)
    if dtype == DType.float32r:  # tfloat32: nearest-even at 10 mantissa bits (NaN stays NaN)
        bits = x.view(np.uint32).astype(np.uint64)
        rounded = ((bits + 0xFFF + ((bits >> 13) & 1)) & 0xFFFFE000).astype(np.uint32).view(np.float32)
        return np.where(np.isnan(x), x, rounded)
    if dtype.name.startswith("float8"):
        top = float(ml_dtypes.finfo(nd).max)
        return np.where(np.isnan(x), x, np.clip(x, -top, top)).astype(nd)
    if np.issubdtype(nd, np.integer):
        info = np.iinfo(nd)
        r = np.rint(np.nan_to_num(x, nan=0.0).astype(np.float64))
        hi, lo = r >= float(info.max), r <= float(info.min)  # float(2**63 - 1) is 2**63
        out = np.where(hi | lo, 0, r).astype(nd)
        out[hi], out[lo] = info.max, info.min
        return out
    with np.errstate(over="ignore"):
        return x.astype(nd)


def f32(x) -> np.ndarray:
    return np.asarray(x).astype(np.float32)


class Kit:
    """One module under construction: ``load`` stages an array into a fresh SBUF tensor (one DMA),
    ``store`` declares an output tensor fed from an on-chip tensor (one DMA), ``run`` simulates."""

    def __init__(self, arch: str = "trn1"):
        self.b = ModuleBuilder(arch)
        self.arch = arch
        self.inputs: dict[str, np.ndarray] = {}
        self.result = None
        self._n = 0

    def _name(self, base):
        self._n += 1
        return f"{base}{self._n}"

    def load(self, array: np.ndarray, dtype: DType = DType.float32, base_partition: int = 0) -> "object":
        """A [P, ...] array (P partitions, the rest flattened per partition) in a new SBUF tensor
        of ``dtype``; the DRAM input carries the values already stored as ``dtype``."""
        arr = to_dtype(array, dtype).reshape(array.shape[0], -1)
        name = self._name("in")
        self.inputs[name] = arr
        dram = self.b.input(name, list(arr.shape), dtype)
        loc = self.b.sbuf(name + "_sb", arr.shape[0], arr.shape[1], dtype, base_partition=base_partition)
        self.b.dma(self.b.tile(loc), self.b.full(dram))
        return loc

    def sbuf(self, partitions: int, elems: int, dtype: DType = DType.float32, base_partition: int = 0):
        return self.b.sbuf(self._name("t"), partitions, elems, dtype, base_partition=base_partition)

    def psum(self, partitions: int, elems: int, dtype: DType = DType.float32):
        return self.b.psum(self._name("p"), partitions, elems, dtype)

    def store(self, loc, ap=None) -> str:
        """Copies ``loc`` (or the pattern ``ap`` over it) to a new output; returns its name. DMA
        does not reach PSUM (rule dma.psum): a PSUM source goes through SBUF first, by the Vector
        Engine's TensorCopy (a byte copy)."""
        name = self._name("out")
        src = ap if ap is not None else self.b.tile(loc)
        shape = [src.partitions, int(np.prod(src.free_shape))]
        if src.location.type == MemoryType.PSUM:
            staged = self.sbuf(shape[0], shape[1], src.dtype, base_partition=src.location.base_partition)
            self.add("TensorCopy", [src], [self.tile(staged)], engine=Engine.DVE)
            src = self.tile(staged)
        out = self.b.output(name, shape, src.dtype)
        self.b.dma(self.b.full(out), src)
        return name

    def add(self, *args, **kwargs):
        return self.b.add(*args, **kwargs)

    def tile(self, *args, **kwargs):
        return self.b.tile(*args, **kwargs)

    def fetch(self, loc, **kwargs) -> np.ndarray:
        """Stores ``loc`` to a new output, runs, and returns that output."""
        name = self.store(loc)
        return self.run(**kwargs)[name]

    def run(self, mode: str = "full", **kwargs):
        self.result = sim.simulate(self.b.module, self.inputs, arch=self.arch, mode=mode, **kwargs)
        return self.result.outputs
