"""Kernels that re-create the experiments behind published NeuronCore measurements, written for
this repository (never copied from the public sources), for ``benchmarks/calibrate.py``.

Each module holds the kernels of one source document; each kernel's docstring names the
experiment it re-creates and anything about the published experiment it had to infer.
"""
