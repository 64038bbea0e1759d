"""The shape sweep of every IT54 leaf: each leaf's tile-count residues and boundaries, checked
against the leaf's one NumPy reference (the ``*_case`` function of its own test module) on the
simulator in full mode.

Why: a leaf's tiling has a code path per residue of every tiled size (a full tile, a partial
one, exactly one, one element) and per interleaving of work items, and the hand-picked shapes of
the leaf tests can miss one: causal GQA attention was wrong from ~1,150 tokens (issue 21) while
every test passed. So each leaf names its factors and their levels, and sweep_design.design picks
a case list holding every pair of levels of any two factors, and every triple among the factors
that decide the leaf's schedule (attention: shape and group, causal; decode: Sa, group and
prior_len), the expensive levels riding with the cheapest partners (about 870 cases, a minute).
NXS_LONG_SWEEP=1 (scripts/sweep-leaves.sh) adds the long levels: about 3,300 cases.

Levels (CI; the long sweep adds the second list of each ``levels(ci, long)``):
  sizes on partitions or in 128-row tiles   1, 127, 128, 129, 513 (long: 2, 255..257, 1025)
  free sizes tiled by 512 (a PSUM bank)     511, 512, 513 (long: 1023..1025, 2049)
  attention shapes Sq x Sk                  1, 127..129, 511, 513, 1023, 1025 (key blocks of
                                            1024), 1153 (issue 21's failing range), 2049 square;
                                            2047 x 1025 and queries over fewer or more keys;
                                            long: 2047, 2048, 1100..1536, 3000, 4095..4097
  GQA group (q heads per kv head)           1, 2, 4, 7 over 1 or 2 kv heads (long: 3, 8; 3 kv)
  head dims                                 64, 128 (long: 32, 96, 160)
  causal                                    both; dtypes bf16 and fp32
  options (norms, activations, biases, layouts, quantisation, top-k)   every value, in bundles
Tolerances (sweep_design.TOLERANCES, by dtype, with the public comparator max|a - b| <= atol + rtol *
max|ref|): bf16 rtol 2e-2, atol 1e-2 (what `neuronxsim run` checks a layer with); fp32 rtol 1e-4,
atol 1e-5. Exact leaves (transposes) are checked exactly, fp8 quantisation with its own public
tolerance (test_leaves_rmsnorm_quant) and RouterTopK's indices exactly.
"""

import itertools
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from sweep_design import TOLERANCES, design, levels, parametrize  # noqa: E402
from test_leaves_attention import attention_case, token_generation_case  # noqa: E402
from test_leaves_attention_bwd import backward_case  # noqa: E402
from test_leaves_matmul import packed_transpose_case, tiled_matmul_case  # noqa: E402
from test_leaves_mlp import mlp_case  # noqa: E402
from test_leaves_moe import experts_case, router_case  # noqa: E402
from test_leaves_qkv import qkv_case  # noqa: E402
from test_leaves_rmsnorm_quant import quant_case  # noqa: E402

DTYPES = ["bfloat16", "float32"]
SETUP = 2e6  # the cost estimate's fixed part per case (lowering, simulator set-up), in MAC units


def tol(dtype):
    return TOLERANCES[dtype]


# ---- attention forward (causal and not) ----

def square(sizes):
    return [f"{n}x{n}" for n in sizes]


# Shapes Sq x Sk: square, and queries against more or fewer keys (prefill over a cache). Causal
# cases hold every shape with every group, whatever their other levels (causal items grow with
# their query tile, so how the items interleave over the lanes depends on both: issue 21's bug
# needed 1153..1280 tokens and a group of 2); non-causal ones every pair of levels.
ATTENTION_FACTORS = {
    "shape": levels(square([1, 127, 128, 129, 511, 513, 1023, 1025, 1153, 2049]) +
                    ["2047x1025", "1153x513", "129x1025", "513x1", "1x1025"],
                    square([2, 255, 256, 257, 512, 1024, 1100, 1200, 1280, 1300, 1536, 2047, 2048, 3000, 4095, 4096,
                            4097]) +
                    ["1280x2049", "2049x1025", "4097x1025", "1025x4097", "1300x1280"]),
    "group": levels([1, 2, 4, 7], [3, 8]),
    "BKV": levels([1, 2], [3]),
    "d": levels([64, 128], [32, 96, 160]),
    "dtype": DTYPES}


