"""
the NKI tracer's hot paths
"""
from __future__ import annotations
from neuronxsim.nki.indexing import LoopIndex
__all__: list[str] = ['LoopIndex']
