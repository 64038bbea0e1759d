"""``neuronxsim.nki.isa`` (``nisa``): NKI's instruction-level API, one ISA instruction per call,
with the public argument names and defaults of the 2.2x SDKs."""

from __future__ import annotations

import math
import warnings

import numpy as np

from neuronxsim import bir
from neuronxsim.starfish.lib import _core

from .. import dtypes as _dt
from .. import fused_instructions as _fused
from .. import gpsimd_instructions as _gpsimd
from .. import instructions as _ins
from ..errors import NKIError, add_internal_package, caller_location
from ..opcodes import _ALU_BY_FUNCTION, BITVEC_IDS, COMMUTATIVE, Alu, act_func, alu_op
from ..tensor import PSUM, SBUF, BlockedTensor, IndirectView, Tensor
from ..tracer import IT, Engine, current
from .constants import dge_mode, engine, nc_version, oob_mode, reduce_cmd

add_internal_package(__file__)  # (errors point past this package's frames at the kernel's line)

unknown_engine = engine.unknown
tensor_engine = engine.tensor
vector_engine = engine.vector
scalar_engine = engine.scalar
gpsimd_engine = engine.gpsimd
_BN_STATS, _DVE = IT.BNStats, Engine.DVE  # (module globals: reading a class member costs more)

_ENGINES = {engine.vector: Engine.DVE, engine.scalar: Engine.Activation,
            engine.gpsimd: Engine.Pool, engine.tensor: Engine.PE}
_IDLE = reduce_cmd.idle  # (in activation, the parameter named reduce_cmd hides the class)
_DGE, _OOB = dge_mode, oob_mode  # (in dma_copy, the parameters hide the classes)


def get_nc_version():
    return nc_version.gen3 if current().arch == "trn2" else nc_version.gen2


def _engine(value, allowed: tuple, default, loc, what: str):
    if value in (None, engine.unknown):
        return default
    hw = _ENGINES.get(value)
    if hw is None or hw not in allowed:
        names = ", ".join(k for k, v in _ENGINES.items() if v in allowed)
        raise NKIError(f"{what}: engine must be one of {names} (or unknown), not {value!r}", loc)
    return hw


def _tile(x, loc, what: str) -> Tensor:
    if x.__class__ is BlockedTensor:
        raise NKIError(f"{what} is {x.hint}, a tensor of {len(x.block_shape)} block "
                       f"dimension(s) {list(x.block_shape)}: index a block (t[i, ...]); "
                       "instructions work on one tile at a time", loc)
    if not isinstance(x, Tensor):
        raise NKIError(f"{what} must be a tile, not {type(x).__name__}", loc)
    if not x.storage.on_chip:
        raise NKIError(f"{what} is the HBM tensor {x.storage.describe()}; instructions work on "
                       "SBUF/PSUM tiles (nl.load it first)", loc)
    return x


def _dtype(value, loc):
    if value is None:
        return None
    d = _dt.as_dtype(value)
    if d is None:
        raise NKIError(f"dtype {value!r} is not an NKI data type ({_dt.supported_names()})", loc)
    return d


# ---- Tensor Engine ----

def nc_matmul(stationary, moving, *, is_stationary_onezero=False, is_moving_onezero=False,
              is_transpose=False, tile_position=(), tile_size=(), mask=None, perf_mode=None):
    """``stationary.T @ moving`` into a new PSUM tile (fp32): stationary [K, M], moving [K, N],
    K and M at most 128, N at most 512. ``perf_mode="double_row_gen3"`` (trn2, fp8): stationary
    [K, 2, M] and moving [K, 2, N], contracted over K and both rows."""
    loc = caller_location()
    tr = current()
    if mask is not None and not _ins.whole_or_nothing(mask, loc, "nc_matmul"):
        return _ins.masked_matmul(tr, stationary, moving, loc, True)
    if perf_mode is not None and perf_mode != "none":
        if perf_mode != "double_row_gen3":
            raise NKIError(f"nc_matmul: perf_mode is None or 'double_row_gen3', not "
                           f"{perf_mode!r}", loc)
        if is_transpose or tile_position or tile_size:
            raise NKIError("nc_matmul: perf_mode='double_row_gen3' takes no is_transpose, "
                           "tile_position or tile_size", loc)
        for t, name in ((stationary, "stationary"), (moving, "moving")):
            if t.__class__ is not Tensor or not t.storage.on_chip:
                _tile(t, loc, f"nc_matmul: {name}")  # (raises)
        return _ins.matmul_double_row(tr, stationary, moving, loc)
    if stationary.__class__ is not Tensor or not stationary.storage.on_chip:
        _tile(stationary, loc, "nc_matmul: stationary")  # (raises)
    if moving.__class__ is not Tensor or not moving.storage.on_chip:
        _tile(moving, loc, "nc_matmul: moving")
    if is_stationary_onezero or is_moving_onezero:  # (hints of a few kernels)
        for hint, t, name in ((is_stationary_onezero, stationary, "is_stationary_onezero"),
                              (is_moving_onezero, moving, "is_moving_onezero")):
            if hint and t.dtype == _dt.float32:
                # NKI: no impact for non-float32 operands; for float32 ones, a PE mode up to twice
                # as fast. The values are the same; the simulator's PE timing lacks that mode.
                _warn_once(loc, f"nc_matmul({name}=True): the simulator times this float32 matmul "
                                "without the PE's faster mode for 0/1 operands (up to 2x slower "
                                "than the NeuronCore); the results are the same")
    # An operand in PSUM (a PE transpose's result, say) is copied to SBUF first, as NKI's
    # compiler does: the PE reads its operands from SBUF.
    if stationary.storage.kind == PSUM:
        stationary = _ins.tensor_copy(tr, stationary, stationary.dtype, loc,
                                      what="nc_matmul: stationary from PSUM")
    if moving.storage.kind == PSUM:
        moving = _ins.tensor_copy(tr, moving, moving.dtype, loc,
                                  what="nc_matmul: moving from PSUM")
    fields = None
    if tile_position or tile_size:  # (their form and fit: the rule matmul.pe-tile)
        fields = {"tile_position": [int(v) for v in tile_position],
                  "tile_size": [int(v) for v in tile_size]}
    elif not is_transpose:  # (_ins.matmul's steps, its plain case first, without its frame)
        out = _ins.matmul_plain(tr, stationary, moving, loc)
        if out is NotImplemented:
            out = _ins.matmul_general(tr, stationary, moving, loc, "nc_matmul", None, False, None,
                                      True, PSUM)
        return out
    return _ins.matmul(tr, stationary, moving, loc, "nc_matmul", fields,
                       is_transpose=bool(is_transpose))


