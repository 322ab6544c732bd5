"""Loss modules, as ``torch.nn``: each holds its options and calls its function of
:mod:`minigrad.functional`.

As in PyTorch, a class ``weight`` (and ``pos_weight``) is a *buffer*: saved in the state dict
under ``"weight"`` (``"pos_weight"``) and moved by ``to()``, never trained. ``repr`` shows no
options (PyTorch's does not either).
"""
from __future__ import annotations

from typing import Any

from .. import functional as F
from ..tensor import Tensor
from .modules import Module

__all__ = ["CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "MSELoss", "L1Loss",
           "HuberLoss", "SmoothL1Loss"]

_REDUCTIONS = ("mean", "sum", "none")


class _Loss(Module):
    """What the loss modules share: ``reduction`` ('mean', 'sum' or 'none'), checked here."""

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        if reduction not in _REDUCTIONS:
            raise ValueError(f"{type(self).__name__}: {reduction} is not a valid value for "
                             f"reduction (expected 'mean', 'sum' or 'none')")
        self.reduction = reduction


class _WeightedLoss(_Loss):
    """A loss with a per-class ``weight`` buffer (None: every class weighs 1)."""

    weight: Tensor | None

    def __init__(self, weight: Any = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)


class CrossEntropyLoss(_WeightedLoss):
    """Softmax cross-entropy of logits (N, C) against class indices (N,) or class
    probabilities (N, C), as ``torch.nn.CrossEntropyLoss``; see
    :func:`minigrad.functional.cross_entropy` (fused and numerically stable).

    Parameters
    ----------
    weight : Tensor of shape (C,), optional
        A weight per class (a buffer).
    ignore_index : int
        Targets equal to it count for nothing (and not in the mean's divisor).
    reduction : {"mean", "sum", "none"}
    label_smoothing : float
        In [0, 1]: the target mixes the one-hot class with the uniform distribution.
    """

    def __init__(self, weight: Any = None, size_average: Any = None, ignore_index: int = -100,
                 reduce: Any = None, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        _no_legacy(self, size_average, reduce)
        super().__init__(weight, reduction)
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueError(f"CrossEntropyLoss: label_smoothing must be between 0.0 and 1.0; "
                             f"got {label_smoothing!r}")
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of log-probabilities (N, C) against class indices (N,), as
    ``torch.nn.NLLLoss``; see :func:`minigrad.functional.nll_loss`. Options as
    :class:`CrossEntropyLoss` (no label smoothing)."""

    def __init__(self, weight: Any = None, size_average: Any = None, ignore_index: int = -100,
                 reduce: Any = None, reduction: str = "mean") -> None:
        _no_legacy(self, size_average, reduce)
        super().__init__(weight, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities against targets in [0, 1], as
    ``torch.nn.BCELoss``; ``weight`` (a buffer) weighs each element (it broadcasts)."""

    def __init__(self, weight: Any = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        _no_legacy(self, size_average, reduce)
        super().__init__(weight, reduction)

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy of ``sigmoid(logits)``, computed stably from the logits, as
    ``torch.nn.BCEWithLogitsLoss``. ``weight`` weighs each element, ``pos_weight`` the
    positive targets per class (both buffers)."""

    weight: Tensor | None
    pos_weight: Tensor | None

    def __init__(self, weight: Any = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean", pos_weight: Any = None) -> None:
        _no_legacy(self, size_average, reduce)
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return F.binary_cross_entropy_with_logits(input, target, weight=self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class MSELoss(_Loss):
    """Mean squared error ``mean((input - target) ** 2)``, as ``torch.nn.MSELoss``."""

    def __init__(self, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        _no_legacy(self, size_average, reduce)
        super().__init__(reduction)

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error ``mean(|input - target|)``, as ``torch.nn.L1Loss``."""

    def __init__(self, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        _no_legacy(self, size_average, reduce)
        super().__init__(reduction)

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return F.l1_loss(input, target, reduction=self.reduction)


class HuberLoss(_Loss):
    """The Huber loss (quadratic below ``delta``, linear above), as ``torch.nn.HuberLoss``;
    see :func:`minigrad.functional.huber_loss`."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class SmoothL1Loss(_Loss):
    """The smooth L1 loss, as ``torch.nn.SmoothL1Loss``; see
    :func:`minigrad.functional.smooth_l1_loss`."""

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        _no_legacy(self, size_average, reduce)
        super().__init__(reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


def _no_legacy(module: Module, size_average: Any, reduce: Any) -> None:
    """PyTorch's deprecated ``size_average``/``reduce``: refused, naming ``reduction``."""
    if size_average is not None or reduce is not None:
        raise TypeError(f"{type(module).__name__}: size_average and reduce are deprecated in "
                        f"PyTorch and not supported; use reduction='mean', 'sum' or 'none'")
