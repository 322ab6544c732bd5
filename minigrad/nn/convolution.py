"""More convolution and pooling layers, as ``torch.nn``: :class:`Conv1d` and
:class:`AdaptiveAvgPool2d` (``Conv2d``, ``MaxPool2d`` and ``AvgPool2d`` are in
:mod:`.modules`)."""
from __future__ import annotations

import numbers
from typing import Any

from ..conv_extra import _single, adaptive_avg_pool2d, conv1d
from ..tensor import Tensor
from .modules import Module, _generator, _uniform_parameter, _conv_repr

__all__ = ["Conv1d", "AdaptiveAvgPool2d"]


class Conv1d(Module):
    """A 1-D convolution layer over sequences (N, C_in, L), as ``torch.nn.Conv1d``; see
    :func:`minigrad.functional.conv1d`.

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size : int
    stride, padding, dilation : int
    groups : int
        ``in_channels`` and ``out_channels`` must both be divisible by it.
    bias : bool
    rng, seed, dtype, device
        As for :class:`~minigrad.nn.Conv2d`: ``weight`` (out_channels, in_channels / groups,
        kernel_size), then ``bias``, uniform in ``(-1/sqrt(fan_in), 1/sqrt(fan_in))`` with
        ``fan_in = in_channels / groups * kernel_size``, PyTorch's default.

    >>> Conv1d(2, 4, 3, seed=0)
    Conv1d(2, 4, kernel_size=(3,), stride=(1,))
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", *, rng: Any = None, seed: int | None = None,
                 dtype: Any = "float64", device: str | None = None) -> None:
        super().__init__()
        for label, n in (("in_channels", in_channels), ("out_channels", out_channels),
                         ("groups", groups)):
            if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 1:
                raise ValueError(f"Conv1d: {label} must be a positive int; got {n!r}")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"Conv1d: in_channels ({in_channels}) and out_channels "
                             f"({out_channels}) must be divisible by groups ({groups})")
        if padding_mode != "zeros":
            raise NotImplementedError(f"Conv1d: padding_mode={padding_mode!r} is not "
                                      "supported (only 'zeros')")
        rng = _generator("Conv1d", rng, seed)
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = (_single(kernel_size, "Conv1d", "kernel_size", 1),)
        self.stride = (_single(stride, "Conv1d", "stride", 1),)
        self.padding = (_single(padding, "Conv1d", "padding", 0),)
        self.dilation = (_single(dilation, "Conv1d", "dilation", 1),)
        self.padding_mode = padding_mode
        k = self.kernel_size[0]
        bound = 1.0 / (in_channels // groups * k) ** 0.5
        self.weight = _uniform_parameter(rng, bound, (out_channels, in_channels // groups, k),
                                         dtype, device)
        self.bias = (_uniform_parameter(rng, bound, (out_channels,), dtype, device) if bias
                     else None)

    def forward(self, x: Tensor) -> Tensor:
        return conv1d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                      self.groups)

    def extra_repr(self) -> str:
        return _conv_repr(self)


class AdaptiveAvgPool2d(Module):
    """Average-pool to a fixed output size, as ``torch.nn.AdaptiveAvgPool2d``; see
    :func:`minigrad.functional.adaptive_avg_pool2d`.

    >>> AdaptiveAvgPool2d((1, 1))
    AdaptiveAvgPool2d(output_size=(1, 1))
    """

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        return adaptive_avg_pool2d(x, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"
