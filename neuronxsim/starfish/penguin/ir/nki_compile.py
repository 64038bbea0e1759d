"""The NKI front end's ahead-of-time compile of user kernels: what an IT55 node names.

Seed 000: an ``InstNKIKernel`` (IT55) carries ``func`` / ``func_args`` / ``func_outs`` "for a
kernel the user wrote and the front end already AOT-compiled", and only the IT56 sink re-traces
at codegen time. So a Penguin program compiles each user kernel when the program is built or
loaded (``Program.add``), for the program's arch:

* the kernel is traced by ``neuronxsim.nki`` for its operands' shapes and dtypes, and its
  parameters and results are checked against the macro's operands;
* the traced kernel is serialized into an *artifact*: BIR JSON for ``ExternalNativeNkiKernel``, a
  KLR file for its KLIR-path twin ``ExternalNativeNkiKlirKernel``;
* the artifact is named by kernel and content, ``nki/<kernel>.<sha256 prefix>.<json|klr>``: its
  *handle*, and registered with walrus under it (the kernels compiled in this process).

The codegen writes the handle into the IT55 node's ``func`` and traces nothing. The resolver finds
the artifact by its handle, in this process or, once the lowered module has been saved with its
artifacts (``CompiledNkiKernel.write``, done by ``pipeline.lower(out_dir=...)`` and
``BirCodeGenLoop.save``), as the file of that name in the module's folder.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from typing import Tuple

import numpy as np

from neuronxsim import bir
from neuronxsim.bir import target
from neuronxsim.errors import CodegenError, NeuronxsimError

from .tensor import numpy_dtype

#: The archs the front end compiles for (the NKI names), and the BIR arch of each.
ARCHS = {arch: target.bir_arch(arch) for arch in target.ARCHS}

#: Artifact format -> file extension of the handle.
FORMATS = {"bir": ".json", "klir": ".klr"}

#: The folder (relative to a lowered module's folder) artifacts are saved in.
ARTIFACT_FOLDER = "nki"


@dataclasses.dataclass(frozen=True)
class CompiledNkiKernel:
    """A user kernel compiled for one arch and one set of operand shapes and dtypes."""

    handle: str                      # "nki/<kernel>.<hash>.<json|klr>": the IT55 node's func
    kernel_name: str
    arch: str                        # "trn1" | "trn2"
    func_args: Tuple[str, ...]       # the kernel's tensor parameters, in parameter order
    func_outs: Tuple[str, ...]       # its results, in order
    operands: Tuple[tuple, tuple]    # ((shape, dtype) of each src, of each dst) it was compiled for
    data: bytes = dataclasses.field(repr=False)

    def write(self, folder) -> str:
        """Writes the artifact as ``folder/<handle>`` (atomically; an existing file of the same
        name is the same content); returns its path."""
        path = os.path.join(os.fspath(folder), self.handle)
        if os.path.isfile(path):
            return path
        os.makedirs(os.path.dirname(path), exist_ok=True)
        bir.atomic_write_bytes(path, self.data)
        return path


def artifact(module, kernel_name: str, fmt: str) -> Tuple[str, bytes]:
    """(handle, bytes) of a traced kernel ``module`` serialized as ``fmt`` ("bir" or "klir"),
    registered with walrus under its handle."""
    from neuronxsim import walrus

    if fmt == "bir":
        data = module.to_json(-1).encode()
    elif fmt == "klir":
        data = walrus.encode_klr(module, kernel_name)[0]
    else:
        raise CodegenError(f"artifact format {fmt!r}; expected one of {', '.join(FORMATS)}")
    handle = f"{ARTIFACT_FOLDER}/{kernel_name}.{hashlib.sha256(data).hexdigest()[:16]}{FORMATS[fmt]}"
    walrus.add_compiled_nki_kernel(handle, data)
    return handle, data


def kernel_name_of(handle: str) -> str:
    """The kernel's name in a handle ("nki/rope.0123456789abcdef.json" -> "rope"); the handle itself
    when it is not one of ours."""
    base = os.path.basename(handle)
    return base.split(".", 1)[0] if base.count(".") >= 2 else handle


def operand_types(inst) -> Tuple[tuple, tuple]:
    """((shape, dtype) of each src, of each dst) of a macro."""
    return (tuple((tuple(a.access_shape), a.dtype) for a in inst.srcs),
            tuple((tuple(a.access_shape), a.dtype) for a in inst.dsts))


def compile_user_kernel(inst, arch: str, fmt: str) -> CompiledNkiKernel:
    """Compiles the user kernel of ``inst`` (an ExternalNativeNkiKernel) for ``arch`` into a
    ``fmt`` artifact; CodegenError naming the macro when it does not trace or does not fit."""
    from .kernels import kernel_function

    if arch not in ARCHS:
        raise CodegenError(f"{inst.label}: arch {arch!r}; the NKI front end compiles for {', '.join(ARCHS)}")
    try:
        from neuronxsim.nki import trace_kernel
    except ImportError:
        raise CodegenError(f"{inst.label}: compiling a user kernel needs the NKI front end (neuronxsim.nki), "
                           "which this installation does not have") from None
    name = kernel_function(inst.kernel).__name__
    proxies = [np.broadcast_to(np.zeros((), numpy_dtype(a.dtype)), a.access_shape) for a in inst.srcs]
    try:
        traced = trace_kernel(inst.kernel, *proxies, arch=arch)
    except NeuronxsimError as e:
        raise CodegenError(f"{inst.label}: compiling user kernel '{name}' failed: {e}") from None
    for side, accesses, specs, what in (("srcs", inst.srcs, traced.inputs, "parameter"),
                                        ("dsts", inst.dsts, traced.outputs, "result")):
        if len(accesses) != len(specs):
            raise CodegenError(f"{inst.label} {side}: {len(accesses)} operands; the user kernel '{name}' has "
                               f"{len(specs)} tensor {what}s ({', '.join(s.name for s in specs) or 'none'})")
        for i, (access, spec) in enumerate(zip(accesses, specs)):
            if tuple(spec.shape) != tuple(access.access_shape) or np.dtype(spec.dtype) != numpy_dtype(access.dtype):
                raise CodegenError(f"{inst.label} {side}[{i}]: {list(access.access_shape)} {access.dtype} does not "
                                   f"match the kernel's {what} '{spec.name}' {list(spec.shape)} "
                                   f"{np.dtype(spec.dtype).name}")
    handle, data = artifact(traced.module, name, fmt)
    return CompiledNkiKernel(handle, name, arch, tuple(traced.input_names), tuple(traced.output_names),
                             operand_types(inst), data)


__all__ = ["CompiledNkiKernel", "compile_user_kernel", "artifact", "kernel_name_of", "operand_types", "ARCHS", "FORMATS",
           "ARTIFACT_FOLDER"]
