"""The shared libraries and their exported symbols, read off the built files with binutils.

* libBIR is the one shared core every other library and the Python module load (DESIGN: never a
  static copy in two modules); it needs none of them.
* The symbols seed 000 names exist with its exact signatures: bir::InstructionType::string,
  bir::string2InstructionType(std::string const&), the bir::Hwm overloads for InstNKIKernel and
  InstNKIKLIRKernel, and TrainiumHwm::getLatency(bir::InstBIRKernel const&) in libwalrus (a
  global-namespace class there, as in the shipped library).
"""

import glob
import os
import shutil
import subprocess

import pytest

from neuronxsim.starfish.lib import _core

LIB = os.path.dirname(_core.__file__)
pytestmark = pytest.mark.skipif(not shutil.which("readelf") or not shutil.which("nm"), reason="needs binutils")


def lib(name):
    (path,) = glob.glob(os.path.join(LIB, name))
    return path


def needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return {line.split("[")[1].split("]")[0] for line in out.splitlines() if "(NEEDED)" in line}


def defined(path):
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    return {line.split(" ", 2)[2] for line in out.splitlines() if line.count(" ") >= 2}


def test_libbir_is_the_shared_core_the_others_load():
    core = lib("_core*.so")
    for path in (lib("libnxsim.so"), lib("libwalrus.so"), core):
        assert "libBIR.so" in needed(path), path
    assert not needed(lib("libBIR.so")) & {"libnxsim.so", "libwalrus.so"}  # libBIR depends on neither
    # One opcode table: only libBIR defines it.
    table = "_ZN3bir15InstructionType6stringB5cxx11ENS0_15InstructionTypeE"
    assert table in defined(lib("libBIR.so"))
    for path in (lib("libnxsim.so"), lib("libwalrus.so"), core):
        assert table not in defined(path), path


SEED_SYMBOLS = [
    ("libBIR.so", "_ZN3bir22string2InstructionTypeERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"),
    ("libBIR.so", "_ZN3bir15InstructionType6stringB5cxx11ENS0_15InstructionTypeE"),
    ("libBIR.so", "_ZNK3bir3Hwm10getLatencyERKNS_13InstNKIKernelE"),
    ("libBIR.so", "_ZNK3bir3Hwm10getLatencyERKNS_17InstNKIKLIRKernelE"),
    ("libwalrus.so", "_ZNK11TrainiumHwm10getLatencyERKN3bir13InstBIRKernelE"),
]


@pytest.mark.parametrize("library, symbol", SEED_SYMBOLS, ids=[s for _, s in SEED_SYMBOLS])
def test_the_seed_symbols_are_exported_with_their_exact_signatures(library, symbol):
    assert symbol in defined(lib(library))
