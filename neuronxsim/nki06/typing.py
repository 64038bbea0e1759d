"""``nki.typing`` (``nt``): ``nt.tensor[128, 512]`` annotates a kernel parameter with its shape;
``nt.tensor[[128, 512], nl.float32]`` (with a dtype) also stands in for an array when a kernel is
traced without data (``neuronxsim.nki06.kernel.trace_kernel``). The type is the 2.2x dialect's:
one home for tensor types."""

from neuronxsim.nki.typing import TensorType, tensor

__all__ = ["tensor", "TensorType"]
