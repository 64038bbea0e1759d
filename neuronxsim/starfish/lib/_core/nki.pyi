"""
the NKI tracer's hot paths
"""
from __future__ import annotations
import collections.abc
from neuronxsim.nki.arguments import FastCall
from neuronxsim.nki.indexing import LoopIndex
from neuronxsim.nki06._api import ApiCall
import neuronxsim.starfish.lib._core.bir
import types
import typing
__all__: list[str] = ['ApiCall', 'FastCall', 'LoopIndex', 'RECORD_POSITIONS', 'accumulate_methods', 'activation06_fast', 'activation_fast', 'activation_reduce06_fast', 'assign_redirect', 'basic_subscript', 'binary_fast', 'blocked_methods', 'bn_aggr_fast', 'bn_stats_fast', 'broadcast_method', 'broadcast_row', 'caller_location', 'configure_accumulate', 'configure_accumulate_plain', 'configure_assign', 'configure_blocked', 'configure_broadcast', 'configure_dma_plain', 'configure_index_expr', 'configure_index_expr_ops', 'configure_isa_tensor_scalar', 'configure_iterate', 'configure_lane_fast', 'configure_lane_fast_plain', 'configure_lanewise', 'configure_language_fast', 'configure_mask_box', 'configure_matmul', 'configure_new_blocked', 'configure_nki06_fast', 'configure_nki06_lanewise', 'configure_nki06_ndarray', 'configure_nki06_subscript', 'configure_per_lane_plain', 'configure_plain_tile_access', 'configure_subscripts', 'configure_tensor_scalar_plain', 'configure_tracer_methods', 'configure_zero_fill', 'copy_fast', 'current', 'dma_copy06_fast', 'dma_plain', 'emit_program', 'forget_call_sites', 'index_expr_methods', 'isa_tensor_scalar_fast', 'isa_tensor_tensor_fast', 'isa_tensor_tensor_scan_fast', 'iterate_method', 'keeps_all_fast', 'lanewise_plain', 'live_ranges', 'load_fast', 'mask_box_fast', 'matmul_into', 'matmul_plain', 'nc_matmul06_fast', 'nc_matmul_fast', 'ndarray06_fast', 'ndarray_fast', 'new_access', 'new_op', 'new_slotted', 'next_fit_place', 'next_fit_storages', 'nl_matmul_fast', 'operator_methods', 'ops_matmul_grouped', 'ops_redirected', 'ops_zero_elided', 'peek', 'place_matmul_method', 'plain_tile_access', 'pressure_order', 'range_fast', 'reduce_fast', 'remember_call_site', 'set_call_site_walk', 'set_current', 'set_no_tracer', 'slice_range', 'store_fast', 'subscript_method', 'tensor_copy06_fast', 'tensor_reduce06_fast', 'tensor_scalar06_fast', 'tensor_store_method', 'tensor_table', 'tensor_tensor06_fast', 'tracer_method', 'unique_name', 'use_record_dealloc', 'use_slots_dealloc', 'used_on_chip', 'write_plain', 'zeros_fast']
def accumulate_methods() -> dict:
    """
    {name: method} of Tensor's in-place operators (__iadd__, __isub__, __imul__, __itruediv__) in C.
    """
def activation06_fast(*args, **kwargs):
    """
    activation06_fast(dst, op, data, bias=None, scale=1.0, reduce_op=None, reduce_res=None, reduce_cmd=nisa.reduce_cmd.idle, name=None): nisa.activation's C path for its commonest calls; NotImplemented, having changed nothing, for any other.
    """
def activation_fast(func: typing.Any, name: str) -> typing.Any:
    """
    The C path of nl.<name>(x, *, mask=None), the activation func: a result, or NotImplemented for the Python definition to answer (use in a FastCall).
    """
def activation_reduce06_fast(*args, **kwargs):
    """
    activation_reduce06_fast(dst, op, data, reduce_op, reduce_res, bias=None, scale=1.0, name=None): nisa.activation_reduce's C path for its commonest calls; NotImplemented, having changed nothing, for any other.
    """
