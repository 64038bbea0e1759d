"""GpSimd instructions that work across partitions or compact data (tensor_partition_reduce,
local_gather, nc_n_gather, sequence_bounds, nonzero_with_count) and the engines' pseudo-random
number generators (rng, rand_set_state / set_rng_seed, rand_get_state): one BIR instruction each
(docs/isa-semantics.md §5)."""

from __future__ import annotations

import math

import ml_dtypes

from neuronxsim.bir import legality, target

from . import dtypes as dt
from .errors import NKIError
from .indexing import full_box
from .instructions import (engine_in, engine_out, legal_operand, out_view, refuse_bitvec_dtypes, result_tile,
                           tensor_scalar)
from .opcodes import Alu
from .tensor import SBUF, Tensor
from .tracer import IT, Access, Engine

GPSIMD_CORE_PARTITIONS = target.uniform("gpsimd_core_partitions")  # SBUF partitions per GpSimd core


def _facts(t: Tensor):
    """``t`` as the legality rules see it."""
    st = t.storage
    return legal_operand(st.kind, st.dtype, t.shape[0], math.prod(t.shape[1:]))


def _pool_in(tr, view: Tensor, opcode, loc, what: str, name: str) -> Access:
    """An input of ``opcode`` on GpSimd (a tile in PSUM: the rule operand.pool-psum refuses it)."""
    if not view.storage.on_chip:
        raise NKIError(f"{what}: {name} must be in SBUF (the GpSimd Engine cannot access "
                       f"{view.storage.kind.upper()})", loc)
    return engine_in(tr, view, loc, what, name, Engine.Pool, opcode)


def _pool_out(tr, view: Tensor, opcode, loc, what: str, name: str = "destination") -> Access:
    """An output of ``opcode`` on GpSimd (as :func:`_pool_in`)."""
    if not view.storage.on_chip:
        raise NKIError(f"{what}: the {name} must be in SBUF (the GpSimd Engine cannot access "
                       f"{view.storage.kind.upper()})", loc)
    return engine_out(tr, view, loc, what, name, Engine.Pool, opcode)


def _exact_out(out: Tensor, shape: tuple, loc, what: str) -> Tensor:
    """``out`` as a destination of ``shape`` (the same partitions and elements per partition)."""
    return out_view(out, shape, full_box(shape), loc, f"{what}: the destination")


def partition_reduce(tr, op, data: Tensor, dtype, loc, out=None,
                     what="tensor_partition_reduce") -> Tensor:
    """``op`` folded over the partitions of ``data`` into a one-partition tile (GpSimd)."""
    tpr = IT.TensorPartitionReduce
    why = legality.partition_reduce_op(op)
    if why is not None:
        raise NKIError(f"{what}: {why.message}", loc)
    if op is Alu.average:
        raise NKIError(f"{what}: op average is not modelled: the documentation does not say what an "
                       "average over partitions computes (a mean, or pairwise averages in some order)", loc)
    shape = (1,) + tuple(data.shape[1:])
    out = result_tile(tr, out, shape, dtype or data.dtype, what, loc)
    refuse_bitvec_dtypes(tpr, op, Alu.bypass, (data,), out, loc, what)
    ins = [_pool_in(tr, data, tpr, loc, what, "data")]
    o = _pool_out(tr, out_view(out, shape, full_box(shape), loc), tpr, loc, what)
    tr.record(IT.TensorPartitionReduce, Engine.Pool, ins, [o], {"op": op}, loc)
    return out


def _gathered_into(tr, out, shape: tuple, src: Tensor, name: str, loc, what: str) -> Tensor:
    """The destination of a gather from ``src``: ``out``, or a new tile, of src's dtype (the
    gathers copy bytes, they do not convert)."""
    out = result_tile(tr, out, shape, src.dtype, what, loc)
    if out.dtype != src.dtype:
        raise NKIError(f"{what}: the destination is {dt.name(out.dtype)} but {name} is "
                       f"{dt.name(src.dtype)}; the gather does not convert", loc)
    return out


