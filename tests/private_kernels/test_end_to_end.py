"""Every registry kernel and every top-k method end to end: a Penguin macro lowered to an IT56
node (``codegenInternalNativeNkiKernel``), resolved by ``lowerKernelInst``
(``neuronxsim.walrus.lower_kernel_inst``), simulated (``neuronxsim.sim``, every function its own
NeuronCore over shared DRAM) and compared with NumPy; beta2 (KLR file) and beta3 (BIR JSON) must
give identical outputs.
"""

import ml_dtypes
import numpy as np
import pytest

import kernel_refs as refs
from neuronxsim import bir
from neuronxsim.nki._private_kernels.topk.topk_method_mapping import SUPPORTED_TOPK_METHOD_MAPPING
from neuronxsim.private_nkl.select_and_scatter import pooled_size
from neuronxsim.starfish.penguin import ir
from neuronxsim.starfish.penguin.targets.codegen import BirCodeGenLoop as codegen
from neuronxsim.starfish.penguin.targets.codegen.KernelMetricsCollector import KernelMetricsCollector

from neuronxsim import sim
from neuronxsim.walrus import lower_kernel_inst


def _execute(module, inputs):
    return sim.simulate(module, inputs, arch={"gen2": "trn1", "gen3": "trn2"}[module.arch]).outputs


def run_macro(monkeypatch, frontend, func_name, inputs, outputs, attrs=None):
    """Lowers one InternalNativeNkiKernel over ``inputs`` (name -> array) producing ``outputs``
    (name -> (shape, dtype name)), resolves its IT56 node and simulates the module."""
    monkeypatch.setenv("NKI_FRONTEND", frontend)
    p = ir.Program(func_name)
    srcs = [ir.OpaqueAccess(p.tensor(n, list(a.shape), ir_dtype(a.dtype))) for n, a in inputs.items()]
    dsts = [ir.OpaqueAccess(p.tensor(n, list(s), d, kind="output")) for n, (s, d) in outputs.items()]
    p.add(ir.InternalNativeNkiKernel(func_name, srcs, dsts, attrs=attrs))
    module = codegen.BirCodeGenLoop().lower(p)
    (node,) = module.functions[0].blocks[0].instructions
    assert node.kernel_format == {"beta2": "klir", "beta3": "bir"}[frontend]
    resolved = lower_kernel_inst(module)
    assert not any(i.opcode == bir.InstructionType.NKIKLIRKernel for f in resolved.functions for b in f.blocks
                   for i in b.instructions)
    return _execute(resolved, inputs)


def ir_dtype(dtype):
    return {np.dtype(np.float32): "float32", np.dtype(ml_dtypes.bfloat16): "bfloat16", np.dtype(np.float16): "float16",
            np.dtype(np.int32): "int32", np.dtype(np.uint32): "uint32"}[np.dtype(dtype)]


def both_frontends(monkeypatch, *args, **kwargs):
    """The outputs of beta3, checked identical to beta2's."""
    beta3 = run_macro(monkeypatch, "beta3", *args, **kwargs)
    beta2 = run_macro(monkeypatch, "beta2", *args, **kwargs)
    assert beta3.keys() == beta2.keys()
    for name in beta3:
        np.testing.assert_array_equal(beta2[name], beta3[name])
    return beta3


@pytest.fixture(autouse=True)
def fresh(monkeypatch, tmp_path):
    monkeypatch.setenv(codegen.KLR_DIR_ENV, str(tmp_path))
    codegen.clear_internal_kernel_trace_cache()
    KernelMetricsCollector.get_instance().reset()


def test_resize_nearest(monkeypatch, rng):
    img = rng.standard_normal((2, 30, 20, 16)).astype(np.float32)
    out = both_frontends(monkeypatch, "ResizeNearest", {"img": img}, {"out": ((2, 59, 38, 16), "float32")})["out"]
    np.testing.assert_array_equal(out, refs.resize_nearest(img, (2, 59, 38, 16)))


def test_select_and_scatter(monkeypatch, rng):
    operand = rng.standard_normal((2, 64, 28, 28)).astype(np.float32)
    source = rng.standard_normal((2, 64, pooled_size(28), pooled_size(28))).astype(np.float32)
    out = both_frontends(monkeypatch, "SelectAndScatter", {"operand": operand, "source": source},
                         {"out": ((2, 64, 28, 28), "float32")})["out"]
    refs.all_close(out, refs.select_and_scatter(operand, source), refs.SELECT_AND_SCATTER_TOL, refs.SELECT_AND_SCATTER_TOL)


