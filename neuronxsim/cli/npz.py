"""Reading input arrays from an ``.npz`` archive (``numpy.savez``) without trusting it.

Everything is checked before any array data is decompressed: the archive's directory, each
member's name (an input of the module), its ``.npy`` header (parsed from the first bytes only:
version, dtype, shape, order) against the input it is for (numbers only: no objects, so never a
pickle; no strings), and the sizes the header and the archive declare against each other. The
data read is then exactly the declared size, so a small archive that would decompress to
gigabytes is refused from its header, and a lying one stops at the declared size.

Every refusal is :class:`InputError` naming the archive and the array. The standard library's
zip reader and NumPy's header parser meet untrusted bytes here, so any exception they raise
(besides running out of memory) is taken as "this archive cannot be read".
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import zipfile
from typing import BinaryIO, Dict, Mapping, Tuple, Union

import numpy as np

from neuronxsim.cli.inputs import InputError, check_file

#: The longest .npy header read (numpy's own limit for headers it trusts).
MAX_HEADER_BYTES = 10_000

#: The dtype kinds an input array may have: booleans, integers, floats.
_NUMERIC_KINDS = "biuf"

Wanted = Mapping[str, Tuple[tuple, np.dtype]]


@contextlib.contextmanager
def _parsing(what: str):
    """Any exception the zip reader or NumPy's header parser raises on untrusted bytes becomes
    ``InputError("<what> (<reason>)")``; running out of memory stays itself."""
    try:
        yield
    except (MemoryError, InputError):
        raise
    except Exception as e:
        raise InputError(f"{what} ({_short(e)})") from None


def _describe_start(head: bytes) -> str:
    if not head:
        return "it is empty"
    if all(32 <= b < 127 or b in (9, 10, 13) for b in head):
        return "it starts with text"
    return f"it starts with bytes {head[:4].hex(' ')}"


def _header(member: BinaryIO, where: str) -> Tuple[tuple, bool, np.dtype, int]:
    """(shape, fortran_order, dtype, header bytes) of a .npy member, from its first bytes."""
    fmt = np.lib.format
    with _parsing(f"{where}: not a valid .npy array header"):
        version = fmt.read_magic(member)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(member, max_header_size=MAX_HEADER_BYTES)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = fmt.read_array_header_2_0(member, max_header_size=MAX_HEADER_BYTES)
        else:
            raise ValueError(f".npy format version {version[0]}.{version[1]} is not one numpy writes")
    return shape, fortran, dtype, member.tell()


def _short(e: BaseException, limit: int = 160) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= limit else text[:limit] + "..."


def _check_dtype(dtype: np.dtype, where: str) -> None:
    if dtype.hasobject:
        raise InputError(f"{where}: holds Python objects (a pickle); inputs are numeric arrays and "
                         "pickles are never loaded")
    if dtype.kind in "US":
        raise InputError(f"{where}: holds strings ({dtype}); inputs are numeric arrays")
    if dtype.kind not in _NUMERIC_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise InputError(f"{where}: has dtype {dtype}; inputs are arrays of booleans, integers or floats")


def read_npz(source: Union[str, os.PathLike, BinaryIO], wanted: Wanted, name: str = "") -> Dict[str, np.ndarray]:
    """The arrays of the archive ``source`` (a path, or an open binary file with ``name`` for
    messages), each an input named in ``wanted`` (``{name: (shape, dtype)}``) with exactly that
    shape, converted to that dtype. Inputs the archive lacks are simply not in the result."""
    if isinstance(source, (str, os.PathLike)):
        name = check_file(source, "inputs archive", limit=1 << 62)  # the inputs' own sizes bound the reading
        try:
            f = open(name, "rb")
        except OSError as e:
            raise InputError(f"{name}: cannot open the inputs archive ({e.strerror})") from None
        with f:
            return read_npz(f, wanted, name)
    try:
        head = source.read(8)
        source.seek(0)
    except OSError as e:  # (a file of /proc, a disk error: the OSError names no file)
        raise InputError(f"{name}: cannot read the inputs archive ({e.strerror or e})") from None
    if head.startswith(b"\x93NUMPY"):
        raise InputError(f"{name}: is a single .npy array; --inputs takes an .npz archive of arrays by input "
                         "name (numpy.savez)")
    if not head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        raise InputError(f"{name}: not an .npz archive (numpy.savez): {_describe_start(head)}")
    with _parsing(f"{name}: not a readable .npz archive"):
        archive = zipfile.ZipFile(source)
    with archive:
        return _read_members(archive, wanted, name)


def _read_members(archive: zipfile.ZipFile, wanted: Wanted, name: str) -> Dict[str, np.ndarray]:
    plan, seen = [], set()
    for info in archive.infolist():
        member = info.filename
        where = f"{name}: {member!r}"
        if not member.endswith(".npy") or info.is_dir():
            raise InputError(f"{where}: is not an array (.npy) member; the archive must hold only arrays")
        key = member[:-len(".npy")]
        if key in seen:
            raise InputError(f"{where}: the archive holds two arrays named {key!r}")
        seen.add(key)
        where = f"{name}: array {key!r}"
        if key not in wanted:
            raise InputError(f"{where} is not an input of the module; its inputs are {sorted(wanted)}")
        if info.flag_bits & 0x1:
            raise InputError(f"{where}: is encrypted")
        with _parsing(f"{where}: cannot be read"):
            member_file = archive.open(info)
        with member_file:
            shape, fortran, dtype, header_bytes = _header(member_file, where)
        _check_dtype(dtype, where)
        want_shape, want_dtype = wanted[key]
        if tuple(shape) != tuple(want_shape):
            raise InputError(f"{where}: has shape {list(shape)}; the module's input is {list(want_shape)}")
        data_bytes = math.prod(shape) * dtype.itemsize
        if info.file_size != header_bytes + data_bytes:
            raise InputError(f"{where}: the archive declares {info.file_size} bytes for it but its header "
                             f"describes {header_bytes + data_bytes}; the file is corrupt")
        plan.append((info, key, shape, fortran, dtype, header_bytes, data_bytes, want_dtype))
    arrays = {}
    for info, key, shape, fortran, dtype, header_bytes, data_bytes, want_dtype in plan:
        where = f"{name}: array {key!r}"
        with _parsing(f"{where}: its data cannot be read; the file is corrupt"):
            with archive.open(info) as member_file:
                member_file.read(header_bytes)
                data = _read_exactly(member_file, data_bytes)
                member_file.read(1)  # reaching the end makes zipfile check the CRC
        if len(data) != data_bytes:
            raise InputError(f"{where}: its data ends after {len(data)} of {data_bytes} bytes; the file is "
                             "truncated")
        array = np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")
        arrays[key] = _converted(array, np.dtype(want_dtype), where)
    return arrays


def _converted(array: np.ndarray, want: np.dtype, where: str) -> np.ndarray:
    """``array`` as the input's dtype ``want``, refused (naming the first element changed) when
    that changes a value: an integer or boolean input must get every value exactly (no wrapping,
    no fraction dropped, no NaN); a floating-point input may round a value to its nearest, as its
    precision is the module's choice, but not overflow a finite value to inf or NaN."""
    with np.errstate(all="ignore"):  # a changed value is refused below, not warned of
        cast = array.astype(want)
        if want.kind in "fV":  # (ml_dtypes' bfloat16 and float8 types are of kind V)
            given, got = array.astype(np.float64), cast.astype(np.float64)
            changed = (np.isnan(given) != np.isnan(got)) | (np.isinf(given) != np.isinf(got))
        else:
            # Back in the archive's dtype a wrapped value can look unchanged (uint64 2**64-1 is
            # int32 -1, which is 2**64-1 again), but then its sign has changed.
            changed = (cast.astype(array.dtype) != array) | ((cast < 0) != (array < 0))
    if changed.any():
        at = np.unravel_index(int(np.flatnonzero(changed)[0]), array.shape)
        raise InputError(f"{where}: the {array.dtype} value {array[at].item()!r} at {[int(i) for i in at]} "
                         f"would become {cast[at].item()!r} as {want}, the input's dtype; give values {want} holds")
    return cast


def _read_exactly(f: BinaryIO, n: int) -> bytes:
    chunks, left = [], n
    while left > 0:
        chunk = f.read(min(left, 1 << 24))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_npz_bytes(data: bytes, wanted: Wanted, name: str = "<bytes>") -> Dict[str, np.ndarray]:
    """:func:`read_npz` over the bytes of an archive (the fuzzer's entry point)."""
    return read_npz(io.BytesIO(data), wanted, name)


__all__ = ["read_npz", "read_npz_bytes", "MAX_HEADER_BYTES"]
