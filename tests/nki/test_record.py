"""The record of a trace and the passes over it (docs/nki-tracer.md): ops are appended and never
edited (but a last one's temporary output nothing else holds), facts learned later are appended as
facts, every op knows its loop iteration, the passes turn the record into the module's instructions."""

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim import bir
from neuronxsim.nki.kernel import record_kernel
from neuronxsim.nki.passes import PIPELINE

T = nki.typing.tensor
IT = bir.InstructionType


def _record(kernel, *args, arch="trn1"):
    return record_kernel(kernel, args, {}, arch).tracer.cores[0].record


@nki.jit
def loops(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):
        for j in nl.sequential_range(3):
            for k in nl.static_range(1):
                t = nl.load(a[i * 64 + j * 16:i * 64 + j * 16 + 16, :])
                nl.store(out[i * 64 + j * 16:i * 64 + j * 16 + 16, :], nl.exp(t))
    last = nl.load(a[0:16, :])
    nl.store(out[0:16, :], last)
    return out


def test_every_op_records_its_loop_iteration():
    record = _record(loops, T[[128, 32], nl.float32])
    looped, top = record.ops[:-2], record.ops[-2:]
    assert all(op.loop is None for op in top)
    nests = [[(it.loop.kind, it.loop.trips, it.iteration) for it in op.loop.nest()]
             for op in looped[::3]]  # (load, exp, store per body)
    assert nests == [[("affine", 2, i), ("sequential", 3, j), ("static", 1, 0)]
                     for i in range(2) for j in range(3)]
    inner = looped[0].loop
    assert inner.loop.loc.line == loops.func.__code__.co_firstlineno + 5
    assert inner.outer.loop is looped[0].loop.nest()[1].loop
    # one Loop object per loop entered, one LoopIteration per iteration
    assert len({id(op.loop.loop) for op in looped}) == 6  # the static loop is entered 6 times
    assert len({id(op.loop.outer.outer) for op in looped}) == 2


