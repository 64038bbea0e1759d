"""_resolve_kernel_config: the registry's single read path (seed 003 "Query and Miss Path")."""

import numpy as np
import pytest

from neuronxsim.errors import CodegenError
from neuronxsim.private_nkl.resize import resize_nearest_fixed_dma_kernel
from neuronxsim.starfish.penguin import ir
from neuronxsim.starfish.penguin.targets.codegen import BirCodeGenLoop as codegen
from neuronxsim.starfish.penguin.targets.codegen.BirCodeGenLoop import BirCodeGenLoop


def test_a_miss_raises_the_seeds_message_verbatim(programs):
    p = programs.internal("Conv3d_nope", [("x", [4], "float32")], [("y", [4], "float32")])
    keys = str(codegen.get_internal_kernel_registry().keys())
    message = "Internal NKI kernel 'Conv3d_nope' is not registered. Available kernels: " + keys
    with pytest.raises(CodegenError) as e:
        BirCodeGenLoop()._resolve_kernel_config(p.insts[0])
    assert str(e.value) == message
    with pytest.raises(CodegenError) as e:
        BirCodeGenLoop().lower(p)
    assert str(e.value) == "insts[0] " + message  # lower() names the macro's position


def test_call_args_are_proxies_of_the_first_operand_count_srcs(programs):
    p = programs.internal("ResizeNearest", [("img", [2, 6, 5, 3], "bfloat16"), ("unused", [7], "float32")],
                          [("out", [2, 11, 9, 3], "bfloat16")])
    config, kernel, additional_args, call_args = BirCodeGenLoop()._resolve_kernel_config(p.insts[0])
    assert config is codegen.get_internal_kernel_registry()["ResizeNearest"]
    assert kernel is resize_nearest_fixed_dma_kernel
    assert additional_args == {"out_shape": (2, 11, 9, 3)}
    (proxy,) = call_args  # operand_count=1: the second src is not the kernel's
    assert isinstance(proxy, np.ndarray) and proxy.shape == (2, 6, 5, 3) and proxy.dtype == ir.numpy_dtype("bfloat16")
    assert proxy.strides == (0, 0, 0, 0)  # shape and dtype only: nothing allocated


def test_all_srcs_when_operand_count_is_none_and_attrs_as_kwargs(programs):
    p = programs.internal("blockwise_mm", [(f"s{i}", [i + 1], "float32") for i in range(6)],
                          [("out", [3], "float32")], attrs={"block_size": 4})
    _, _, additional_args, call_args = BirCodeGenLoop()._resolve_kernel_config(p.insts[0])
    assert [a.shape for a in call_args] == [(i + 1,) for i in range(6)]
    assert additional_args == {"block_size": 4}


def test_outputs_are_proxied_when_output_is_parameter(monkeypatch, programs):
    config = codegen.InternalKernelConfig(resize_nearest_fixed_dma_kernel, operand_count=1, output_is_parameter=True)
    monkeypatch.setitem(codegen.get_internal_kernel_registry(), "ResizeInPlace", config)
    p = programs.internal("ResizeInPlace", [("img", [1, 2, 2, 1], "float32")], [("out", [1, 4, 4, 1], "float16")])
    _, _, additional_args, call_args = BirCodeGenLoop()._resolve_kernel_config(p.insts[0])
    assert [(a.shape, a.dtype) for a in call_args] == [((1, 2, 2, 1), np.float32), ((1, 4, 4, 1), np.float16)]
    assert additional_args == {}
    # The NKI front end's kernel inputs are read-only: such a kernel is refused, naming why.
    monkeypatch.setenv("NKI_FRONTEND", "beta3")
    with pytest.raises(CodegenError, match=r"InternalNativeNkiKernel 'k': internal NKI kernel 'ResizeInPlace' "
                                           r"\(neuronxsim.private_nkl.resize.resize_nearest_fixed_dma_kernel\) takes "
                                           r"its outputs as parameters \(output_is_parameter\)"):
        BirCodeGenLoop().lower(p)


def test_too_few_srcs_or_no_dsts_are_refused(programs):
    p = programs.internal("SelectAndScatter", [("x", [1, 1, 4, 4], "float32")], [("y", [1, 1, 4, 4], "float32")])
    with pytest.raises(CodegenError, match=r"InternalNativeNkiKernel 'k' srcs: 1 operands; internal NKI kernel "
                                           r"'SelectAndScatter' takes its first 2"):
        BirCodeGenLoop()._resolve_kernel_config(p.insts[0])
    q = ir.Program()
    q.add(ir.InternalNativeNkiKernel("tiled_pf_transpose", [ir.OpaqueAccess(q.tensor("x", [4, 4]))], [], name="t"))
    with pytest.raises(CodegenError, match=r"InternalNativeNkiKernel 't' dsts: no operands; expected the results of "
                                           r"internal NKI kernel 'tiled_pf_transpose'"):
        BirCodeGenLoop()._resolve_kernel_config(q.insts[0])
