"""Traced kernels kept on disk, so that a configuration seen before skips tracing.

An entry is keyed by the kernel file's text (its SHA-256) and resolved path (its folder decides
what its imports find), the kernel's name, the arrays' shapes and dtypes, the other arguments
(meta-parameters and fixed values, tuples told from lists), the generation, the dialect, the cap
on traced instructions in effect (a trace that fits one cap may not fit a smaller one) and the
neuronxsim build (:func:`neuronxsim.sweep.build.fingerprint`). It also records the user modules
the trace may have used, with each file's SHA-256 (:func:`neuronxsim.sweep.kernel_file.dependencies`):
an entry one of whose files no longer hashes the same is a miss, as a build system's depfile. Its
file, ``<dir>/<key[:2]>/<key>.trace``, holds a line with the CRC-32 of the rest, one line of JSON (its key, and the traced kernel's
description: inputs, outputs, cores, instruction counts, SBUF/PSUM peaks, constants) and then the
module as BIR binary (``bir.Module.to_binary``: what its BIR JSON holds, read about seven times
faster, so that a hit costs a fraction of tracing).

Writers never collide: an entry is written to a temporary file in the same folder and renamed
into place (``os.replace``), so a reader sees a whole entry or none, and two workers writing the
same entry leave one of the two identical files. An entry that cannot be read (a disk error, a
different format, bytes that no longer match their CRC: damage that still parses would otherwise
reach the simulator as another module, a failed row) counts as a miss and is written again, as
does one that names another key
(a file copied or moved into another entry's place would otherwise give that configuration
another configuration's trace).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import stat
import zlib

import numpy as np

from neuronxsim.sweep.build import fingerprint
from neuronxsim.sweep.kernel_file import file_sha256
from neuronxsim.sweep.space import dtypes_by_name, typed

#: Bumped when the entry layout changes (part of every key).
FORMAT = 5


def cache_key(source_sha256: str, location: str, kernel: str, shapes: list, arguments: dict,
              arch: str, dialect: str, max_instructions: int) -> str:
    """The hex SHA-256 naming an entry (``location``: the kernel file's resolved path, whose
    folder its imports are found in; ``max_instructions``: the cap the trace applies)."""
    text = json.dumps({"format": FORMAT, "source": source_sha256, "location": location,
                       "kernel": kernel, "shapes": shapes, "arguments": typed(arguments),
                       "arch": arch, "dialect": dialect, "max_instructions": max_instructions,
                       "neuronxsim": fingerprint()},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _array_text(a: np.ndarray) -> str:
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _array(text: str) -> np.ndarray:
    return np.load(io.BytesIO(base64.b64decode(text)), allow_pickle=False)


def _describe(traced) -> dict:
    from neuronxsim.nki import dtypes

    def specs(items):
        return [[s.name, list(s.shape), dtypes.name(np.dtype(s.dtype))] for s in items]
    return {"inputs": specs(traced.inputs), "outputs": specs(traced.outputs),
            "num_cores": traced.num_cores, "arch": traced.arch,
            "instruction_counts": list(traced.instruction_counts),
            "sbuf_peak_bytes": list(traced.sbuf_peak_bytes),
            "psum_peak_bytes": list(traced.psum_peak_bytes),
            "trace_seconds": traced.trace_seconds,
            "written_regions": [{name: [[int(off) if np.isscalar(off) else np.asarray(off).tolist(),
                                         [list(p) for p in pairs]] for off, pairs in regs]
                                 for name, regs in core.items()} for core in traced.written_regions],
            "constants": {name: _array_text(np.asarray(a)) for name, a in traced.constants.items()},
            "spills": list(traced.spills), "reordered": list(traced.reordered)}


def _traced(desc: dict, module_bytes: bytes):
    from neuronxsim import bir
    from neuronxsim.nki.kernel import TensorSpec, TracedKernel

    by_name = dtypes_by_name()

    def specs(items):
        return [TensorSpec(n, tuple(shape), by_name[d]) for n, shape, d in items]
    regions = [{name: [(off if isinstance(off, int) else np.asarray(off), [tuple(p) for p in pairs])
                       for off, pairs in regs] for name, regs in core.items()}
               for core in desc["written_regions"]]
    return TracedKernel(bir.Module.from_binary(module_bytes, verify=False), specs(desc["inputs"]),
                        specs(desc["outputs"]), desc["num_cores"], desc["arch"],
                        desc["instruction_counts"], desc["sbuf_peak_bytes"],
                        desc["psum_peak_bytes"], desc["trace_seconds"], regions,
                        {name: _array(t) for name, t in desc["constants"].items()},
                        desc["spills"], desc["reordered"])


class TraceCache:
    """The entries under ``folder`` (created on first write)."""

    def __init__(self, folder: str):
        self.folder = os.path.abspath(folder)

    def path(self, key: str) -> str:
        return os.path.join(self.folder, key[:2], key + ".trace")

    def get(self, key: str):
        """The TracedKernel of ``key``, or None."""
        try:
            # (not blocking: a named pipe in an entry's place would wait for a writer forever)
            fd = os.open(self.path(key), os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return None  # not an entry: traced again, and the entry renamed over it
                crc = f.readline()
                body = f.read()
            if crc != b"%08x\n" % zlib.crc32(body):
                return None  # damaged (or not an entry): traced again and written over
            desc_line, _, module_bytes = body.partition(b"\n")
            desc = json.loads(desc_line)
            if desc["key"] != key:
                return None  # another configuration's entry: traced again and written over
            if any(file_sha256(path) != sha for path, sha in desc["dependencies"].items()):
                return None  # a module the trace used has changed since: traced again
            return _traced(desc, module_bytes)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, RecursionError):  # (BIRError is a ValueError)
            return None  # unreadable: traced again and written over

    def put(self, key: str, traced, dependencies: dict) -> None:
        """Writes the entry of ``key`` (atomically); ``dependencies``: {file: SHA-256} of the
        user modules the trace may have used, each checked again when the entry is read."""
        from neuronxsim import bir
        folder = os.path.dirname(self.path(key))
        os.makedirs(folder, exist_ok=True)
        desc = {"key": key, "dependencies": dependencies, **_describe(traced)}
        body = json.dumps(desc, separators=(",", ":")).encode() + b"\n" + traced.module.to_binary()
        bir.atomic_write_bytes(self.path(key), b"%08x\n" % zlib.crc32(body) + body)


__all__ = ["TraceCache", "cache_key", "FORMAT"]
