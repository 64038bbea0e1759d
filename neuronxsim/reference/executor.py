"""``execute``: runs one NeuronCore's function of a BIR module in program order."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from neuronxsim.errors import SimulationError
from neuronxsim.reference.machine import Machine
from neuronxsim.reference.numbers import numpy_dtype
from neuronxsim.reference.ops import DISPATCH
from neuronxsim.reference.refusal import Refusal
from neuronxsim.reference.step import Step


def execute(module, inputs: Mapping[str, np.ndarray], neuron_core_id: int = 0) -> dict[str, np.ndarray]:
    """Runs ``module.function(neuron_core_id)`` instruction by instruction.

    ``inputs`` maps the name of every memory location of type Input to an array of that tensor's
    shape and dtype (bf16 and fp8 as ``ml_dtypes`` arrays). Returns every Output tensor by name,
    with its shape and dtype. Raises :class:`neuronxsim.BIRError` if the module fails the
    verifier and :class:`neuronxsim.SimulationError` (naming the instruction or tensor) for
    inputs that do not fit and for anything the reference executor refuses to run.
    """
    module.verify()
    function = module.function(neuron_core_id)
    locations = _locations_used(function)
    try:
        machine = Machine(locations, module.arch)
        _load_inputs(machine, locations, inputs)
    except Refusal as e:
        raise SimulationError(str(e)) from None
    with np.errstate(all="ignore"):  # inf and NaN results are IEEE semantics, not accidents
        for block_index, block in enumerate(function.blocks):
            for inst_index, inst in enumerate(block.instructions):
                _run(machine, inst, (neuron_core_id, block_index, inst_index))
    try:
        return {name: machine.tensor_view(name).copy()
                for name, loc in locations.items() if loc.type.name == "Output"}
    except Refusal as e:
        raise SimulationError(str(e)) from None


def _run(machine: Machine, inst, position: tuple[int, int, int]) -> None:
    function_index, block_index, inst_index = position
    where = (f"functions[{function_index}].blocks[{block_index}].instructions[{inst_index}] "
             f"'{inst.name}' {inst.opcode_name}")
    handler = DISPATCH.get(inst.opcode_name)
    if handler is None:
        raise SimulationError(f"{where}: the reference executor does not execute {inst.opcode_name} "
                              f"({inst.node_class} nodes are not ISA instructions it models)")
    if machine.vector_accumulators_set.any() and _may_change_vector_registers(inst):
        machine.vector_registers_may_change(where)
    try:
        handler(Step(machine, inst, position))
    except Refusal as e:
        raise SimulationError(f"{where}: {e}") from None
    except (MemoryError, ValueError, IndexError, OverflowError, TypeError) as e:
        # Bad input must surface as a located, typed error; keep the cause for debugging.
        raise SimulationError(f"{where}: cannot execute ({type(e).__name__}: {e})") from e


#: The instructions that set the Vector Engine's accumulation registers of their partitions: with
#: how many outputs (None: always)
_SETS_VECTOR_REGISTERS = {"TensorScalarReduce": None, "SelectReduce": 2, "RangeSelect": 2}


def _may_change_vector_registers(inst) -> bool:
    """A Vector Engine accumulation instruction that does not set the registers ("Even when
    reduce_cmd is set to idle, the accumulator state may still be modified", NKI 0.6
    nki.isa.exponential; docs/isa-semantics.md §5); other instructions leave them."""
    if inst.opcode_name not in _SETS_VECTOR_REGISTERS:
        return False
    outs = _SETS_VECTOR_REGISTERS[inst.opcode_name]
    return outs is not None and len(inst.outs) != outs


def _locations_used(function) -> dict[str, object]:
    """Every memory location of the function by name: its allocations' and its operands'."""
    locations = {}
    for allocation in function.allocations:
        if allocation.location is not None:
            locations[allocation.location.name] = allocation.location
    for block in function.blocks:
        for inst in block.instructions:
            for ap in list(inst.ins) + list(inst.outs):
                if not ap.is_immediate:
                    locations.setdefault(ap.location.name, ap.location)
    return locations


def _load_inputs(machine: Machine, locations: Mapping[str, object], inputs: Mapping[str, np.ndarray]) -> None:
    expected = {name for name, loc in locations.items() if loc.type.name == "Input"}
    unknown = sorted(set(inputs) - expected)
    if unknown:
        raise Refusal(f"inputs {unknown} are not Input tensors of the function "
                      f"(its Input tensors: {sorted(expected)})")
    missing = sorted(expected - set(inputs))
    if missing:
        raise Refusal(f"missing inputs {missing}")
    for name in sorted(expected):
        loc = locations[name]
        array = np.asarray(inputs[name])
        dtype, shape = numpy_dtype(loc.dtype), tuple(loc.shape)
        if array.dtype != dtype or array.shape != shape:
            raise Refusal(f"input '{name}' is {array.dtype}{list(array.shape)}, the tensor is "
                          f"{dtype}{list(shape)} ({loc.dtype.name})")
        machine.tensor_view(name)[...] = array
