# cython: language_level=3
"""Generate Backend IR from Penguin macro IR (neuronx-cc's ``BirCodeGenLoop``).

The codegen talks to the C++ core through its Python bindings, as the shipped module does: it
emits a node with ``self.addInstruction(Opcode.<X>)`` and fills it through the node's setters.
Which ``Opcode`` a codegen method passes is the whole sink selection (seed 000 section 1):

* ``BIRKernel`` (IT54) -- library kernels, inlined by name downstream: the generic
  ``codegenBIRKernel``, the bespoke families through ``_commonNativeKernelCodegen`` /
  ``_commonAttentionKernelCodegen``, and ``codegenBackwardsAttention``;
* ``NKIKernel`` (IT55) -- user ``@nki.jit`` kernels, which the NKI front end compiled when the
  program was built (``penguin.ir.nki_compile``): the node names the compiled kernel (``func``),
  its parameters and results; nothing is traced here;
* ``NKIKLIRKernel`` (IT56) -- registry kernels, re-traced through the NKI front end at codegen
  time: the internal kernel registry (InternalKernelRegistry.pxi) and the sink that resolves,
  traces, caches and emits them (InternalNkiKernelCodegen.pxi), both included in this module.

Operands are the program's DRAM tensors: ``lower`` declares one BIR DRAM tensor per program
tensor, and each codegen marshals its operands onto the node -- whole tensors with
``addSeqAccess``, sub-tensors and tiles through ``createAP`` + ``addArgumentOrOutput``, pre-tiled
operands with ``addAP``, kernel-tiled ones (IT56) with ``addOpaqueAP``.

Only ``codegenInternalNativeNkiKernel`` traces (seed 000: "the only codegen that re-traces"), and
a kernel becomes an IT56 node iff it is one of the internal kernel registry's.
"""

import enum
import inspect

import numpy as np

from neuronxsim import bir
from neuronxsim.bir import InstructionType as Opcode
from neuronxsim.bir import MemoryType, Module, TensorKind, target
from neuronxsim.errors import CodegenError, NeuronxsimError
from neuronxsim.starfish.penguin import ir
from neuronxsim.starfish.penguin.ir import attr_to_str
from neuronxsim.starfish.penguin.ir.kernels import kernel_function
from neuronxsim.starfish.penguin.ir.nki_compile import operand_types
from neuronxsim.starfish.penguin.targets.codegen.KernelBuilder import KernelBuilder
from neuronxsim.starfish.penguin.targets.codegen.KernelMetricsCollector import (KernelCategory,
                                                                               KernelMetricsCollector)
from neuronxsim.walrus.signatures import leaf_signature

#: The internal kernel registry (seed 003): None until the IT56 sink first needs it
#: (``get_internal_kernel_registry``). Lowering IT54 and IT55 macros never builds it.
_INTERNAL_KERNEL_REGISTRY = None

include "InternalKernelRegistry.pxi"
include "InternalNkiKernelCodegen.pxi"

#: On-chip buffers a kernel node may use, by module arch: SBUF (partitions, bytes per
#: partition) and PSUM (partitions, banks, bytes per bank), from the target description.
BUFFER_SHAPES = {
    c.bir_arch: ([c.num_partitions, c.sbuf_bytes_per_partition], [c.num_partitions, c.psum_banks, c.psum_bank_bytes])
    for c in map(target.config, target.ARCHS)
}

#: The NKI front end's name of each module arch (the arch kernels are traced / compiled for).
TRACE_ARCHS = {target.bir_arch(arch): arch for arch in target.ARCHS}

#: neuronx-cc's ``--auto-cast`` and ``--auto-cast-type`` values, recorded on every IT54 node.
AUTO_CAST_MODES = ("none", "matmult", "all")
AUTO_CAST_TYPES = ("bf16", "fp16", "tf32", "fp8_e4m3")

