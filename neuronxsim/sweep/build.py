"""The fingerprint of the installed neuronxsim: what the trace cache's keys, the Dask workers'
check and every row name as "the build".

``neuronxsim.__version__`` is the same string in every commit, so it cannot tell two builds
apart: a tracer or timing model changed in between would reuse the older build's traces and mix
its rows with new ones. The fingerprint is a SHA-256 over the package's files as installed: the
text of every ``.py`` file and, for each compiled module (``.so``), its GNU build ID (the
linker's hash of the linked contents: reading it costs a few hundred bytes where hashing the
165 MB of libraries would cost about a quarter of a second), or all its bytes when it has none.
Computed once per process (measured 2026-12-06: 6-8 ms, nearly all of it reading the 160 ``.py``
files).
"""

from __future__ import annotations

import hashlib
import os
import struct

import neuronxsim

_fingerprint: str | None = None


def fingerprint() -> str:
    """The installed package's fingerprint (16 hex digits of the SHA-256; see the module
    docstring), computed on first call."""
    global _fingerprint
    if _fingerprint is None:
        _fingerprint = _compute(os.path.dirname(os.path.abspath(neuronxsim.__file__)))
    return _fingerprint


def _compute(root: str) -> str:
    h = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if not name.endswith((".py", ".so")):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            try:
                with open(path, "rb") as f:
                    digest = _elf_build_id(f) if name.endswith(".so") else None
                    if digest is None:
                        f.seek(0)
                        digest = hashlib.sha256(f.read()).digest()
            except OSError as e:  # (an unreadable file of the package: its name and error stand in)
                digest = f"unreadable {e.errno}".encode()
            h.update(rel.encode() + b"\0" + digest + b"\0")
    return h.hexdigest()[:16]


def _elf_build_id(f) -> bytes | None:
    """The GNU build ID of a 64-bit little-endian ELF file (from its PT_NOTE segments), or None."""
    head = f.read(64)
    if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
        return None
    phoff, = struct.unpack_from("<Q", head, 32)
    phentsize, phnum = struct.unpack_from("<HH", head, 54)
    f.seek(phoff)
    table = f.read(phentsize * phnum)
    for i in range(phnum):
        p_type, = struct.unpack_from("<I", table, i * phentsize)
        if p_type != 4:  # PT_NOTE
            continue
        offset, = struct.unpack_from("<Q", table, i * phentsize + 8)
        size, = struct.unpack_from("<Q", table, i * phentsize + 32)
        f.seek(offset)
        notes = f.read(min(size, 1 << 16))
        pos = 0
        while pos + 12 <= len(notes):
            namesz, descsz, kind = struct.unpack_from("<III", notes, pos)
            name_end = pos + 12 + ((namesz + 3) & ~3)
            desc = notes[name_end:name_end + descsz]
            if kind == 3 and notes[pos + 12:pos + 12 + namesz].rstrip(b"\0") == b"GNU" and desc:
                return b"build-id:" + desc  # NT_GNU_BUILD_ID
            pos = name_end + ((descsz + 3) & ~3)
    return None


__all__ = ["fingerprint"]