def assign_redirect(*args, **kwargs):
    """
    assign_redirect(tr, dst, value): True when `dst[...] = value` was done by making the instruction that just computed value write dst; False, having changed nothing, when the assignment needs the general path.
    """
def basic_subscript(*args, **kwargs):
    """
    basic_subscript(key, shape, strides, offset): the view (offset, shape, strides, ()) of a 2.2x tensor view without bound checks subscripted by the tuple key of ints, NumPy integers and slices (at most one per dim); None for a key with another entry (from the first of them) or a slice reaching outside its dim; an int outside its dim and a bad slice raise NKIError, in key order.
    """
def binary_fast(name: str) -> typing.Any:
    """
    The C path of nl.<name>(x, y, *, mask=None) for add, subtract, multiply and divide: a result, or NotImplemented for the Python definition to answer (use in a FastCall).
    """
def blocked_methods() -> tuple[typing.Any, typing.Any]:
    """
    (__getitem__, __setitem__) of BlockedTensor in C.
    """
def bn_aggr_fast(opcode: typing.Any) -> typing.Any:
    """
    The C path of nisa.bn_aggr(data, *, mask=None, dtype=None), opcode BNStatsAggregate: a result, or NotImplemented for the Python definition to answer (use in a FastCall).
    """
def bn_stats_fast() -> typing.Any:
    """
    The C path of nisa.bn_stats(data, *, mask=None, dtype=None): a result, or NotImplemented for the Python definition to answer (use in a FastCall).
    """
def broadcast_method() -> typing.Any:
    """
    Tensor.broadcast_to(shape) in C (a method descriptor; see cpp/python/trace_broadcast.cpp).
    """
def broadcast_row(*args, **kwargs):
    """
    broadcast_row(tr, x, shape, loc): language._broadcast_tile's commonest case (a [1, F] row to [P, F] by matmuls with a row of ones), recorded; else NotImplemented, having changed nothing.
    """
def caller_location(*args, **kwargs):
    """
    caller_location(skip=0): the location of the frame 1 + skip above the calling function, if remembered; else what the frame walk (set_call_site_walk) answers for the same arguments.
    """
def configure_accumulate(tensor_class: type, current: typing.Any, language: types.ModuleType, psum: str) -> None:
    """
    Gives the in-place operators the Tensor class, current(), the language module (whose _accumulate_general(tr, dst, value, name) records what they do not) and the PSUM kind.
    """
def configure_accumulate_plain(instructions: types.ModuleType, tensor_tensor: typing.Any, dve: typing.Any, alu_ops: dict, dtypes: dict, promote: typing.Any, float_dtypes: dict, weak_scalars: dict) -> None:
    """
    Gives the in-place and binary operators the instructions module (whose lanewise_plain and tensor_tensor_general they call), the TensorTensor opcode, the Vector Engine, {name: ALU op} of add, subtract, multiply and divide (none a bitvec op), {NKI dtype: ...}, dtypes.promote, {float NKI dtype: ...} and dtypes.WEAK_SCALARS, to record `t op= x` and `t op x` of two on-chip tiles of one shape themselves.
    """
def configure_assign(tensor_class: type, write_plain: typing.Any, matmult: typing.Any, dma: typing.Any, pool: typing.Any, psum: str, sbuf: str) -> None:
    """
    Gives assign_redirect the Tensor class, the tracer's write_plain, the Matmult opcode, the DMA and GpSimd engines and the PSUM and SBUF kinds.
    """
def configure_blocked(blocked_tensor_class: type, tensor_class: type, loop_index_class: type, fallback: typing.Any, current: typing.Any, language: types.ModuleType) -> None:
    """
    Gives the C subscript and stores the BlockedTensor, Tensor and LoopIndex classes, BlockedTensor's Python subscript fallback(t, key) for the keys the C one does not take, current() and the language module, whose assign_redirect(tr, dst, value) and then, when that declined, _assign_general(tr, dst, value) a store calls.
    """
