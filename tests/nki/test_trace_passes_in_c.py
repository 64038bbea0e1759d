"""The tracer's passes written in C (cpp/python/trace_pass_facts.cpp, trace_alloc_next_fit.cpp)
against plain Python statements of what they do, on records made up here, and their refusal of
malformed input."""

import heapq
import random

import pytest

from neuronxsim.nki.allocator import _next_fit
from neuronxsim.nki.record import ACCESS_AT, OP_AT, Access, Op
from neuronxsim.starfish.lib import _core

INDEX, INS, OUTS, FIELDS, SID = OP_AT["index"], OP_AT["ins"], OP_AT["outs"], OP_AT["fields"], \
    ACCESS_AT["sid"]


def access(sid, offset=0):
    return tuple.__new__(Access, (sid, offset, [(1, 1)], None))


def op(index, ins, outs, fields=None):
    items = [None] * len(OP_AT)
    items[INDEX], items[INS], items[OUTS], items[FIELDS] = index, ins, outs, fields
    return tuple.__new__(Op, items)


def test_item_positions_come_from_the_record_classes():
    assert OP_AT["index"] == 10 and OP_AT["outs"] == 5 and ACCESS_AT["sid"] == 0
    assert op(7, [], []).index == 7


def test_redirects_take_the_last_redirect_and_put_later_copies_first():
    ops = [op(0, [access(0)], [access(1), access(2)]), op(1, [access(1)], [access(3)]),
           op(2, [], [access(4)])]
    redirects = [(0, access(5)), (1, access(6)), (0, access(7))]
    copy_a, copy_b = op(-1, [access(7)], [access(1)]), op(-1, [access(8)], [access(1)])
    out = _core.nki.ops_redirected(ops, redirects, [(0, copy_a), (0, copy_b)], INDEX, OUTS)
    assert [type(o) for o in out] == [Op] * 5
    assert out[0].outs == [access(7), access(2)] and out[0].ins == ops[0].ins
    assert out[1:3] == [copy_b, copy_a]
    assert out[3].outs == [access(6)]
    assert out[4] is ops[2]
    assert ops[0].outs == [access(1), access(2)]  # (the record is not edited)


def test_matmul_joins_clear_the_flags_in_a_copy_of_the_fields():
    fields = {"start_tensor_calc": True, "stop_tensor_calc": True, "x": 1}
    ops = [op(i, [], [], dict(fields)) for i in range(3)]
    out = _core.nki.ops_matmul_grouped(ops, [(0, 1), (1, 2)], INDEX, FIELDS)
    assert [o.fields for o in out] == [
        {"start_tensor_calc": True, "stop_tensor_calc": False, "x": 1},
        {"start_tensor_calc": False, "stop_tensor_calc": False, "x": 1},
        {"start_tensor_calc": False, "stop_tensor_calc": True, "x": 1}]
    assert list(out[1].fields) == list(fields)  # (same key order)
    assert all(o.fields == fields for o in ops)
    added = _core.nki.ops_matmul_grouped([op(0, [], [], {})], [(0, 0)], INDEX, FIELDS)
    assert list(added[0].fields) == ["stop_tensor_calc", "start_tensor_calc"]


def test_live_ranges_are_the_first_and_last_use():
    ops = [op(0, [access(2)], [access(0)]), op(1, [access(0)], [access(3)]),
           op(2, (access(0), access(3)), [access(0)])]
    assert _core.nki.live_ranges(ops, 5, INS, OUTS, SID) == ([0, -1, 0, 1, -1],
                                                            [2, -1, 0, 2, -1])


def test_malformed_records_are_refused_with_what_is_wrong():
    with pytest.raises(TypeError, match="ops must be a list"):
        _core.nki.live_ranges((), 1, INS, OUTS, SID)
    with pytest.raises(IndexError, match="storage number 3 of 2"):
        _core.nki.live_ranges([op(0, [access(3)], [])], 2, INS, OUTS, SID)
    with pytest.raises(TypeError, match="an operand must be a tuple"):
        _core.nki.live_ranges([op(0, [1.5], [])], 2, INS, OUTS, SID)
    with pytest.raises(TypeError, match="an op must be a tuple"):
        _core.nki.ops_redirected([op(0, [], [])[:3]], [(0, access(1))], [], INDEX, OUTS)
    with pytest.raises(TypeError, match="redirects holds \\(index, value\\) pairs"):
        _core.nki.ops_redirected([], [0], [], INDEX, OUTS)
    with pytest.raises(TypeError, match="outputs must be a list"):
        _core.nki.ops_redirected([op(0, [], (access(0),))], [(0, access(1))], [], INDEX, OUTS)
    with pytest.raises(TypeError, match="index_at must be a non-negative int"):
        _core.nki.ops_matmul_grouped([], [], -1, FIELDS)


