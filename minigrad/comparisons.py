"""Comparisons and tests of values: ``<``, ``<=``, ``>``, ``>=``, ``==``, ``!=``, ``isnan``,
``isinf``. Each gives a boolean tensor and no gradient (as PyTorch: a step has none).

The operators and methods are attached to :class:`~minigrad.tensor.Tensor` at the end of this
module (``Tensor.__hash__`` stays identity hashing, in the core, since ``==`` is elementwise).
"""
from __future__ import annotations

from typing import Any, Callable

from .backend import Array, check_same_device
from .broadcast import broadcast_shapes
from .tensor import Tensor, _attach, _raw, _tensor_arg

__all__ = ["isnan", "isinf"]


def _compare(a: Tensor, other: Any, name: str, fn: Callable[[Array, Array], Array]) -> Tensor:
    """A comparison, elementwise: a boolean tensor, no gradient; a shape clash is named."""
    b = _raw(other)
    try:
        return Tensor(fn(a.data, b))
    except (TypeError, ValueError):
        if hasattr(b, "shape") and hasattr(b, "dtype"):
            check_same_device(name, a.data, b)
            broadcast_shapes(a.shape, tuple(b.shape), op=name)
        raise


def isnan(x: Tensor) -> Tensor:
    """A boolean tensor, True where the value is NaN (no gradient)."""
    return Tensor(_tensor_arg(x, "isnan")._xp.isnan(x.data))


def isinf(x: Tensor) -> Tensor:
    """A boolean tensor, True where the value is +inf or -inf (no gradient)."""
    return Tensor(_tensor_arg(x, "isinf")._xp.isinf(x.data))


_attach(__lt__=lambda self, other: _compare(self, other, "lt", lambda x, y: x < y),
        __le__=lambda self, other: _compare(self, other, "le", lambda x, y: x <= y),
        __gt__=lambda self, other: _compare(self, other, "gt", lambda x, y: x > y),
        __ge__=lambda self, other: _compare(self, other, "ge", lambda x, y: x >= y),
        __eq__=lambda self, other: _compare(self, other, "eq", lambda x, y: x == y),
        __ne__=lambda self, other: _compare(self, other, "ne", lambda x, y: x != y),
        isnan=isnan, isinf=isinf)
