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


def _vector_norm(xp: Any, x: Any, order: float) -> Any:
    """The ``order``-norm of all values of ``x`` as a 0-d array (``torch.linalg.vector_norm``):
    the largest (``inf``) or smallest (``-inf``) absolute value, the count of nonzeros (0), or
    ``sum(|x| ** order) ** (1 / order)``."""
    if order == math.inf:
        return xp.max(xp.abs(x))
    if order == -math.inf:
        return xp.min(xp.abs(x))
    if order == 0:
        return xp.sum(xp.astype(x != 0, x.dtype))
    return xp.sum(xp.abs(x) ** order) ** (1.0 / order)


def clip_grad_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False) -> Tensor:
    """Scale the gradients of ``parameters`` in place so that their joint norm is at most
    ``max_norm``; return the norm they had before, as PyTorch's.

    The joint norm is the norm of the gradients' own norms: for ``norm_type=2`` it is
    ``sqrt(sum over parameters of sum(grad ** 2))``, the norm of all gradients as one long
    vector. Every gradient is then multiplied, in place, by ``min(max_norm / (norm + 1e-6),
    1)``: by 1 (no change) when the norm is small enough, and by NaN when the norm is NaN (a
    NaN anywhere poisons every gradient, as in PyTorch, rather than clipping only some).
    Parameters without a gradient are skipped. No value is read into Python unless
    ``error_if_nonfinite`` asks for the check, so a compiled step that clips still replays.

    Parameters
    ----------
    parameters : iterable of Tensor, or one Tensor
        Usually ``model.parameters()``.
    max_norm : float
        The largest norm allowed.
    norm_type : float
        Which p-norm: 2 (default), 1, any other real ``p``, ``float("inf")`` (the largest
        absolute value), ``-inf`` (the smallest) or 0 (the number of nonzero values), as
        ``torch.linalg.vector_norm``.
    error_if_nonfinite : bool
        Raise instead of scaling when the norm is nan or infinite.

    Returns
    -------
    Tensor
        The total norm of the gradients before clipping (a 0-d tensor, no gradient).
    """
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    for i, p in enumerate(params):
        if not isinstance(p, Tensor):
            raise TypeError(f"clip_grad_norm_: parameters must be Tensors; item {i} is a "
                            f"{type(p).__name__}")
    for name, value in (("max_norm", max_norm), ("norm_type", norm_type)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"clip_grad_norm_: {name} must be a number; got "
                            f"{type(value).__name__} {value!r}")
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return Tensor(0.0)
    xp = namespace(grads[0])
    order = float(norm_type)
    norms = [_vector_norm(xp, g, order) for g in grads]
    total = _vector_norm(xp, xp.stack(norms), order)
    if error_if_nonfinite and not bool(xp.isfinite(total)):
        raise RuntimeError(f"clip_grad_norm_: the total norm of order {norm_type} of the "
                           f"gradients is {float(total)}, not finite; pass "
                           "error_if_nonfinite=False to clip anyway")
    coef = xp.minimum(max_norm / (total + 1e-6), xp.asarray(1.0, dtype=total.dtype))
    for g in grads:
        g *= xp.astype(coef, g.dtype)  # in place, as PyTorch's g.mul_(clip_coef_clamped)
    return Tensor(total)