def configure_broadcast(tensor_class: type, instructions: types.ModuleType, language: types.ModuleType, definition: collections.abc.Callable, sbuf: str, pmax: typing.SupportsInt | typing.SupportsIndex, memset: typing.Any, dve: typing.Any, activation: typing.Any, memset_const: typing.Any) -> None:
    """
    Gives broadcast_row and Tensor.broadcast_to's C method the Tensor class, the instructions and language modules, Tensor.broadcast_to's Python definition, the SBUF kind, the partitions of a tile, the Memset opcode, the Vector and Scalar Engines and MemsetMode.Const.
    """
def configure_dma_plain(access_class: type, plain_tile_access: typing.Any, write_plain: typing.Any, dma_engine: typing.Any, psum: str, input_kind: str, num_partitions: typing.SupportsInt | typing.SupportsIndex, dma_queues: typing.SupportsInt | typing.SupportsIndex, queue_fields: list) -> None:
    """
    Gives dma_plain the record's Access class, the tracer's operand functions, the DMA engine, the PSUM and kernel-input kinds, the partition count, the DMA queue count and each queue's fields dict.
    """
def configure_index_expr(index_expr_class: type) -> None:
    """
    Gives the 2.2x subscript the IndexExpr class: t[a, b] of a 2-D tensor without bound checks, `a` an IndexExpr, is then nki.indexing.partition_free_subscript's view when that applies (in C).
    """
def configure_index_expr_ops(index_expr: type, index_predicate: type, loop_index: type, add: typing.Any, lt: typing.Any) -> None:
    """
    Gives IndexExpr's C operators the IndexExpr, IndexPredicate and LoopIndex classes and the Python definitions of __add__ and __lt__ (which answer every other operand).
    """
def configure_isa_tensor_scalar(alu_by_function: dict, bitvec_ids: frozenset, engine_unknown: typing.Any) -> None:
    """
    Gives nisa.tensor_scalar's C path (isa_tensor_scalar_fast) opcodes._ALU_BY_FUNCTION, opcodes.BITVEC_IDS and nisa.engine.unknown.
    """
def configure_iterate(loop_class: type, loop_iteration_class: type, static: str) -> None:
    """
    Gives Tracer.iterate the record's Loop and LoopIteration classes and the kind of a static loop.
    """
def configure_lane_fast(tensor_class: type, instructions: types.ModuleType, dtype_lookups: dict, bn_stats: typing.Any) -> None:
    """
    Gives activation_fast, reduce_fast and bn_stats_fast the Tensor class, the instructions module (whose activation, tensor_reduce and per_lane they call), dtypes._LOOKUPS and the BNStats opcode.
    """
def configure_lane_fast_plain(activation: typing.Any, scalar_engine: typing.Any, idle: typing.Any, alu_add: typing.Any, tensor_reduce: typing.Any, dve: typing.Any, reduce_x: typing.Any, reduce_ids: typing.Any, bitvec_ids: typing.Any) -> None:
    """
    Gives activation_fast and reduce_fast what they need to make the builders' lanewise_plain calls themselves (without a mask): the Activation opcode, the Scalar Engine, AccumCmd.Idle, Alu.add, the TensorReduce opcode, the Vector Engine, ReduceAxis.X and the instructions module's REDUCE_IDS and BITVEC_IDS.
    """
def configure_lanewise(tensor_class: type, plain_tile_access: typing.Any, write_plain: typing.Any, activation: typing.Any, psum: str, sbuf: str, num_partitions: typing.SupportsInt | typing.SupportsIndex, cut_opcodes: tuple) -> None:
    """
    Gives lanewise_plain the Tensor class, the tracer's plain_tile_access and write_plain, the Scalar Engine, the PSUM and SBUF kinds, the partitions of a tile and the opcodes whose partial tiles it records.
    """
