"""Every public function of the 2.2x dialect (``nki``, ``nl``, ``nisa``) takes exactly its
documented arguments: no ``**kwargs`` sink, and a call with an argument a function does not
take is a TypeError naming the argument, the function as kernels spell it and the kernel line
(and, for a keyword of the same function in the other dialect, saying so)."""

import inspect
import sys
import types

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim.nki import arguments
from neuronxsim.nki.arguments import NKIArgumentError

SRC = open(__file__).read().splitlines()


def public_functions():
    """(spelling, function) of every public function of the dialect's modules."""
    found = []
    for alias, module in (("nki", nki), ("nl", nl), ("nisa", nisa)):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(arguments.definition(obj)):  # (also through a FastCall)
                found.append((f"{alias}.{name}", obj))
    for name, obj in vars(nl.Tensor if hasattr(nl, "Tensor") else object).items():
        if inspect.isfunction(arguments.definition(obj)) and not name.startswith("_"):
            found.append((f"Tensor.{name}", obj))
    return found


FUNCTIONS = public_functions()
A = np.zeros((4, 4), np.float32)


def test_the_dialect_names_its_api():
    names = {n for n, _ in FUNCTIONS}
    for expected in ("nki.jit", "nki.simulate_kernel", "nl.load", "nl.store", "nl.ndarray",
                     "nl.affine_range", "nl.matmul", "nl.exp", "nl.less", "nisa.nc_matmul",
                     "nisa.tensor_tensor", "nisa.dma_copy", "nisa.activation"):
        assert expected in names
    assert len(FUNCTIONS) > 100


#: Entry points whose ``**kwargs`` are the kernel's own keyword arguments (bound to its
#: parameters, refused when it has no such parameter: see below).
FORWARDING = {"nki.trace", "nki.trace_kernel", "nki.simulate_kernel", "nki.profile_kernel"}


@pytest.mark.parametrize("name,fn", FUNCTIONS, ids=[n for n, _ in FUNCTIONS])
def test_no_keyword_sinks(name, fn):
    params = inspect.signature(fn).parameters.values()
    assert not [p for p in params if p.kind is p.VAR_KEYWORD] or name in FORWARDING, name


@pytest.mark.parametrize("name", sorted(FORWARDING))
def test_entry_points_bind_keywords_to_the_kernel(name):
    @nki.jit
    def kernel(a, scale=1.0):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load(a) * scale)
        return out

    entry = dict(FUNCTIONS)[name]
    with pytest.raises(nki.NKIError, match="unexpected keyword argument 'scael'"):
        entry(kernel, A, scael=2.0)


def _kernel_calling(fn, **kwargs):
    @nki.jit
    def kernel(a):
        fn(**kwargs)  # LINE:call
        return a
    return kernel


CALL_LINE = next(i + 1 for i, t in enumerate(SRC) if t.rstrip().endswith("# LINE:call"))
TRACED = [(n, f) for n, f in FUNCTIONS if n.split(".")[0] in ("nl", "nisa")]


@pytest.mark.parametrize("name,fn", TRACED, ids=[n for n, _ in TRACED])
def test_an_unknown_keyword_in_a_kernel_names_it_the_function_and_the_line(name, fn):
    with pytest.raises(NKIArgumentError) as info:
        nki.trace(_kernel_calling(fn, no_such_option=1), A)
    message = str(info.value)
    name = f"{name.split('.')[0]}.{fn.__name__}"  # (an alias, nl.bitwise_not, is nl.invert)
    assert message.startswith(f"{__file__}:{CALL_LINE}: {name}(): got an unexpected keyword "
                              "argument 'no_such_option'; it takes "), message
    assert isinstance(info.value, TypeError)
    assert info.value.location.line == CALL_LINE


def test_missing_and_surplus_arguments_name_the_function_and_the_line():
    @nki.jit
    def surplus(a):
        t = nl.load(a)
        nisa.nc_matmul(t, t, t)  # a dst-first call of NKI 0.6, in the 2.2x dialect
        return a

    with pytest.raises(TypeError, match=r"test_api_signatures\.py:\d+: nisa\.nc_matmul\(\): "
                                        r"takes 2 positional arguments but 3 were given"):
        nki.trace(surplus, A)

    @nki.jit
    def missing(a):
        nl.load()
        return a

    with pytest.raises(TypeError, match=r"nl\.load\(\): missing 1 required positional "
                                        r"argument: 'src'"):
        nki.trace(missing, A)


def test_a_keyword_of_the_other_dialect_says_so(monkeypatch):
    other = types.ModuleType("other_isa")

    def tensor_tensor(dst, data1, data2, op):
        """NKI 0.6's signature"""

    other.tensor_tensor = tensor_tensor
    monkeypatch.setitem(sys.modules, "other_isa", other)
    monkeypatch.setattr(arguments, "_OTHER_DIALECT", ("NKI 0.6 (import nki)",
                                                      {"nisa": "other_isa"}))

    @nki.jit
    def kernel(a):
        t = nl.load(a)
        nisa.tensor_tensor(dst=t, data1=t, data2=t, op=nl.add)
        return a

    with pytest.raises(TypeError, match=r"nisa\.tensor_tensor\(\): got an unexpected keyword "
                                        r"argument 'dst' \('dst' is a keyword of "
                                        r"nisa\.tensor_tensor in NKI 0\.6 \(import nki\); this "
                                        r"kernel uses the 2\.2x dialect"):
        nki.trace(kernel, A)


def test_other_type_errors_pass_through_unchanged():
    def helper(x):
        return x

    @nki.jit
    def kernel(a):
        helper(a, 1)  # the kernel's own function: not an NKI call
        return a

    with pytest.raises(TypeError) as info:
        nki.trace(kernel, A)
    assert not isinstance(info.value, NKIArgumentError)
    assert "helper() takes 1 positional argument" in str(info.value)


def test_jit_options_are_checked():
    with pytest.raises(nki.NKIError, match="mode 'fast' is not one of"):
        nki.jit(mode="fast")
    with pytest.raises(nki.NKIError, match="platform_target 'trn9'"):
        nki.jit(platform_target="trn9")
    with pytest.raises(nki.NKIError, match="--O3 are not known to the simulator"):
        nki.jit(additional_compile_opt="--O3")
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        nki.jit(colour="red")

    @nki.jit(platform_target="trn2", mode="trace",
             additional_compile_opt="--disable-internal-io-dge")
    def copy(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load(a))
        return out

    assert nki.trace(copy, A).arch == "gen3"  # the platform target's arch
    assert nki.trace(copy, A, arch="trn1").arch == "gen2"
