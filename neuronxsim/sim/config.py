"""The machine configuration the simulator runs with: the target description
(:mod:`neuronxsim.bir.target`), re-exported here as ``sim.MachineConfig`` and ``sim.config``."""

from __future__ import annotations

from neuronxsim.bir.target import MachineConfig, config

__all__ = ["MachineConfig", "config"]
