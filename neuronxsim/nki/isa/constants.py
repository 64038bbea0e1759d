"""``nki.isa.constants`` of the 2.2x SDKs: the named values ``nisa`` instructions take (engines,
reduction-register commands, DMA descriptor-generation and out-of-bounds modes, NeuronCore
versions). ``nisa`` (``neuronxsim.nki.isa``) re-exports each."""

from __future__ import annotations

from neuronxsim import bir


class engine:
    """Engines an instruction can be placed on (``unknown`` lets NKI choose)."""
    unknown = "unknown"
    tensor = "tensor"
    vector = "vector"
    scalar = "scalar"
    gpsimd = "gpsimd"


class reduce_cmd:
    """What an instruction does with its engine's reduction registers."""
    idle = bir.AccumCmd.Idle
    reset = bir.AccumCmd.Zero
    reduce = bir.AccumCmd.Accumulate
    reset_reduce = bir.AccumCmd.ZeroAccumulate
    load_reduce = bir.AccumCmd.LoadAccumulate  # (tensor_scalar_cumulative only)


class dge_mode:
    unknown = "unknown"
    none = "none"
    swdge = "swdge"
    hwdge = "hwdge"


class oob_mode:
    error = "error"
    skip = "skip"


class nc_version:
    gen2 = 2
    gen3 = 3


__all__ = ["engine", "reduce_cmd", "dge_mode", "oob_mode", "nc_version"]
