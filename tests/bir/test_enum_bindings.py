"""The Python behaviour of every C++ enum bound in `_core.bir` (the BIR enums of cpp/bir/Enums.def,
DType, LegalitySpace): names, values, members, conversions, comparisons, hashing, pickling,
repr/str, the docstrings the stubs are generated from, and their use as arguments and returned
values. These are py::enum_'s behaviours; cpp/python/bindings.h binds the enums through a cheaper
path (EnumBinder) that must keep every one of them."""

import copy
import operator
import pickle

import pytest

from neuronxsim.starfish.lib import _core

b = _core.bir
MOD = "neuronxsim.starfish.lib._core.bir"

# Every bound enum, its members in ordinal order (the BIR JSON spellings; cpp/bir/Enums.def).
ENUMS = {
    "Engine": ["Unassigned", "Pool", "Activation", "PE", "DMA", "DVE", "SP"],
    "ActivationFunc": [
        "Abs", "Abs_reciprocal_sqrt", "Arctan", "Copy", "Derivative_Erf", "Derivative_Gelu",
        "Derivative_silu", "Dsqrt", "Erf", "Exp", "Gelu", "Gelu_apprx_sigmoid", "Gelu_apprx_tanh",
        "Identity", "Is_finite", "Ln", "Ln_prime", "Lrelu", "MemsetZero", "Mish", "Prelu",
        "Reciprocal", "Relu", "Rsqrt", "Sigmoid", "Sign", "Silu", "Sin", "Softplus", "Sqrt",
        "Square", "Tanh", "Unknown"],
    "AluOp": [
        "abs", "add", "arith_shift_left", "arith_shift_right", "average", "bitwise_and",
        "bitwise_not", "bitwise_or", "bitwise_xor", "bypass", "divide", "is_equal", "is_ge", "is_gt",
        "is_le", "is_lt", "logical_and", "logical_or", "logical_xor", "logical_shift_left",
        "logical_shift_right", "max", "min", "mod", "mult", "not_equal", "pow", "rsqrt", "subtract"],
    "AccumCmd": ["Idle", "Zero", "Accumulate", "AddAccumulate", "ZeroAccumulate", "LoadAccumulate"],
    "ReduceAxis": ["C", "X", "XY", "XYZ", "XYZW", "XYZWC"],
    "MemsetMode": ["Const", "Random"],
    "MemoryType": ["Unallocated", "Input", "Output", "DRAM", "SB", "PSUM", "RNGSTATE", "REG"],
    "TensorKind": ["ExternalInput", "Input", "ExternalOutput", "Output", "Const", "Internal", "Pointer",
                   "InternalInterface"],
    "AddrSpace": ["Local", "Shared"],
    "AccessFlavour": ["Plain", "Seq", "AP", "Opaque"],
    "PerfMode": ["None", "DoubleRow", "DoubleColumn", "DoublePixel"],
    "DmaMode": ["Copy", "Transpose", "Replicate", "CCE", "Dynamic"],
    "DgeType": ["None", "HWDGE", "SWDGE"],
    "DType": ["float32", "float32r", "bfloat16", "float16", "float8e4", "float8e5", "float8e3", "int8",
              "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"],
    "LegalitySpace": ["SBUF", "PSUM", "DRAM", "Immediate"],
}
NAMES = sorted(ENUMS)
INT = "typing.SupportsInt | typing.SupportsIndex"


def members(name):
    E = getattr(b, name)
    return [(m, i, getattr(E, m)) for i, m in enumerate(ENUMS[name])]


def test_these_are_all_the_bound_enums():
    found = {n for sub in (b, _core.sim, _core.walrus, _core.nki) for n, v in vars(sub).items()
             if isinstance(v, type) and "__entries" in vars(v)}
    assert found == set(ENUMS)


@pytest.mark.parametrize("name", NAMES)
def test_type_and_members(name):
    E = getattr(b, name)
    assert E.__name__ == E.__qualname__ == name and E.__module__ == MOD
    assert E.__bases__ == (_core.bir.Engine.__mro__[1],)  # pybind11_object
    assert list(E.__members__) == ENUMS[name]
    assert E.__members__ is not E.__members__  # a fresh dict each time
    assert E.__doc__ == "Members:" + "".join(f"\n\n  {m}" for m in ENUMS[name])
    for m, i, v in members(name):
        assert type(v) is E and isinstance(v, E)
        assert E.__members__[m] is v
        assert v.name == m and v.value == i and type(v.value) is int
        assert int(v) == i and operator.index(v) == i and hash(v) == i
        assert repr(v) == f"<{name}.{m}: {i}>" and str(v) == f"{name}.{m}"
        assert v.__getstate__() == i
        assert v.__doc__ == E.__doc__


