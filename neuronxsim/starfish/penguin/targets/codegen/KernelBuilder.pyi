"""
The emit side's choice of which ``BirCodeGenLoop`` codegen method lowers a macro instruction.

One table maps each macro family to its codegen method and, for the four families that have one,
to its pre-tiled twin (``codegenTiledNativeKernel*``); ``_is_all_io_type_memref_tile`` picks the
twin when every operand arrives as a MemrefTile (``TileAccess``).
"""
from __future__ import annotations
import builtins as __builtins__
from neuronxsim.errors import CodegenError
from neuronxsim.starfish.penguin import ir
import neuronxsim.starfish.penguin.ir.families
import neuronxsim.starfish.penguin.ir.kernels
import typing
__all__: list = ['KernelBuilder']
class KernelBuilder:
    """
    Selects the codegen method for a macro instruction.
    """
    CODEGEN_METHODS: typing.ClassVar[dict] = {neuronxsim.starfish.penguin.ir.families.MLPKernel: ('codegenMLPKernel', 'codegenTiledNativeKernelMLP'), neuronxsim.starfish.penguin.ir.families.NormQKV: ('codegenNormQKV', 'codegenTiledNativeKernelNormQKV'), neuronxsim.starfish.penguin.ir.families.RMSNormQuantKernel: ('codegenRMSNormQuantKernel', 'codegenTiledNativeKernelRMSNormQuant'), neuronxsim.starfish.penguin.ir.families.AttentionMMSoftmaxMM: ('codegenAttentionMMSoftmaxMM', 'codegenTiledNativeKernelAttentionMMSoftmaxMM'), neuronxsim.starfish.penguin.ir.families.BackwardsAttention: ('codegenBackwardsAttention', None), neuronxsim.starfish.penguin.ir.kernels.BIRKernel: ('codegenBIRKernel', None), neuronxsim.starfish.penguin.ir.kernels.ExternalNativeNkiKernel: ('codegenExternalNativeNkiKernel', None), neuronxsim.starfish.penguin.ir.kernels.ExternalNativeNkiKlirKernel: ('codegenExternalNativeNkiKlirKernel', None), neuronxsim.starfish.penguin.ir.kernels.InternalNativeNkiKernel: ('codegenInternalNativeNkiKernel', None)}
    @staticmethod
    def _is_all_io_type_memref_tile(inst):
        """
        True iff the macro has operands and every one of them is a ``TileAccess``.
        """
    @classmethod
    def codegen_method(cls, inst):
        """
        The name of the ``BirCodeGenLoop`` method that lowers ``inst``.
        """
__test__: dict = {}