# nc_matmul(stationary, moving) of two SBUF tiles, no keywords, is recorded in C
# (cpp/python/trace_matmul.cpp's nc_matmul_fast, through a FastCall: cpp/python/trace_fast_call.cpp)
# when matmul_plain takes it; any other call runs the definition above, the home of every check.
nc_matmul = _core.nki.FastCall(nc_matmul, _core.nki.nc_matmul_fast)


def nc_transpose(data, *, mask=None, dtype=None, engine=engine.unknown):
    """Swaps partition and free dimension: on the Tensor Engine (up to [128, 128], into PSUM) or
    the Vector Engine (up to [32, 32], into SBUF). ``unknown`` picks the Vector Engine for tiles
    that fit it."""
    loc = caller_location()
    tr = current()
    data = _tile(data, loc, "nc_transpose: data")
    small = data.shape[0] <= 32 and math.prod(data.shape[1:]) <= 32
    hw = _engine(engine, (Engine.PE, Engine.DVE), Engine.DVE if small else Engine.PE, loc,
                 "nc_transpose")
    if not _ins.whole_or_nothing(mask, loc, "nc_transpose"):  # (a mask of loop indices)
        return _ins.masked_out(tr.new_result(
            SBUF if hw is Engine.DVE else PSUM,
            _dtype(dtype, loc) or data.dtype,
            (math.prod(data.shape[1:]), data.shape[0]), "transpose", loc))
    if hw is Engine.DVE:
        return _ins.transpose_dve(tr, data, _dtype(dtype, loc), loc)
    return _ins.transpose_pe(tr, data, _dtype(dtype, loc), loc)


def _warn_once(loc, message: str):
    """A warning, once per kernel line, for what the simulator runs with the same results but
    times differently from the NeuronCore."""
    key = (loc.path, loc.line) if loc is not None else None
    if key in _WARNED:
        return
    _WARNED.add(key)
    where = f"{loc.path}:{loc.line}: " if loc is not None else ""
    warnings.warn(where + message, NKITimingWarning, stacklevel=3)


class NKITimingWarning(UserWarning):
    """The simulator runs an instruction with the NeuronCore's results but not its timing."""


_WARNED: set = set()


# ---- Scalar Engine ----

def activation(op, data, *, bias=None, scale=1.0, reduce_op=None, reduce_res=None,
               reduce_cmd=reduce_cmd.idle, mask=None, dtype=None):
    """``op(data * scale + bias)`` on the Scalar Engine, optionally reducing each partition's
    results into the engine's accumulation registers (read into ``reduce_res``)."""
    loc = caller_location()
    tr = current()
    func = act_func(op, loc)
    data = _tile(data, loc, "activation: data")
    if reduce_res is not None or (reduce_cmd is not _IDLE and  # (identity: the usual case, cheaply)
                                  reduce_cmd in (bir.AccumCmd.Accumulate,
                                                 bir.AccumCmd.ZeroAccumulate, _LOAD_REDUCE)):
        if reduce_cmd is _LOAD_REDUCE:
            _refuse_load_reduce("activation", loc)
        if reduce_op is not None:
            _ins.refuse_illegal_reduce(tr, alu_op(reduce_op, "activation: reduce_op", loc), loc,
                                       "activation")
    if reduce_res is not None and reduce_cmd == bir.AccumCmd.Idle:
        reduce_cmd = bir.AccumCmd.ZeroAccumulate
    out = _ins.activation(tr, func, data, bias, scale, _dtype(dtype, loc), loc, mask,
                          acc=reduce_cmd)
    if reduce_res is not None:
        _ins.read_accumulator(tr, _tile(reduce_res, loc, "activation: reduce_res"),
                              data.shape[0], loc)
    return out


def activation_reduce(op, data, *, reduce_op, reduce_res, bias=None, scale=1.0, mask=None,
                      dtype=None):
    """``activation`` whose results are also summed per partition into ``reduce_res``."""
    loc = caller_location()
    tr = current()
    func = act_func(op, loc)
    data = _tile(data, loc, "activation_reduce: data")
    _ins.refuse_illegal_reduce(tr, alu_op(reduce_op, "activation_reduce: reduce_op", loc), loc,
                               "activation_reduce")
    out = _ins.activation(tr, func, data, bias, scale, _dtype(dtype, loc), loc, mask,
                          acc=bir.AccumCmd.ZeroAccumulate, what="activation_reduce")
    _ins.read_accumulator(tr, _tile(reduce_res, loc, "activation_reduce: reduce_res"),
                          data.shape[0], loc)
    return out


# ---- Vector / GpSimd engines ----

