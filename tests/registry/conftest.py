"""The registry tests' shared setup: each test starts with empty kernel metrics and trace cache,
the default NKI front end, and Form A files in its own temporary directory."""

import types

import pytest

from neuronxsim.starfish.penguin import ir
from neuronxsim.starfish.penguin.targets.codegen import BirCodeGenLoop as codegen
from neuronxsim.starfish.penguin.targets.codegen.KernelMetricsCollector import KernelMetricsCollector


@pytest.fixture(autouse=True)
def fresh_state(monkeypatch, tmp_path):
    monkeypatch.delenv("NKI_FRONTEND", raising=False)
    monkeypatch.setenv(codegen.KLR_DIR_ENV, str(tmp_path / "klr"))
    codegen.clear_internal_kernel_trace_cache()
    KernelMetricsCollector.get_instance().reset()
    yield
    codegen.clear_internal_kernel_trace_cache()
    KernelMetricsCollector.get_instance().reset()


def internal_program(func_name, srcs, dsts, attrs=None, name="k", access=ir.OpaqueAccess):
    """A program of one InternalNativeNkiKernel over new tensors: ``srcs`` / ``dsts`` are
    ``(name, shape, dtype)``."""
    p = ir.Program(func_name)
    ins = [access(p.tensor(n, s, d)) for n, s, d in srcs]
    outs = [access(p.tensor(n, s, d, kind="output")) for n, s, d in dsts]
    p.add(ir.InternalNativeNkiKernel(func_name, ins, outs, attrs=attrs, name=name))
    return p


def transpose_program(rows=300, cols=200, func_name="tiled_pf_transpose"):
    return internal_program(func_name, [("x", [rows, cols], "float32")], [("y", [cols, rows], "float32")])


def resize_program(shape=(2, 6, 5, 3), out_shape=(2, 11, 9, 3)):
    return internal_program("ResizeNearest", [("img", list(shape), "float32")], [("out", list(out_shape), "float32")])


@pytest.fixture
def programs():
    return types.SimpleNamespace(internal=internal_program, transpose=transpose_program, resize=resize_program)