ZERO_FILL = OP_AT["zero_fill"]


def zero_op(index, zero_fill):
    items = list(op(index, [], []))
    items[ZERO_FILL] = zero_fill
    return tuple.__new__(Op, items)


def test_zero_elision_keeps_the_ops_the_comprehension_kept():
    # (zero_fill as the record holds it, bools, and other objects judged by their truth)
    ops = [zero_op(i, z) for i, z in enumerate([False, True, True, 0, 1, None, True, "x"])] + \
        [zero_op(-1, True), zero_op(10 ** 20, True)]
    for needed in [set(), {1, 4}, {2, 6, 7, -1, 10 ** 20}, frozenset({1}), [2, 4]]:
        got = _core.nki.ops_zero_elided(ops, needed, INDEX, ZERO_FILL)
        want = [o for o in ops if not o.zero_fill or o.index in needed]
        assert type(got) is list and len(got) == len(want)
        assert all(g is w for g, w in zip(got, want))
    with pytest.raises(TypeError, match="ops must be a list"):
        _core.nki.ops_zero_elided((), set(), INDEX, ZERO_FILL)
    with pytest.raises(TypeError, match="an op must be a tuple"):
        _core.nki.ops_zero_elided([ops[0][:3]], set(), INDEX, ZERO_FILL)
    with pytest.raises(TypeError, match="argument of type 'int' is not iterable"):
        _core.nki.ops_zero_elided([ops[1]], 5, INDEX, ZERO_FILL)


def redirected_reference(ops, redirects, copies):
    """Redirects.run as plain Python statements."""
    last = {}
    for index, acc in redirects:
        last[index] = acc
    out = []
    for o in ops:
        if o.index in last:
            o = o.replaced(outs=[last[o.index]] + list(o.outs[1:]))
        out.append(o)
        out += [c for index, c in reversed(copies) if index == o.index]
    return out


def matmul_grouped_reference(ops, joins):
    """MatmulGroups.run as plain Python statements."""
    continued = {e for e, _ in joins}
    joined = {l for _, l in joins}
    out = []
    for o in ops:
        if o.index in continued or o.index in joined:
            fields = dict(o.fields)
            if o.index in continued:
                fields["stop_tensor_calc"] = False
            if o.index in joined:
                fields["start_tensor_calc"] = False
            o = o.replaced(fields=fields)
        out.append(o)
    return out


@pytest.mark.parametrize("seed", range(30))
def test_redirects_and_joins_match_plain_statements(seed):
    # (indices of facts beyond the ops, negative ones, and ops whose index is out of order or
    # repeated, as a record never has them: the C passes look every index up as given)
    rnd = random.Random(seed)
    n = rnd.randrange(0, 40)
    indices = [rnd.choice([i, i, i, -1, rnd.randrange(-3, 3 * n + 3), 10 ** 12]) for i in range(n)]
    ops = [op(i, [access(1)], [access(2), access(3)], {"x": i}) for i in indices]
    spread = list(range(-2, 2 * n + 2)) + [10 ** 12]
    redirects = [(rnd.choice(spread), access(10 + k)) for k in range(rnd.randrange(0, 2 * n + 2))]
    copies = [(rnd.choice(spread), op(-1, [access(20 + k)], [access(3)]))
              for k in range(rnd.randrange(0, n + 2))]
    got = _core.nki.ops_redirected(ops, redirects, copies, INDEX, OUTS)
    assert got == redirected_reference(ops, redirects, copies)
    joins = [(rnd.choice(spread), rnd.choice(spread)) for _ in range(rnd.randrange(0, n + 2))]
    got = _core.nki.ops_matmul_grouped(ops, joins, INDEX, FIELDS)
    want = matmul_grouped_reference(ops, joins)
    assert got == want and [o.fields for o in got] == [o.fields for o in want]
    assert [type(o) for o in got] == [Op] * len(ops)


