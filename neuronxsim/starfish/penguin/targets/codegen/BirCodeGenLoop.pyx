# cython: language_level=3
"""Generate Backend IR from Penguin macro IR (neuronx-cc's ``BirCodeGenLoop``).

The codegen talks to the C++ core through its Python bindings, as the shipped module does: it
emits a node with ``self.addInstruction(Opcode.<X>)`` and fills it through the node's setters.
Which ``Opcode`` a codegen method passes is the whole sink selection (seed 000 section 1):
``BIRKernel`` (IT54), ``NKIKernel`` (IT55) or ``NKIKLIRKernel`` (IT56).
"""

from neuronxsim.bir import InstructionType as Opcode
from neuronxsim.bir import Module


class BirCodeGenLoop:
    """Lowers into one BIR function (``functions[neuron_core_id]``) of ``module``."""

    def __init__(self, module=None, neuron_core_id=0, function_name=""):
        self.module = module if module is not None else Module()
        while len(self.module.functions) <= neuron_core_id:
            self.module.addFunction(function_name if len(self.module.functions) == neuron_core_id else "")
        self.function = self.module.function(neuron_core_id)
        blocks = self.function.blocks
        self.block = blocks[-1] if blocks else self.function.addBlock()

    def addInstruction(self, opcode, name=""):
        """Appends a node of the class the opcode table names for ``opcode`` and returns it."""
        return self.block.addInstruction(Opcode(opcode), name)


__all__ = ["BirCodeGenLoop", "Opcode"]
