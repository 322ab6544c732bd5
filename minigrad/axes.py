"""Reading the axis, shape and index arguments of tensor operations, as NumPy and PyTorch
spell them.

``axis=``/``keepdims=`` (NumPy) and ``dim=``/``keepdim=`` (PyTorch) are the same arguments: an
int, a tuple or a list of ints, or None for all axes. Every operation reads them through the
functions here, so each one accepts both spellings and says the same thing about a bad one.
Functions of ints and tuples (and, for an index, of arrays): no tensors. The core,
:mod:`minigrad.tensor`, and the family modules import it; it imports only
:mod:`minigrad.backend`.
"""
from __future__ import annotations

import numbers
from typing import Any

from .backend import asarray, namespace

__all__ = ["AxisError"]


class AxisError(ValueError, IndexError):
    """An axis out of range. Both a ValueError (as NumPy) and an IndexError (as PyTorch)."""


def _reduce_args(axis: Any, dim: Any, keepdims: bool, keepdim: bool | None) -> tuple[Any, bool]:
    """Merge NumPy's ``axis``/``keepdims`` with PyTorch's ``dim``/``keepdim`` (not both)."""
    if dim is not None:
        if axis is not None:
            raise TypeError(f"give axis= or dim= (the same thing), not both; got axis={axis!r} "
                            f"and dim={dim!r}")
        axis = dim
    if keepdim is not None:
        keepdims = keepdim
    if isinstance(axis, list):
        axis = tuple(axis)
    return axis, bool(keepdims)


def _axis_index(ndim: int, axis: Any, name: str) -> int:
    """One axis as an index from 0 to ndim - 1 (a 0-d tensor accepts 0 and -1, as PyTorch)."""
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TypeError(f"{name}: an axis must be an int; got {axis!r}")
    top = max(ndim, 1)
    if not -top <= axis < top:
        raise AxisError(f"{name}: axis {axis} is out of range for a tensor with {ndim} axes "
                        f"(expected {-top} to {top - 1})")
    return axis % top if ndim else 0


def _axes(ndim: int, axis: Any, name: str = "reduction") -> tuple[int, ...]:
    """The axes named by ``axis`` (an int, a tuple/list of ints, or None for all), each once."""
    if axis is None:
        return tuple(range(ndim))
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    axes = tuple(_axis_index(ndim, a, name) for a in items)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: axis {axis!r} names an axis twice")
    return axes if ndim else ()


def _kept_shape(shape: tuple[int, ...], axis: Any) -> tuple[int, ...]:
    """The shape of a reduction over ``axis`` with ``keepdims=True``."""
    axes = _axes(len(shape), axis)
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of a reduction over ``axes`` without keepdims."""
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def _check_shape(shape: tuple[Any, ...], name: str) -> tuple[int, ...]:
    """A target shape: ints (NumPy's too) of at least 0, and ``-1`` (inferred) at most once."""
    sizes = []
    for k, n in enumerate(shape):
        if not isinstance(n, numbers.Integral) or isinstance(n, bool):
            raise TypeError(f"{name}: sizes must be ints; got {n!r} at index {k} of {shape}")
        if n < -1:
            raise ValueError(f"{name}: invalid size {n} at index {k} of {shape}: sizes must be "
                             ">= 0, or -1 (once) to infer one")
        sizes.append(int(n))
    if sizes.count(-1) > 1:
        raise ValueError(f"{name}: only one size can be -1 (inferred); got {shape}")
    return tuple(sizes)


def _target_shape(shape: tuple[Any, ...]) -> tuple[Any, ...]:
    """``reshape``'s shape: ``reshape(2, 3)`` or ``reshape((2, 3))``. NumPy takes -2 as -1: a
    size below -1, or two -1s, is named here (as PyTorch); the rest NumPy checks."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    try:
        suspect = min(shape, default=0) < -1 or shape.count(-1) > 1
    except TypeError:
        suspect = True
    return _check_shape(shape, "reshape") if suspect else shape


def _transpose_order(n: int, axes: tuple[Any, ...], shape: tuple[int, ...]) -> Any:
    """The permutation ``transpose(*axes)`` of a tensor with ``n`` axes means.

    None: all axes reversed. Two separate ints: those two swapped (PyTorch). One tuple, or as
    many ints as there are axes: that permutation (NumPy)."""
    as_tuple = False
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes, as_tuple = tuple(axes[0]), True
    if not axes:
        return tuple(range(n))[::-1]
    if len(axes) == 2 and not as_tuple:  # PyTorch: swap two axes
        a, b = (_axis_index(n, d, "transpose") for d in axes)
        swapped = list(range(n))
        swapped[a], swapped[b] = b, a
        return swapped
    if len(axes) != n:
        raise ValueError(f"transpose: expected two axes to swap or a permutation of all "
                         f"{n} axes of shape {shape}; got {axes}")
    order = tuple(_axis_index(n, d, "transpose") for d in axes)
    if sorted(order) != list(range(n)):
        raise ValueError(f"transpose: {axes} is not a permutation of the {n} axes of shape "
                         f"{shape}")
    return order


def _permutation(n: int, dims: tuple[Any, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """``permute``'s argument (ints, or one tuple or list): every axis once, as indices."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    order = tuple(_axis_index(n, d, "permute") for d in dims)
    if sorted(order) != list(range(n)):
        raise ValueError(f"permute: {tuple(dims)} is not a permutation of the {n} axes of "
                         f"shape {shape}")
    return order


def _index_for(items: tuple[Any, ...], data: Any) -> tuple[Any, ...]:
    """An index of ``data`` (tensors already unwrapped): lists become integer arrays of
    ``data``'s namespace, and an index of only ints, slices and None ends with ``...``."""
    out = []
    for i in items:
        if isinstance(i, list):
            i = asarray(i, like=data)
            if i.size == 0:  # x[[]]: no positions, an integer index (as PyTorch), not float64
                i = namespace(i).astype(i, namespace(i).int64)
        out.append(i)
    if all(i is None or isinstance(i, (int, slice)) for i in out):
        out.append(Ellipsis)  # the same in NumPy; the array API asks for it explicitly
    return tuple(out)