def test_facts_at_the_ends_of_the_index_range_are_found():
    # (indices of 64-bit extremes, in a table's range and beyond it)
    low, high = -2 ** 63, 2 ** 63 - 1
    for indices in ([low, low + 1], [high - 1, high], [low, high]):
        ops = [op(i, [access(1)], [access(2)], {"x": 0}) for i in indices + [0, 5]]
        redirects = [(indices[0], access(9))]
        copies = [(indices[-1], op(-1, [access(8)], [access(2)]))]
        got = _core.nki.ops_redirected(ops, redirects, copies, INDEX, OUTS)
        assert got == redirected_reference(ops, redirects, copies)
        got = _core.nki.ops_matmul_grouped(ops, [(indices[0], indices[-1])], INDEX, FIELDS)
        assert got == matmul_grouped_reference(ops, [(indices[0], indices[-1])])


def next_fit_reference(sizes, first, last, capacity):
    """allocator._place's loop for tiles that all fit (None at the first that does not)."""
    live, expiry, addr = [], [], []
    rover = held = peak = 0
    for k, size in enumerate(sizes):
        while expiry and expiry[0][0] < first[k]:
            gone = heapq.heappop(expiry)[2]
            live.remove(gone)
            held -= gone[1] - gone[0]
        at = _next_fit(live, size, capacity, rover)
        if at is None:
            return None
        rover = at + size
        entry = (at, at + size, k)
        live.append(entry)
        live.sort()
        heapq.heappush(expiry, (last[k], k, entry))
        addr.append(at)
        held += size
        peak = max(peak, held)
    return addr, peak


@pytest.mark.parametrize("seed", range(40))
def test_next_fit_placement_matches_the_allocators_loop(seed):
    rnd = random.Random(seed)
    n = rnd.randrange(1, 60)
    first = sorted(rnd.randrange(100) for _ in range(n))
    last = [f + rnd.randrange(0, 30) for f in first]
    sizes = [64 * rnd.randrange(0, 12) for _ in range(n)]
    capacity = 64 * rnd.choice([8, 16, 64])
    assert _core.nki.next_fit_place(sizes, first, last, capacity) == \
        next_fit_reference(sizes, first, last, capacity)


class _Tile:
    """What next_fit_storages reads of a storage."""
    __slots__ = ("sid", "placement", "size")

    def __init__(self, sid, size, placement=None):
        self.sid, self.size, self.placement = sid, size, placement

    @property
    def bytes_per_partition(self):
        return self.size


