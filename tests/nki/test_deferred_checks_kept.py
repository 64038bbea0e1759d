"""Views indexed by loop indices carry deferred range checks (indexing.BoundCheck), made by the
instruction that uses them; a view made from one in another shape carries none, so its maker
asks them first. Each kernel here slices a view of a larger tensor with a loop index: with
``n`` loop steps inside the view it traces, with one step more the slice past the view's end
(inside the larger tensor) is refused as out of range (before this was so, these read the
larger tensor's other elements without a word)."""

import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.language as nl

T = nki.typing.tensor


@nki.jit
def hbm_reshape(a, n):
    """An HBM slice reshaped before its load."""
    out = nl.ndarray((128, 4), dtype=nl.float32, buffer=nl.shared_hbm)
    half = a[0:2048]
    acc = nl.zeros((128, 4), dtype=nl.float32)
    for i in nl.affine_range(n):
        acc += nl.load(half[i * 512:(i + 1) * 512].reshape((128, 4)))
    nl.store(out, value=acc)
    return out


@nki.jit
def broadcast_row(a, n):
    """A [1, F] row broadcast to 128 partitions (its flat view for the PE array)."""
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    half = nl.load(a)[0:1, 0:4096]
    acc = nl.zeros((128, 512), dtype=nl.float32)
    for i in nl.affine_range(n):
        acc += half[0:1, i * 512:(i + 1) * 512].broadcast_to((128, 512))
    nl.store(out, value=acc)
    return out


CASES = [(hbm_reshape, [4096], 4, "index range [2048, 2559] of dimension 0 is outside [0, 2048)"),
         (broadcast_row, [1, 8192], 8,
          "index range [4096, 4607] of dimension 1 is outside [0, 4096)")]


@pytest.mark.parametrize("kernel, shape, n, why", CASES)
def test_a_slice_past_its_view_is_refused(kernel, shape, n, why):
    nki.trace_kernel(kernel, T[shape, nl.float32], n)  # (every slice inside the view)
    with pytest.raises(nki.errors.NKIError) as e:
        nki.trace_kernel(kernel, T[shape, nl.float32], n + 1)
    assert "out-of-range access" in str(e.value) and why in str(e.value), str(e.value)
    assert "test_deferred_checks_kept.py" in str(e.value)  # (at the kernel's line)
