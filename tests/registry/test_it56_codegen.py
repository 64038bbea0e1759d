"""codegenInternalNativeNkiKernel: the IT56 node, the two forms, the NKI_FRONTEND router, the
trace cache and the errors."""

import importlib.util
import json
import os
import sys
import types

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.language as nl
from neuronxsim import bir
from neuronxsim.bir import AccessFlavour
from neuronxsim.errors import CodegenError
from neuronxsim.private_nkl.resize import resize_nearest_fixed_dma_kernel
from neuronxsim.private_nkl.transpose import tiled_pf_transpose
from neuronxsim.starfish.penguin import ir
from neuronxsim.starfish.penguin.targets.codegen import BirCodeGenLoop as codegen
from neuronxsim.starfish.penguin.targets.codegen.BirCodeGenLoop import BirCodeGenLoop, InternalNativeNkiKernelCodegen
from neuronxsim.starfish.penguin.targets.codegen.KernelMetricsCollector import KernelCategory, KernelMetricsCollector


def node_of(module, function=0):
    (node,) = module.functions[function].blocks[0].instructions
    return node


def walrus_available():
    return importlib.util.find_spec("neuronxsim.walrus") is not None


@pytest.fixture
def beta3(monkeypatch):
    monkeypatch.setenv("NKI_FRONTEND", "beta3")


@pytest.mark.parametrize("arch, trace_arch", [("gen2", "trn1"), ("gen3", "trn2")])
def test_beta3_emits_an_it56_node_carrying_bir_json(beta3, programs, arch, trace_arch):
    module = bir.Module()
    module.arch = arch
    BirCodeGenLoop(module).lower(programs.resize())
    node = node_of(module)
    assert node.opcode == bir.InstructionType.NKIKLIRKernel == 56
    assert node.name == "k" and node.func_name == "ResizeNearest"
    assert (node.kernel_format, node.nki_binary_version_identifier) == ("bir", f"bir-json/{bir.BIR_VERSION}."
                                                                              f"{bir.FORMAT_VERSION}")
    assert (node.func_args, node.func_outs, node.grid) == (["data_tensor"], ["out"], 1)
    assert (node.sb_buf_shape, node.psum_buf_shape) == tuple(codegen.BUFFER_SHAPES[arch])
    assert [(a.flavour, a.location.name) for a in node.ins] == [(AccessFlavour.Opaque, "img")]
    assert [(a.flavour, a.location.name) for a in node.outs] == [(AccessFlavour.Opaque, "out")]
    expected = nki.trace(resize_nearest_fixed_dma_kernel, np.zeros((2, 6, 5, 3), np.float32), out_shape=(2, 11, 9, 3),
                         arch=trace_arch)
    assert node.klir_binary == expected.to_json(-1)  # the leaf, traced for the macro's shapes and the module's arch
    assert bir.Module.from_json(module.to_json()).to_json() == module.to_json()
    assert KernelMetricsCollector.get_instance().count("ResizeNearest", KernelCategory.NKI_KLIR_KERNEL) == 1


def test_multicore_kernels_trace_one_function_per_neuron_core(beta3, programs):
    module = BirCodeGenLoop().lower(programs.transpose())
    node = node_of(module)
    assert node.grid == codegen.MULTICORE_GRID == 2
    kernel = bir.Module.from_json(node.klir_binary)
    assert len(kernel.functions) == 2
    expected = nki.trace(tiled_pf_transpose[nl.nc(2)], np.zeros((300, 200), np.float32))
    assert node.klir_binary == expected.to_json(-1)


def test_nki_frontend_routes_the_tracer(monkeypatch, programs):
    calls = []
    for name in ("_trace_kernel_beta2", "_trace_kernel_beta3"):
        original = getattr(InternalNativeNkiKernelCodegen, name)
        monkeypatch.setattr(InternalNativeNkiKernelCodegen, name,
                            lambda self, inst, _n=name, _f=original: calls.append(_n) or _f(self, inst))
    monkeypatch.setenv("NKI_FRONTEND", "beta3")
    BirCodeGenLoop().lower(programs.transpose())
    monkeypatch.delenv("NKI_FRONTEND")  # the default is beta2
    try:
        BirCodeGenLoop().lower(programs.transpose())
    except CodegenError as e:
        assert not walrus_available() and "needs the KLR writer (neuronxsim.walrus.write_klr)" in str(e)
    assert calls == ["_trace_kernel_beta3", "_trace_kernel_beta2"]
    assert codegen.nki_frontend() == codegen.NKI_FRONTEND_DEFAULT == "beta2"