# registry key, layouts, lhs sizes, rhs sizes, attrs
CONVS = [
    ("Conv2d_pbp_0f1b_0i1o_01fb_experimental_1", "0f1b_0i1o_01fb", dict(b=2, f=3, **{"0": 9, "1": 10}),
     dict(o=5, i=3, **{"0": 3, "1": 3}), dict(padding=1)),
    ("Conv2d_pbp_fb01_io01_01bf_experimental_1", "fb01_io01_01bf", dict(b=4, f=6, **{"0": 8, "1": 8}),
     dict(o=8, i=6, **{"0": 8, "1": 8}), dict(padding=1)),
    ("Conv2d_dw_fb01_io01_01bf_rep_nhwc_Pcinh", "fb01_io01_01bf", dict(b=4, f=16, **{"0": 10, "1": 10}),
     dict(o=8, i=16, **{"0": 10, "1": 10}), dict(padding=1)),
    ("Conv1d_depthwise_bf01_oi01_bf01", "bf01_oi01_bf01", dict(b=2, f=130, **{"0": 1, "1": 50}),
     dict(o=260, i=1, **{"0": 1, "1": 5}), dict(padding=[0, 2], groups=130)),
    ("conv2d_column_packing", "bf01_oi01_bf01", dict(b=2, f=3, **{"0": 20, "1": 21}),
     dict(o=16, i=3, **{"0": 3, "1": 3}), dict(stride=2, padding=1)),
    ("conv2d_column_packing_io10", "bf01_io10_bf01", dict(b=2, f=3, **{"0": 20, "1": 21}),
     dict(o=16, i=3, **{"0": 3, "1": 5}), dict(padding=[1, 2])),
    ("conv2d_column_packing_1", "bf01_oi01_bf01", dict(b=1, f=150, **{"0": 6, "1": 5}),
     dict(o=140, i=150, **{"0": 2, "1": 2}), {}),
    ("conv2d_depthwise_f01b_o01i_bf01", "f01b_o01i_bf01", dict(b=2, f=8, **{"0": 11, "1": 12}),
     dict(o=8, i=1, **{"0": 3, "1": 3}), dict(padding=1, stride=2, groups=8)),
]


@pytest.mark.parametrize("key, layouts, lhs_sizes, rhs_sizes, attrs", CONVS, ids=[c[0] for c in CONVS])
def test_convolutions(monkeypatch, rng, key, layouts, lhs_sizes, rhs_sizes, attrs):
    lhs_layout, rhs_layout, _ = layouts.split("_")
    img = refs.random_operand(rng, lhs_layout, lhs_sizes, np.float32)
    filt = refs.random_operand(rng, rhs_layout, rhs_sizes, np.float32)
    expected = refs.conv(img, filt, layouts, **attrs)
    out = both_frontends(monkeypatch, key, {"img": img, "filt": filt}, {"out": (expected.shape, "float32")},
                         attrs=attrs)["out"]
    refs.max_all_close(out, expected, refs.CONV_RTOL, refs.CONV_ATOL)


def test_blockwise_mm(monkeypatch, rng):
    tokens, hidden, experts, inter, block = 300, 192, 4, 160, 128
    affinity, positions, block_expert = refs.moe_routing(rng, tokens, experts, 2, block)
    inputs = {"hidden": (rng.standard_normal((tokens + 1, hidden)) * 0.5).astype(np.float32), "affinity": affinity,
              "gate_up": (rng.standard_normal((experts, hidden, 2, inter)) / np.sqrt(hidden)).astype(np.float32),
              "down": (rng.standard_normal((experts, inter, hidden)) / np.sqrt(inter)).astype(np.float32),
              "positions": positions, "block_expert": block_expert}
    out = both_frontends(monkeypatch, "blockwise_mm", inputs, {"out": ((tokens + 1, hidden), "float32")},
                         attrs={"block_size": block})["out"]
    refs.max_all_close(out, refs.blockwise_mm(*inputs.values(), block), refs.MOE_RTOL, refs.MOE_ATOL)


@pytest.mark.parametrize("key", ["tiled_pf_transpose", "tiled_dve_transpose_10"])
def test_transposes_on_two_cores(monkeypatch, rng, key):
    x = rng.standard_normal((300, 200)).astype(np.float32)
    out = both_frontends(monkeypatch, key, {"x": x}, {"y": ((200, 300), "float32")})["y"]
    np.testing.assert_array_equal(out, x.T)


@pytest.mark.parametrize("method", list(SUPPORTED_TOPK_METHOD_MAPPING), ids=lambda m: m.name)
def test_topk_methods(monkeypatch, rng, method):
    """The top-k methods are not registry kernels: each is registered for this test under its
    own key, which is all the IT56 path needs."""
    key = f"topk_{method.name.lower()}"
    monkeypatch.setitem(codegen.get_internal_kernel_registry(), key, codegen.InternalKernelConfig(
        SUPPORTED_TOPK_METHOD_MAPPING[method], additional_args_builder=lambda inst: inst.get_attrs_dict()))
    x = rng.standard_normal((8, 1000)).astype(np.float32)
    out = both_frontends(monkeypatch, key, {"inp": x}, {"values": ((8, 64), "float32"), "indices": ((8, 64), "uint32")},
                         attrs={"k": 64})
    values, indices = refs.topk(x, 64)
    np.testing.assert_allclose(out["values"], values, rtol=refs.TOPK_RTOL, atol=refs.TOPK_ATOL)
    np.testing.assert_array_equal(out["indices"], indices)


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16], ids=["f32", "bf16"])
def test_public_sizes(monkeypatch, rng, dtype):
    """nki-samples' resize [10,30,20,1280] -> [10,59,38,1280] and select-and-scatter [8,64,112,112]."""
    img = rng.standard_normal((10, 30, 20, 1280)).astype(dtype)
    out = run_macro(monkeypatch, "beta2", "ResizeNearest", {"img": img},
                    {"out": ((10, 59, 38, 1280), ir_dtype(dtype))})["out"]
    np.testing.assert_array_equal(out, refs.resize_nearest(img, (10, 59, 38, 1280)))
    operand = rng.standard_normal((8, 64, 112, 112)).astype(dtype)
    source = rng.standard_normal((8, 64, 56, 56)).astype(dtype)
    out = run_macro(monkeypatch, "beta2", "SelectAndScatter", {"operand": operand, "source": source},
                    {"out": ((8, 64, 112, 112), ir_dtype(dtype))})["out"]
    refs.all_close(out, refs.select_and_scatter(operand, source), refs.SELECT_AND_SCATTER_TOL, refs.SELECT_AND_SCATTER_TOL)
