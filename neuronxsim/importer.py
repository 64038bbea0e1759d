"""Running NKI kernel files and scripts unmodified: ``import nki`` resolves to the NKI 0.6
dialect (``neuronxsim.nki06``) and ``import neuronxcc.nki`` to the 2.2x one
(``neuronxsim.nki``).

:func:`installed` puts a meta path finder in front of ``sys.meta_path`` for the duration of a
``with`` block; only ``neuronxsim exec``, ``neuronxsim profile`` and the pytest plugin
(``neuronxsim.pytest_plugin``) use it, so importing neuronxsim never changes what ``import nki``
means. The finder maps

* ``nki`` and its public modules (``nki.language``, ``nki.isa``, ``nki.collectives``,
  ``nki.typing``) to ``neuronxsim.nki06``'s;
* ``neuronxcc`` to an empty package holding ``nki``, and ``neuronxcc.nki`` with its modules
  (``neuronxcc.nki.X``) to ``neuronxsim.nki``'s (``neuronxsim.nki.X``);

and refuses any other ``nki.*`` / ``neuronxcc.*`` module with an ImportError that says neuronxsim
does not provide it (rather than letting a half-matching installation answer).

A real ``nki`` or ``neuronxcc`` package (the Neuron SDK) that is importable would be hidden by
the finder: :func:`installed` refuses then, naming where it is, unless ``allow_shadowing`` is
given (``--allow-shadowing`` on the command line), because a user who has the SDK and runs a
script expects the SDK unless they ask for the simulator.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

from neuronxsim.errors import NeuronxsimError

#: Public module names -> the neuronxsim module that implements them.
ALIASES = {
    "nki": "neuronxsim.nki06",
    "nki.language": "neuronxsim.nki06.language",
    "nki.isa": "neuronxsim.nki06.isa",
    "nki.collectives": "neuronxsim.nki06.collectives",
    "nki.typing": "neuronxsim.nki06.typing",
    "neuronxcc.nki": "neuronxsim.nki",
    "neuronxcc.nki.language": "neuronxsim.nki.language",
    "neuronxcc.nki.isa": "neuronxsim.nki.isa",
    "neuronxcc.nki.typing": "neuronxsim.nki.typing",
}
#: The packages whose names the finder owns.
ROOTS = ("nki", "neuronxcc")


class ShadowingError(NeuronxsimError, ImportError):
    """A real NKI installation would be hidden by neuronxsim's."""


class _AliasLoader(importlib.abc.Loader):
    """Hands out an existing module under another name (leaving its own ``__spec__``, which
    the import system overwrites between ``create_module`` and ``exec_module``, as it was)."""

    def __init__(self, target: str | None):
        self.target = target
        self.own_spec = None

    def create_module(self, spec):
        if self.target is None:  # the bare `neuronxcc` package
            module = types.ModuleType(spec.name, "neuronxsim's stand-in for the neuronxcc package "
                                      "(it holds nki, the 2.2x dialect)")
            module.__path__ = []
            return module
        module = importlib.import_module(self.target)
        self.own_spec = module.__spec__
        return module

    def exec_module(self, module):
        if self.own_spec is not None:
            module.__spec__ = self.own_spec


class NkiFinder(importlib.abc.MetaPathFinder):
    """Resolves ``nki`` / ``neuronxcc.nki`` imports to neuronxsim's dialects."""

    def find_spec(self, fullname, path=None, target=None):
        root = fullname.partition(".")[0]
        if root not in ROOTS:
            return None
        if fullname == "neuronxcc":
            return importlib.machinery.ModuleSpec(fullname, _AliasLoader(None), is_package=True)
        target_name = ALIASES.get(fullname)
        if target_name is None and fullname.startswith("neuronxcc.nki."):
            # the 2.2x dialect's other public modules, as neuronxsim.nki grows them
            candidate = "neuronxsim.nki." + fullname[len("neuronxcc.nki."):]
            if not candidate.rpartition(".")[2].startswith("_") and \
                    importlib.util.find_spec(candidate) is not None:
                target_name = candidate
        if target_name is None:
            dialect = "the NKI 0.6 dialect (nki)" if root == "nki" else \
                "the 2.2x dialect (neuronxcc.nki)"
            raise ModuleNotFoundError(f"No module named {fullname!r}: neuronxsim's {dialect} "
                                      f"provides {', '.join(n for n in ALIASES if n.startswith(root))}",
                                      name=fullname)
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(target_name),
                                              is_package=fullname in ("nki", "neuronxcc.nki"))


def real_installations() -> dict:
    """{name: where} of importable ``nki`` / ``neuronxcc`` packages that are not neuronxsim's
    (a folder without ``__init__.py`` of that name, e.g. a docs checkout, is no package)."""
    found = {}
    for name in ROOTS:
        module = sys.modules.get(name)
        if module is not None:
            if not _is_ours(module):
                found[name] = getattr(module, "__file__", None) or repr(module)
            continue
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.origin not in (None, "namespace") and \
                not isinstance(spec.loader, _AliasLoader):
            found[name] = spec.origin
    return found


def _is_ours(module) -> bool:
    name = getattr(module, "__name__", "")
    return name.startswith("neuronxsim") or isinstance(getattr(module, "__loader__", None),
                                                       _AliasLoader)


@contextlib.contextmanager
def installed(allow_shadowing: bool = False):
    """Makes ``import nki`` and ``import neuronxcc.nki`` resolve to neuronxsim inside the
    block (see the module docstring)."""
    real = real_installations()
    if real and not allow_shadowing:
        where = "; ".join(f"{name} at {path}" for name, path in real.items())
        raise ShadowingError(f"a Neuron SDK package is importable ({where}); running under "
                             "neuronxsim would hide it. Pass --allow-shadowing (pytest: "
                             "--neuronxsim-allow-shadowing) to simulate anyway")
    finder = NkiFinder()
    saved = {name: mod for name, mod in sys.modules.items()
             if name.partition(".")[0] in ROOTS}
    for name in saved:
        del sys.modules[name]
    sys.meta_path.insert(0, finder)
    try:
        yield finder
    finally:
        sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if n.partition(".")[0] in ROOTS]:
            del sys.modules[name]
        sys.modules.update(saved)


def install(allow_shadowing: bool = False):
    """Installs the finder until the process ends (the pytest plugin's use); returns the
    context to close it earlier."""
    context = installed(allow_shadowing)
    context.__enter__()
    return context


__all__ = ["installed", "install", "real_installations", "NkiFinder", "ShadowingError", "ALIASES"]
