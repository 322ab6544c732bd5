"""Helpers for training: :func:`clip_grad_norm_`.

Backpropagation through many time steps multiplies many Jacobians together, and the gradient
can grow without bound (it *explodes*). The usual cure is to rescale all gradients together
when their joint norm is too large: the direction of the step is kept, only its length capped.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..backend import namespace
from ..tensor import Tensor

__all__ = ["clip_grad_norm_"]


def clip_grad_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False) -> Tensor:
    """Scale the gradients of ``parameters`` in place so that their joint norm is at most
    ``max_norm``; return the norm they had before, as PyTorch's.

    The joint norm treats all gradients as one long vector: for ``norm_type=2`` it is
    ``sqrt(sum over parameters of sum(grad ** 2))``. When it exceeds ``max_norm``, every
    gradient is multiplied by ``max_norm / (norm + 1e-6)``; otherwise nothing changes.
    Parameters without a gradient are skipped.

    Parameters
    ----------
    parameters : iterable of Tensor, or one Tensor
        Usually ``model.parameters()``.
    max_norm : float
        The largest norm allowed.
    norm_type : float
        Which p-norm: 2 (default), 1, or ``float("inf")`` (the largest absolute value).
    error_if_nonfinite : bool
        Raise instead of scaling when the norm is nan or infinite.

    Returns
    -------
    Tensor
        The total norm of the gradients before clipping (a 0-d tensor, no gradient).
    """
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    params = [p for p in params if p.grad is not None]
    if not params:
        return Tensor(0.0)
    xp = namespace(params[0].grad)
    norm_type = float(norm_type)
    if norm_type == math.inf:
        total = xp.max(xp.stack([xp.max(xp.abs(p.grad)) for p in params]))
    else:
        total = xp.sum(xp.stack([xp.sum(xp.abs(p.grad) ** norm_type) for p in params]))
        total = total ** (1.0 / norm_type)
    value = float(total)
    if error_if_nonfinite and not math.isfinite(value):
        raise RuntimeError(f"clip_grad_norm_: the total norm of order {norm_type} of the "
                           f"gradients is {value}, not finite; pass error_if_nonfinite=False "
                           "to clip anyway")
    scale = max_norm / (value + 1e-6)
    if scale < 1.0:
        for p in params:
            grad: Any = p.grad
            p.grad = grad * scale
    return Tensor(total)
