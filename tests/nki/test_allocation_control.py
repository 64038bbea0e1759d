"""nki.compiler and block dimensions: direct allocation (ncc.sbuf/psum.alloc and mod_alloc) puts
each logical block where the kernel says, blocks sharing memory must not be live together, and
an on-chip tensor's blocks are allocated one by one by their live ranges."""

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.compiler as ncc
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim import bir
from nki_testing import close, run_on

T = nki.typing.tensor


def _locations(module, kind):
    return {s.location.name: s.location for s in module.functions[0].allocations
            if s.location.type == kind}


@nki.jit
def double_buffered_exp(a):
    """exp of [128, 4*512] through a 4-block SBUF tensor on two physical tiles at 4096."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    n = a.shape[1] // 512
    t = nl.ndarray((n, nl.par_dim(128), 512), dtype=a.dtype,
                   buffer=ncc.sbuf.mod_alloc(base_addr=4096, num_free_tiles=(2,)), name="t")
    e = nl.ndarray((n, nl.par_dim(128), 512), dtype=a.dtype,
                   buffer=ncc.sbuf.mod_alloc(base_addr=8192, num_free_tiles=(2,)), name="e")
    for i in nl.affine_range(n):
        t[i] = nl.load(a[:, i * 512:(i + 1) * 512])
        e[i] = nl.exp(t[i])
        nl.store(out[:, i * 512:(i + 1) * 512], e[i])
    return out


def test_mod_alloc_places_blocks_by_the_documented_modulo_scheme(executor, rng):
    a = rng.standard_normal((128, 2048)).astype(np.float32)
    module = nki.trace(double_buffered_exp, a)
    sb = _locations(module, bir.MemoryType.SB)
    # logical block i on physical tile i % 2: byte 4096 + (i % 2) * 512 * 4
    assert {n: sb[n].addr for n in sb if n.startswith("t[")} == {
        "t[0]": 4096, "t[1]": 6144, "t[2]": 4096, "t[3]": 6144}
    assert {sb[n].addr for n in sb if n.startswith("e[")} == {8192, 10240}
    close(run_on(executor, double_buffered_exp, a), np.exp(a), atol=1e-6, rtol=1e-6)


def test_alloc_with_a_function_and_psum_banks(rng):
    @nki.jit
    def kernel(a):
        out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        x = nl.ndarray((nl.par_dim(64), 128), dtype=a.dtype,
                       buffer=ncc.sbuf.alloc(lambda idx, pdim_size, fdim_size: (64, 512)), name="x")
        x[...] = nl.load(a)
        ps = nl.ndarray((2, nl.par_dim(128), 64), dtype=nl.float32,
                        buffer=ncc.psum.mod_alloc(base_bank=3, num_bank_tiles=(2,)), name="ps")
        for j in nl.affine_range(2):
            ps[j] = nisa.nc_matmul(x[:, 0:128], x[:, j * 64:j * 64 + 64])
            nl.store(out[:, j * 64:(j + 1) * 64], nl.copy(ps[j]))
        return out

    a = rng.standard_normal((64, 128)).astype(np.float32)
    module = nki.trace(kernel, a)
    x = _locations(module, bir.MemoryType.SB)["x"]
    assert (x.base_partition, x.partitions, x.addr) == (64, 64, 512)
    ps = _locations(module, bir.MemoryType.PSUM)
    assert (ps["ps[0]"].addr, ps["ps[1]"].addr) == (3 * 2048, 4 * 2048)
    close(nki.simulate_kernel(kernel, a), a.T @ a, atol=1e-4, rtol=1e-5)


def test_blocks_sharing_a_physical_tile_must_not_be_live_together():
    @nki.jit
    def conflict(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((4, nl.par_dim(128), 512), dtype=a.dtype,
                       buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,)))
        for i in nl.affine_range(4):
            t[i] = nl.load(a[:, i * 512:(i + 1) * 512])  # LINE:late
        for i in nl.affine_range(4):  # every block still needed: only two can exist
            nl.store(out[:, i * 512:(i + 1) * 512], t[i])
        return out

    with pytest.raises(nki.NKIAllocationError, match=r"SBUF lifetime conflict: tile "
                                                     r"'ndarray' .* still holds") as info:
        nki.trace(conflict, T[[128, 2048], nl.float32])
    assert info.value.location.path == __file__


@pytest.mark.parametrize("buffer,message", [
    (lambda: ncc.sbuf.alloc(lambda idx, pdim_size, fdim_size: (32, 0)), "starts at partition 32"),
    (lambda: ncc.sbuf.alloc(lambda idx, pdim_size, fdim_size: (0, 196608)), "SBUF has 196608"),
    (lambda: ncc.sbuf.alloc(lambda idx, pdim_size, fdim_size: 0), "must be \\(start_partition, byte_addr\\)"),
    (lambda: ncc.psum.alloc(lambda idx, pdim_size, fdim_size: (9, 0, 0)), "PSUM bank 9"),
    (lambda: ncc.sbuf.mod_alloc(base_addr=-64), "base_addr must be a non-negative integer"),
    (lambda: ncc.psum.mod_alloc(base_addr=0), "needs base_bank"),
])
def test_bad_placements_are_refused_at_the_kernel_line(buffer, message):
    @nki.jit
    def kernel(a):
        t = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=buffer())
        t[...] = nl.load(a)
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, t)
        return out

    with pytest.raises(nki.NKIError, match=message) as info:
        nki.trace(kernel, T[[128, 512], nl.float32])
    assert info.value.location.path == __file__


def test_force_auto_alloc_and_the_pass_through_decorators(rng):
    kernel = ncc.force_auto_alloc(ncc.skip_middle_end_transformations(
        ncc.enable_stack_allocator(double_buffered_exp, log_level=20)))
    a = rng.standard_normal((128, 1024)).astype(np.float32)
    module = nki.trace(kernel, a)
    addrs = [loc.addr for loc in _locations(module, bir.MemoryType.SB).values()]
    assert 4096 not in addrs or 8192 not in addrs  # the allocator's own places
    close(nki.simulate_kernel(kernel, a), np.exp(a), atol=1e-6, rtol=1e-6)
    assert ncc.sbuf == nl.sbuf == "sbuf" and ncc.psum.auto_alloc() == nl.psum


@nki.jit
def many_psum_blocks(a):
    """16 PSUM blocks of 2 KiB (twice the 16 KiB of PSUM), each live for one iteration."""
    out = nl.ndarray((128, 16 * 512), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    acc = nl.ndarray((16, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
    for i in nl.affine_range(16):
        acc[i] += nisa.nc_matmul(x[:, 0:128], x)  # into a fresh ndarray: starts the group
        acc[i] += nisa.nc_matmul(x[:, 128:256], x)
        nl.store(out[:, i * 512:(i + 1) * 512], nl.copy(acc[i]))
    return out


def test_block_dimensions_are_allocated_per_block_by_live_range(executor, rng):
    a = (rng.standard_normal((128, 512)) / 8).astype(np.float32)
    traced = nki.trace_kernel(many_psum_blocks, a)
    assert traced.psum_peak_bytes[0] <= 8 * 2048
    mms = [i for i in traced.module.functions[0].blocks[0].instructions
           if i.opcode_name == "Matmult"]
    assert [(m.start_tensor_calc, m.stop_tensor_calc) for m in mms[:2]] == [(True, False),
                                                                          (False, True)]
    ref = a[:, 0:128].T @ a + a[:, 128:256].T @ a
    close(run_on(executor, many_psum_blocks, a), np.tile(ref, 16), atol=1e-4, rtol=1e-5)


def test_a_view_across_blocks_is_refused():
    @nki.jit
    def kernel(a):
        t = nl.ndarray((2, nl.par_dim(128), 512), dtype=nl.float32)
        return nl.exp(t[0:2])

    with pytest.raises(nki.NKIError, match="index each one with an integer"):
        nki.trace(kernel, T[[128, 512], nl.float32])


def test_loop_directives_are_recorded(rng):
    from neuronxsim.nki.kernel import record_kernel

    @nki.jit
    def kernel(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        for i in nl.sequential_range(2, directives=ncc.no_reorder()):
            for j in nl.affine_range(2, directives=(ncc.multi_buffer(3),)):
                nl.store(out[i * 64 + j * 32:i * 64 + j * 32 + 32], nl.load(a[0:32]))
        return out

    ops = record_kernel(kernel, (T[[128, 8], nl.float32],), {}, "trn1").tracer.cores[0].record.ops
    outer, inner = ops[0].loop.nest()
    assert [d.kind for d in outer.loop.directives] == ["no_reorder"]
    assert [(d.kind, d.factor) for d in inner.loop.directives] == [("multi_buffer", 3)]
    with pytest.raises(nki.NKIError, match="directives takes"):
        nki.trace(nki.jit(lambda a: [x for x in nl.affine_range(2, directives="fast")]),
                  T[[8, 8], nl.float32])


def test_an_address_computed_in_a_loop_body_is_computed_once(executor, rng):
    """NKI traces an affine_range body once: ``cur`` grows once, not per iteration (per
    iteration, 64 iterations of 4 KiB would pass the end of SBUF)."""
    @nki.jit
    def kernel(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        cur = 0
        for i in nl.affine_range(a.shape[0] // 128):
            t = nl.ndarray((nl.par_dim(128), 1024), dtype=a.dtype,
                           buffer=ncc.sbuf.mod_alloc(base_addr=cur), name="t")
            cur += 1024 * 4
            u = nl.ndarray((nl.par_dim(128), 1024), dtype=a.dtype,
                           buffer=ncc.sbuf.mod_alloc(base_addr=cur), name="u")
            cur += 1024 * 4
            t[...] = nl.load(a[i * 128:(i + 1) * 128, :])
            u[...] = nl.exp(t)
            nl.store(out[i * 128:(i + 1) * 128, :], u)
        return out

    a = rng.standard_normal((64 * 128, 1024)).astype(np.float32) / 4
    sb = _locations(nki.trace(kernel, a), bir.MemoryType.SB)
    assert {n[0]: sb[n].addr for n in sb} == {"t": 0, "u": 4096}
    close(run_on(executor, kernel, a), np.exp(a), atol=1e-6, rtol=1e-6)


def test_placed_memory_may_be_read_before_this_tensor_writes_it(rng):
    """A masked-out matmul leaves a directly allocated PSUM tile as it was: reading it is reading
    that memory (what the iteration before left), not an error; an auto-allocated tile nothing
    wrote is still refused."""
    @nki.jit
    def kernel(a):
        out = nl.ndarray((2, 128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        x = nl.load(a)
        for g in nl.affine_range(2):
            ps = nl.ndarray((nl.par_dim(128), 128), dtype=nl.float32,
                            buffer=ncc.psum.mod_alloc(base_bank=0))
            ps[...] = nisa.nc_matmul(x, x, mask=(g < 1))
            nl.store(out[g], nl.copy(ps))
        return out

    a = rng.standard_normal((128, 128)).astype(np.float32)
    got = nki.simulate_kernel(kernel, a)
    close(got[0], a.T @ a, atol=1e-4, rtol=1e-5)
    close(got[1], a.T @ a, atol=1e-4, rtol=1e-5)  # (the same bank, as the first left it)

    @nki.jit
    def unplaced(a):
        out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        ps = nl.ndarray((nl.par_dim(128), 128), dtype=nl.float32, buffer=nl.psum)
        nl.store(out, nl.copy(ps))
        return out

    with pytest.raises(nki.NKIError, match="before anything writes it"):
        nki.trace(unplaced, a)


def test_indexing_some_block_dimensions_gives_the_remaining_blocks(executor, rng):
    def row_sums(blocks, out, i):
        for j in nl.affine_range(2):
            blocks[j][...] = nl.load(out[i, j]) * 2.0

    @nki.jit
    def kernel(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((3, 2, nl.par_dim(128), 64), dtype=a.dtype)
        for i in nl.affine_range(3):
            row_sums(t[i], a, i)  # t[i]: the 2 blocks of row i
            for j in nl.affine_range(2):
                nl.store(out[i, j], t[i, j])
        return out

    a = rng.standard_normal((3, 2, 128, 64)).astype(np.float32)
    close(run_on(executor, kernel, a), 2 * a, atol=0)
