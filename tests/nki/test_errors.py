"""Bad kernels raise NKIError located at the kernel's own line (marked ``# ERR:<tag>`` below),
saying what is wrong; the traceback ends in the kernel, not in neuronxsim."""

import traceback

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim.errors import NeuronxsimError, SimulationError

SRC = open(__file__).read().splitlines()


def line_of(tag: str) -> int:
    return next(i + 1 for i, text in enumerate(SRC) if text.rstrip().endswith(f"# ERR:{tag}"))


def trace_error(kernel, *args, **kwargs) -> nki.NKIError:
    with pytest.raises(nki.NKIError) as info:
        nki.trace(kernel, *args, **kwargs)
    return info.value


def assert_located(err: nki.NKIError, tag: str, *fragments: str):
    assert err.location is not None, str(err)
    assert (err.location.path, err.location.line) == (__file__, line_of(tag)), str(err)
    text = str(err)
    assert text.startswith(f"{__file__}:{line_of(tag)}: ")
    assert SRC[line_of(tag) - 1].strip() in text  # the kernel line is quoted
    for fragment in fragments:
        assert fragment in text, text


A = np.zeros((128, 512), np.float32)


# ---- shapes and partitions ----

@nki.jit
def too_many_partitions(a):
    t = nl.ndarray((256, 4), dtype=nl.float32)  # ERR:ndarray256
    return t


@nki.jit
def load_too_tall(a):
    return nl.load(a)  # ERR:load256


@nki.jit
def shape_mismatch(a):
    x = nl.load(a[:, 0:256])
    y = nl.load(a[:, 0:128])
    return x + y  # ERR:broadcast


@nki.jit
def partition_mismatch(a):
    x = nl.load(a[0:64, :])
    y = nl.load(a[0:32, :])  # (a one-partition tile would reach all 64: see test_language)
    return nl.multiply(x, y)  # ERR:partbcast


def test_tiles_over_128_partitions():
    assert_located(trace_error(too_many_partitions, A), "ndarray256", "256 rows on the partition",
                   "at most 128 partitions")
    assert_located(trace_error(load_too_tall, np.zeros((256, 8), np.float32)), "load256",
                   "at most 128 partitions")


@nki.jit
def reversed_partitions(a):
    x = nl.load(a[0:33, :])  # 33 partitions: the last one starts a quadrant
    return nl.multiply(x[::-1, :], 2.0)  # ERR:reversed


