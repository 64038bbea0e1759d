"""neuronxsim.pipeline: the named stages, their copy policy, one resolve pass per kernel-node kind,
and file references relative to the output folder."""

import os
import shutil

import numpy as np
import pytest

from neuronxsim import bir, pipeline
from neuronxsim.errors import KernelError
from neuronxsim.models import llama_decoder as layer

CFG = layer.DecoderConfig(tokens=130, hidden=256, q_heads=4, kv_heads=2, head_dim=64, intermediate=384)
KINDS = [54, 55, 55, 56, 54, 54, 54]


def _opcodes(module):
    return [i.opcode for f in module.functions for b in f.blocks for i in b.instructions]


@pytest.fixture(scope="module")
def lowered(tmp_path_factory):
    return pipeline.lower(layer.build_program(CFG), "trn1", out_dir=tmp_path_factory.mktemp("lowered"))


def test_the_stages_are_one_flat_list_in_order():
    assert pipeline.STAGE_NAMES == ("lower", "resolve", "simulate", "report")
    assert [p.kind for p in pipeline.RESOLVE_PASSES] == [54, 55, 56]


def test_lower_refers_to_its_klr_file_relative_to_the_output_folder(lowered):
    assert _opcodes(lowered.module) == KINDS
    (node,) = [i for i in lowered.module.functions[0].blocks[0].instructions if i.opcode == 56]
    assert node.kernel_format == "klir" and node.klir_binary.startswith("klr/")
    assert os.path.isfile(os.path.join(lowered.files_dir, node.klir_binary))
    assert [n.sink for n in lowered.nodes] == ["IT54", "IT55", "IT55", "IT56", "IT54", "IT54", "IT54"]


def test_resolve_runs_one_pass_per_kind_on_its_own_copy(lowered):
    before = lowered.module.to_json()
    resolved = pipeline.resolve(lowered)
    assert lowered.module.to_json() == before  # the input is never changed
    assert not set(_opcodes(resolved.module)) & {54, 55, 56}
    assert [s["node"] for s in resolved.passes["InlineBIRKernel"]] == ["qkv_proj", "attention", "o_proj", "mlp"]
    assert resolved.passes["ResolveNKIKernel"] == 2 and resolved.passes["lowerKernelInst"] == 1
    assert [n.name for n in resolved.nodes] == [n.name for n in lowered.nodes]
    # Resolving twice gives the same module: nothing of the first run leaked into the input.
    assert pipeline.resolve(lowered).module.to_json() == resolved.module.to_json()


def test_a_saved_module_resolves_after_its_folder_moved(lowered, tmp_path):
    saved = tmp_path / "a"
    shutil.copytree(lowered.files_dir, saved)
    bir.save(lowered.module, saved / "lowered.json")
    moved = tmp_path / "b"
    os.rename(saved, moved)
    module = bir.load(moved / "lowered.json")
    resolved = pipeline.resolve(module, files_dir=moved)
    assert resolved.module.to_json() == pipeline.resolve(lowered).module.to_json()


def test_run_goes_through_every_stage_and_keeps_each_result(tmp_path):
    inputs = layer.make_inputs(CFG)
    seen = []

    class Step:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            seen.append(self.name)

        def __exit__(self, *exc):
            return False

    results = pipeline.run(layer.build_program(CFG), "trn1", inputs=inputs, out_dir=tmp_path, on_stage=Step)
    assert seen == list(pipeline.STAGE_NAMES)
    assert set(results) == {"program", *pipeline.STAGE_NAMES}
    report = results["report"]
    assert [r.name for r in report.rows] == [n.name for n in results["resolve"].nodes]
    assert report.total_ns == results["simulate"].total_ns > 0
    expected = layer.reference(CFG, inputs)["mlp_out"]
    got = np.asarray(results["simulate"].outputs["mlp_out"], np.float32)
    assert np.abs(got - expected).max() <= layer.ATOL + layer.RTOL * np.abs(expected).max()
    partial = pipeline.run(layer.build_program(CFG), "trn1", mode="timing", out_dir=tmp_path, until="resolve")
    assert set(partial) == {"program", "lower", "resolve"}


def test_bad_arguments_are_refused():
    with pytest.raises(KernelError, match="expected a Lowered or a neuronxsim.bir.Module"):
        pipeline.resolve("module.json")
    with pytest.raises(ValueError, match="until='check'"):
        pipeline.run(None, until="check")
    with pytest.raises(Exception, match="arch 'trn9'"):
        pipeline.lower(layer.build_program(CFG), "trn9")


def test_simulate_reports_its_progress(lowered):
    resolved = pipeline.resolve(lowered)
    calls = []
    result = pipeline.simulate(resolved, None, mode="timing", on_progress=lambda done, total: calls.append((done, total)))
    total = result.instruction_count
    assert calls[-1] == (total, total)
    assert all(t == total and 0 <= d <= total for d, t in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_writing_the_trace_reports_its_progress(lowered, tmp_path):
    """Slices written of the trace's slices, in order, ending at all of them; the file is the
    one written without a progress report."""
    result = pipeline.simulate(pipeline.resolve(lowered), None, mode="timing")
    calls = []
    result.write_trace(tmp_path / "reported.json", on_progress=lambda done, total: calls.append((done, total)))
    result.write_trace(tmp_path / "plain.json")
    total = len(result.slices)
    assert total > 0 and calls[-1] == (total, total)
    assert all(t in (0, total) and 0 <= d <= total for d, t in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert (tmp_path / "reported.json").read_bytes() == (tmp_path / "plain.json").read_bytes()