def test_an_unknown_frontend_is_refused(monkeypatch, programs):
    monkeypatch.setenv("NKI_FRONTEND", "beta9")
    cg = BirCodeGenLoop()
    with pytest.raises(CodegenError, match=r"insts\[0\] NKI_FRONTEND is 'beta9'; expected one of beta2, beta3 \(unset "
                                           r"means beta2\)"):
        cg.lower(programs.transpose())
    assert len(cg.block) == 0


def test_beta2_without_the_klr_writer_says_what_is_missing(monkeypatch, programs):
    monkeypatch.setitem(sys.modules, "neuronxsim.walrus", None)  # as in a build without it
    with pytest.raises(CodegenError, match=r"InternalNativeNkiKernel 'k': NKI_FRONTEND=beta2 writes the traced kernel "
                                           r"as a KLR file, which needs the KLR writer \(neuronxsim.walrus.write_klr\)"
                                           r", not part of this build; set NKI_FRONTEND=beta3"):
        BirCodeGenLoop().lower(programs.transpose())


class FakeWalrus(types.ModuleType):
    """Stands in for neuronxsim.walrus to test where and how Form A files are written: writes
    the module's BIR JSON (not KLR) and can fail half-way."""

    def __init__(self, fail=False):
        super().__init__("neuronxsim.walrus")
        self.fail = fail
        self.written = []

    def write_klr(self, module, path, kernel_name="kernel"):
        self.written.append((path, kernel_name))
        with open(path, "w") as f:
            f.write(module.to_json(-1)[:100])
            if self.fail:
                raise OSError("disk full")
            f.write(module.to_json(-1)[100:])

    def klr_info(self, path):
        return {"format": "fake-klr", "version": [0, 1, 2]}


def test_beta2_writes_the_kernel_file_in_the_klr_directory(monkeypatch, programs, tmp_path):
    fake = FakeWalrus()
    monkeypatch.setitem(sys.modules, "neuronxsim.walrus", fake)
    node = node_of(BirCodeGenLoop().lower(programs.transpose()))
    assert (node.kernel_format, node.nki_binary_version_identifier, node.grid) == ("klir", "fake-klr/0.1.2", 2)
    directory = str(tmp_path / "klr")
    assert os.path.dirname(node.klir_binary) == directory and os.listdir(directory) == [os.path.basename(node.klir_binary)]
    assert os.path.basename(node.klir_binary).startswith("tiled_pf_transpose-") and node.klir_binary.endswith(".klr")
    ((written, kernel_name),) = fake.written
    assert kernel_name == "tiled_pf_transpose" and os.path.dirname(written) == directory and written != node.klir_binary
    kernel = bir.Module.from_json(open(node.klir_binary).read())
    assert kernel.to_json(-1) == nki.trace(tiled_pf_transpose[nl.nc(2)], np.zeros((300, 200), np.float32)).to_json(-1)


def test_a_failed_kernel_file_write_leaves_nothing_behind(monkeypatch, programs, tmp_path):
    monkeypatch.setitem(sys.modules, "neuronxsim.walrus", FakeWalrus(fail=True))
    cg = BirCodeGenLoop()
    with pytest.raises(OSError, match="disk full"):
        cg.lower(programs.transpose())
    assert os.listdir(tmp_path / "klr") == [] and len(cg.block) == 0


def test_without_a_klr_directory_files_go_to_a_per_process_directory(monkeypatch, programs):
    monkeypatch.delenv(codegen.KLR_DIR_ENV)
    monkeypatch.setitem(sys.modules, "neuronxsim.walrus", FakeWalrus())
    path = node_of(BirCodeGenLoop().lower(programs.transpose())).klir_binary
    directory = os.path.dirname(path)
    assert os.path.basename(directory).startswith("neuronxsim-klr-") and os.path.isfile(path)
    assert node_of(BirCodeGenLoop().lower(programs.transpose(2, 3))).klir_binary.startswith(directory)


