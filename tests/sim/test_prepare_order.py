"""Preparing a module verifies each operand just before decoding it (one pass over the
module's operands), yet refuses exactly as verifying the whole module first did: the verifier's complaint
about any instruction, of any function, comes before a decoder's refusal of an earlier one."""

import pytest

from neuronxsim import SimulationError, sim
from neuronxsim.bir import DType
from neuronxsim.sim.build import ModuleBuilder


def _decode_refusal_then_verifier_refusal(b):
    big = b.sbuf("big", 128, 8192, DType.float32, addr=190 * 1024)  # beyond trn1's SBUF: decode
    b.add("Memset", [], [b.tile(big)], name="fill")
    t = b.sbuf("t", 128, 64, DType.float32)
    b.add("TensorCopy", [b.tile(t)], [b.tile(t, col=32, elems=64)], name="oob")  # the verifier's


def test_a_later_verifier_refusal_comes_before_an_earlier_decoder_refusal():
    b = ModuleBuilder("trn1")
    _decode_refusal_then_verifier_refusal(b)
    with pytest.raises(SimulationError, match=r"instructions\[1\] TensorCopy 'oob'\.outs\[0\]: free access"):
        sim.simulate(b.module, mode="timing")
    b = ModuleBuilder("trn1")
    big = b.sbuf("big", 128, 8192, DType.float32, addr=190 * 1024)
    b.add("Memset", [], [b.tile(big)], name="fill")
    with pytest.raises(SimulationError, match=r"instructions\[0\] Memset 'fill': outs\[0\] tensor 'big' "
                                              r"occupies SBUF bytes"):
        sim.simulate(b.module, mode="timing")


def test_a_later_operands_verifier_refusal_comes_before_an_earlier_operands_decoder_refusal():
    # The decoder verifies each operand just before decoding it; ins[0] is decoded (and refused)
    # before outs[0] is verified, yet the verifier's complaint about outs[0] is the one reported.
    b = ModuleBuilder("trn1")
    big = b.sbuf("big", 128, 8192, DType.float32, addr=190 * 1024)  # beyond trn1's SBUF: decode
    t = b.sbuf("t", 128, 64, DType.float32)
    b.add("TensorCopy", [b.tile(big, elems=64)], [b.tile(t, col=32, elems=64)], name="mix")
    with pytest.raises(SimulationError, match=r"instructions\[0\] TensorCopy 'mix'\.outs\[0\]: free access"):
        sim.simulate(b.module, mode="timing")
    b = ModuleBuilder("trn1")
    big = b.sbuf("big", 128, 8192, DType.float32, addr=190 * 1024)
    t = b.sbuf("t", 128, 64, DType.float32)
    b.add("TensorCopy", [b.tile(big, elems=64)], [b.tile(t, elems=64)], name="mix")
    with pytest.raises(SimulationError, match=r"instructions\[0\] TensorCopy 'mix': ins\[0\] tensor 'big' "
                                              r"occupies SBUF bytes"):
        sim.simulate(b.module, mode="timing")


def test_a_function_that_is_not_run_is_still_verified():
    b = ModuleBuilder("trn1", functions=2)
    t = b.sbuf("t", 128, 64, DType.float32)
    b.add("Memset", [], [b.tile(t)], name="ok")
    b.core(1)
    _decode_refusal_then_verifier_refusal(b)
    with pytest.raises(SimulationError, match=r"^functions\[1\]\.blocks\[0\]\.instructions\[1\] TensorCopy 'oob'"):
        sim.simulate(b.module, mode="timing", neuron_core_id=0)
    with pytest.raises(SimulationError, match=r"^functions\[1\]\.blocks\[0\]\.instructions\[1\] TensorCopy 'oob'"):
        sim.simulate(b.module, mode="timing", neuron_core_id=5)
