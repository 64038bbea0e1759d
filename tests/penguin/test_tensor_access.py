"""Program tensors and the four operand access kinds: shapes, partition dims, bounds."""

import pytest

from neuronxsim.errors import CodegenError, NeuronxsimError
from neuronxsim.starfish.penguin import ir


def test_tensor_normalises_and_checks_its_fields():
    t = ir.Tensor("x", [2, 3], "bfloat16", "output")
    assert (t.shape, t.dtype, t.kind, t.numel) == ((2, 3), "bfloat16", "output", 6)
    from neuronxsim.bir import DType
    assert ir.Tensor("y", (4,), DType.float8e4).dtype == "float8e4"
    assert ir.numpy_dtype("bfloat16").name == "bfloat16"
    assert ir.numpy_dtype("float8e4").itemsize == 1


@pytest.mark.parametrize("args, fragment", [
    (("", [2]), "Tensor name"),
    (("x", []), "Tensor 'x' shape: expected a non-empty list"),
    (("x", [2, 0]), "Tensor 'x' shape"),
    (("x", [2, True]), "Tensor 'x' shape"),
    (("x", "22"), "Tensor 'x' shape"),
    (("x", [2], "bf16"), "Tensor 'x' dtype: expected a BIR dtype name"),
    (("x", [2], "float32", "weights"), "Tensor 'x' kind: expected one of input, output, internal"),
])
def test_tensor_rejects_bad_fields(args, fragment):
    with pytest.raises(CodegenError, match=fragment) as e:
        ir.Tensor(*args)
    assert isinstance(e.value, NeuronxsimError) and isinstance(e.value, ValueError)


X = ir.Tensor("x", [4, 8, 16], "float32")


def test_full_and_opaque_access_cover_the_tensor():
    for cls in (ir.FullTensorAccess, ir.OpaqueAccess):
        a = cls(X)
        assert (a.access_shape, a.partition_dim, a.dtype, a.kind) == ((4, 8, 16), 0, "float32", cls.__name__)


def test_sub_tensor_access_checks_rank_bounds_and_partition_dim():
    a = ir.NDimSubTensorAccess(X, [1, 0, 2], [2, 4, 7], partition_dim=1, steps=[1, 2, 2])
    assert (a.access_shape, a.partition_dim, a.steps) == ((2, 4, 7), 1, (1, 2, 2))
    assert ir.NDimSubTensorAccess(X, [0, 0, 0], [4, 8, 16]).steps == (1, 1, 1)
    with pytest.raises(CodegenError, match=r"last element \[2, 6, 16\] lies outside the shape \[4, 8, 16\]"):
        ir.NDimSubTensorAccess(X, [1, 0, 2], [2, 4, 8], steps=[1, 2, 2])
    with pytest.raises(CodegenError, match="offsets: expected a list of 3 ints >= 0"):
        ir.NDimSubTensorAccess(X, [0, 0], [1, 1, 1])
    with pytest.raises(CodegenError, match="access_shape: expected a list of 3 ints >= 1"):
        ir.NDimSubTensorAccess(X, [0, 0, 0], [1, 0, 1])
    with pytest.raises(CodegenError, match="partition_dim: expected an int in 0..2, got 3"):
        ir.NDimSubTensorAccess(X, [0, 0, 0], [1, 1, 1], partition_dim=3)


def test_tile_access_is_one_tile_of_a_memref_tile_view():
    a = ir.TileAccess(X, ir.MemrefTile([2, 8, 4], [1, 0, 3]), partition_dim=0)
    assert (a.access_shape, a.offsets) == ((2, 8, 4), (2, 0, 12))
    with pytest.raises(CodegenError, match=r"tile \[2, 8, 4\] at index \[2, 0, 0\] ends at \[6, 8, 4\], outside"):
        ir.TileAccess(X, ir.MemrefTile([2, 8, 4], [2, 0, 0]))
    with pytest.raises(CodegenError, match="has rank 2, the tensor"):
        ir.TileAccess(X, ir.MemrefTile([2, 8], [0, 0]))
    with pytest.raises(CodegenError, match="MemrefTile index: expected a list of 3 ints"):
        ir.MemrefTile([2, 8, 4], [0, 0])
    with pytest.raises(CodegenError, match="tile: expected a MemrefTile"):
        ir.TileAccess(X, ([2, 8, 4], [0, 0, 0]))


def test_a_view_keeps_the_element_count_and_sets_the_coordinates():
    a = ir.TileAccess(X, ir.MemrefTile([8, 16], [3, 0]), view_shape=[32, 16])
    assert a.ap_shape == (32, 16) and a.offsets == (24, 0)
    with pytest.raises(CodegenError, match="view_shape: \\[32, 8\\] has 256 elements, the tensor \\[4, 8, 16\\] has 512"):
        ir.NDimSubTensorAccess(X, [0, 0], [1, 1], view_shape=[32, 8])


def test_accesses_take_only_program_tensors():
    with pytest.raises(CodegenError, match="FullTensorAccess: expected a penguin.ir Tensor, got str"):
        ir.FullTensorAccess("x")