def configure_language_fast(tensor_class: type, new_tiles: dict, par_dim: type, sbuf: str, load: typing.Any, pmax: int, dma_plain: typing.Any, dma_general: typing.Any, save: typing.Any, psum: str, keeps_all: typing.Any, num_partitions: int) -> None:
    """
    Gives ndarray_fast, zeros_fast, load_fast and store_fast the Tensor class, language.py's _NEW_TILES, the par_dim class, the SBUF kind, the Load opcode, nl.load's partition count, dma_plain / dma_general, the Save opcode, the PSUM kind, instructions.keeps_all and nl.store's partition count.
    """
def configure_mask_box(index_predicate: type, mask: type, full_boxes: dict, predicate_boxes: dict) -> None:
    """
    Gives mask_box_fast and keeps_all_fast the IndexPredicate and Mask classes and indexing's _FULL_BOXES and _PREDICATE_BOXES.
    """
def configure_matmul(tensor_class: type, plain_tile_access: typing.Any, verdicts: dict, matmult: typing.Any, pe: typing.Any, psum: str, float32: typing.Any, write_plain: typing.Any, nki_error: type) -> None:
    """
    Gives matmul_plain and matmul_into the Tensor class, the tracer's plain_tile_access, the legality verdicts of plain matmuls (a dict), the Matmult opcode, the PE engine, the PSUM kind, the float32 dtype, the tracer's write_plain and NKIError.
    """
def configure_new_blocked(blocked_tensor_class: type, par_dim: type, new_blocked: dict) -> None:
    """
    Gives ndarray_fast and zeros_fast the BlockedTensor class, the par_dim class and language.py's _NEW_BLOCKED ((dims, partition axis, dtype, buffer) -> (block shape, tile shape, dtype, kind) of the unnamed blocked tensors made before), for the nl.ndarray and nl.zeros of block-dimension shapes.
    """
def configure_nki06_fast(nki_tensor: type, dma_plain: typing.Any, dma_general: typing.Any, dma_copy: typing.Any, matmul_plain: typing.Any, place_matmul: typing.Any, psum: str, matmul_into: typing.Any) -> None:
    """
    Gives dma_copy06_fast and nc_matmul06_fast the NkiTensor class, dma_plain / dma_general, the DMACopy opcode, matmul_plain, nisa's _place_matmul, the PSUM kind and matmul_into.
    """
def configure_nki06_lanewise(nki_tensor: type, tensor: type, instructions: types.ModuleType, alu_by_function: dict, act_by_function: dict, bitvec_ids: frozenset, constants: dict) -> None:
    """
    Gives the C paths of nisa.tensor_scalar, tensor_tensor, activation, activation_reduce and tensor_reduce the NkiTensor and Tensor classes, the instructions module, opcodes' _ALU_BY_FUNCTION and _ACT_BY_FUNCTION, BITVEC_IDS and the enum members and kinds they compare with (constants: engine_unknown, engine_vector, reduce_idle, tensor_scalar, tensor_scalar_ptr, tensor_tensor, activation, dve, act_engine, bypass, alu_add, alu_pow, alu_abs, alu_rsqrt, prelu, acc_idle, acc_zero_accumulate, psum, int_dtypes, act_bias_dtypes, tensor_reduce, reduce_x, reduce_ids; and instructions._REDUCE_ADD_ARCHS, the tracer's write_plain and the ReadActivationAccumulator opcode: reduce_add_archs, write_plain, read_act_acc).
    """
def configure_nki06_ndarray(nki_tensor: type, checked: dict, sbuf: typing.Any, sbuf_kind: str, psum_kind: str) -> None:
    """
    Gives ndarray06_fast the NkiTensor class, language.py's _CHECKED table, nl.sbuf (the default buffer) and the SBUF and PSUM kinds.
    """
def configure_nki06_subscript(nki_tensor_class: type, index: typing.Any, to_int: typing.Any) -> None:
    """
    Gives the subscripts the NkiTensor class (NKI 0.6; after configure_subscripts), index(k): the int of an index that is no int or loop index (NKIError for a run-time one), and to_int(v, what): the int of a slice bound or step that is no int.
    """
