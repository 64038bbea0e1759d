"""SBUF spilling: tiles that do not fit go to DRAM and come back before their next use, with
exact numerics and the transfers charged as DMA time; what no spill can fit is refused."""

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.compiler as ncc
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim import sim
from neuronxsim.bir import target
from neuronxsim.nki.allocator import Allocation
from neuronxsim.nki.passes import PIPELINE

SBUF_BYTES = target.config("trn1").sbuf_bytes_per_partition
WIDTH = 4096  # fp32 elements per partition of each tile: 16 KiB


@nki.jit
def held_then_summed(a, n):
    """Loads n tiles, all live together, then sums them in reverse order of loading: the live
    set is n + 1 tiles of WIDTH fp32 per partition."""
    out = nl.ndarray((a.shape[0], WIDTH), dtype=a.dtype, buffer=nl.shared_hbm)
    tiles = [nl.load(a[:, i * WIDTH:(i + 1) * WIDTH]) for i in range(n)]
    acc = tiles[-1]
    for t in tiles[-2::-1]:
        acc = nl.add(acc, t)
    nl.store(out, acc)
    return out


@nki.jit
def summed_as_loaded(a, n):
    """The same sum with each tile added as it arrives: two tiles live at a time, no spill."""
    out = nl.ndarray((a.shape[0], WIDTH), dtype=a.dtype, buffer=nl.shared_hbm)
    acc = nl.load(a[:, (n - 1) * WIDTH:n * WIDTH])
    for i in range(n - 2, -1, -1):
        acc = nl.add(acc, nl.load(a[:, i * WIDTH:(i + 1) * WIDTH]))
    nl.store(out, acc)
    return out


def _expected(a, n):
    parts = a.reshape(a.shape[0], n, WIDTH)
    acc = parts[:, n - 1]
    for i in range(n - 2, -1, -1):
        acc = acc + parts[:, i]
    return acc


def _fitting(n_extra):
    """The tile count whose live set is ``n_extra`` tiles more than SBUF holds."""
    return SBUF_BYTES // (WIDTH * 4) - 1 + n_extra


@pytest.mark.parametrize("extra", [1, 12], ids=["a-little", "a-lot"])
def test_a_live_set_larger_than_sbuf_spills_and_stays_exact(extra, rng):
    n = _fitting(extra)
    a = rng.standard_normal((16, n * WIDTH)).astype(np.float32)
    profile = nki.profile_kernel(held_then_summed, a, n)
    (out,) = profile.outputs.values()
    np.testing.assert_array_equal(out, _expected(a, n))  # same adds in the same order: exact
    (spills,) = profile.traced.spills
    assert spills["stores"] >= extra and spills["reloads"] >= extra
    assert spills["bytes"] == (spills["stores"] + spills["reloads"]) * 16 * WIDTH * 4
    assert profile.traced.sbuf_peak_bytes[0] <= SBUF_BYTES
    assert f"SBUF spills: {spills['stores']} stores and {spills['reloads']} reloads" in \
        profile.summary()


def test_what_fits_does_not_spill(rng):
    n = _fitting(0)
    traced = nki.trace_kernel(held_then_summed, nki.typing.tensor[[16, n * WIDTH], nl.float32],
                              n)
    assert traced.spills == [{"stores": 0, "reloads": 0, "bytes": 0}]


@nki.jit
def loaded_when_needed(a, n, late):
    """held_then_summed with its first ``late`` tiles loaded only when the sum reaches them:
    the same loads and adds in the same order, and a live set that fits."""
    out = nl.ndarray((a.shape[0], WIDTH), dtype=a.dtype, buffer=nl.shared_hbm)
    tiles = [None] * late + [nl.load(a[:, i * WIDTH:(i + 1) * WIDTH]) for i in range(late, n)]
    acc = tiles[-1]
    for i in range(n - 2, -1, -1):
        t = tiles[i] if i >= late else nl.load(a[:, i * WIDTH:(i + 1) * WIDTH])
        acc = nl.add(acc, t)
    nl.store(out, acc)
    return out


def _spill_transfers(traced):
    insts = traced.module.functions[0].blocks[0].instructions
    return [i for i in insts
            if any("_spill" in ap.location.name for ap in list(i.ins) + list(i.outs))]


