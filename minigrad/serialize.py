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

Both directions are careful with the file (:mod:`minigrad.npz` does the file itself):
:func:`save` writes a complete new file under a temporary name next to ``path`` and renames
it over ``path`` in one step, so a reader never sees half a checkpoint and a failed save
changes nothing; :func:`load` reads only uncompressed ``.npy`` arrays of numbers, booleans or
strings, nested at most :data:`MAX_DEPTH` levels deep, unpickles nothing, and never takes more
memory than the file's own size.
"""
from __future__ import annotations

import json
import os
from typing import Any

from . import backend, npz
from .tensor import Tensor

__all__ = ["save", "load", "MAX_DEPTH"]

FORMAT = "minigrad.save"
VERSION = 1
INDEX = "__minigrad__"  # the name of the entry that holds the JSON index
MAX_DEPTH = 32
"""How deeply dicts, lists and tuples may nest in a checkpoint (a model's and an optimizer's
state dicts together need about 5 levels)."""
_PLAIN = (bool, int, float, str, type(None))


class _Damaged(ValueError):
    """A problem in a checkpoint; :func:`load` adds the file's name to the message."""


# ---------------------------------------------------------------------------------------------
# save


def save(obj: dict[str, Any], path: str | os.PathLike[str]) -> None:
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
    ValueError
        For a key that the file cannot store: one with a NUL character, or one that is not
        valid UTF-8 (a lone surrogate); named, and nothing is written.

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
    npz.write(path, {INDEX: index, **arrays})


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
            if type(key) is str:
                _check_key(key, name)
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


def _check_key(key: str, name: str) -> None:
    """A key must be writable as an archive member's name: no NUL, valid UTF-8."""
    where = f"at {name!r}" if name else "at the top"
    if "\x00" in key:
        raise ValueError(f"save: the key {key!r} {where} holds a NUL character ('\\x00'), which "
                         "the file cannot store (an archive member's name ends at a NUL); "
                         "nothing was written")
    try:
        key.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"save: the key {key!r} {where} is not valid text (it holds "
                         f"{key[exc.start:exc.end]!r}, which UTF-8 cannot encode); nothing was "
                         "written") from None


def _child(name: str, key: str | int) -> str:
    return f"{name}.{key}" if name else str(key)


def _store(array: Any, name: str, arrays: dict[str, Any]) -> str:
    key, n = name or "array", 1
    while key in arrays or key == INDEX:  # e.g. {"a.b": x, "a": {"b": y}}
        n += 1
        key = f"{name}#{n}"
    arrays[key] = backend.to_numpy(array)  # from a GPU too
    return key


# ---------------------------------------------------------------------------------------------
# load


def load(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read what :func:`save` wrote: the same nested dict, arrays as NumPy arrays.

    Raises
    ------
    FileNotFoundError
        If there is no file at ``path``.
    IsADirectoryError
        If ``path`` is a folder.
    ValueError
        ``"not a minigrad checkpoint: '<path>': ..."`` if the file is not one (a FIFO or a
        device is refused before anything is read: loading never waits for a writer), is damaged
        (truncated, altered, an array larger than the bytes that hold it), holds anything but
        uncompressed ``.npy`` arrays of numbers, booleans or strings, nests deeper than
        :data:`MAX_DEPTH`, or was written by a newer version of the format; the message says
        which.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"minigrad.load: no such file: {path!r}")
    if os.path.isdir(path):
        raise IsADirectoryError(f"minigrad.load: {path!r} is a folder, not a checkpoint file")
    try:
        stored = npz.read(path)
        if INDEX not in stored:
            names = ", ".join(sorted(stored)[:5]) or "none"
            raise _Damaged(f"it has no {INDEX!r} entry (its arrays: {names}); a plain "
                           "numpy.savez file is read with numpy.load")
        index = _read_index(stored.pop(INDEX))
        return _decode(index["tree"], stored, depth=0)
    except (_Damaged, npz.DamagedFile) as exc:
        raise ValueError(f"not a minigrad checkpoint: {path!r}: {exc}") from None


def _read_index(entry: Any) -> dict[str, Any]:
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


def _decode(entry: Any, stored: dict[str, Any], depth: int) -> Any:
    """Rebuild a value from its index entry (the inverse of :func:`_encode`)."""
    if not isinstance(entry, dict) or not entry:
        raise _Damaged(f"its index is damaged (an entry is {entry!r}, expected a dict)")
    kind = next((k for k in ("dict", "list", "tuple", "value", "tensor", "array") if k in entry),
                None)
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