@pytest.mark.parametrize("name", NAMES)
def test_construction_from_an_integer(name):
    E = getattr(b, name)
    for m, i, v in members(name):
        w = E(i)
        assert w == v and w is not v and w.name == m
        assert E(value=i) == v
        assert E(v) == v  # through __index__
    assert E(True) == E(1)
    odd = E(200)  # not a member: kept, named "???"
    assert odd.value == 200 and odd.name == "???" and repr(odd) == f"<{name}.???: 200>"
    assert str(odd) == f"{name}.???"
    for bad in (256, -1, "x", 1.0, None):
        with pytest.raises(TypeError) as e:
            E(bad)
        assert str(e.value) == (
            "__init__(): incompatible constructor arguments. The following argument types are supported:\n"
            f"    1. {MOD}.{name}(value: {INT})\n\nInvoked with: {bad!r}")
    with pytest.raises(TypeError) as e:
        E()
    assert str(e.value).endswith(f"    1. {MOD}.{name}(value: {INT})\n\nInvoked with: ")


@pytest.mark.parametrize("name", NAMES)
def test_comparisons_and_hash(name):
    E = getattr(b, name)
    other = b.Engine if name != "Engine" else b.DType
    ms = members(name)
    for m, i, v in ms:
        for m2, j, w in ms:
            assert (v == w) is (i == j) and (v != w) is (i != j)
        assert (v == i) is False and (v != i) is True  # not comparable with integers
        assert (v == None) is False and (v != None) is True  # noqa: E711
        assert (v == other(0)) is False and (v != other(0)) is True
        assert (v == m) is False
        assert {v: 1}[E(i)] == 1
        for op, sym in ((operator.lt, "<"), (operator.le, "<="), (operator.gt, ">"), (operator.ge, ">=")):
            with pytest.raises(TypeError) as e:
                op(v, v)
            assert str(e.value) == f"'{sym}' not supported between instances of '{MOD}.{name}' and '{MOD}.{name}'"
        for op in (operator.and_, operator.or_, operator.xor, operator.add):
            with pytest.raises(TypeError):
                op(v, v)
        with pytest.raises(TypeError):
            ~v
    assert len({v for _, _, v in ms} | {E(i) for _, i, _ in ms}) == len(ms)


@pytest.mark.parametrize("name", NAMES)
def test_pickle_and_copy(name):
    E = getattr(b, name)
    for m, i, v in members(name):
        for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):  # 0 and 1 abort in pybind11 (as before)
            w = pickle.loads(pickle.dumps(v, protocol))
            assert type(w) is E and w == v and w.name == m and w is not v
        assert copy.copy(v) == v and copy.deepcopy(v) == v
        state = E(0)
        state.__setstate__(i)  # a second initialisation is ignored, as for any pybind11 __init__
        assert state.value == 0
    with pytest.raises(TypeError) as e:
        E.__new__(E).__setstate__("x")
    assert str(e.value) == (
        "__setstate__(): incompatible constructor arguments. The following argument types are supported:\n"
        f"    1. {MOD}.{name}(state: {INT}, /)\n\nInvoked with: 'x'")
    fresh = E.__new__(E)
    fresh.__setstate__(len(ENUMS[name]) - 1)
    assert fresh == members(name)[-1][2]


@pytest.mark.parametrize("name", NAMES)
def test_docstrings_and_attributes(name):
    """What pybind11-stubgen reads: the class's own attributes and each method's signature."""
    E = getattr(b, name)
    T = f"{MOD}.{name}"
    own = [k for k in vars(E) if k not in ENUMS[name]]
    assert own == ["__init__", "__doc__", "__module__", "_pybind11_conduit_v1_", "__entries", "__repr__",
                   "name", "__str__", "__members__", "__getstate__", "__hash__", "value", "__eq__", "__ne__",
                   "__int__", "__index__", "__setstate__"]
    docs = {
        "__init__": f"__init__(self: {T}, value: {INT}) -> None\n",
        "__repr__": "__repr__(self: object, /) -> str\n",
        "__str__": "__str__(self: object, /) -> str\n",
        "__getstate__": "__getstate__(self: object, /) -> int\n",
        "__hash__": "__hash__(self: object, /) -> int\n",
        "__eq__": ("__eq__(*args, **kwargs)\nOverloaded function.\n\n"
                   f"1. __eq__(self: {T}, other: {T}, /) -> bool\n\n"
                   f"2. __eq__(self: {T}, other: object, /) -> bool\n"),
        "__ne__": ("__ne__(*args, **kwargs)\nOverloaded function.\n\n"
                   f"1. __ne__(self: {T}, other: {T}, /) -> bool\n\n"
                   f"2. __ne__(self: {T}, other: object, /) -> bool\n"),
        "__int__": f"__int__(self: {T}, /) -> int\n",
        "__index__": f"__index__(self: {T}, /) -> int\n",
        "__setstate__": f"__setstate__(self: {T}, state: {INT}, /) -> None\n",
    }
    for k, doc in docs.items():
        assert getattr(E, k).__doc__ == doc, k
    assert E.name.__doc__ == "name(self: object, /) -> str\n" and E.name.fset is None
    assert E.value.__doc__ == "" and E.value.fset is None
    assert E.value.fget.__doc__ == f"(arg0: {T}) -> int\n"
    assert type(vars(E)["__members__"]).__name__ == "pybind11_static_property"
    assert type(vars(E)["__entries"]) is dict
    assert vars(E)["__entries"] == {m: (v, None) for m, _, v in members(name)}
    with pytest.raises(AttributeError):
        E.PE_NOT_A_MEMBER
    with pytest.raises(AttributeError):
        E(0).name = "x"
    with pytest.raises(AttributeError):
        E(0).value = 1


