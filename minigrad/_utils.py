"""Small helpers that several parts of minigrad need, each written once.

What lives here: checks of arguments that the engine (``conv``), the layers (``nn``) and the
exporters (``export``) all take. It imports nothing from minigrad, so any module may import it.
"""
from __future__ import annotations

from typing import Any

__all__ = ["pair"]


def pair(value: Any, where: str, name: str, low: int = 0) -> tuple[int, int]:
    """An int-or-pair argument as a pair: ``3 -> (3, 3)``; ``(2, 3)`` or ``[2, 3]`` -> ``(2, 3)``.

    Parameters
    ----------
    value : int or pair of ints
        What the caller passed, e.g. a ``kernel_size``, ``stride`` or ``padding``.
    where, name : str
        The function or layer and the argument, for the error message.
    low : int
        The smallest value allowed (1 for a kernel size or a stride, 0 for padding).

    Raises
    ------
    TypeError
        If ``value`` is not an int or a pair of ints (booleans are not ints here).
    ValueError
        If either number is below ``low``.

    >>> pair(5, "Conv2d", "kernel_size", low=1)
    (5, 5)
    >>> pair([0, 0], "Conv2d", "padding")
    (0, 0)
    """
    both = (value, value) if isinstance(value, int) else (
        tuple(value) if isinstance(value, (tuple, list)) else ())
    if len(both) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in both):
        raise TypeError(f"{where}: {name} must be an int or a pair of ints; got {value!r}")
    if min(both) < low:
        raise ValueError(f"{where}: {name} must be >= {low}; got {value!r}")
    return both[0], both[1]
