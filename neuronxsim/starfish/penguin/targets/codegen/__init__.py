"""Penguin -> BIR code generation (Cython): ``BirCodeGenLoop``."""