def test_the_second_identical_lowering_hits_the_trace_cache(beta3, monkeypatch, programs):
    traces = []
    original = InternalNativeNkiKernelCodegen._traceWithNkiFrontend
    monkeypatch.setattr(InternalNativeNkiKernelCodegen, "_traceWithNkiFrontend",
                        lambda self, inst, resolved: traces.append(inst.func_name) or original(self, inst, resolved))
    collector = KernelMetricsCollector.get_instance()
    first = node_of(BirCodeGenLoop().lower(programs.transpose()))
    assert collector.trace_cache_counts() == {"hits": 0, "misses": 1}
    second = node_of(BirCodeGenLoop().lower(programs.transpose()))
    assert collector.trace_cache_counts("tiled_pf_transpose") == {"hits": 1, "misses": 1}
    assert traces == ["tiled_pf_transpose"] and second.klir_binary == first.klir_binary
    assert collector.count("tiled_pf_transpose", KernelCategory.NKI_KLIR_KERNEL) == 2  # two nodes, one trace


def test_the_cache_key_has_shapes_dtypes_attrs_and_frontend(monkeypatch, programs):
    collector = KernelMetricsCollector.get_instance()
    monkeypatch.setenv("NKI_FRONTEND", "beta3")
    BirCodeGenLoop().lower(programs.resize())
    BirCodeGenLoop().lower(programs.resize(out_shape=(2, 12, 9, 3)))  # attrs (out_shape) differ
    BirCodeGenLoop().lower(programs.resize(shape=(2, 6, 4, 3)))  # shapes differ
    p = programs.internal("ResizeNearest", [("img", [2, 6, 5, 3], "float16")], [("out", [2, 11, 9, 3], "float16")])
    BirCodeGenLoop().lower(p)  # dtypes differ
    monkeypatch.setitem(sys.modules, "neuronxsim.walrus", FakeWalrus())
    monkeypatch.setenv("NKI_FRONTEND", "beta2")
    BirCodeGenLoop().lower(programs.resize())  # the front end differs
    assert collector.trace_cache_counts() == {"hits": 0, "misses": 5}
    BirCodeGenLoop().lower(programs.resize())
    assert collector.trace_cache_counts() == {"hits": 1, "misses": 5}


def test_a_vanished_kernel_file_is_traced_again(monkeypatch, programs):
    monkeypatch.setitem(sys.modules, "neuronxsim.walrus", FakeWalrus())
    path = node_of(BirCodeGenLoop().lower(programs.transpose())).klir_binary
    os.unlink(path)
    assert node_of(BirCodeGenLoop().lower(programs.transpose())).klir_binary == path and os.path.isfile(path)
    assert KernelMetricsCollector.get_instance().trace_cache_counts() == {"hits": 0, "misses": 2}


def test_two_identical_macros_in_one_program_trace_once(beta3):
    p = ir.Program()
    for i in range(2):
        x = p.tensor(f"x{i}", [64, 40])
        p.add(ir.InternalNativeNkiKernel("tiled_dve_transpose_10", [ir.OpaqueAccess(x)],
                                         [ir.OpaqueAccess(p.tensor(f"y{i}", [40, 64], kind="output"))]))
    nodes = BirCodeGenLoop().lower(p).functions[0].blocks[0].instructions
    assert [n.ins[0].location.name for n in nodes] == ["x0", "x1"] and nodes[0].klir_binary == nodes[1].klir_binary
    assert KernelMetricsCollector.get_instance().trace_cache_counts() == {"hits": 1, "misses": 1}


def test_full_tensor_accesses_are_marshalled_opaque(beta3, programs):
    node = node_of(BirCodeGenLoop().lower(programs.internal(
        "tiled_pf_transpose", [("x", [8, 4], "float32")], [("y", [4, 8], "float32")], access=ir.FullTensorAccess)))
    assert [a.flavour for a in node.ins + node.outs] == [AccessFlavour.Opaque] * 2


def test_sub_tensor_operands_are_refused(beta3):
    p = ir.Program()
    x = p.tensor("x", [8, 8])
    p.add(ir.InternalNativeNkiKernel("tiled_pf_transpose", [ir.NDimSubTensorAccess(x, [0, 0], [4, 8])],
                                     [ir.OpaqueAccess(p.tensor("y", [8, 4], kind="output"))], name="t"))
    with pytest.raises(CodegenError, match=r"insts\[0\] InternalNativeNkiKernel 't' srcs\[0\]: NDimSubTensorAccess of "
                                           r"'x'; codegenInternalNativeNkiKernel takes whole-tensor operands"):
        BirCodeGenLoop().lower(p)


