"""Normalization as functions (``F.layer_norm``, ``F.batch_norm``), each one operation.

Both normalize ``x`` to ``xhat = (x - mean) / sqrt(var + eps)`` over some axes (the biased
variance, as PyTorch) and then scale and shift it, ``y = xhat * weight + bias``. The backward
rule is the classic one, written once in :func:`_normalized_vjp` (``layer_norm`` takes its
means and sums as products with ones, :func:`~minigrad.reductions._row_sums`): with
``gh = g * weight``,

    dx = rstd * (gh - mean(gh) - xhat * mean(gh * xhat))

(means over the normalized axes), ``dweight = sum(g * xhat)`` and ``dbias = sum(g)`` over the
other axes. In evaluation mode ``batch_norm`` uses fixed running statistics, so there
``dx = g * weight * rstd``.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from .backend import Array, is_floating
from .reductions import _column_sums, _row_sums
from .tensor import Tensor, _tensor_arg, op

__all__ = ["layer_norm", "batch_norm"]


def _optional(t: Any, name: str, arg: str, shape: tuple[int, ...], x: Tensor) -> Tensor | None:
    if t is None:
        return None
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}: {arg} must be a Tensor or None; got {type(t).__name__}")
    if t.shape != shape:
        raise ValueError(f"{name}: {arg} must have shape {shape}; got {t.shape}")
    if t.dtype != x.dtype:
        raise TypeError(f"{name}: {arg} has dtype {t.dtype} but the input has {x.dtype}; "
                        "they must match (as PyTorch)")
    return t


def _normalized_vjp(means: Callable[[Array], Array], sums: Callable[[Array], Array],
                    has_w: bool, has_b: bool, x_grad: bool = True
                    ) -> Callable[..., tuple[Any, ...]]:
    """The VJP of ``y = xhat * w + b`` with ``xhat`` normalized with the batch's statistics:
    ``means(a)`` averages ``a`` over the normalized axes (kept, of size 1), ``sums(a)`` sums it
    over the other axes to the parameters' shape."""
    def vjp(g: Array, xhat: Array, rstd: Array, w: Array) -> tuple[Any, ...]:
        gh = g * w if has_w else g
        out: list[Any] = [rstd * (gh - means(gh) - xhat * means(gh * xhat)) if x_grad else None]
        if has_w:
            out.append(sums(g * xhat))
        if has_b:
            out.append(sums(g))
        return tuple(out)
    return vjp