@pytest.mark.parametrize("extra", [1, 12], ids=["a-little", "a-lot"])
def test_the_spill_traffic_is_charged_as_dma_time(extra):
    n = _fitting(extra)
    spec = nki.typing.tensor[[16, n * WIDTH], nl.float32]
    spilled = nki.profile_kernel(held_then_summed, spec, n, mode="timing")
    fitting = nki.profile_kernel(loaded_when_needed, spec, n, extra, mode="timing")
    assert fitting.traced.spills[0]["stores"] == 0
    transfers = _spill_transfers(spilled.traced)
    assert len(transfers) == spilled.traced.spills[0]["stores"] + spilled.traced.spills[0][
        "reloads"]
    costs = [sim.latency(i, "trn1") for i in transfers]
    # A spill store must end before its bytes are reused, and the reload before the next use:
    # at least one whole transfer (fixed cost + transfer) lies on the critical path, and all
    # spill bytes pass the core's HBM port.
    one = max(c["dma_latency_ns"] + c["dma_transfer_ns"] for c in costs)
    hbm = sum(c["dma_hbm_ns"] for c in costs)
    assert spilled.total_ns - fitting.total_ns >= max(one, hbm)


def test_refusing_instead_of_spilling():
    from neuronxsim.nki.kernel import _trace  # (the pipeline is not a user option)
    n = _fitting(1)
    spec = nki.typing.tensor[[16, n * WIDTH], nl.float32]
    refusing = tuple(Allocation(spill=False) if isinstance(p, Allocation) else p
                     for p in PIPELINE)
    with pytest.raises(nki.NKIAllocationError, match="SBUF overflow: .* are held by"):
        _trace(held_then_summed, (spec, n), "trn1", {}, None, pipeline=refusing)


@nki.jit
def one_huge_tile(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)  # the line the refusal names
    nl.store(out, nl.exp(t))
    return out


def test_one_tile_larger_than_sbuf_is_refused_with_its_line():
    spec = nki.typing.tensor[[128, SBUF_BYTES // 4 + 16], nl.float32]
    with pytest.raises(nki.NKIAllocationError) as info:
        nki.trace(one_huge_tile, spec)
    msg = str(info.value)
    assert f"more than the {SBUF_BYTES} bytes per partition SBUF has" in msg
    assert "no spill can make one tile fit" in msg
    with open(__file__) as f:
        line = next(i for i, text in enumerate(f, 1) if "# the line the refusal names" in text)
    assert (info.value.location.path, info.value.location.line) == (__file__, line)


@nki.jit
def placed_by_the_kernel(a, n):
    """n tiles the kernel places itself (mod_alloc), all live, then one more tile."""
    out = nl.ndarray((a.shape[0], WIDTH), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((n, nl.par_dim(a.shape[0]), WIDTH), dtype=a.dtype,
                   buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(n,)))
    for i in range(n):
        t[i] = nl.load(a[:, i * WIDTH:(i + 1) * WIDTH])
    acc = nl.add(t[0], t[1])
    for i in range(2, n):
        acc = nl.add(acc, t[i])
    nl.store(out, acc)
    return out


def test_tiles_the_kernel_placed_are_never_spilled():
    n = SBUF_BYTES // (WIDTH * 4)  # the whole SBUF, placed by the kernel
    with pytest.raises(nki.NKIAllocationError, match="none of them can be spilled: the kernel "
                                                     r"placed them \(nki.compiler allocations"):
        nki.trace(placed_by_the_kernel, nki.typing.tensor[[16, n * WIDTH], nl.float32], n)


@nki.jit
def summed_in_rounds(a, n, rounds):
    """Each round adds tile 0 once, then tiles 1..n-1 twice, all live throughout: tile 0 is
    the one next used furthest away after each round's first add, so it is evicted in each
    round and comes back, only read, for the next."""
    out = nl.ndarray((a.shape[0], WIDTH), dtype=a.dtype, buffer=nl.shared_hbm)
    tiles = [nl.load(a[:, i * WIDTH:(i + 1) * WIDTH]) for i in range(n)]
    acc = nl.add(tiles[0], tiles[1])
    for _ in range(rounds):
        acc = nl.add(acc, tiles[0])
        for _ in range(2):
            for t in tiles[1:]:
                acc = nl.add(acc, t)
    nl.store(out, acc)
    return out


def test_a_reloaded_tile_evicted_unchanged_is_not_stored_again(rng):
    n, rounds = _fitting(0), 3
    a = rng.standard_normal((4, n * WIDTH)).astype(np.float32)
    profile = nki.profile_kernel(summed_in_rounds, a, n, rounds)
    parts = [a[:, i * WIDTH:(i + 1) * WIDTH] for i in range(n)]
    acc = parts[0] + parts[1]
    for _ in range(rounds):
        acc = acc + parts[0]
        for _ in range(2):
            for t in parts[1:]:
                acc = acc + t
    np.testing.assert_array_equal(next(iter(profile.outputs.values())), acc)
    (spills,) = profile.traced.spills
    assert 0 < spills["stores"] < spills["reloads"]
    assert spills["bytes"] == (spills["stores"] + spills["reloads"]) * 4 * WIDTH * 4