def configure_per_lane_plain(size_verdicts: dict, size_rules: dict) -> None:
    """
    Gives bn_stats_fast and bn_aggr_fast instructions._SIZE_VERDICTS and instructions._SIZE_RULES, to make per_lane's lanewise_plain call themselves when the opcode has no size rule or the rule's verdict is remembered, and the mask keeps the whole tile (as its remembered box tells: trace_mask_box.h).
    """
def configure_plain_tile_access(access_class: typing.Any, pe: typing.Any, pool: typing.Any, psum: str, num_partitions: typing.SupportsInt | typing.SupportsIndex, max_free_psum: typing.SupportsInt | typing.SupportsIndex, max_free_sbuf: typing.SupportsInt | typing.SupportsIndex) -> None:
    """
    Gives plain_tile_access the tracer's Access class, engine objects, PSUM kind and limits.
    """
def configure_subscripts(tensor_class: type, loop_index_class: type, fallback: typing.Any, error: type, as_int: typing.Any, np_integer: type) -> None:
    """
    Gives the subscripts the Tensor (2.2x) and LoopIndex classes, the Python subscript fallback(t, key) of Tensor for the keys the C one does not take, the NKIError class, the conversion as_int(value, what) of slice bounds that are not ints, and numpy.integer.
    """
def configure_tensor_scalar_plain(tensor_scalar: typing.Any, tensor_scalar_ptr: typing.Any, bypass: typing.Any) -> None:
    """
    Gives the operators' tensor_scalar calls the TensorScalar and TensorScalarPtr opcodes and Alu.bypass, to make the builder's lanewise_plain call themselves (without a mask).
    """
def configure_tracer_methods(op_class: type, storage_class: type, tensor_class: type, new_state: typing.Any, matmult: typing.Any, access_class: type) -> None:
    """
    Gives the tracer's C methods the record's Op class, the Storage and Tensor classes, the StorageState factory, the Matmult opcode and the record's Access class.
    """
def configure_zero_fill(plain_tile_access: typing.Any, memset: typing.Any, dve: typing.Any, fields: dict) -> None:
    """
    Gives the tracer's C zero_fill the tracer's plain_tile_access, the Memset opcode, the Vector Engine and the fields of every nl.zeros memset.
    """
def copy_fast() -> typing.Any:
    """
    The C path of nl.copy(src, *, mask=None, dtype=None): a result, or NotImplemented for the Python definition to answer (use in a FastCall).
    """
def current(*args, **kwargs):
    """
    current(): the tracer recording a kernel (see set_current), else what the set_no_tracer function answers.
    """
def dma_copy06_fast(*args, **kwargs):
    """
    dma_copy06_fast(dst, src): nisa.dma_copy of two direct NkiTensors; NotImplemented, having changed nothing, for any other call.
    """
def dma_plain(*args, **kwargs):
    """
    dma_plain(tr, opcode, dst, src, loc, fresh): the Op of the commonest DMA transfer dst <- src, recorded; NotImplemented, having changed nothing, when the transfer needs the general path.
    """
def emit_program(module: neuronxsim.starfish.lib._core.bir.Module, storages: typing.Any, first_use: typing.Any, addr: typing.Any, outputs: typing.Any, names: typing.Any, counts: typing.Any, kinds: typing.Any, records: list) -> neuronxsim.starfish.lib._core.bir.Function:
    """
    The emission pass (neuronxsim.nki.emit.Emission) in one call: appends a function to module, makes the tensors tensor_table(storages, first_use, addr, outputs, names, counts, kinds) describes and the nodes of the records as emit_trace does, and returns the function.
    """
def forget_call_sites() -> None:
    """
    Forgets every remembered call site.
    """
def index_expr_methods() -> dict:
    """
    {name: method} of IndexExpr's __add__, __radd__ and __lt__ in C.
    """
