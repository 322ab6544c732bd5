"""The ``.npz`` file format of checkpoints: written all at once, read within bounds.

An ``.npz`` file is a zip archive of ``.npy`` members, one array each (NumPy's own format,
``numpy.load`` reads it). :func:`write` and :func:`read` are what :mod:`minigrad.serialize`
needs from it, and nothing more:

* :func:`write` puts the archive together in a new temporary file next to ``path`` (a name
  no other writer can have) and renames it over ``path`` in one step (``os.replace``): a
  reader sees the old file or the new one, never half of one, and a failed write removes its
  temporary file and leaves ``path`` as it was.
* :func:`read` accepts only what :func:`write` makes: uncompressed ``.npy`` members of
  numbers, booleans or strings. Nothing is unpickled, and each array's size is checked
  against the bytes the file really holds before any memory is taken, so a damaged or
  hostile file cannot make it use more memory than the file's own size.

This module and :mod:`minigrad.backend` are the only ones of the engine that import NumPy.
"""
from __future__ import annotations

import math
import os
import secrets
import stat
import zipfile
from typing import IO, Any

import numpy as np

__all__ = ["write", "read", "DamagedFile"]

_MAX_HEADER = 10_000  # bytes of a .npy header (NumPy's own limit for files it trusts)
_PIECE = 1 << 20  # bytes read at a time


class DamagedFile(ValueError):
    """The file is not an ``.npz`` that :func:`write` could have made; the message says why."""


def write(path: str | os.PathLike[str], arrays: dict[str, Any]) -> None:
    """Write ``arrays`` (NumPy arrays or strings, by name) as an uncompressed ``.npz`` at
    ``path``, all at once or not at all."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"cannot write {path!r}: there is no folder {folder!r}")
    if os.path.isdir(path):
        raise IsADirectoryError(f"cannot write {path!r}: it is a folder; give a file name")
    fd, temporary = _new_temporary_file(folder, os.path.basename(path))
    try:
        with os.fdopen(fd, "wb") as f:
            with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
                for name, array in arrays.items():
                    with archive.open(name + ".npy", "w", force_zip64=True) as member:
                        np.lib.format.write_array(member, np.asarray(array), allow_pickle=False)
            f.flush()
            os.fsync(f.fileno())  # on disk before the rename makes it the checkpoint
        os.replace(temporary, path)
    except BaseException:
        try:
            os.remove(temporary)
        except FileNotFoundError:
            pass
        raise


def _new_temporary_file(folder: str, base: str) -> tuple[int, str]:
    """Create a new, empty file with a random name in ``folder``; its descriptor and path.

    ``O_EXCL`` makes the creation fail if the name exists, so two savers never share a
    file. (Not :func:`tempfile.mkstemp`: its files are private to the user, mode 0600,
    and the checkpoint should get the usual permissions.)
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        temporary = os.path.join(folder, f".{base}.{secrets.token_hex(8)}.tmp")
        try:
            return os.open(temporary, flags, 0o666), temporary
        except FileExistsError:  # pragma: no cover - one chance in 2**64
            continue


def read(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` file at ``path``, by name, each checked before it is read.

    Raises
    ------
    FileNotFoundError
        If there is no file at ``path``.
    DamagedFile
        (a ValueError) If the file is not an archive that :func:`write` could have made.
    """
    # Opened without blocking and checked before the first read: a FIFO (or a device) would
    # make read() wait for a writer forever. O_NONBLOCK changes nothing for a regular file.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            kind = "a FIFO (named pipe)" if stat.S_ISFIFO(info.st_mode) else \
                "a device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode) else \
                "a socket" if stat.S_ISSOCK(info.st_mode) else "not a regular file"
            raise DamagedFile(f"it is {kind}, not a regular file; a checkpoint is a file")
        return _read(f, info.st_size)


def _read(f: IO[bytes], size: int) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` file ``f`` of ``size`` bytes, each checked before it is read."""
    head = f.read(6)
    if head == b"\x93NUMPY":
        raise DamagedFile("it holds a single array (.npy), not an .npz archive")
    if not head.startswith(b"PK"):
        raise DamagedFile(f"it is not an .npz (zip) archive; it starts with {head!r}")
    f.seek(0)
    try:
        with zipfile.ZipFile(f) as archive:
            members = archive.infolist()
            for info in members:
                if not info.filename.endswith(".npy"):
                    raise DamagedFile(f"it holds {info.filename!r}, which is not an array "
                                   "(.npy); a checkpoint holds nothing else")
                if info.compress_type != zipfile.ZIP_STORED:
                    raise DamagedFile(f"its member {info.filename!r} is compressed; a checkpoint "
                                   "stores its arrays uncompressed")
            claimed = sum(info.file_size for info in members)
            if claimed > size:
                raise DamagedFile(f"it is damaged: its members claim {claimed} bytes, but the "
                               f"file has only {size}")
            arrays: dict[str, np.ndarray] = {}
            for info in members:
                name = info.filename[:-len(".npy")]
                if name in arrays:
                    raise DamagedFile(f"it is damaged: it holds {info.filename!r} twice")
                with archive.open(info) as member:
                    arrays[name] = _read_array(member, info)
            return arrays
    except (OSError, EOFError, zipfile.BadZipFile, ValueError, RuntimeError) as exc:
        if isinstance(exc, DamagedFile):
            raise
        raise DamagedFile(f"it is damaged ({type(exc).__name__}: {exc})") from None


def _read_array(member: IO[bytes], info: zipfile.ZipInfo) -> np.ndarray:
    """One ``.npy`` member: its header, checked against the member's size, then its data."""
    version = np.lib.format.read_magic(member)
    if version == (1, 0):
        shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(
            member, max_header_size=_MAX_HEADER)
    elif version == (2, 0):
        shape, fortran_order, dtype = np.lib.format.read_array_header_2_0(
            member, max_header_size=_MAX_HEADER)
    else:
        raise DamagedFile(f"its member {info.filename!r} is a .npy of version {version}; "
                       "expected 1.0 or 2.0")
    if dtype.hasobject:
        raise DamagedFile(f"its member {info.filename!r} holds Python objects (pickles), which "
                       "are never loaded; a checkpoint holds numbers, booleans and strings")
    if any(d < 0 for d in shape):
        raise DamagedFile(f"it is damaged: {info.filename!r} has the shape {shape}")
    nbytes = math.prod(shape) * dtype.itemsize  # exact: Python ints, no overflow
    available = info.file_size - member.tell()
    if nbytes != available:
        raise DamagedFile(f"it is damaged: {info.filename!r} declares an array of shape {shape} "
                       f"and dtype {dtype} ({nbytes} bytes), but holds {available} bytes")
    data = bytearray(nbytes)  # the only copy: as large as the bytes the file holds
    view, done = memoryview(data), 0
    while done < nbytes:  # in pieces of 1 MiB, so that no second copy of the array is made
        piece = member.read(min(nbytes - done, _PIECE))
        if not piece:
            raise DamagedFile(f"it is damaged: {info.filename!r} is shorter than its header says")
        view[done:done + len(piece)] = piece
        done += len(piece)
    if member.read(1):  # reading to the end also checks the CRC
        raise DamagedFile(f"it is damaged: {info.filename!r} is longer than its header says")
    array = np.frombuffer(data, dtype=dtype)
    return array.reshape(shape, order="F" if fortran_order else "C")


