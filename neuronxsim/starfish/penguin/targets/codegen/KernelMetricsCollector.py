"""Kernel usage metrics: how many kernel nodes of each (category, kernel name) the codegen
emitted, kept by one process-wide collector and written as a JSON sidecar next to a lowered
module (``<module>.kernel_metrics.json``); and the hits and misses of the IT56 sink's trace
cache, per kernel name.

Sidecar form::

    {"format": "neuronxsim-kernel-metrics", "version": 1, "module": "<module file name>",
     "kernels": [{"category": "BIR_KERNEL", "kernel_name": "MLP", "count": 2}, ...]}
"""

from __future__ import annotations

import enum
import json
import os
import threading
from typing import Dict, Optional, Tuple, Union

from neuronxsim.errors import CodegenError

SIDECAR_FORMAT = "neuronxsim-kernel-metrics"
SIDECAR_VERSION = 1
SIDECAR_SUFFIX = ".kernel_metrics.json"


class KernelCategory(enum.Enum):
    """Which sink emitted the kernel node (named after the node's opcode)."""

    BIR_KERNEL = "BIR_KERNEL"  # IT54 InstBIRKernel: a library kernel inlined by name
    NKI_KERNEL = "NKI_KERNEL"  # IT55 InstNKIKernel: a user @nki.jit kernel
    NKI_KLIR_KERNEL = "NKI_KLIR_KERNEL"  # IT56 InstNKIKLIRKernel: a registry kernel re-traced


Counts = Dict[Tuple[KernelCategory, str], int]


class KernelMetricsCollector:
    """The process-wide kernel usage counter. Use ``get_instance()``."""

    _instance: Optional["KernelMetricsCollector"] = None
    _instance_lock = threading.Lock()

    def __init__(self):
        self._lock = threading.Lock()
        self._counts: Counts = {}
        self._trace_cache: Dict[str, Dict[str, int]] = {}  # kernel name -> {"hits": n, "misses": n}

    @classmethod
    def get_instance(cls) -> "KernelMetricsCollector":
        with cls._instance_lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def record_kernel(self, kernel_name: str, category: KernelCategory = KernelCategory.BIR_KERNEL) -> None:
        """Counts one emitted kernel node."""
        if not isinstance(kernel_name, str) or not kernel_name:
            raise CodegenError(f"record_kernel: kernel_name is {kernel_name!r}; expected a non-empty str")
        if not isinstance(category, KernelCategory):
            raise CodegenError(f"record_kernel: category is {category!r}; expected a KernelCategory")
        with self._lock:
            key = (category, kernel_name)
            self._counts[key] = self._counts.get(key, 0) + 1

    def count(self, kernel_name: str, category: KernelCategory = KernelCategory.BIR_KERNEL) -> int:
        with self._lock:
            return self._counts.get((category, kernel_name), 0)

    def counts(self) -> Counts:
        """A copy of every (category, kernel name) -> count."""
        with self._lock:
            return dict(self._counts)

    def counts_since(self, earlier: Counts) -> Counts:
        """What was recorded after ``earlier`` (a ``counts()`` snapshot): one lowering's share."""
        now = self.counts()
        delta = {k: n - earlier.get(k, 0) for k, n in now.items()}
        return {k: n for k, n in delta.items() if n > 0}

    def record_trace_cache(self, kernel_name: str, hit: bool) -> None:
        """Counts one lookup of the IT56 trace cache: a hit reuses a trace, a miss traces."""
        if not isinstance(kernel_name, str) or not kernel_name:
            raise CodegenError(f"record_trace_cache: kernel_name is {kernel_name!r}; expected a non-empty str")
        with self._lock:
            counts = self._trace_cache.setdefault(kernel_name, {"hits": 0, "misses": 0})
            counts["hits" if hit else "misses"] += 1

    def trace_cache_counts(self, kernel_name: Optional[str] = None) -> Dict[str, int]:
        """``{"hits": n, "misses": n}`` of one kernel, or of all kernels when ``kernel_name`` is None."""
        with self._lock:
            if kernel_name is not None:
                return dict(self._trace_cache.get(kernel_name, {"hits": 0, "misses": 0}))
            return {k: sum(c[k] for c in self._trace_cache.values()) for k in ("hits", "misses")}

    def reset(self) -> None:
        with self._lock:
            self._counts.clear()
            self._trace_cache.clear()

    @staticmethod
    def sidecar_path(module_path: Union[str, os.PathLike]) -> str:
        """``model.json`` -> ``model.kernel_metrics.json``, in the same directory."""
        return os.path.splitext(os.fspath(module_path))[0] + SIDECAR_SUFFIX

    def write_sidecar(self, module_path: Union[str, os.PathLike], counts: Optional[Counts] = None) -> str:
        """Writes ``counts`` (default: everything recorded) next to ``module_path``; returns its path."""
        from neuronxsim.bir import atomic_write_text

        counts = self.counts() if counts is None else counts
        kernels = [{"category": c.value, "kernel_name": name, "count": n}
                   for (c, name), n in sorted(counts.items(), key=lambda kv: (kv[0][0].value, kv[0][1]))]
        doc = {"format": SIDECAR_FORMAT, "version": SIDECAR_VERSION,
               "module": os.path.basename(os.fspath(module_path)), "kernels": kernels}
        path = self.sidecar_path(module_path)
        atomic_write_text(path, json.dumps(doc, indent=1) + "\n")
        return path


__all__ = ["KernelCategory", "KernelMetricsCollector", "SIDECAR_FORMAT", "SIDECAR_VERSION", "SIDECAR_SUFFIX"]