def local_gather(tr, src: Tensor, index: Tensor, num_elem_per_idx: int, num_valid_indices,
                 loc, out=None, what="local_gather") -> Tensor:
    """Per GpSimd core (16 partitions), the core's ``index`` values (uint16 element offsets, read
    partition first) gather ``num_elem_per_idx`` elements each from every partition's own row."""
    p = src.shape[0]
    e = int(num_elem_per_idx)
    per_core = GPSIMD_CORE_PARTITIONS * math.prod(index.shape[1:])
    valid = per_core if num_valid_indices is None else int(num_valid_indices)
    why = legality.local_gather(_facts(src), _facts(index), e, valid, arch=tr.arch)
    if why is not None:
        raise NKIError(f"{what}: {why.message}", loc)
    shape = (p, valid * e)
    out = _gathered_into(tr, out, shape, src, "src_buffer", loc, what)
    ins = [_pool_in(tr, src, IT.LocalGather, loc, what, "src_buffer"),
           _pool_in(tr, index, IT.LocalGather, loc, what, "index")]
    o = _pool_out(tr, _exact_out(out, shape, loc, what), IT.LocalGather, loc, what)
    tr.record(IT.LocalGather, Engine.Pool, ins, [o],
              {"num_elem_per_idx": e, "num_valid_indices": valid}, loc)
    return out


def gather(tr, data: Tensor, indices: Tensor, loc, out=None, what="nc_n_gather") -> Tensor:
    """``out[p, j] = data[p, indices[p, j]]`` within each partition, ``data``'s free dimensions
    flattened (GpSimd)."""
    if indices.shape[0] != data.shape[0]:
        raise NKIError(f"{what}: data and indices must have the same partitions; they have "
                       f"{data.shape[0]} and {indices.shape[0]}", loc)
    if indices.dtype not in (dt.uint32, dt.int32):
        raise NKIError(f"{what}: indices must be uint32, not {dt.name(indices.dtype)}", loc)
    shape = tuple(indices.shape)
    out = _gathered_into(tr, out, shape, data, "data", loc, what)
    ins = [_pool_in(tr, data, IT.Gather, loc, what, "data"),
           _pool_in(tr, indices, IT.Gather, loc, what, "indices")]
    o = _pool_out(tr, _exact_out(out, shape, loc, what), IT.Gather, loc, what)
    tr.record(IT.Gather, Engine.Pool, ins, [o], None, loc)
    return out


def sequence_bounds(tr, segment_ids: Tensor, loc, out=None, what="sequence_bounds") -> Tensor:
    """Each element's segment start, then each one's segment end, of a one-partition tile of
    segment ids (GpSimd): a ``[1, 2, n]`` tile."""
    if segment_ids.shape[0] != 1:
        raise NKIError(f"{what}: segment_ids must have one partition; it has "
                       f"{segment_ids.shape[0]}", loc)
    for name, d in (("segment_ids", segment_ids.dtype),) + \
            ((("the destination", out.dtype),) if out is not None else ()):
        if d not in (dt.float32, dt.int32):
            raise NKIError(f"{what}: {name} must be float32 or int32, not {dt.name(d)}", loc)
    n = math.prod(segment_ids.shape[1:])
    shape = (1, 2, n)
    out = result_tile(tr, out, shape, segment_ids.dtype, what, loc)
    ins = [_pool_in(tr, segment_ids, IT.SequenceBounds, loc, what, "segment_ids")]
    o = _pool_out(tr, _exact_out(out, shape, loc, what), IT.SequenceBounds, loc, what)
    tr.record(IT.SequenceBounds, Engine.Pool, ins, [o], None, loc)
    return out


def nonzero_with_count(tr, src: Tensor, index_offset: int, padding_val: int, loc, out: Tensor,
                       what="nonzero_with_count") -> Tensor:
    """On each GpSimd core's first partition (0, 16, ..., 112): the indices of the non-zero
    elements plus ``index_offset``, ``padding_val`` up to the length, then their count."""
    if src.dtype not in (dt.float32, dt.int32):
        raise NKIError(f"{what}: src must be float32 or int32, not {dt.name(src.dtype)}", loc)
    if out.dtype != dt.int32:
        raise NKIError(f"{what}: dst must be int32, not {dt.name(out.dtype)}", loc)
    p, n = src.shape[0], math.prod(src.shape[1:])
    shape = (p, n + 1)
    ins = [_pool_in(tr, src, IT.NonzeroWithCount, loc, what, "src")]
    o = _pool_out(tr, _exact_out(out, shape, loc, what), IT.NonzeroWithCount, loc, what, "dst")
    tr.record(IT.NonzeroWithCount, Engine.Pool, ins, [o],
              {"index_offset": int(index_offset), "padding_val": int(padding_val)}, loc)
    return out


