"""Penguin macro IR: a program of macro ops over DRAM tensors, the input of ``BirCodeGenLoop``.

>>> from neuronxsim.starfish.penguin import ir
>>> p = ir.Program("decoder_mlp")
>>> x = p.tensor("x", [1, 64, 256], "bfloat16")
>>> w = [p.tensor(n, s, "bfloat16") for n, s in
...      [("ln_w", [1, 256]), ("gate_w", [256, 512]), ("up_w", [256, 512]), ("down_w", [512, 256])]]
>>> out = p.tensor("out", [1, 64, 256], "bfloat16", kind="output")
>>> F = ir.FullTensorAccess
>>> mlp = p.add(ir.MLPKernel([F(x)] + [F(t) for t in w], [F(out)], fused_rmsnorm=True, norm_type="RMS_NORM"))
>>> ir.Program.loads(p.dumps()).insts[0].norm_type
<NormType.RMS_NORM: 1>

Lower it with ``BirCodeGenLoop().lower(p)`` (``neuronxsim.starfish.penguin.targets.codegen``).

* tensors (``Tensor``) and operand accesses (``FullTensorAccess``, ``NDimSubTensorAccess``,
  ``TileAccess`` over a ``MemrefTile``, ``OpaqueAccess``);
* the bespoke families (``MLPKernel``, ``NormQKV``, ``RMSNormQuantKernel``,
  ``AttentionMMSoftmaxMM``, ``BackwardsAttention``) with their named attrs;
* the generic library kernel ``BIRKernel`` (kernel_name + kernel_attrs);
* ``ExternalNativeNkiKernel`` (a user ``@nki.jit`` kernel; ``ExternalNativeNkiKlirKernel`` its
  KLIR twin) and ``InternalNativeNkiKernel`` (a registry kernel by func_name);
* ``Program`` with JSON save / load.
"""

from .access import (ACCESS_KINDS, Access, FullTensorAccess, MemrefTile, NDimSubTensorAccess, OpaqueAccess,
                     TileAccess)
from .attrs import AttrSpec, attr_to_str
from .enums import ActFnType, NormType, QKVOutputLayout, QuantizationType
from .families import AttentionMMSoftmaxMM, BackwardsAttention, MLPKernel, NormQKV, RMSNormQuantKernel
from .kernels import BIRKernel, ExternalNativeNkiKernel, ExternalNativeNkiKlirKernel, InternalNativeNkiKernel
from .macro import MacroInst
from .operands import Operand
from .program import MACRO_CLASSES, Program
from .tensor import TENSOR_KINDS, Tensor, numpy_dtype

__all__ = [
    "Access", "FullTensorAccess", "NDimSubTensorAccess", "TileAccess", "MemrefTile", "OpaqueAccess",
    "ACCESS_KINDS", "AttrSpec", "attr_to_str", "NormType", "ActFnType", "QKVOutputLayout", "QuantizationType",
    "MacroInst", "MLPKernel", "NormQKV", "RMSNormQuantKernel", "AttentionMMSoftmaxMM", "BackwardsAttention",
    "BIRKernel", "ExternalNativeNkiKernel", "ExternalNativeNkiKlirKernel", "InternalNativeNkiKernel",
    "Operand", "Program", "MACRO_CLASSES", "Tensor", "TENSOR_KINDS", "numpy_dtype",
]
