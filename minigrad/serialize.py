"""Saving and loading state dicts as ``.npz`` files.

>>> import minigrad as mg, minigrad.nn as nn
>>> model = nn.Linear(2, 3, seed=0)
>>> mg.save(model.state_dict(), "model.npz")                 # doctest: +SKIP
>>> model.load_state_dict(mg.load("model.npz"))               # doctest: +SKIP

The file is a plain NumPy ``.npz`` archive: each array is stored under its state-dict name
(``np.load("model.npz")["weight"]`` works), and one more entry, ``__minigrad__``, holds a JSON
index of the structure: nested dicts (with their str or int keys), lists, tuples, Python
numbers, strings, booleans and None, and which entries were arrays or tensors. :func:`load`
rebuilds exactly what was saved: the same keys, values and dtypes.

Both directions are careful with the file:

* :func:`save` writes a new temporary file next to ``path`` (a unique name, so two saves at
  once never share one) and then renames it over ``path`` in one step: a reader sees the old
  file or the new one, never half of one, and a failed save leaves the old file as it was.
* :func:`load` reads only what a checkpoint holds: uncompressed ``.npy`` members of plain
  numbers, booleans or strings, nested at most :data:`MAX_DEPTH` levels deep. Nothing is
  unpickled, so loading never runs code from the file, and each array's size is checked
  against the bytes the file really holds before anything is allocated, so a damaged or
  hostile file cannot make ``load`` take more memory than the file's own size.
"""
from __future__ import annotations

import json
import math
import os
import secrets
import zipfile
from typing import IO, Any

import numpy as np

from . import backend
from .tensor import Tensor

__all__ = ["save", "load", "MAX_DEPTH"]

FORMAT = "minigrad.save"
VERSION = 1
INDEX = "__minigrad__"  # the name of the entry that holds the JSON index
MAX_DEPTH = 32
"""How deeply dicts, lists and tuples may nest in a checkpoint (a model's and an optimizer's
state dicts together need about 5 levels)."""
_PLAIN = (bool, int, float, str, type(None))
_MAX_HEADER = 10_000  # bytes of a .npy header (NumPy's own limit for files it trusts)
_PIECE = 1 << 20  # bytes read at a time


class _Damaged(ValueError):
    """A problem in a checkpoint; :func:`load` adds the file's name to the message."""


# ---------------------------------------------------------------------------------------------
# save


def save(obj: dict[str, Any], path: str | os.PathLike) -> None:
    """Write a state dict (or a dict of them) to ``path`` as an ``.npz`` file.

    Parameters
    ----------
    obj : dict
        E.g. ``model.state_dict()``, ``optimizer.state_dict()``, or
        ``{"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 10}``.
        Values may be arrays (NumPy, CuPy, ...), tensors, numbers, strings, None, and
        dicts, lists and tuples of these, nested at most :data:`MAX_DEPTH` levels deep.
    path : str or path
        Where to write; the name is used as given (no ``.npz`` is appended).

    Raises
    ------
    TypeError
        For a value that cannot be saved (named by its place in ``obj``); nothing is written.

    Notes
    -----
    The file is first written in full under a temporary name in the same folder, then
    renamed to ``path`` (``os.replace``, atomic): another process reading ``path`` meanwhile,
    or another thread saving to it, sees either the old file or a complete new one. If
    writing fails (a full disk), the temporary file is removed and ``path`` is unchanged.
    """
    if not isinstance(obj, dict):
        hint = (f" Save its state dict instead: save(x.state_dict(), path)."
                if hasattr(obj, "state_dict") else "")
        raise TypeError(f"save: expected a dict (a state dict); got {type(obj).__name__}.{hint}")
    arrays: dict[str, Any] = {}
    tree = _encode(obj, "", arrays, depth=0)
    index = json.dumps({"format": FORMAT, "version": VERSION, "tree": tree})
    _write_npz(os.fspath(path), {INDEX: np.asarray(index), **arrays})