#: The leaf names the bespoke families emit (NxDI's ``kernel_name`` arguments, reference
#: section 3); backward attention has no public call site and is named after its macro.
MLP_KERNEL_NAME = "MLP"
QKV_KERNEL_NAME = "QKV"
RMSNORM_QUANT_KERNEL_NAME = "QuantOnly"
ATTENTION_KERNEL_NAMES = {False: "AttentionMMSoftmaxMMWithoutSwap", True: "CausalAttentionMMSoftmaxMMWithoutSwap"}
BACKWARDS_ATTENTION_KERNEL_NAME = "BackwardsAttention"

#: The public BIRKernel schema's named attr fields: a bespoke attr of one of these names is set
#: on the node as well as carried in kernel_attrs.
NAMED_ATTR_FIELDS = ("is_causal", "fused_rmsnorm", "norm_type", "store_add", "quant_kernel", "lower_bound",
                     "skip_gate", "act_fn", "up_bias", "down_bias", "is_tkg", "lnc_size", "output_layout")

_DRAM_TENSOR_TYPES = {
    "input": (MemoryType.Input, TensorKind.ExternalInput),
    "output": (MemoryType.Output, TensorKind.ExternalOutput),
    "internal": (MemoryType.DRAM, TensorKind.Internal),
}

# How a codegen method marshals operands, hence which access kinds it takes: whole tensors
# (addSeqAccess), pre-tiled MemrefTiles (addAP), or any kind (codegenBIRKernelAccess).
_WHOLE_TENSOR = ((ir.FullTensorAccess,), "FullTensorAccess operands (whole tensors, addSeqAccess), "
                                         "or TileAccess for every operand (the tiled form, addAP)")
_PRE_TILED = ((ir.TileAccess,), "TileAccess for every operand (pre-tiled MemrefTiles, addAP)")
_ANY_ACCESS = (tuple(ir.ACCESS_KINDS.values()), "FullTensorAccess, NDimSubTensorAccess, TileAccess or OpaqueAccess")
_OPERAND_ACCESS = {
    "codegenBIRKernel": _ANY_ACCESS,
    "codegenMLPKernel": _WHOLE_TENSOR,
    "codegenNormQKV": _WHOLE_TENSOR,
    "codegenRMSNormQuantKernel": _WHOLE_TENSOR,
    "codegenAttentionMMSoftmaxMM": _ANY_ACCESS,
    "codegenBackwardsAttention": _WHOLE_TENSOR,
    "codegenTiledNativeKernelMLP": _PRE_TILED,
    "codegenTiledNativeKernelNormQKV": _PRE_TILED,
    "codegenTiledNativeKernelRMSNormQuant": _PRE_TILED,
    "codegenTiledNativeKernelAttentionMMSoftmaxMM": _PRE_TILED,
    # The kernel was compiled for each operand's access shape; a sub-tensor operand (e.g. a few heads
    # of a fused QKV output) is bound element by element when walrus splices the kernel.
    "codegenExternalNativeNkiKernel": ((ir.FullTensorAccess, ir.NDimSubTensorAccess),
                                       "FullTensorAccess or NDimSubTensorAccess operands (the kernel's arguments "
                                       "and results, compiled at their access shapes)"),
    "codegenExternalNativeNkiKlirKernel": ((ir.FullTensorAccess, ir.NDimSubTensorAccess),
                                           "FullTensorAccess or NDimSubTensorAccess operands (the kernel's "
                                           "arguments and results, compiled at their access shapes)"),
    "codegenInternalNativeNkiKernel": ((ir.FullTensorAccess, ir.OpaqueAccess),
                                       "whole-tensor operands, OpaqueAccess or FullTensorAccess (the kernel "
                                       "owns its tiling, addOpaqueAP)"),
}

# codegenBIRKernelAccess: access kind -> the BirCodeGenLoop method that marshals it.
_ACCESS_MARSHALLERS = {
    ir.FullTensorAccess: "_addSeqAccess",
    ir.NDimSubTensorAccess: "addBIRKernelNDimSubTensorAccess",
    ir.TileAccess: "addBIRKernelTileAccess",
    ir.OpaqueAccess: "_addOpaqueAP",
}