def tensor_tensor(data1, data2, op, *, dtype=None, mask=None, engine=engine.unknown):
    """Elementwise ``op`` of two tiles (Vector Engine; GpSimd for ``power``)."""
    loc = caller_location()
    alu = alu_op(op, "tensor_tensor: op", loc)
    data1 = _tile(data1, loc, "tensor_tensor: data1")
    data2 = _tile(data2, loc, "tensor_tensor: data2")
    default = Engine.DVE
    if alu is Alu.pow and PSUM not in (data1.storage.kind, data2.storage.kind):
        default = Engine.Pool
    hw = _engine(engine, (Engine.DVE, Engine.Pool), default, loc, "tensor_tensor")
    return _ins.tensor_tensor(current(), data1, data2, alu, _dtype(dtype, loc), loc, mask,
                              engine=hw)


def tensor_scalar(data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False,
                  *, dtype=None, mask=None, engine=engine.unknown):
    """``(data op0 operand0) op1 operand1`` with numbers or [P, 1] tiles as operands."""
    loc = caller_location()
    # (_tile's, _engine's and _dtype's answers for the usual arguments are found here without
    # their frames; they are called for any other, and raise what they raise)
    if data.__class__ is not Tensor or not data.storage.on_chip:
        data = _tile(data, loc, "tensor_scalar: data")
    a0 = alu_op(op0, "tensor_scalar: op0", loc)
    a1 = None if op1 is None else alu_op(op1, "tensor_scalar: op1", loc)
    if a1 is not None and operand1 is None:
        raise NKIError("tensor_scalar: op1 needs operand1", loc)
    hw = _DVE if engine is unknown_engine else \
        _engine(engine, (Engine.DVE, Engine.Activation, Engine.Pool), Engine.DVE, loc,
                "tensor_scalar")
    for operand in (operand0, operand1):
        if isinstance(operand, Tensor) and (operand.__class__ is not Tensor or
                                            not operand.storage.on_chip):
            _tile(operand, loc, "tensor_scalar: operand")
    return _ins.tensor_scalar(current(), data, a0, operand0, reverse0, a1, operand1, reverse1,
                              None if dtype is None else _dtype(dtype, loc), loc, mask, engine=hw)


# An on-chip tile, operators alu_op answered before, numbers or on-chip tiles as operands, no dtype,
# mask or engine: the builder call above, made in C (cpp/python/trace_accumulate.cpp, through a
# FastCall: cpp/python/trace_fast_call.cpp); any other call is the definition's.
_core.nki.configure_isa_tensor_scalar(_ALU_BY_FUNCTION, BITVEC_IDS, unknown_engine)
tensor_scalar = _core.nki.FastCall(tensor_scalar, _core.nki.isa_tensor_scalar_fast)
# Two on-chip tiles of one shape, an operator alu_op answered before (not a bitvec op, not pow), no
# dtype, mask or engine: tensor_tensor's builder call, made in C (the same file); any other call is
# the definition's.
tensor_tensor = _core.nki.FastCall(tensor_tensor, _core.nki.isa_tensor_tensor_fast)


def tensor_reduce(op, data, axis, *, mask=None, dtype=None, negate=False, keepdims=False):
    """Reduces ``data`` along free ``axis`` (an int or a list) on the Vector Engine."""
    loc = caller_location()
    alu = alu_op(op, "tensor_reduce: op", loc)
    data = _tile(data, loc, "tensor_reduce: data")
    return _ins.tensor_reduce(current(), alu, data, axis, keepdims, negate, _dtype(dtype, loc),
                              loc, mask)


def tensor_copy(src, *, mask=None, dtype=None, engine=engine.unknown):
    """Copies (and casts) a tile."""
    loc = caller_location()
    src = _tile(src, loc, "tensor_copy: src")
    hw = _engine(engine, (Engine.DVE, Engine.Activation, Engine.Pool), None, loc, "tensor_copy")
    return _ins.tensor_copy(current(), src, _dtype(dtype, loc), loc, mask, engine=hw)


def reciprocal(data, *, dtype=None, mask=None):
    """``1 / data`` on the Vector Engine."""
    loc = caller_location()
    tr = current()
    data = _tile(data, loc, "reciprocal: data")
    shape = data.shape
    box = _ins.plan(tr, shape, mask, (data,), loc)
    out = _ins.result_tile(tr, None, shape, _dtype(dtype, loc) or data.dtype, "reciprocal", loc)
    if not _ins.is_empty(box):
        _ins.record_lanewise(tr, IT.Reciprocal, Engine.DVE, shape, box, [data], [], out,
                             None, loc, "reciprocal")
    return out


def iota(expr, dtype, *, mask=None):
    """The values of an index expression over its grid (GpSimd)."""
    loc = caller_location()
    return _ins.iota(current(), expr, _dtype(dtype, loc), loc, mask)


def memset(shape, value, dtype, *, mask=None, engine=engine.unknown):
    """A new SBUF tile of ``shape`` filled with ``value``."""
    loc = caller_location()
    tr = current()
    dtype = _dtype(dtype, loc)
    shape = tuple(int(n) for n in shape)
    hw = _engine(engine, (Engine.DVE, Engine.Pool), Engine.DVE, loc, "memset")
    out = _ins.result_tile(tr, None, shape, dtype, "memset", loc)
    _ins.memset(tr, out, value, loc, mask, engine=hw)
    return out


def affine_select(pred, on_true_tile, on_false_value, *, mask=None, dtype=None):
    """``on_true_tile`` where the affine predicate (e.g. ``i_q - i_k >= 0``) holds, else
    ``on_false_value`` (GpSimd)."""
    loc = caller_location()
    on_true_tile = _tile(on_true_tile, loc, "affine_select: on_true_tile")
    return _ins.affine_select(current(), pred, on_true_tile, on_false_value, _dtype(dtype, loc),
                              loc, mask)


