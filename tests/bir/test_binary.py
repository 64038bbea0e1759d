"""BIR binary through the bindings (Module.to_binary / from_binary): what BIR JSON holds, for
traced kernels of both dialects, a demo model and a multi-core trace; bad bytes are one BIRError."""

import os
import re
import sys

import numpy as np
import pytest

from neuronxsim import BIRError, bir
from neuronxsim.bir import DType, InstructionType, MemoryType
from neuronxsim.demo import build_demo_module

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "nki"))
import tutorial_kernels  # noqa: E402


def traced_modules():
    import ml_dtypes

    import neuronxsim.nki as nki
    import neuronxsim.nki06 as nki06
    import neuronxsim.nki06.isa as nisa06
    import neuronxsim.nki06.language as nl06
    from neuronxsim.nki06.kernel import trace_kernel as trace06

    bf16 = ml_dtypes.bfloat16
    yield nki.trace_kernel(tutorial_kernels.matmul_tiled, np.zeros((256, 128), bf16),
                           np.zeros((256, 1024), bf16)).module
    yield nki.trace_kernel(tutorial_kernels.rmsnorm_kernel, np.zeros((300, 64), np.float32),
                           np.zeros((64,), np.float32)).module

    @nki06.jit
    def scale_rows(a):
        out = nl06.ndarray(a.shape, dtype=a.dtype, buffer=nl06.shared_hbm)
        t = nl06.ndarray(a.shape, dtype=a.dtype, buffer=nl06.sbuf)
        nisa06.dma_copy(dst=t, src=a)
        nisa06.tensor_scalar(dst=t, data=t, op0=nl06.multiply, operand0=2.0)
        nisa06.dma_copy(dst=out, src=t)
        return out
    yield trace06(scale_rows, np.zeros((128, 32), np.float32)).module
    yield trace06(scale_rows[2], np.zeros((128, 32), np.float32)).module  # (two cores: two functions)


def test_a_module_read_back_writes_the_same_json():
    modules = [build_demo_module(tokens=32, hidden=256, intermediate=512), *traced_modules()]
    assert len(modules[-1].functions) == 2
    for m in modules:
        data = m.to_binary()
        back = bir.Module.from_binary(data)
        assert back.to_json(1) == m.to_json(1)
        assert back.to_binary() == data
        assert len(data) * 2 < len(m.to_json(-1))  # (compact: no keys, varints)


def test_verification_on_read_is_the_callers_choice():
    m = bir.Module()
    f = m.addFunction()
    t = f.createOnChipTensor("t", MemoryType.SB, DType.float32, 128, 64)
    node = f.addBlock().addInstruction(InstructionType.TensorCopy)
    node.addSeqAccess(t, True)  # (no input: the verifier refuses it)
    data = m.to_binary()
    assert bir.Module.from_binary(data, verify=False).to_json() == m.to_json()
    with pytest.raises(BIRError, match="TensorCopy"):
        bir.Module.from_binary(data)


@pytest.mark.parametrize("data, words", [
    (b"", "does not start with its magic bytes"),
    (b'{"functions": []}', "does not start with its magic bytes"),
    (b"NXSBIR\x00\x01", "byte 8: truncated (reading binary format)"),
    (b"NXSBIR\x00\x01\x02\x04\x02\x00", "byte 12: truncated (reading the module's unknown attributes)"),
])
def test_bad_bytes_are_one_error_naming_the_byte(data, words):
    with pytest.raises(BIRError, match=words.replace("(", r"\(").replace(")", r"\)")):
        bir.Module.from_binary(data)


def test_every_cut_of_a_traced_module_is_refused():
    data = next(traced_modules()).to_binary()
    for cut in range(0, len(data), max(1, len(data) // 400)):
        with pytest.raises(BIRError):
            bir.Module.from_binary(data[:cut], verify=False)


def test_text_is_not_taken_for_bytes():
    with pytest.raises(TypeError):
        bir.Module.from_binary(build_demo_module(tokens=32, hidden=256, intermediate=512).to_json())


@pytest.mark.parametrize("varint, words", [
    # ten bytes, the last holding more than the 64th bit; eleven bytes
    (b"\xff" * 9 + b"\x02", "byte 18: a varint longer than 64 bits (reading binary format)"),
    (b"\xff" * 10 + b"\x01", "byte 18: a varint longer than 64 bits (reading binary format)"),
    # the longest that fits: zigzag 2^64 - 1, the int64 -2^63
    (b"\xff" * 9 + b"\x01", "byte 18: binary format -9223372036854775808 is not supported"),
])
@pytest.mark.parametrize("tail", [b"", b"\x00" * 16], ids=["at the end", "with bytes after it"])
def test_long_varints_are_read_to_the_64th_bit_wherever_they_are(varint, words, tail):
    # (a reader may take a varint's bytes differently with ten or more bytes left: both ways agree)
    with pytest.raises(BIRError, match=re.escape(words)):
        bir.Module.from_binary(b"NXSBIR\x00\x01" + varint + tail)
