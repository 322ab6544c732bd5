"""Activation layers: each one calls its function in :mod:`minigrad.functional`.

``ReLU``, ``LeakyReLU``, ``Sigmoid`` and ``Tanh`` live in :mod:`.modules` (the course's first
layers); these are the others a PyTorch user reaches for, with PyTorch's arguments and defaults.
"""
from __future__ import annotations

from .. import functional as F
from ..tensor import Tensor
from .modules import Module

__all__ = ["GELU", "SiLU", "ELU", "Softplus", "Hardtanh", "LogSigmoid", "Softmax", "LogSoftmax"]

# Alike only: each class is PyTorch's layer of that name, with its own arguments and checks;
# their forward and extra_repr have one shape (duplicates pairs them), not one body.


class GELU(Module):
    """``x * Phi(x)`` (Phi: the normal CDF); ``approximate="tanh"`` uses the tanh formula."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh'; got {approximate!r}")
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """``x * sigmoid(x)``."""

    def forward(self, x: Tensor) -> Tensor:
        return F.silu(x)


class ELU(Module):
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."""

    def __init__(self, alpha: float = 1.0) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, x: Tensor) -> Tensor:
        return F.elu(x, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}"


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``; linear where ``beta * x > threshold``."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, x: Tensor) -> Tensor:
        return F.softplus(x, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    """``x`` clipped to ``[min_val, max_val]``."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0) -> None:
        super().__init__()
        if min_val > max_val:
            raise ValueError(f"Hardtanh: min_val {min_val} is larger than max_val {max_val}")
        self.min_val, self.max_val = min_val, max_val

    def forward(self, x: Tensor) -> Tensor:
        return F.hardtanh(x, self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


class LogSigmoid(Module):
    """``log(sigmoid(x))``, stable for any x."""

    def forward(self, x: Tensor) -> Tensor:
        return F.logsigmoid(x)


class Softmax(Module):
    """``softmax`` along ``dim``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return F.softmax(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """``log_softmax`` along ``dim``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return F.log_softmax(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
