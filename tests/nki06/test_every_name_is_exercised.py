"""Every public name of the NKI 0.6 dialect (nki, nl, nisa, ncc, NkiTensor's methods) is used by
at least one test of this folder: the tests' sources are searched for each spelling."""

import inspect
import pathlib
import re

import neuronxsim.nki06 as nki
import neuronxsim.nki06.collectives as ncc
import neuronxsim.nki06.isa as nisa
import neuronxsim.nki06.language as nl
from neuronxsim.nki06._api import ApiCall

HERE = pathlib.Path(__file__).parent


def test_every_public_name_is_exercised():
    text = "\n".join(p.read_text() for p in HERE.glob("test_*.py")
                     if p.name != pathlib.Path(__file__).name)
    missing = []
    for alias, module in (("nki", nki), ("nl", nl), ("nisa", nisa), ("ncc", ncc)):
        for name in module.__all__:
            if not re.search(rf"\b{alias}\.{name}\b", text):
                missing.append(f"{alias}.{name}")
    for name, obj in vars(nl.NkiTensor).items():
        if not name.startswith("_") and (inspect.isfunction(obj) or isinstance(obj, (ApiCall, property))):
            if not re.search(rf"\.{name}\b", text):
                missing.append(f"NkiTensor.{name}")
    assert not missing, f"public names no test uses: {', '.join(missing)}"
