"""Convolution and max-pooling, each one engine operation with an exact backward rule.

Both are written with *im2col*: cut the input into the windows the kernel slides over, then
do the arithmetic on all windows at once.

``conv2d``
    The windows of ``x`` (with ``C * kh * kw`` numbers each) become the columns of one matrix
    ``cols``; the kernels become the rows of ``w`` (``C_out`` rows). The whole convolution is
    then ONE matrix product, ``y = w @ cols``, and its backward rules are the two of ``matmul``:

    * ``dw = dy @ cols.T``  -- how much each kernel weight contributed to each output;
    * ``dcols = w.T @ dy``  -- then *col2im* adds each column back onto the pixels it was cut
      from (windows overlap, so a pixel collects from every window that contains it).

``max_pool2d``
    The output is the largest value of each window; in backward the gradient goes to the one
    position that was the maximum -- the *first* one when several values tie (as in PyTorch),
    which happens often in upsampled images.

Arrays are in the (N, C, H, W) layout outside. Inside, ``conv2d`` copies the input once into a
*batch-last* buffer (C, H, W, N) and returns its output as an (N, C, H, W) view of a batch-last
array. The values are the same; only the order in memory differs. With the batch last, each
window position is a long contiguous run of memory (``OW * N`` numbers), so the im2col copy,
col2im and pooling all move memory in long runs, and the next layer gets its input batch-last
for free. Only standard array-API functions are used (``permute_dims``, ``reshape``, ``@``,
slicing), plus :func:`minigrad.backend.sliding_windows` and :func:`minigrad.backend.add_windows`,
so the same code runs on NumPy, CuPy and array-api-strict.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

from ._utils import pair
from .backend import (Array, add_windows, is_floating, sliding_windows, times_mask,
                      window_slice)
from .tensor import Tensor, _tensor_arg, op

__all__ = ["conv2d", "max_pool2d", "avg_pool2d"]

IntPair = int | tuple[int, int]


def conv2d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntPair = 1,
           padding: IntPair = 0, dilation: IntPair = 1, groups: int = 1) -> Tensor:
    """2-D convolution (cross-correlation, as in PyTorch) of a batch of images.

    Parameters
    ----------
    x : Tensor of shape (N, C_in, H, W)
        The images.
    weight : Tensor of shape (C_out, C_in, kh, kw)
        One ``C_in x kh x kw`` kernel per output channel.
    bias : Tensor of shape (C_out,), optional
        Added to every position of each output channel.
    stride : int or (int, int)
        Step between windows, vertically and horizontally.
    padding : int or (int, int)
        Zeros added on both sides of the height and of the width.
    dilation : int or (int, int)
        Spacing between the kernel's taps: a 3x3 kernel with dilation 2 covers 5x5 pixels.
    groups : int
        Split the input channels into ``groups`` groups, each convolved with its own
        ``C_out / groups`` kernels of ``C_in / groups`` channels (weight shape
        ``(C_out, C_in / groups, kh, kw)``); ``groups == C_in`` is a depthwise convolution.
        Built from ``groups`` ordinary convolutions, so gradients follow.

    Returns
    -------
    Tensor of shape (N, C_out, OH, OW)
        ``OH = (H + 2 * padding - dilation * (kh - 1) - 1) // stride + 1`` (likewise ``OW``),
        and ``out[n, o, i, j] = bias[o] + sum over c, a, b of
        weight[o, c, a, b] * x_padded[n, c, i * stride + a * dilation, j * stride + b * dilation]``.

    Example
    -------
    >>> import numpy as np
    >>> x = Tensor(np.ones((1, 1, 4, 4)))
    >>> w = Tensor(np.ones((2, 1, 3, 3)), requires_grad=True)
    >>> conv2d(x, w, padding=1).shape
    (1, 2, 4, 4)
    """
    _tensor_arg(x, "conv2d")
    for arg, t in (("weight", weight), ("bias", bias)):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(f"conv2d: {arg} must be a Tensor; got {type(t).__name__}. Wrap it "
                            "first: minigrad.tensor(...)")
    strides = pair(stride, "conv2d", "stride", low=1)
    paddings = pair(padding, "conv2d", "padding", low=0)
    dilations = pair(dilation, "conv2d", "dilation", low=1)
    if not isinstance(groups, int) or isinstance(groups, bool) or groups < 1:
        raise ValueError(f"conv2d: groups must be a positive int; got {groups!r}")
    if groups > 1:
        return _grouped_conv2d(x, weight, bias, strides, paddings, dilations, groups)
    return _conv2d(x, weight, bias, _conv_sizes(x, weight, bias, strides, paddings, dilations))


class _ConvSizes(NamedTuple):
    """The sizes of one convolution (groups=1), named as in :func:`conv2d`'s docstring."""

    n: int                    # x: (N, C, H, W)
    c: int
    h: int
    w: int
    c_out: int                # weight: (C_out, C, kh, kw)
    kh: int
    kw: int
    stride: tuple[int, int]   # (sh, sw)
    padding: tuple[int, int]  # (ph, pw)
    dilation: tuple[int, int]  # (dh, dw)
    hp: int                   # the padded input: (Hp, Wp) = (H + 2 * ph, W + 2 * pw)
    wp: int
    span_h: int               # the pixels a dilated kernel covers: (kh - 1) * dh + 1
    span_w: int
    oh: int                   # the output: (N, C_out, OH, OW)
    ow: int