def layer_norm(x: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalize over the last axes (``normalized_shape``), as ``torch.nn.functional.layer_norm``.

    Parameters
    ----------
    x : Tensor
        Floating point, its last axes of shape ``normalized_shape``.
    normalized_shape : int or sequence of int
        The shape of the axes normalized together (one sample's features).
    weight, bias : Tensor, optional
        Of shape ``normalized_shape``: ``y = xhat * weight + bias``.
    eps : float
        Added to the variance before the square root.
    """
    x = _tensor_arg(x, "layer_norm")
    xp = x._xp
    if not is_floating(xp, x.dtype):
        raise TypeError(f"layer_norm: expected a floating-point input; got dtype {x.dtype}")
    shape: tuple[int, ...] = (normalized_shape,) if isinstance(normalized_shape, int) \
        else tuple(normalized_shape)
    k = len(shape)
    if not k or x.shape[x.ndim - k:] != shape or k > x.ndim:
        raise ValueError(f"layer_norm: given normalized_shape={list(shape)}, expected input "
                         f"with shape [*, {', '.join(map(str, shape))}], but got input of size "
                         f"{list(x.shape)}")
    weight = _optional(weight, "layer_norm", "weight", shape, x)
    bias = _optional(bias, "layer_norm", "bias", shape, x)
    d = x.data - _row_sums(xp, x.data, k, mean=True)
    rstd = 1.0 / xp.sqrt(_row_sums(xp, d * d, k, mean=True) + eps)
    xhat = d * rstd
    w = weight.data if weight is not None else xp.ones(shape, dtype=x.dtype)
    y = xhat * w if weight is not None else xhat
    if bias is not None:
        y = y + bias.data
    parents = [x] + [t for t in (weight, bias) if t is not None]
    vjp = _normalized_vjp(lambda a: _row_sums(xp, a, k, mean=True),
                          lambda a: _column_sums(xp, a, k), weight is not None, bias is not None)
    return op(y, parents, vjp, saved=(xhat, rstd, w), name="layer_norm")


def batch_norm(x: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each channel (axis 1) over the batch and the other axes, as
    ``torch.nn.functional.batch_norm``.

    Parameters
    ----------
    x : Tensor
        (N, C) or (N, C, ...), floating point.
    running_mean, running_var : Tensor or None
        Shape (C,). With ``training``, they are updated in place (their ``.data`` replaced):
        ``running = (1 - momentum) * running + momentum * batch_statistic``, with the batch's
        *unbiased* variance, as PyTorch. Without ``training`` they normalize ``x``.
    weight, bias : Tensor, optional
        Shape (C,): ``y = xhat * weight + bias``.
    training : bool
        Normalize with the batch's statistics (and update the running ones), or with the
        running ones.
    momentum : float
        The weight of the new batch in the running statistics.
    eps : float
        Added to the variance before the square root.
    """
    x = _tensor_arg(x, "batch_norm")
    weight, bias = _check_batch_norm(x, running_mean, running_var, weight, bias, training)
    xp = x._xp
    c = x.shape[1]
    pshape = (c,)
    axes = (0,) + tuple(range(2, x.ndim))
    bshape = (1, c) + (1,) * (x.ndim - 2)  # (C,) broadcast against (N, C, ...)
    w = xp.reshape(weight.data, bshape) if weight is not None else xp.ones(bshape, dtype=x.dtype)
    if training:
        xhat, rstd = _batch_statistics(x, axes, running_mean, running_var, momentum, eps)
    else:
        assert running_mean is not None and running_var is not None  # checked above
        rstd = 1.0 / xp.sqrt(xp.reshape(running_var.data, bshape) + eps)
        xhat = (x.data - xp.reshape(running_mean.data, bshape)) * rstd
    y = xhat * w if weight is not None else xhat
    if bias is not None:
        y = y + xp.reshape(bias.data, bshape)
    parents = [x] + [t for t in (weight, bias) if t is not None]
    vjp = _normalized_vjp(lambda a: xp.mean(a, axis=axes, keepdims=True),
                          lambda a: xp.reshape(xp.sum(a, axis=axes), pshape),
                          weight is not None, bias is not None, x_grad=training)
    if not training:
        vjp = _running_vjp(vjp)
    return op(y, parents, vjp, saved=(xhat, rstd, w), name="batch_norm")


def _check_batch_norm(x: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
                      weight: Tensor | None, bias: Tensor | None, training: bool
                      ) -> tuple[Tensor | None, Tensor | None]:
    """Check batch_norm's arguments (dtypes, shapes (C,)); return ``weight`` and ``bias``."""
    if not is_floating(x._xp, x.dtype):
        raise TypeError(f"batch_norm: expected a floating-point input; got dtype {x.dtype}")
    if x.ndim < 2:
        raise ValueError(f"batch_norm: expected an input (N, C, ...) with at least 2 axes; got "
                         f"shape {x.shape}")
    pshape = (x.shape[1],)
    weight = _optional(weight, "batch_norm", "weight", pshape, x)
    bias = _optional(bias, "batch_norm", "bias", pshape, x)
    for arg, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and (not isinstance(t, Tensor) or t.shape != pshape):
            raise ValueError(f"batch_norm: {arg} must be a Tensor of shape {pshape}; got "
                             f"{getattr(t, 'shape', type(t).__name__)}")
        if t is not None and t.dtype != x.dtype:
            raise TypeError(f"batch_norm: {arg} has dtype {t.dtype} but the input has "
                            f"{x.dtype}; they must match (as PyTorch)")
    if not training and (running_mean is None or running_var is None):
        raise ValueError("batch_norm: running_mean and running_var are needed when "
                         "training=False")
    return weight, bias


def _batch_statistics(x: Tensor, axes: tuple[int, ...], running_mean: Tensor | None,
                      running_var: Tensor | None, momentum: float, eps: float
                      ) -> tuple[Array, Array]:
    """``xhat`` and ``rstd`` from the batch's statistics over ``axes``, and the running
    statistics updated (each ``.data`` replaced by a new array); see :func:`batch_norm`."""
    xp = x._xp
    pshape = (x.shape[1],)
    n = math.prod(x.shape[i] for i in axes)
    if n <= 1:
        raise ValueError(f"batch_norm: expected more than 1 value per channel when "
                         f"training, got input size {list(x.shape)}")
    mean = xp.mean(x.data, axis=axes, keepdims=True)
    d = x.data - mean
    var = xp.mean(d * d, axis=axes, keepdims=True)
    rstd = 1.0 / xp.sqrt(var + eps)
    xhat = d * rstd
    m = momentum  # a new array each time: the old one is not changed under its readers
    if running_mean is not None:
        running_mean.data = xp.astype((1 - m) * running_mean.data
                                      + m * xp.reshape(mean, pshape), running_mean.dtype)
    if running_var is not None:  # the unbiased variance, as PyTorch
        running_var.data = xp.astype((1 - m) * running_var.data
                                     + m * xp.reshape(var, pshape) * (n / (n - 1)),
                                     running_var.dtype)
    return xhat, rstd


def _running_vjp(batch_vjp: Callable[..., tuple[Any, ...]]) -> Callable[..., tuple[Any, ...]]:
    """The VJP with fixed (running) statistics: ``dx = g * w * rstd``; the weight's and the
    bias's gradients as with batch statistics (``batch_vjp`` made with ``x_grad=False``)."""
    def vjp(g: Array, xhat: Array, rstd: Array, w: Array) -> tuple[Any, ...]:
        return (g * w * rstd, *batch_vjp(g, xhat, rstd, w)[1:])
    return vjp