def _encode(value: Any, name: str, arrays: dict[str, Any], depth: int) -> Any:
    """The JSON index entry of ``value``; arrays are put in ``arrays`` under a unique name."""
    if isinstance(value, (dict, list, tuple)) and depth >= MAX_DEPTH:
        raise TypeError(f"save: {name!r} is nested more than {MAX_DEPTH} levels deep (does a "
                        "dict or list hold itself?)")
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            if type(key) not in (str, int):
                raise TypeError(f"save: the key {key!r} at {name or 'the top'!r} is a "
                                f"{type(key).__name__}; keys must be str or int")
            items.append([key, _encode(item, _child(name, key), arrays, depth + 1)])
        return {"dict": items}
    if isinstance(value, (list, tuple)):
        kind = "list" if isinstance(value, list) else "tuple"
        return {kind: [_encode(item, _child(name, i), arrays, depth + 1)
                       for i, item in enumerate(value)]}
    if type(value) in _PLAIN:
        return {"value": value}
    if isinstance(value, Tensor):
        return {"tensor": _store(value.data, name, arrays), "requires_grad": value.requires_grad}
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        if str(value.dtype) == "object":
            raise TypeError(f"save: {name!r} is an object array; only numeric, boolean and "
                            "string arrays can be saved")
        entry: dict[str, Any] = {"array": _store(value, name, arrays)}
        if type(value).__module__ == "numpy" and type(value).__name__ != "ndarray":
            entry["scalar"] = True  # a NumPy scalar such as numpy.float32(1.5)
        return entry
    raise TypeError(f"save: cannot save {name!r} of type {type(value).__name__}; expected "
                    "arrays, tensors, numbers, strings, None, and dicts, lists or tuples of them")


def _child(name: str, key: str | int) -> str:
    return f"{name}.{key}" if name else str(key)


def _store(array: Any, name: str, arrays: dict[str, Any]) -> str:
    key, n = name or "array", 1
    while key in arrays or key == INDEX:  # e.g. {"a.b": x, "a": {"b": y}}
        n += 1
        key = f"{name}#{n}"
    arrays[key] = backend.to_numpy(array)  # from a GPU too
    return key


