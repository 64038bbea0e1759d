"""Penguin -> BIR code generation (Cython).

* ``BirCodeGenLoop`` -- lowers a ``penguin.ir.Program`` into a BIR module: one codegen method per
  macro family, emitting the IT54 / IT55 / IT56 kernel nodes;
* ``KernelBuilder`` -- the table that picks the codegen method for a macro (and its pre-tiled
  twin when every operand is a MemrefTile);
* ``KernelMetricsCollector`` -- process-wide counts of the kernel nodes emitted, and their JSON
  sidecar.
"""
