"""Normalization layers, as ``torch.nn``: :class:`LayerNorm`, :class:`BatchNorm1d`,
:class:`BatchNorm2d`.

Their trained scale and shift are parameters (``weight``, ``bias``); the running statistics
of batch normalization are *buffers* (:meth:`Module.register_buffer`): saved in the state dict
(``running_mean``, ``running_var``, ``num_batches_tracked``, PyTorch's keys and shapes), moved
by ``to()``, never given to an optimizer. ``train()`` normalizes with each batch's statistics
and updates the running ones; ``eval()`` normalizes with the running ones.
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Sequence

from .. import backend
from ..normalization import batch_norm, layer_norm
from ..tensor import Tensor, _tensor_arg
from .modules import Module, Parameter

__all__ = ["LayerNorm", "BatchNorm1d", "BatchNorm2d"]


def _full(shape: tuple[int, ...], value: float, dtype: Any, device: str | None) -> Any:
    """An array of ``shape`` filled with ``value``, of ``dtype``, on ``device`` (None: CPU)."""
    flat = backend.copy_to([value] * math.prod(shape), dtype=dtype, device=device)
    return backend.namespace(flat).reshape(flat, shape)


class LayerNorm(Module):
    """Normalize each sample over its last axes, as ``torch.nn.LayerNorm``.

    Parameters
    ----------
    normalized_shape : int or sequence of int
        The shape of the last axes normalized together.
    eps : float
        Added to the variance.
    elementwise_affine : bool
        Learn ``weight`` (ones at first) and ``bias`` (zeros) of shape ``normalized_shape``.
    bias : bool
        With ``elementwise_affine``, whether to learn the bias too.
    dtype, device : optional
        As for :class:`~minigrad.nn.Linear`.

    >>> LayerNorm(4)
    LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
    """

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: str | None = None,
                 dtype: Any = "float64") -> None:
        super().__init__()
        shape: tuple[Any, ...] = (normalized_shape,) if isinstance(normalized_shape, int) \
            else tuple(normalized_shape)
        for n in shape:
            if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 0:
                raise ValueError(f"LayerNorm: normalized_shape must be sizes (ints >= 0); got "
                                 f"{normalized_shape!r}")
        self.normalized_shape = tuple(int(n) for n in shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        self.weight = Parameter(_full(self.normalized_shape, 1.0, dtype, device)) \
            if elementwise_affine else None
        self.bias = Parameter(_full(self.normalized_shape, 0.0, dtype, device)) \
            if elementwise_affine and bias else None

    def forward(self, x: Tensor) -> Tensor:
        return layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class _BatchNorm(Module):
    """What BatchNorm1d and BatchNorm2d share (PyTorch's ``_BatchNorm``)."""

    _ndims: tuple[int, ...] = ()
    num_features: int
    eps: float
    momentum: float | None
    affine: bool
    track_running_stats: bool
    weight: Parameter | None
    bias: Parameter | None
    running_mean: Tensor | None
    running_var: Tensor | None
    num_batches_tracked: Tensor | None

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 device: str | None = None, dtype: Any = "float64", *,
                 bias: bool = True) -> None:
        super().__init__()
        name = type(self).__name__
        if not isinstance(num_features, numbers.Integral) or isinstance(num_features, bool) \
                or num_features < 1:
            raise ValueError(f"{name}: num_features must be a positive int; got "
                             f"{num_features!r}")
        self.num_features = int(num_features)
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        c = (self.num_features,)
        self.weight = Parameter(_full(c, 1.0, dtype, device)) if affine else None
        self.bias = Parameter(_full(c, 0.0, dtype, device)) if affine and bias else None
        if track_running_stats:
            self.register_buffer("running_mean", Tensor(_full(c, 0.0, dtype, device)))
            self.register_buffer("running_var", Tensor(_full(c, 1.0, dtype, device)))
            self.register_buffer("num_batches_tracked",
                                 Tensor(_full((), 0, "int64", device)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches tracked."""
        for t, value in ((self.running_mean, 0), (self.running_var, 1),
                         (self.num_batches_tracked, 0)):
            if t is not None:
                t.data[...] = value

    def reset_parameters(self) -> None:
        """The running statistics reset, ``weight`` ones and ``bias`` zeros."""
        self.reset_running_stats()
        if self.weight is not None:
            self.weight.data[...] = 1
        if self.bias is not None:
            self.bias.data[...] = 0

    def forward(self, x: Tensor) -> Tensor:
        x = _tensor_arg(x, type(self).__name__)
        if x.ndim not in self._ndims:
            wanted = " or ".join(f"{n}D" for n in self._ndims)
            raise ValueError(f"{type(self).__name__}: expected {wanted} input (got "
                             f"{x.ndim}D input)")
        factor = 0.0 if self.momentum is None else self.momentum
        count = self.num_batches_tracked
        if self.training and count is not None:
            # a new array (asarray: NumPy's 0-d + 1 gives a scalar)
            count.data = count._xp.asarray(count.data + 1)
            if self.momentum is None:  # a cumulative average over every batch so far
                factor = 1.0 / float(count.data)
        use_batch = self.training or not self.track_running_stats
        track = not use_batch or self.track_running_stats
        return batch_norm(x, self.running_mean if track else None,
                          self.running_var if track else None, self.weight, self.bias,
                          use_batch, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) inputs, as ``torch.nn.BatchNorm1d``.

    Parameters
    ----------
    num_features : int
        C, the channels (features).
    eps : float
        Added to the variance.
    momentum : float or None
        The weight of each new batch in the running statistics; None: a cumulative average.
    affine : bool
        Learn ``weight`` (ones) and ``bias`` (zeros) per channel.
    bias : bool
        With ``affine``, whether to learn the bias too (keyword only, as PyTorch).
    track_running_stats : bool
        Keep running statistics (buffers) for ``eval()``; without them ``eval()`` still uses
        each batch's statistics.
    dtype, device : optional

    >>> BatchNorm1d(3)
    BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    _ndims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) images, per channel, as ``torch.nn.BatchNorm2d``.

    Parameters as :class:`BatchNorm1d`.
    """

    _ndims = (4,)
