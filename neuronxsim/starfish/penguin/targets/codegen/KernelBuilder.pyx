# cython: language_level=3
"""The emit side's choice of which ``BirCodeGenLoop`` codegen method lowers a macro instruction.

One table maps each macro family to its codegen method and, for the four families that have one,
to its pre-tiled twin (``codegenTiledNativeKernel*``); ``_is_all_io_type_memref_tile`` picks the
twin when every operand arrives as a MemrefTile (``TileAccess``).
"""

from neuronxsim.errors import CodegenError
from neuronxsim.starfish.penguin import ir


class KernelBuilder:
    """Selects the codegen method for a macro instruction."""

    #: macro class -> (codegen method, pre-tiled twin or None)
    CODEGEN_METHODS = {
        ir.MLPKernel: ("codegenMLPKernel", "codegenTiledNativeKernelMLP"),
        ir.NormQKV: ("codegenNormQKV", "codegenTiledNativeKernelNormQKV"),
        ir.RMSNormQuantKernel: ("codegenRMSNormQuantKernel", "codegenTiledNativeKernelRMSNormQuant"),
        ir.AttentionMMSoftmaxMM: ("codegenAttentionMMSoftmaxMM", "codegenTiledNativeKernelAttentionMMSoftmaxMM"),
        ir.BackwardsAttention: ("codegenBackwardsAttention", None),
        ir.BIRKernel: ("codegenBIRKernel", None),
        ir.ExternalNativeNkiKernel: ("codegenExternalNativeNkiKernel", None),
        ir.ExternalNativeNkiKlirKernel: ("codegenExternalNativeNkiKlirKernel", None),
        ir.InternalNativeNkiKernel: ("codegenInternalNativeNkiKernel", None),
    }

    @staticmethod
    def _is_all_io_type_memref_tile(inst):
        """True iff the macro has operands and every one of them is a ``TileAccess``."""
        operands = list(inst.srcs) + list(inst.dsts)
        return bool(operands) and all(isinstance(a, ir.TileAccess) for a in operands)

    @classmethod
    def codegen_method(cls, inst):
        """The name of the ``BirCodeGenLoop`` method that lowers ``inst``."""
        for klass in type(inst).__mro__:
            methods = cls.CODEGEN_METHODS.get(klass)
            if methods is not None:
                untiled, tiled = methods
                return tiled if tiled and cls._is_all_io_type_memref_tile(inst) else untiled
        raise CodegenError(f"{type(inst).__name__}: no codegen lowers it; expected a macro instruction of "
                           f"{', '.join(k.__name__ for k in cls.CODEGEN_METHODS)}")


__all__ = ["KernelBuilder"]
