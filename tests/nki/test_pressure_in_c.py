"""The reordering to fit's dependencies and list scheduling, written in C
(cpp/python/trace_pressure.cpp), against plain Python statements of the rules
(neuronxsim/nki/pressure.py's docstring) on records made up here, and its refusal of malformed
input."""

import heapq
import random

import pytest

from neuronxsim import bir
from neuronxsim.nki.record import ACCESS_AT, OP_AT, Access, Op
from neuronxsim.starfish.lib import _core

AT = tuple(OP_AT[k] for k in ("opcode_number", "fields", "ins", "outs")) + \
    tuple(ACCESS_AT[k] for k in ("sid", "offset", "pairs"))
IDLE, RANDOM = bir.AccumCmd.Idle, bir.MemsetMode.Random
ACT, PRINT, TT, MEMSET = (int(getattr(bir.InstructionType, n))
                          for n in ("Activation", "DevicePrint", "TensorTensor", "Memset"))
WHOLE = (0, 1 << 62, 0, 1 << 62)


def access(sid, offset, pairs):
    return tuple.__new__(Access, (sid, offset, pairs, None))


def op(opcode, ins, outs, fields=None):
    items = [None] * len(OP_AT)
    items[OP_AT["opcode_number"]], items[OP_AT["fields"]] = opcode, fields
    items[OP_AT["ins"]], items[OP_AT["outs"]] = ins, outs
    return tuple.__new__(Op, items)


def span(start, pairs):
    lo = hi = start
    for step, num in pairs:
        reach = (num - 1) * step
        lo, hi = (lo + reach, hi) if reach < 0 else (lo, hi + reach)
    return lo, hi


