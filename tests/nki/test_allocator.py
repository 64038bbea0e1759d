"""SBUF/PSUM allocation by live range: iterations reuse space, what is live at once must fit,
overlapping lifetimes never share bytes, PSUM tiles sit in their own banks."""

import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.language as nl
import tutorial_kernels as tk
from neuronxsim import bir


@nki.jit
def streaming(a):
    """Each iteration loads a 32 KiB/partition tile, uses it and drops it."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[1] // 8192):
        t = nl.load(a[:, i * 8192:(i + 1) * 8192])
        nl.store(out[:, i * 8192:(i + 1) * 8192], nl.exp(t))
    return out


@nki.jit
def hoarding(a, live):
    """Keeps `live` 32 KiB/partition tiles alive together (summed at the end)."""
    out = nl.ndarray((a.shape[0], 8192), dtype=a.dtype, buffer=nl.shared_hbm)
    tiles = [nl.load(a[:, i * 8192:(i + 1) * 8192]) for i in range(live)]
    acc = tiles[0]
    for t in tiles[1:]:
        acc = acc + t
    nl.store(out, acc)
    return out


def test_loop_iterations_reuse_sbuf():
    a = nki.typing.tensor[[128, 8192 * 20], nl.float32]  # 640 KiB per partition in total
    traced = nki.trace_kernel(streaming, a)
    assert traced.sbuf_peak_bytes[0] <= 2 * 32768  # one input and one result live at a time


def test_what_is_live_at_once_must_fit_or_is_spilled():
    a = nki.typing.tensor[[128, 8192 * 8], nl.float32]
    traced = nki.trace_kernel(hoarding, a, 5)  # 5 loads + the running sum: 192 KiB, just fits
    assert traced.sbuf_peak_bytes[0] == 6 * 32768 and traced.spills[0]["stores"] == 0
    traced = nki.trace_kernel(hoarding, a, 6)  # one tile more: one goes to HBM and comes back
    assert traced.sbuf_peak_bytes[0] == 6 * 32768
    assert traced.spills[0] == {"stores": 1, "reloads": 1, "bytes": 2 * 128 * 32768}


def test_trn2_has_more_sbuf():
    a = nki.typing.tensor[[128, 8192 * 8], nl.float32]
    assert nki.trace_kernel(hoarding, a, 6, arch="trn1").spills[0]["stores"] == 1
    traced = nki.trace_kernel(hoarding, a, 6, arch="trn2")  # 224 KiB per partition
    assert traced.module.arch == "gen3" and traced.sbuf_peak_bytes[0] == 7 * 32768
    assert traced.spills[0]["stores"] == 0


@nki.jit
def psum_tiles(a, live):
    out = nl.ndarray((128, 128 * live), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(a)
    results = [nl.matmul(t, t, transpose_x=True) for _ in range(live)]
    for i, r in enumerate(results):
        nl.store(out[:, i * 128:(i + 1) * 128], nl.copy(r))
    return out


def test_psum_has_eight_banks():
    a = nki.typing.tensor[[128, 128], nl.float32]
    module = nki.trace(psum_tiles, a, 8)
    psum = [s.location for s in module.functions[0].allocations
            if s.location.type == bir.MemoryType.PSUM]
    assert sorted(l.addr for l in psum) == [2048 * i for i in range(8)]
    assert {l.bank for l in psum} == set(range(8))
    assert nki.trace_kernel(psum_tiles, a, 8).spills[0]["stores"] == 0
    with pytest.raises(nki.NKIAllocationError,
                       match="PSUM overflow: .*PSUM tiles are not spilled"):
        nki.trace(psum_chain, a, 9)  # (PSUM is not spilled: DMA does not reach it)


def _live_ranges(module):
    """location name -> (first, last) instruction index and its (space, partitions, bytes)."""
    spans = {}
    insts = module.functions[0].blocks[0].instructions
    for i, inst in enumerate(insts):
        for ap in list(inst.ins) + list(inst.outs):
            loc = ap.location
            if ap.is_immediate or loc.type not in (bir.MemoryType.SB, bir.MemoryType.PSUM):
                continue
            first, _ = spans.get(loc.name, (i, i))
            spans[loc.name] = (first, i)
    locs = {s.location.name: s.location for s in module.functions[0].allocations}
    return {n: (span, locs[n]) for n, span in spans.items()}


T = nki.typing.tensor


@pytest.mark.parametrize("kernel,args", [
    (tk.matmul_tiled, (T[[512, 256], nl.bfloat16], T[[512, 1024], nl.bfloat16])),
    (tk.mamba_v2, (T[[1, 256, 512], nl.float32], T[[1, 256, 512], nl.float32],
                   T[[256, 4], nl.float32], T[[1, 4, 512], nl.float32],
                   T[[1, 4, 512], nl.float32])),
    (tk.layernorm_v2, (T[[300, 1024], nl.float32], 1e-5, T[[1024], nl.float32],
                       T[[1024], nl.float32])),
], ids=["matmul", "mamba", "layernorm"])
def test_tiles_live_at_once_never_share_bytes(kernel, args):
    spans = list(_live_ranges(nki.trace(kernel, *args)).values())
    assert len(spans) > 4
    for i, ((f1, l1), a) in enumerate(spans):
        for (f2, l2), b in spans[i + 1:]:
            if a.type != b.type or l1 < f2 or l2 < f1:
                continue
            assert a.addr + a.bytes_per_partition <= b.addr or \
                b.addr + b.bytes_per_partition <= a.addr, (a.name, b.name)


@nki.jit
def blocked_psum_minus_row_max(a, b, keep_order=False):
    """a.T @ b minus each row's maximum, as the attention tutorial's v3 computes softmax's first
    step: every block of a block-dimension PSUM tensor written in one loop nest, read in the two
    after it. In program order all blocks are live at once; per row of blocks, a few."""
    K, M = a.shape
    N = b.shape[1]
    MT, NT = -(-M // 128), -(-N // 512)
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    a_sb = nl.load(a)
    b_sb = nl.load(b)
    ps = nl.ndarray((MT, NT, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
    directives = (nki.compiler.no_reorder(),) if keep_order else None
    for i in nl.affine_range(MT, directives=directives):
        m = min(128, M - i * 128)
        for j in nl.affine_range(NT):
            n = min(512, N - j * 512)
            ps[i, j, 0:m, 0:n] = nki.isa.nc_matmul(a_sb[:, nl.ds(i * 128, m)],
                                                b_sb[:, nl.ds(j * 512, n)])
    row_max = nl.ndarray((nl.par_dim(128), MT), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(MT):
        m = min(128, M - i * 128)
        tile_max = nl.ndarray((nl.par_dim(128), NT), dtype=nl.float32, buffer=nl.sbuf)
        for j in nl.affine_range(NT):
            n = min(512, N - j * 512)
            tile_max[0:m, j:j + 1] = nki.isa.tensor_reduce(nl.max, ps[i, j, 0:m, 0:n], axis=1,
                                                        keepdims=True)
        row_max[0:m, i:i + 1] = nki.isa.tensor_reduce(nl.max, tile_max[0:m, 0:NT], axis=1,
                                                   keepdims=True)
    for i in nl.affine_range(MT):
        m = min(128, M - i * 128)
        for j in nl.affine_range(NT):
            n = min(512, N - j * 512)
            shifted = nki.isa.tensor_scalar(ps[i, j, 0:m, 0:n], nl.subtract, row_max[0:m, i:i + 1])
            nl.store(out[nl.ds(i * 128, m), nl.ds(j * 512, n)], shifted)
    return out


@pytest.mark.parametrize("k,m,n", [(128, 300, 1100), (96, 520, 700), (128, 384, 1536)])
def test_tiles_that_fit_only_reordered_are_reordered(executor, k, m, n):
    import numpy as np
    from nki_testing import close, run_on
    # 9, 10 and 9 PSUM blocks of 2 KiB, live at once in program order: more than PSUM's 16 KiB
    rng = np.random.default_rng(m + n)
    a = rng.uniform(-1, 1, (k, m)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    product = a.T.astype(np.float64) @ b
    close(run_on(executor, blocked_psum_minus_row_max, a, b),
          product - product.max(axis=1, keepdims=True), atol=1e-4, rtol=1e-5)
    # the nests ran per row of blocks: a subtraction before the last matmul
    insts = nki.trace(blocked_psum_minus_row_max, a, b).functions[0].blocks[0].instructions
    names = [i.opcode_name for i in insts]
    assert names.index("TensorScalarPtr") < len(names) - 1 - names[::-1].index("Matmult")


def test_no_reorder_keeps_program_order_and_its_refusal():
    a = nki.typing.tensor[[128, 300], nl.float32]
    b = nki.typing.tensor[[128, 1100], nl.float32]
    with pytest.raises(nki.NKIAllocationError, match="PSUM overflow: tile 'ndarray' .* held by 8 "
                       "tiles live at that moment"):
        nki.trace(blocked_psum_minus_row_max, a, b, True)


def test_where_no_order_fits_the_refusal_is_the_program_order_one():
    from neuronxsim.nki import pressure
    a = nki.typing.tensor[[128, 128], nl.float32]
    with pytest.raises(nki.NKIAllocationError) as reordered:
        nki.trace(psum_chain, a, 9)
    # the same words as the allocation of the program order, before any reordering
    failing = pressure.PressureSchedule.run
    first = []

    def keep_first(self, program):
        first.append(str(program.refusal[1]))
        return failing(self, program)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(pressure.PressureSchedule, "run", keep_first)
        with pytest.raises(nki.NKIAllocationError):
            nki.trace(psum_chain, a, 9)
    assert str(reordered.value) == first[0]
    assert "held by 8 tiles live at that moment" in first[0]


@nki.jit
def psum_chain(a, live):
    """``live`` PSUM tiles, each computed from a copy of the one before and all read with the
    last one's copy: whatever the order, all are live at once."""
    out = nl.ndarray((128, 128 * live), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(a)
    results = []
    for _ in range(live):
        results.append(nl.matmul(t, t, transpose_x=True))
        t = nl.copy(results[-1])
    for i, r in enumerate(results):
        nl.store(out[:, i * 128:(i + 1) * 128], nl.add(r, t))
    return out


@nki.jit
def overwritten_after_a_held_back_matmul(a, b):
    """The ninth matmul must wait for a PSUM bank; the load that overwrites its operand comes
    after it in program order and must stay after it (a write after read), while the copies that
    free the banks come later still."""
    out = nl.ndarray((10 * 128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    ps = nl.ndarray((9, nl.par_dim(128), 128), dtype=nl.float32, buffer=nl.psum)
    s = nl.ndarray((nl.par_dim(128), 128), dtype=nl.float32, buffer=nl.sbuf)
    s[...] = nl.load(a)
    for i in nl.affine_range(9):
        ps[i] = nki.isa.nc_matmul(s, s)
    s[...] = nl.load(b)
    for i in nl.affine_range(9):
        nl.store(out[i * 128:(i + 1) * 128], nl.copy(ps[i]))
    nl.store(out[9 * 128:], s)
    return out


def test_a_held_back_instruction_keeps_its_dependencies(executor):
    import numpy as np
    from nki_testing import close, run_on
    rng = np.random.default_rng(9)
    a, b = (rng.uniform(-1, 1, (128, 128)).astype(np.float32) for _ in range(2))
    product = a.T.astype(np.float64) @ a
    close(run_on(executor, overwritten_after_a_held_back_matmul, a, b),
          np.concatenate([product] * 9 + [b]), atol=1e-4, rtol=1e-5)


def test_a_kernel_that_fits_only_reordered_says_so():
    import numpy as np
    a = np.ones((128, 300), np.float32)
    b = np.ones((128, 1100), np.float32)
    profile = nki.profile_kernel(blocked_psum_minus_row_max, a, b, mode="timing")
    (moved,) = profile.traced.reordered
    assert moved > 0
    assert f"reordered to fit: {moved} instructions moved out of program order" in \
        profile.summary()
    # what fits in program order is not reordered, and its summary says nothing of it
    fits = nki.profile_kernel(blocked_psum_minus_row_max, a[:, :128], b[:, :512], mode="timing")
    assert fits.traced.reordered == [0]
    assert "reordered" not in fits.summary()


@nki.jit
def spilled_then_reordered(a, x, n):
    """SBUF tiles that fit only spilled (n tiles of 4096 fp32 live at once), then nine PSUM
    tiles that fit only reordered: the SBUF spills placed before the PSUM refusal are placed
    again with the reordered program."""
    width = 4096
    out = nl.ndarray((a.shape[0], width), dtype=a.dtype, buffer=nl.shared_hbm)
    out2 = nl.ndarray((9, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    tiles = [nl.load(a[:, i * width:(i + 1) * width]) for i in range(n)]
    acc = tiles[-1]
    for t in tiles[-2::-1]:
        acc = nl.add(acc, t)
    nl.store(out, acc)
    xs = nl.load(x)
    ps = nl.ndarray((9, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
    for i in nl.affine_range(9):
        ps[i] = nki.isa.nc_matmul(xs[:, 0:128], xs)
    for i in nl.affine_range(9):
        nl.store(out2[i], nl.copy(ps[i]))
    return out, out2


def test_spills_and_reordering_together_stay_exact_and_leave_no_stray_storage(monkeypatch):
    import numpy as np
    from neuronxsim.bir import target
    from neuronxsim.nki import emit
    n = target.config("trn1").sbuf_bytes_per_partition // (4096 * 4) + 1  # two over
    rng = np.random.default_rng(3)
    a = rng.random((16, n * 4096)).astype(np.float32)
    x = rng.random((128, 512)).astype(np.float32)
    programs = []
    emission = emit.Emission.run
    monkeypatch.setattr(emit.Emission, "run",
                        lambda self, program: (programs.append(program), emission(self, program)))
    profile = nki.profile_kernel(spilled_then_reordered, a, x, n)
    (spills,) = profile.traced.spills
    assert spills["stores"] > 0 and profile.traced.reordered[0] > 0
    # every storage the passes added is one the program uses (none from the refused attempt)
    (program,) = programs
    added = range(len(program.record.storages), len(program.storages))
    assert len(added) > 0 and all(program.first_use[sid] >= 0 for sid in added)
    out, out2 = profile.outputs.values()
    expected = a.reshape(16, n, 4096)[:, n - 1]
    for i in range(n - 2, -1, -1):
        expected = expected + a.reshape(16, n, 4096)[:, i]
    np.testing.assert_array_equal(out, expected)  # the same adds in the same order: exact
    product = x[:, :128].T.astype(np.float64) @ x
    np.testing.assert_allclose(out2, np.broadcast_to(product, (9, 128, 512)), atol=1e-4, rtol=1e-5)