def _tokens(hidden_shape):
    """``B*S`` of ``hidden [B, S, H]``: the tokens the MLP / QKV routing decision counts."""
    tokens = 1
    for d in hidden_shape[:-1]:
        tokens *= d
    return tokens


def _dram_access_pattern(location, shape, starts, counts, steps, partition_dim):
    """(offset, [step, num] pairs) addressing ``counts[d]`` elements from ``starts[d]`` every
    ``steps[d]`` of each dim of ``location`` seen as a row-major ``shape``, the partition dim's
    pair first: a ``bir.View`` (cpp/bir/View.h, the one home of the access-pattern algebra)."""
    view = bir.View.ofShape(location, location.dtype, list(shape))
    for d, (start, count, step) in enumerate(zip(starts, counts, steps)):
        view = view.slice(d, start, count, step)
    return view.offset, view.partitionFirstPairs(partition_dim)


def LncSize(access):
    """Seed 000's ``LncSize(operand)`` of the tile / sub-tensor builders: how many physical
    NeuronCores of a logical core share the operand (its access's ``lnc``)."""
    return access.lnc


def _operand_proxies(accesses):
    """Arrays of the operands' shapes and dtypes, for a tracer, which reads only those:
    zero-strided views keep it from allocating the tensors."""
    return [np.broadcast_to(np.zeros((), ir.numpy_dtype(a.dtype)), a.access_shape) for a in accesses]


def _field_value(value):
    """A bespoke attr as its named node field takes it (enums by integer value)."""
    return int(value) if isinstance(value, enum.Enum) else value


