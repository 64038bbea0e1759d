"""The exceptions neuronxsim raises. The C++ core's exception classes map one to one onto these
(cpp/bir/Error.h), so an error from native code is caught by the same ``except`` as one from
Python. Every message says what is wrong and where (a JSON path, an instruction, a file offset).
"""


class NeuronxsimError(Exception):
    """Base of every neuronxsim error."""


class BIRError(NeuronxsimError, ValueError):
    """A malformed or invalid BIR module (JSON syntax or schema, unknown names, verifier)."""


class SimulationError(NeuronxsimError, RuntimeError):
    """The simulator refuses what the hardware cannot do, or the inputs do not fit the module."""


class KernelError(NeuronxsimError, ValueError):
    """A kernel node cannot be resolved: unknown kernel name, or attrs/shapes it cannot take."""


class KLRError(NeuronxsimError, ValueError):
    """A KLR file is truncated, corrupt, or of a kind that cannot be lowered."""


class CodegenError(NeuronxsimError, ValueError):
    """A Penguin macro program that cannot be built or lowered to BIR: a missing or mistyped
    attr, operand shapes that disagree, an access kind the macro family cannot take. The message
    names the macro, the attr or operand, and the expected form."""


__all__ = ["NeuronxsimError", "BIRError", "SimulationError", "KernelError", "KLRError", "CodegenError"]
