"""Every public function of the NKI 0.6 dialect takes exactly its documented arguments: no
``**kwargs``, and an unknown keyword is a TypeError naming it (and, for a keyword of the same
function in the 2.2x dialect, saying so)."""

import inspect

import numpy as np
import pytest

import neuronxsim.nki06 as nki
import neuronxsim.nki06.collectives as ncc
import neuronxsim.nki06.isa as nisa
import neuronxsim.nki06.language as nl
import neuronxsim.nki06.typing as nt
from neuronxsim.nki06._api import ApiCall
from nki06_testing import run


def is_function(obj) -> bool:
    """A Python function, or one made public by neuronxsim.nki06._api.api (a C callable)."""
    return inspect.isfunction(obj) or isinstance(obj, ApiCall)


def public_functions():
    """(spelling, function) of every public function and NkiTensor method of the dialect."""
    found = []
    for alias, module in (("nki", nki), ("nl", nl), ("nisa", nisa), ("ncc", ncc)):
        for name in module.__all__:
            obj = getattr(module, name)
            if is_function(obj):
                found.append((f"{alias}.{name}", obj))
    for name, obj in vars(nl.NkiTensor).items():
        if is_function(obj) and not name.startswith("_"):
            found.append((f"NkiTensor.{name}", obj))
    return found


FUNCTIONS = public_functions()


def test_the_dialect_names_its_documented_api():
    names = {n for n, _ in FUNCTIONS}
    for expected in ("nki.jit", "nki.simulate", "nl.ndarray", "nl.fori_loop", "nl.while_loop",
                     "nl.dynamic_range", "nisa.nc_matmul", "nisa.dma_copy", "nisa.register_alloc",
                     "nisa.activate2", "ncc.all_reduce", "NkiTensor.ap", "NkiTensor.rearrange",
                     "NkiTensor.vector_select", "NkiTensor.indirect"):
        assert expected in names
    assert len(FUNCTIONS) > 180
    assert nt.tensor[128, 512].shape == (128, 512)


@pytest.mark.parametrize("name,fn", FUNCTIONS, ids=[n for n, _ in FUNCTIONS])
def test_no_keyword_sinks(name, fn):
    params = inspect.signature(fn).parameters.values()
    assert not [p for p in params if p.kind is p.VAR_KEYWORD], name


@pytest.mark.parametrize("name,fn", FUNCTIONS, ids=[n for n, _ in FUNCTIONS])
def test_an_unknown_keyword_is_a_type_error_naming_it(name, fn):
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'no_such_option'") as e:
        fn(no_such_option=1)
    assert fn.__name__ in str(e.value)


@pytest.mark.parametrize("fn,keyword", [(nisa.tensor_tensor, "mask"), (nisa.activation, "mask"),
                                        (nisa.tensor_copy, "dtype"), (nl.add, "mask"),
                                        (nl.load, "mask"), (nisa.dma_copy, "dst_rmw_op")])
def test_a_2_2x_keyword_says_so(fn, keyword):
    with pytest.raises(TypeError, match=fr"'{keyword}' is a keyword of the 2.2x dialect's "
                                        r"neuronxcc\.nki\."):
        fn(**{keyword: None})


def test_removed_jit_options_say_what_replaced_them():
    with pytest.raises(TypeError, match="mode=...\\) was removed in NKI 0.3"):
        nki.jit(mode="simulation")
    with pytest.raises(TypeError, match="NEURON_PLATFORM_TARGET_OVERRIDE"):
        nki.jit(platform_target="trn2")


def test_a_wrong_keyword_inside_a_kernel_names_the_kernel_line(rng):
    @nki.jit
    def k(a):
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        nisa.tensor_tensor(dst=t, data1=t, data2=t, op=nl.add, mask=None)
        return a

    with pytest.raises(TypeError, match=r"test_api_signatures\.py:\d+: nisa\.tensor_tensor\(\) "
                                        r"got an unexpected keyword argument 'mask'"):
        run(k, rng.standard_normal((4, 4)).astype(np.float32))


def test_missing_arguments_name_the_function():
    with pytest.raises(TypeError, match=r"nisa\.tensor_tensor\(\): missing .*'op'"):
        nisa.tensor_tensor(None, None, None)