def _conv_sizes(x: Tensor, weight: Tensor, bias: Tensor | None, stride: tuple[int, int],
                padding: tuple[int, int], dilation: tuple[int, int]) -> _ConvSizes:
    """Check conv2d's inputs (:func:`_check_conv`) and that the kernel fits; their sizes."""
    n, c, h, w, c_out, kh, kw = _check_conv(x, weight, bias)
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    hp, wp = h + 2 * ph, w + 2 * pw
    span_h, span_w = (kh - 1) * dh + 1, (kw - 1) * dw + 1  # the pixels a dilated kernel covers
    if span_h > hp or span_w > wp:
        dilated = dh > 1 or dw > 1
        spans = f" (covering {span_h}x{span_w} with dilation ({dh}, {dw}))" if dilated else ""
        raise ValueError(f"conv2d: the {kh}x{kw} kernel is larger than the input {h}x{w} with "
                         f"padding ({ph}, {pw}): {hp}x{wp}{spans}")
    oh, ow = (hp - span_h) // sh + 1, (wp - span_w) // sw + 1
    return _ConvSizes(n, c, h, w, c_out, kh, kw, (sh, sw), (ph, pw), (dh, dw), hp, wp,
                      span_h, span_w, oh, ow)


def _conv2d(x: Tensor, weight: Tensor, bias: Tensor | None, s: _ConvSizes) -> Tensor:
    """conv2d with one group: im2col, one matrix product, and the op with its VJP."""
    xp = x._xp
    cols = _im2col(xp, x.data, s)  # (C*kh*kw, OH*OW*N)
    # One matrix product gives every output: (C_out, C*kh*kw) @ (C*kh*kw, OH*OW*N).
    w_mat = xp.reshape(weight.data, (s.c_out, s.c * s.kh * s.kw))
    y = w_mat @ cols
    if bias is not None:
        y += xp.reshape(bias.data, (s.c_out, 1))
    out = xp.permute_dims(xp.reshape(y, (s.c_out, s.oh, s.ow, s.n)), (3, 0, 1, 2))  # NCHW
    need_x, need_w = x.requires_grad, weight.requires_grad
    vjp = _conv2d_vjp(xp, s, tuple(weight.shape), need_x, need_w, bias is not None)
    # cols (the big one) is kept only when the weight needs its gradient.
    saved = (w_mat, cols) if need_w else (w_mat,)
    parents = (x, weight) if bias is None else (x, weight, bias)
    return op(out, parents, vjp, saved=saved, name="conv2d")


def _im2col(xp: Any, x: Array, s: _ConvSizes) -> Array:
    """The windows of ``x`` (N, C, H, W), one column each: a matrix (C*kh*kw, OH*OW*N)."""
    n, c, h, w = s.n, s.c, s.h, s.w
    (ph, pw), (dh, dw) = s.padding, s.dilation
    # 1. The input, zero-padded, in a batch-last buffer (C, Hp, Wp, N), seen as (N, C, Hp, Wp).
    buffer = (xp.zeros if ph or pw else xp.empty)((c, s.hp, s.wp, n), dtype=x.dtype)
    buffer[:, ph:ph + h, pw:pw + w, :] = xp.permute_dims(x, (1, 2, 3, 0))
    padded = xp.permute_dims(buffer, (3, 0, 1, 2))
    # 2. im2col: the windows (N, C, OH, OW, kh, kw), reordered to (C, kh, kw, OH, OW, N) and
    #    copied into a matrix with one column per window: (C*kh*kw, OH*OW*N).
    windows = sliding_windows(padded, s.span_h, s.span_w, s.stride)
    if dh > 1 or dw > 1:  # keep every dh-th row and dw-th column of each window: the taps
        windows = windows[..., ::dh, ::dw]
    k = c * s.kh * s.kw  # numbers in one window: the length of one column
    return xp.reshape(xp.permute_dims(windows, (1, 4, 5, 2, 3, 0)), (k, s.oh * s.ow * n))