def _node(opcode_name):
    m = b.Module()
    f = m.addFunction()
    return m, f.addBlock().addInstruction(b.string2InstructionType(opcode_name))


# One field of each enum type that node classes carry: (opcode, field, enum).
NODE_FIELDS = [("Activation", "func", "ActivationFunc"), ("Activation", "acc", "AccumCmd"),
               ("TensorTensor", "op", "AluOp"), ("TensorReduce", "axis", "ReduceAxis"),
               ("Memset", "mode", "MemsetMode"), ("Matmult", "perf_mode", "PerfMode"),
               ("DMA", "mode", "DmaMode"), ("DMA", "dge_type", "DgeType")]


@pytest.mark.parametrize("opcode,field,name", NODE_FIELDS)
def test_node_fields_take_and_return_members(opcode, field, name):
    E = getattr(b, name)
    mod, node = _node(opcode)
    assert type(getattr(node, field)) is E
    last = members(name)[-1][2]
    setattr(node, field, last)
    assert getattr(node, field) == last and getattr(node, field) is not last
    getattr(node, "set_" + field)(E(0))
    assert getattr(node, field) == E(0)
    with pytest.raises(TypeError) as e:
        setattr(node, field, 0)
    assert str(e.value) == (
        "(): incompatible function arguments. The following argument types are supported:\n"
        f"    1. (self: {MOD}.Instruction, arg0: {MOD}.{name}) -> None\n\nInvoked with: {node!r}, 0")
    with pytest.raises(TypeError) as e:
        getattr(node, "set_" + field)(last.name)
    assert str(e.value) == (
        f"set_{field}(): incompatible function arguments. The following argument types are supported:\n"
        f"    1. (self: {MOD}.Instruction, arg0: {MOD}.{name}) -> None\n\nInvoked with: {node!r}, '{last.name}'")


def test_enums_as_arguments_and_results_of_functions():
    assert [b.dtype_size(v) for _, _, v in members("DType")] == [4, 4, 2, 2, 1, 1, 1, 1, 2, 4, 8, 1, 2, 4, 8]
    with pytest.raises(TypeError) as e:
        b.dtype_size(3)
    assert str(e.value) == (
        "dtype_size(): incompatible function arguments. The following argument types are supported:\n"
        f"    1. (dtype: {MOD}.DType) -> int\n\nInvoked with: 3")
    with pytest.raises(TypeError):
        b.dtype_size(b.Engine.PE)
    m = b.Module()
    f = m.addFunction()
    loc = f.createDramTensor("t", b.MemoryType.DRAM, b.DType.bfloat16, [4, 8])
    assert type(loc.type) is b.MemoryType and loc.type == b.MemoryType.DRAM
    assert type(loc.dtype) is b.DType and loc.dtype == b.DType.bfloat16
    assert type(loc.kind) is b.TensorKind and loc.kind == b.TensorKind.Internal
    s = f.allocations[0]
    s.kind = b.TensorKind.ExternalInput
    assert loc.kind == b.TensorKind.ExternalInput
    with pytest.raises(TypeError):
        f.createDramTensor("u", "DRAM", b.DType.bfloat16, [4])
    node = f.addBlock().addInstruction(b.string2InstructionType("Activation"))
    node.engine = b.Engine.Activation
    assert type(node.engine) is b.Engine and node.engine == b.Engine.Activation
    ap = b.AccessPattern.immediate(1.5)
    assert ap.dtype == b.DType.float32 and ap.flavour == b.AccessFlavour.Plain
    ap.flavour = b.AccessFlavour.Opaque
    assert ap.flavour == b.AccessFlavour.Opaque
    op = b.LegalityOperand(b.LegalitySpace.PSUM, b.DType.float32, 128, 512)
    assert type(op.space) is b.LegalitySpace and op.space == b.LegalitySpace.PSUM
    with pytest.raises(TypeError) as e:
        b.LegalityOperand(1, b.DType.float32, 128, 512)
    assert "incompatible constructor arguments" in str(e.value) and f"space: {MOD}.LegalitySpace" in str(e.value)
    # The default argument's repr in a signature is the member's repr.
    assert f"kind: {MOD}.TensorKind = <TensorKind.Internal: 5>" in b.Function.createDramTensor.__doc__
