"""``neuronxsim.nki``: the NKI front end. Write kernels as for the NKI of the 2.2x SDKs (change
only the imports), then trace them to BIR, simulate them on the tile-engine simulator, or profile
them::

    import neuronxsim.nki as nki
    import neuronxsim.nki.language as nl

    @nki.jit
    def add(a, b):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load(a) + nl.load(b))
        return out

    c = nki.simulate_kernel(add, a, b)           # NumPy in, NumPy out
    module = nki.trace(add, a, b)                 # the BIR module (inputs "a", "b"; output "out")
    prof = nki.profile(add, a, b)                 # outputs, time, per-engine stats, trace

Modules: ``language`` (``nl``), ``isa`` (``nisa``), ``typing`` (``nt``); the tracer in
``tracer``/``instructions``, the allocator in ``allocator``, BIR output in ``emit``.
"""

from . import isa, language, typing
from .errors import NKIAllocationError, NKIError
from .kernel import GridKernel, Kernel, TensorSpec, TracedKernel, jit, trace, trace_kernel
from .execution import Profile, profile, simulate, simulate_kernel

__all__ = [
    "jit", "Kernel", "GridKernel", "trace", "trace_kernel", "TracedKernel", "TensorSpec",
    "simulate_kernel", "simulate", "profile", "Profile", "NKIError", "NKIAllocationError",
    "language", "isa", "typing",
]
