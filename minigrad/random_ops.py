"""Operations that draw random numbers, from an explicit generator: ``dropout``."""
from __future__ import annotations

from typing import Any

from . import backend
from .tensor import Tensor, _tensor_arg, op

__all__ = ["dropout"]


def dropout(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
            inplace: bool = False, *, generator: Any = None, seed: int | None = None) -> Tensor:
    """Zero each value with probability ``p`` and scale the rest by ``1 / (1 - p)``, as
    ``torch.nn.functional.dropout`` (the same rule as :class:`minigrad.nn.Dropout`).

    Parameters
    ----------
    input : Tensor
    p : float
        The probability of dropping a value, in [0, 1].
    training : bool
        False: return ``input`` unchanged.
    inplace : bool
        Not supported (True raises): minigrad's operations never change their inputs.
    generator : numpy Generator, optional
        Draws the mask (``seed=`` makes one); with neither, fresh entropy at each call.

    Returns
    -------
    Tensor
        Gradient: ``g * mask / (1 - p)``.
    """
    x = _tensor_arg(input, "dropout")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p!r}")
    if inplace:
        raise NotImplementedError("dropout: inplace=True is not supported; use the result")
    if generator is not None and seed is not None:
        raise ValueError("dropout: pass generator or seed, not both")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    rng = backend.default_rng(generator if generator is not None else seed)
    xp, keep = x._xp, 1.0 - p
    u = backend.uniform(rng, 0.0, 1.0, x.shape, like=x.data)
    scale = xp.astype(u < keep, x.dtype) / keep  # 1/keep where kept, 0 where dropped
    return op(x.data * scale, (x,), lambda g, s: g * s, saved=(scale,), name="dropout")
