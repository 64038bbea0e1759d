"""
libwalrus: KLR files and the kernel-node resolvers
"""
from __future__ import annotations
import collections.abc
import neuronxsim.starfish.lib._core.bir
import typing
__all__: list[str] = ['DEFAULT_MAX_INSTRUCTIONS', 'NEURONXSIM_KLR_FORMAT', 'add_compiled_nki_kernel', 'bir_kernel_leaves', 'compiled_nki_kernel', 'decode_kernel', 'encode_kernel', 'inline_bir_kernels', 'kernel_node_latency_stats', 'klr_info', 'leaf_signatures', 'read_kernel_file', 'resolve_kernel_nodes', 'write_kernel_file']
def add_compiled_nki_kernel(handle: str, data: bytes) -> None:
    """
    Registers a user kernel the NKI front end compiled (an IT55 func).
    """
def bir_kernel_leaves() -> dict:
    ...
def compiled_nki_kernel(handle: str) -> bytes | None:
    """
    The artifact registered under `handle`, or None.
    """
def decode_kernel(data: bytes) -> neuronxsim.starfish.lib._core.bir.Module:
    ...
def encode_kernel(module: neuronxsim.starfish.lib._core.bir.Module, kernel_name: str = 'kernel') -> tuple[bytes, dict]:
    """
    (file bytes, {klr_operators, extended_operators, generic_instructions}).
    """
def inline_bir_kernels(module: neuronxsim.starfish.lib._core.bir.Module, verify: bool = True, max_instructions: typing.SupportsInt | typing.SupportsIndex = 1000000) -> list:
    """
    Expands every IT54 InstBIRKernel node of `module` in place; returns one dict of statistics per node.
    A node whose expansion has more than `max_instructions` instructions is refused (KernelError).
    """
def kernel_node_latency_stats() -> dict:
    ...
def klr_info(path: str) -> dict:
    """
    What a KLR file holds (header, metadata, Contents kind...), without lowering it.
    """
def leaf_signatures() -> list:
    """
    Every IT54 leaf's signature (operands by role with symbolic dims, typed attrs with defaults), by name.
    """
def read_kernel_file(path: str) -> neuronxsim.starfish.lib._core.bir.Module:
    """
    The traced kernel (a verified bir.Module) a KLR file holds.
    """
def resolve_kernel_nodes(module: neuronxsim.starfish.lib._core.bir.Module, nki_kernels: bool = True, klir_kernels: bool = True, base_dir: str = '', allowed_dirs: collections.abc.Sequence[str] = [], verify: bool = True) -> int:
    """
    Resolves IT55/IT56 nodes in place; returns how many. Instruction objects taken from the module before are invalid afterwards.
    """
def write_kernel_file(module: neuronxsim.starfish.lib._core.bir.Module, path: str, kernel_name: str = 'kernel') -> None:
    ...
DEFAULT_MAX_INSTRUCTIONS: int = 1000000
NEURONXSIM_KLR_FORMAT: str = 'neuronxsim-klr/1'
