"""nki.trace: the module's interface (inputs named after parameters, outputs after what the
kernel returns), source lines, launch grids over NeuronCores, and the jit forms."""

import os

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.language as nl
from neuronxsim import bir
from nki_testing import close, run_on, run_on_reference as run

SRC = open(__file__).read().splitlines()


def line_of(tag: str) -> int:
    return next(i + 1 for i, text in enumerate(SRC) if text.rstrip().endswith(f"# LINE:{tag}"))


@nki.jit
def two_outputs(x, y, scale=2.0):
    total = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    diff = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm, name="difference")
    a, b = nl.load(x), nl.load(y)  # LINE:loads
    nl.store(total, (a + b) * scale)  # LINE:sum
    nl.store(diff, a - b)
    return total, diff


def test_inputs_and_outputs_are_named_after_the_kernel():
    x = np.zeros((64, 32), np.float32)
    traced = nki.trace_kernel(two_outputs, x, y=x)
    assert traced.input_names == ["x", "y"] and traced.output_names == ["total", "difference"]
    assert traced.inputs[0] == nki.TensorSpec("x", (64, 32), np.dtype(np.float32))
    locs = {s.location.name: s.location for s in traced.module.functions[0].allocations}
    assert locs["x"].type == bir.MemoryType.Input and locs["y"].type == bir.MemoryType.Input
    assert locs["total"].type == bir.MemoryType.Output
    assert locs["difference"].kind == bir.TensorKind.ExternalOutput


def test_outputs_without_a_variable_are_named_by_position():
    @nki.jit
    def unnamed(x):
        def make(i):
            out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
            nl.store(out, nl.load(x) + i)
            return out
        return make(1), make(2)  # the kernel has no variable holding them

    x = np.zeros((8, 8), np.float32)
    assert nki.trace_kernel(unnamed, x).output_names == ["out0", "out1"]


def test_returning_what_is_not_a_written_hbm_tensor_is_refused():
    @nki.jit
    def unwritten(x):
        return nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)

    @nki.jit
    def a_tile(x):
        return nl.load(x)

    x = np.zeros((8, 8), np.float32)
    with pytest.raises(nki.NKIError, match="never writes"):
        nki.trace(unwritten, x)
    with pytest.raises(nki.NKIError, match="returns an SBUF tile"):
        nki.trace(a_tile, x)


def test_the_module_runs_by_parameter_name(rng):
    x = rng.random((64, 32)).astype(np.float32)
    y = rng.random((64, 32)).astype(np.float32)
    total, diff = run(two_outputs, x, y, scale=3.0)
    close(total, (x + y) * 3.0, atol=0, rtol=1e-6)
    close(diff, x - y, atol=0, rtol=1e-7)


def test_every_instruction_records_its_kernel_line():
    x = np.zeros((64, 32), np.float32)
    insts = nki.trace(two_outputs, x, x, schedule="source").functions[0].blocks[0].instructions
    base = os.path.basename(__file__)
    assert [i.source for i in insts[:4]] == [f"{base}:{line_of('loads')}"] * 2 + [
        f"{base}:{line_of('sum')}"] * 2
    assert all(i.source.startswith(base + ":") for i in insts)


def test_json_round_trip_and_arch():
    x = np.zeros((64, 32), np.float32)
    module = nki.trace(two_outputs, x, x, arch="trn2")
    assert module.arch == "gen3"
    text = module.to_json()
    assert bir.Module.from_json(text).to_json() == text
    assert nki.trace(two_outputs, x, x).arch == "gen2"
    with pytest.raises(nki.NKIError, match="unknown arch"):
        nki.trace(two_outputs, x, x, arch="trn9")


def test_engines_and_dma_queues():
    x = np.zeros((64, 32), np.float32)
    insts = nki.trace(two_outputs, x, x, schedule="source").functions[0].blocks[0].instructions
    dmas = [i for i in insts if i.opcode_name in ("Load", "Save")]
    assert all(i.engine == bir.Engine.DMA for i in dmas)
    assert [i.queue for i in dmas] == list(range(len(dmas)))  # round-robin over 16 queues
    assert {i.engine for i in insts if i.opcode_name.startswith("Tensor")} == {bir.Engine.DVE}