def _conv2d_vjp(xp: Any, s: _ConvSizes, w_shape: tuple[int, ...], need_x: bool, need_w: bool,
                has_bias: bool) -> Callable[..., tuple[Any, ...]]:
    """The VJP of ``y = w_mat @ cols (+ bias)``: matmul's two rules, then col2im for ``x``."""
    def vjp(g: Array, w_mat: Array, cols: Array | None = None) -> tuple[Any, ...]:
        # The output gradient as a matrix like y: (C_out, OH*OW*N) (free when g is batch-last).
        g_mat = xp.reshape(xp.permute_dims(g, (1, 2, 3, 0)), (s.c_out, s.oh * s.ow * s.n))
        gw = _weight_grad(xp, g_mat, cols, s.oh, w_shape) if need_w else None
        gb = xp.sum(g_mat, axis=1) if has_bias else None
        gx = None
        if need_x:
            d_cols = xp.matrix_transpose(w_mat) @ g_mat  # (C*kh*kw, OH*OW*N)
            gx = _col2im(xp, d_cols, s, g.dtype)
        return (gx, gw, gb) if has_bias else (gx, gw)
    return vjp


def _col2im(xp: Any, d_cols: Array, s: _ConvSizes, dtype: Any) -> Array:
    """The adjoint of :func:`_im2col`: each column added back onto the pixels it was cut from
    (windows overlap, so a pixel collects from every window that contains it); (N, C, H, W)."""
    n, c, h, w = s.n, s.c, s.h, s.w
    (ph, pw), (dh, dw) = s.padding, s.dilation
    d_windows = xp.permute_dims(xp.reshape(d_cols, (c, s.kh, s.kw, s.oh, s.ow, n)),
                                (5, 0, 3, 4, 1, 2))  # (N, C, OH, OW, kh, kw)
    d_padded = xp.permute_dims(xp.zeros((c, s.hp, s.wp, n), dtype=dtype), (3, 0, 1, 2))
    if dh > 1 or dw > 1:  # back to full windows, zeros between the taps
        full = xp.zeros((n, c, s.oh, s.ow, s.span_h, s.span_w), dtype=dtype)
        full[..., ::dh, ::dw] = d_windows
        d_windows = full
    d_padded = add_windows(d_padded, d_windows, s.stride)  # col2im
    return d_padded[:, :, ph:ph + h, pw:pw + w]


def max_pool2d(x: Tensor, kernel_size: IntPair, stride: IntPair | None = None) -> Tensor:
    """The largest value of each ``kernel_size`` window of a batch of images.

    Parameters
    ----------
    x : Tensor of shape (N, C, H, W)
        The images.
    kernel_size : int or (int, int)
        Height and width of the windows.
    stride : int or (int, int), optional
        Step between windows; by default ``kernel_size`` (windows side by side, no overlap).

    Returns
    -------
    Tensor of shape (N, C, OH, OW)
        ``OH = (H - kh) // stride + 1``: rows and columns that do not fill a window are
        dropped, as in PyTorch.

    Notes
    -----
    Backward sends each output's gradient to the position of its window that holds the
    maximum; when several hold it, to the first of them in row-major order, as PyTorch does.
    A window with a NaN outputs NaN, and its gradient goes to its last NaN, as in PyTorch.

    2x2 windows side by side (``kernel_size=2``, the usual case) take a faster path,
    :func:`_max_pool_2x2`, with the same results.
    """
    _tensor_arg(x, "max_pool2d")
    kh, kw = pair(kernel_size, "max_pool2d", "kernel_size", low=1)
    sh, sw = (kh, kw) if stride is None else pair(stride, "max_pool2d", "stride", low=1)
    if x.ndim != 4:
        raise ValueError(f"max_pool2d: expected x of shape (N, C, H, W); got shape {x.shape}")
    h, w = x.shape[2:]
    if kh > h or kw > w:
        raise ValueError(f"max_pool2d: the {kh}x{kw} window is larger than the {h}x{w} input")
    if (kh, kw, sh, sw) == (2, 2, 2, 2):
        return _max_pool_2x2(x)
    return _max_pool(x, (kh, kw), (sh, sw))


