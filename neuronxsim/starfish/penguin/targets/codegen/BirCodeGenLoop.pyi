"""
Generate Backend IR from Penguin macro IR (neuronx-cc's ``BirCodeGenLoop``).

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
from __future__ import annotations
import atexit as atexit
import builtins as __builtins__
import enum as enum
import hashlib as hashlib
import importlib as importlib
import inspect as inspect
from neuronxsim import bir
from neuronxsim.bir import InstructionType as Opcode
from neuronxsim.bir import target
from neuronxsim.errors import CodegenError
from neuronxsim.errors import NeuronxsimError
from neuronxsim.starfish.lib._core.bir import MemoryType
from neuronxsim.starfish.lib._core.bir import Module
from neuronxsim.starfish.lib._core.bir import TensorKind
from neuronxsim.starfish.penguin import ir
import neuronxsim.starfish.penguin.ir.access
from neuronxsim.starfish.penguin.ir.attrs import attr_to_str
from neuronxsim.starfish.penguin.ir.kernels import kernel_function
from neuronxsim.starfish.penguin.ir.nki_compile import operand_types
from neuronxsim.starfish.penguin.targets.codegen.KernelBuilder import KernelBuilder
from neuronxsim.starfish.penguin.targets.codegen.KernelMetricsCollector import KernelCategory
from neuronxsim.starfish.penguin.targets.codegen.KernelMetricsCollector import KernelMetricsCollector
from neuronxsim.walrus.signatures import leaf_signature
import numpy as np
import os as os
import shutil as shutil
import tempfile as tempfile
import typing
__all__: list = ['BirCodeGenLoop', 'Opcode', 'LncSize', 'BUFFER_SHAPES', 'AUTO_CAST_MODES', 'AUTO_CAST_TYPES', 'NAMED_ATTR_FIELDS', 'InternalKernelConfig', 'get_internal_kernel_registry', 'TracedInternalKernel', 'clear_internal_kernel_trace_cache', 'nki_frontend', 'NKI_FRONTEND_FORMATS', 'MULTICORE_GRID', 'KLR_DIR_ENV']
class InternalKernelConfig:
    """
    Configuration for an internal NKI kernel that will be traced to new NKI
        frontend.
        Attributes:
          kernel_func: The actual NKI kernel function to trace
          operand_count: Optional number of operands to use (None = use all operands)
          additional_args_builder: Callable that builds additional kwargs from inst
          requires_multicore_grid: Whether kernel needs grid=(VNC(2),) for multi-core
        
    """
    def __init__(self, kernel_func, operand_count = None, additional_args_builder = None, requires_multicore_grid = False, output_is_parameter = False):
        ...
    def __repr__(self):
        ...
class TracedInternalKernel:
    """
    What an IT56 node carries for one traced registry leaf.
    """
    __slots__: typing.ClassVar[tuple] = ('klir_binary', 'kernel_format', 'nki_binary_version_identifier', 'func_args', 'func_outs', 'grid')
    def __init__(self, klir_binary, kernel_format, nki_binary_version_identifier, func_args, func_outs, grid):
        ...
    def is_available(self):
        """
        False once a Form A file has gone (its directory was cleaned): trace again.
        """
class InternalNativeNkiKernelCodegen:
    """
    BirCodeGenLoop's IT56 sink: the registry resolution, the two tracers, the cache and the
        node. Mixed into ``BirCodeGenLoop``, whose ``addInstruction``, ``_checkLowerable``,
        ``_location``, ``_traces``, ``module`` and buffer shapes it uses.
    """
    def _resolve_kernel_config(self, inst):
        """
        Look up kernel config from registry and prepare common arguments.
                Returns (kernel_config, internal_kernel, additional_args, call_args).
        
                ``call_args`` are ndarray proxies (the operands' shapes and dtypes, no data) of the first
                ``operand_count`` srcs (all when None), then of the dsts if ``output_is_parameter``.
                
        """
    def _traceInternalKernelCached(self, inst):
        """
        The carrier of ``inst``'s kernel from the trace cache, tracing it on a miss.
        
                The key is what decides the trace, read off the macro (its registry entry, front end,
                arch, operand shapes and dtypes, attrs), so that ``_resolve_kernel_config`` runs only
                in the tracer, once per miss, as in the shipped module.
        """
    def _traceWithNkiFrontend(self, inst, resolved):
        """
        (TracedKernel, grid): the registry leaf of ``inst``, resolved by
                ``_resolve_kernel_config`` into ``resolved``, traced by ``neuronxsim.nki`` for the
                module's arch, its results checked against the macro's dsts.
        """
    def _trace_internal_kernel_to_new_nki_frontend(self, inst, frontend = None):
        """
        Traces ``inst``'s registry leaf with the front end ``NKI_FRONTEND`` selects (or
                ``frontend``): beta2 -> ``_trace_kernel_beta2``, beta3 -> ``_trace_kernel_beta3``.
        """
    def _trace_kernel_beta2(self, inst):
        """
        NKI_FRONTEND=beta2 (the default): traces the leaf and writes it as a KLR file (Form A).
        """
    def _trace_kernel_beta3(self, inst):
        """
        NKI_FRONTEND=beta3: traces the leaf to BIR JSON, carried in the node (Form B).
        """
    def codegenInternalNativeNkiKernel(self, inst):
        """
        Codegen for internal NKI kernels using new NKI frontend path.
        
                Traces the kernel to new NKI frontend at codegen time and creates BIR NKIKLIRKernel
                instruction. Uses caching to avoid redundant tracing of identical kernels.
        
                The node's operands are the macro's DRAM tensors, each through ``addOpaqueAP`` (the
                kernel owns its tiling): the srcs bound to the kernel's parameters, then the dsts;
                func_args / func_outs name the traced kernel's Input / Output tensors in that order.
                
        """
class BirCodeGenLoop(InternalNativeNkiKernelCodegen):
    """
    Lowers Penguin macro programs into one BIR function (``functions[neuron_core_id]``).
    
        ``auto_cast`` / ``auto_cast_type`` are the compile's ``--auto-cast`` settings, recorded on
        every IT54 node. ``klr_dir``: where IT56 Form A files go (see InternalNkiKernelCodegen.pxi).
        
    """
    def __init__(self, module = None, neuron_core_id = 0, function_name = '', auto_cast = 'matmult', auto_cast_type = 'bf16', klr_dir = None):
        ...
    def _addOpaqueAP(self, node, access, isOutput):
        ...
    def _addPreTiledAP(self, node, access, isOutput):
        """
        The tiled twins' marshalling: the operand's MemrefTile pattern through ``addAP``.
        """
    def _addSeqAccess(self, node, access, isOutput):
        ...
    def _apShape(self, tensor):
        ...
    def _attentionAttrs(self, inst):
        ...
    def _checkLowerable(self, inst, method_name):
        """
        Validates ``inst`` and that ``method_name`` can marshal each of its operands.
        """
    def _commonAttentionKernelCodegen(self, inst, kernel_name, family_attrs, marshal):
        """
        The shared IT54 builder of the attention forward family: the attrs travel in
                kernel_attrs only (causality also selects the kernel name).
        """
    def _commonNativeKernelCodegen(self, inst, kernel_name, family_attrs, marshal):
        """
        The shared IT54 builder of the MLP / QKV / RMSNormQuant families: every family attr in
                kernel_attrs, the schema's named ones also as node fields, operands through ``marshal``.
        """
    def _compiledUserKernel(self, inst):
        """
        The kernel the NKI front end compiled for ``inst`` (when the program was built), checked
                against the module's arch and the macro's operands. No tracing here.
        """
    def _leafAttrs(self, inst, kernel_name, **decisions):
        """
        A bespoke family's kernel_attrs: its leaf's signature's attrs, in the signature's order
                (seed 000's roster for the family), each from the macro or, for the codegen's routing
                decisions, from ``decisions``. An attr beyond the seed's roster (``only_when_set``: MLP's
                gate_bias) is emitted only when it differs from its default.
        """
    def _location(self, access):
        ...
    def _marshalOperands(self, node, inst, marshal):
        ...
    def _mlpAttrs(self, inst, is_tkg):
        """
        The MLP family's named attrs and its TKG routing decision, in kernel_attrs order.
        """
    def _normQKVAttrs(self, inst, useTkgQKVKernel):
        """
        The QKV family's named attrs and its TKG routing decision, in kernel_attrs order.
        """
    def _reshape_ap(self, access):
        """
        Addresses the access's tensor in the access's view (if it names one) until restored.
        """
    def _rmsNormQuantAttrs(self, inst):
        ...
    def _setBIRKernelFields(self, node, inst, kernel_name, kernel_attrs):
        """
        The fields every IT54 node carries: name, attr bag, shapes, buffers, auto-cast.
        """
    def _tileAP(self, node, access):
        ...
    def _userKernelNode(self, inst, compiled):
        ...
    def addBIRKernelNDimSubTensorAccess(self, node, access, isOutput):
        """
        A strided N-d sub-tensor: ``access_shape[d]`` elements per dim from ``offsets[d]``,
                every ``steps[d]``; shared by ``LncSize`` NeuronCores; ``reduce``: the kernel may reduce the
                output along its partition dim.
        """
    def addBIRKernelTileAccess(self, node, access, isOutput):
        """
        One MemrefTile: ``tile.shape[d]`` contiguous elements per dim from the tile's origin
                (the twin of addBIRKernelNDimSubTensorAccess, with unit steps).
        """
    def addInstruction(self, opcode, name = ''):
        """
        Appends a node of the class the opcode table names for ``opcode`` and returns it.
        """
    def codegenAttentionMMSoftmaxMM(self, inst):
        ...
    def codegenBIRKernel(self, inst):
        """
        A library kernel by name: the attr bag goes to the node verbatim, each operand through
                ``codegenBIRKernelAccess``. Never touches the internal kernel registry.
        """
    def codegenBIRKernelAccess(self, node, access, isOutput):
        """
        Marshals one operand by its access kind, in the view its access names, then restores
                the tensor's original access pattern.
        """
    def codegenBackwardsAttention(self, inst):
        """
        Attention backward: its own IT54 node, with ``is_causal`` as a named field.
        """
    def codegenExternalNativeNkiKernel(self, inst):
        """
        A user ``@nki.jit`` kernel (IT55): the node names the kernel the front end compiled
                (``func``, its handle), its parameters and its results; operands by access kind.
        """
    def codegenExternalNativeNkiKlirKernel(self, inst):
        """
        The KLIR-path twin of ``codegenExternalNativeNkiKernel``: the front end compiled the
                kernel into a KLR file, which the IT55 node names. Still IT55: IT56 is for the internal
                kernel registry's kernels only.
        """
    def codegenMLPKernel(self, inst):
        ...
    def codegenNormQKV(self, inst):
        ...
    def codegenRMSNormQuantKernel(self, inst):
        ...
    def codegenTiledNativeKernelAttentionMMSoftmaxMM(self, inst):
        ...
    def codegenTiledNativeKernelMLP(self, inst):
        ...
    def codegenTiledNativeKernelNormQKV(self, inst):
        ...
    def codegenTiledNativeKernelRMSNormQuant(self, inst):
        ...
    def lower(self, program):
        """
        Lowers ``program``'s macro instructions, in order; returns the module.
        
                Everything that can refuse the program -- attrs, shapes, access kinds, the user kernels'
                compiled artifacts, tracing registry kernels -- runs before any tensor or node is emitted, so
                a refused program leaves the module as it was.
                
        """
    def restore_original_ap(self, access):
        """
        Undoes ``_reshape_ap``: the tensor is addressed by its own shape again.
        """
    def save(self, path, metrics_sidecar = True):
        """
        Writes the module as BIR JSON to ``path``, the compiled user kernels its IT55 nodes name
                into the folder next to it (``nki/...``, the nodes' file references) and, if asked, the
                kernel metrics of the last ``lower`` (``KernelMetricsCollector.sidecar_path(path)``).
        """
    def write_compiled_kernels(self, folder):
        """
        Writes the compiled user kernels the module's IT55 nodes name into ``folder`` (the
                folder the module is saved in); returns their paths.
        """
def LncSize(access):
    """
    Seed 000's ``LncSize(operand)`` of the tile / sub-tensor builders: how many physical
        NeuronCores of a logical core share the operand (its access's ``lnc``).
    """
def _build_internal_kernel_registry():
    """
    Build the registry of all internal NKI kernels that can be traced to new NKI frontend.
    
        The registry maps kernel names to their configuration, eliminating the need for long
        if-elif chains when lowering ``InternalNativeNkiKernel`` macros. Keys, leaves, configs and
        insertion order are seed 003's PHASE C table.
        
    """
def _dram_access_pattern(location, shape, starts, counts, steps, partition_dim):
    """
    (offset, [step, num] pairs) addressing ``counts[d]`` elements from ``starts[d]`` every
        ``steps[d]`` of each dim of ``location`` seen as a row-major ``shape``, the partition dim's
        pair first: a ``bir.View`` (cpp/bir/View.h, the one home of the access-pattern algebra).
    """
def _field_value(value):
    """
    A bespoke attr as its named node field takes it (enums by integer value).
    """
def _klr_directory(klr_dir = None):
    """
    Where Form A KLR files are written (see the top of this file).
    """
def _naming(e, tmp, path):
    """
    ``e``, naming ``path`` where it named the temporary file ``tmp`` written in its place (a
        full disk's message names the file the user will look for, not one already removed).
    """
def _operand_proxies(accesses):
    """
    Arrays of the operands' shapes and dtypes, for a tracer, which reads only those:
        zero-strided views keep it from allocating the tensors.
    """
def _outputs_as_parameters(inst, leaf, kernel, n_inputs, output_proxies):
    """
    ``kernel``, which takes its outputs as parameters (``output_is_parameter``: its positional
        parameters after the ``n_inputs`` inputs) and writes them, as the kernel the NKI front end
        traces: one that creates those outputs in shared HBM (shapes and dtypes of
        ``output_proxies``, named after the parameters), passes them to ``kernel`` and returns them.
        Inside a trace a kernel's inputs are read-only; tensors it creates are its own.
    """
def _refuse_attrs_not_passed(inst, additional_args):
    """
    Every attr of the macro must reach the kernel as the same keyword argument: one the
        registry entry's argument builder drops (SelectAndScatter's entry has none; ResizeNearest's
        passes only out_shape) or replaces would be ignored silently.
    """
def _remove_process_klr_dir(pid, path):
    ...
def _same_value(a, b):
    """
    Equal as JSON values (the builders pass shapes as tuples, the macro holds lists).
    """
def _tokens(hidden_shape):
    """
    ``B*S`` of ``hidden [B, S, H]``: the tokens the MLP / QKV routing decision counts.
    """
def _trace_key_attrs(additional_args):
    """
    The kernel's keyword arguments as a hashable, order-independent key (values are JSON
        values, tuples and enums, whose reprs are exact).
    """
def _walrus(inst):
    ...
def _write_klr_file(inst, module, kernel_name, klr_dir = None):
    """
    (path, nki_binary_version_identifier): ``module`` written as a KLR file in the KLR
        directory, named by kernel and content (atomically: an interrupted write leaves nothing).
    """
def clear_internal_kernel_trace_cache():
    """
    Forgets every cached trace (the next lowering of each kernel traces it again).
    """
def get_internal_kernel_registry():
    """
    Get the internal NKI kernel registry.
    """
def nki_frontend():
    """
    The NKI front end the IT56 sink traces with: ``NKI_FRONTEND``, default beta2.
    """
ATTENTION_KERNEL_NAMES: dict = {False: 'AttentionMMSoftmaxMMWithoutSwap', True: 'CausalAttentionMMSoftmaxMMWithoutSwap'}
AUTO_CAST_MODES: tuple = ('none', 'matmult', 'all')
AUTO_CAST_TYPES: tuple = ('bf16', 'fp16', 'tf32', 'fp8_e4m3')
BACKWARDS_ATTENTION_KERNEL_NAME: str = 'BackwardsAttention'
BUFFER_SHAPES: dict = {'gen2': ([128, 196608], [128, 8, 2048]), 'gen3': ([128, 229376], [128, 8, 2048])}
KLR_DIR_ENV: str = 'NEURONXSIM_KLR_DIR'
MLP_KERNEL_NAME: str = 'MLP'
MULTICORE_GRID: int = 2
NAMED_ATTR_FIELDS: tuple = ('is_causal', 'fused_rmsnorm', 'norm_type', 'store_add', 'quant_kernel', 'lower_bound', 'skip_gate', 'act_fn', 'up_bias', 'down_bias', 'is_tkg', 'lnc_size', 'output_layout')
NKI_FRONTEND_DEFAULT: str = 'beta2'
NKI_FRONTEND_FORMATS: dict = {'beta2': 'klir', 'beta3': 'bir'}
QKV_KERNEL_NAME: str = 'QKV'
RMSNORM_QUANT_KERNEL_NAME: str = 'QuantOnly'
TRACE_ARCHS: dict = {'gen2': 'trn1', 'gen3': 'trn2'}
_ACCESS_MARSHALLERS: dict = {neuronxsim.starfish.penguin.ir.access.FullTensorAccess: '_addSeqAccess', neuronxsim.starfish.penguin.ir.access.NDimSubTensorAccess: 'addBIRKernelNDimSubTensorAccess', neuronxsim.starfish.penguin.ir.access.TileAccess: 'addBIRKernelTileAccess', neuronxsim.starfish.penguin.ir.access.OpaqueAccess: '_addOpaqueAP'}
_ANY_ACCESS: tuple = ((neuronxsim.starfish.penguin.ir.access.FullTensorAccess, neuronxsim.starfish.penguin.ir.access.NDimSubTensorAccess, neuronxsim.starfish.penguin.ir.access.TileAccess, neuronxsim.starfish.penguin.ir.access.OpaqueAccess), 'FullTensorAccess, NDimSubTensorAccess, TileAccess or OpaqueAccess')
_DRAM_TENSOR_TYPES: dict
_INTERNAL_KERNEL_REGISTRY = None
_OPERAND_ACCESS: dict = {'codegenBIRKernel': ((neuronxsim.starfish.penguin.ir.access.FullTensorAccess, neuronxsim.starfish.penguin.ir.access.NDimSubTensorAccess, neuronxsim.starfish.penguin.ir.access.TileAccess, neuronxsim.starfish.penguin.ir.access.OpaqueAccess), 'FullTensorAccess, NDimSubTensorAccess, TileAccess or OpaqueAccess'), 'codegenMLPKernel': ((neuronxsim.starfish.penguin.ir.access.FullTensorAccess), 'FullTensorAccess operands (whole tensors, addSeqAccess), or TileAccess for every operand (the tiled form, addAP)'), 'codegenNormQKV': ((neuronxsim.starfish.penguin.ir.access.FullTensorAccess), 'FullTensorAccess operands (whole tensors, addSeqAccess), or TileAccess for every operand (the tiled form, addAP)'), 'codegenRMSNormQuantKernel': ((neuronxsim.starfish.penguin.ir.access.FullTensorAccess), 'FullTensorAccess operands (whole tensors, addSeqAccess), or TileAccess for every operand (the tiled form, addAP)'), 'codegenAttentionMMSoftmaxMM': ((neuronxsim.starfish.penguin.ir.access.FullTensorAccess, neuronxsim.starfish.penguin.ir.access.NDimSubTensorAccess, neuronxsim.starfish.penguin.ir.access.TileAccess, neuronxsim.starfish.penguin.ir.access.OpaqueAccess), 'FullTensorAccess, NDimSubTensorAccess, TileAccess or OpaqueAccess'), 'codegenBackwardsAttention': ((neuronxsim.starfish.penguin.ir.access.FullTensorAccess), 'FullTensorAccess operands (whole tensors, addSeqAccess), or TileAccess for every operand (the tiled form, addAP)'), 'codegenTiledNativeKernelMLP': ((neuronxsim.starfish.penguin.ir.access.TileAccess), 'TileAccess for every operand (pre-tiled MemrefTiles, addAP)'), 'codegenTiledNativeKernelNormQKV': ((neuronxsim.starfish.penguin.ir.access.TileAccess), 'TileAccess for every operand (pre-tiled MemrefTiles, addAP)'), 'codegenTiledNativeKernelRMSNormQuant': ((neuronxsim.starfish.penguin.ir.access.TileAccess), 'TileAccess for every operand (pre-tiled MemrefTiles, addAP)'), 'codegenTiledNativeKernelAttentionMMSoftmaxMM': ((neuronxsim.starfish.penguin.ir.access.TileAccess), 'TileAccess for every operand (pre-tiled MemrefTiles, addAP)'), 'codegenExternalNativeNkiKernel': ((neuronxsim.starfish.penguin.ir.access.FullTensorAccess, neuronxsim.starfish.penguin.ir.access.NDimSubTensorAccess), "FullTensorAccess or NDimSubTensorAccess operands (the kernel's arguments and results, compiled at their access shapes)"), 'codegenExternalNativeNkiKlirKernel': ((neuronxsim.starfish.penguin.ir.access.FullTensorAccess, neuronxsim.starfish.penguin.ir.access.NDimSubTensorAccess), "FullTensorAccess or NDimSubTensorAccess operands (the kernel's arguments and results, compiled at their access shapes)"), 'codegenInternalNativeNkiKernel': ((neuronxsim.starfish.penguin.ir.access.FullTensorAccess, neuronxsim.starfish.penguin.ir.access.OpaqueAccess), 'whole-tensor operands, OpaqueAccess or FullTensorAccess (the kernel owns its tiling, addOpaqueAP)')}
_PRE_TILED: tuple = ((neuronxsim.starfish.penguin.ir.access.TileAccess), 'TileAccess for every operand (pre-tiled MemrefTiles, addAP)')
_TRACE_CACHE: dict = {}
_WHOLE_TENSOR: tuple = ((neuronxsim.starfish.penguin.ir.access.FullTensorAccess), 'FullTensorAccess operands (whole tensors, addSeqAccess), or TileAccess for every operand (the tiled form, addAP)')
__test__: dict = {}
_process_klr_dir = None
