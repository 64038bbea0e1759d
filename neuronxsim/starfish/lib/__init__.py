"""The compiled core: ``_core`` (pybind11) and the shared libraries it links (libBIR, ...).
Import the facades (``neuronxsim.bir`` ...) rather than this package."""