def _max_pool(x: Tensor, kernel: tuple[int, int], stride: tuple[int, int]) -> Tensor:
    """max_pool2d for any window and stride (its arguments checked): the general path."""
    xp = x._xp
    (h, w), (kh, kw), (sh, sw) = x.shape[2:], kernel, stride
    oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    rows = [window_slice(i, oh, sh) for i in range(kh)]  # row i of every window
    columns = [window_slice(j, ow, sw) for j in range(kw)]

    # Elementwise maximum over the kh*kw positions of the windows: each position is a strided
    # slice of x, i.e. sliding_windows(x)[..., i, j], taken without building the windows.
    y = x.data[:, :, rows[0], columns[0]]
    for i in range(kh):
        for j in range(kw):
            if i or j:
                y = xp.maximum(y, x.data[:, :, rows[i], columns[j]])

    # read here, not in backward, so that minigrad.compile can check it; only when a gradient
    # may be asked for (the read waits for a GPU)
    nan_windows = x.requires_grad and _has_nan(xp, y)
    vjp = _max_pool_vjp(xp, rows, columns, nan_windows)
    return op(y, (x,), vjp, saved=(x.data, y), name="max_pool2d")


def _max_pool_vjp(xp: Any, rows: list[slice], columns: list[slice], nan_windows: bool
                  ) -> Callable[[Array, Array, Array], Array]:
    """The VJP of :func:`_max_pool`: each window's gradient to its first maximum (row-major),
    found by comparing the positions with the maximum ``y`` one after the other."""
    def vjp(g: Array, x: Array, y: Array) -> Array:
        dx = xp.zeros_like(x)
        left = g  # the gradient of the windows whose maximum is not found yet
        positions = [(i, j) for i in range(len(rows)) for j in range(len(columns))]
        for number, (i, j) in enumerate(positions, start=1):  # row-major: first max wins
            if number < len(positions) or nan_windows:
                d = times_mask(left, x[:, :, rows[i], columns[j]] == y)
                left = left - d  # now 0 in the windows just served
            else:  # without NaN, y is one of the values: the windows left have it here
                d = left
            dx[:, :, rows[i], columns[j]] += d
        if nan_windows:  # NaN equals nothing: these windows' gradients go to their last NaN
            for i, j in reversed(positions):
                d = times_mask(left, xp.isnan(x[:, :, rows[i], columns[j]]))
                left = left - d
                dx[:, :, rows[i], columns[j]] += d
        return dx
    return vjp


def _max_pool_2x2(x: Tensor) -> Tensor:
    """max_pool2d with 2x2 windows side by side, in two halving steps.

    First the larger of each pair of neighbouring columns, then the larger of each pair of
    neighbouring rows of those: two ``maximum`` calls forward. Backward reverses the steps:
    each pair's gradient goes to the side that won (the left, the top on a tie: the window's
    first maximum in row-major order), four array calls where the general path compares all
    four positions with the maximum. Same values and gradients as the general path.
    """
    xp = x._xp
    oh, ow = x.shape[2] // 2, x.shape[3] // 2
    rows, top, bottom = slice(0, 2 * oh), slice(0, 2 * oh, 2), slice(1, 2 * oh, 2)
    left, right = slice(0, 2 * ow, 2), slice(1, 2 * ow, 2)  # an odd last row or column: unused
    # (N, C, 2*OH, OW): the larger of each pair of columns; (N, C, OH, OW): of each pair of rows
    pairs = xp.maximum(x.data[:, :, rows, left], x.data[:, :, rows, right])
    y = xp.maximum(pairs[:, :, top, :], pairs[:, :, bottom, :])

    nan_windows = x.requires_grad and _has_nan(xp, y)  # read now: see max_pool2d
    rule = _pair_winner_with_nan if nan_windows else _pair_winner

    def vjp(g: Array, x: Array, pairs: Array) -> Array:
        left_won = rule(xp, x[:, :, rows, left], x[:, :, rows, right])
        top_won = rule(xp, pairs[:, :, top, :], pairs[:, :, bottom, :])
        g_pairs = xp.empty_like(pairs)  # each pair's gradient, sent to its top or bottom row
        g_pairs[:, :, top, :] = times_mask(g, top_won)
        g_pairs[:, :, bottom, :] = g - g_pairs[:, :, top, :]
        odd = x.shape[2] % 2 or x.shape[3] % 2
        dx = (xp.zeros_like if odd else xp.empty_like)(x)
        dx[:, :, rows, left] = times_mask(g_pairs, left_won)
        dx[:, :, rows, right] = g_pairs - dx[:, :, rows, left]
        return dx

    return op(y, (x,), vjp, saved=(x.data, pairs), name="max_pool2d")


