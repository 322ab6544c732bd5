"""Which values a tensor may hold, and one dtype for two operands, by PyTorch's rule.

Where NumPy's and PyTorch's rules differ, minigrad takes PyTorch's (see
:class:`minigrad.tensor.Tensor`): a float32 tensor stays float32 with an integer array, a
NumPy scalar or a 0-d float64 tensor. :func:`_common` is that rule; the core's arithmetic
calls it for every pair of tensors of different dtypes. It reads a tensor's attributes only
(``data``, ``_xp``, ``ndim``, ``astype``), so this module imports only :mod:`minigrad.backend`.
"""
from __future__ import annotations

import functools
from typing import Any

from .backend import Array, asarray, is_floating, namespace

__all__: list[str] = []

_KIND = {"bool": 0, "integral": 1, "real floating": 2}


@functools.lru_cache(maxsize=None)
def _kind(xp: Any, dtype: Any) -> int:
    """0 for bool, 1 for integers, 2 for floats: the order of PyTorch's promotion categories."""
    for name, rank in _KIND.items():
        if xp.isdtype(dtype, name):
            return rank
    return 3


@functools.lru_cache(maxsize=None)
def _is_numeric(xp: Any, dtype: Any) -> bool:
    """Whether a tensor may hold this dtype (bool, integers, floats; not strings or objects)."""
    try:
        return bool(xp.isdtype(dtype, ("bool", "numeric")))
    except (TypeError, ValueError):
        return False


def _common(a: Any, b: Any) -> tuple[Any, Any]:
    """Give two tensors one dtype, by PyTorch's rule.

    * a float beats an integer or a bool, whatever their sizes: float32 with int64 stays
      float32 (NumPy would give float64);
    * within one kind, a tensor with axes beats a 0-d one: float32 (N,) with float64 () is
      float32;
    * otherwise the larger dtype wins (float32 with float64 is float64).

    A tensor converted on the way is converted by a differentiable ``astype``, so its gradient
    comes back in its own dtype.
    """
    da, db = a.data.dtype, b.data.dtype
    if da == db:
        return a, b
    xp = a._xp
    ka, kb = _kind(xp, da), _kind(xp, db)
    if ka != kb:
        target = da if ka > kb else db
    elif (a.ndim == 0) != (b.ndim == 0):
        target = db if a.ndim == 0 else da
    else:
        target = xp.result_type(da, db)
    return (a if da == target else a.astype(target)), (b if db == target else b.astype(target))


def _as_data(data: Any, dtype: Any, requires_grad: bool) -> tuple[Array, Any]:
    """What ``Tensor(data, requires_grad, dtype)`` holds: the array and its namespace.

    Numbers, nested lists of numbers and arrays (of any namespace) are taken; a ragged list,
    strings or objects, and an integer tensor that should require grad, are refused.
    """
    try:
        array = asarray(data, dtype=dtype)
    except ValueError as exc:
        if isinstance(data, (list, tuple)) and "inhomogeneous" in str(exc):
            raise ValueError(f"Tensor: the nested lists have different lengths (a ragged "
                             f"list, {data!r:.60}); each row must have as many values as "
                             "the others") from None
        raise
    xp = namespace(array)
    if not _is_numeric(xp, array.dtype):
        raise TypeError(f"Tensor: expected numbers (a number, a nested list of numbers or an "
                        f"array); got {type(data).__name__} {data!r:.60}, which gives dtype "
                        f"{array.dtype}")
    if requires_grad and not is_floating(xp, array.dtype):
        raise TypeError(f"Tensor: only floating-point tensors can require grad; got dtype "
                        f"{array.dtype}. Pass dtype='float64' or float data.")
    return array, xp