@nki.jit
def redirected(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    t[...] = kept = nl.load(a)  # the load is redirected to write t (kept: a name holds it)
    acc = nl.zeros((64, 64), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(2):
        acc += nisa.nc_matmul(t[:, 0:64], t[:, 0:64])  # the second joins the first's group
    unused = nl.zeros((64, 8), nl.float32)  # never read: its memset is dead
    nl.store(out[:, 0:64], nl.copy(acc))
    return out


def test_facts_are_appended_and_the_recorded_ops_stay_as_they_were():
    record = _record(redirected, T[[64, 128], nl.float32])
    load, zero_acc, mm0, mm1, zero_unused = record.ops[:5]
    assert load.opcode == IT.Load and load.outs[0].storage.hint == "load"  # as recorded
    (index, access), = [r for r in record.redirects if r[0] == load.index]
    assert access.storage.hint == "ndarray"
    assert zero_acc.zero_fill and zero_unused.zero_fill and record.zeros_needed == set()
    assert record.matmul_joins == [(mm0.index, mm1.index)]
    assert mm0.fields["stop_tensor_calc"] and mm1.fields["start_tensor_calc"]  # as recorded
    assert record.copies == []


def test_the_passes_apply_the_facts_in_order():
    traced = nki.trace_kernel(redirected, T[[64, 128], nl.float32])
    insts = traced.module.functions[0].blocks[0].instructions
    assert [i.opcode_name for i in insts] == ["Load", "Matmult", "Matmult", "TensorCopy", "Save"]
    load, mm0, mm1 = insts[:3]
    assert load.outs[0].memref == "ndarray"
    assert (mm0.start_tensor_calc, mm0.stop_tensor_calc) == (True, False)
    assert (mm1.start_tensor_calc, mm1.stop_tensor_calc) == (False, True)
    assert [s.name for s in PIPELINE] == ["zero-elision", "redirects", "matmul-groups", "liveness",
                                          "allocation", "pressure-schedule", "emission"]


def test_a_redirected_temporary_read_after_its_destination_changed_gets_a_copy(rng):
    @nki.jit
    def kernel(a):
        out = nl.ndarray((2, 64, 32), dtype=a.dtype, buffer=nl.shared_hbm)
        dst = nl.ndarray((64, 32), dtype=a.dtype)
        e = nl.exp(nl.load(a))
        dst[...] = e  # exp writes dst directly
        dst[...] = nl.load(a)  # dst changes: e needs its own copy, made right after the exp
        nl.store(out[0], e)
        nl.store(out[1], dst)
        return out

    record = _record(kernel, T[[64, 32], nl.float32])
    ((producer, copy),) = record.copies
    assert record.ops[producer].opcode == IT.Activation and copy.opcode == IT.TensorCopy
    a = rng.random((64, 32)).astype(np.float32)
    insts = nki.trace(kernel, a).functions[0].blocks[0].instructions
    assert [i.opcode_name for i in insts][:3] == ["Load", "Activation", "TensorCopy"]
    out = nki.simulate_kernel(kernel, a)
    np.testing.assert_allclose(out[0], np.exp(a), rtol=1e-6)
    np.testing.assert_array_equal(out[1], a)


def test_a_cap_on_recorded_instructions_names_itself_and_the_kernel_line():
    @nki.jit
    def endless(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(10 ** 9):
            nl.store(out, nl.load(a))  # LINE
        return out

    with pytest.raises(nki.NKIError, match=r"test_record\.py:\d+: kernel .*endless records "
                                           r"more than max_instructions=1000 instructions") as info:
        nki.trace(endless, T[[8, 8], nl.float32], max_instructions=1000)
    assert "nl.store(out, nl.load(a))  # LINE" in str(info.value)
    assert nki.trace_kernel(loops, T[[128, 32], nl.float32], max_instructions=20).instruction_count == 20
    with pytest.raises(nki.NKIError, match="max_instructions=19"):
        nki.trace(loops, T[[128, 32], nl.float32], max_instructions=19)
    with pytest.raises(nki.NKIError, match="max_instructions must be a positive integer"):
        nki.trace(loops, T[[128, 32], nl.float32], max_instructions=0)


def test_the_c_code_reads_the_record_at_the_positions_its_python_properties_name():
    """The record's tuples are made and read in C by position (cpp/python/trace_record.h); the
    positions there are the ones the Python properties of the same names read (record.OP_AT,
    ACCESS_AT), and the tuples have no position the C code does not know."""
    from neuronxsim.nki import record
    from neuronxsim.starfish.lib import _core

    positions = _core.nki.RECORD_POSITIONS
    assert positions == {"Op": record.OP_AT, "Access": record.ACCESS_AT}
    assert sorted(record.OP_AT.values()) == list(range(len(record.OP_AT)))
    assert sorted(record.ACCESS_AT.values()) == list(range(len(record.ACCESS_AT)))


def test_accesses_with_equal_pairs_share_one_list():
    """new_access keeps one list per distinct pairs value (a trace has a handful of them, and
    each list freed with the record costs several objects), never the caller's own list."""
    from neuronxsim.nki.record import new_access
    record = _record(redirected, T[[64, 128], nl.float32])
    st = record.storages[-1]
    mine = [(64, 128), (1, 64)]
    a, b = new_access(st, 0, mine), new_access(st, 64, [(64, 128), (1, 64)])
    assert a.pairs == b.pairs == [(64, 128), (1, 64)] and a.pairs is b.pairs
    assert a.pairs is not mine
    mine.append((1, 1))  # a caller changing its list afterwards changes no access
    assert new_access(st, 0, [(64, 128), (1, 64)]).pairs == [(64, 128), (1, 64)]
    # what is not a short list of (int, int) is kept as given (for its reader to judge)
    for odd in ([(True, 128), (1, 64)], [(64.0, 128)], [(64, 128, 1)], ((64, 128), (1, 64)),
                [(1, 1)] * 7, [(2 ** 70, 1)]):
        assert new_access(st, 0, odd).pairs is odd
    # the record's own accesses share theirs too
    by_value = {}
    for op in record.ops:
        for acc in list(op.ins) + list(op.outs):
            assert by_value.setdefault(tuple(acc.pairs), acc.pairs) is acc.pairs


@nki.jit
def kept_or_not(a, keep):
    """A load stored into a tile and matmuls added to PSUM, their results held by a name or only
    by the statement (the same lines either way)."""
    out = nl.ndarray((64, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    t[...] = (kept := nl.load(a)) if keep else nl.load(a)
    acc = nl.zeros((64, 64), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(2):
        acc += (held := nisa.nc_matmul(t[:, 0:64], t[:, 0:64])) if keep else nisa.nc_matmul(t[:, 0:64], t[:, 0:64])
    nl.store(out, nl.copy(acc))
    return out


@pytest.mark.skipif("sys.version_info >= (3, 14)", reason="references are counted up to CPython 3.13")
def test_a_temporary_only_its_statement_holds_is_written_in_place_not_redirected():
    """`t[...] = expr` / `acc += matmul(...)` of a result nothing else holds: its instruction is
    made to write the destination and its temporary leaves the record (no redirect); held by a
    name, it is redirected as before; the traced modules are the same."""
    kept, sole = (_record(kept_or_not, T[[64, 128], nl.float32], keep) for keep in (True, False))
    assert [r[0] for r in kept.redirects] == [0, 2, 3]  # (the load, the two matmuls)
    assert sole.redirects == []
    load, _, mm0, mm1 = sole.ops[:4]
    assert load.outs[0].storage.hint == "ndarray"
    assert mm0.outs[0].storage is mm1.outs[0].storage and mm0.outs[0].storage.hint == "zeros"
    assert {st.hint for st in kept.storages} - {st.hint for st in sole.storages} == {"load", "matmul"}
    assert [st.sid for st in sole.storages] == list(range(len(sole.storages)))
    assert sole.matmul_joins == kept.matmul_joins == [(mm0.index, mm1.index)]
    traced = [nki.trace_kernel(kept_or_not, T[[64, 128], nl.float32], keep) for keep in (True, False)]
    assert traced[0].module.to_json(-1) == traced[1].module.to_json(-1)


@nki.jit
def two_matmul_groups(a):
    """Two accumulation groups of three plain matmuls each."""
    out = nl.ndarray((64, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(a)
    for g in nl.affine_range(2):
        acc = nl.zeros((64, 64), nl.float32, buffer=nl.psum)
        for k in nl.affine_range(3):
            acc += nisa.nc_matmul(t[:, 0:64], t[:, 0:64])
        nl.store(out[:, g * 64:(g + 1) * 64], nl.copy(acc))
    return out


def test_plain_matmuls_share_their_fields_and_joined_ones_share_the_changed_fields():
    from neuronxsim.nki.record import OP_AT
    from neuronxsim.starfish.lib import _core
    record = _record(two_matmul_groups, T[[64, 128], nl.float32])
    matmuls = [op for op in record.ops if op is not None and op.opcode == IT.Matmult]
    assert len(matmuls) == 6 and all(op.fields is matmuls[0].fields for op in matmuls)
    assert matmuls[0].fields == {"start_tensor_calc": True, "stop_tensor_calc": True,
                                 "is_transpose": False}
    grouped = _core.nki.ops_matmul_grouped(matmuls, record.matmul_joins, OP_AT["index"],
                                           OP_AT["fields"])
    first, middle, last = grouped[0:3]
    assert [(op.fields["start_tensor_calc"], op.fields["stop_tensor_calc"]) for op in grouped] == [
        (True, False), (False, False), (False, True)] * 2
    assert [op.fields for op in grouped[3:]] == [first.fields, middle.fields, last.fields]
    assert all(b.fields is a.fields for a, b in zip(grouped[0:3], grouped[3:6]))
    assert matmuls[0].fields["stop_tensor_calc"]  # (the recorded dict is unchanged)