def box(facts, offset, pairs):
    on_chip, row, partitions, _, _, _ = facts
    if not on_chip:
        return (0, 0) + span(offset, pairs)
    (pstep, pnum), whole = pairs[0], (0, partitions - 1, 0, row - 1)
    if row == 0 or pstep % row:
        return whole
    p0, column = divmod(offset, row)
    lo, hi = span(column, pairs[1:])
    return whole if lo < 0 or hi >= row else span(p0, [(pstep // row, pnum)]) + (lo, hi)


def accesses(o):
    yield from ((a, False) for a in o.ins)
    yield from ((a, True) for a in o.outs)
    for value in (o.fields or {}).values():
        many = isinstance(value, (list, tuple)) and not isinstance(value, Access)
        yield from ((a, True) for a in (value if many else (value,)) if isinstance(a, Access))


def reference(ops, storages, capacities):
    """Every pair of conflicting accesses (no buckets), then the list scheduling as stated."""
    preds, seen, last_in_order = [set() for _ in ops], {}, {}
    users = [0] * len(storages)
    sids = []
    for k, o in enumerate(ops):
        fields = o.fields or {}
        orders = _core.sim.engine_orders(o.opcode_number, fields.get("acc", IDLE) != IDLE,
                                         fields.get("mode") == RANDOM)
        if orders & _core.sim.ORDER_WHOLE_BLOCK:
            return None
        for bit in (1, 2, 4, 8):
            if orders & bit:
                if bit in last_in_order:
                    preds[k].add(last_in_order[bit])
                last_in_order[bit] = k
        mine = set()
        for a, write in accesses(o):
            sid = a[0]
            if sid not in mine:
                users[sid] += 1
                mine.add(sid)
            b = WHOLE if "indirect_dim" in fields else box(storages[sid], a[1], a[2])
            for other, j, wrote in seen.setdefault(sid, []):
                if j != k and (write or wrote) and other[0] <= b[1] and b[0] <= other[1] and \
                        other[2] <= b[3] and b[2] <= other[3]:
                    preds[k].add(j)
            seen[sid].append((b, k, write))
        sids.append(sorted(s for s in mine if storages[s][4] >= 0))
    waiting, succs = [len(p) for p in preds], [[] for _ in ops]
    for k, p in enumerate(preds):
        for j in p:
            succs[j].append(k)
    started, held = [False] * len(storages), [0] * len(capacities)
    ready, deferred, order = [k for k in range(len(ops)) if not waiting[k]], {}, []

    def misfit(k):
        new = [0] * len(capacities)
        for s in sids[k]:
            if not started[s]:
                new[storages[s][4]] += storages[s][5]
        return next((m for m, size in enumerate(new) if size and held[m] + size > capacities[m]),
                    None)

    while len(order) < len(ops):
        k = None
        while ready:
            j = heapq.heappop(ready)
            m = misfit(j)
            if m is None:
                k = j
                break
            deferred.setdefault(m, []).append(j)
        if k is None:
            k = min(j for d in deferred.values() for j in d)
            next(d for d in deferred.values() if k in d).remove(k)
        order.append(k)
        for s in sids[k]:
            m, size = storages[s][4], storages[s][5]
            if not started[s]:
                started[s], held[m] = True, held[m] + size
            users[s] -= 1
            if users[s] == 0:
                held[m] -= size
                for j in deferred.pop(m, []):
                    heapq.heappush(ready, j)
        for j in succs[k]:
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(ready, j)
    return order


def random_record(rnd):
    """Tiles in two memories (rows of 64 to 4096 elements) and DRAM tensors, the accesses of
    each kind a kernel makes and some it cannot (a pattern leaving its row, a partition step that
    is not a whole row, past the extent), engine orders, indirect DMAs and field operands."""
    storages = []
    for _ in range(rnd.randrange(1, 8)):
        if rnd.random() < 0.6:
            memory = rnd.randrange(2)
            storages.append((True, rnd.choice([64, 512, 4096]), 128, 0,
                             memory if rnd.random() < 0.8 else -1, 512 * rnd.randrange(1, 9)))
        else:
            storages.append((False, 0, 0, rnd.choice([1000, 70_000]), -1, 0))

    def random_access():
        sid = rnd.randrange(len(storages))
        on_chip, row, _, elements, _, _ = storages[sid]
        if not on_chip:
            n = rnd.choice([1, 16, 600, 20_000])
            start = rnd.randrange(-10, elements + 10)
            return access(sid, start, rnd.choice([[(1, n)], [(n, 3), (1, n)], [(-1, n)]]))
        p0, pnum = rnd.randrange(128), rnd.randrange(1, 9)
        column, n = rnd.randrange(row), rnd.choice([1, 8, 64, row])
        pstep = rnd.choice([row, row, 2 * row, row + 1])
        return access(sid, p0 * row + column, [(pstep, pnum), (1, n)])

    ops = []
    for _ in range(rnd.randrange(0, 120)):
        opcode, fields = rnd.choice([(TT, None), (TT, {}), (ACT, {"acc": IDLE}),
                                     (ACT, {"acc": bir.AccumCmd.Accumulate}), (PRINT, None),
                                     (MEMSET, {"mode": bir.MemsetMode.Const})])
        if rnd.random() < 0.15:
            fields = dict(fields or {}, offsets=[random_access(), 5], extra=random_access())
        if rnd.random() < 0.05:
            fields = dict(fields or {}, indirect_dim=0)
        ins = [random_access() for _ in range(rnd.randrange(3))]
        ops.append(op(opcode, ins if rnd.random() < 0.5 else tuple(ins),
                      [random_access() for _ in range(rnd.randrange(1, 3))], fields))
    return ops, storages, [rnd.choice([2048, 8192]), 4096]


@pytest.mark.parametrize("seed", range(60))
def test_order_is_the_rules_order(seed):
    ops, storages, capacities = random_record(random.Random(seed))
    assert _core.nki.pressure_order(ops, storages, capacities, AT, Access, IDLE, RANDOM) == \
        reference(ops, storages, capacities)


def test_many_accesses_of_one_storage_meet_exactly_the_overlapping_ones():
    # (past 32 accesses a storage's are kept in buckets: narrow ones, wide ones, ones beyond the
    # extent; every overlapping earlier write must still be found)
    rnd = random.Random(7)
    storages = [(False, 0, 0, 4096, -1, 0), (True, 512, 128, 0, 0, 2048)]
    ops = []
    for k in range(300):
        start = rnd.choice([rnd.randrange(4096), -50, 4100, 0])
        n = rnd.choice([1, 4, 40, 3000])
        dram = access(0, start, [(1, n)])
        tile = access(1, rnd.randrange(128) * 512, [(512, 1), (1, rnd.choice([1, 512]))])
        ops.append(op(TT, [tile] if k % 3 else [dram], [dram] if k % 2 else [tile]))
    got = _core.nki.pressure_order(ops, storages, [16384], AT, Access, IDLE, RANDOM)
    assert got == reference(ops, storages, [16384])


def test_a_random_memset_forbids_any_reordering():
    t = access(0, 0, [(64, 1), (1, 64)])
    ops = [op(TT, [], [t]), op(MEMSET, [], [t], {"mode": RANDOM})]
    assert _core.nki.pressure_order(ops, [(True, 64, 128, 0, 0, 256)], [1024], AT, Access, IDLE,
                                    RANDOM) is None


def test_tiles_that_fit_only_in_turn_are_run_in_turn():
    # two tiles of 3 KiB each, 4 KiB of room: in program order both are live at once; the
    # second's producer waits until the first's consumer ends it
    a, b = access(0, 0, [(64, 1), (1, 64)]), access(1, 0, [(64, 1), (1, 64)])
    dram = [access(2, 64 * i, [(1, 64)]) for i in range(2)]
    ops = [op(TT, [], [a]), op(TT, [], [b]), op(TT, [a], [dram[0]]), op(TT, [b], [dram[1]])]
    storages = [(True, 64, 128, 0, 0, 3072)] * 2 + [(False, 0, 0, 128, -1, 0)]
    assert _core.nki.pressure_order(ops, storages, [4096], AT, Access, IDLE, RANDOM) == \
        [0, 2, 1, 3]


def test_malformed_records_are_refused_with_what_is_wrong():
    t = access(0, 0, [(64, 1), (1, 64)])
    chip = [(True, 64, 128, 0, 0, 256)]

    def order(ops, storages=chip, capacities=(1024,), at=AT):
        return _core.nki.pressure_order(ops, storages, list(capacities), at, Access, IDLE, RANDOM)

    with pytest.raises(TypeError, match="pressure_order\\(ops, storages"):
        _core.nki.pressure_order([], chip, [1024])
    with pytest.raises(TypeError, match="ops and capacities must be lists"):
        _core.nki.pressure_order((), chip, [1024], AT, Access, IDLE, RANDOM)
    with pytest.raises(TypeError, match="an op must be a tuple"):
        order([op(TT, [], [t])[:3]])
    with pytest.raises(IndexError, match="storage number 3 of 1"):
        order([op(TT, [], [access(3, 0, [(64, 1)])])])
    with pytest.raises(ValueError, match="memory 2 of 1"):
        order([], [(True, 64, 128, 0, 2, 256)])
    with pytest.raises(ValueError, match="no opcode number 100000"):
        order([op(100000, [], [t])])
    with pytest.raises(TypeError, match="a pair must have two items"):
        order([op(TT, [], [access(0, 0, [(64, 1, 2)])])])
    with pytest.raises(ValueError, match="an on-chip access has no partition pair"):
        order([op(TT, [], [access(0, 0, [])])])
    with pytest.raises(TypeError, match="fields must be a dict or None"):
        order([op(TT, [], [t], fields=[1])])
    with pytest.raises(ValueError, match="a position must not be negative"):
        order([], at=(-1,) + AT[1:])