def test_a_kernel_that_refuses_its_attrs_is_a_codegen_error(beta3, programs):
    p = programs.internal("conv2d_column_packing_1", [("img", [1, 4, 8, 8], "float32"), ("w", [4, 4, 3, 3], "float32")],
                          [("out", [1, 4, 6, 6], "float32")], attrs={"stride": "2"})
    cg = BirCodeGenLoop()
    with pytest.raises(CodegenError, match=r"insts\[0\] InternalNativeNkiKernel 'k': tracing internal NKI kernel "
                                           r"'conv2d_column_packing_1' \(neuronxsim.private_nkl.conv."
                                           r"conv2d_column_packing_1\) failed: conv2d_column_packing_1: stride is '2'; "
                                           r"expected an int or 2 ints, each >= 1"):
        cg.lower(p)
    assert len(cg.block) == 0 and cg.function.allocations == []  # refused before anything was emitted


def test_results_that_do_not_match_the_macro_are_refused(beta3, programs):
    p = programs.internal("tiled_pf_transpose", [("x", [8, 4], "float32")], [("y", [8, 4], "float32")])
    with pytest.raises(CodegenError, match=r"InternalNativeNkiKernel 'k' dsts\[0\]: \[8, 4\] float32 does not match "
                                           r"output 'out' \[4, 8\] float32 of internal NKI kernel 'tiled_pf_transpose'"):
        BirCodeGenLoop().lower(p)
    p = programs.internal("tiled_pf_transpose", [("x", [8, 4], "float32")],
                          [("y", [4, 8], "float32"), ("z", [4, 8], "float32")])
    with pytest.raises(CodegenError, match=r"dsts: 2 operands; internal NKI kernel 'tiled_pf_transpose' .* returns 1 "
                                           r"\(out\)"):
        BirCodeGenLoop().lower(p)


def test_an_arch_attr_is_refused(beta3, programs):
    p = programs.internal("tiled_pf_transpose", [("x", [8, 4], "float32")], [("y", [4, 8], "float32")],
                          attrs={"arch": "trn2"})
    with pytest.raises(CodegenError, match="attr 'arch' of internal NKI kernel 'tiled_pf_transpose' .* would shadow"):
        BirCodeGenLoop().lower(p)


def test_a_direct_call_on_an_undeclared_tensor_emits_nothing(beta3, programs):
    cg = BirCodeGenLoop()
    with pytest.raises(CodegenError, match="tensor 'x' is not declared in this BirCodeGenLoop"):
        cg.codegenInternalNativeNkiKernel(programs.transpose().insts[0])
    assert len(cg.block) == 0


def test_the_carrier_json_round_trips_with_its_fields(beta3, programs):
    j = json.loads(BirCodeGenLoop().lower(programs.transpose()).to_json())
    (inst,) = j["functions"][0]["blocks"][0]["instructions"]
    assert inst["opcode"] == "NKIKLIRKernel" and inst["grid"] == 2 and inst["func_name"] == "tiled_pf_transpose"


def test_the_codegen_klr_dir_wins_over_the_environment(programs, tmp_path):
    chosen = tmp_path / "chosen"
    node = node_of(BirCodeGenLoop(klr_dir=chosen).lower(programs.transpose()))
    assert os.path.dirname(node.klir_binary) == str(chosen) and os.listdir(chosen) == [os.path.basename(node.klir_binary)]
    assert not os.path.exists(tmp_path / "klr") or os.listdir(tmp_path / "klr") == []


def test_a_form_a_file_of_another_kernel_is_refused(programs):
    """The KLR file names the kernel the codegen traced (its registry key); a node whose
    klir_binary is another kernel's file, with tensors that bind all the same, is refused, naming
    both, instead of running the other kernel's code."""
    from neuronxsim import walrus
    from neuronxsim.errors import KernelError

    conv = lambda key: programs.internal(key, [("img", [1, 3, 5, 5], "float32"), ("filt", [3, 3, 3, 3], "float32")],
                                         [("out", [1, 3, 3, 3], "float32")])
    module = BirCodeGenLoop().lower(conv("conv2d_column_packing"))
    node_of(module).klir_binary = node_of(BirCodeGenLoop().lower(conv("conv2d_column_packing_io10"))).klir_binary
    with pytest.raises(KernelError, match=r"holds kernel 'conv2d_column_packing_io10', not the node's func_name "
                                          r"'conv2d_column_packing'"):
        walrus.resolve_kernel_nodes(module)
