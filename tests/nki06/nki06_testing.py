"""Helpers of the NKI 0.6 dialect's tests."""

import dataclasses

import numpy as np

import neuronxsim.nki06 as nki
import neuronxsim.nki06.language as nl
from neuronxsim.nki.execution import bound_arrays, run_traced
from neuronxsim.nki.schedule import Schedule
from neuronxsim.nki06.kernel import traced


def run(kernel, *args, arch=None, executor="simulator", **kwargs):
    """The kernel's outputs (one array or a tuple) on ``executor``: "simulator" (what
    nki.simulate runs) or "reference" (the NumPy reference executor). On the simulator, also in
    source order, requiring the same bits (the scheduling pass never changes numerics)."""
    source, shared, arch = traced(kernel, args, kwargs, arch, schedule="source")
    arrays = bound_arrays(shared, args, kwargs)
    module = source.module.clone()
    Schedule().run(module, arch)
    t = dataclasses.replace(source, module=module)
    _, outputs = run_traced(t, arrays, executor=executor, arch=arch)
    if executor == "simulator":
        assert_same_bits(outputs, run_traced(source, arrays, arch=arch)[1])
    values = tuple(outputs[o.name] for o in t.outputs)
    return values[0] if len(values) == 1 else values


def assert_same_bits(outputs: dict, expected: dict) -> None:
    """Every output byte for byte (NaNs included)."""
    assert outputs.keys() == expected.keys()
    for name, value in outputs.items():
        a, b = np.ascontiguousarray(value), np.ascontiguousarray(expected[name])
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert a.tobytes() == b.tobytes(), f"output {name!r} differs from the source-order run"


def emitted(kernel, *args, arch=None, core=0):
    """The instructions of the kernel's BIR (function ``core``), in source order."""
    t, _, _ = traced(kernel, args, {}, arch, schedule="source")
    return list(t.module.functions[core].blocks[0].instructions)


def opcodes(kernel, *args, arch=None):
    return [i.opcode_name for i in emitted(kernel, *args, arch=arch)]


def close(actual, expected, atol, rtol=0.0):
    """|actual - expected| <= atol + rtol * |expected| elementwise, in float64."""
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    assert a.shape == e.shape, (a.shape, e.shape)
    np.testing.assert_allclose(a, e, atol=atol, rtol=rtol)


def tile_kernel(body, out_shape=None, out_dtype=None):
    """A kernel loading each argument into an SBUF tile of its shape, passing the tiles to
    ``body(dst, *tiles)`` with ``dst`` a new SBUF tile of ``out_shape``/``out_dtype`` (the first
    input's by default), and storing ``dst``."""
    @nki.jit
    def kernel(*arrays):
        tiles = []
        for a in arrays:
            t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
            nki.isa.dma_copy(dst=t, src=a)
            tiles.append(t)
        dst = nl.ndarray(out_shape or arrays[0].shape, dtype=out_dtype or arrays[0].dtype,
                         buffer=nl.sbuf)
        body(dst, *tiles)
        out = nl.ndarray(dst.shape, dtype=dst.dtype, buffer=nl.shared_hbm)
        nki.isa.dma_copy(dst=out, src=dst)
        return out
    return kernel


def addresses(kernel, *args, arch=None) -> dict:
    """{tensor name: (memory type, byte address)} of the kernel's first function."""
    import json
    t, _, _ = traced(kernel, args, {}, arch)
    allocations = json.loads(t.module.to_json())["functions"][0]["allocations"]
    return {a["memorylocations"][0]["name"]: (a["memorylocations"][0]["type"],
                                              a["memorylocations"][0]["addr"])
            for a in allocations}


def stored(*tiles):
    """Inside a kernel: each tile copied to a new shared_hbm tensor of its shape and dtype, the
    tensors as a tuple (the kernel's outputs)."""
    outs = []
    for t in tiles:
        o = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.shared_hbm)
        nki.isa.dma_copy(dst=o, src=t)
        outs.append(o)
    return tuple(outs)
