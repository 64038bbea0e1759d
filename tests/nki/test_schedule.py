"""The scheduling pass (neuronxsim/nki/schedule.py, cpp/sim/ListSchedule.cpp): each engine's
queue interleaves independent work as the NKI compiler's scheduler does, the outputs stay the same
bits (every kernel run_on runs is also checked against its source-order run, nki_testing.py), and
what memory does not show keeps its order."""

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
import neuronxsim.nki.typing as nt
from neuronxsim import bir, sim
from neuronxsim.nki.schedule import Schedule
from neuronxsim.sim.build import ModuleBuilder

import tutorial_kernels as tk
from nki_testing import assert_same_bits, run_on


def _mamba_args(channels=256, seq=512, states=4):
    f32 = nl.float32
    return (nt.tensor[[1, channels, seq], f32], nt.tensor[[1, channels, seq], f32],
            nt.tensor[[channels, states], f32], nt.tensor[[1, states, seq], f32],
            nt.tensor[[1, states, seq], f32])


def test_the_scheduled_kernel_is_faster_and_each_engine_keeps_its_dependencies():
    """mamba_v2's state loop (affine_range): in source order each state's VectorE chain waits for
    its own broadcasts and scan; scheduled, the next state's independent work fills the gaps."""
    source = nki.trace(tk.mamba_v2, *_mamba_args(), schedule="source")
    compiler = nki.trace(tk.mamba_v2, *_mamba_args())
    t_source = sim.simulate(source, mode="timing").total_ns
    t_compiler = sim.simulate(compiler, mode="timing").total_ns
    assert t_compiler < 0.9 * t_source
    names = lambda m: [i.name for i in m.functions[0].blocks[0].instructions]  # noqa: E731
    assert sorted(names(source)) == sorted(names(compiler)) and names(source) != names(compiler)


def test_same_bits_with_and_without_the_pass(rng):
    delta = rng.random((1, 256, 64)).astype(np.float32)
    u = rng.random((1, 256, 64)).astype(np.float32)
    A = -rng.random((256, 3)).astype(np.float32)
    B = rng.random((1, 3, 64)).astype(np.float32)
    C = rng.random((1, 3, 64)).astype(np.float32)
    for kernel in (tk.mamba_v1, tk.mamba_v2):
        run_on("simulator", kernel, delta, u, A, B, C)  # asserts the same bits as source order


@nki.jit
def _accumulate_and_print(x):
    """ScalarE accumulator registers and device prints: state outside memory, kept in order."""
    out = nl.ndarray((x.shape[0], 4), dtype=nl.float32, buffer=nl.shared_hbm)
    res = nl.ndarray((nl.par_dim(x.shape[0]), 4), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(4):
        t = nl.load(x[:, i * 32:(i + 1) * 32])
        nisa.activation(op=nl.exp, data=t, reduce_op=nl.add, reduce_res=res[:, i:i + 1])
        nl.device_print(f"step{i}", res[:, i:i + 1])
    nl.store(out, res)
    return out


def test_accumulators_and_prints_keep_their_order(rng, capsys):
    x = rng.random((128, 128)).astype(np.float32)
    run_on("simulator", _accumulate_and_print, x)
    printed = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.startswith("step")]
    assert printed == ["step0", "step1", "step2", "step3"] * 2  # the scheduled run, then source order


def test_a_random_memset_keeps_its_block_in_source_order_and_refused_functions_are_left_alone():
    b = ModuleBuilder()
    t = [b.sbuf(f"t{i}", 128, 64, bir.DType.float32) for i in range(3)]
    b.add("Memset", [], [b.tile(t[0])], name="rand", mode=bir.MemsetMode.Random)
    b.add("Memset", [], [b.tile(t[1])], name="one", constant=1.0)
    (stats,) = Schedule().run(b.module, "trn1")
    assert stats == {"blocks": 0, "kept": 1, "moved": 0, "refused": False}
    b.add("RangeSelect", [b.tile(t[1]), b.tile(t[1]), b.tile(t[1])], [b.tile(t[2])], name="v3_only")
    (stats,) = Schedule().run(b.module, "trn1")  # range_select is NeuronCore-v3+: trn1 refuses it
    assert stats["refused"]


def test_schedule_names_its_choices():
    with pytest.raises(nki.NKIError, match="schedule 'fast'"):
        nki.trace(tk.mamba_v2, *_mamba_args(), schedule="fast")


@nki.jit
def _stream(x):
    """load -> exp -> store over 8 independent column blocks."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    w = x.shape[1] // 8
    for i in nl.affine_range(8):
        t = nl.load(x[:, i * w:(i + 1) * w])
        nl.store(out[:, i * w:(i + 1) * w], nl.exp(t))
    return out


@pytest.mark.parametrize("block_bytes,buffers", [(1024, 8), (48 * 1024, 2)])
def test_buffers_rotate_while_sbuf_allows(block_bytes, buffers):
    """Multi-buffering: the allocator places each iteration's tiles past the last ones (next fit),
    so the 8 iterations' load tiles take 8 buffers while they fit and rotate through 2 when only
    two iterations' tiles (the load and the exp result, 4 x 48 KiB of trn1's 192 KiB) fit; the
    scheduler then overlaps the next block's load with this block's exp."""
    args = (nt.tensor[[128, 8 * block_bytes // 4], nl.float32],)
    modules = {s: nki.trace(_stream, *args, schedule=s) for s in ("source", "compiler")}
    for m in modules.values():
        loads = [i.outs[0].location.addr for i in m.functions[0].blocks[0].instructions
                 if i.opcode_name == "Load"]
        assert len(loads) == 8 and len(set(loads)) == buffers
        assert all(a != b for a, b in zip(loads, loads[1:]))  # never the buffer just used
    t = {s: sim.simulate(m, mode="timing").total_ns for s, m in modules.items()}
    assert t["compiler"] < 0.9 * t["source"]


@nki.jit
def _stream_per_core(x):
    """_stream over each NeuronCore's half of the columns: core 0 in 8 blocks, core 1 in 4 (the
    functions differ, so each must get its own order)."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    half = x.shape[1] // 2
    core = int(nl.program_id(0))
    blocks = 8 if core == 0 else 4
    w = half // blocks
    for i in nl.affine_range(blocks):
        cols = slice(core * half + i * w, core * half + (i + 1) * w)
        t = nl.load(x[:, cols])
        nl.store(out[:, cols], nl.exp(t))
    return out


