"""One short function per executable opcode, each in the module of its family; DISPATCH maps
opcode names to them."""

from __future__ import annotations

from typing import Callable

from neuronxsim.reference.ops import (
    activation,
    cross_partition,
    dma,
    elementwise,
    gpsimd,
    index_ops,
    lane_ops,
    matmul,
    misc,
    random,
)
from neuronxsim.reference.step import Step

DISPATCH: dict[str, Callable[[Step], None]] = {}
for _family in (activation, elementwise, lane_ops, index_ops, cross_partition, gpsimd, random, matmul, dma,
                misc):
    assert not DISPATCH.keys() & _family.HANDLERS.keys(), "an opcode is handled twice"
    DISPATCH.update(_family.HANDLERS)

__all__ = ["DISPATCH"]