@pytest.mark.parametrize("seed", range(20))
def test_next_fit_storages_orders_and_sizes_the_storages_as_the_pass_did(seed):
    rnd = random.Random(seed)
    n = rnd.randrange(1, 80)
    first = [rnd.randrange(100) for _ in range(n)]  # (ties kept in the order given)
    last = [f + rnd.randrange(0, 30) for f in first]
    tiles = [_Tile(sid, rnd.randrange(0, 700)) for sid in range(n)]
    picked = [t for t in tiles if rnd.random() < 0.7]
    capacity, align = 64 * rnd.choice([8, 16, 64]), 64
    addr = [None] * n
    peak = _core.nki.next_fit_storages(picked, first, last, capacity, align, addr)
    ordered = sorted(picked, key=lambda t: first[t.sid])
    want = next_fit_reference([-(-t.size // align) * align for t in ordered],
                              [first[t.sid] for t in ordered], [last[t.sid] for t in ordered],
                              capacity)
    if want is None:
        assert peak is None and addr == [None] * n
    else:
        assert peak == want[1] and [addr[t.sid] for t in ordered] == want[0]
        assert all(addr[t.sid] is None for t in tiles if t not in picked)


def test_next_fit_storages_leaves_placed_tiles_and_misfits_to_the_pass():
    addr = [None] * 2
    assert _core.nki.next_fit_storages([_Tile(0, 64), _Tile(1, 64, (0, 128))], [0, 1], [5, 5],
                                       256, 64, addr) is None
    assert _core.nki.next_fit_storages([_Tile(0, 64), _Tile(1, 128)], [0, 1], [5, 5], 128, 64,
                                       addr) is None
    assert addr == [None, None]
    assert _core.nki.next_fit_storages([_Tile(1, 10), _Tile(0, 64)], [1, 0], [5, 5], 256, 64,
                                       addr) == 128
    assert addr == [64, 0]  # (sid 1 is used first)
    with pytest.raises(TypeError, match="next_fit_storages"):
        _core.nki.next_fit_storages((), [0], [0], 128, 64, addr)


def test_next_fit_storages_sizes_plain_storages_as_their_property_does():
    # (storage_class: the C path computes layout.row * dtype.itemsize of storages of exactly that
    # class; the property answers for the others and for rows that are not ints)
    import numpy as np
    from neuronxsim.nki import dtypes as dt
    from neuronxsim.nki.tensor import SBUF, Storage, new_storage, storage_layout

    class Special(Storage):
        __slots__ = ()

        @property
        def bytes_per_partition(self):
            return 7 * 64

    storages = []
    for sid, (dtype, free) in enumerate([(np.float32, 512), (dt.bfloat16, 512), (np.float32, 3),
                                         (np.int8, 100), (dt.bfloat16, 2048), (np.float32, 1)]):
        layout = storage_layout(SBUF, (128, free))
        storages.append(new_storage(sid, SBUF, np.dtype(dtype), (128, free), layout, "t", None,
                                    None))
    special = Special()
    for slot in Storage.__slots__:
        setattr(special, slot, getattr(storages[0], slot))
    special.sid = len(storages)
    odd = new_storage(len(storages) + 1, SBUF, np.dtype(np.float32), (128, 8),
                      storage_layout(SBUF, (128, 8)), "t", None, None)
    odd.layout = type(odd.layout)(True, 128, np.int64(9), (9, 1), None)  # (a row not an int)
    storages += [special, odd]
    n = len(storages)
    first, last = list(range(n)), [k + 2 for k in range(n)]
    for capacity in (192 * 1024, 16 * 1024, 4 * 1024):
        by_property, by_class = [None] * n, [None] * n
        want = _core.nki.next_fit_storages(list(storages), first, last, capacity, 64, by_property)
        got = _core.nki.next_fit_storages(list(storages), first, last, capacity, 64, by_class,
                                          Storage)
        assert (got, by_class) == (want, by_property)
    assert want is None and by_class == [None] * n  # (the smallest capacity: one fits nowhere)
    addr = [None] * n
    _core.nki.next_fit_storages(list(storages), first, last, 1 << 20, 64, addr, Storage)
    ends = [addr[k] + -(-st.bytes_per_partition // 64) * 64 for k, st in enumerate(storages)]
    assert ends[n - 2] - addr[n - 2] == 7 * 64 and ends[n - 1] - addr[n - 1] == 64
    with pytest.raises(TypeError, match="storage_class"):
        _core.nki.next_fit_storages([], [], [], 128, 64, [], 5)


def test_next_fit_placement_gives_up_when_a_tile_fits_nowhere():
    assert _core.nki.next_fit_place([64, 64], [0, 1], [5, 5], 128) == ([0, 64], 128)
    assert _core.nki.next_fit_place([64, 128], [0, 1], [5, 5], 128) is None
    with pytest.raises(ValueError, match="differ in length"):
        _core.nki.next_fit_place([64], [0, 1], [5], 128)


def unique_name_reference(names, counts, base):
    i = counts.get(base, 0)
    name = base if i == 0 else f"{base}.{i}"
    while name in names:
        i += 1
        name = f"{base}.{i}"
    counts[base] = i + 1
    names.add(name)
    return name


def test_unique_names_skip_the_names_taken():
    bases = ["t", "t", "u", "t.1", "t", "t", "u"]
    taken = {"t.2", "u.1"}
    names, counts = set(taken), {}
    ref_names, ref_counts = set(taken), {}
    got = [_core.nki.unique_name(names, counts, b) for b in bases]
    assert got == [unique_name_reference(ref_names, ref_counts, b) for b in bases]
    assert got == ["t", "t.1", "u", "t.1.1", "t.3", "t.4", "u.2"]
    assert (names, counts) == (ref_names, ref_counts)
    with pytest.raises(TypeError, match="unique_name"):
        _core.nki.unique_name([], counts, "t")


def emitted_tensors_reference(program):
    """What the emission pass's Python loop made before it moved to C."""
    from neuronxsim.nki.emit import _DTYPE_NUMBERS, _KINDS
    from neuronxsim.nki.tensor import INPUT, SBUF, SHARED_HBM
    _, _, _, _, sb, psum, input_type, output_type, dram, ext_in, ext_out, internal = _KINDS
    record, first_use, addr = program.record, program.first_use, program.addr
    outputs = set(program.outputs)
    tensors, tensor_of = [], [-1] * len(program.storages)
    for st in program.storages:
        used = first_use[st.sid] >= 0
        if not used and (st.on_chip or st.kind not in (INPUT, SHARED_HBM)):
            continue
        if st.name is None:
            st.name = unique_name_reference(record.names, record.name_counts, st.hint)
        number = _DTYPE_NUMBERS[st.dtype]
        if st.on_chip:
            tensors.append((st.name, sb if st.kind == SBUF else psum, number,
                            (st.layout.partitions, st.layout.row), internal, st.layout.partitions,
                            st.bytes_per_partition,
                            0 if st.placement is None else st.placement[0], addr[st.sid]))
        elif st.kind == INPUT:
            tensors.append((st.name, input_type, number, st.shape, ext_in, 0, 0, 0, 0))
        elif st in outputs:
            tensors.append((st.name, output_type, number, st.shape, ext_out, 0, 0, 0, 0))
        elif used:
            tensors.append((st.name, dram, number, st.shape, internal, 0, 0, 0, 0))
        else:
            continue
        tensor_of[st.sid] = len(tensors) - 1
    return tensors, tensor_of


def _program_before_emission():
    """A small kernel's program and record, run through the pipeline up to the emission."""
    import neuronxsim.nki as nki
    import neuronxsim.nki.language as nl
    from neuronxsim import bir
    from neuronxsim.nki.emit import _KINDS
    from neuronxsim.nki.kernel import record_kernel
    from neuronxsim.nki.passes import PIPELINE, Program

    @nki.jit
    def kernel(a, b):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        unused = nl.ndarray((4, 4), dtype=nl.float32, buffer=nl.hbm)  # noqa: F841
        for i in nl.affine_range(2):
            t = nl.load(a[i * 64:(i + 1) * 64, :])
            u = nl.exp(t) + nl.load(b[i * 64:(i + 1) * 64, :])
            nl.store(out[i * 64:(i + 1) * 64, :], u * 2.0)
        return out

    T = nki.typing.tensor
    recording = record_kernel(kernel, (T[[128, 32], nl.float32], T[[128, 32], nl.bfloat16]), {},
                              "trn1")
    record = recording.tracer.cores[0].record
    program = Program(record, "trn1", recording.tracer.sbuf_bytes, recording.returned[0],
                      bir.Module())
    for stage in PIPELINE[:-1]:  # (up to the emission)
        stage.run(program)
    return program, record


def _same_table_as_the_reference(program, record):
    """tensor_table of ``program`` equals emitted_tensors_reference's table, names and counts
    (the counts in the same order); returns the table."""
    from neuronxsim.nki.emit import _KINDS
    unnamed = [st for st in program.storages if st.name is None]
    assert len(unnamed) > 3  # (temporaries, and the HBM tensor nothing uses)
    names, counts = set(record.names), dict(record.name_counts)
    expected = emitted_tensors_reference(program)
    expected_names = [st.name for st in program.storages]
    expected_counts = list(record.name_counts.items())
    for st in unnamed:
        st.name = None
    record.names, record.name_counts = names, counts
    got = _core.nki.tensor_table(program.storages, program.first_use, program.addr,
                                 set(program.outputs), record.names, record.name_counts, _KINDS)
    assert got == expected
    assert [st.name for st in program.storages] == expected_names
    assert list(record.name_counts.items()) == expected_counts
    return got


def test_the_tensor_table_is_the_emission_loops():
    from neuronxsim.nki.emit import _KINDS
    program, record = _program_before_emission()
    got = _same_table_as_the_reference(program, record)
    assert any(t[1] == _KINDS[7] for t in got[0]) and any(t[1] == _KINDS[6] for t in got[0])
    with pytest.raises(TypeError, match="has no slot sid"):
        _core.nki.tensor_table([object()], [0], [None], set(), set(), {}, _KINDS)
    with pytest.raises(TypeError, match="tensor_table"):
        _core.nki.tensor_table(program.storages, program.first_use, program.addr, set(),
                               set(), {}, _KINDS[:3])


class _Hint(str):
    """A str of its own class: named by the dict's counts, not by their copy in C."""


@pytest.mark.parametrize("hints", [
    ["t", "".join(["t", ""]), "u", "t", "u"],  # equal texts in distinct objects are one count
    ["t", "\u00e9", "t", "\u00e9", "t"],  # a non-ASCII base takes the dict's count
    ["t", _Hint("t"), "t", _Hint("u"), "u"],  # and so does a str subclass
])
def test_the_tensor_tables_temporary_names_are_unique_names(hints):
    program, record = _program_before_emission()
    unnamed = [st for st in program.storages if st.name is None]
    for i, st in enumerate(unnamed):
        st.hint = hints[i % len(hints)]
    record.names.update({"t.2", "u.1"})  # (taken: skipped)
    record.name_counts["u"] = 1
    _same_table_as_the_reference(program, record)