def isa_tensor_scalar_fast(*args, **kwargs):
    """
    nisa.tensor_scalar's C path (NotImplemented: the definition's).
    """
def isa_tensor_tensor_fast(*args, **kwargs):
    """
    nisa.tensor_tensor's C path (NotImplemented: the definition's).
    """
def isa_tensor_tensor_scan_fast(*args, **kwargs):
    """
    nisa.tensor_tensor_scan's C path (NotImplemented: the definition's).
    """
def iterate_method(cls: type) -> typing.Any:
    """
    Tracer.iterate in C, as a method of the tracer class cls.
    """
def keeps_all_fast() -> typing.Any:
    """
    The C path of instructions.keeps_all(mask, shape): its answer from a remembered box, or NotImplemented for the definition (use in a FastCall).
    """
def lanewise_plain(*args, **kwargs):
    """
    lanewise_plain(tr, opcode, engine, shape, tiles, pointers, out, out_shape, dtype, what, fields, loc): a lane-wise instruction of plain operands, recorded (its destination); NotImplemented, having changed nothing, when it needs the general path; (result,) when it made a new result that the general path must record.
    """
def live_ranges(*args, **kwargs):
    """
    live_ranges(ops, storage_count, ins_at, outs_at, sid_at): (first, last), per storage number the positions of the first and last op using it, -1 if none (see neuronxsim.nki.passes.Liveness).
    """
def load_fast(*args, **kwargs):
    """
    load_fast(src, *, mask=None): nl.load of an HBM Tensor, no dtype, no mask or one that keeps the whole tile; NotImplemented, having changed nothing, for any other call.
    """
def mask_box_fast() -> typing.Any:
    """
    The C path of indexing.mask_box(mask, shape): a remembered box, or NotImplemented for the definition (use in a FastCall).
    """
def matmul_into(*args, **kwargs):
    """
    matmul_into(tr, stationary, moving, dst, accumulate, loc, what): the commonest matmul recorded writing the PSUM view dst directly, joining (accumulate True) or starting (False) its accumulation group (None: as NKI 0.6's _accumulates answers where that is plain); True, or NotImplemented, having changed nothing, when it needs matmul_plain and place_matmul.
    """
def matmul_plain(*args, **kwargs):
    """
    matmul_plain(tr, stationary, moving, loc): the PSUM result of the commonest matmul, recorded; NotImplemented, having changed nothing, when the matmul needs the general path.
    """
def nc_matmul06_fast(*args, **kwargs):
    """
    nc_matmul06_fast(dst, stationary, moving, accumulate=None): nisa.nc_matmul of direct on-chip NkiTensors into PSUM when matmul_plain records it; NotImplemented, having changed nothing, for any other call.
    """
def nc_matmul_fast(*args, **kwargs):
    """
    nc_matmul_fast(stationary, moving): nisa.nc_matmul of two SBUF tiles by matmul_plain; NotImplemented, having changed nothing, for any other call.
    """
def ndarray06_fast(*args, **kwargs):
    """
    ndarray06_fast(shape, dtype, buffer=nl.sbuf): NKI 0.6's nl.ndarray of an SBUF or PSUM spec checked before; NotImplemented, having changed nothing, for any other call.
    """
def ndarray_fast(*args, **kwargs):
    """
    ndarray_fast(shape, dtype, *, buffer=None): nl.ndarray of a tile made before; NotImplemented, having changed nothing, for any other call.
    """
def new_access(*args, **kwargs):
    """
    new_access(cls, storage, offset, pairs): an access record (see neuronxsim.nki.record.new_access).
    """
def new_op(*args, **kwargs):
    """
    new_op(cls, opcode, engine, ins, outs, fields, loc, loop, index, out_box=None, zero_fill=False): an op record (see neuronxsim.nki.record.new_op).
    """
def new_slotted(*args, **kwargs):
    """
    new_slotted(cls, *values): an instance of the __slots__ class cls (no __init__ run), its slots set in __slots__ order to values and the rest to None.
    """
