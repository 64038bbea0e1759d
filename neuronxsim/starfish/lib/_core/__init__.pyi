"""
neuronxsim compiled core (use the neuronxsim.* facades)
"""
from __future__ import annotations
from . import bir
from . import sim
from . import walrus
from . import nki
__all__: list[str] = ['bir', 'nki', 'sim', 'walrus']