def _function_by_function(module, arch):
    from neuronxsim.starfish.lib import _core
    return [_core.sim.schedule_function(module, f, arch) for f in range(len(module.functions))]


def test_a_multi_core_module_is_scheduled_as_function_by_function():
    """The pass decodes a multi-core module once (cpp/sim/ListSchedule.cpp scheduleModule): each
    function gets the order, and the stats, scheduling it on its own gives."""
    args = (nt.tensor[[128, 16 * 256], nl.float32],)
    whole = nki.trace(_stream_per_core[nl.nc(2)], *args, schedule="source")
    alone = nki.trace(_stream_per_core[nl.nc(2)], *args, schedule="source")
    stats = Schedule().run(whole, "trn1")
    assert stats == _function_by_function(alone, "trn1")
    assert [s["blocks"] for s in stats] == [1, 1]
    assert whole.to_json(-1) == alone.to_json(-1)


def test_in_a_multi_core_module_only_the_refused_function_keeps_its_order():
    """One function the simulator refuses makes the module's decoding fail: the others are still
    scheduled, each on its own."""
    b = ModuleBuilder(functions=2)
    for core in (0, 1):
        b.core(core)
        t = [b.sbuf(f"t{i}", 128, 256, bir.DType.float32) for i in range(4)]
        for x, y, n in ((t[0], t[1], "A"), (t[2], t[3], "B")):  # two independent chains
            b.add("Memset", [], [b.tile(x)], name=n + "0", constant=1.0)
            b.add("TensorCopy", [b.tile(x)], [b.tile(y)], name=n + "1")
        if core == 1:
            b.add("RangeSelect", [b.tile(t[1]), b.tile(t[1]), b.tile(t[1])], [b.tile(t[2])],
                  name="v3_only")
    stats = Schedule().run(b.module, "trn1")  # range_select is NeuronCore-v3+: trn1 refuses it
    assert [s["refused"] for s in stats] == [False, True]
    assert stats[0]["blocks"] == 1
    assert [i.name for i in b.module.functions[0].blocks[0].instructions] == ["A0", "B0", "A1", "B1"]


def _load_and_store(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(out, value=t)  # STORE_LINE
    return out


@nki.jit
def _load_and_store_per_core(x):
    """Each NeuronCore copies its half of the columns."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    cols = slice(int(nl.program_id(0)) * 256, (int(nl.program_id(0)) + 1) * 256)
    t = nl.load(x[:, cols])
    nl.store(out[:, cols], value=t)  # STORE_LINE
    return out


class _MisplaceTheStoresTile:
    """A stage after emission that moves the store's source 8 partitions down its tile, in the
    function of core ``core`` (each core's program passes through it in turn): BIR the verifier
    refuses (what a tracer bug would emit)."""

    name = "misplace"

    def __init__(self, core: int, row: int):
        self.core, self.row, self.seen = core, row, 0

    def run(self, program):
        if self.seen == self.core:
            store = program.function.blocks[0].instructions[-1]
            store.ins[0].offset = 8 * self.row  # (elements)
        self.seen += 1


@pytest.mark.parametrize("schedule", ["compiler", "source"])
@pytest.mark.parametrize("kernel, core, row", [(_load_and_store, 0, 512),
                                               (_load_and_store_per_core[nl.nc(2)], 1, 256)])
def test_traced_bir_the_verifier_refuses_is_reported_at_its_kernel_line(schedule, kernel, core, row):
    """The trace's scheduling pass verifies while it decodes (no module.verify() before it); a
    module it refuses keeps its order (every function of it, where one of two breaks the rules)
    and is verified on its own, so a tracer bug is still reported as the verifier's message at
    the kernel line of the instruction, in either schedule."""
    from neuronxsim.nki import kernel as nki_kernel
    from neuronxsim.nki.errors import NKIError
    from neuronxsim.nki.passes import PIPELINE

    lines = [n for n, text in enumerate(open(__file__), 1) if "# STORE_" + "LINE" in text]
    line = lines[0] if kernel is _load_and_store else lines[1]
    with pytest.raises(NKIError, match=rf"the traced BIR is invalid: functions\[{core}\]\.blocks\[0\]"
                                       r"\.instructions\[1\]\.ins\[0\]: partitions \[8, 136\) are outside") as e:
        nki_kernel._trace(kernel, (nt.tensor[[128, 512], nl.float32],), "trn1", {}, 10_000,
                          schedule=schedule, pipeline=PIPELINE + (_MisplaceTheStoresTile(core, row),))
    assert f":{line}:" in str(e.value)
