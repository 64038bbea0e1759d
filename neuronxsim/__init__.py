"""neuronxsim: the NeuronCore macro-kernel back end and a native tile-engine simulator.

Facades over the compiled core (``neuronxsim.starfish.lib._core``):

* :mod:`neuronxsim.bir` -- opcodes, BIR node classes, modules, BIR JSON;
* :mod:`neuronxsim.starfish.penguin.targets.codegen.BirCodeGenLoop` -- the Cython codegen.
"""

from neuronxsim.errors import BIRError, KernelError, KLRError, NeuronxsimError, SimulationError

__version__ = "0.1.0"

__all__ = ["BIRError", "KernelError", "KLRError", "NeuronxsimError", "SimulationError", "__version__"]