def tensor_tensor_scan(data0, data1, initial, op0, op1, reverse0=False, reverse1=False, *,
                       dtype=None, mask=None):
    """Per partition, along the free dimension: ``r[i] = op1(op0(data0[i], r[i-1]), data1[i])``
    from ``r[-1] = initial`` (a number or a [P, 1] tile)."""
    loc = caller_location()
    a0 = alu_op(op0, "tensor_tensor_scan: op0", loc)
    a1 = alu_op(op1, "tensor_tensor_scan: op1", loc)
    for rev, a, name in ((reverse0, a0, "op0"), (reverse1, a1, "op1")):
        if rev and a not in COMMUTATIVE:
            raise NKIError(f"tensor_tensor_scan: reversing the non-commutative {name} "
                           f"({a.name}) is not supported", loc)
    data0 = _tile(data0, loc, "tensor_tensor_scan: data0")
    data1 = _tile(data1, loc, "tensor_tensor_scan: data1")
    return _ins.tensor_tensor_scan(current(), data0, data1, initial, a0, a1, _dtype(dtype, loc),
                                   loc, mask)


# Two on-chip tiles, operators alu_op answered before, no reverse flag, dtype or mask: the builder
# call above, made in C (cpp/python/trace_accumulate.cpp); any other call is the definition's.
tensor_tensor_scan = _core.nki.FastCall(tensor_tensor_scan, _core.nki.isa_tensor_tensor_scan_fast)


def select_reduce(*, dst, predicate, on_true, on_false, reduce_res=None,
                  reduce_cmd=reduce_cmd.idle, reduce_op=np.amax, reverse_pred=False, mask=None,
                  dtype=None):
    """``dst = on_true where predicate else on_false``, with the per-partition max of ``dst``
    into ``reduce_res``."""
    loc = caller_location()
    tr = current()
    dst = _tile(dst, loc, "select_reduce: dst")
    predicate = _tile(predicate, loc, "select_reduce: predicate")
    on_true = _tile(on_true, loc, "select_reduce: on_true")
    if dtype is not None and _dtype(dtype, loc) != dst.dtype:
        raise NKIError(f"select_reduce: dtype {_dt.name(_dtype(dtype, loc))} differs from dst's "
                       f"{_dt.name(dst.dtype)} (the result is written to dst)", loc)
    if alu_op(reduce_op, "select_reduce: reduce_op", loc) is not Alu.max:
        raise NKIError("select_reduce: reduce_op must be max", loc)
    _refuse_register_commands(reduce_cmd, "select_reduce", loc)
    if reverse_pred:
        predicate = _ins.tensor_scalar(tr, predicate, Alu.is_equal, 0.0, False, None, None, False,
                                       _dt.uint8, loc, mask, what="select_reduce")
    if reduce_res is not None:
        reduce_res = _tile(reduce_res, loc, "select_reduce: reduce_res")
    _ins.select_reduce(tr, dst, predicate, on_true, on_false, reduce_res, Alu.max, loc, mask)
    return dst


def range_select(*, on_true_tile, comp_op0, comp_op1, bound0, bound1,
                 reduce_cmd=reduce_cmd.idle, reduce_res=None, reduce_op=np.amax, range_start=0,
                 on_false_value=np.float32(-3.4028235e38), mask=None, dtype=None):
    """Keeps element ``j`` of each partition where ``comp_op0(j + range_start, bound0)`` and
    ``comp_op1(j + range_start, bound1)``, else ``on_false_value``; optional per-partition max."""
    loc = caller_location()
    _refuse_register_commands(reduce_cmd, "range_select", loc)
    data = _tile(on_true_tile, loc, "range_select: on_true_tile")
    c0 = alu_op(comp_op0, "range_select: comp_op0", loc)
    c1 = alu_op(comp_op1, "range_select: comp_op1", loc)
    if alu_op(reduce_op, "range_select: reduce_op", loc) is not Alu.max:
        raise NKIError("range_select: reduce_op must be max", loc)
    bound0 = _tile(bound0, loc, "range_select: bound0")
    bound1 = _tile(bound1, loc, "range_select: bound1")
    if reduce_res is not None:
        reduce_res = _tile(reduce_res, loc, "range_select: reduce_res")
    return _ins.range_select(current(), data, bound0, bound1, c0, c1, range_start,
                             on_false_value, reduce_res, _dtype(dtype, loc), loc, mask)


def bn_stats(data, *, mask=None, dtype=None):
    """Per partition, six values: count, mean and count*variance of the even and of the odd
    elements (at most 512 per partition)."""
    loc = caller_location()
    if data.__class__ is not Tensor or not data.storage.on_chip:  # (_tile's test, without its frame)
        data = _tile(data, loc, "bn_stats: data")
    return _ins.per_lane(current(), _BN_STATS, data, 6,
                         (None if dtype is None else _dtype(dtype, loc)) or data.dtype, loc, mask,
                         "bn_stats")


# An on-chip tile, no dtype or one _dtype has answered before: the per_lane call above, made in C
# (cpp/python/trace_lane_fast.cpp, through a FastCall: cpp/python/trace_fast_call.cpp); any other
# call is the definition's.
bn_stats = _core.nki.FastCall(bn_stats, _core.nki.bn_stats_fast())


def bn_aggr(data, *, mask=None, dtype=None):
    """Mean and variance per partition from concatenated bn_stats records."""
    loc = caller_location()
    if data.__class__ is not Tensor or not data.storage.on_chip:  # (_tile's test, without its frame)
        data = _tile(data, loc, "bn_aggr: data")
    n = math.prod(data.shape[1:])
    if n % 3:
        raise NKIError(f"bn_aggr: {n} elements per partition is not a whole number of "
                       "(count, mean, variance*count) records", loc)
    return _ins.per_lane(current(), IT.BNStatsAggregate, data, 2,
                         (None if dtype is None else _dtype(dtype, loc)) or data.dtype, loc, mask,
                         "bn_aggr")


