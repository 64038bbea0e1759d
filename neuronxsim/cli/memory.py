"""Memory: what the machine has available, a check of a command's estimate against it before
the work starts, and a ceiling on the process so that a command that outgrows the machine fails
with ``MemoryError`` (one line) instead of being killed by the system.

The estimates are made by each command from what it is about to hold (input and output arrays,
the NumPy reference, the simulator's state and records); the ceiling catches what no estimate
foresaw, such as a kernel whose expansion has more instructions than memory can hold.
"""

from __future__ import annotations

import contextlib
import os
import resource
from typing import Optional

from neuronxsim.errors import NeuronxsimError


class NotEnoughMemory(NeuronxsimError, MemoryError):
    """A command's estimated memory exceeds what the machine has available."""


def _meminfo(field: str) -> Optional[int]:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_room() -> Optional[int]:
    """What the process's cgroup (v2, then v1) still allows, or None without a limit."""
    for limit_file, usage_file in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        try:
            with open(limit_file) as f:
                limit = f.read().strip()
            with open(usage_file) as f:
                usage = int(f.read().strip())
        except (OSError, ValueError):
            continue
        if limit == "max" or not limit.isdigit() or int(limit) >= 1 << 60:
            return None
        return max(0, int(limit) - usage)
    return None


def _rlimit_room() -> Optional[int]:
    """What the process's own data limit (``ulimit -d``) still allows, or None without one."""
    soft, _ = resource.getrlimit(resource.RLIMIT_DATA)
    return None if soft == resource.RLIM_INFINITY else max(0, soft - _data_bytes())


def available_bytes() -> int:
    """Memory a command can still take: the system's MemAvailable, or less under a cgroup limit
    or the process's data limit."""
    candidates = [b for b in (_meminfo("MemAvailable"), _cgroup_room(), _rlimit_room()) if b is not None]
    if not candidates:
        pages, size = os.sysconf("SC_AVPHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        candidates.append(pages * size)
    return min(candidates)


def human(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} EiB"


def check(needed: float, what: str, hint: str) -> None:
    """Refuses (:class:`NotEnoughMemory`) when ``needed`` bytes exceed what is available:
    "<what> needs about N of memory; M is available. <hint>"."""
    room = available_bytes()
    if needed > room:
        raise NotEnoughMemory(f"{what} needs about {human(needed)} of memory; {human(room)} is available. {hint}")


#: Host bytes per simulated instruction (measured on the decoder layer): the simulator's decoded
#: program and schedule, the per-instruction records (a NumPy record array of 436 bytes each) and
#: the per-kernel selections the report makes from them.
BYTES_PER_INSTRUCTION = 1200

#: DRAM tensors are held about three times in full mode: the input and output arrays, the
#: simulator's copies and unwritten-byte tracking, and inputs generated as float64 first.
DRAM_COPIES = 3


def simulation_bytes(module, arch: str, mode: str) -> int:
    """What simulating ``module`` (ISA-level, or with kernel nodes in timing mode) will hold."""
    from neuronxsim.bir import MemoryType
    from neuronxsim.sim import config

    cfg = config(arch)
    dram_types = (MemoryType.Input, MemoryType.Output, MemoryType.DRAM)
    instructions = sum(len(b.instructions) for f in module.functions for b in f.blocks)
    total = instructions * BYTES_PER_INSTRUCTION
    if mode == "full":
        dram = {}
        for f in module.functions:
            for a in f.allocations:
                loc = a.location
                if loc is not None and loc.type in dram_types:
                    dram[loc.name] = loc.partitions * loc.bytes_per_partition
        on_chip = cfg.num_partitions * (cfg.sbuf_bytes_per_partition + cfg.psum_bytes_per_partition)
        total += DRAM_COPIES * sum(dram.values()) + 2 * on_chip  # one state, and the one kept for reuse
    return total


def _data_bytes() -> int:
    """The process's data segment now (VmData), which RLIMIT_DATA bounds."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


@contextlib.contextmanager
def ceiling():
    """Inside the block, allocations past what is available fail (``MemoryError`` in Python,
    ``std::bad_alloc`` in the C++ core, which the bindings turn into ``MemoryError``) instead of
    the system killing the process. Only ever lowers the existing limit; restores it after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    limit = _data_bytes() + available_bytes()
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    lowered = False
    if soft == resource.RLIM_INFINITY or limit < soft:
        try:
            resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
            lowered = True
        except (ValueError, OSError):
            pass  # the system does not let us: the estimates still hold
    try:
        yield
    finally:
        if lowered:
            resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


__all__ = ["NotEnoughMemory", "available_bytes", "human", "check", "ceiling", "simulation_bytes", "BYTES_PER_INSTRUCTION"]
