"""``neuronxsim.nki06``: the NKI 0.6 dialect (``import nki``), beside the 2.2x one
(``neuronxsim.nki``, ``import neuronxcc.nki``).

Kernels are written as for NKI 0.6 (Neuron SDK 2.32): ``nki.jit``, ``nki.simulate``,
``nki.language`` (``nl``), ``nki.isa`` (``nisa``, destination-first instructions),
``nki.collectives``, ``nki.typing``, ``NkiTensor`` views. Both dialects record into the shared
tracer (``neuronxsim.nki.tracer``) through the shared instruction builders, so a kernel of
either emits the same BIR and runs on the same simulator. ``neuronxsim exec``, ``neuronxsim
profile`` and the pytest plugin (``neuronxsim.pytest_plugin``) make ``import nki`` resolve here
(``neuronxsim.importer``), so kernel files and test scripts run unmodified.

Beyond NKI's own names (``__all__``), neuronxsim adds, in ``neuronxsim.nki06.kernel``:
``trace_kernel`` (the BIR module), ``simulate_kernel`` (with ``arch=``) and ``profile`` (time,
engines, timeline). docs/nki-0.6.md says what is supported and what is refused.
"""

from neuronxsim.nki.errors import add_internal_package

add_internal_package(__file__)

from . import collectives, isa, language, typing  # noqa: E402
from .kernel import jit, simulate  # noqa: E402

__all__ = ["jit", "simulate", "language", "isa", "collectives", "typing"]
