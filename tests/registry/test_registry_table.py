"""The internal kernel registry as seed 003 specifies it: keys, insertion order, leaves, configs,
InternalKernelConfig, the argument builders, and the lazy build with one build site."""

import dataclasses
import importlib
import inspect
import os
import re
import subprocess
import sys
import textwrap

import pytest

from neuronxsim.starfish.penguin import ir
from neuronxsim.starfish.penguin.targets.codegen import BirCodeGenLoop as codegen

PRIVATE_NKL = "neuronxsim.private_nkl"
PRIVATE_KERNELS = "neuronxsim.nki._private_kernels"

# Seed 003 PHASE C, in insertion order: key, module, function, operand_count, builder,
# requires_multicore_grid. Builders by the seed's lambda names.
TABLE = [
    ("SelectAndScatter", f"{PRIVATE_NKL}.select_and_scatter", "select_and_scatter_kernel", 2, None, False),
    ("ResizeNearest", f"{PRIVATE_NKL}.resize", "resize_nearest_fixed_dma_kernel", 1, "_get_resize_args", False),
    ("Conv2d_pbp_0f1b_0i1o_01fb_experimental_1", f"{PRIVATE_KERNELS}.conv",
     "conv2d_pbp_0f1b_0i1o_01fb_experimental_1", None, "_get_attrs", False),
    ("Conv2d_pbp_fb01_io01_01bf_experimental_1", f"{PRIVATE_KERNELS}.conv",
     "conv2d_pbp_fb01_io01_01bf_kernel_experimental_1", None, "_get_attrs", False),
    ("Conv2d_dw_fb01_io01_01bf_rep_nhwc_Pcinh", f"{PRIVATE_NKL}.conv", "conv2d_dw_fb01_io01_01bf_rep_nhwc_Pcinh", 2,
     "_get_conv_attrs_with_out_shape", False),
    ("Conv1d_depthwise_bf01_oi01_bf01", f"{PRIVATE_NKL}.conv", "conv1d_depthwise_bf01_oi01_bf01", 2,
     "_get_conv_attrs_with_out_shape", False),
    ("conv2d_column_packing", f"{PRIVATE_NKL}.conv", "conv2d_column_packing", 2, "_get_conv_attrs_with_out_shape", False),
    ("conv2d_column_packing_io10", f"{PRIVATE_NKL}.conv", "conv2d_column_packing_io10", 2,
     "_get_conv_attrs_with_out_shape", False),
    ("conv2d_column_packing_1", f"{PRIVATE_NKL}.conv", "conv2d_column_packing_1", 2, "_get_conv_attrs_with_out_shape",
     False),
    ("blockwise_mm", f"{PRIVATE_KERNELS}.blockwise_mm", "blockwise_mm", None, "_get_attrs", False),
    ("conv2d_depthwise_f01b_o01i_bf01", f"{PRIVATE_NKL}.conv", "conv2d_depthwise_f01b_o01i_bf01", 2,
     "_get_conv_attrs_with_out_shape", False),
    ("tiled_pf_transpose", f"{PRIVATE_NKL}.transpose", "tiled_pf_transpose", None, "_get_attrs", True),
    ("tiled_dve_transpose_10", f"{PRIVATE_NKL}.transpose", "tiled_dve_transpose_10", None, "_get_attrs", True),
]

SOURCES = os.path.join(os.path.dirname(__file__), "..", "..", "neuronxsim", "starfish", "penguin", "targets", "codegen")


@pytest.fixture(scope="module")
def registry():
    return codegen.get_internal_kernel_registry()


def test_thirteen_keys_in_the_seeds_insertion_order(registry):
    assert list(registry) == [row[0] for row in TABLE]
    assert str(registry.keys()) == "dict_keys(" + str([row[0] for row in TABLE]) + ")"


@pytest.mark.parametrize("key, module, function, operand_count, builder, multicore", TABLE, ids=[r[0] for r in TABLE])
def test_each_entry_binds_its_leaf_with_the_seeds_config(registry, key, module, function, operand_count, builder,
                                                         multicore):
    config = registry[key]
    assert type(config) is codegen.InternalKernelConfig
    assert config.kernel_func is getattr(importlib.import_module(module), function)
    assert config.kernel_func.__name__ == function
    assert config.operand_count == operand_count and type(config.operand_count) is type(operand_count)
    assert config.requires_multicore_grid is multicore
    assert config.output_is_parameter is False
    assert (config.additional_args_builder is None) == (builder is None)


