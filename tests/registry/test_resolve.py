"""_resolve_kernel_config: the registry's single read path (seed 003 "Query and Miss Path")."""

import numpy as np
import pytest

import neuronxsim.nki.language as nl

from neuronxsim.errors import CodegenError
from neuronxsim.private_nkl.resize import resize_nearest_fixed_dma_kernel
from neuronxsim.starfish.penguin import ir
from neuronxsim.starfish.penguin.targets.codegen import BirCodeGenLoop as codegen
from neuronxsim.starfish.penguin.targets.codegen.BirCodeGenLoop import BirCodeGenLoop, InternalNativeNkiKernelCodegen


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


def scale_rows_into(x, bias, out, factor=1.0):
    """A registry-style leaf that takes its output as a parameter and writes it: out = x * factor + bias."""
    rows, cols = x.shape
    for i in nl.affine_range((rows + 127) // 128):
        r0 = i * 128
        n = min(128, rows - r0)
        nl.store(out[r0:r0 + n, :], nl.load(x[r0:r0 + n, :]) * factor + nl.load(bias[r0:r0 + n, :]))


@pytest.mark.parametrize("frontend", ["beta2", "beta3"])
def test_a_kernel_that_takes_its_outputs_as_parameters_runs_end_to_end(monkeypatch, programs, frontend):
    """Seed 003: output_is_parameter gates output-proxy construction, so the kernel receives its
    outputs as parameters (after its inputs) and writes them. Lowered, resolved and simulated."""
    from neuronxsim import sim, walrus

    monkeypatch.setenv("NKI_FRONTEND", frontend)
    config = codegen.InternalKernelConfig(scale_rows_into, additional_args_builder=lambda inst: inst.get_attrs_dict(),
                                          output_is_parameter=True)
    monkeypatch.setitem(codegen.get_internal_kernel_registry(), "ScaleRowsInto", config)
    p = programs.internal("ScaleRowsInto", [("x", [200, 96], "float32"), ("b", [200, 96], "float32")],
                          [("y", [200, 96], "float32")], attrs={"factor": 3.0})
    module = BirCodeGenLoop().lower(p)
    (node,) = module.functions[0].blocks[0].instructions
    assert (node.func_args, node.func_outs) == (["x", "bias"], ["out"])  # the leaf's own parameter names
    rng = np.random.default_rng(3)
    x, b = rng.standard_normal((2, 200, 96), dtype=np.float32)
    out = sim.simulate(walrus.lower_kernel_inst(module), {"x": x, "b": b}).outputs["y"]
    np.testing.assert_allclose(out, x * 3.0 + b, rtol=1e-6, atol=1e-6)


def test_an_output_parameter_must_be_positional(monkeypatch, programs):
    def keyword_output(x, *, out):
        raise AssertionError("never traced")

    config = codegen.InternalKernelConfig(keyword_output, output_is_parameter=True)
    monkeypatch.setitem(codegen.get_internal_kernel_registry(), "KeywordOutput", config)
    p = programs.internal("KeywordOutput", [("x", [4, 4], "float32")], [("y", [4, 4], "float32")])
    with pytest.raises(CodegenError, match=r"takes its outputs as parameters \(output_is_parameter\); expected 1 input "
                                           r"and 1 output positional parameters, got \(x, \*, out\)"):
        BirCodeGenLoop().lower(p)


@pytest.mark.parametrize("frontend", ["beta2", "beta3"])
def test_a_miss_resolves_the_config_once_in_the_tracer_and_a_hit_not_at_all(monkeypatch, programs, frontend):
    """Seed 003: _resolve_kernel_config's consumers are the two tracers; the cache key does not
    need it, so a miss runs it (and the kernel's argument builder) once, a hit never."""
    monkeypatch.setenv("NKI_FRONTEND", frontend)
    calls, tracing = [], []
    resolve = InternalNativeNkiKernelCodegen._resolve_kernel_config
    tracer_name = f"_trace_kernel_{frontend}"
    tracer = getattr(InternalNativeNkiKernelCodegen, tracer_name)

    def counting(self, inst):
        calls.append(tracer_name if tracing else "outside the tracer")
        return resolve(self, inst)

    def traced(self, inst):
        tracing.append(1)
        try:
            return tracer(self, inst)
        finally:
            tracing.pop()

    monkeypatch.setattr(InternalNativeNkiKernelCodegen, "_resolve_kernel_config", counting)
    monkeypatch.setattr(InternalNativeNkiKernelCodegen, tracer_name, traced)
    entry = codegen.get_internal_kernel_registry()["ResizeNearest"]
    built = []
    builder = entry.additional_args_builder
    monkeypatch.setattr(entry, "additional_args_builder", lambda inst: built.append(1) or builder(inst))
    BirCodeGenLoop().lower(programs.resize())
    assert calls == [tracer_name] and built == [1]
    BirCodeGenLoop().lower(programs.resize())  # a hit
    assert calls == [tracer_name] and built == [1]


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


@pytest.mark.parametrize("func_name, srcs, dsts, attrs, message", [
    ("SelectAndScatter", [("x", [1, 1, 4, 4], "float32"), ("s", [1, 1, 2, 2], "float32")],
     [("y", [1, 1, 4, 4], "float32")], {"window": 2, "stride": 2, "padding": 0},
     "does not take attrs 'window', 'stride', 'padding' (its registry entry passes the kernel no attrs)"),
    ("ResizeNearest", [("img", [1, 1, 2, 1], "float32")], [("out", [1, 1, 4, 1], "float32")], {"mode": "bilinear"},
     "does not take attr 'mode' (its registry entry passes the kernel only 'out_shape')"),
    ("ResizeNearest", [("img", [1, 1, 2, 1], "float32")], [("out", [1, 1, 4, 1], "float32")],
     {"out_shape": [1, 1, 8, 1]}, None),
])
def test_attrs_the_registry_entry_does_not_pass_are_refused(programs, func_name, srcs, dsts, attrs, message):
    """SelectAndScatter's entry has no argument builder and ResizeNearest's passes only the
    result's shape: their fixed kernels would ignore a window or a mode."""
    p = programs.internal(func_name, srcs, dsts, attrs=attrs)
    with pytest.raises(CodegenError) as e:
        BirCodeGenLoop().lower(p)
    if message is None:  # an attr the entry replaces by its own value
        message = ("insts[0] InternalNativeNkiKernel 'k': attr 'out_shape' is [1, 1, 8, 1], but the registry entry "
                   "of internal NKI kernel 'ResizeNearest' passes the kernel out_shape=(1, 1, 4, 1)")
    else:
        message = f"insts[0] InternalNativeNkiKernel 'k': internal NKI kernel '{func_name}' {message}"
    assert str(e.value) == message


def test_an_attr_equal_to_what_the_entry_passes_is_accepted(programs):
    p = programs.resize((1, 2, 2, 1), (1, 4, 4, 1))
    p.insts[0].attrs = {"out_shape": [1, 4, 4, 1]}
    assert BirCodeGenLoop().lower(p).functions[0].blocks[0].instructions[0].func_name == "ResizeNearest"


def test_arguments_the_kernel_does_not_take_are_refused_at_the_macro(programs):
    """Named by the macro, not by the place in neuronxsim that called the tracer."""
    p = programs.internal("tiled_pf_transpose", [("x", [4, 8], "float32")], [("y", [8, 4], "float32")],
                          attrs={"perm": [1, 0]})
    with pytest.raises(CodegenError) as e:
        BirCodeGenLoop().lower(p)
    assert str(e.value) == ("insts[0] InternalNativeNkiKernel 'k': internal NKI kernel 'tiled_pf_transpose' "
                            "(neuronxsim.private_nkl.transpose.tiled_pf_transpose) does not take the macro's operands "
                            "and attrs: got an unexpected keyword argument 'perm'")
