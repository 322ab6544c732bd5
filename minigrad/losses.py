"""More losses as functions, PyTorch-shaped: ``l1_loss``, ``huber_loss``, ``smooth_l1_loss``.

Each is a composition of elementwise operations (``abs``, ``where``, products), so their
gradients are those operations' and match PyTorch's, 0 included at a difference of 0.
"""
from __future__ import annotations

from typing import Any

from .elementwise import where
from .tensor import Tensor, _tensor_arg

__all__ = ["l1_loss", "huber_loss", "smooth_l1_loss"]


def _difference(name: str, prediction: Any, target: Any, reduction: str) -> Tensor:
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{name}: reduction must be 'mean', 'sum' or 'none'; got {reduction!r}")
    prediction = _tensor_arg(prediction, name)
    if not isinstance(target, Tensor):
        target = Tensor(target)
    if prediction.shape != target.shape:
        raise ValueError(f"{name}: prediction has shape {prediction.shape} but target has "
                         f"shape {target.shape}")
    diff: Tensor = prediction - target
    return diff


def _reduce(losses: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.mean()


def l1_loss(input: Tensor, target: Any, reduction: str = "mean") -> Tensor:  # noqa: A002
    """Mean absolute error ``mean(|input - target|)`` (or its sum, or per element), as
    ``torch.nn.functional.l1_loss``. Gradient ``sign(input - target)``: 0 where equal."""
    return _reduce(_difference("l1_loss", input, target, reduction).abs(), reduction)


def huber_loss(input: Tensor, target: Any, reduction: str = "mean",  # noqa: A002
               delta: float = 1.0) -> Tensor:
    """The Huber loss, as ``torch.nn.functional.huber_loss``: per element, with
    ``d = input - target``, ``0.5 * d**2`` where ``|d| < delta``, else
    ``delta * (|d| - 0.5 * delta)``; quadratic near 0, linear far away."""
    if not delta > 0:
        raise ValueError(f"huber_loss: delta must be positive; got {delta!r}")
    d = _difference("huber_loss", input, target, reduction)
    a = d.abs()
    return _reduce(where(a.data < delta, 0.5 * d * d, delta * (a - 0.5 * delta)), reduction)


def smooth_l1_loss(input: Tensor, target: Any, reduction: str = "mean",  # noqa: A002
                   beta: float = 1.0) -> Tensor:
    """The smooth L1 loss, as ``torch.nn.functional.smooth_l1_loss``: ``0.5 * d**2 / beta``
    where ``|d| < beta``, else ``|d| - 0.5 * beta`` (the Huber loss divided by ``beta``;
    ``beta = 0`` is the L1 loss)."""
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be at least 0; got {beta!r}")
    d = _difference("smooth_l1_loss", input, target, reduction)
    a = d.abs()
    if beta == 0:
        return _reduce(a, reduction)
    return _reduce(where(a.data < beta, (0.5 / beta) * d * d, a - 0.5 * beta), reduction)