# An on-chip tile of whole records, no dtype or one _dtype has answered before: the per_lane call
# above, made in C (cpp/python/trace_lane_fast.cpp, through a FastCall); any other call is the
# definition's.
bn_aggr = _core.nki.FastCall(bn_aggr, _core.nki.bn_aggr_fast(IT.BNStatsAggregate))


def max8(*, src, mask=None, dtype=None):
    """The 8 largest values of each partition, descending."""
    loc = caller_location()
    src = _tile(src, loc, "max8: src")
    return _ins.per_lane(current(), IT.Max, src, 8, _dtype(dtype, loc) or src.dtype, loc, mask,
                         "max8")


def nc_find_index8(*, data, vals, mask=None, dtype=None):
    """Per partition, the index of the first occurrence of each of the 8 values ``vals``."""
    loc = caller_location()
    data = _tile(data, loc, "nc_find_index8: data")
    vals = _vals8(vals, data, loc, "nc_find_index8")
    d = _ins.find_index8_dtype(_dtype(dtype, loc) or _dt.uint32, loc, "nc_find_index8: dtype")
    return _ins.per_lane(current(), IT.MaxIndex, data, 8, d, loc, mask, "nc_find_index8",
                         extra_in=vals)


def _vals8(vals, data, loc, what):
    vals = _tile(vals, loc, f"{what}: vals")
    if vals.shape[0] != data.shape[0] or math.prod(vals.shape[1:]) != 8:
        raise NKIError(f"{what}: vals must be [{data.shape[0]}, 8]; it is {list(vals.shape)}", loc)
    return vals


def nc_match_replace8(*, data, vals, imm, dst_idx=None, mask=None, dtype=None):
    """``data`` with the first occurrence of each of the 8 values ``vals`` replaced by ``imm``;
    their indices go to ``dst_idx`` if given."""
    loc = caller_location()
    tr = current()
    data = _tile(data, loc, "nc_match_replace8: data")
    vals = _vals8(vals, data, loc, "nc_match_replace8")
    imm = _ins.number(imm, loc, "nc_match_replace8: imm")
    _ins.refuse_illegal_size(tr, IT.MatchReplace, data, loc, "nc_match_replace8")
    shape = data.shape
    box = _ins.plan(tr, shape, mask, (data,), loc)
    if tuple(box[1:]) != _ins.full_box(shape)[1:]:
        raise NKIError("nc_match_replace8: a mask may limit partitions only", loc)
    out = _ins.result_tile(tr, None, shape, _dtype(dtype, loc) or data.dtype, "match_replace8",
                           loc)
    if _ins.is_empty(box):
        return out
    lo, hi = box[0]
    what = "nc_match_replace8"
    mr = IT.MatchReplace
    ins = [_ins.engine_in(tr, data.restrict(0, lo, hi), loc, what, "data", Engine.DVE, mr),
           _ins.engine_in(tr, vals.restrict(0, lo, hi), loc, what, "vals", Engine.DVE, mr)]
    outs = [_ins.engine_out(tr, out.restrict(0, lo, hi), loc, what, "result", Engine.DVE, mr)]
    if dst_idx is not None:
        dst_idx = _tile(dst_idx, loc, "nc_match_replace8: dst_idx")
        outs.append(_ins.engine_out(tr, dst_idx.restrict(0, lo, hi), loc, what, "dst_idx",
                                    Engine.DVE, mr))
    tr.record(mr, Engine.DVE, ins, outs, {"imm_value": imm}, loc)
    return out


def tensor_scalar_reduce(*, data, op0, operand0, reduce_op, reduce_res, reverse0=False,
                         dtype=None, mask=None):
    """``data op0 operand0`` (returned) and ``reduce_res`` = ``reduce_op`` of that result along
    every free dimension, per partition, in one Vector Engine instruction (the engine's
    accumulation registers reset first: :func:`~neuronxsim.nki.fused_instructions.
    tensor_scalar_accumulate`, as NKI 0.6's ``nisa.tensor_scalar_reduce`` records it)."""
    loc = caller_location()
    data = _tile(data, loc, "tensor_scalar_reduce: data")
    a0 = alu_op(op0, "tensor_scalar_reduce: op0", loc)
    if reverse0:
        raise NKIError("tensor_scalar_reduce: reverse0 is not supported (as in NKI)", loc)
    red = alu_op(reduce_op, "tensor_scalar_reduce: reduce_op", loc)
    if red not in (Alu.add, Alu.subtract, Alu.mult, Alu.max, Alu.min):
        raise NKIError("tensor_scalar_reduce: reduce_op must be nl.add, nl.subtract, "
                       "nl.multiply, nl.max or nl.min", loc)
    if isinstance(operand0, Tensor):
        _tile(operand0, loc, "tensor_scalar_reduce: operand0")
    reduce_res = _tile(reduce_res, loc, "tensor_scalar_reduce: reduce_res")
    if len(data.shape) < 2:
        raise NKIError("tensor_scalar_reduce: data needs a free dimension to reduce", loc)
    return _fused.tensor_scalar_accumulate(current(), data, a0, operand0, False, red, _RESET_REDUCE,
                                           None, False, False, _dtype(dtype, loc), loc, mask,
                                           reduce_res=reduce_res, what="tensor_scalar_reduce")


