"""The lowering pipeline the subcommands share: Penguin program -> BIR with kernel nodes
(BirCodeGenLoop) -> ISA-level BIR (InlineBIRKernel for IT54 and IT55, lowerKernelInst for IT56)."""

from __future__ import annotations

from neuronxsim import bir
from neuronxsim.bir import target

#: BIR's name of each NeuronCore generation (the target description's).
ARCH_TO_BIR = {arch: target.bir_arch(arch) for arch in target.ARCHS}


def lower(program, arch: str, klr_dir=None):
    """(module, codegen): ``program`` lowered for ``arch`` ("trn1"/"trn2"); IT56 kernels go to
    ``klr_dir`` as KLR files when given (else to NEURONXSIM_KLR_DIR or a per-process directory)."""
    from neuronxsim.starfish.penguin.targets.codegen.BirCodeGenLoop import BirCodeGenLoop

    module = bir.Module()
    module.arch = ARCH_TO_BIR[arch]
    codegen = BirCodeGenLoop(module, klr_dir=klr_dir)
    codegen.lower(program)
    return module, codegen


def resolve(module: bir.Module, base_dir=None):
    """(ISA-level module, InlineBIRKernel's per-node statistics): every kernel node expanded.
    ``module`` is left as it was."""
    from neuronxsim import walrus
    from neuronxsim.walrus.inline import inline_bir_kernels

    resolved = bir.Module.from_json(module.to_json(-1), verify=False)
    stats = inline_bir_kernels(resolved)
    return walrus.lower_kernel_inst(resolved, base_dir), stats


def has_kernel_nodes(module: bir.Module) -> bool:
    kinds = (bir.InstructionType.BIRKernel, bir.InstructionType.NKIKernel, bir.InstructionType.NKIKLIRKernel)
    return any(i.opcode in kinds for f in module.functions for b in f.blocks for i in b.instructions)