def _write_npz(path: str, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` as an uncompressed ``.npz`` at ``path``, all at once or not at all."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, temporary = _new_temporary_file(folder, os.path.basename(path))
    try:
        with os.fdopen(fd, "wb") as f:
            with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
                for name, array in arrays.items():
                    with archive.open(name + ".npy", "w", force_zip64=True) as member:
                        np.lib.format.write_array(member, array, allow_pickle=False)
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


# ---------------------------------------------------------------------------------------------
# load


def load(path: str | os.PathLike) -> dict[str, Any]:
    """Read what :func:`save` wrote: the same nested dict, arrays as NumPy arrays.

    Raises
    ------
    FileNotFoundError
        If there is no file at ``path``.
    ValueError
        ``"not a minigrad checkpoint: '<path>': ..."`` if the file is not one, is damaged
        (truncated, altered, an array larger than the bytes that hold it), holds anything but
        uncompressed ``.npy`` arrays of numbers, booleans or strings, nests deeper than
        :data:`MAX_DEPTH`, or was written by a newer version of the format; the message says
        which.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"minigrad.load: no such file: {path!r}")
    try:
        with open(path, "rb") as f:
            stored = _read_npz(f, os.fstat(f.fileno()).st_size)
        if INDEX not in stored:
            names = ", ".join(sorted(stored)[:5]) or "none"
            raise _Damaged(f"it has no {INDEX!r} entry (its arrays: {names}); a plain "
                           "numpy.savez file is read with numpy.load")
        index = _read_index(stored.pop(INDEX))
        return _decode(index["tree"], stored, depth=0)
    except _Damaged as exc:
        raise ValueError(f"not a minigrad checkpoint: {path!r}: {exc}") from None


def _read_npz(f: IO[bytes], size: int) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` file ``f`` of ``size`` bytes, each checked before it is read."""
    head = f.read(6)
    if head == b"\x93NUMPY":
        raise _Damaged("it holds a single array (.npy), not an .npz archive")
    if not head.startswith(b"PK"):
        raise _Damaged(f"it is not an .npz (zip) archive; it starts with {head!r}")
    f.seek(0)
    try:
        with zipfile.ZipFile(f) as archive:
            members = archive.infolist()
            for info in members:
                if not info.filename.endswith(".npy"):
                    raise _Damaged(f"it holds {info.filename!r}, which is not an array "
                                   "(.npy); a checkpoint holds nothing else")
                if info.compress_type != zipfile.ZIP_STORED:
                    raise _Damaged(f"its member {info.filename!r} is compressed; a checkpoint "
                                   "stores its arrays uncompressed")
            claimed = sum(info.file_size for info in members)
            if claimed > size:
                raise _Damaged(f"it is damaged: its members claim {claimed} bytes, but the "
                               f"file has only {size}")
            arrays: dict[str, np.ndarray] = {}
            for info in members:
                name = info.filename[:-len(".npy")]
                if name in arrays:
                    raise _Damaged(f"it is damaged: it holds {info.filename!r} twice")
                with archive.open(info) as member:
                    arrays[name] = _read_array(member, info)
            return arrays
    except (OSError, EOFError, zipfile.BadZipFile, ValueError, RuntimeError) as exc:
        if isinstance(exc, _Damaged):
            raise
        raise _Damaged(f"it is damaged ({type(exc).__name__}: {exc})") from None


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
        raise _Damaged(f"its member {info.filename!r} is a .npy of version {version}; "
                       "expected 1.0 or 2.0")
    if dtype.hasobject:
        raise _Damaged(f"its member {info.filename!r} holds Python objects (pickles), which "
                       "are never loaded; a checkpoint holds numbers, booleans and strings")
    if any(d < 0 for d in shape):
        raise _Damaged(f"it is damaged: {info.filename!r} has the shape {shape}")
    nbytes = math.prod(shape) * dtype.itemsize  # exact: Python ints, no overflow
    available = info.file_size - member.tell()
    if nbytes != available:
        raise _Damaged(f"it is damaged: {info.filename!r} declares an array of shape {shape} "
                       f"and dtype {dtype} ({nbytes} bytes), but holds {available} bytes")
    data = bytearray(nbytes)  # the only copy: as large as the bytes the file holds
    view, done = memoryview(data), 0
    while done < nbytes:  # in pieces of 1 MiB, so that no second copy of the array is made
        piece = member.read(min(nbytes - done, _PIECE))
        if not piece:
            raise _Damaged(f"it is damaged: {info.filename!r} is shorter than its header says")
        view[done:done + len(piece)] = piece
        done += len(piece)
    if member.read(1):  # reading to the end also checks the CRC
        raise _Damaged(f"it is damaged: {info.filename!r} is longer than its header says")
    array = np.frombuffer(data, dtype=dtype)
    return array.reshape(shape, order="F" if fortran_order else "C")


def _read_index(entry: np.ndarray) -> dict[str, Any]:
    try:
        index = json.loads(str(entry[()])) if entry.shape == () else None
    except (ValueError, RecursionError) as exc:
        raise _Damaged(f"its index is damaged ({type(exc).__name__}: {exc})") from None
    if not isinstance(index, dict) or index.get("format") != FORMAT:
        found = index.get("format") if isinstance(index, dict) else index
        raise _Damaged(f"its index is damaged (format is {found!r}, expected {FORMAT!r})")
    if not isinstance(index.get("version"), int) or index["version"] > VERSION:
        raise _Damaged(f"it uses format version {index.get('version')!r}; this minigrad reads "
                       f"versions up to {VERSION}. Upgrade minigrad to read it.")
    return index


def _decode(entry: Any, stored: dict[str, np.ndarray], depth: int) -> Any:
    """Rebuild a value from its index entry (the inverse of :func:`_encode`)."""
    if not isinstance(entry, dict) or not entry:
        raise _Damaged(f"its index is damaged (an entry is {entry!r}, expected a dict)")
    kind = next(iter(entry))
    if kind in ("dict", "list", "tuple"):
        if depth >= MAX_DEPTH:
            raise _Damaged(f"its index nests more than {MAX_DEPTH} levels deep")
        items = entry[kind]
        if not isinstance(items, list):
            raise _Damaged(f"its index is damaged (a {kind} holds {items!r})")
        if kind != "dict":
            values = [_decode(item, stored, depth + 1) for item in items]
            return values if kind == "list" else tuple(values)
        result = {}
        for pair in items:
            if (not isinstance(pair, list) or len(pair) != 2
                    or type(pair[0]) not in (str, int)):
                raise _Damaged(f"its index is damaged (a dict item is {pair!r})")
            result[pair[0]] = _decode(pair[1], stored, depth + 1)
        return result
    if kind == "value" and type(entry["value"]) in _PLAIN:
        return entry["value"]
    if kind in ("tensor", "array"):
        name = entry[kind]
        if not isinstance(name, str) or name not in stored:
            raise _Damaged(f"it is incomplete: the entry {name!r} listed in its index is "
                           "missing")
        if kind == "tensor":
            return Tensor(stored[name], requires_grad=entry.get("requires_grad") is True)
        return stored[name][()] if entry.get("scalar") else stored[name]
    raise _Damaged(f"its index is damaged (unknown index entry {entry!r})")