def attention_cost(c):
    return SETUP + c["group"] * c["BKV"] * np.prod([int(n) for n in c["shape"].split("x")]) * c["d"]


ATTENTION = ([dict(c, causal=True) for c in design(ATTENTION_FACTORS, core=("shape", "group"),
                                                   cost=lambda c: attention_cost(c) / 2)] +
             [dict(c, causal=False) for c in design(ATTENTION_FACTORS, cost=attention_cost)])


@parametrize(ATTENTION)
def test_attention_forward(case, rng):
    Sq, Sk = (int(n) for n in case["shape"].split("x"))
    attention_case(rng, case["dtype"], case["group"] * case["BKV"], case["BKV"], case["d"], Sq, Sk, case["causal"],
                   tol(case["dtype"]))


TOKEN_GENERATION = design(
    {"Sa": levels([1, 2, 7, 127, 128], [3, 16, 64, 65]),
     "prior_len": levels([0, 1, 127, 128, 129, 1023, 1025], [511, 512, 513, 2049, 4097]),
     "spare": levels([0, 5]),  # k/v_prior longer than prior_len
     "group": levels([1, 2, 4, 7], [8, 16]),
     "BKV": levels([1, 2], [3, 5]),
     "d": levels([64, 128], [32, 96, 160]),
     "causal": [True, False],
     "dtype": DTYPES},
    valid=lambda c: c["prior_len"] + c["spare"] >= 1,
    core=("Sa", "group", "prior_len"),  # they decide the items: group x Sa rows stacked, blocks of the prior
    cost=lambda c: SETUP + c["group"] * c["BKV"] * c["Sa"] * (c["prior_len"] + c["Sa"]) * c["d"],
)


@parametrize(TOKEN_GENERATION)
def test_attention_token_generation(case, rng):
    BKV = case["BKV"]
    token_generation_case(rng, case["dtype"], case["group"] * BKV, BKV, case["d"], case["Sa"],
                          case["prior_len"] + case["spare"], case["prior_len"], case["causal"], tol(case["dtype"]))


BACKWARD = design(
    {"S": levels([1, 127, 128, 129, 511, 513, 640], [255, 256, 257, 512, 1023, 1024, 1025, 1153, 1280, 2049]),
     "group": levels([1, 2, 4, 7], [3, 8]),
     "BKV": levels([1, 2], [3]),
     "d": levels([64, 128], [1, 32, 96]),
     "causal": [True, False],
     "dtype": DTYPES},
    cost=lambda c: SETUP + 4 * c["group"] * c["BKV"] * c["S"] ** 2 * c["d"],
)


@parametrize(BACKWARD)
def test_attention_backward(case, rng):
    BKV = case["BKV"]
    backward_case(rng, case["dtype"], case["group"] * BKV, BKV, case["d"], case["S"], case["causal"],
                  tol(case["dtype"]))


# ---- fused MLP and QKV (both tilings: TKG iff B*S <= 96) ----

# Option bundles: every value of every option in at least one bundle (their combinations are
# the leaf tests' business; the sweep pairs each bundle with every size level).
MLP_OPTIONS = {
    "plain": {},
    "ln-gelu-add-bias": dict(norm_type="LAYER_NORM", act_fn="GELU", store_add=True, gate_bias=True, up_bias=True,
                             down_bias=True),
    "skipgamma-swish-gatebias": dict(norm_type="RMS_NORM_SKIP_GAMMA", act_fn="Swish", gate_bias=True),
    "nonorm-tanh-nogate-upbias": dict(norm_type="NO_NORM", act_fn="GELU_Tanh_Approx", skip_gate=True, up_bias=True),
    "add-nogate-downbias": dict(store_add=True, skip_gate=True, down_bias=True),
}

MLP = design(
    {"tokens": levels([1, 95, 96, 97, 127, 128, 129, 513], [2, 255, 256, 257, 511, 512, 1025]),
     "B": [1, 2],
     "H": levels([1, 127, 128, 129, 511, 513], [2, 256, 512, 1024, 1025]),
     "I": levels([1, 127, 128, 129, 511, 512, 513], [2, 1023, 1024, 1025]),
     "options": list(MLP_OPTIONS),
     "dtype": DTYPES},
    valid=lambda c: c["tokens"] % c["B"] == 0,
    cost=lambda c: SETUP + 3 * c["tokens"] * c["H"] * c["I"],
)


