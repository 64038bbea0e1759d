"""The opcode table through the bindings: the IntEnum, both maps, pinned slots, errors."""

import pytest

from neuronxsim import BIRError, bir
from neuronxsim.bir import InstructionType

PINNED = {50: "CollectiveRecv", 51: "Select", 52: "CopyPredicated", 53: "CustomOp", 54: "BIRKernel",
          55: "NKIKernel", 56: "NKIKLIRKernel", 57: "DevicePrint", 58: "GetRandState"}


def test_intenum_has_110_members_in_order():
    assert len(InstructionType) == 110
    assert [m.value for m in InstructionType] == list(range(110))


@pytest.mark.parametrize("member", list(InstructionType), ids=lambda m: m.name)
def test_every_name_maps_both_ways(member):
    assert bir.instruction_type_string(member) == member.name
    assert bir.string2InstructionType(member.name) is member


def test_seed_pinned_slots_and_origins():
    for ordinal, name in PINNED.items():
        assert InstructionType[name] == ordinal
        assert bir.OPCODE_ORIGINS[InstructionType(ordinal)] == "SEED"
    assert sum(o == "SEED" for o in bir.OPCODE_ORIGINS.values()) == 9
    assert set(bir.OPCODE_ORIGINS.values()) == {"SEED", "PUBLIC", "OURS"}
    assert bir.OPCODE_NODE_CLASSES[InstructionType.BIRKernel] == "InstBIRKernel"
    assert bir.OPCODE_NODE_CLASSES[InstructionType.NKIKLIRKernel] == "InstNKIKLIRKernel"


@pytest.mark.parametrize("bad", [110, -1, 1 << 20])
def test_out_of_range_ordinal_is_an_error(bad):
    with pytest.raises(BIRError, match=str(bad)):
        bir.instruction_type_string(bad)


@pytest.mark.parametrize("bad", ["", "birkernel", "Bogus", "BIRKernel "])
def test_unknown_name_is_an_error(bad):
    with pytest.raises(BIRError, match="unknown opcode"):
        bir.string2InstructionType(bad)
    with pytest.raises(ValueError):  # BIRError is a ValueError
        bir.string2InstructionType(bad)


def test_categories_come_from_the_table_and_cust_is_the_seed_band():
    """Seed 000: the kernel nodes are tagged category Cust; slots 53..57 are the Custom / Extension band."""
    cust = sorted(int(op) for op, cat in bir.OPCODE_CATEGORIES.items() if cat == "Cust")
    assert cust == [53, 54, 55, 56, 57]
    assert set(bir.OPCODE_CATEGORIES.values()) == {"Comp", "DMA", "Sync", "Ctrl", "Coll", "Sym", "Cust"}
    assert bir.OPCODE_CATEGORIES[InstructionType.Matmult] == "Comp"
    assert bir.OPCODE_CATEGORIES[InstructionType.DMACopy] == "DMA"
    assert all(bir.OPCODE_CATEGORIES[op] == "Sym" for op in InstructionType if op.name.endswith("Symbolic"))