def test_the_key_and_function_asymmetries(registry):
    assert registry["Conv2d_pbp_fb01_io01_01bf_experimental_1"].kernel_func.__name__ == \
        "conv2d_pbp_fb01_io01_01bf_kernel_experimental_1"  # entry #4: the function has "_kernel"
    assert registry["Conv2d_pbp_0f1b_0i1o_01fb_experimental_1"].kernel_func.__name__ == \
        "conv2d_pbp_0f1b_0i1o_01fb_experimental_1"
    for key in ("Conv2d_pbp_0f1b_0i1o_01fb_experimental_1", "Conv2d_pbp_fb01_io01_01bf_experimental_1",
                "Conv2d_dw_fb01_io01_01bf_rep_nhwc_Pcinh", "Conv1d_depthwise_bf01_oi01_bf01"):
        assert key[0].isupper() and registry[key].kernel_func.__name__[0].islower()
    assert "mlp" not in {k.lower() for k in registry} and "MLP" not in registry


def test_three_lambdas_are_bound_and_shared_by_their_entries(registry):
    groups = {}
    for key, _, _, _, builder, _ in TABLE:
        if builder is not None:
            groups.setdefault(builder, set()).add(id(registry[key].additional_args_builder))
    assert all(len(ids) == 1 for ids in groups.values())  # one lambda object per builder
    assert len({next(iter(ids)) for ids in groups.values()}) == 3  # _get_conv_attrs is bound by none
    for key in ("ResizeNearest", "blockwise_mm", "conv2d_column_packing"):
        assert registry[key].additional_args_builder.__qualname__.endswith("<lambda>")


def test_what_the_builders_build(registry):
    p = ir.Program()
    img = p.tensor("img", [1, 3, 8, 8])
    out = p.tensor("out", [1, 4, 4, 4], kind="output")
    inst = ir.InternalNativeNkiKernel("conv2d_column_packing", [ir.OpaqueAccess(img), ir.OpaqueAccess(img)],
                                      [ir.OpaqueAccess(out)], attrs={"stride": 2, "padding": [1, 1]})
    conv = registry["conv2d_column_packing"].additional_args_builder(inst)
    assert conv == {"stride": 2, "padding": [1, 1], "out_shape": (1, 4, 4, 4)}
    assert list(conv) == ["stride", "padding", "out_shape"]
    assert registry["blockwise_mm"].additional_args_builder(inst) == {"stride": 2, "padding": [1, 1]}
    assert registry["ResizeNearest"].additional_args_builder(inst) == {"out_shape": (1, 4, 4, 4)}
    assert registry["blockwise_mm"].additional_args_builder(inst) is not inst.attrs  # a new dict each time


def test_internal_kernel_config_is_a_plain_five_field_class():
    cls = codegen.InternalKernelConfig
    assert not dataclasses.is_dataclass(cls)
    assert str(inspect.signature(cls.__init__)) == ("(self, kernel_func, operand_count=None, additional_args_builder=None, "
                                                    "requires_multicore_grid=False, output_is_parameter=False)")
    assert inspect.cleandoc(cls.__doc__) == textwrap.dedent("""\
        Configuration for an internal NKI kernel that will be traced to new NKI
        frontend.
        Attributes:
          kernel_func: The actual NKI kernel function to trace
          operand_count: Optional number of operands to use (None = use all operands)
          additional_args_builder: Callable that builds additional kwargs from inst
          requires_multicore_grid: Whether kernel needs grid=(VNC(2),) for multi-core""")
    config = cls(len)
    assert vars(config) == {"kernel_func": len, "operand_count": None, "additional_args_builder": None,
                            "requires_multicore_grid": False, "output_is_parameter": False}


def test_the_getter_is_the_builders_only_caller():
    text = "".join(open(os.path.join(SOURCES, f)).read() for f in sorted(os.listdir(SOURCES))
                   if f.endswith((".pyx", ".pxi")))
    calls = [m.start() for m in re.finditer(r"(?<!def )_build_internal_kernel_registry\(\)", text)]
    assert len(calls) == 1
    getter = text.index("def get_internal_kernel_registry():")
    assert getter < calls[0] < text.index("\ndef ", getter + 1)
    assert codegen.get_internal_kernel_registry.__doc__ == "Get the internal NKI kernel registry."


LAZINESS = """
import os, sys
os.environ["NKI_FRONTEND"] = "beta3"
from neuronxsim.starfish.penguin import ir
from neuronxsim.starfish.penguin.targets.codegen import BirCodeGenLoop as codegen
leaves = lambda: sorted(m for m in sys.modules if m.startswith(("neuronxsim.private_nkl",
                        "neuronxsim.nki._private_kernels.conv", "neuronxsim.nki._private_kernels.blockwise_mm")))
assert codegen._INTERNAL_KERNEL_REGISTRY is None and leaves() == [], leaves()
builds = []
build = codegen._build_internal_kernel_registry
codegen._build_internal_kernel_registry = lambda: builds.append(1) or build()

p = ir.Program("it54")
x = p.tensor("x", [1, 128, 256], "bfloat16")
F = ir.FullTensorAccess
p.add(ir.BIRKernel("ExpertMLPs", [F(x)], [F(p.tensor("e", [1, 128, 256], "bfloat16", kind="output"))]))
codegen.BirCodeGenLoop().lower(p)
assert codegen._INTERNAL_KERNEL_REGISTRY is None and builds == [] and leaves() == []

def transpose():
    q = ir.Program("it56")
    a = q.tensor("a", [64, 32])
    q.add(ir.InternalNativeNkiKernel("tiled_dve_transpose_10", [ir.OpaqueAccess(a)],
                                     [ir.OpaqueAccess(q.tensor("b", [32, 64], kind="output"))]))
    return q
codegen.BirCodeGenLoop().lower(transpose())
registry = codegen._INTERNAL_KERNEL_REGISTRY
assert builds == [1] and len(registry) == 13 and leaves() != []
codegen.BirCodeGenLoop().lower(transpose())
assert builds == [1] and codegen.get_internal_kernel_registry() is registry
print("ok")
"""


