"""KernelMetricsCollector: process-wide counts per (category, kernel name), reset, and the JSON
sidecar written next to a lowered module."""

import json
import threading

import pytest

from neuronxsim import bir
from neuronxsim.errors import CodegenError
from neuronxsim.starfish.penguin import ir
from neuronxsim.starfish.penguin.targets.codegen.BirCodeGenLoop import BirCodeGenLoop
from neuronxsim.starfish.penguin.targets.codegen.KernelMetricsCollector import KernelCategory, KernelMetricsCollector

F = ir.FullTensorAccess
BIR = KernelCategory.BIR_KERNEL


def test_one_collector_per_process():
    assert KernelMetricsCollector.get_instance() is KernelMetricsCollector.get_instance()


def test_counts_per_category_and_name_and_reset():
    c = KernelMetricsCollector.get_instance()
    c.record_kernel("MLP")
    c.record_kernel("MLP", category=BIR)
    c.record_kernel("MLP", category=KernelCategory.NKI_KERNEL)
    assert (c.count("MLP"), c.count("MLP", KernelCategory.NKI_KERNEL), c.count("QKV")) == (2, 1, 0)
    snapshot = c.counts()
    c.record_kernel("QKV")
    assert c.counts_since(snapshot) == {(BIR, "QKV"): 1}
    c.reset()
    assert c.counts() == {}


def test_recording_is_thread_safe():
    c = KernelMetricsCollector.get_instance()
    threads = [threading.Thread(target=lambda: [c.record_kernel("RowTiledMM") for _ in range(2000)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert c.count("RowTiledMM") == 8000


@pytest.mark.parametrize("args, message", [(("",), "kernel_name is ''"), (("MLP", "BIR_KERNEL"), "category is 'BIR_KERNEL'")])
def test_bad_records_are_refused(args, message):
    with pytest.raises(CodegenError, match=message):
        KernelMetricsCollector.get_instance().record_kernel(*args)


def test_lowering_counts_every_kernel_node_and_writes_the_sidecar(build, tmp_path):
    p = build.family_program("mlp")
    hidden = p.tensors["hidden"]
    for i in range(2):
        p.add(ir.BIRKernel("RouterTopK", [F(hidden)], [F(p.tensor(f"r{i}", [1, 128, 2], kind="output"))]))
    p.add(ir.MLPKernel([F(p.tensors[n]) for n in ("hidden", "ln_w", "gate_w", "up_w", "down_w")],
                       [F(p.tensor("out2", [1, 128, 256], kind="output"))]))
    KernelMetricsCollector.get_instance().record_kernel("Earlier")  # not part of this lowering
    cg = BirCodeGenLoop()
    cg.lower(p)
    assert cg.kernel_counts == {(BIR, "MLP"): 2, (BIR, "RouterTopK"): 2}
    assert KernelMetricsCollector.get_instance().count("Earlier") == 1
    path = tmp_path / "layer.json"
    cg.save(path)
    sidecar = tmp_path / "layer.kernel_metrics.json"
    assert KernelMetricsCollector.sidecar_path(path) == str(sidecar)
    assert json.loads(sidecar.read_text()) == {
        "format": "neuronxsim-kernel-metrics", "version": 1, "module": "layer.json",
        "kernels": [{"category": "BIR_KERNEL", "kernel_name": "MLP", "count": 2},
                    {"category": "BIR_KERNEL", "kernel_name": "RouterTopK", "count": 2}]}
    assert bir.load(path).to_json() == cg.module.to_json()
    other = tmp_path / "quiet.json"
    cg.save(other, metrics_sidecar=False)
    assert other.exists() and not (tmp_path / "quiet.kernel_metrics.json").exists()


@pytest.mark.parametrize("family, kernel_name", [("qkv", "QKV"), ("rmsnorm_quant", "QuantOnly"),
                                                 ("attention", "CausalAttentionMMSoftmaxMMWithoutSwap"),
                                                 ("backwards_attention", "BackwardsAttention")])
def test_each_family_is_counted(build, family, kernel_name):
    cg, _ = build.lower(build.family_program(family))
    assert cg.kernel_counts == {(BIR, kernel_name): 1}


def test_a_refused_program_records_nothing(build):
    p = build.family_program("mlp", access=ir.OpaqueAccess)
    with pytest.raises(CodegenError):
        BirCodeGenLoop().lower(p)
    assert KernelMetricsCollector.get_instance().counts() == {}
