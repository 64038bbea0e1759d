"""``neuronxsim.nki``: the NKI front end. Kernels are written as for the NKI of the 2.2x SDKs
(change only the imports), then traced to BIR, simulated on the tile-engine simulator, or
profiled::

    import neuronxsim.nki as nki
    import neuronxsim.nki.language as nl

    @nki.jit
    def add(a, b):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load(a) + nl.load(b))
        return out

    c = add(a, b)                                 # = nki.simulate_kernel(add, a, b)
    module = nki.trace(add, a, b)                 # the BIR module: inputs "a", "b", output "out"
    prof = nki.profile_kernel(add, a, b, trace_file="add.json")  # time, engines, PE use

Interface for code that embeds traced kernels (the codegen's IT55 nodes):

* ``nki.trace(kernel, *args, arch="trn1", **kwargs) -> bir.Module`` (a plain function given
  alone is decorated instead, as NKI's ``@nki.trace``); ``nki.trace_kernel(...)``
  returns a :class:`TracedKernel` with the module and ``inputs`` / ``outputs``
  (:class:`TensorSpec`: name, shape, dtype) in parameter and result order.
* Array arguments (NumPy arrays, or ``nki.typing.tensor[[shape], dtype]`` stand-ins) become
  ``Input`` DRAM tensors named after their parameters; other arguments are compile-time
  constants. The returned tensors become ``Output`` tensors named by ``nl.ndarray(name=...)``,
  else by the kernel's variable holding them at return, else ``out`` / ``out0, out1, ...``.
* Every instruction carries ``source = "file.py:LINE"`` of the kernel line that made it.
* Launch grids: ``kernel[4]``, ``kernel[2, 3]`` trace every SPMD instance into one function;
  ``kernel[nl.nc(2)]`` (or ``kernel[nl.nc(2), 4]``) traces one function per NeuronCore,
  ``functions[c]`` for ``nl.program_id(<that axis>) == c``.
* ``arch``: "trn1" (BIR ``gen2``, 192 KiB SBUF per partition) or "trn2" (``gen3``, 224 KiB).

Modules: ``language`` (``nl``), ``isa`` (``nisa``), ``typing`` (``nt``); inside, ``kernel``
(jit, grids, the trace driver), ``instructions`` (one builder per ISA instruction, with the
engines' rules), ``tracer`` (recording, and the checks made as it records), ``record`` (the
append-only record), ``passes`` (from the record to BIR: zero elision, redirects, matmul
groups, liveness, then ``allocator`` (SBUF/PSUM by live range) and ``emit`` (BIR)),
``indexing`` (index expressions, masks, subscripts), ``tensor`` (symbolic tensors),
``execution`` (simulate and profile) and ``errors``. ``docs/nki-tracer.md`` describes the record,
the passes and the boundary to libBIR.
"""

from . import language  # (first: tensor, compiler and language import each other)
from . import compiler, isa, typing
from .errors import NKIAllocationError, NKIError
from .execution import (Profile, baremetal, benchmark, profile, profile_kernel, simulate,
                        simulate_kernel)
from .kernel import GridKernel, Kernel, TensorSpec, TracedKernel, jit, trace, trace_kernel

__all__ = [
    "jit", "Kernel", "GridKernel", "trace", "trace_kernel", "TracedKernel", "TensorSpec",
    "simulate_kernel", "simulate", "profile_kernel", "Profile", "baremetal", "benchmark",
    "profile", "NKIError", "NKIAllocationError", "language", "isa", "typing", "compiler",
]