class BirCodeGenLoop(InternalNativeNkiKernelCodegen):
    """Lowers Penguin macro programs into one BIR function (``functions[neuron_core_id]``).

    ``auto_cast`` / ``auto_cast_type`` are the compile's ``--auto-cast`` settings, recorded on
    every IT54 node. ``klr_dir``: where IT56 Form A files go (see InternalNkiKernelCodegen.pxi).
    """

    def __init__(self, module=None, neuron_core_id=0, function_name="", auto_cast="matmult",
                 auto_cast_type="bf16", klr_dir=None):
        if auto_cast not in AUTO_CAST_MODES:
            raise CodegenError(f"BirCodeGenLoop: auto_cast is {auto_cast!r}; expected one of {', '.join(AUTO_CAST_MODES)}")
        if auto_cast_type not in AUTO_CAST_TYPES:
            raise CodegenError(f"BirCodeGenLoop: auto_cast_type is {auto_cast_type!r}; expected one of "
                               f"{', '.join(AUTO_CAST_TYPES)}")
        self.module = module if module is not None else Module()
        if self.module.arch not in BUFFER_SHAPES:
            raise CodegenError(f"BirCodeGenLoop: module arch is {self.module.arch!r}; expected one of "
                               f"{', '.join(BUFFER_SHAPES)}")
        while len(self.module.functions) <= neuron_core_id:
            self.module.addFunction(function_name if len(self.module.functions) == neuron_core_id else "")
        self.function = self.module.function(neuron_core_id)
        blocks = self.function.blocks
        self.block = blocks[-1] if blocks else self.function.addBlock()
        self.auto_cast = auto_cast
        self.auto_cast_type = auto_cast_type
        self.sb_buf_shape, self.psum_buf_shape = BUFFER_SHAPES[self.module.arch]
        self.klr_dir = os.fspath(klr_dir) if klr_dir is not None else None  # else NEURONXSIM_KLR_DIR
        self.kernel_counts = {}  # (KernelCategory, kernel name) -> nodes emitted by the last lower()
        self.compiled_kernels = {}  # handle -> CompiledNkiKernel of every IT55 node emitted
        self._locations = {}  # program tensor name -> its BIR DRAM tensor
        self._ap_reshapes = {}  # program tensor name -> the view shape its operand is marshalled in
        self._traces = {}  # id(IT56 macro) -> its trace, made before lower() emits anything

    def addInstruction(self, opcode, name=""):
        """Appends a node of the class the opcode table names for ``opcode`` and returns it."""
        return self.block.addInstruction(Opcode(opcode), name)

    # ------------------------------------------------------------------ driver

    def lower(self, program):
        """Lowers ``program``'s macro instructions, in order; returns the module.

        Everything that can refuse the program -- attrs, shapes, access kinds, the user kernels'
        compiled artifacts, tracing registry kernels -- runs before any tensor or node is emitted, so
        a refused program leaves the module as it was.
        """
        if not isinstance(program, ir.Program):
            raise CodegenError(f"BirCodeGenLoop.lower: expected a penguin.ir Program, got {program!r}")
        program.validate()
        try:
            methods = []
            for index, inst in enumerate(program.insts):
                try:
                    name = KernelBuilder.codegen_method(inst)
                    self._checkLowerable(inst, name)
                    if name in ("codegenExternalNativeNkiKernel", "codegenExternalNativeNkiKlirKernel"):
                        self._compiledUserKernel(inst)
                    elif name == "codegenInternalNativeNkiKernel":
                        self._traces[id(inst)] = self._traceInternalKernelCached(inst)
                except CodegenError as e:
                    raise CodegenError(f"insts[{index}] {e}") from None
                methods.append(getattr(self, name))
            existing = {s.location.name for s in self.function.allocations if s.location is not None}
            for tensor in program.tensors.values():
                if tensor.name in existing:
                    raise CodegenError(f"Program '{program.name}': tensor '{tensor.name}' already exists in the "
                                       f"BIR function '{self.function.name}'")
            collector = KernelMetricsCollector.get_instance()
            before = collector.counts()
            for tensor in program.tensors.values():
                memory_type, kind = _DRAM_TENSOR_TYPES[tensor.kind]
                self._locations[tensor.name] = self.function.createDramTensor(
                    tensor.name, memory_type, getattr(bir.DType, tensor.dtype), list(tensor.shape), kind)
            for inst, method in zip(program.insts, methods):
                method(inst)
            self.kernel_counts = collector.counts_since(before)
        finally:
            self._traces.clear()
        return self.module

    def save(self, path, metrics_sidecar=True):
        """Writes the module as BIR JSON to ``path``, the compiled user kernels its IT55 nodes name
        into the folder next to it (``nki/...``, the nodes' file references) and, if asked, the
        kernel metrics of the last ``lower`` (``KernelMetricsCollector.sidecar_path(path)``)."""
        self.write_compiled_kernels(os.path.dirname(os.path.abspath(path)))
        bir.save(self.module, path)
        if metrics_sidecar:
            KernelMetricsCollector.get_instance().write_sidecar(path, self.kernel_counts)

    def write_compiled_kernels(self, folder):
        """Writes the compiled user kernels the module's IT55 nodes name into ``folder`` (the
        folder the module is saved in); returns their paths."""
        return [compiled.write(folder) for compiled in self.compiled_kernels.values()]

    def _location(self, access):
        try:
            return self._locations[access.tensor.name]
        except KeyError:
            raise CodegenError(f"tensor '{access.tensor.name}' is not declared in this BirCodeGenLoop; "
                               "expected a macro of a program given to lower()") from None

    def _checkLowerable(self, inst, method_name):
        """Validates ``inst`` and that ``method_name`` can marshal each of its operands."""
        inst.validate()
        kinds, form = _OPERAND_ACCESS[method_name]
        for side in ("srcs", "dsts"):
            for i, access in enumerate(getattr(inst, side)):
                if not isinstance(access, kinds):
                    raise CodegenError(f"{inst.label} {side}[{i}]: {access.kind} of '{access.tensor.name}'; "
                                       f"{method_name} takes {form}")

    # ------------------------------------------------------------------ IT54: generic library kernels

    def codegenBIRKernel(self, inst):
        """A library kernel by name: the attr bag goes to the node verbatim, each operand through
        ``codegenBIRKernelAccess``. Never touches the internal kernel registry."""
        self._checkLowerable(inst, "codegenBIRKernel")
        kernel_name = inst.kernel_name
        KernelMetricsCollector.get_instance().record_kernel(kernel_name, category=KernelCategory.BIR_KERNEL)
        node = self.addInstruction(Opcode.BIRKernel, inst.name or kernel_name)
        self._setBIRKernelFields(node, inst, kernel_name, list(inst.kernel_attrs))
        self._marshalOperands(node, inst, self.codegenBIRKernelAccess)
        return node

    def _setBIRKernelFields(self, node, inst, kernel_name, kernel_attrs):
        """The fields every IT54 node carries: name, attr bag, shapes, buffers, auto-cast."""
        node.set_kernel_name(kernel_name)
        node.set_kernel_attrs(kernel_attrs)
        node.set_srcs_shape(inst.srcs_shapes)
        node.set_dsts_shape(inst.dsts_shapes)
        node.set_sb_buf_shape(self.sb_buf_shape)
        node.set_psum_buf_shape(self.psum_buf_shape)
        node.set_auto_cast(self.auto_cast)
        node.set_auto_cast_type(self.auto_cast_type)

    def _marshalOperands(self, node, inst, marshal):
        for access in inst.srcs:
            marshal(node, access, False)
        for access in inst.dsts:
            marshal(node, access, True)

    # ------------------------------------------------------------------ operand access marshalling

    def codegenBIRKernelAccess(self, node, access, isOutput):
        """Marshals one operand by its access kind, in the view its access names, then restores
        the tensor's original access pattern."""
        marshaller = _ACCESS_MARSHALLERS.get(type(access))
        if marshaller is None:
            raise CodegenError(f"codegenBIRKernelAccess: {type(access).__name__}; expected {_ANY_ACCESS[1]}")
        self._reshape_ap(access)
        try:
            getattr(self, marshaller)(node, access, isOutput)
        finally:
            self.restore_original_ap(access)

    def _reshape_ap(self, access):
        """Addresses the access's tensor in the access's view (if it names one) until restored."""
        view = getattr(access, "view_shape", None)
        if view:
            self._ap_reshapes[access.tensor.name] = tuple(view)

    def restore_original_ap(self, access):
        """Undoes ``_reshape_ap``: the tensor is addressed by its own shape again."""
        self._ap_reshapes.pop(access.tensor.name, None)

    def _apShape(self, tensor):
        return self._ap_reshapes.get(tensor.name, tensor.shape)

    def _addSeqAccess(self, node, access, isOutput):
        node.addSeqAccess(self._location(access), isOutput)

    def _addOpaqueAP(self, node, access, isOutput):
        node.addOpaqueAP(self._location(access), isOutput)

    def addBIRKernelNDimSubTensorAccess(self, node, access, isOutput):
        """A strided N-d sub-tensor: ``access_shape[d]`` elements per dim from ``offsets[d]``,
        every ``steps[d]``; shared by ``LncSize`` NeuronCores; ``reduce``: the kernel may reduce the
        output along its partition dim."""
        access_shape, partition_dim, lnc = access.access_shape, access.partition_dim, LncSize(access)
        location = self._location(access)
        offset, pairs = _dram_access_pattern(location, self._apShape(access.tensor), access.offsets, access_shape,
                                             access.steps, partition_dim)
        ap = node.createAP(location, offset, pairs, list(access_shape), partition_dim, lnc)
        node.addArgumentOrOutput(ap, isOutput, access.reduce)

    def addBIRKernelTileAccess(self, node, access, isOutput):
        """One MemrefTile: ``tile.shape[d]`` contiguous elements per dim from the tile's origin
        (the twin of addBIRKernelNDimSubTensorAccess, with unit steps)."""
        node.addArgumentOrOutput(self._tileAP(node, access), isOutput, access.reduce)

    def _tileAP(self, node, access):
        tile, partition_dim, lnc = access.tile, access.partition_dim, LncSize(access)
        location = self._location(access)
        offset, pairs = _dram_access_pattern(location, self._apShape(access.tensor), access.offsets, tile.shape,
                                             (1,) * len(tile.shape), partition_dim)
        return node.createAP(location, offset, pairs, list(tile.shape), partition_dim, lnc)

    def _addPreTiledAP(self, node, access, isOutput):
        """The tiled twins' marshalling: the operand's MemrefTile pattern through ``addAP``."""
        self._reshape_ap(access)
        try:
            ap = self._tileAP(node, access)
            ap.reduce = access.reduce
            node.addAP(ap, isOutput)
        finally:
            self.restore_original_ap(access)

    # ------------------------------------------------------------------ IT54: bespoke families

    def _commonNativeKernelCodegen(self, inst, kernel_name, family_attrs, marshal):
        """The shared IT54 builder of the MLP / QKV / RMSNormQuant families: every family attr in
        kernel_attrs, the schema's named ones also as node fields, operands through ``marshal``."""
        KernelMetricsCollector.get_instance().record_kernel(kernel_name, category=KernelCategory.BIR_KERNEL)
        node = self.addInstruction(Opcode.BIRKernel, inst.name or kernel_name)
        self._setBIRKernelFields(node, inst, kernel_name, [(k, attr_to_str(v)) for k, v in family_attrs])
        for key, value in family_attrs:
            if key in NAMED_ATTR_FIELDS:
                getattr(node, "set_" + key)(_field_value(value))
        self._marshalOperands(node, inst, marshal)
        return node

    def _commonAttentionKernelCodegen(self, inst, kernel_name, family_attrs, marshal):
        """The shared IT54 builder of the attention forward family: the attrs travel in
        kernel_attrs only (causality also selects the kernel name)."""
        KernelMetricsCollector.get_instance().record_kernel(kernel_name, category=KernelCategory.BIR_KERNEL)
        node = self.addInstruction(Opcode.BIRKernel, inst.name or kernel_name)
        self._setBIRKernelFields(node, inst, kernel_name, [(k, attr_to_str(v)) for k, v in family_attrs])
        self._marshalOperands(node, inst, marshal)
        return node

    def _leafAttrs(self, inst, kernel_name, **decisions):
        """A bespoke family's kernel_attrs: its leaf's signature's attrs, in the signature's order
        (seed 000's roster for the family), each from the macro or, for the codegen's routing
        decisions, from ``decisions``. An attr beyond the seed's roster (``only_when_set``: MLP's
        gate_bias) is emitted only when it differs from its default."""
        attrs = []
        for a in leaf_signature(kernel_name).attrs:
            if a.from_codegen:
                if a.name not in decisions:
                    raise CodegenError(f"{inst.label}: the codegen made no '{a.name}' decision for leaf '{kernel_name}'")
                value = decisions.pop(a.name)
            else:
                value = getattr(inst, a.name)
            if not (a.only_when_set and value == a.default):
                attrs.append((a.name, value))
        if decisions:
            raise CodegenError(f"{inst.label}: leaf '{kernel_name}' takes no attr {sorted(decisions)}")
        return attrs

    # The token-generation routing (seed 000 section 3): ``is_tkg = (B*S < TKG_BS_SEQLEN_THRESHOLD)``
    # with the threshold imported from the MLP leaf module inside each codegen method, at lowering
    # time, so the leaf's current value decides. The QKV family names the same decision
    # ``useTkgQKVKernel``, which is also the attr its node carries.

    def _mlpAttrs(self, inst, is_tkg):
        """The MLP family's named attrs and its TKG routing decision, in kernel_attrs order."""
        return self._leafAttrs(inst, MLP_KERNEL_NAME, is_tkg=is_tkg)

    def codegenMLPKernel(self, inst):
        self._checkLowerable(inst, "codegenMLPKernel")
        from neuronxsim.nki._private_kernels.mlp import TKG_BS_SEQLEN_THRESHOLD
        is_tkg = _tokens(inst.srcs[0].access_shape) < TKG_BS_SEQLEN_THRESHOLD
        return self._commonNativeKernelCodegen(inst, MLP_KERNEL_NAME, self._mlpAttrs(inst, is_tkg),
                                               self._addSeqAccess)

    def codegenTiledNativeKernelMLP(self, inst):
        self._checkLowerable(inst, "codegenTiledNativeKernelMLP")
        from neuronxsim.nki._private_kernels.mlp import TKG_BS_SEQLEN_THRESHOLD
        is_tkg = _tokens(inst.srcs[0].access_shape) < TKG_BS_SEQLEN_THRESHOLD
        return self._commonNativeKernelCodegen(inst, MLP_KERNEL_NAME, self._mlpAttrs(inst, is_tkg),
                                               self._addPreTiledAP)

    def _normQKVAttrs(self, inst, useTkgQKVKernel):
        """The QKV family's named attrs and its TKG routing decision, in kernel_attrs order."""
        return self._leafAttrs(inst, QKV_KERNEL_NAME, useTkgQKVKernel=useTkgQKVKernel)

    def codegenNormQKV(self, inst):
        self._checkLowerable(inst, "codegenNormQKV")
        from neuronxsim.nki._private_kernels.mlp import TKG_BS_SEQLEN_THRESHOLD
        useTkgQKVKernel = _tokens(inst.srcs[0].access_shape) < TKG_BS_SEQLEN_THRESHOLD
        return self._commonNativeKernelCodegen(inst, QKV_KERNEL_NAME, self._normQKVAttrs(inst, useTkgQKVKernel),
                                               self._addSeqAccess)

    def codegenTiledNativeKernelNormQKV(self, inst):
        self._checkLowerable(inst, "codegenTiledNativeKernelNormQKV")
        from neuronxsim.nki._private_kernels.mlp import TKG_BS_SEQLEN_THRESHOLD
        useTkgQKVKernel = _tokens(inst.srcs[0].access_shape) < TKG_BS_SEQLEN_THRESHOLD
        return self._commonNativeKernelCodegen(inst, QKV_KERNEL_NAME, self._normQKVAttrs(inst, useTkgQKVKernel),
                                               self._addPreTiledAP)

    def _rmsNormQuantAttrs(self, inst):
        return self._leafAttrs(inst, RMSNORM_QUANT_KERNEL_NAME)

    def codegenRMSNormQuantKernel(self, inst):
        self._checkLowerable(inst, "codegenRMSNormQuantKernel")
        return self._commonNativeKernelCodegen(inst, RMSNORM_QUANT_KERNEL_NAME, self._rmsNormQuantAttrs(inst),
                                               self._addSeqAccess)

    def codegenTiledNativeKernelRMSNormQuant(self, inst):
        self._checkLowerable(inst, "codegenTiledNativeKernelRMSNormQuant")
        return self._commonNativeKernelCodegen(inst, RMSNORM_QUANT_KERNEL_NAME, self._rmsNormQuantAttrs(inst),
                                               self._addPreTiledAP)

    def _attentionAttrs(self, inst):
        return self._leafAttrs(inst, ATTENTION_KERNEL_NAMES[inst.is_causal])

    def codegenAttentionMMSoftmaxMM(self, inst):
        self._checkLowerable(inst, "codegenAttentionMMSoftmaxMM")
        return self._commonAttentionKernelCodegen(inst, ATTENTION_KERNEL_NAMES[inst.is_causal],
                                                  self._attentionAttrs(inst), self.codegenBIRKernelAccess)

    def codegenTiledNativeKernelAttentionMMSoftmaxMM(self, inst):
        self._checkLowerable(inst, "codegenTiledNativeKernelAttentionMMSoftmaxMM")
        return self._commonAttentionKernelCodegen(inst, ATTENTION_KERNEL_NAMES[inst.is_causal],
                                                  self._attentionAttrs(inst), self._addPreTiledAP)

    def codegenBackwardsAttention(self, inst):
        """Attention backward: its own IT54 node, with ``is_causal`` as a named field."""
        self._checkLowerable(inst, "codegenBackwardsAttention")
        kernel_name = BACKWARDS_ATTENTION_KERNEL_NAME
        is_causal = inst.is_causal
        KernelMetricsCollector.get_instance().record_kernel(kernel_name, category=KernelCategory.BIR_KERNEL)
        node = self.addInstruction(Opcode.BIRKernel, inst.name or kernel_name)
        self._setBIRKernelFields(node, inst, kernel_name,
                                 [(k, attr_to_str(v)) for k, v in self._leafAttrs(inst, kernel_name)])
        node.set_is_causal(is_causal)
        self._marshalOperands(node, inst, self._addSeqAccess)
        return node

    # ------------------------------------------------------------------ IT55: user NKI kernels

    def _compiledUserKernel(self, inst):
        """The kernel the NKI front end compiled for ``inst`` (when the program was built), checked
        against the module's arch and the macro's operands. No tracing here."""
        compiled = inst.compiled
        if compiled is None:
            raise CodegenError(f"{inst.label}: the user kernel was not compiled by the NKI front end; add the macro "
                               "to a program (Program.add compiles it for the program's arch)")
        arch = TRACE_ARCHS[self.module.arch]
        if compiled.arch != arch:
            raise CodegenError(f"{inst.label}: the user kernel was compiled for {compiled.arch}; the module is "
                               f"{self.module.arch} ({arch}): lower the program built for it (Program.for_arch)")
        if compiled.operands != operand_types(inst):
            raise CodegenError(f"{inst.label}: its operands changed after the user kernel was compiled for them; add "
                               "the macro to the program again")
        return compiled

    def codegenExternalNativeNkiKernel(self, inst):
        """A user ``@nki.jit`` kernel (IT55): the node names the kernel the front end compiled
        (``func``, its handle), its parameters and its results; operands by access kind."""
        self._checkLowerable(inst, "codegenExternalNativeNkiKernel")
        return self._userKernelNode(inst, self._compiledUserKernel(inst))

    def codegenExternalNativeNkiKlirKernel(self, inst):
        """The KLIR-path twin of ``codegenExternalNativeNkiKernel``: the front end compiled the
        kernel into a KLR file, which the IT55 node names. Still IT55: IT56 is for the internal
        kernel registry's kernels only."""
        self._checkLowerable(inst, "codegenExternalNativeNkiKlirKernel")
        return self._userKernelNode(inst, self._compiledUserKernel(inst))

    def _userKernelNode(self, inst, compiled):
        KernelMetricsCollector.get_instance().record_kernel(compiled.kernel_name, category=KernelCategory.NKI_KERNEL)
        node = self.addInstruction(Opcode.NKIKernel, inst.name or compiled.kernel_name)
        node.set_func(compiled.handle)
        node.set_func_args(list(compiled.func_args))
        node.set_func_outs(list(compiled.func_outs))
        node.set_sb_buf_shape(self.sb_buf_shape)
        node.set_psum_buf_shape(self.psum_buf_shape)
        self._marshalOperands(node, inst, self.codegenBIRKernelAccess)
        self.compiled_kernels[compiled.handle] = compiled
        return node


__all__ = ["BirCodeGenLoop", "Opcode", "LncSize", "BUFFER_SHAPES", "AUTO_CAST_MODES",
           "AUTO_CAST_TYPES", "NAMED_ATTR_FIELDS", "InternalKernelConfig", "get_internal_kernel_registry",
           "TracedInternalKernel", "clear_internal_kernel_trace_cache", "nki_frontend", "NKI_FRONTEND_FORMATS",
           "MULTICORE_GRID", "KLR_DIR_ENV"]
