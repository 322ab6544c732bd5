"""Selecting and filling values: ``masked_fill``, ``tril``, ``triu``, ``gather``.

(Indexing, ``x[i]``, is the core's, :mod:`minigrad.tensor`; ``where`` is in
:mod:`minigrad.elementwise`.) Each is one :func:`~minigrad.tensor.op` whose VJP sends the
output gradient ``g`` back to the places the values came from, and 0 to those overwritten.
The methods are attached at the end of this module.
"""
from __future__ import annotations

import numbers
from typing import Any

from .axes import _axis_index
from .backend import Array, asarray
from .broadcast import broadcast_shapes
from .elementwise import where
from .tensor import Tensor, _attach, _host_values, _raw, _scalar, _tensor_arg, op

__all__ = ["masked_fill", "tril", "triu", "gather"]


def masked_fill(x: Tensor, mask: Any, value: float) -> Tensor:
    """``value`` where ``mask`` is True, else the tensor's value. Gradient: 0 where filled.

    ``mask`` is a boolean tensor or array that broadcasts to this tensor's shape (a list
    is refused, as in PyTorch). ``value`` is a number, or a 0-d tensor (which gets the
    gradient of the filled places, as in PyTorch); the result keeps this tensor's dtype.
    """
    t = _tensor_arg(x, "masked_fill")
    xp, d = t._xp, t.data
    m = _raw(mask)
    if not hasattr(m, "dtype") or not hasattr(m, "shape"):
        raise TypeError(f"masked_fill: mask must be a boolean tensor or array; got a "
                        f"{type(m).__name__}. Wrap it: minigrad.tensor(mask)")
    if not xp.isdtype(m.dtype, "bool"):
        raise TypeError(f"masked_fill: mask must be boolean; got dtype {m.dtype}")
    if broadcast_shapes(tuple(m.shape), t.shape, op="masked_fill") != t.shape:
        raise ValueError(f"masked_fill: mask of shape {tuple(m.shape)} does not broadcast "
                         f"to the tensor's shape {t.shape}")
    if isinstance(value, Tensor):
        if value.ndim:
            raise ValueError(f"masked_fill: a tensor value must be 0-d (one number); got "
                             f"shape {value.shape}")
        return where(m, value if value.dtype == d.dtype else value.astype(d.dtype), t)
    c = _scalar(value)
    if c is None:
        raise TypeError(f"masked_fill: value must be a number; got {type(value).__name__}")
    return op(xp.where(m, xp.asarray(c, dtype=d.dtype), d), (t,),
              lambda g: xp.where(m, xp.zeros_like(g), g), name="masked_fill")


def tril(x: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two axes (above ``diagonal`` set to 0)."""
    xp = _need_matrix(_tensor_arg(x, "tril"), "tril", diagonal)
    return op(xp.tril(x.data, k=diagonal), (x,), lambda g: xp.tril(g, k=diagonal), name="tril")


def triu(x: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two axes (below ``diagonal`` set to 0)."""
    xp = _need_matrix(_tensor_arg(x, "triu"), "triu", diagonal)
    return op(xp.triu(x.data, k=diagonal), (x,), lambda g: xp.triu(g, k=diagonal), name="triu")


def _need_matrix(t: Tensor, name: str, diagonal: Any = 0) -> Any:
    """The tensor's namespace, after checking ``diagonal`` is an int and ``t`` a matrix."""
    if not isinstance(diagonal, numbers.Integral) or isinstance(diagonal, bool):
        raise TypeError(f"{name}: diagonal must be an int; got {diagonal!r}")
    if t.ndim < 2:
        raise ValueError(f"{name}: expected a tensor with at least 2 axes (a matrix or a stack "
                         f"of them); got shape {t.shape}")
    return t._xp


def gather(x: Tensor, dim: int, index: Any) -> Tensor:
    """Pick values along ``dim`` at ``index``, as ``torch.gather``.

    For ``dim=1``: ``out[i, j] = x[i, index[i, j]]``. ``index`` is an integer tensor with
    as many axes as ``x``; along the other axes it may be shorter than ``x``. Gradient:
    each picked value's gradient is added back where it was picked (repeats add up).
    """
    t = _tensor_arg(x, "gather")
    xp, d = t._xp, t.data
    idx = _raw(index)
    if isinstance(idx, list):
        idx = asarray(idx, like=d)
    if not xp.isdtype(idx.dtype, "integral"):
        raise TypeError(f"gather: index must hold integers; got dtype {idx.dtype}")
    if idx.ndim != t.ndim:
        raise ValueError(f"gather: index has {idx.ndim} axes but the tensor has "
                         f"{t.ndim} (shape {t.shape}); they must have as many")
    a = _axis_index(t.ndim, dim, "gather")
    n = t.shape[a]
    for i, (k, m) in enumerate(zip(idx.shape, t.shape)):
        if i != a and k > m:
            raise ValueError(f"gather: index of shape {tuple(idx.shape)} is larger than "
                             f"the tensor's shape {t.shape} along axis {i}")
    if _host_values(idx) and idx.size and bool(xp.any((idx < 0) | (idx >= n))):
        raise IndexError(f"gather: index values must be in 0..{n - 1} along axis {a} "
                         f"(size {n}); got values from {int(xp.min(idx))} to "
                         f"{int(xp.max(idx))}")
    part = tuple(slice(None) if i == a else slice(0, k) for i, k in enumerate(idx.shape))
    shape, dtype = t.shape, t.dtype
    return op(xp.take_along_axis(d[part], idx, axis=a), (t,),
              lambda g: _scatter_along(xp, g, idx, a, part, shape, dtype), name="gather")


def _scatter_along(xp: Any, g: Array, idx: Array, d: int, part: tuple[Any, ...],
                   shape: tuple[int, ...], dtype: Any) -> Array:
    """The backward of gather: add ``g`` back at ``idx`` along axis ``d`` (repeats add up).

    Along axis ``d`` each index is one-hot encoded against the ``n`` positions, and the
    gradient is summed over the picks: (..., k, 1) * (..., k, n) summed over k.
    """
    n = shape[d]
    g_last = xp.moveaxis(g, d, -1)[..., None]  # (..., k, 1)
    hot = xp.moveaxis(idx, d, -1)[..., None] == xp.arange(n)  # (..., k, n)
    picked = xp.moveaxis(xp.sum(xp.where(hot, g_last, 0.0), axis=-2), -1, d)
    out = xp.zeros(shape, dtype=dtype)
    out[part] = picked
    return out


_attach(masked_fill=masked_fill, tril=tril, triu=triu, gather=gather)