@parametrize(MLP)
def test_mlp(case, rng):
    B = case["B"]
    mlp_case(rng, case["dtype"], B, case["tokens"] // B, case["H"], case["I"], **MLP_OPTIONS[case["options"]],
             tol=tol(case["dtype"]))


QKV_OPTIONS = {
    "plain": {},
    "ln-bias-2adds": dict(norm_type="LAYER_NORM", bias=True, residual_adds=2),
    "skipgamma-bias-1add": dict(norm_type="RMS_NORM_SKIP_GAMMA", bias=True, residual_adds=1),
    "nonorm-1add": dict(norm_type="NO_NORM", residual_adds=1),
}

QKV = design(
    {"tokens": levels([1, 95, 96, 97, 127, 128, 129, 513], [2, 255, 256, 257, 511, 512, 1025]),
     "B": [1, 2],
     "H": levels([1, 127, 128, 129, 511, 513], [2, 256, 512, 1025]),
     "group": levels([1, 2, 4, 7], [3, 8]),
     "nkv": levels([1, 2], [3]),
     "d": levels([64, 128], [1, 32, 96]),
     "layout": ["BSD", "NBSd", "NBdS"],
     "options": list(QKV_OPTIONS),
     "dtype": DTYPES},
    valid=lambda c: c["tokens"] % c["B"] == 0,
    cost=lambda c: SETUP + c["tokens"] * c["H"] * (c["group"] + 2) * c["nkv"] * c["d"],
)


@parametrize(QKV)
def test_qkv(case, rng):
    B, nkv = case["B"], case["nkv"]
    qkv_case(rng, case["dtype"], B, case["tokens"] // B, case["H"], case["group"] * nkv, nkv, case["d"],
             layout=case["layout"], **QKV_OPTIONS[case["options"]], tol=tol(case["dtype"]))


QUANT = design(
    {"rows": levels([1, 127, 128, 129, 513], [2, 255, 256, 257, 1025]),
     "B": [1, 2],
     "H": levels([1, 3, 4, 127, 128, 129, 511, 512, 513], [2, 255, 256, 1024, 1025, 4097]),
     "norm_type": ["RMS_NORM", "NO_NORM"],
     "quantization": ["ROW", "ROW_CLIPPED", "STATIC"],
     "dtype": DTYPES},
    valid=lambda c: c["rows"] % c["B"] == 0,
    cost=lambda c: SETUP + 10 * c["rows"] * c["H"],
)


@parametrize(QUANT)
def test_rmsnorm_quant(case, rng):
    B, q = case["B"], case["quantization"]
    quant_case(rng, case["dtype"], B, case["rows"] // B, case["H"], norm_type=case["norm_type"],
               quantization_type="STATIC" if q == "STATIC" else "ROW", lower_bound=2.0 if q == "ROW_CLIPPED" else 0.0)


# ---- MoE ----

ROUTER_OPTIONS = {
    "softmax-prenorm": dict(act_fn="SOFTMAX", pre_norm=True, norm_topk=False, bias=False),
    "sigmoid-prenorm-normtopk-bias": dict(act_fn="SIGMOID", pre_norm=True, norm_topk=True, bias=True),
    "softmax-postnorm": dict(act_fn="SOFTMAX", pre_norm=False, norm_topk=False, bias=False),
    "sigmoid-postnorm-bias": dict(act_fn="SIGMOID", pre_norm=False, norm_topk=False, bias=True),
    "softmax-prenorm-normtopk-bias": dict(act_fn="SOFTMAX", pre_norm=True, norm_topk=True, bias=True),
}

