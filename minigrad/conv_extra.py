"""More convolution and pooling, built on :mod:`minigrad.conv`: ``conv1d``, ``max_pool2d``
with ``padding``, ``adaptive_avg_pool2d``.

Each is a composition of operations that already have exact backward rules, so each gradient
is theirs:

* ``conv1d`` is ``conv2d`` on images one row high: (N, C, L) -> (N, C, 1, L);
* ``max_pool2d(padding=p)`` pads with ``-inf`` (:func:`minigrad.shape_ops.pad`), which never
  wins a window, then pools; the padding's gradient is dropped by ``pad``'s backward;
* ``adaptive_avg_pool2d`` is separable: output row ``i`` averages input rows
  ``floor(i*H/OH)`` to ``ceil((i+1)*H/OH)`` (PyTorch's bins), and the same for columns, so it
  is ``A_h @ x @ A_w.T`` with two small averaging matrices.
"""
from __future__ import annotations

import math
import numbers
from typing import Any

from ._utils import pair
from .backend import asarray
from .conv import conv2d
from .conv import max_pool2d as _max_pool2d
from .shape_ops import pad
from .tensor import Tensor, _tensor_arg

__all__ = ["conv1d", "max_pool2d", "adaptive_avg_pool2d"]


def _single(value: Any, where: str, name: str, low: int) -> int:
    if isinstance(value, (tuple, list)) and len(value) == 1:
        value = value[0]
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < low:
        raise ValueError(f"{where}: {name} must be an int of at least {low} (or a 1-tuple); "
                         f"got {value!r}")
    return int(value)


def conv1d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-D convolution (cross-correlation) of a batch of sequences, as
    ``torch.nn.functional.conv1d``.

    Parameters
    ----------
    x : Tensor of shape (N, C_in, L)
    weight : Tensor of shape (C_out, C_in / groups, k)
    bias : Tensor of shape (C_out,), optional
    stride, padding, dilation : int
        Step between windows, zeros on both ends, spacing of the kernel's taps.
    groups : int
        Split the channels into this many independent convolutions.

    Returns
    -------
    Tensor of shape (N, C_out, (L + 2*padding - dilation*(k-1) - 1) // stride + 1)
    """
    x = _tensor_arg(x, "conv1d")
    weight = _tensor_arg(weight, "conv1d")
    if x.ndim != 3:
        raise ValueError(f"conv1d: expected x of shape (N, C, L); got shape {x.shape}")
    if weight.ndim != 3:
        raise ValueError(f"conv1d: expected weight of shape (C_out, C_in / groups, k); got "
                         f"shape {weight.shape}")
    s = _single(stride, "conv1d", "stride", 1)
    p = _single(padding, "conv1d", "padding", 0)
    d = _single(dilation, "conv1d", "dilation", 1)
    y = conv2d(x.unsqueeze(2), weight.unsqueeze(2), bias, (1, s), (0, p), (1, d), groups)
    return y.squeeze(2)


def max_pool2d(x: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor:
    """The largest value of each window, as ``torch.nn.functional.max_pool2d``.

    Parameters
    ----------
    x : Tensor of shape (N, C, H, W)
    kernel_size : int or (int, int)
    stride : int or (int, int), optional
        By default ``kernel_size``.
    padding : int or (int, int)
        ``-inf`` added on both sides (it never wins a window); at most half the kernel, as
        PyTorch.
    dilation, ceil_mode, return_indices
        Only their defaults (1, False, False) are supported; others raise.

    Returns
    -------
    Tensor of shape (N, C, OH, OW), ``OH = (H + 2*padding - kh) // stride + 1``.
    See :func:`minigrad.conv.max_pool2d` for the gradient (ties: the first maximum).
    """
    _tensor_arg(x, "max_pool2d")
    if pair(dilation, "max_pool2d", "dilation", low=1) != (1, 1) or ceil_mode or return_indices:
        raise NotImplementedError("max_pool2d: dilation, ceil_mode and return_indices are not "
                                  "supported (only their defaults)")
    kh, kw = pair(kernel_size, "max_pool2d", "kernel_size", low=1)
    ph, pw = pair(padding, "max_pool2d", "padding", low=0)
    if 2 * ph > kh or 2 * pw > kw:
        raise ValueError(f"max_pool2d: pad should be at most half of effective kernel size, "
                         f"but got pad={(ph, pw)} and kernel_size={(kh, kw)}")
    if ph or pw:
        if x.ndim != 4:
            raise ValueError(f"max_pool2d: expected x of shape (N, C, H, W); got shape "
                             f"{x.shape}")
        x = pad(x, (pw, pw, ph, ph), value=-math.inf)
    return _max_pool2d(x, (kh, kw), stride)


def _bins(n: int, m: int) -> list[tuple[int, int]]:
    """PyTorch's adaptive bins: output ``i`` of ``m`` covers ``floor(i*n/m)`` to
    ``ceil((i+1)*n/m)`` of ``n``."""
    return [((i * n) // m, -(-((i + 1) * n) // m)) for i in range(m)]


def _averaging(n: int, m: int, like: Tensor) -> Tensor:
    """The (m, n) matrix whose row ``i`` averages bin ``i``."""
    rows = [[1.0 / (hi - lo) if lo <= j < hi else 0.0 for j in range(n)] for lo, hi in _bins(n, m)]
    return Tensor(asarray(rows, dtype=like.dtype, like=like.data))


def adaptive_avg_pool2d(x: Tensor, output_size: Any) -> Tensor:
    """Average over bins that cover the input, to a fixed output size, as
    ``torch.nn.functional.adaptive_avg_pool2d``.

    Parameters
    ----------
    x : Tensor of shape (N, C, H, W) or (C, H, W)
    output_size : int or (int or None, int or None)
        (OH, OW); None keeps that axis's size.

    Returns
    -------
    Tensor of shape (N, C, OH, OW)
        Output row ``i`` averages input rows ``floor(i*H/OH)`` to ``ceil((i+1)*H/OH)``
        (bins may overlap), columns likewise.
    """
    x = _tensor_arg(x, "adaptive_avg_pool2d")
    if x.ndim not in (3, 4):
        raise ValueError(f"adaptive_avg_pool2d: expected a 3D or 4D input (C, H, W) or "
                         f"(N, C, H, W); got shape {x.shape}")
    h, w = x.shape[-2:]
    size = output_size if isinstance(output_size, (tuple, list)) else (output_size,) * 2
    if len(size) != 2:
        raise ValueError(f"adaptive_avg_pool2d: output_size must be an int or a pair; got "
                         f"{output_size!r}")
    oh, ow = (h if size[0] is None else size[0]), (w if size[1] is None else size[1])
    for label, n in (("height", oh), ("width", ow)):
        if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 1:
            raise ValueError(f"adaptive_avg_pool2d: the output {label} must be a positive int; "
                             f"got {output_size!r}")
    if h == 0 or w == 0:
        raise ValueError(f"adaptive_avg_pool2d: empty input of shape {x.shape}")
    a_h = _averaging(h, oh, x)  # (OH, H)
    a_w = _averaging(w, ow, x)  # (OW, W)
    return a_h @ x @ a_w.T  # (OH, H) @ (..., H, W) @ (W, OW)
