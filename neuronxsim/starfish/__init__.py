"""Mirrors the shipped ``neuronxcc.starfish`` layout: ``lib`` holds the compiled core, ``penguin``
the macro IR and its BIR codegen."""