def next_fit_place(*args, **kwargs):
    """
    next_fit_place(sizes, first, last, capacity): (addresses, peak bytes) of tiles placed next fit in this order by their live ranges, or None if one fits nowhere (see neuronxsim.nki.allocator).
    """
def next_fit_storages(*args, **kwargs):
    """
    next_fit_storages(storages, first_use, last_use, capacity, align, addr[, storage_class]): next_fit_place for the allocation pass's storages, in order of first use, into addr[sid]; the peak bytes, or None (addr untouched) if one fits nowhere or has a placement (see neuronxsim.nki.allocator).
    """
def nl_matmul_fast(sbuf: str) -> typing.Any:
    """
    The C path of nl.matmul(x, y, *, transpose_x=True, mask=None) for two tiles of the SBUF kind `sbuf`: the result, or NotImplemented for the Python definition to answer (use in a FastCall).
    """
def operator_methods() -> dict:
    """
    {name: method} of Tensor's binary operators (__add__, __radd__, __sub__, __rsub__, __mul__, __rmul__, __truediv__, __rtruediv__) in C.
    """
def ops_matmul_grouped(*args, **kwargs):
    """
    ops_matmul_grouped(ops, joins, index_at, fields_at): the ops with the record's matmul joins applied (see neuronxsim.nki.passes.MatmulGroups).
    """
def ops_redirected(*args, **kwargs):
    """
    ops_redirected(ops, redirects, copies, index_at, outs_at): the ops with the record's redirects and copies applied (see neuronxsim.nki.passes.Redirects).
    """
def ops_zero_elided(*args, **kwargs):
    """
    ops_zero_elided(ops, needed, index_at, zero_fill_at): the ops but the zero_fill memsets whose index is not in `needed` (see neuronxsim.nki.passes.ZeroElision).
    """
def peek(*args, **kwargs):
    """
    peek(): the tracer recording a kernel (see set_current), else None.
    """
def place_matmul_method(cls: type, matmul_groups: type) -> typing.Any:
    """
    place_matmul as a method of the tracer class cls; matmul_groups: the class of a PSUM tile's accumulation groups (slots open, zero_started, zero_covered, unwritten), made for its first matmul.
    """
def plain_tile_access(*args, **kwargs):
    """
    plain_tile_access(view, st, engine): the Access of the commonest operand, a [P, F] view from partition 0 that walks its row forwards and that engine may use as it is; None for anything else.
    """
def pressure_order(*args, **kwargs):
    """
    pressure_order(ops, storages, capacities, at, access_type, idle_acc, random_mode): the ops' order to fit on-chip memory as indices, or None if an op may not move (see neuronxsim.nki.pressure).
    """
def range_fast(kind: str) -> typing.Any:
    """
    The C path of the nl range function of loops of `kind` (for FastCall).
    """
def reduce_fast(op: typing.Any, name: str) -> typing.Any:
    """
    The C path of nl.<name>(x, axis, *, mask=None, keepdims=False), the op-reduction: a result, or NotImplemented for the Python definition to answer (use in a FastCall).
    """
def remember_call_site(code: typing.Any, lasti: typing.SupportsInt | typing.SupportsIndex, location: typing.Any) -> None:
    """
    Remembers the location of the call at bytecode offset `lasti` of `code` (for caller_location).
    """
def set_call_site_walk(walk: typing.Any) -> None:
    """
    The Python function caller_location calls for a call site it does not know.
    """
def set_current(tracer: typing.Any) -> None:
    """
    The tracer current() returns from now on (None: no tracer).
    """
def set_no_tracer(fn: typing.Any) -> None:
    """
    The Python function current() calls when there is no tracer.
    """
def slice_range(*args, **kwargs):
    """
    slice_range(s, size, axis): (start, step, count) of the slice s of dim `axis` of `size` elements, without NumPy's clamping (a slice reaching outside is an out-of-range access, checked later); NKIError for a zero step or an empty slice.
    """