def _pair_winner(xp: Any, first: Array, second: Array) -> Array:
    """Where ``first`` holds the maximum of the pair, ties included (no NaN in the pair)."""
    return second <= first


def _pair_winner_with_nan(xp: Any, first: Array, second: Array) -> Array:
    """:func:`_pair_winner` where NaN counts as the maximum and the later NaN wins (PyTorch)."""
    return xp.logical_not(xp.logical_or(second > first, xp.isnan(second)))


def _has_nan(xp: Any, y: Array) -> bool:
    """Whether a pooled output is NaN (NaN in its window): their gradients need NaN's rule.

    One quick pass over the (small) output in the forward pass; reading the answer waits for
    the device on a GPU. Read in backward instead, it would keep ``minigrad.compile`` from
    replaying the step: a value read there could no longer be checked before the replay
    changes the gradients."""
    # max() carries a NaN through: one pass over y and no array of booleans
    return is_floating(xp, y.dtype) and math.prod(y.shape) > 0 and bool(xp.isnan(xp.max(y)))


def avg_pool2d(x: Tensor, kernel_size: IntPair, stride: IntPair | None = None,
               padding: IntPair = 0) -> Tensor:
    """The mean of each ``kernel_size`` window of a batch of images, as PyTorch's.

    Parameters
    ----------
    x : Tensor of shape (N, C, H, W)
    kernel_size : int or (int, int)
    stride : int or (int, int), optional
        Step between windows; by default ``kernel_size``.
    padding : int or (int, int)
        Zeros added on both sides, at most half the kernel; they count in the mean (PyTorch's
        default ``count_include_pad=True``).

    Returns
    -------
    Tensor of shape (N, C, OH, OW), ``OH = (H + 2 * padding - kh) // stride + 1``.

    Notes
    -----
    Backward: each window's gradient, divided by ``kh * kw``, is added to every position of
    the window (where windows overlap, the shares add up).
    """
    _tensor_arg(x, "avg_pool2d")
    kh, kw = pair(kernel_size, "avg_pool2d", "kernel_size", low=1)
    sh, sw = (kh, kw) if stride is None else pair(stride, "avg_pool2d", "stride", low=1)
    ph, pw = pair(padding, "avg_pool2d", "padding", low=0)
    if x.ndim != 4:
        raise ValueError(f"avg_pool2d: expected x of shape (N, C, H, W); got shape {x.shape}")
    if 2 * ph > kh or 2 * pw > kw:
        raise ValueError(f"avg_pool2d: padding ({ph}, {pw}) must be at most half the kernel "
                         f"size ({kh}, {kw})")
    if not is_floating(x._xp, x.dtype):
        raise TypeError(f"avg_pool2d: x must be floating point; got dtype {x.dtype}")
    h, w = x.shape[2:]
    hp, wp = h + 2 * ph, w + 2 * pw
    if kh > hp or kw > wp:
        raise ValueError(f"avg_pool2d: the {kh}x{kw} window is larger than the {h}x{w} input "
                         f"with padding ({ph}, {pw})")
    return _avg_pool(x, (kh, kw), (sh, sw), (ph, pw))


def _avg_pool(x: Tensor, kernel: tuple[int, int], stride: tuple[int, int],
              padding: tuple[int, int]) -> Tensor:
    """avg_pool2d once its arguments are checked: the sum of the kh*kw positions, divided."""
    xp = x._xp
    (n, c, h, w), (kh, kw), (sh, sw), (ph, pw) = x.shape, kernel, stride, padding
    hp, wp = h + 2 * ph, w + 2 * pw
    oh, ow = (hp - kh) // sh + 1, (wp - kw) // sw + 1
    rows = [window_slice(i, oh, sh) for i in range(kh)]
    columns = [window_slice(j, ow, sw) for j in range(kw)]
    padded = x.data
    if ph or pw:
        padded = xp.zeros((n, c, hp, wp), dtype=x.dtype)
        padded[:, :, ph:ph + h, pw:pw + w] = x.data
    y = padded[:, :, rows[0], columns[0]]
    for i in range(kh):
        for j in range(kw):
            if i or j:
                y = y + padded[:, :, rows[i], columns[j]]
    y = y / (kh * kw)

    def vjp(g: Array) -> Array:
        share = g / (kh * kw)
        dx = xp.zeros((n, c, hp, wp), dtype=g.dtype)
        for i in range(kh):
            for j in range(kw):
                dx[:, :, rows[i], columns[j]] += share
        return dx[:, :, ph:ph + h, pw:pw + w]

    return op(y, (x,), vjp, name="avg_pool2d")


