"""More reductions: ``var``, ``std``, ``logsumexp``, ``prod``, ``cumsum``, ``max``, ``min``,
``argmax``, ``argmin``, and ``mean`` (a sum divided by a count; ``sum`` is the core's,
:mod:`minigrad.tensor`).

Written as the core's: the forward on arrays, one :func:`~minigrad.tensor.op` whose VJP is a
formula in the output gradient ``g`` (reshaped to the kept axes) and the saved arrays. ``axis``
and ``dim``, ``keepdims`` and ``keepdim`` are the same arguments (:mod:`minigrad.axes`). Each
function takes the tensor first and is also its method, attached at the end of this module.
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple

from .axes import _axes, _axis_index, _kept_shape, _reduce_args, _reduced_shape
from .backend import Array
from .tensor import Tensor, _attach, _scalar, _tensor_arg, op

__all__ = ["mean", "var", "std", "logsumexp", "prod", "cumsum", "argmax", "argmin", "MaxMin"]


class MaxMin(NamedTuple):
    """What ``max(dim=...)`` and ``min(dim=...)`` return, as PyTorch: values and indices."""

    values: Tensor
    indices: Tensor


def mean(x: Tensor, axis: Any = None, keepdims: bool = False, *, dim: Any = None,
         keepdim: bool | None = None) -> Tensor:
    """Mean over ``axis``: a sum divided by the number of values averaged (NaN if none)."""
    axis, keepdims = _reduce_args(axis, dim, keepdims, keepdim)
    count = math.prod(x.shape[i] for i in _axes(x.ndim, axis))
    total = x.sum(axis=axis, keepdims=keepdims)
    return total / count if count else total * float("nan")


def _row_sums(xp: Any, a: Array, k: int = 1, mean: bool = False) -> Array:
    """The sums (``mean``: the means) of ``a`` over its last ``k`` axes, kept as axes of size 1,
    as one matrix product: ``a`` made 2-D, (M, n), times a column of ones (of ``1 / n`` for
    means). On NumPy one BLAS call is several times faster than a reduction over a few dozen
    values (about five times over rows of 64): layer norm and attention sum this way. Empty
    rows take the reduction (a mean of none is NaN, as ``mean``'s)."""
    lead, n = a.shape[:a.ndim - k], math.prod(a.shape[a.ndim - k:])
    if n == 0:
        reduce = xp.mean if mean else xp.sum
        return reduce(a, axis=tuple(range(a.ndim - k, a.ndim)), keepdims=True)
    column = xp.full((n, 1), 1 / n if mean else 1.0, dtype=a.dtype)
    return xp.reshape(xp.reshape(a, (math.prod(lead), n)) @ column, lead + (1,) * k)


def _column_sums(xp: Any, a: Array, k: int) -> Array:
    """The sums of ``a`` over all but its last ``k`` axes, of the shape of those ``k`` axes, as
    one matrix product: a row of ones times ``a`` made 2-D, (M, n) (see :func:`_row_sums`)."""
    shape = a.shape[a.ndim - k:]
    m, n = math.prod(a.shape[:a.ndim - k]), math.prod(shape)
    if n == 0:
        return xp.sum(a, axis=tuple(range(a.ndim - k)))
    return xp.reshape(xp.ones((1, m), dtype=a.dtype) @ xp.reshape(a, (m, n)), shape)


def var(x: Tensor, axis: Any = None, *, correction: float = 1, keepdims: bool = False,
        dim: Any = None, keepdim: bool | None = None) -> Tensor:
    """Variance ``sum((x - mean)**2) / (N - correction)`` over ``axis``.

    ``correction=1`` (the default, as PyTorch) is the unbiased estimate; ``correction=0``
    is NumPy's default ``var``. Gradient: ``2 * (x - mean) / (N - correction)``.
    """
    x = _tensor_arg(x, "var")
    axis, keepdims = _reduce_args(axis, dim, keepdims, keepdim)
    xp, kept, axes = x._xp, _kept_shape(x.shape, axis), _axes(x.ndim, axis)
    d, denom = _deviations(x, axes, correction)
    y = xp.sum(d * d, axis=axes, keepdims=keepdims) / denom
    return op(y, (x,), lambda g, d: xp.reshape(g, kept) * (2 * d / denom), saved=(d,), name="var")


def std(x: Tensor, axis: Any = None, *, correction: float = 1, keepdims: bool = False,
        dim: Any = None, keepdim: bool | None = None) -> Tensor:
    """Standard deviation ``sqrt(var)`` (``correction=1`` by default, as PyTorch).

    Gradient: ``(x - mean) / ((N - correction) * std)``, and 0 where ``std`` is 0 (all
    values equal), as PyTorch.
    """
    x = _tensor_arg(x, "std")
    axis, keepdims = _reduce_args(axis, dim, keepdims, keepdim)
    xp, kept, axes = x._xp, _kept_shape(x.shape, axis), _axes(x.ndim, axis)
    d, denom = _deviations(x, axes, correction)
    sk = xp.sqrt(xp.sum(d * d, axis=axes, keepdims=True) / denom)  # std, axes kept
    y = sk if keepdims else xp.reshape(sk, _reduced_shape(x.shape, axes))
    safe = xp.where(sk == 0, 1.0, sk)
    return op(y, (x,), lambda g, d, sk, safe: xp.where(
        sk == 0, 0.0, xp.reshape(g, kept) / safe) * d / denom, saved=(d, sk, safe), name="std")


def _deviations(x: Tensor, axes: tuple[int, ...], correction: Any) -> tuple[Any, float]:
    """What var and std share: ``x - mean`` over ``axes`` (kept as size 1) and the divisor
    ``max(0, N - correction)``, as PyTorch: with ``correction >= N`` the variance is
    ``sum / 0``, inf for values that differ and NaN for equal ones."""
    if _scalar(correction) is None:
        raise TypeError(f"var/std: correction must be a number (1: unbiased, 0: NumPy's "
                        f"default); got {correction!r}")
    xp = x._xp
    n = math.prod(x.shape[i] for i in axes)
    d = x.data - xp.mean(x.data, axis=axes, keepdims=True)
    return d, (n - correction if n - correction > 0 else 0.0)  # a NaN correction gives 0 too


def logsumexp(x: Tensor, axis: Any = None, keepdims: bool = False, *, dim: Any = None,
              keepdim: bool | None = None) -> Tensor:
    """``log(sum(exp(x)))`` over ``axis``, shifted by the max so that nothing overflows.

    Gradient: ``exp(x - logsumexp(x))``, the softmax. Rows of ``-inf`` give ``-inf``, and
    so does an empty group (as PyTorch).
    """
    t = _tensor_arg(x, "logsumexp")
    axis, keepdims = _reduce_args(axis, dim, keepdims, keepdim)
    xp, d, shape = t._xp, t.data, t.shape
    kept, axes = _kept_shape(shape, axis), _axes(t.ndim, axis)
    if math.prod(shape[i] for i in axes) == 0:  # a sum of no terms is 0: log(0) = -inf
        y = xp.full(kept if keepdims else _reduced_shape(shape, axes), float("-inf"),
                    dtype=d.dtype)
        return op(y, (t,), lambda g: xp.zeros(shape, dtype=g.dtype), name="logsumexp")
    m = xp.max(d, axis=axes, keepdims=True)
    m = xp.where(xp.isinf(m), 0.0, m)  # a row of -inf: no shift (keeps -inf - -inf away)
    y_kept = m + xp.log(xp.sum(xp.exp(d - m), axis=axes, keepdims=True))
    y = y_kept if keepdims else xp.reshape(y_kept, _reduced_shape(shape, axes))
    return op(y, (t,), lambda g, x, yk: xp.reshape(g, kept) * xp.exp(x - yk),
              saved=(d, y_kept), name="logsumexp")


def prod(x: Tensor, axis: Any = None, keepdims: bool = False, *, dim: Any = None,
         keepdim: bool | None = None) -> Tensor:
    """Product over ``axis``. Gradient: the product of the *other* values of the group.

    That is computed from running products from the left and from the right, never as
    ``prod / x``, so zeros are handled exactly (as PyTorch).
    """
    x = _tensor_arg(x, "prod")
    axis, keepdims = _reduce_args(axis, dim, keepdims, keepdim)
    xp, kept, axes = x._xp, _kept_shape(x.shape, axis), _axes(x.ndim, axis)
    return op(xp.prod(x.data, axis=axes, keepdims=keepdims), (x,),
              lambda g, x: xp.reshape(g, kept) * _product_of_others(xp, x, axes),
              saved=(x.data,), name="prod")


def _product_of_others(xp: Any, x: Array, axes: tuple[int, ...]) -> Array:
    """For each value, the product of the other values of its group (the group: ``axes``).

    The reduced axes are moved last and merged; then the product of the values before each
    one (a running product from the left) times the product of those after it (from the
    right). No division, so zeros are handled exactly.
    """
    shape = tuple(x.shape)
    rest = tuple(i for i in range(len(shape)) if i not in axes)
    perm = rest + axes
    inverse = tuple(sorted(range(len(shape)), key=perm.__getitem__))
    moved = tuple(shape[i] for i in perm)
    flat = xp.reshape(xp.permute_dims(x, perm), tuple(shape[i] for i in rest) + (-1,))
    left = xp.cumulative_prod(flat, axis=-1, include_initial=True)[..., :-1]
    flipped = xp.flip(flat, axis=-1)
    right = xp.flip(xp.cumulative_prod(flipped, axis=-1, include_initial=True)[..., :-1], axis=-1)
    return xp.permute_dims(xp.reshape(left * right, moved), inverse)


def cumsum(x: Tensor, axis: int | None = None, *, dim: int | None = None) -> Tensor:
    """Running sum along ``axis`` (required, as PyTorch's ``dim``; a 0-d or 1-d tensor
    may leave it out). Gradient: the running sum of ``g`` from the other end."""
    x = _tensor_arg(x, "cumsum")
    axis, _ = _reduce_args(axis, dim, False, None)
    if axis is None:
        if x.ndim > 1:
            raise TypeError(f"cumsum: give the axis (dim=) to sum along; the tensor has "
                            f"shape {x.shape}")
        axis = 0
    xp = x._xp
    if x.ndim == 0:
        _axis_index(0, axis, "cumsum")  # 0 or -1, as PyTorch
        return op(xp.reshape(x.data, ()), (x,), lambda g: g, name="cumsum")
    a = _axis_index(x.ndim, axis, "cumsum")  # one int axis, as PyTorch's dim
    return op(xp.cumulative_sum(x.data, axis=a), (x,),
              lambda g: xp.flip(xp.cumulative_sum(xp.flip(g, axis=a), axis=a), axis=a),
              name="cumsum")


# --- max, min and their indices ----------------------------------------------------------------

def _max(x: Tensor, axis: Any = None, keepdims: bool = False, *, dim: int | None = None,
         keepdim: bool | None = None) -> Any:
    """Largest value, over all axes or over ``axis``; or ``(values, indices)`` with ``dim=``.

    The two names give the two libraries' answers (positional arguments are ``axis``):

    * ``x.max()`` and ``x.max(axis=...)`` return the values, as NumPy's ``max`` (and
      PyTorch's ``x.max()`` and ``amax``). When several values tie for the maximum, the
      gradient is split evenly among them, as PyTorch does for these.
    * ``x.max(dim=d)`` returns the pair ``(values, indices)``, as PyTorch's
      ``x.max(dim=d)``; the gradient goes to the index returned (the first maximum).
    """
    if dim is not None:
        _reduce_args(axis, dim, keepdims, keepdim)  # axis= and dim= together: an error
        return _extreme_with_index(x, dim, bool(keepdim) or keepdims, "max")
    axis, keepdims = _reduce_args(axis, None, keepdims, keepdim)
    return _extreme(x, axis, keepdims, "max")


def _min(x: Tensor, axis: Any = None, keepdims: bool = False, *, dim: int | None = None,
         keepdim: bool | None = None) -> Any:
    """Smallest value; ``(values, indices)`` with ``dim=``. See :meth:`max` for the rules."""
    if dim is not None:
        _reduce_args(axis, dim, keepdims, keepdim)
        return _extreme_with_index(x, dim, bool(keepdim) or keepdims, "min")
    axis, keepdims = _reduce_args(axis, None, keepdims, keepdim)
    return _extreme(x, axis, keepdims, "min")


def argmax(x: Tensor, axis: int | None = None, keepdims: bool = False, *, dim: int | None = None,
           keepdim: bool | None = None) -> Tensor:
    """Index of the (first) largest value, of the flattened tensor by default. No gradient."""
    return _arg_extreme(_tensor_arg(x, "argmax"), axis, dim, keepdims, keepdim, "argmax")


def argmin(x: Tensor, axis: int | None = None, keepdims: bool = False, *, dim: int | None = None,
           keepdim: bool | None = None) -> Tensor:
    """Index of the (first) smallest value, of the flattened tensor by default. No gradient."""
    return _arg_extreme(_tensor_arg(x, "argmin"), axis, dim, keepdims, keepdim, "argmin")


def _extreme(t: Tensor, axis: Any, keepdims: bool, kind: str) -> Tensor:
    """max or min over ``axis``; tied values share the gradient evenly, as PyTorch.

    Over all axes (``torch.max()``) a NaN result sends the gradient to the NaNs; over some
    axes (``torch.amax``) a row with a NaN gets NaN gradients, as in PyTorch.
    """
    whole = axis is None
    xp, shape = t._xp, t.shape
    axes = _axes(t.ndim, axis)
    _check_nonempty(shape, axes, kind, whole)
    reduce = xp.max if kind == "max" else xp.min
    y = reduce(t.data, axis=axes, keepdims=True)
    out = y if keepdims else xp.reshape(y, _reduced_shape(shape, axes))

    def vjp(g: Array, x: Array, y: Array) -> Array:
        hit = (x == y) | (xp.isnan(x) & xp.isnan(y)) if whole else x == y  # the tied winners
        hit = xp.astype(hit, g.dtype)
        return hit * (xp.reshape(g, y.shape) / xp.sum(hit, axis=axes, keepdims=True))

    return op(out, (t,), vjp, saved=(t.data, y), name=kind)


def _extreme_with_index(t: Tensor, dim: int, keepdim: bool, kind: str) -> MaxMin:
    """PyTorch's ``max(dim=...)``: the values and their indices; the gradient to the index."""
    xp, shape = t._xp, t.shape
    d = _axis_index(t.ndim, dim, kind)
    _check_nonempty(shape, (d,) if t.ndim else (), kind, False)
    if t.ndim == 0:
        return MaxMin(t + 0, Tensor(xp.zeros((), dtype=xp.int64)))
    pick = xp.argmax if kind == "max" else xp.argmin
    idx = pick(t.data, axis=d, keepdims=True)  # the first extreme (NaN counts as extreme)
    values = xp.take_along_axis(t.data, idx, axis=d)
    n = shape[d]
    at = xp.reshape(xp.arange(n), tuple(n if i == d else 1 for i in range(t.ndim)))
    kept = tuple(1 if i == d else m for i, m in enumerate(shape))
    out_shape = kept if keepdim else _reduced_shape(shape, (d,))
    y = op(xp.reshape(values, out_shape), (t,),
           lambda g: xp.where(at == idx, xp.reshape(g, kept), 0.0), name=kind)
    return MaxMin(y, Tensor(xp.reshape(idx, out_shape)))


def _arg_extreme(t: Tensor, axis: Any, dim: Any, keepdims: bool, keepdim: bool | None,
                 kind: str) -> Tensor:
    axis, keepdims = _reduce_args(axis, dim, keepdims, keepdim)
    xp = t._xp
    if axis is None or t.ndim == 0:
        _check_nonempty(t.shape, tuple(range(t.ndim)), kind, True)
    else:
        _check_nonempty(t.shape, (_axis_index(t.ndim, axis, kind),), kind, False)
    pick = xp.argmax if kind == "argmax" else xp.argmin
    if axis is None:
        i = pick(xp.reshape(t.data, (-1,)))
        return Tensor(xp.reshape(i, (1,) * t.ndim) if keepdims else i)
    a = _axis_index(t.ndim, axis, kind)
    if t.ndim == 0:
        return Tensor(xp.zeros((), dtype=xp.int64))
    return Tensor(pick(t.data, axis=a, keepdims=keepdims))


def _check_nonempty(shape: tuple[int, ...], axes: tuple[int, ...], kind: str,
                    whole: bool) -> None:
    """max, min, argmax, argmin: an axis of size 0 to reduce over is an error, as PyTorch; an
    empty tensor reduced over other axes gives an empty result."""
    if whole:
        if math.prod(shape) == 0:
            raise ValueError(f"{kind}: cannot reduce an empty tensor of shape {shape}: an empty "
                             f"set has no {kind} (give an axis of nonzero size)")
        return
    for a in axes:
        if shape[a] == 0:
            raise ValueError(f"{kind}: cannot reduce over axis {a} of size 0 (shape {shape}): "
                             f"an empty set has no {kind}")


_max.__name__ = _max.__qualname__ = "max"
_min.__name__ = _min.__qualname__ = "min"
_attach(mean=mean, var=var, std=std, logsumexp=logsumexp, prod=prod, cumsum=cumsum, max=_max,
        min=_min, argmax=argmax, argmin=argmin)
