"""The machine configuration per NeuronCore generation, mirrored field by field from the C++
``bir::MachineConfig`` (cpp/bir/Hwm.h): the class is generated from the C++ field list, so the
two cannot drift. Units are in the field names (``sbuf_bytes_per_partition``, ``pe_clock_ghz``)."""

from __future__ import annotations

import dataclasses
import functools

from neuronxsim.starfish.lib import _core

_FIELDS = _core.sim.machine_config("trn1")

MachineConfig = dataclasses.make_dataclass(
    "MachineConfig",
    [(name, type(value)) for name, value in _FIELDS.items()],
    frozen=True,
    namespace={
        "__doc__": "One NeuronCore generation's numbers (frozen mirror of C++ bir::MachineConfig).",
        "__module__": "neuronxsim.sim",
        "pe_bf16_peak_flops_per_ns": property(lambda c: 2.0 * c.pe_rows * c.pe_cols * c.pe_clock_ghz),
        "clock_ghz": lambda c, engine: {
            "PE": c.pe_clock_ghz, "ACT": c.act_clock_ghz, "DVE": c.dve_clock_ghz,
            "Pool": c.pool_clock_ghz, "SP": c.sp_clock_ghz,
        }[engine],
    },
)


@functools.lru_cache(maxsize=None)
def config(arch: str = "trn1") -> MachineConfig:
    """The configuration of ``arch``: "trn1" (NeuronCore-v2) or "trn2" (v3); "gen2"/"gen3" also work."""
    return MachineConfig(**_core.sim.machine_config(arch))
