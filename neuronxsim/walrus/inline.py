"""InlineBIRKernel from Python: expand IT54 library-kernel nodes into ISA code.

The codegen lowers the production macros (MLP, QKV, RMSNormQuant, attention forward and backward,
and the generic library kernels RouterTopK, ExpertMLPs, RowTiledMM, ColumnTiledMM,
CaymanPackedPETranspose, AttentionTkgFwd) to one ``InstBIRKernel`` node each, carrying only a
``kernel_name``, attrs and operand access patterns (seed 000). :func:`inline_bir_kernels` runs the
walrus pass that replaces each node, in place, by its leaf's ISA instructions -- natively, in the
C++ core, as ``InlineBIRKernel::run`` does -- so the module can be simulated.

>>> from neuronxsim.walrus.inline import inline_bir_kernels
>>> stats = inline_bir_kernels(module)                   # doctest: +SKIP
>>> stats[0]["kernel_name"], stats[0]["instructions"]    # doctest: +SKIP
('MLP', 4312)
"""

from __future__ import annotations

from typing import Optional

from neuronxsim.bir import Module
from neuronxsim.errors import KernelError, NeuronxsimError
from neuronxsim.starfish.lib import _core

_w = _core.walrus


def inline_bir_kernels(module: Module, *, verify: bool = True, max_instructions: Optional[int] = None) -> list[dict]:
    """Expands every IT54 (``InstBIRKernel``) node of ``module`` in place, as
    ``InlineBIRKernel::run`` does.

    All or nothing: if any node cannot be expanded -- an unknown ``kernel_name`` (the message lists
    the known ones), attrs or shapes its leaf cannot take -- :class:`KernelError` names the node and
    no node changes. ``verify`` checks each emitted operand as it is made and the whole module
    afterwards. IT55 and IT56 nodes are left for ``neuronxsim.walrus.resolve_kernel_nodes``.
    ``max_instructions``: a node whose expansion has more instructions is refused (KernelError)
    before it can exhaust memory; None: the NKI tracer's cap (``$NEURONXSIM_MAX_INSTRUCTIONS`` or
    ``neuronxsim.nki.tracer.DEFAULT_MAX_INSTRUCTIONS``).

    Returns one dict per expanded node, in module order: ``node``, ``kernel_name``,
    ``instructions``, ``per_engine`` (compute instructions by engine name), ``dmas``, ``tensors``
    (on-chip tensors added), ``sbuf_bytes`` (high water per partition), ``psum_banks``.
    """
    if not isinstance(module, Module):
        raise KernelError(f"inline_bir_kernels: expected a neuronxsim.bir.Module, got {type(module).__name__}")
    from neuronxsim.nki.tracer import instruction_cap

    try:
        cap = instruction_cap(max_instructions)
    except NeuronxsimError as e:
        raise KernelError(f"inline_bir_kernels: {e}") from None
    return _w.inline_bir_kernels(module, verify, cap)


def bir_kernel_leaves() -> dict[str, str]:
    """Every IT54 leaf this build has: ``{kernel_name: what it computes}``."""
    return dict(_w.bir_kernel_leaves())


__all__ = ["inline_bir_kernels", "bir_kernel_leaves"]
