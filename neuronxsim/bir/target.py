"""The target description: each NeuronCore generation's machine numbers and names, mirrored field
by field from the C++ ``bir::MachineConfig`` (cpp/bir/MachineConfig.h). The class is generated from
the C++ field list, so the two cannot drift; units are in the field names
(``sbuf_bytes_per_partition``, ``pe_clock_ghz``).

Every layer reads hardware numbers from here (the NKI tracer, the codegen, the command line, the
simulator's facade); only the NumPy reference executor keeps its own, as the independent oracle.

>>> from neuronxsim.bir import target
>>> target.config("trn2").sbuf_bytes_per_partition // 1024
224
>>> target.config("gen2").arch, target.bir_arch("trn1"), target.ARCHS
('trn1', 'gen2', ('trn1', 'trn2'))
"""

from __future__ import annotations

import dataclasses
import functools

from neuronxsim.errors import BIRError
from neuronxsim.starfish.lib import _core

_b = _core.bir

#: The known generations by their canonical names, oldest first: ``("trn1", "trn2")``.
ARCHS: tuple = tuple(_b.known_archs())

_FIELDS = _b.machine_config(ARCHS[0])



def _clock_ghz(c, engine: str) -> float:
    """The clock of ``engine`` ("PE", "ACT", "DVE", "Pool" or "SP"), in GHz."""
    return {
        "PE": c.pe_clock_ghz, "ACT": c.act_clock_ghz, "DVE": c.dve_clock_ghz,
        "Pool": c.pool_clock_ghz, "SP": c.sp_clock_ghz,
    }[engine]


MachineConfig = dataclasses.make_dataclass(
    "MachineConfig",
    [(name, type(value)) for name, value in _FIELDS.items()],
    frozen=True,
    namespace={
        "__doc__": "One NeuronCore generation's numbers (frozen mirror of C++ bir::MachineConfig).",
        "__module__": __name__,
        "pe_bf16_peak_flops_per_ns": property(lambda c: 2.0 * c.pe_rows * c.pe_cols * c.pe_clock_ghz,
                                              doc="Peak bf16 multiply-add rate of the PE array, in flops per ns."),
        "psum_bank_fp32_elements": property(lambda c: c.psum_bank_bytes // 4,
                                            doc="fp32 elements of one PSUM bank per partition."),
        "clock_ghz": _clock_ghz,
    },
)


def canonical_arch(arch: str) -> str:
    """The canonical name ("trn1", "trn2") of any accepted name of a generation ("gen2",
    "NeuronCore-v3", ...); ``""`` when unknown."""
    return _b.canonical_arch(arch)


def config(arch: str = "trn1") -> MachineConfig:
    """The configuration of ``arch``: "trn1" (NeuronCore-v2) or "trn2" (v3); the BIR JSON names
    "gen2"/"gen3" and "NeuronCore-v2"/"NeuronCore-v3" also work (the same object for every name).
    SimulationError when unknown."""
    return _config(_b.canonical_arch(arch) or arch)


@functools.lru_cache(maxsize=None)
def _config(arch: str) -> MachineConfig:
    return MachineConfig(**_b.machine_config(arch))


@functools.lru_cache(maxsize=None)
def uniform(field: str):
    """The value of ``field`` that every known generation shares, for code that does not take an
    arch (``nl.tile_size``, the PE tile of a kernel written for any core). A BIRError names the
    generations that differ: such code must then take the arch and read :func:`config`."""
    values = {arch: getattr(config(arch), field) for arch in ARCHS}
    if len(set(values.values())) != 1:
        raise BIRError(f"MachineConfig.{field} differs between generations ({values}); read it "
                       "from target.config(arch)")
    return values[ARCHS[0]]


def bir_arch(arch: str) -> str:
    """``Module.arch`` in BIR JSON ("gen2", "gen3") of any accepted name of a generation."""
    return config(arch).bir_arch


def aliases(arch: str) -> tuple:
    """Every name accepted for the generation ``arch``, canonical name first (``()`` when unknown)."""
    return tuple(_b.arch_aliases(arch))


__all__ = ["ARCHS", "MachineConfig", "config", "canonical_arch", "bir_arch", "aliases", "uniform"]