def tensor_scalar_cumulative(dst, src, op0, op1, imm0, imm1=None,
                             reduce_cmd=reduce_cmd.reset_reduce, mask=None):
    """Per partition, ``reg = op1(op0(src[i], imm0), reg); dst[i] = reg`` along the free
    dimension, in one Vector Engine instruction (``reg``: its accumulation register;
    ``reduce_cmd``: reset_reduce starts from op1's identity, reduce continues, load_reduce
    starts from ``imm1``, which the other commands do not read); returns ``dst``. ``imm0`` and
    ``imm1``: numbers or [P, 1] tiles. NKI 0.6's ``nisa.tensor_scalar_cumulative`` records the
    same instruction (:func:`~neuronxsim.nki.fused_instructions.tensor_scalar_accumulate`)."""
    loc = caller_location()
    what = "tensor_scalar_cumulative"
    if reduce_cmd not in (_RESET_REDUCE, _REDUCE, _LOAD_REDUCE):
        raise NKIError(f"{what}: reduce_cmd must be reset_reduce, reduce or load_reduce, not "
                       f"{reduce_cmd!r}", loc)
    if reduce_cmd == _LOAD_REDUCE:
        if imm1 is None:
            raise NKIError(f"{what}: reduce_cmd=load_reduce starts from imm1; give it", loc)
    else:
        imm1 = None
    dst = _tile(dst, loc, f"{what}: dst")
    src = _tile(src, loc, f"{what}: src")
    if dst.shape != src.shape:
        raise NKIError(f"{what}: dst {list(dst.shape)} and src {list(src.shape)} differ in "
                       "shape", loc)
    a0 = alu_op(op0, f"{what}: op0", loc)
    a1 = alu_op(op1, f"{what}: op1", loc)
    for name, operand in (("imm0", imm0), ("imm1", imm1)):
        if isinstance(operand, Tensor):
            _tile(operand, loc, f"{what}: {name}")
    _fused.tensor_scalar_accumulate(current(), src, a0, imm0, False, a1, reduce_cmd, imm1, False,
                                    True, dst.dtype, loc, mask, out=dst, what=what)
    return dst


_RESET, _RESET_REDUCE, _REDUCE, _LOAD_REDUCE = reduce_cmd.reset, reduce_cmd.reset_reduce, \
    reduce_cmd.reduce, reduce_cmd.load_reduce


def _refuse_register_commands(reduce_cmd, what: str, loc):
    """select_reduce and range_select take idle or reset_reduce: the recorded instruction carries
    no command (its reduction output resets the Vector Engine's registers to its maximum,
    docs/isa-semantics.md §5), as in NKI 0.6."""
    if reduce_cmd == _LOAD_REDUCE:
        _refuse_load_reduce(what, loc)
    if reduce_cmd == _REDUCE:
        raise NKIError(f"{what}: reduce_cmd=reduce (accumulating over earlier instructions) is "
                       "not supported; use reset_reduce", loc)
    if reduce_cmd == _RESET:
        raise NKIError(f"{what}: reduce_cmd=reset (resetting the Vector Engine's registers "
                       "without the current results) is not supported; use reset_reduce", loc)


def _refuse_load_reduce(what: str, loc):
    raise NKIError(f"{what}: reduce_cmd=load_reduce (start from a given value) is "
                   "tensor_scalar_cumulative's; this instruction's registers start at reset",
                   loc)


def scalar_tensor_tensor(*, data, op0, operand0, op1, operand1, reverse0=False, reverse1=False,
                         dtype=None, mask=None):
    """``(data op0 operand0) op1 operand1`` in one Vector Engine instruction: ``operand0`` a
    number or a [P, 1] tile, ``operand1`` a tile of ``data``'s shape (as NKI 0.6's records it:
    :func:`~neuronxsim.nki.fused_instructions.scalar_tensor_tensor`)."""
    loc = caller_location()
    data = _tile(data, loc, "scalar_tensor_tensor: data")
    operand1 = _tile(operand1, loc, "scalar_tensor_tensor: operand1")
    a0 = alu_op(op0, "scalar_tensor_tensor: op0", loc)
    a1 = alu_op(op1, "scalar_tensor_tensor: op1", loc)
    if isinstance(operand0, Tensor):
        _tile(operand0, loc, "scalar_tensor_tensor: operand0")
    if operand1.shape != data.shape:
        raise NKIError(f"scalar_tensor_tensor: operand1 has shape {list(operand1.shape)}; it must "
                       f"have data's shape {list(data.shape)}", loc)
    return _fused.scalar_tensor_tensor(current(), data, a0, operand0, bool(reverse0), a1, operand1,
                                       bool(reverse1), _dtype(dtype, loc), loc, mask)


def tensor_partition_reduce(op, data, *, mask=None, dtype=None):
    """``op`` (add, max, min) folded across the partitions of ``data``: a tile of one
    partition (see :func:`~neuronxsim.nki.instructions.partition_reduce` for how it is
    recorded; bitwise_or / bitwise_and are not modelled)."""
    loc = caller_location()
    data = _tile(data, loc, "tensor_partition_reduce: data")
    alu = alu_op(op, "tensor_partition_reduce: op", loc)
    if mask is not None:
        raise NKIError("tensor_partition_reduce: masks are not supported; slice the tile", loc)
    return _ins.partition_reduce(current(), alu, data, _dtype(dtype, loc), loc)


def dropout(data, prob, *, mask=None, dtype=None):
    """Each element zeroed with probability ``prob`` (a number in [0, 1]), the survivors
    scaled by ``1 / (1 - prob)`` (Vector Engine). A per-partition probability tile is not
    modelled."""
    loc = caller_location()
    data = _tile(data, loc, "dropout: data")
    return _ins.dropout(current(), data, prob, _dtype(dtype, loc), loc, mask, what="dropout")


