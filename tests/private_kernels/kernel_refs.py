"""NumPy references of the registry leaves and the top-k methods, the public tolerances they
are checked with, and a runner that traces a kernel and executes the trace.

References are written from the public math (reference/klr-kernels-bir.md section 2), in
float64, independently of the kernels' schedules.
"""

import numpy as np

import neuronxsim.nki as nki
from neuronxsim.nki.execution import bound_arrays, run_traced

# Public tolerances.
CONV_RTOL, CONV_ATOL = 2e-2, 1e-5  # nkilib conv1d / depthwise: rtol 2e-2 (maxAllClose)
SELECT_AND_SCATTER_TOL = 1e-2  # nki-samples select_and_scatter: rtol = atol = 1e-2
MOE_RTOL, MOE_ATOL = 2e-2, 1e-5  # nkilib moe_cte: rtol 2e-2, atol 1e-5
TOPK_RTOL, TOPK_ATOL = 1e-3, 1e-5  # nkilib topk: atol 1e-5, rtol 1e-3


def run_on_reference(kernel, *args, **kwargs):
    """Traces ``kernel`` (optionally with a grid) and runs the trace on the NumPy reference
    executor, every NeuronCore's function; returns (outputs in return order, the trace)."""
    return _run("reference", kernel, args, kwargs)


def run_on_simulator(kernel, *args, **kwargs):
    """As run_on_reference, on the simulator (full mode, every NeuronCore at once)."""
    return _run("simulator", kernel, args, kwargs)


def _run(executor, kernel, args, kwargs):
    traced = nki.trace_kernel(kernel, *args, **kwargs)
    _, outputs = run_traced(traced, bound_arrays(kernel, args, kwargs), executor=executor)
    return [outputs[o.name] for o in traced.outputs], traced


def max_all_close(actual, expected, rtol, atol):
    """nkilib's comparator: ``|a - b| <= atol + rtol * max(|b|)`` over the whole tensor."""
    a = np.asarray(actual, dtype=np.float64)
    b = np.asarray(expected, dtype=np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    bound = atol + rtol * np.abs(b).max()
    worst = np.abs(a - b).max()
    assert worst <= bound, f"max |actual - expected| = {worst:.3g} exceeds {bound:.3g}"


def all_close(actual, expected, rtol, atol):
    """Elementwise ``np.allclose`` in float64 (nki-samples' comparator)."""
    np.testing.assert_allclose(np.asarray(actual, np.float64), np.asarray(expected, np.float64), rtol=rtol, atol=atol)


# ---- resize_nearest_fixed_dma_kernel ----

def resize_nearest(data, out_shape):
    _, h, w, _ = data.shape
    _, oh, ow, _ = out_shape
    return data[:, np.arange(oh) * h // oh][:, :, np.arange(ow) * w // ow]


# ---- select_and_scatter_kernel ----

def select_and_scatter(operand, source):
    """3x3 windows, stride 2, pad 1 (padding never selected); first maximum in row-major window
    order; source added at the selected position; init 0."""
    n, c, h, w = operand.shape
    oh, ow = source.shape[2:]
    x = operand.astype(np.float64)
    out = np.zeros(operand.shape)
    nn, cc = np.indices((n, c))
    for y in range(oh):
        for z in range(ow):
            best = by = bz = None
            for kh in range(3):
                for kw in range(3):
                    iy, iz = 2 * y + kh - 1, 2 * z + kw - 1
                    if not (0 <= iy < h and 0 <= iz < w):
                        continue
                    v = x[:, :, iy, iz]
                    if best is None:
                        best, by, bz = v, np.full(v.shape, iy), np.full(v.shape, iz)
                    else:
                        better = v > best
                        best = np.where(better, v, best)
                        by, bz = np.where(better, iy, by), np.where(better, iz, bz)
            np.add.at(out, (nn, cc, by, bz), source[:, :, y, z].astype(np.float64))
    return out


# ---- convolutions (XLA conv_general_dilated with dimension numbers) ----

def _to_canonical(a, layout, letters):
    return np.transpose(a, [layout.index(letter) for letter in letters])


def conv(lhs, rhs, layouts, stride=1, padding=0, dilation=1, groups=1):
    """``"lhs_rhs_out"`` dimension numbers, as ``private_nkl.conv_geometry`` documents them."""
    lhs_layout, rhs_layout, out_layout = layouts.split("_")
    x = _to_canonical(lhs.astype(np.float64), lhs_layout, "bf01")
    w = _to_canonical(rhs.astype(np.float64), rhs_layout, "oi01")
    s = (stride,) * 2 if np.isscalar(stride) else tuple(stride)
    d = (dilation,) * 2 if np.isscalar(dilation) else tuple(dilation)
    if np.isscalar(padding):
        p = ((padding, padding),) * 2
    elif np.isscalar(padding[0]):
        p = tuple((v, v) for v in padding)
    else:
        p = tuple(tuple(v) for v in padding)
    b, _, h, wd = x.shape
    o, i, k0, k1 = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), p[0], p[1]))
    y0 = (h + sum(p[0]) - d[0] * (k0 - 1) - 1) // s[0] + 1
    y1 = (wd + sum(p[1]) - d[1] * (k1 - 1) - 1) // s[1] + 1
    out = np.zeros((b, o, y0, y1))
    og = o // groups
    for g in range(groups):
        for a in range(k0):
            for c in range(k1):
                patch = xp[:, g * i:(g + 1) * i, a * d[0]:a * d[0] + (y0 - 1) * s[0] + 1:s[0],
                           c * d[1]:c * d[1] + (y1 - 1) * s[1] + 1:s[1]]
                out[:, g * og:(g + 1) * og] += np.einsum("biyx,oi->boyx", patch, w[g * og:(g + 1) * og, :, a, c])
    return np.transpose(out, ["bf01".index(letter) for letter in out_layout])