# ---- the engines' pseudo-random number generators (docs/isa-semantics.md §5, Rand) ----

RAND_DTYPES = (dt.int8, dt.int16, dt.int32, dt.uint8, dt.uint16, dt.uint32)
RNG_STATE_WORDS = 6  # one XORWOW state per partition of the GpSimd engine


def rand_bits(tr, out: Tensor, engine, loc, what="rng"):
    """32 random bits per element of ``out`` (an 8-, 16- or 32-bit integer tile), truncated to
    its type, from the generator of ``engine`` (Vector or GpSimd) of each partition."""
    if out.dtype not in RAND_DTYPES:
        raise NKIError(f"{what}: dst must be int8, int16, int32, uint8, uint16 or uint32, not "
                       f"{dt.name(out.dtype)}", loc)
    o = (_pool_out(tr, out, IT.Rand, loc, what, "dst") if engine is Engine.Pool else
         engine_out(tr, out, loc, what, "dst", engine, IT.Rand))
    tr.record(IT.Rand, engine, [], [o], None, loc)


def uniform(tr, out: Tensor, loc, what: str):
    """``out`` (a float tile) filled with uniform random values in [0, 1) (both dialects'
    nl.rand): 32 bits from the Vector Engine's generators, their top p scaled by 2^-p, p the
    dtype's significand bits (24 for fp32, 8 for bf16), so that each value is exact in the dtype
    and none rounds up to 1 (three instructions; the values are the simulator's XORWOW, not the
    hardware's sequence). An integer dtype holds no value between 0 and 1: refused."""
    if not dt.is_float(out.dtype):
        raise NKIError(f"{what}: draws values between 0 and 1, which {dt.name(out.dtype)} cannot "
                       "hold; use a float dtype", loc)
    p = min(24, ml_dtypes.finfo(out.dtype).nmant + 1)
    bits = tr.new_result(SBUF, dt.uint32, out.shape, "rand", loc)
    rand_bits(tr, bits, Engine.DVE, loc, what=what)
    top = tensor_scalar(tr, bits, Alu.logical_shift_right, float(32 - p), False, None, None, False,
                        dt.uint32, loc, what=what)
    tensor_scalar(tr, top, Alu.mult, 2.0**-p, False, None, None, False, out.dtype, loc, out=out,
                  what=what)


def set_rand_state(tr, src: Tensor, engine, loc, what="rand_set_state"):
    """The generators of ``src``'s partitions (GpSimd: six uint32 words each) take the states in
    ``src``; on the Vector Engine ``src`` is one 32-bit seed for every partition."""
    if engine is Engine.DVE:
        if math.prod(src.shape) != 1 or src.dtype.itemsize != 4:
            raise NKIError(f"{what}: the seed must be one 32-bit value ([1, 1]); it is "
                           f"{list(src.shape)} {dt.name(src.dtype)}", loc)
        ins = [engine_in(tr, src, loc, what, "src_seeds", engine, IT.SetRandState)]
    else:
        if src.dtype not in (dt.uint32, dt.int32) or \
                math.prod(src.shape[1:]) != RNG_STATE_WORDS:
            raise NKIError(f"{what}: src_seeds must be uint32 with {RNG_STATE_WORDS} elements per "
                           f"partition (one XORWOW state); it is {list(src.shape)} "
                           f"{dt.name(src.dtype)}", loc)
        ins = [_pool_in(tr, src, IT.SetRandState, loc, what, "src_seeds")]
    tr.record(IT.SetRandState, engine, ins, [], None, loc)


def get_rand_state(tr, out: Tensor, loc, what="rand_get_state"):
    """Each partition's GpSimd generator state into ``out`` (six uint32 words per partition)."""
    if out.dtype not in (dt.uint32, dt.int32) or math.prod(out.shape[1:]) != RNG_STATE_WORDS:
        raise NKIError(f"{what}: dst must be uint32 with {RNG_STATE_WORDS} elements per partition; "
                       f"it is {list(out.shape)} {dt.name(out.dtype)}", loc)
    o = _pool_out(tr, out, IT.GetRandState, loc, what, "dst")
    tr.record(IT.GetRandState, Engine.Pool, [], [o], None, loc)
