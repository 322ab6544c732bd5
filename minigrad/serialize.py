"""Saving and loading state dicts as ``.npz`` files.

>>> import minigrad as mg, minigrad.nn as nn
>>> model = nn.Linear(2, 3, seed=0)
>>> mg.save(model.state_dict(), "model.npz")                 # doctest: +SKIP
>>> model.load_state_dict(mg.load("model.npz"))               # doctest: +SKIP

The file is a plain NumPy ``.npz`` archive: each array is stored under its state-dict name
(``np.load("model.npz")["weight"]`` works), and one more entry, ``__minigrad__``, holds a JSON
index of the structure: nested dicts (with their str or int keys), lists, tuples, Python
numbers, strings, booleans and None, and which entries were arrays or tensors. :func:`load`
rebuilds exactly what was saved: the same keys, values and dtypes. Nothing is pickled, so
loading a file never runs code from it.
"""
from __future__ import annotations

import json
import os
from typing import Any

from . import backend
from .tensor import Tensor

__all__ = ["save", "load"]

FORMAT = "minigrad.save"
VERSION = 1
INDEX = "__minigrad__"  # the name of the entry that holds the JSON index
_PLAIN = (bool, int, float, str, type(None))


def save(obj: dict[str, Any], path: str | os.PathLike) -> None:
    """Write a state dict (or a dict of them) to ``path`` as an ``.npz`` file.

    Parameters
    ----------
    obj : dict
        E.g. ``model.state_dict()``, ``optimizer.state_dict()``, or
        ``{"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 10}``.
        Values may be arrays (NumPy, CuPy, ...), tensors, numbers, strings, None, and
        dicts, lists and tuples of these.
    path : str or path
        Where to write; the name is used as given (no ``.npz`` is appended).
    """
    if not isinstance(obj, dict):
        hint = (f" Save its state dict instead: save(x.state_dict(), path)."
                if hasattr(obj, "state_dict") else "")
        raise TypeError(f"save: expected a dict (a state dict); got {type(obj).__name__}.{hint}")
    arrays: dict[str, Any] = {}
    tree = _encode(obj, "", arrays)
    index = json.dumps({"format": FORMAT, "version": VERSION, "tree": tree})
    backend.save_npz(path, {INDEX: index, **arrays})


def load(path: str | os.PathLike) -> dict[str, Any]:
    """Read what :func:`save` wrote: the same nested dict, arrays as NumPy arrays.

    Raises
    ------
    FileNotFoundError
        If there is no file at ``path``.
    ValueError
        ``"not a minigrad checkpoint: ..."`` if the file is not one, is damaged, or was
        written by a newer version of the format; the message says which.
    """
    path = os.fspath(path)
    try:
        stored = backend.load_npz(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"minigrad.load: no such file: {path!r}") from None
    except ValueError as exc:
        raise ValueError(f"not a minigrad checkpoint: {path!r}: {exc}") from None
    if INDEX not in stored:
        names = ", ".join(sorted(stored)[:5]) or "none"
        raise ValueError(f"not a minigrad checkpoint: {path!r} has no {INDEX!r} entry (its "
                         f"arrays: {names}); a plain numpy.savez file is read with numpy.load")
    try:
        index = json.loads(stored.pop(INDEX).item())
        if index.get("format") != FORMAT:
            raise ValueError(f"format is {index.get('format')!r}, expected {FORMAT!r}")
    except (ValueError, TypeError, AttributeError) as exc:
        raise ValueError(f"not a minigrad checkpoint: {path!r}: its index is damaged "
                         f"({exc})") from None
    if not isinstance(index.get("version"), int) or index["version"] > VERSION:
        raise ValueError(f"not a minigrad checkpoint: {path!r} uses format version "
                         f"{index.get('version')!r}; this minigrad reads versions up to "
                         f"{VERSION}. Upgrade minigrad to read it.")
    try:
        return _decode(index["tree"], stored)
    except KeyError as exc:
        raise ValueError(f"not a minigrad checkpoint: {path!r} is incomplete: the entry "
                         f"{exc.args[0]!r} listed in its index is missing") from None
    except (TypeError, ValueError, IndexError) as exc:
        raise ValueError(f"not a minigrad checkpoint: {path!r}: its index is damaged "
                         f"({exc})") from None


def _encode(value: Any, name: str, arrays: dict[str, Any]) -> Any:
    """The JSON index entry of ``value``; arrays are put in ``arrays`` under a unique name."""
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            if type(key) not in (str, int):
                raise TypeError(f"save: the key {key!r} at {name or 'the top'!r} is a "
                                f"{type(key).__name__}; keys must be str or int")
            items.append([key, _encode(item, f"{name}.{key}" if name else str(key), arrays)])
        return {"dict": items}
    if isinstance(value, (list, tuple)):
        kind = "list" if isinstance(value, list) else "tuple"
        return {kind: [_encode(item, f"{name}.{i}" if name else str(i), arrays)
                       for i, item in enumerate(value)]}
    if type(value) in _PLAIN:
        return {"value": value}
    if isinstance(value, Tensor):
        return {"tensor": _store(value.data, name, arrays), "requires_grad": value.requires_grad}
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        if str(value.dtype) == "object":
            raise TypeError(f"save: {name!r} is an object array; only numeric, boolean and "
                            "string arrays can be saved")
        entry = {"array": _store(value, name, arrays)}
        if type(value).__module__ == "numpy" and type(value).__name__ != "ndarray":
            entry["scalar"] = True  # a NumPy scalar such as numpy.float32(1.5)
        return entry
    raise TypeError(f"save: cannot save {name!r} of type {type(value).__name__}; expected "
                    "arrays, tensors, numbers, strings, None, and dicts, lists or tuples of them")


def _store(array: Any, name: str, arrays: dict[str, Any]) -> str:
    key, n = name or "array", 1
    while key in arrays or key == INDEX:  # e.g. {"a.b": x, "a": {"b": y}}
        n += 1
        key = f"{name}#{n}"
    arrays[key] = array
    return key


def _decode(entry: dict[str, Any], stored: dict[str, Any]) -> Any:
    if "dict" in entry:
        return {key: _decode(item, stored) for key, item in entry["dict"]}
    if "list" in entry:
        return [_decode(item, stored) for item in entry["list"]]
    if "tuple" in entry:
        return tuple(_decode(item, stored) for item in entry["tuple"])
    if "value" in entry:
        return entry["value"]
    if "tensor" in entry:
        return Tensor(stored[entry["tensor"]], requires_grad=entry["requires_grad"])
    if "array" in entry:
        array = stored[entry["array"]]
        return array[()] if entry.get("scalar") else array
    raise ValueError(f"unknown index entry {entry!r}")