def random_operand(rng, layout, sizes, dtype):
    """A random array whose dims follow ``layout`` (letters to sizes)."""
    return rng.standard_normal([sizes[letter] for letter in layout]).astype(dtype)


# ---- blockwise_mm ----

def moe_routing(rng, tokens, experts, top_k, block_size):
    """A routing as NxD builds it: each token to ``top_k`` experts with random affinities; each
    expert's tokens in blocks of ``block_size``, padded with the padding token (id ``tokens``).
    Returns (affinities [(tokens+1)*E, 1], token_position_to_id [N*B] int32,
    block_to_expert [N, 1] int32)."""
    chosen = np.stack([rng.choice(experts, top_k, replace=False) for _ in range(tokens)])
    affinity = np.zeros((tokens + 1, experts), np.float32)
    for t in range(tokens):
        affinity[t, chosen[t]] = rng.random(top_k)
    positions, block_expert = [], []
    for e in range(experts):
        ids = [t for t in range(tokens) if e in chosen[t]]
        blocks = -(-len(ids) // block_size)
        positions += ids + [tokens] * (blocks * block_size - len(ids))
        block_expert += [e] * blocks
    return affinity.reshape(-1, 1), np.array(positions, np.int32), np.array(block_expert, np.int32).reshape(-1, 1)


def _silu(x):
    return x / (1.0 + np.exp(-x))


def blockwise_mm(hidden, affinities, gate_up, down, positions, block_expert, block_size, mode=1):
    """The public pseudo code; ``mode`` 0 NO_SCALE, 1 POST_SCALE, 2 PRE_SCALE."""
    t, h = hidden.shape
    e_count = gate_up.shape[0]
    x_all = hidden.astype(np.float64)
    aff = affinities.astype(np.float64).reshape(t, e_count)
    out = np.zeros((t, h))
    for n, (e,) in enumerate(block_expert):
        ids = positions[n * block_size:(n + 1) * block_size]
        x = x_all[ids] * (aff[ids, e][:, None] if mode == 2 else 1.0)
        gate = x @ gate_up[e, :, 0].astype(np.float64)
        up = x @ gate_up[e, :, 1].astype(np.float64)
        y = (_silu(gate) * up) @ down[e].astype(np.float64)
        if mode == 1:
            y = y * aff[ids, e][:, None]
        np.add.at(out, ids, y)
    return out


# ---- top-k ----

def topk(x, k):
    """(values, indices) of the k largest along the last dim, descending; ties in order of
    position (a stable sort), as torch.topk's values."""
    order = np.argsort(-x.astype(np.float64), axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, order, -1), order


def assert_topk_indices(x, indices, k):
    """``indices`` [..., k] name the k largest of each row of ``x``, best first: distinct, and
    the values they pick are exactly a descending sort's first k. Tied values may come in any
    order of their positions (as torch.topk promises none; the kernels give nc_match_replace8's)."""
    expected, _ = topk(x, k)
    picked = np.take_along_axis(x, indices.astype(np.int64), -1)
    np.testing.assert_array_equal(picked, expected)
    ordered = np.sort(indices.reshape(-1, k), axis=-1)
    assert (np.diff(ordered, axis=-1) > 0).all(), "an index is picked twice in a row"
