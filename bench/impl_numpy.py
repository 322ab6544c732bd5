"""The hand-tuned NumPy contenders: the fastest plain NumPy we know how to write.

These are the baselines the targets are measured against, so they are not strawmen:

* every intermediate array is allocated once, up front, and written with ``out=``;
  reductions are the arrays' own methods (``z.sum(...)``), which skip the Python wrapper of
  ``np.sum``;
* the softmax cross-entropy gradient is fused, ``(softmax(z) - onehot) * lr / N``, with the
  learning rate folded into it, so the update is a single in-place subtraction;
* all parameters are views into one flat vector and all gradients views into another, so the
  optimizer updates every parameter with one or two calls;
* LeNet-5 runs channels-last (NHWC): im2col is one strided view and one copy, max-pooling
  runs *before* the ReLU (they commute, and the pooled array is 4x smaller), the 2x2 pooling
  finds the first maximum of each window with three comparisons, and col2im is 25 slice-adds.

They compute exactly what the other contenders compute (same weights, same batches, same
loss), which the harness checks through the first losses.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from .cases import Case, Data

__all__ = ["make_step"]


class _Flat:
    """Parameters (or gradients) as views into one flat array, in the given shapes."""

    def __init__(self, shapes: list[tuple[int, ...]], dtype: str) -> None:
        sizes = [int(np.prod(s)) for s in shapes]
        self.flat = np.zeros(sum(sizes), dtype=dtype)
        self.views = []
        start = 0
        for shape, size in zip(shapes, sizes):
            self.views.append(self.flat[start:start + size].reshape(shape))
            start += size


def _softmax_ce_grad_t(z: np.ndarray, y: np.ndarray, cols: np.ndarray, m: np.ndarray,
                       s: np.ndarray, scale: float) -> np.ndarray:
    """Turn logits ``z`` (C, N) in place into ``(softmax(z) - onehot(y)) * scale``; the loss.

    Classes run along axis 0. ``m`` and ``s`` are (1, N) scratch arrays. The loss is
    ``mean(log(sum(exp(z - m))) - (z - m)[y])``, the number every contender reports.
    """
    z.max(axis=0, keepdims=True, out=m)
    np.subtract(z, m, out=z)
    picked = z[y, cols]
    np.exp(z, out=z)
    z.sum(axis=0, keepdims=True, out=s)
    loss = (np.log(s).sum() - picked.sum()) / len(y)
    np.multiply(s, 1.0 / scale, out=s)
    np.divide(z, s, out=z)
    z[y, cols] -= scale
    return loss


def _mlp(case: Case, data: Data, params: list[np.ndarray]) -> Callable[[], object]:
    """An MLP stored feature-major: activations (features, N), weights (out, in).

    NumPy reduces an (N, C) array over its short last axis slowly (a Python-free but per-row
    loop), so the classes go first: the softmax reductions run over axis 0 of (C, N), i.e.
    elementwise over long rows. Bias gradients, sums over the batch, are matrix-vector
    products with a vector of ones (BLAS), many times faster than ``g.sum(axis=1)`` here.
    """
    dt = np.dtype(case.dtype)
    sizes = case.sizes
    n_layers = len(sizes) - 1
    shapes = []
    for i, o in itertools.pairwise(sizes):
        shapes += [(o, i), (o,)]
    theta, grad = _Flat(shapes, case.dtype), _Flat(shapes, case.dtype)
    for view, value in zip(theta.views, params):
        view[...] = value
    W, b = theta.views[0::2], [v[:, None] for v in theta.views[1::2]]
    dW, db = grad.views[0::2], grad.views[1::2]

    batches = data.batches
    nb = batches[0][0].shape[0]
    assert all(x.shape[0] == nb for x, _ in batches), "the MLP cases use full batches only"
    # acts[k]: the output of layer k (acts[0], the input, is set by each step); deltas and masks
    # of the hidden layers (none for layer 0)
    acts: list[Any] = [None] + [np.empty((o, nb), dt) for o in sizes[1:]]
    deltas: list[Any] = [None] + [np.empty((o, nb), dt) for o in sizes[1:-1]]
    masks: list[Any] = [None] + [np.empty((o, nb), dt) for o in sizes[1:-1]]
    m, s = np.empty((1, nb), dt), np.empty((1, nb), dt)
    cols = np.arange(nb)
    ones = np.ones(nb, dt)
    scale = case.lr / nb
    state = {"i": 0}

    def step() -> object:
        x, y = batches[state["i"]]
        state["i"] = (state["i"] + 1) % len(batches)
        acts[0] = x.T                      # a view: BLAS reads it transposed
        for k in range(n_layers):          # forward: z = W @ a + b, ReLU on hidden layers
            z = acts[k + 1]
            np.matmul(W[k], acts[k], out=z)
            z += b[k]
            if k < n_layers - 1:
                np.maximum(z, 0, out=z)
        g = acts[-1]
        loss = _softmax_ce_grad_t(g, y, cols, m, s, scale)   # g = lr * dL/dz, in place
        for k in range(n_layers - 1, -1, -1):
            np.matmul(g, acts[k].T, out=dW[k])
            np.matmul(g, ones, out=db[k])  # the sum over the batch, by BLAS
            if k:
                d = deltas[k]
                np.matmul(W[k].T, g, out=d)
                np.greater(acts[k], 0, out=masks[k], casting="unsafe")   # ReLU' as 0/1
                d *= masks[k]
                g = d
        theta.flat -= grad.flat            # the lr is already in the gradient
        return loss

    return step


def _lenet(case: Case, data: Data, params: list[np.ndarray]) -> Callable[[], object]:
    """LeNet-5 in the batch-last layout (C, H, W, N), the layout of cuda-convnet.

    With the batch as the innermost axis, every slice that im2col, col2im and pooling take is
    a contiguous run of ``OW * N`` values, so NumPy's inner loops are long. The fully connected
    layers run feature-major, (features, N), so the conv output needs no transpose either.
    """
    dt = np.dtype(case.dtype)
    w1, b1, w2, b2, f1, c1, f2, c2, f3, c3 = params
    shapes = [(6, 25), (6,), (16, 150), (16,), (120, 400), (120,), (84, 120), (84,),
              (10, 84), (10,)]
    theta, grad, vel = (_Flat(shapes, case.dtype) for _ in range(3))
    for view, value in zip(theta.views, (w1.reshape(6, 25), b1, w2.reshape(16, 150), b2,
                                         f1, c1, f2, c2, f3, c3)):
        view[...] = value
    W1, B1, W2, B2, F1, C1, F2, C2, F3, C3 = theta.views
    dW1, dB1, dW2, dB2, dF1, dC1, dF2, dC2, dF3, dC3 = grad.views
    mu = case.momentum

    def buffers(n: int) -> dict:
        e = lambda *shape, dtype=dt: np.empty(shape, dtype)
        return {
            "x": e(32, 32, n), "cols1": e(25, 28, 28, n), "z1": e(6, 28, 28, n),
            "hm1": e(6, 28, 14, n), "lw1": e(6, 28, 14, n, dtype=bool),
            "p1": e(6, 14, 14, n), "tw1": e(6, 14, 14, n, dtype=bool),
            "cols2": e(6, 5, 5, 10, 10, n), "z2": e(16, 10, 10, n),
            "hm2": e(16, 10, 5, n), "lw2": e(16, 10, 5, n, dtype=bool),
            "p2": e(16, 5, 5, n), "tw2": e(16, 5, 5, n, dtype=bool),
            "h1": e(120, n), "h2": e(84, n), "out": e(10, n), "m": e(1, n), "s": e(1, n),
            "cols": np.arange(n), "mask1": e(120, n), "mask2": e(84, n), "mask3": e(400, n),
            "d_h2": e(84, n), "d_h1": e(120, n), "d_a0": e(400, n),
            "gh2": e(16, 10, 5, n), "d_z2": e(16, 10, 10, n), "d_cols2": e(6, 5, 5, 10, 10, n),
            "dW2t": e(150, 16), "d_p1": e(6, 14, 14, n), "mask4": e(6, 14, 14, n),
            "gh1": e(6, 28, 14, n), "d_z1": e(6, 28, 28, n), "dW1t": e(25, 6),
        }

    bufs = {n: buffers(n) for n in {len(x) for x, _ in data.batches}}
    strided = np.lib.stride_tricks.as_strided

    def pool(z: np.ndarray, hm: np.ndarray, lw: np.ndarray, p: np.ndarray,
             tw: np.ndarray) -> None:
        """2x2 max-pool of (C, H, W, N): the max of each pair of columns, then of rows.

        ``lw`` (left wins) and ``tw`` (top wins) remember the first maximum of each window,
        in row-major order, as PyTorch picks it: ties go left, then up.
        """
        left, right = z[:, :, 0::2], z[:, :, 1::2]
        np.maximum(left, right, out=hm)
        np.greater_equal(left, right, out=lw)
        top, bottom = hm[:, 0::2], hm[:, 1::2]
        np.maximum(top, bottom, out=p)
        np.greater_equal(top, bottom, out=tw)

    def unpool(g: np.ndarray, lw: np.ndarray, tw: np.ndarray, gh: np.ndarray,
               dz: np.ndarray) -> None:
        """Send each pooled gradient to the first maximum of its window."""
        np.multiply(g, tw, out=gh[:, 0::2])
        np.subtract(g, gh[:, 0::2], out=gh[:, 1::2])
        np.multiply(gh, lw, out=dz[:, :, 0::2])
        np.subtract(gh, dz[:, :, 0::2], out=dz[:, :, 1::2])

    def train_batch(images: np.ndarray, y: np.ndarray) -> object:
        n = len(images)
        B = bufs[n]
        x = B["x"]
        x[...] = images[:, 0].transpose(1, 2, 0)           # (N, 1, 32, 32) -> (32, 32, N)
        # conv1: im2col as one copy of a strided view, then (6, 25) @ (25, 28*28*N)
        s_h, s_w, s_n = x.strides
        cols1 = B["cols1"]
        cols1.reshape(5, 5, 28, 28, n)[...] = strided(x, (5, 5, 28, 28, n),
                                                      (s_h, s_w, s_h, s_w, s_n))
        z1 = B["z1"]
        np.matmul(W1, cols1.reshape(25, -1), out=z1.reshape(6, -1))
        z1 += B1[:, None, None, None]
        p1 = B["p1"]
        pool(z1, B["hm1"], B["lw1"], p1, B["tw1"])
        np.maximum(p1, 0, out=p1)                          # ReLU after the pool: they commute
        # conv2: (16, 150) @ (150, 10*10*N)
        s_c, s_h, s_w, s_n = p1.strides
        cols2 = B["cols2"]
        cols2[...] = strided(p1, (6, 5, 5, 10, 10, n), (s_c, s_h, s_w, s_h, s_w, s_n))
        z2 = B["z2"]
        np.matmul(W2, cols2.reshape(150, -1), out=z2.reshape(16, -1))
        z2 += B2[:, None, None, None]
        p2 = B["p2"]
        pool(z2, B["hm2"], B["lw2"], p2, B["tw2"])
        np.maximum(p2, 0, out=p2)
        # fully connected, feature-major: (16, 5, 5, N) is already (400, N) in PyTorch's order
        a0, h1, h2, out = p2.reshape(400, n), B["h1"], B["h2"], B["out"]
        np.matmul(F1, a0, out=h1)
        h1 += C1[:, None]
        np.maximum(h1, 0, out=h1)
        np.matmul(F2, h1, out=h2)
        h2 += C2[:, None]
        np.maximum(h2, 0, out=h2)
        np.matmul(F3, h2, out=out)
        out += C3[:, None]
        # softmax cross-entropy over axis 0; out becomes lr * dL/dlogits
        loss = _softmax_ce_grad_t(out, y, B["cols"], B["m"], B["s"], case.lr / n)
        # The three dense layers' backward passes are written out one after the other on
        # purpose (duplicates lists them as repeats): the tuned baseline makes no Python call
        # it can avoid, not even a helper's or a loop's.
        np.matmul(out, h2.T, out=dF3)
        out.sum(axis=1, out=dC3)
        d2 = B["d_h2"]
        np.matmul(F3.T, out, out=d2)
        np.greater(h2, 0, out=B["mask2"], casting="unsafe")
        d2 *= B["mask2"]
        np.matmul(d2, h1.T, out=dF2)
        d2.sum(axis=1, out=dC2)
        d1 = B["d_h1"]
        np.matmul(F2.T, d2, out=d1)
        np.greater(h1, 0, out=B["mask1"], casting="unsafe")
        d1 *= B["mask1"]
        np.matmul(d1, a0.T, out=dF1)
        d1.sum(axis=1, out=dC1)
        d0 = B["d_a0"]
        np.matmul(F1.T, d1, out=d0)
        np.greater(a0, 0, out=B["mask3"], casting="unsafe")   # ReLU' on the pooled array
        d0 *= B["mask3"]
        # pool2 and conv2 backward
        dz2 = B["d_z2"]
        unpool(d0.reshape(16, 5, 5, n), B["lw2"], B["tw2"], B["gh2"], dz2)
        dz2 = dz2.reshape(16, -1)
        np.matmul(cols2.reshape(150, -1), dz2.T, out=B["dW2t"])   # the faster of the two
        dW2[...] = B["dW2t"].T                                    # orders for BLAS here
        dz2.sum(axis=1, out=dB2)
        dcols2 = B["d_cols2"]
        np.matmul(W2.T, dz2, out=dcols2.reshape(150, -1))
        # col2im: add each window's gradient back where it was read (25 slice-adds)
        dp1 = B["d_p1"]
        dp1[...] = 0
        for i in range(5):
            for j in range(5):
                dp1[:, i:i + 10, j:j + 10] += dcols2[:, i, j]
        np.greater(p1, 0, out=B["mask4"], casting="unsafe")
        dp1 *= B["mask4"]
        # pool1 and conv1 backward (no gradient for the images)
        dz1 = B["d_z1"]
        unpool(dp1, B["lw1"], B["tw1"], B["gh1"], dz1)
        # dW1 = dz1 @ cols1.T over 28*28*N columns: cut into the 28 output rows, one batched
        # product of cache-sized pieces and a sum (twice as fast as one long product here)
        rows = np.matmul(cols1.reshape(25, 28, -1).transpose(1, 0, 2),
                         dz1.reshape(6, 28, -1).transpose(1, 2, 0))
        rows.sum(axis=0, out=B["dW1t"])
        dW1[...] = B["dW1t"].T
        dz1.reshape(6, -1).sum(axis=1, out=dB1)
        # SGD with momentum, PyTorch's form, lr folded in: v = mu v + lr g; theta -= v
        vel.flat *= mu
        vel.flat += grad.flat
        theta.flat -= vel.flat
        return loss

    def epoch() -> object:
        loss = None
        for x, y in data.batches:
            loss = train_batch(x, y)
        return loss

    return epoch


def make_step(case: Case, data: Data, params: list[np.ndarray]) -> Callable[[], object]:
    """One unit of ``case`` (a step, or an epoch for LeNet-5) in hand-tuned NumPy."""
    if case.kind == "gpt":
        raise NotImplementedError("the tuned NumPy loop has no attention (no GPT)")
    return _lenet(case, data, params) if case.kind == "lenet" else _mlp(case, data, params)
