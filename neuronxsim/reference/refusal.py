"""The one internal exception of the reference executor.

Code below the executor raises :class:`Refusal` with a message saying what is wrong (prefixed with
the operand, ``ins[1]: ...``, where there is one); the executor turns it into a
:class:`neuronxsim.SimulationError` that also names the instruction.
"""


class Refusal(Exception):
    """The reference executor will not execute this: the message says why."""