def store_fast(*args, **kwargs):
    """
    store_fast(dst, value, *, mask=None): nl.store of an SBUF Tensor into an HBM Tensor, no mask or one that keeps it whole; NotImplemented, having changed nothing, for any other call.
    """
def subscript_method(cls: type) -> typing.Any:
    """
    The C subscript of the tensor class cls (Tensor or NkiTensor) as its __getitem__ method.
    """
def tensor_copy06_fast(*args, **kwargs):
    """
    tensor_copy06_fast(dst, src, engine=nisa.engine.unknown, name=None): nisa.tensor_copy's C path for its commonest calls; NotImplemented, having changed nothing, for any other.
    """
def tensor_reduce06_fast(*args, **kwargs):
    """
    tensor_reduce06_fast(dst, op, data, axis, negate=False, keepdims=False, name=None): nisa.tensor_reduce's C path for its commonest calls; NotImplemented, having changed nothing, for any other.
    """
def tensor_scalar06_fast(*args, **kwargs):
    """
    tensor_scalar06_fast(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, engine=nisa.engine.unknown, name=None): nisa.tensor_scalar's C path for its commonest calls; NotImplemented, having changed nothing, for any other.
    """
def tensor_store_method() -> typing.Any:
    """
    Tensor.__setitem__ in C.
    """
def tensor_table(*args, **kwargs):
    """
    tensor_table(storages, first_use, addr, outputs, names, counts, kinds): (tensors, tensor_of), the tensor records of the emitted storages (see neuronxsim.nki.emit.Emission).
    """
def tensor_tensor06_fast(*args, **kwargs):
    """
    tensor_tensor06_fast(dst, data1, data2, op, engine=nisa.engine.unknown, name=None): nisa.tensor_tensor's C path for its commonest calls; NotImplemented, having changed nothing, for any other.
    """
def tracer_method(cls: type, name: str) -> typing.Any:
    """
    The C method `name` (record, new_result, fresh_result, write_fresh or zero_fill) as a method of the tracer class cls.
    """
def unique_name(*args, **kwargs):
    """
    unique_name(names, counts, base): base, or base.1, base.2, ...: the first not in names, trying from counts[base]; records it (see neuronxsim.nki.record.CoreRecord.unique_name).
    """
def use_record_dealloc(*args, **kwargs):
    """
    use_record_dealloc(cls): frees instances of cls, a plain tuple subclass (__slots__ = ()), in one pass (see neuronxsim.nki.record); whether it took the class.
    """
def use_slots_dealloc(*args, **kwargs):
    """
    use_slots_dealloc(cls): frees instances of cls, a class of __slots__ only deriving from object, in one pass (see neuronxsim.nki.tensor.Storage); whether it took the class.
    """
def used_on_chip(*args, **kwargs):
    """
    used_on_chip(storages, first_use, storage_class, sbuf, psum): (the SBUF storages, the PSUM storages) that are on chip and used, in order, or None for the Python definition (see neuronxsim.nki.allocator._used_on_chip).
    """
def write_plain(*args, **kwargs):
    """
    write_plain(view, engine, matmul=False): the write of a plain destination (see plain_tile_access) when nothing about its storage needs the tracer's general write, its state updated; None otherwise.
    """
def zeros_fast(*args, **kwargs):
    """
    zeros_fast(shape, dtype, *, buffer=None): nl.zeros of a tile made before; NotImplemented, having changed nothing, for any other call.
    """
RECORD_POSITIONS: dict = {'Op': {'opcode_number': 0, 'engine_number': 1, 'source': 2, 'fields': 3, 'ins': 4, 'outs': 5, 'opcode': 6, 'engine': 7, 'loc': 8, 'loop': 9, 'index': 10, 'out_box': 11, 'zero_fill': 12}, 'Access': {'sid': 0, 'offset': 1, 'pairs': 2, 'storage': 3}}
