"""The PE array: Matmult, with PSUM accumulation groups and the transpose mode."""

from __future__ import annotations

import numpy as np

from neuronxsim.reference.numbers import convert
from neuronxsim.reference.step import Step


def matmult(step: Step) -> None:
    inst = step.inst
    stationary, moving, out = step.ins[0], step.ins[1], step.outs[0]
    if out.memory != "PSUM":
        raise out.refuse(f"the PE array writes PSUM only; tensor '{out.ap.location.name}' is in "
                         f"{out.memory}")
    loc, size = out.ap.location, out.dtype.itemsize
    first_byte = loc.addr + out.ap.offset % (loc.bytes_per_partition // size) * size
    if first_byte % 4:
        raise out.refuse(f"starts at PSUM byte {first_byte}, not on a 4-byte word")
    k, m = stationary.shape
    if inst.is_transpose:
        # PE transpose: out[m, k] = stationary[k, m], bit-exact (the identity in `moving`
        # is not read), and written whatever start_tensor_calc says.
        moving.expect(k, k)
        out.expect(m, k)
        out.write_raw(convert(stationary.read_raw().T, out.dtype))
        return
    _, n = moving.shape
    moving.expect(k)
    out.expect(m, n)
    product = np.matmul(stationary.read().T, moving.read(), dtype=np.float32)
    if inst.start_tensor_calc:  # a new accumulation group: overwrite
        out.write(product)
    else:  # add to the group in PSUM: fp32 read-add-write
        out.write(out.read() + product)


HANDLERS = {"Matmult": matmult}