def tensor_copy_predicated(*, src, dst, predicate, reverse_pred=False, mask=None, dtype=None):
    """``dst`` takes ``src`` (a tile or a number) where ``predicate`` (uint8/16/32) is nonzero
    (zero with ``reverse_pred``); elsewhere ``dst`` keeps its values (Vector Engine)."""
    loc = caller_location()
    tr = current()
    dst = _tile(dst, loc, "tensor_copy_predicated: dst")
    predicate = _tile(predicate, loc, "tensor_copy_predicated: predicate")
    if predicate.dtype not in (_dt.uint8, _dt.uint16, _dt.uint32, _dt.bool_):
        raise NKIError("tensor_copy_predicated: the predicate must be uint8, uint16 or uint32, "
                       f"not {_dt.name(predicate.dtype)}", loc)
    if dtype is not None and _dtype(dtype, loc) != dst.dtype:
        raise NKIError("tensor_copy_predicated: src and dst share one dtype; dtype cannot "
                       "change it", loc)
    if not isinstance(src, Tensor):
        src = _ins.constant_tile(tr, dst.shape, _ins.number(src, loc, "tensor_copy_predicated: src",
                                                            tile=True), dst.dtype, loc)
    src = _tile(src, loc, "tensor_copy_predicated: src")
    if src.dtype != dst.dtype:
        raise NKIError(f"tensor_copy_predicated: src ({_dt.name(src.dtype)}) and dst "
                       f"({_dt.name(dst.dtype)}) must share their dtype", loc)
    if src.storage.kind == PSUM and predicate.storage.kind == PSUM:  # (operand.psum-inputs)
        _ins.refuse_psum_inputs(None, IT.CopyPredicated, [src, predicate], loc,
                                "tensor_copy_predicated")
    if reverse_pred:
        predicate = _ins.tensor_scalar(tr, predicate, Alu.is_equal, 0.0, False, None, None,
                                       False, _dt.uint8, loc, mask,
                                       what="tensor_copy_predicated")
    _ins.copy_predicated(tr, src, predicate, dst, loc, mask)
    return dst


def nc_stream_shuffle(src, dst, shuffle_mask, *, dtype=None, mask=None):
    """Within each quadrant of 32 partitions, output partition ``i`` of ``dst`` takes input
    partition ``shuffle_mask[i]`` of ``src`` (255 leaves it unmodified; Vector Engine)."""
    loc = caller_location()
    src = _tile(src, loc, "nc_stream_shuffle: src")
    dst = _tile(dst, loc, "nc_stream_shuffle: dst")
    if dtype is not None and _dtype(dtype, loc) != dst.dtype:
        raise NKIError("nc_stream_shuffle: dst must have src's dtype", loc)
    _ins.stream_shuffle(current(), src, dst, shuffle_mask, loc, mask)
    return dst


def dma_transpose(src, *, axes=None, mask=None, dtype=None, dge_mode=dge_mode.unknown):
    """A new SBUF tile holding the 2-D ``src`` (HBM or SBUF) transposed by the DMA engine
    (``axes=(1, 0)``; the 3-D and 4-D permutations are not modelled); ``dge_mode`` as
    :func:`dma_copy`'s."""
    loc = caller_location()
    tr = current()
    if not isinstance(src, Tensor):
        raise NKIError(f"dma_transpose: src must be a tensor or tile, not {type(src).__name__}",
                       loc)
    if axes not in (None, (1, 0), [1, 0]) or len(src.shape) != 2:
        raise NKIError(f"dma_transpose: only 2-D transposes (axes=(1, 0)) are modelled; src "
                       f"is {list(src.shape)}, axes {axes}", loc)
    # (the transposed tile's partitions are src's columns: result_tile refuses more than a tile has)
    out = _ins.result_tile(tr, None, tuple(reversed(src.shape)), _dtype(dtype, loc) or src.dtype,
                           "dma_transpose", loc)
    if not _ins.whole_or_nothing(mask, loc, "dma_transpose"):
        return _ins.masked_out(out)
    fields = _dge_fields(dge_mode, src.dtype, out.dtype, loc, "dma_transpose")
    _ins.dma_transpose(tr, IT.DMACopy, out, src, loc, "dma_transpose", fields)
    return out


def _not_modelled(name: str, why: str):
    raise NKIError(f"{name}: {why} is not modelled by the simulator", caller_location(1))


def tensor_copy_dynamic_src(src, *, mask=None, dtype=None, engine=engine.unknown):
    """A copy from a run-time offset in each partition: not modelled (refused)."""
    _not_modelled("tensor_copy_dynamic_src", "indexing with run-time values from tiles")


def tensor_copy_dynamic_dst(*, dst, src, mask=None, dtype=None, engine=engine.unknown):
    """A copy to a run-time offset in each partition: not modelled (refused)."""
    _not_modelled("tensor_copy_dynamic_dst", "indexing with run-time values from tiles")


def local_gather(src_buffer, index, num_elem_per_idx=1, num_valid_indices=None, *, mask=None):
    """Per GpSimd core (16 partitions), ``num_elem_per_idx`` elements of every partition's own
    row at each of the core's ``index`` values (uint16 element offsets); the recorded
    instruction is NKI 0.6's ``nisa.local_gather`` (``gpsimd_instructions.local_gather``)."""
    loc = caller_location()
    _no_mask(mask, "local_gather", loc)
    return _gpsimd.local_gather(current(), _tile(src_buffer, loc, "local_gather: src_buffer"),
                                _tile(index, loc, "local_gather: index"), num_elem_per_idx,
                                num_valid_indices, loc)