def test_the_registry_is_built_once_on_the_first_it56_lowering():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    result = subprocess.run([sys.executable, "-P", "-c", LAZINESS], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def _words(text):
    return " ".join(text.split())


def test_the_docstrings_the_seeds_quote_verbatim():
    """Seed 003 quotes the builder's and _resolve_kernel_config's docstrings, seed 000
    codegenInternalNativeNkiKernel's (our own text may follow, after a blank line)."""
    builder = _words(codegen._build_internal_kernel_registry.__doc__)
    assert builder.startswith("Build the registry of all internal NKI kernels that can be traced to new NKI frontend. ")
    assert "maps kernel names to their configuration, eliminating the need for long if-elif chains" in builder
    resolve = inspect.cleandoc(codegen.BirCodeGenLoop._resolve_kernel_config.__doc__).split("\n\n")[0]
    assert _words(resolve) == ("Look up kernel config from registry and prepare common arguments. "
                               "Returns (kernel_config, internal_kernel, additional_args, call_args).")
    sink = inspect.cleandoc(codegen.BirCodeGenLoop.codegenInternalNativeNkiKernel.__doc__).split("\n\n")
    assert sink[0] == "Codegen for internal NKI kernels using new NKI frontend path."
    assert _words(sink[1]) == ("Traces the kernel to new NKI frontend at codegen time and creates BIR NKIKLIRKernel "
                               "instruction. Uses caching to avoid redundant tracing of identical kernels.")


TOPK_INDEPENDENCE = """
import sys
from neuronxsim.nki._private_kernels.topk import topk_method_mapping as topk
assert not any(m.startswith("neuronxsim.starfish.penguin") for m in sys.modules), "the top-k mapping imported the codegen"
from neuronxsim.starfish.penguin.targets.codegen import BirCodeGenLoop as codegen
registry = codegen.get_internal_kernel_registry()
assert all(isinstance(k, str) for k in registry) and all(isinstance(k, topk.SupportedTopkMethods)
                                                         for k in topk.SUPPORTED_TOPK_METHOD_MAPPING)
leaves = {c.kernel_func for c in registry.values()}
assert not leaves & set(topk.SUPPORTED_TOPK_METHOD_MAPPING.values())
assert not any("topk" in k.lower() for k in registry)
print("ok")
"""

TOPK_NOT_IMPORTED_BY_THE_REGISTRY = """
import sys
from neuronxsim.starfish.penguin.targets.codegen import BirCodeGenLoop as codegen
codegen.get_internal_kernel_registry()
assert not any(".topk" in m for m in sys.modules), sorted(m for m in sys.modules if ".topk" in m)
print("ok")
"""


@pytest.mark.parametrize("script", [TOPK_INDEPENDENCE, TOPK_NOT_IMPORTED_BY_THE_REGISTRY],
                         ids=["mapping-alone", "registry-alone"])
def test_the_top_k_mapping_is_independent_of_the_registry(script):
    """Seed 003: SUPPORTED_TOPK_METHOD_MAPPING and _INTERNAL_KERNEL_REGISTRY "never interact":
    separate modules that import nothing of each other, Enum keys vs macro-op names, no shared
    leaves."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    result = subprocess.run([sys.executable, "-P", "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_mlp_is_no_registry_entry_and_the_codegen_names_no_fused_mlp_isa_kernel():
    """Seed 003's correction: no MLP key, and no fused_mlp_isa_kernel anywhere in BirCodeGenLoop;
    its mlp module path is there only for the TKG threshold."""
    registry = codegen.get_internal_kernel_registry()
    assert not {k for k in registry if k.lower() in ("mlp", "qkv", "attention", "rmsnorm")}
    text = "".join(open(os.path.join(SOURCES, f)).read() for f in sorted(os.listdir(SOURCES))
                   if f.endswith((".pyx", ".pxi")))
    assert "fused_mlp_isa_kernel" not in text
    uses = re.findall(r"from neuronxsim\.nki\._private_kernels\.mlp import (\w+)", text)
    assert uses and set(uses) == {"TKG_BS_SEQLEN_THRESHOLD"}