ROUTER = design(
    {"T": levels([1, 127, 128, 129, 513], [2, 255, 256, 257, 1025]),
     "H": levels([1, 127, 128, 129, 513], [256, 1025]),
     "E": levels([1, 7, 8, 9, 127, 128, 129, 512], [2, 16, 64, 511, 256]),
     "k": levels([1, 7, 8, 9, 17], [2, 15, 16, 64, 65]),
     "options": list(ROUTER_OPTIONS),
     "dtype": DTYPES},
    valid=lambda c: c["k"] <= c["E"],
    cost=lambda c: SETUP + c["T"] * c["H"] * c["E"] + 200 * c["T"] * c["E"] * -(-c["k"] // 8),
)


@parametrize(ROUTER)
def test_router_topk(case, rng):
    o = ROUTER_OPTIONS[case["options"]]
    router_case(rng, case["dtype"], case["T"], case["H"], case["E"], case["k"], o["act_fn"], o["pre_norm"],
                o["norm_topk"], o["bias"], tol(case["dtype"]))


EXPERTS = design(
    {"T": levels([1, 127, 128, 129, 511, 513], [2, 255, 256, 257, 1025]),
     "H": levels([1, 127, 128, 129], [2, 255, 256, 257, 512]),
     "I": levels([1, 127, 128, 129, 513], [2, 511, 512, 1025]),
     "E": levels([1, 2, 3], [4, 8]),
     "act_fn": ["SiLU", "GELU", "GELU_Tanh_Approx", "Swish"],
     "dtype": DTYPES},
    cost=lambda c: SETUP + 3 * c["T"] * c["H"] * c["I"] * c["E"],
)


@parametrize(EXPERTS)
def test_expert_mlps(case, rng):
    experts_case(rng, case["dtype"], case["T"], case["H"], case["I"], case["E"], case["act_fn"], tol(case["dtype"]))


# ---- matmuls and transposes ----

MATMUL = design(
    {"kernel": ["RowTiledMM", "ColumnTiledMM"],
     "M": levels([1, 127, 128, 129, 511, 513], [2, 255, 256, 257, 512, 1025]),
     "K": levels([1, 127, 128, 129, 511, 513], [2, 255, 256, 257, 512, 1025]),
     "N": levels([1, 127, 128, 129, 511, 512, 513, 1025], [2, 1023, 1024, 2049]),
     "bias": [False, True],
     "transpose_a": [False, True],
     "dtype": DTYPES},
    cost=lambda c: SETUP + c["M"] * c["K"] * c["N"],
)


@parametrize(MATMUL)
def test_tiled_matmul(case, rng):
    tiled_matmul_case(rng, case["kernel"], case["dtype"], case["M"], case["K"], case["N"], case["bias"],
                      case["transpose_a"], tol(case["dtype"]))


PACKED_TRANSPOSE = design(
    {"G": levels([0, 1, 2, 3, 9], [4, 5, 17]),  # 0: a rank-2 x
     "M": levels([1, 31, 32, 33, 63, 64, 65, 127, 128, 129], [2, 42, 43, 255, 256, 257]),
     "N": levels([1, 127, 128, 129, 511, 513], [2, 255, 256, 257, 512, 1025]),
     "dtype": DTYPES},
    cost=lambda c: SETUP + max(c["G"], 1) * c["M"] * c["N"] * 100,
)


@parametrize(PACKED_TRANSPOSE)
def test_packed_pe_transpose(case, rng):
    shape = ([case["G"]] if case["G"] else []) + [case["M"], case["N"]]
    packed_transpose_case(rng, case["dtype"], tuple(shape))


# ---- the covering design's own checks ----

def held(cases, names):
    return {tuple(c[n] for n in names) for c in cases}


def test_the_design_covers_every_pair_and_only_valid_cases():
    factors = {"a": [1, 2, 3], "b": ["x", "y"], "c": [True, False], "d": [0, 1, 2, 3], "e": [5, 6, 7]}
    valid = lambda c: not (c["a"] == 3 and c["b"] == "y")  # noqa: E731
    every = [c for c in (dict(zip(factors, combo)) for combo in itertools.product(*factors.values())) if valid(c)]
    cases = design(factors, valid)
    assert all(valid(c) for c in cases)
    for names in itertools.combinations(factors, 2):
        assert held(cases, names) == held(every, names), names
    assert len(cases) < len(every) // 4
    assert design(factors, valid) == cases  # deterministic
    core = design(factors, valid, core=("a", "d", "e"))
    assert held(core, ("a", "d", "e")) == held(every, ("a", "d", "e"))
    assert len(held(cases, ("a", "d", "e"))) < len(held(every, ("a", "d", "e")))  # pairwise alone is not that


def test_an_expensive_level_rides_with_cheap_partners():
    cases = design({"S": [1, 4096], "heads": [1, 8]}, cost=lambda c: c["S"] * c["heads"], strength=1)
    assert {"S": 4096, "heads": 1} in cases and {"S": 4096, "heads": 8} not in cases


@pytest.fixture
def rng():
    return np.random.default_rng(21)