@nki.jit
def every_other_partition(a):
    x = nl.load(a[0:40, :])
    out = nl.ndarray((20, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, x[0:40:2, :])  # ERR:stepped
    return out


def test_views_that_do_not_walk_partitions_in_order_are_refused():
    # (Once cut to the partitions "written" counted from the wrong end, x[::-1] on 33 partitions
    # computed one of them and left the others unwritten, without a word.)
    assert_located(trace_error(reversed_partitions, A), "reversed", "steps through its partitions -1 at a time",
                   "in increasing order")
    assert_located(trace_error(every_other_partition, A), "stepped", "steps through its partitions 2 at a time")


@nki.jit
def gather_rows(a, idx):
    out = nl.ndarray((idx.shape[0], a.shape[1]), dtype=a.dtype, buffer=nl.shared_hbm)
    rows = nl.load(idx)
    cols = nl.arange(a.shape[1])[None, :]
    nl.store(out, nl.load(a[rows, cols]))  # ERR:gather
    return out


def test_refusals_at_run_time_name_the_kernel_line():
    a = np.ones((300, 17), np.float32)
    with pytest.raises(SimulationError) as info:  # row 300 of 300: known only when it runs
        nki.simulate_kernel(gather_rows, a, np.array([[5], [300]], np.int32))
    assert str(info.value).startswith(f"test_errors.py:{line_of('gather')}: "), str(info.value)
    assert "index 300" in str(info.value)


@nki.jit
def matmul_into_bf16_psum(a, b):
    out = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((64, 512), dtype=nl.bfloat16, buffer=nl.psum)
    acc += nisa.nc_matmul(nl.load(a), nl.load(b))  # ERR:bf16psum
    nl.store(out, acc)
    return out


@pytest.mark.parametrize("schedule", ["compiler", "source"])
def test_what_the_core_cannot_run_is_refused_when_traced(schedule):
    # (The module verifies; the simulator refuses it. It was traced, and refused only when run.)
    a, b = np.ones((128, 64), np.float32), np.ones((128, 512), np.float32)
    assert_located(trace_error(matmul_into_bf16_psum, a, b, schedule=schedule), "bf16psum",
                   "the PE accumulates in fp32 PSUM; the result is bfloat16")


def test_shape_errors():
    assert_located(trace_error(shape_mismatch, A), "broadcast", "[128, 256]", "[128, 128]",
                   "do not broadcast")
    assert_located(trace_error(partition_mismatch, A), "partbcast", "different partition counts")


# ---- dtypes ----

@nki.jit
def bad_dtype(a):
    t = nl.ndarray((128, 4), dtype=np.float64)  # ERR:dtype
    return t


@nki.jit
def mixed_matmul(a, b):
    return nisa.nc_matmul(nl.load(a), nl.load(b))  # ERR:mixfp32


def test_dtype_errors():
    assert_located(trace_error(bad_dtype, A), "dtype", "float64", "not an NKI data type")
    err = trace_error(mixed_matmul, A[:, :128], A[:, :128].astype(np.float16))
    assert_located(err, "mixfp32", "float32", "both must be")
    with pytest.raises(nki.NKIError, match="float64 array"):
        nki.trace(bad_dtype, np.zeros((4, 4)))


# ---- matmul operand limits ----

@nki.jit
def moving_too_wide(a, b):
    return nisa.nc_matmul(nl.load(a), nl.load(b))  # ERR:moving


@nki.jit
def contraction_mismatch(a, b):
    return nl.matmul(nl.load(a), nl.load(b), transpose_x=True)  # ERR:kdim


def test_matmul_operand_limits():
    assert_located(trace_error(moving_too_wide, A[:, :128], np.zeros((128, 1024), np.float32)),
                   "moving", "Matmult: N = 1024 (the moving's elements per partition) exceeds 512")
    assert_located(trace_error(contraction_mismatch, A[:64, :128], A[:, :128]), "kdim",
                   "64 partitions", "128")


# ---- indices ----

@nki.jit
def row_out_of_range(a):
    return nl.load(a[0:128, 256:768])  # ERR:range


@nki.jit
def masked_in_range(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    ic = nl.arange(512)[None, :]
    for t in nl.affine_range(2):
        x = nl.load(a[t * 128 + ip, ic], mask=(t * 128 + ip < 200))
        nl.store(out[t * 128 + ip, ic], x, mask=(t * 128 + ip < 201))  # ERR:maskrange
    return out


@nki.jit
def int_index(a):
    return nl.load(a[130])  # ERR:int


def test_out_of_range_indices():
    assert_located(trace_error(row_out_of_range, A), "range", "dimension 1", "[256, 767]",
                   "[0, 512)")
    assert_located(trace_error(int_index, A), "int", "index 130", "size 128")
    # The first load's mask keeps rows 128..199 of 200; the store's keeps row 200: out of range.
    assert_located(trace_error(masked_in_range, np.zeros((200, 512), np.float32)), "maskrange",
                   "[128, 200]", "[0, 200)")


# ---- inputs, unwritten tiles, results ----

@nki.jit
def writes_input(a):
    nl.store(a, nl.load(a))  # ERR:input
    return a


@nki.jit
def reads_unwritten(a):
    t = nl.ndarray((128, 512), dtype=nl.float32)
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.exp(t))  # ERR:unwritten
    return out


@nki.jit
def returns_tile(a):
    return nl.load(a)


@nki.jit
def accumulates_onto_copy(a):
    ps = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
    ps[...] = nl.load(a[:, 0:128])
    ps += nl.matmul(nl.load(a[:, 0:128]), nl.load(a[:, 0:128]), transpose_x=True)  # ERR:acc
    return ps


def test_writes_to_inputs_and_reads_of_unwritten_tiles():
    assert_located(trace_error(writes_input, A), "input", "kernel input 'a'", "read-only")
    assert_located(trace_error(reads_unwritten, A), "unwritten", "before anything writes it")
    assert "returns an SBUF tile" in str(trace_error(returns_tile, A))
    assert_located(trace_error(accumulates_onto_copy, A), "acc", "non-matmul",
                   "accumulation group")


# ---- start partitions, capacity ----

@nki.jit
def bad_start_partition(a):
    t = nl.load(a)
    out = nl.ndarray((10, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.exp(t[10:20]))  # ERR:start
    return out


@nki.jit
def psum_tile_too_big(a):
    return nl.zeros((128, 1024), dtype=nl.float32, buffer=nl.psum)  # ERR:psumbank


def test_start_partition_rule_and_psum_bank():
    assert_located(trace_error(bad_start_partition, A), "start", "starts at partition 10",
                   "start-partition rule")
    assert_located(trace_error(psum_tile_too_big, A), "psumbank", "4096 bytes per partition",
                   "2 KiB bank")


# ---- where the traceback points ----

def test_traceback_ends_in_the_kernel_and_the_error_class():
    err = trace_error(reads_unwritten, A)
    frames = traceback.extract_tb(err.__traceback__)
    assert frames[-1].filename == __file__ and frames[-1].lineno == line_of("unwritten")
    # Between the test and the kernel: only the public entry point (nki.trace) itself.
    assert sum("neuronxsim/nki/" in f.filename for f in frames) == 1
    assert isinstance(err, NeuronxsimError) and isinstance(err, ValueError)


def test_errors_outside_a_kernel():
    with pytest.raises(nki.NKIError, match="only inside a kernel being traced"):
        nl.load(A)
    with pytest.raises(nki.NKIError, match="returns nothing"):
        nki.trace(lambda a: None, A)


@nki.jit
def tensor_as_dtype(a):
    return nl.exp(nl.load(a), dtype=a)  # ERR:tensordtype


def test_a_tensor_where_a_dtype_belongs_is_refused():
    # (np.dtype takes any object with a .dtype: the tensor passed as its own dtype)
    assert_located(trace_error(tensor_as_dtype, A), "tensordtype",
                   "dtype <nki tensor a shared_hbm float32[128, 512]> is not an NKI data type")


# ---- loop bounds, reduction axes and launch-grid axes: NKIErrors, not Python's ----

@nki.jit
def zero_step(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(0, 4, 0):  # ERR:zerostep
        nl.store(out, nl.load(a))
    return out


@nki.jit
def float_bound(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.sequential_range(2.0):  # ERR:floatbound
        nl.store(out, nl.load(a))
    return out


@nki.jit
def step_without_stop(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.static_range(4, step=2):  # ERR:nostop
        nl.store(out, nl.load(a))
    return out


@nki.jit
def float_axis(a):
    out = nl.ndarray((a.shape[0], 1), dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.sum(nl.load(a), axis=1.0, keepdims=True))  # ERR:floataxis
    return out


@nki.jit
def grid_axis(a, which):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    n = nl.program_id(which) if which != "n" else nl.num_programs(5)  # ERR:gridaxis
    nl.store(out, nl.load(a))
    return out


def test_bad_loop_bounds_reduction_axes_and_grid_axes_are_nki_errors():
    a = np.zeros((4, 8), np.float32)
    assert_located(trace_error(zero_step, a), "zerostep",
                   "nl.affine_range(0, 4, step=0): the step must not be zero")
    assert_located(trace_error(float_bound, a), "floatbound",
                   "nl.sequential_range(2.0): loop bounds are integers, not float 2.0")
    assert_located(trace_error(step_without_stop, a), "nostop",
                   "nl.static_range(4, step=2): a step needs a stop")
    assert_located(trace_error(float_axis, a), "floataxis",
                   "axis must be an integer or a tuple of integers, not 1.0")
    assert_located(trace_error(grid_axis, a, "a"), "gridaxis",
                   "nl.program_id('a'): a launch grid axis is an integer, not str")
    assert_located(trace_error(grid_axis, a, "n"), "gridaxis",
                   "nl.num_programs(5): the launch grid has 1 dimension(s), no axis 5")


# ---- what a kernel returns: refused at its return line ----

@nki.jit
def returns_input(a):
    return a  # ERR:retinput


@nki.jit
def returns_part(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.load(a))
    return out[:, 0:4]  # ERR:retpart


@nki.jit
def returns_unwritten(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    return out  # ERR:retunwritten


def test_what_a_kernel_returns_is_refused_at_its_return_line():
    a = np.zeros((4, 8), np.float32)
    assert_located(trace_error(returns_input, a), "retinput", "returns a kernel input ('a')")
    assert_located(trace_error(returns_part, a), "retpart", "returns part of an HBM tensor")
    assert_located(trace_error(returns_unwritten, a), "retunwritten", "which it never writes")


# ---- messages that name what is wrong ----

@nki.jit
def skewed_view(a):
    out = nl.ndarray((4, 4), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    i_p, i_f = nl.arange(4)[:, None], nl.arange(4)[None, :]
    nl.store(out, nl.copy(t[i_p, i_p + i_f]))  # ERR:skew
    return out


@nki.jit
def array_in_a_list(xs):
    out = nl.ndarray(xs[0].shape, dtype=xs[0].dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.load(xs[0]))  # ERR:listarg
    return out


def test_a_free_index_that_depends_on_the_partition_index_is_named():
    assert_located(trace_error(skewed_view, np.zeros((4, 8), np.float32)), "skew",
                   "moves +1 element(s) along the free dimension per partition",
                   "a free index that depends on the partition index")


def test_an_array_inside_a_list_argument_is_named():
    assert_located(trace_error(array_in_a_list, [np.zeros((4, 8), np.float32)]), "listarg",
                   "nl.load: src must be an HBM tensor, not a NumPy array",
                   "not arrays inside a list, tuple or other object")