# ---- launch grids over NeuronCores ----

@nki.jit
def per_core_rows(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    core = nl.program_id(0)
    rows = a.shape[0] // nl.num_programs(0)
    t = nl.load(a[core * rows:(core + 1) * rows])
    nl.store(out[core * rows:(core + 1) * rows], t * (core + 1))
    return out


def test_nc_grid_traces_one_function_per_core(rng):
    a = rng.random((256, 64)).astype(np.float32)
    traced = nki.trace_kernel(per_core_rows[nl.nc(2)], a)
    assert traced.num_cores == 2 and len(traced.module.functions) == 2
    for core, fn in enumerate(traced.module.functions):
        names = {s.location.name for s in fn.allocations}
        assert {"a", "out"} <= names
        load = fn.blocks[0].instructions[0]
        assert load.opcode_name == "Load" and load.ins[0].offset == core * 128 * 64
    out = run(per_core_rows[nl.nc(2)], a)
    close(out, a * np.repeat([1.0, 2.0], 128)[:, None], atol=0, rtol=1e-7)


def test_nc_grid_with_spmd_instances_per_core(rng):
    @nki.jit
    def kernel(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        c, j = nl.program_id(0), nl.program_id(1)
        r = slice((2 * c + j) * 32, (2 * c + j + 1) * 32)
        nl.store(out[r], nl.load(a[r]) + (2 * c + j))
        return out

    a = rng.random((128, 16)).astype(np.float32)
    traced = nki.trace_kernel(kernel[nl.nc(2), 2], a)
    assert traced.instruction_counts == [6, 6]
    close(run(kernel[nl.nc(2), 2], a), a + np.repeat(np.arange(4), 32)[:, None], atol=0,
          rtol=1e-7)


# ---- jit forms, inlining, tensor types ----

def test_jit_forms_and_inlined_kernels(rng):
    def body(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.exp(nl.load(a)))
        return out

    helper = nki.jit(lambda t: nl.multiply(t, 2.0))

    @nki.jit()
    def outer(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, helper(nl.load(a)))  # a jit kernel called in a trace is inlined
        return out

    a = rng.random((16, 16)).astype(np.float32)
    for k in (nki.jit(body), nki.jit(mode="simulation")(body), body):
        close(run(k, a), np.exp(a), atol=0, rtol=1e-6)
    close(run(outer, a), 2 * a, atol=0, rtol=0)


def test_tensor_types_trace_without_data():
    t = nki.typing.tensor[[64, 32], nl.bfloat16]
    traced = nki.trace_kernel(two_outputs, t, t)
    assert traced.inputs[0].dtype == nl.bfloat16 and traced.instruction_count == 7
    with pytest.raises(nki.NKIError, match="needs a dtype"):
        nki.trace(two_outputs, nki.typing.tensor[64, 32], t)


# ---- shared_hbm tensors by name ----
# nki.language.ndarray (Neuron 2.28): "For shared_hbm tensors that are not used as kernel inputs
# or outputs, name must be specified ... shared_hbm tensors will point to the same underlying
# memory as long as they have the same name, even if the tensors appear in different control flow."

def _row_tiles(a):
    """(row index, column index, mask) of each 128-row tile of ``a``."""
    for t in nl.affine_range((a.shape[0] + 127) // 128):
        ip = t * 128 + nl.arange(128)[:, None]
        yield ip, nl.arange(a.shape[1])[None, :], ip < a.shape[0]


@nki.jit
def scratch_by_name(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    first = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm, name="scratch")
    for ip, iy, m in _row_tiles(a):
        nl.store(first[ip, iy], nl.load(a[ip, iy], mask=m) * 2.0, mask=m)
    second = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm, name="scratch")
    for ip, iy, m in _row_tiles(a):
        nl.store(second[ip, iy], nl.load(a[ip, iy], mask=m) * 3.0, mask=m)
    for ip, iy, m in _row_tiles(a):
        nl.store(out[ip, iy], nl.load(first[ip, iy], mask=m), mask=m)  # the second's values
    return out


def test_shared_hbm_tensors_of_one_name_are_one_tensor(executor, rng):
    a = rng.random((300, 96)).astype(np.float32)
    close(run_on(executor, scratch_by_name, a), 3 * a, atol=0, rtol=1e-7)
    fn = nki.trace(scratch_by_name, a).functions[0]
    assert sorted(s.location.name for s in fn.allocations
                  if s.location.name.startswith("scratch")) == ["scratch"]


@nki.jit
def scratch_per_program(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    scratch = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm, name="scratch")
    rows = a.shape[0] // nl.num_programs(0)
    r = slice(nl.program_id(0) * rows, (nl.program_id(0) + 1) * rows)
    nl.store(scratch[r], nl.load(a[r]) + 1.0)
    nl.store(out[r], nl.load(scratch[r]))
    return out


@pytest.mark.parametrize("grid,cores", [(2, 1), (nl.nc(2), 2)])
def test_every_program_of_a_launch_shares_a_named_shared_hbm_tensor(executor, rng, grid, cores):
    a = rng.random((256, 64)).astype(np.float32)
    close(run_on(executor, scratch_per_program[grid], a, arch="trn2"), a + 1, atol=0, rtol=1e-7)
    module = nki.trace(scratch_per_program[grid], a, arch="trn2")
    assert len(module.functions) == cores
    for fn in module.functions:  # (a DRAM tensor of one name is one tensor of the module)
        assert [s.location.name for s in fn.allocations
                if s.location.name.startswith("scratch")] == ["scratch"]


@nki.jit
def scratch_of_two_shapes(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    s = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm, name="scratch")
    nl.store(s, nl.load(a))
    t = nl.ndarray((a.shape[0], 4), dtype=a.dtype, buffer=nl.shared_hbm, name="scratch")  # LINE:two
    nl.store(out, nl.load(s))
    return out


@nki.jit
def unnamed_scratch(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    s = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(s, nl.load(a))
    nl.store(out, nl.load(s))
    return out


def test_a_shared_hbm_tensor_of_another_shape_is_refused_and_an_unnamed_one_runs():
    a = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    with pytest.raises(nki.NKIError) as info:
        nki.trace(scratch_of_two_shapes, a)
    assert info.value.location.line == line_of("two")
    assert "shared_hbm tensor 'scratch' is [8, 4] float32 here, but 'scratch'" in str(info.value)
    assert "is [8, 16] float32" in str(info.value)
    # The 2.28 page asks a name of such a tensor, but public kernels that ran on hardware (the
    # attention tutorial's normalisation scratch) leave it out: each SPMD instance's n-th unnamed
    # shared_hbm tensor is one tensor, as before
    close(run(unnamed_scratch, a), a, atol=0, rtol=0)


# ---- private HBM on several NeuronCores ----

@nki.jit
def private_scratch_per_core(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    c = nl.program_id(0)
    rows = a.shape[0] // nl.num_programs(0)
    scratch = nl.ndarray((rows, a.shape[1]), dtype=a.dtype, buffer=nl.hbm)
    named = nl.ndarray((rows, a.shape[1]), dtype=a.dtype, buffer=nl.private_hbm, name="mine")
    nl.store(scratch, nl.load(a[c * rows:(c + 1) * rows]) * (c + 2))
    nl.store(named, nl.load(scratch) + c)
    nl.store(out[c * rows:(c + 1) * rows], nl.load(named))
    return out


def test_private_hbm_is_each_cores_own(rng):
    # "only visible to each individual kernel instance": the cores' functions share DRAM tensors
    # by name, so a private tensor of each core must be named apart (it was one tensor, written
    # by both cores, right only because the simulator runs one core after the other)
    a = rng.random((254, 513)).astype(np.float32)
    traced = nki.trace_kernel(private_scratch_per_core[nl.nc(2)], a, arch="trn2")
    dram = [{s.location.name for s in fn.allocations if s.location.type == bir.MemoryType.DRAM}
            for fn in traced.module.functions]
    assert len(dram[0]) == len(dram[1]) == 2 and not dram[0] & dram[1]
    out = run(private_scratch_per_core[nl.nc(2)], a, arch="trn2")
    core = np.repeat([0.0, 1.0], 127)[:, None]
    close(out, a * (core + 2) + core, atol=0, rtol=1e-6)