def sequence_bounds(*, segment_ids, dtype=None):
    """Each element's segment start and end, ``[1, 2, n]``, of a one-partition tile of segment
    ids (GpSimd; ``gpsimd_instructions.sequence_bounds``, as NKI 0.6's); ``dtype``: the
    result's (float32 or int32; default: segment_ids')."""
    loc = caller_location()
    tr = current()
    ids = _tile(segment_ids, loc, "sequence_bounds: segment_ids")
    out = None
    if dtype is not None:
        out = _ins.result_tile(tr, None, (1, 2, math.prod(ids.shape[1:])), _dtype(dtype, loc),
                               "sequence_bounds", loc)
    return _gpsimd.sequence_bounds(tr, ids, loc, out=out)


def _no_mask(mask, what: str, loc):
    if mask is not None:
        raise NKIError(f"{what}: a mask on this GpSimd instruction is not modelled by the "
                       "simulator", loc)


# ---- DMA ----

_DGE_MODES = (_DGE.unknown, _DGE.none, _DGE.swdge, _DGE.hwdge)


def _check_dge_mode(mode, loc, what: str):
    if mode not in _DGE_MODES:
        raise NKIError(f"{what}: dge_mode must be one of nisa.dge_mode.unknown, .none, .swdge, "
                       f".hwdge, not {mode!r}", loc)


def _dge_fields(mode, src_dtype, dst_dtype, loc, what: str) -> dict:
    """The BIR fields of a DMA's ``dge_mode`` (:func:`~neuronxsim.nki.instructions.dge_fields`).
    The hardware DGE is triggered from the SP queue: a 2.2x kernel cannot name an engine."""
    _check_dge_mode(mode, loc, what)
    return _ins.dge_fields(current(), mode == _DGE.hwdge, mode == _DGE.swdge, Engine.SP,
                           src_dtype, dst_dtype, loc, what)

def dma_copy(*, dst, src, mask=None, dst_rmw_op=None, oob_mode=oob_mode.error,
             dge_mode=dge_mode.unknown):
    """Copies ``src`` to ``dst`` (HBM or SBUF, either way) by DMA; ``dst_rmw_op=np.add``
    accumulates into ``dst``. HBM rows picked by an index tile, ``t[idx, ...]``, are gathered as
    ``src`` or scattered to as ``dst``; ``oob_mode=nisa.oob_mode.skip`` (those only) skips rows
    whose index is out of range instead of failing; ``dge_mode`` picks the descriptor generation
    (hardware DGE: NeuronCore-v3 and later)."""
    loc = caller_location()
    if oob_mode not in (_OOB.error, _OOB.skip):
        raise NKIError(f"dma_copy: oob_mode must be nisa.oob_mode.error or .skip, not {oob_mode!r}",
                       loc)
    _check_dge_mode(dge_mode, loc, "dma_copy")
    for name, t in (("dst", dst), ("src", src)):
        if not isinstance(t, (Tensor, IndirectView)):
            raise NKIError(f"dma_copy: {name} must be a tensor or tile, not {type(t).__name__}",
                           loc)
    fields = _dge_fields(dge_mode, src.dtype, dst.dtype, loc, "dma_copy")
    if dst.__class__ is IndirectView:
        if src.__class__ is not Tensor or not src.storage.on_chip:
            raise NKIError("dma_copy: a scatter (rows picked at run time) reads an SBUF tile", loc)
        rmw = None if dst_rmw_op is None else alu_op(dst_rmw_op, "dma_copy: dst_rmw_op", loc)
        if not _ins.whole_or_nothing(mask, loc, "dma_copy"):
            return
        _ins.dma_scatter(current(), dst, src, loc, "dma_copy", oob_is_err=oob_mode == _OOB.error,
                         rmw=rmw, fields=fields)
        return
    if src.__class__ is IndirectView:
        if not dst.storage.on_chip:
            raise NKIError("dma_copy: a gather (rows picked at run time) writes an SBUF tile", loc)
        if dst_rmw_op is not None:
            raise NKIError("dma_copy: accumulating a gather (dst_rmw_op with rows picked at "
                           "run time) is not modelled", loc)
        if not _ins.whole_or_nothing(mask, loc, "dma_copy"):
            return
        _ins.dma_gather(current(), dst, src, loc, "dma_copy",
                        oob_is_err=oob_mode == _OOB.error, fields=fields)
        return
    if oob_mode != _OOB.error:
        raise NKIError("dma_copy: oob_mode=skip applies to gathers (rows picked at run time) only",
                       loc)
    rmw = None
    if dst_rmw_op is not None:
        rmw = alu_op(dst_rmw_op, "dma_copy: dst_rmw_op", loc)
        if rmw is not Alu.add:
            _ins.refuse_illegal_dma(current(), IT.DMACopy, src, dst, loc, "dma_copy", rmw=rmw)
    _ins.dma(current(), IT.DMACopy, dst, src, loc, mask, rmw=rmw, what="dma_copy",
             fields=fields or None)


__all__ = [
    "engine", "unknown_engine", "tensor_engine", "vector_engine", "scalar_engine",
    "gpsimd_engine", "reduce_cmd", "dge_mode", "oob_mode", "nc_version", "get_nc_version",
    "nc_matmul", "nc_transpose", "activation", "activation_reduce", "tensor_tensor",
    "tensor_scalar", "tensor_reduce", "tensor_copy", "reciprocal", "iota", "memset",
    "affine_select", "tensor_tensor_scan", "select_reduce", "range_select", "bn_stats",
    "bn_aggr", "max8", "nc_find_index8", "nc_match_replace8", "dma_copy", "tensor_scalar_reduce",
    "tensor_scalar_cumulative",
    "scalar_tensor_tensor", "tensor_partition_reduce", "dropout", "tensor_copy_predicated",
    "nc_stream_shuffle", "dma_transpose", "tensor_copy_dynamic_src", "tensor_copy_dynamic_dst",
    "local_gather", "sequence_bounds",
]
