"""Losses and layers written as functions of tensors.

``cross_entropy`` is *fused*: one operation whose backward rule is the famous
``softmax(logits) - onehot(targets)``, computed without ever forming ``exp`` of a large logit.
"""
from __future__ import annotations

from typing import Any

from .backend import asarray, is_integer, namespace
from .conv import conv2d, max_pool2d
from .tensor import Tensor, op

__all__ = ["log_softmax", "softmax", "cross_entropy", "nll_loss", "mse_loss",
           "relu", "sigmoid", "tanh", "leaky_relu", "linear", "conv2d", "max_pool2d"]


def _logsumexp(z: Any, axis: int) -> Any:
    """log(sum(exp(z))) along ``axis`` (kept), shifted by the max so no exp overflows."""
    xp = namespace(z)
    m = xp.max(z, axis=axis, keepdims=True)
    return m + xp.log(xp.sum(xp.exp(z - m), axis=axis, keepdims=True))


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """``x - logsumexp(x)`` along ``axis``, computed stably.

    Backward: ``g - softmax(x) * sum(g)`` along ``axis``.
    """
    xp = x._xp
    y = x.data - _logsumexp(x.data, axis)
    return op(y, (x,), lambda g, y: g - xp.exp(y) * xp.sum(g, axis=axis, keepdims=True),
              saved=(y,), name="log_softmax")


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``axis``, computed stably.

    Backward: ``p * (g - sum(g * p))`` along ``axis``.
    """
    xp = x._xp
    p = xp.exp(x.data - _logsumexp(x.data, axis))
    return op(p, (x,), lambda g, p: p * (g - xp.sum(g * p, axis=axis, keepdims=True)),
              saved=(p,), name="softmax")


def _check_targets(logits: Tensor, targets: Any, name: str) -> Any:
    t = targets.data if isinstance(targets, Tensor) else targets
    if isinstance(t, list):
        t = asarray(t, like=logits.data)
    if logits.ndim != 2:
        raise ValueError(f"{name}: expected logits of shape (N, C); got shape {logits.shape}")
    if t.ndim != 1 or t.shape[0] != logits.shape[0]:
        raise ValueError(f"{name}: expected targets of shape ({logits.shape[0]},) with one class "
                         f"index per row of logits {logits.shape}; got shape {tuple(t.shape)}")
    if not is_integer(logits._xp, t.dtype):
        raise TypeError(f"{name}: targets must be integer class indices; got dtype {t.dtype}")
    return t


def cross_entropy(logits: Tensor, targets: Any) -> Tensor:
    """Mean softmax cross-entropy of ``logits`` (N, C) against integer class ``targets`` (N,).

    Forward: ``mean(logsumexp(z) - z[target])``, stable for any logits.
    Backward: ``(softmax(z) - onehot(targets)) / N``, one fused formula.
    """
    t = _check_targets(logits, targets, "cross_entropy")
    xp, z = logits._xp, logits.data
    n, c = z.shape
    shifted = z - xp.max(z, axis=1, keepdims=True)  # softmax is unchanged by the shift
    e = xp.exp(shifted)  # each <= 1: never overflows
    total = xp.sum(e, axis=1, keepdims=True)
    # onehot (N, C), built class-major and transposed: stored batch-last like the logits of
    # nn.Linear, so that the elementwise operations below meet arrays of one memory layout
    onehot = xp.astype(xp.arange(c)[:, None] == t[None, :], z.dtype).T
    loss = -xp.sum((shifted - xp.log(total)) * onehot) / n  # log_softmax at the targets
    return op(loss, (logits,), lambda g, p, onehot: (p - onehot) * (g / n),
              saved=(e / total, onehot), name="cross_entropy")


def nll_loss(log_probs: Tensor, targets: Any) -> Tensor:
    """Mean negative log-likelihood: ``-mean(log_probs[i, targets[i]])``."""
    t = _check_targets(log_probs, targets, "nll_loss")
    xp = log_probs._xp
    rows = xp.arange(log_probs.shape[0])
    return -log_probs[rows, t].mean()


def mse_loss(prediction: Tensor, target: Any) -> Tensor:
    """Mean squared error ``mean((prediction - target) ** 2)``."""
    if not isinstance(target, Tensor):
        target = Tensor(target)
    if prediction.shape != target.shape:
        raise ValueError(f"mse_loss: prediction has shape {prediction.shape} but target has "
                         f"shape {target.shape}")
    diff = prediction - target
    return (diff * diff).mean()


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``x @ weight.T + bias``, as ``torch.nn.functional.linear``."""
    y = x @ weight.T
    return y + bias if bias is not None else y


def relu(x: Tensor) -> Tensor:
    return x.relu()


def sigmoid(x: Tensor) -> Tensor:
    return x.sigmoid()


def tanh(x: Tensor) -> Tensor:
    return x.tanh()


def leaky_relu(x: Tensor, slope: float = 0.01) -> Tensor:
    return x.leaky_relu(slope)
