"""Plain data between the grader and a sandbox: JSON, with NumPy arrays as ``.npy`` bytes.

Everything that crosses the sandbox's edge goes through :func:`dumps` and :func:`loads`:
numbers, strings, booleans, None, lists, dicts with string keys, and NumPy arrays of numbers
(stored with ``numpy.save(..., allow_pickle=False)``, base64 in JSON). Nothing is ever
unpickled, so what a submission sends back cannot run code in the grader; :func:`loads`
refuses anything else, too deep or too large, with :class:`ProtocolError`.

This module imports only the standard library and NumPy: the driver in the sandbox uses it too.
"""
from __future__ import annotations

import base64
import io
import json
from typing import Any

import numpy as np

__all__ = ["dumps", "loads", "ProtocolError", "MAX_BYTES"]

#: The largest message the grader reads from a sandbox (one line of JSON).
MAX_BYTES = 8 * 1024 * 1024
_MAX_DEPTH = 32
_ARRAY_KEY = "__npy__"


class ProtocolError(ValueError):
    """Data from a sandbox is malformed, of a type not allowed, too deep or too large."""


def _encode(x: Any, depth: int = 0) -> Any:
    if depth > _MAX_DEPTH:
        raise ProtocolError(f"data nested deeper than {_MAX_DEPTH} levels")
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x) if isinstance(x, float) else int(x)
    if isinstance(x, (np.ndarray, np.generic)):
        array = np.asarray(x)
        if array.dtype.kind not in "biufc":
            raise ProtocolError(f"only arrays of numbers can be sent; got dtype {array.dtype}")
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        return {_ARRAY_KEY: base64.b64encode(buffer.getvalue()).decode("ascii")}
    if isinstance(x, (list, tuple)):
        return [_encode(v, depth + 1) for v in x]
    if isinstance(x, dict):
        if not all(isinstance(k, str) for k in x):
            raise ProtocolError("dict keys must be strings")
        if _ARRAY_KEY in x:
            raise ProtocolError(f"the key {_ARRAY_KEY!r} is reserved")
        return {k: _encode(v, depth + 1) for k, v in x.items()}
    raise ProtocolError(f"cannot send a {type(x).__module__}.{type(x).__qualname__}: only "
                        "numbers, strings, None, lists, dicts and NumPy arrays of numbers")


def _decode(x: Any, depth: int = 0) -> Any:
    if depth > _MAX_DEPTH:
        raise ProtocolError(f"data nested deeper than {_MAX_DEPTH} levels")
    if isinstance(x, list):
        return [_decode(v, depth + 1) for v in x]
    if isinstance(x, dict):
        if _ARRAY_KEY in x:
            if len(x) != 1 or not isinstance(x[_ARRAY_KEY], str):
                raise ProtocolError("a malformed array")
            try:
                raw = base64.b64decode(x[_ARRAY_KEY], validate=True)
                array = np.load(io.BytesIO(raw), allow_pickle=False)
            except Exception as exc:  # noqa: BLE001 - any malformed array is the sender's fault
                raise ProtocolError(f"a malformed array: {type(exc).__name__}: {exc}") from None
            if array.dtype.kind not in "biufc":
                raise ProtocolError(f"an array of dtype {array.dtype} (numbers only)")
            return array
        return {k: _decode(v, depth + 1) for k, v in x.items()}
    return x


def dumps(x: Any) -> str:
    """One line of JSON for ``x`` (arrays as base64 ``.npy``)."""
    return json.dumps(_encode(x), allow_nan=True, separators=(",", ":"))


def loads(text: str | bytes) -> Any:
    """The value of one line written by :func:`dumps`.

    Raises
    ------
    ProtocolError
        When the text is not such a line, is longer than :data:`MAX_BYTES`, or holds anything
        but plain data.
    """
    if len(text) > MAX_BYTES:
        raise ProtocolError(f"{len(text)} bytes, more than the {MAX_BYTES} allowed")
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"not JSON: {exc}") from None
    try:
        return _decode(raw)
    except RecursionError:
        raise ProtocolError("data nested too deeply") from None
