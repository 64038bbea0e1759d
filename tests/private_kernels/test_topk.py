"""The top-k module: SupportedTopkMethods, SUPPORTED_TOPK_METHOD_MAPPING (seed 003) and the
three methods, each against a stable descending sort."""

import importlib

import ml_dtypes
import numpy as np
import pytest

import kernel_refs as refs
import neuronxsim.nki as nki
from neuronxsim.errors import KernelError
from neuronxsim.nki._private_kernels.topk import topk_method_mapping as mapping

METHODS = list(mapping.SupportedTopkMethods)


def test_the_mapping_is_the_seeds():
    module = "neuronxsim.nki._private_kernels.topk."
    assert mapping.__doc__ == "Mapping of topk method name to implementation for autodispatching topk kernel"
    assert [(m.name, m.value) for m in mapping.SupportedTopkMethods] == [("SCANNING", 0), ("CASCADED", 1),
                                                                          ("ROTATIONAL", 2)]
    assert list(mapping.SUPPORTED_TOPK_METHOD_MAPPING) == METHODS  # keyed by the Enum members
    for method, name in zip(METHODS, ("naive_scanning_topk", "cascaded_2_stage_topk", "rotational_topk")):
        kernel = mapping.SUPPORTED_TOPK_METHOD_MAPPING[method]
        assert kernel is getattr(importlib.import_module(module + name), name)
        assert kernel.__name__ == name


@pytest.mark.parametrize("method", METHODS, ids=lambda m: m.name)
@pytest.mark.parametrize("shape, k, dtype, integers", [
    ((5, 100), 10, np.float32, True),  # many ties
    ((3, 2, 300), 17, np.float32, True),  # [B, S, vocab]; k not a multiple of 8
    ((8, 1000), 64, np.float32, False),
    ((1, 4058), 256, np.float32, False),  # the public vocab and k
    ((130, 64), 8, ml_dtypes.bfloat16, False),  # rows over one tile
    ((2, 9), 9, np.float16, False),  # k = vocab
])
def test_values_and_indices(rng, method, shape, k, dtype, integers):
    x = (rng.integers(0, 40, shape) if integers else rng.standard_normal(shape)).astype(dtype)
    (values, indices), _ = refs.run_on_reference(mapping.SUPPORTED_TOPK_METHOD_MAPPING[method], x, k)
    expected_values, _ = refs.topk(x, k)
    assert values.dtype == x.dtype and indices.dtype == np.uint32
    assert values.shape == indices.shape == shape[:-1] + (k,)
    np.testing.assert_allclose(values.astype(np.float64), expected_values.astype(np.float64), rtol=refs.TOPK_RTOL,
                               atol=refs.TOPK_ATOL)
    refs.assert_topk_indices(x, indices, k)


def test_the_methods_spread_rows_differently(rng):
    x = rng.standard_normal((2, 2000)).astype(np.float32)
    counts = {m: nki.trace_kernel(mapping.SUPPORTED_TOPK_METHOD_MAPPING[m], x, 16).instruction_count for m in METHODS}
    assert len(set(counts.values())) == 3, counts


@pytest.mark.parametrize("method", METHODS, ids=lambda m: m.name)
@pytest.mark.parametrize("shape, k, dtype, message", [
    ((4, 20000), 8, np.float32, r"vocab \(the last dim of inp\) is 20000; expected 8 to 16384"),
    ((4, 6), 2, np.float32, r"vocab \(the last dim of inp\) is 6; expected 8 to 16384"),
    ((4, 64), 65, np.float32, r"k is 65; expected an int from 1 to vocab=64"),
    ((4, 64), 0, np.float32, r"k is 0; expected an int from 1 to vocab=64"),
    ((4, 64), 2, np.int32, r"inp is int32; expected float32, bfloat16 or float16"),
    ((64,), 2, np.float32, r"inp has shape \[64\]; expected \[rows, vocab\] or \[B, S, vocab\]"),
])
def test_bad_inputs_are_refused(method, shape, k, dtype, message):
    kernel = mapping.SUPPORTED_TOPK_METHOD_MAPPING[method]
    with pytest.raises(KernelError, match=f"{kernel.__name__}: {message}"):
        nki.trace_kernel(kernel, np.zeros(shape, dtype), k)
