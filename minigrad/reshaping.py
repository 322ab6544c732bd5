"""More shape operations: ``view``, ``flatten``, ``unsqueeze``, ``squeeze``, ``expand``, and
joining tensors with ``concatenate`` (``cat``) and ``stack``.

``reshape`` and ``transpose`` are the core's (:mod:`minigrad.tensor`); most of
these are written with ``reshape``, so their gradient is reshaped back. ``expand``, ``concatenate``
and ``stack`` are one :func:`~minigrad.tensor.op` each, whose VJP is a formula in the output
gradient ``g``. (Splitting, repeating, flipping, padding: :mod:`minigrad.shape_ops`.) The
methods are attached at the end of this module.
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Sequence

from .axes import AxisError, _axes, _axis_index, _permutation, _reduce_args
from .backend import Array
from .broadcast import unbroadcast
from .tensor import Tensor, _attach, _tensor_arg, op

__all__ = ["permute", "flatten", "unsqueeze", "squeeze", "concatenate", "cat", "stack"]


def _view(x: Tensor, *shape: Any) -> Tensor:
    """PyTorch's name for :meth:`reshape`. (Here it may copy; nothing shares memory.)"""
    return x.reshape(*shape)


def permute(x: Tensor, *dims: Any) -> Tensor:
    """Reorder the axes: axis ``i`` of the result is axis ``dims[i]`` of this tensor.

    ``dims`` must name every axis once (as ``torch.permute``). The gradient is permuted
    back by the inverse permutation (it is :meth:`~minigrad.tensor.Tensor.transpose` with
    every axis given).
    """
    x = _tensor_arg(x, "permute")
    return x.transpose(_permutation(x.ndim, dims, x.shape))


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge axes ``start_dim`` to ``end_dim`` into one (all of them by default).

    Axes out of range, or ``start_dim`` after ``end_dim``, are an error; a 0-d tensor
    becomes shape ``(1,)``, as in PyTorch.
    """
    shape = _tensor_arg(x, "flatten").shape
    start = _axis_index(x.ndim, start_dim, "flatten")
    end = _axis_index(x.ndim, end_dim, "flatten")
    if start > end:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} "
                         f"for shape {shape}")
    if not shape:
        return x.reshape((1,))
    return x.reshape(shape[:start] + (math.prod(shape[start:end + 1]),) + shape[end + 1:])


def unsqueeze(x: Tensor, dim: int) -> Tensor:
    """Insert an axis of size 1 at position ``dim`` (from ``-ndim - 1`` to ``ndim``)."""
    n = _tensor_arg(x, "unsqueeze").ndim
    if not isinstance(dim, int) or isinstance(dim, bool) or not -n - 1 <= dim <= n:
        raise AxisError(f"unsqueeze: dim must be an int from {-n - 1} to {n} for shape "
                        f"{x.shape}; got {dim!r}")
    d = dim % (n + 1)
    return x.reshape(x.shape[:d] + (1,) + x.shape[d:])


def squeeze(x: Tensor, dim: Any = None) -> Tensor:
    """Remove axes of size 1: all of them, or those of ``dim`` (an int or a tuple).

    As PyTorch (and unlike NumPy), naming an axis whose size is not 1 leaves it alone.
    """
    axes = _axes(_tensor_arg(x, "squeeze").ndim, tuple(dim) if isinstance(dim, list) else dim,
                 "squeeze")
    return x.reshape(tuple(n for i, n in enumerate(x.shape) if not (i in axes and n == 1)))


def _expand(x: Tensor, *sizes: int) -> Tensor:
    """Broadcast to ``sizes`` without copying (``-1`` keeps an axis); gradient: summed back.

    New axes go in front; an existing axis can only grow from size 1, as PyTorch.
    """
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    for k, n in enumerate(sizes):
        if not isinstance(n, numbers.Integral) or isinstance(n, bool):
            raise TypeError(f"expand: sizes must be ints; got {n!r} at index {k} of {sizes}")
    shape, lead = x.shape, len(sizes) - x.ndim
    if lead < 0:
        raise ValueError(f"expand: {tuple(sizes)} has fewer axes than the tensor's shape "
                         f"{shape}")
    target = tuple(shape[i - lead] if i >= lead and n == -1 else n for i, n in enumerate(sizes))
    for i, n in enumerate(shape):
        if n != 1 and n != target[lead + i] or target[lead + i] < 0 or \
                any(m < 0 for m in target[:lead]):
            raise ValueError(f"expand: cannot expand shape {shape} to {tuple(sizes)}: axis "
                             f"{lead + i} has size {n}, which only grows from 1")
    return op(x._xp.broadcast_to(x.data, target), (x,), lambda g: unbroadcast(g, shape),
              name="expand")


# --- joining ------------------------------------------------------------------------------------

def concatenate(tensors: Sequence[Tensor], axis: int | None = None, *,
                dim: int | None = None) -> Tensor:
    """Join tensors along an existing axis; each gets back its own slice of the gradient.

    ``cat`` is the same function under PyTorch's name (``dim=`` is ``axis=``). Tensors of
    different dtypes are first converted to the common one.
    """
    axis, _ = _reduce_args(axis, dim, False, None)
    axis = 0 if axis is None else axis
    tensors = _same_dtype(_sequence_of_tensors(tensors, "concatenate"), "concatenate")
    xp, first = tensors[0]._xp, tensors[0]
    if not first.ndim:
        raise ValueError("concatenate: 0-d tensors have no axis to join along; use stack, or "
                         "reshape them to (1,) first")
    ax = _axis_index(first.ndim, axis, "concatenate")
    for t in tensors[1:]:
        if t.ndim != first.ndim or t.shape[:ax] + t.shape[ax + 1:] != \
                first.shape[:ax] + first.shape[ax + 1:]:
            raise ValueError(f"concatenate: shapes {first.shape} and {t.shape} differ "
                             f"outside axis {ax}")
    y = xp.concat([t.data for t in tensors], axis=ax)
    bounds = [0]
    for t in tensors:
        bounds.append(bounds[-1] + t.shape[ax])
    before = (slice(None),) * ax

    def vjp(g: Array) -> tuple[Any, ...]:
        return tuple(g[before + (slice(lo, hi), ...)] for lo, hi in zip(bounds, bounds[1:]))

    return op(y, tensors, vjp, name="concatenate")


cat = concatenate


def stack(tensors: Sequence[Tensor], axis: int | None = None, *,
          dim: int | None = None) -> Tensor:
    """Join same-shaped tensors along a new axis; each gets back its own slice of the gradient."""
    axis, _ = _reduce_args(axis, dim, False, None)
    axis = 0 if axis is None else axis
    tensors = _same_dtype(_sequence_of_tensors(tensors, "stack"), "stack")
    xp = tensors[0]._xp
    for k, t in enumerate(tensors[1:], start=1):
        if t.shape != tensors[0].shape:
            raise ValueError(f"stack: expected tensors of one shape; got {tensors[0].shape} "
                             f"(tensor 0) and {t.shape} (tensor {k})")
    axis = _axis_index(tensors[0].ndim + 1, axis, "stack")
    y = xp.stack([t.data for t in tensors], axis=axis)
    before = (slice(None),) * (axis % y.ndim)
    return op(y, tensors, lambda g: tuple(g[before + (i, ...)] for i in range(len(tensors))),
              name="stack")


def _sequence_of_tensors(tensors: Any, name: str) -> list[Tensor]:
    """The tensors of ``cat``/``stack``'s first argument, a list or tuple (arrays are wrapped).

    A single tensor or array is refused, as in PyTorch: iterating over it would join its rows
    and give a wrong answer without a word."""
    if isinstance(tensors, Tensor) or hasattr(tensors, "shape") or not hasattr(tensors, "__iter__"):
        raise TypeError(f"{name}: expected a list or tuple of tensors; got a "
                        f"{type(tensors).__name__}. Pass [a, b, ...]")
    return [t if isinstance(t, Tensor) else Tensor(t) for t in tensors]


def _same_dtype(tensors: list[Tensor], name: str) -> list[Tensor]:
    """Convert tensors to their common dtype (for concatenate and stack)."""
    if not tensors:
        raise ValueError(f"{name}: expected at least one tensor; got none")
    first = tensors[0]
    if all(t.dtype == first.dtype for t in tensors):
        return tensors
    target = first._xp.result_type(*[t.data for t in tensors])
    return [t if t.dtype == target else t.astype(target) for t in tensors]


_view.__name__ = _view.__qualname__ = "view"
_expand.__name__ = _expand.__qualname__ = "expand"
_attach(permute=permute, view=_view, flatten=flatten, unsqueeze=unsqueeze, squeeze=squeeze,
        expand=_expand)