def _grouped_conv2d(x: Tensor, weight: Tensor, bias: Tensor | None, stride: tuple[int, int],
                    padding: tuple[int, int], dilation: tuple[int, int], groups: int) -> Tensor:
    """conv2d with ``groups`` > 1: one ordinary convolution per group, joined on channels."""
    from .reshaping import concatenate

    if x.ndim != 4 or weight.ndim != 4:
        raise ValueError(f"conv2d: expected x (N, C, H, W) and weight (C_out, C_in / groups, kh, "
                         f"kw); got shapes {x.shape} and {weight.shape}")
    c, c_out, c_group = x.shape[1], weight.shape[0], weight.shape[1]
    if c % groups or c_out % groups:
        raise ValueError(f"conv2d: groups={groups} must divide both the input channels ({c}) "
                         f"and the output channels ({c_out})")
    if c_group * groups != c:
        raise ValueError(f"conv2d: with groups={groups}, weight (shape {weight.shape}) must have "
                         f"{c // groups} input channels per group (C_in / groups); it has "
                         f"{c_group}")
    ci, co = c // groups, c_out // groups
    outs = [conv2d(x[:, k * ci:(k + 1) * ci], weight[k * co:(k + 1) * co],
                   None if bias is None else bias[k * co:(k + 1) * co],
                   stride, padding, dilation)
            for k in range(groups)]
    return concatenate(outs, axis=1)


# ---------------------------------------------------------------------------------------------
# Helpers


def _weight_grad(xp: Any, g_mat: Array, cols: Array, oh: int, w_shape: tuple[int, ...]
                 ) -> Array:
    """``g_mat @ cols.T`` reshaped to the weight's shape, summed over the OH output rows.

    Both matrices are short and very wide (C_out or C*kh*kw rows, OH*OW*N columns). One BLAS
    product over the full width is slow for such shapes; the same sum, cut into OH products
    of OW*N columns each (a batched matmul, then a sum), keeps each piece in cache and is
    several times faster on a CPU.
    """
    c_out, k = g_mat.shape[0], cols.shape[0]
    g_rows = xp.permute_dims(xp.reshape(g_mat, (c_out, oh, -1)), (1, 2, 0))  # (OH, OW*N, C_out)
    col_rows = xp.permute_dims(xp.reshape(cols, (k, oh, -1)), (1, 0, 2))  # (OH, K, OW*N)
    return xp.reshape(xp.matrix_transpose(xp.sum(col_rows @ g_rows, axis=0)), w_shape)


def _check_conv(x: Tensor, weight: Tensor, bias: Tensor | None) -> tuple[int, ...]:
    """Check the shapes and dtypes of conv2d's inputs; return (N, C, H, W, C_out, kh, kw)."""
    if x.ndim != 4:
        hint = " (add a batch axis: x.reshape(1, *x.shape))" if x.ndim == 3 else ""
        raise ValueError(f"conv2d: expected x of shape (N, C, H, W); got shape {x.shape}{hint}")
    if weight.ndim != 4:
        raise ValueError(f"conv2d: expected weight of shape (C_out, C_in, kh, kw); got shape "
                         f"{weight.shape}")
    n, c, h, w = x.shape
    c_out, c_in, kh, kw = weight.shape
    if c != c_in:
        raise ValueError(f"conv2d: x has {c} channels (shape {x.shape}) but weight expects "
                         f"{c_in} (weight shape {weight.shape} is (C_out, C_in, kh, kw))")
    if bias is not None and bias.shape != (c_out,):
        raise ValueError(f"conv2d: expected bias of shape ({c_out},), one per output channel; "
                         f"got shape {bias.shape}")
    for name, t in (("x", x), ("weight", weight)) + ((("bias", bias),) if bias is not None
                                                      else ()):
        if not is_floating(x._xp, t.dtype):
            raise TypeError(f"conv2d: {name} must be floating point; got dtype {t.dtype}")
        if t.dtype != x.dtype:
            raise TypeError(f"conv2d: x has dtype {x.dtype} but {name} has dtype {t.dtype}; "
                            f"convert one of them, e.g. x.astype({str(t.dtype)!r})")
    return n, c, h, w, c_out, kh, kw
