"""Losses, activations and layers written as functions of tensors (``torch.nn.functional``).

``cross_entropy`` is *fused*: one operation whose backward rule is the famous
``softmax(logits) - onehot(targets)``, computed without ever forming ``exp`` of a large logit.
Each activation is one operation with its derivative written beside it.

Targets are checked as PyTorch checks them: a class index outside ``0..C-1`` (other than
``ignore_index``) is an error, never a silent wrong loss. Reading the targets' values costs
nothing for arrays in host memory; on a GPU that would wait for the device, so there an
out-of-range target makes the loss NaN instead.
"""
from __future__ import annotations

import math
from typing import Any

from .backend import (asarray, check_same_device, is_floating, is_integer, namespace,
                      reduce_max, reduce_sum, times_mask)
from .backend import take as backend_take
from .conv import avg_pool2d, conv2d
from .conv_extra import adaptive_avg_pool2d, conv1d, max_pool2d  # max_pool2d with padding
from .losses import huber_loss, l1_loss, smooth_l1_loss
from .normalization import batch_norm, layer_norm
from .random_ops import dropout
from .shape_ops import pad
from .attention import causal_mask, scaled_dot_product_attention  # issue 30
from .broadcast import broadcast_shapes
from .elementwise import leaky_relu, sigmoid, where
from .axes import _axis_index
from .tensor import Tensor, _host_values, _tensor_arg, gradient_product, op, relu, tanh

__all__ = ["log_softmax", "softmax", "cross_entropy", "nll_loss", "mse_loss",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "one_hot",
           "relu", "sigmoid", "tanh", "leaky_relu", "gelu", "silu", "elu", "softplus",
           "hardtanh", "logsigmoid", "linear", "conv2d", "max_pool2d", "avg_pool2d",
           # issue 29 (each defined in its own module, re-exported here)
           "layer_norm", "batch_norm", "dropout", "pad", "conv1d", "adaptive_avg_pool2d",
           "l1_loss", "huber_loss", "smooth_l1_loss",
           "scaled_dot_product_attention", "causal_mask"]

_REDUCTIONS = ("mean", "sum", "none")


def _logsumexp(z: Any, axis: int) -> Any:
    """log(sum(exp(z))) along ``axis`` (kept), shifted by the max so no exp overflows."""
    xp = namespace(z)
    if z.shape[axis] == 0:  # a sum of no terms is 0: log(0) = -inf (the result is empty anyway)
        kept = tuple(1 if i == axis % z.ndim else n for i, n in enumerate(z.shape))
        return xp.full(kept, float("-inf"), dtype=z.dtype)
    m = xp.max(z, axis=axis, keepdims=True)
    m = xp.where(xp.isinf(m), 0.0, m)  # a row all -inf: no shift (-inf - -inf would be NaN)
    return m + xp.log(xp.sum(xp.exp(z - m), axis=axis, keepdims=True))


def log_softmax(x: Tensor, axis: int = -1, *, dim: int | None = None) -> Tensor:
    """``x - logsumexp(x)`` along ``axis`` (or ``dim``), computed stably.

    Backward: ``g - softmax(x) * sum(g)`` along ``axis``.
    """
    x, axis = _softmax_args(x, axis, dim, "log_softmax")
    if x.ndim == 0:  # one value: a softmax over one axis of size 1, as PyTorch
        return log_softmax(x.reshape(1), 0).reshape(())
    xp = x._xp
    y = x.data - _logsumexp(x.data, axis)
    return op(y, (x,), lambda g, y: g - xp.exp(y) * xp.sum(g, axis=axis, keepdims=True),
              saved=(y,), name="log_softmax")


def softmax(x: Tensor, axis: int = -1, *, dim: int | None = None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``axis`` (or ``dim``), computed stably.

    Backward: ``p * (g - sum(g * p))`` along ``axis``.
    """
    x, axis = _softmax_args(x, axis, dim, "softmax")
    if x.ndim == 0:
        return softmax(x.reshape(1), 0).reshape(())
    xp = x._xp
    p = xp.exp(x.data - _logsumexp(x.data, axis))
    return op(p, (x,), lambda g, p: p * (g - xp.sum(g * p, axis=axis, keepdims=True)),
              saved=(p,), name="softmax")


def _floating_arg(x: Any, name: str, arg: str) -> Tensor:
    """``x``, a floating-point Tensor (PyTorch refuses integer logits and log-probabilities)."""
    x = _tensor_arg(x, name)
    if not is_floating(x._xp, x.dtype):
        raise TypeError(f"{name}: {arg} must be floating point; got dtype {x.dtype}. Convert "
                        "them: x.astype('float64')")
    return x


def _softmax_args(x: Any, axis: Any, dim: Any, name: str) -> tuple[Tensor, int]:
    """The tensor and its one axis (an int in range, as PyTorch's ``dim``) of a softmax."""
    x = _tensor_arg(x, name)
    if not is_floating(x._xp, x.dtype):
        raise TypeError(f"{name}: expected a floating-point tensor; got dtype {x.dtype} (PyTorch "
                        f"refuses integers too). Convert it: x.astype('float64')")
    if dim is not None:
        axis = dim
    return x, _axis_index(x.ndim, axis, name)


# ---------------------------------------------------------------------------------------------
# Checking arguments


def _check_reduction(reduction: str, name: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{name}: reduction must be 'mean', 'sum' or 'none'; got {reduction!r}")


def _reduce(losses: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.mean()


def _check_targets(logits: Tensor, targets: Any, name: str) -> Any:
    """The class-index targets as an array, after checking shape and dtype (not values)."""
    t = targets.data if isinstance(targets, Tensor) else targets
    if isinstance(t, (list, int)):
        t = asarray(t, like=logits.data)
    if not hasattr(t, "ndim") or not hasattr(t, "dtype"):
        raise TypeError(f"{name}: targets must be an integer array or tensor of class indices; "
                        f"got {type(targets).__name__}")
    if type(t) is not type(logits.data):  # e.g. targets on the CPU and logits on the GPU
        check_same_device(name, logits.data, t)
    if logits.ndim != 2:
        raise ValueError(f"{name}: expected logits of shape (N, C); got shape {logits.shape}")
    if t.ndim != 1 or t.shape[0] != logits.shape[0]:
        raise ValueError(f"{name}: expected targets of shape ({logits.shape[0]},) with one class "
                         f"index per row of logits {logits.shape}; got shape {tuple(t.shape)}")
    if not is_integer(logits._xp, t.dtype):
        raise TypeError(f"{name}: targets must be integer class indices; got dtype {t.dtype}")
    return t


def _check_target_values(t: Any, c: int, ignore_index: int | None, name: str) -> None:
    """Raise if a target is outside 0..c-1 and is not ``ignore_index`` (host arrays only)."""
    if not _host_values(t) or t.shape[0] == 0:
        return
    xp = namespace(t)
    bad = (t < 0) | (t >= c)
    if ignore_index is not None:
        bad = bad & (t != ignore_index)
    if bool(xp.any(bad)):
        first = int(xp.argmax(xp.astype(bad, xp.int8)))
        value = int(t[first])
        why = "negative" if value < 0 else f"not below the number of classes {c}"
        raise IndexError(f"{name}: target {value} (row {first}) is out of range: class indices "
                         f"must be in 0..{c - 1} (it is {why}; ignore_index is {ignore_index}). "
                         "Are the labels 1-based? Subtract 1.")


def _batch_of_one(targets: Any, logits: Tensor, name: str) -> Any:
    """The target of one unbatched sample (logits of shape (C,)) as a batch of one.

    As PyTorch: a class index is a 0-d integer (a Python int, or a 0-d array or tensor); class
    probabilities have the logits' shape (C,).
    """
    t = targets
    if isinstance(t, (int, float, list, tuple)) and not isinstance(t, bool):
        t = asarray(t, like=logits.data)
    if not hasattr(t, "shape"):
        raise TypeError(f"{name}: targets must be an integer class index or an array or tensor "
                        f"of class probabilities; got {type(targets).__name__}")
    shape = tuple(t.shape)
    if shape not in ((), tuple(logits.shape)):
        raise ValueError(f"{name}: logits of shape {logits.shape} are one unbatched sample, so "
                         f"the target must be one class index (a 0-d integer) or {logits.shape[0]} "
                         f"class probabilities; got shape {shape}")
    return t.reshape((1,) + shape)  # a tensor target keeps its graph (soft targets)


def _as_tensor(x: Any, like: Tensor) -> Tensor:
    if isinstance(x, Tensor):
        return x
    return Tensor(asarray(x, like=like.data, dtype=None if hasattr(x, "dtype") else like.dtype))


def _class_weight(weight: Any, c: int, like: Tensor, name: str) -> Any:
    """The per-class weight as an array of shape (C,) in the logits' dtype, or None."""
    if weight is None:
        return None
    w = weight.data if isinstance(weight, Tensor) else asarray(weight, like=like.data)
    if tuple(w.shape) != (c,):
        raise ValueError(f"{name}: weight must have shape ({c},), one value per class; got "
                         f"shape {tuple(w.shape)}")
    return like._xp.astype(w, like.dtype)


# ---------------------------------------------------------------------------------------------
# Losses


def cross_entropy(logits: Tensor, targets: Any, weight: Any = None, ignore_index: int = -100,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Softmax cross-entropy of ``logits`` (N, C) against ``targets``, as PyTorch's.

    Parameters
    ----------
    logits : Tensor of shape (N, C)
        Unnormalised scores; any values, ``-inf`` included (a class that cannot be).
    targets : integer array or tensor of shape (N,), or float tensor of shape (N, C)
        Class indices in ``0..C-1`` (or ``ignore_index``); or class probabilities.
    weight : array or tensor of shape (C,), optional
        A weight per class. With ``reduction="mean"`` the sum is divided by the total weight
        of the targets, as PyTorch.
    ignore_index : int
        Rows whose target is this value add nothing and are not counted (index targets).
    reduction : "mean", "sum" or "none"
        Average over rows, sum, or one loss per row.
    label_smoothing : float in [0, 1]
        Mix the target with the uniform distribution: ``(1 - s) * target + s / C``.

    Notes
    -----
    Forward: ``logsumexp(z) - z[target]``, stable for any logits. With the defaults this is
    one fused operation whose backward is ``(softmax(z) - onehot(targets)) / N``; the other
    options are built from :func:`log_softmax` and :func:`nll_loss`. A target outside
    ``0..C-1`` raises an IndexError (on a GPU: the loss is NaN).
    """
    _check_reduction(reduction, "cross_entropy")
    logits = _floating_arg(logits, "cross_entropy", "logits")
    if logits.ndim == 1:  # one unbatched sample: a batch of one, the loss a 0-d tensor
        target = _batch_of_one(targets, logits, "cross_entropy")
        loss = cross_entropy(logits.reshape(1, -1), target, weight, ignore_index, reduction,
                             label_smoothing)
        return loss.reshape(()) if reduction == "none" else loss
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1]; got "
                         f"{label_smoothing}")
    probabilities = isinstance(targets, Tensor) and is_floating(targets._xp, targets.dtype) or \
        (hasattr(targets, "dtype") and not isinstance(targets, Tensor)
         and is_floating(namespace(targets), targets.dtype))
    if probabilities and ignore_index != -100:
        raise ValueError(f"cross_entropy: ignore_index={ignore_index} applies to class-index "
                         "targets; these targets are class probabilities (floats), which have no "
                         "class to ignore (PyTorch refuses too). Give the rows to drop a "
                         "weight of 0, or pass integer targets")
    if probabilities or weight is not None or reduction != "mean" or label_smoothing:
        return _cross_entropy_general(logits, targets, weight, ignore_index, reduction,
                                      label_smoothing, probabilities)
    return _fused_cross_entropy(logits, targets, ignore_index, reduction, label_smoothing)


def _fused_cross_entropy(logits: Tensor, targets: Any, ignore_index: int, reduction: str,
                         label_smoothing: float) -> Tensor:
    """cross_entropy with the defaults (class indices, no weight, the mean, no smoothing):
    one operation whose backward is ``(softmax(z) - onehot(targets)) / N``.

    Where a real class is ignored, or a target is outside ``0..C-1``, it hands over to
    :func:`_cross_entropy_general` (which ignores the row or raises the error).
    """
    t = _check_targets(logits, targets, "cross_entropy")
    xp, z = logits._xp, logits.data
    n, c = z.shape
    if 0 <= ignore_index < c:  # a real class is ignored: not the fused case
        return _cross_entropy_general(logits, targets, None, ignore_index, reduction,
                                      label_smoothing, False)
    # hit (C, N): True at each row's target class. Built class-major and transposed, so that it
    # is stored batch-last like the logits of nn.Linear (one memory layout below).
    hit = xp.arange(c)[:, None] == t[None, :]
    if _host_values(t):
        if int(xp.count_nonzero(hit)) != n:  # a target outside 0..C-1: ignored, or an error
            return _cross_entropy_general(logits, targets, None, ignore_index, reduction,
                                          label_smoothing, False)
    # (reduce_max, reduce_sum: xp.max and xp.sum without NumPy's Python wrappers)
    shifted = z - reduce_max(z, axis=1, keepdims=True)  # softmax is unchanged by the shift
    e = xp.exp(shifted)  # each <= 1: never overflows
    total = reduce_sum(e, axis=1, keepdims=True)
    onehot = xp.astype(hit, z.dtype).T
    # mean of log(total) - shifted[target]. The targets' logits are picked with where(), not
    # a product, so that a -inf logit elsewhere in a row does not give -inf * 0 = NaN (picking
    # by index, with take(), measured slower here: the index t * N + row costs as much)
    loss = (reduce_sum(xp.log(total)) - reduce_sum(xp.where(hit.T, shifted, 0.0))) / n
    if not _host_values(t):  # on a GPU, a target outside 0..C-1 makes the loss NaN
        loss = xp.where(xp.count_nonzero(hit) == n, loss, float("nan"))
    return op(loss, (logits,), lambda g, p, onehot: (p - onehot) * (g / n),
              saved=(e / total, onehot), name="cross_entropy")


def _cross_entropy_general(logits: Tensor, targets: Any, weight: Any, ignore_index: int,
                           reduction: str, smoothing: float, probabilities: bool) -> Tensor:
    """cross_entropy with weights, reductions, ignore_index, smoothing or soft targets."""
    if logits.ndim != 2:
        raise ValueError(f"cross_entropy: expected logits of shape (N, C); got shape "
                         f"{logits.shape}")
    n, c = logits.shape
    logp = log_softmax(logits, axis=1)
    w = _class_weight(weight, c, logits, "cross_entropy")
    if probabilities:
        p = _as_tensor(targets, logits)
        if p.shape != logits.shape:
            raise TypeError(f"cross_entropy: targets must be integer class indices of shape "
                            f"({n},) or class probabilities of the logits' shape {logits.shape}; "
                            f"got {p.dtype} targets of shape {p.shape}")
        p = p * (1 - smoothing) + smoothing / c
        wp = p if w is None else p * Tensor(w)
        losses = -(logp * wp).sum(axis=1)
        return losses.sum() / n if reduction == "mean" else _reduce(losses, reduction)
    t = _check_targets(logits, targets, "cross_entropy")
    nll = nll_loss(logp, t, weight=w, ignore_index=ignore_index, reduction=reduction,
                   _name="cross_entropy")
    if not smoothing:
        return nll
    xp = logits._xp
    valid = t != ignore_index
    smooth = -(logp.sum(axis=1) if w is None else (logp * Tensor(w)).sum(axis=1))
    smooth = where(valid, smooth, 0.0)
    if reduction == "mean":
        total = xp.sum(xp.where(valid, backend_take(w, xp.where(valid, t, 0)), 0.0)) if w is not None \
            else xp.astype(xp.count_nonzero(valid), logits.dtype)
        smooth = smooth.sum() / Tensor(total)
    elif reduction == "sum":
        smooth = smooth.sum()
    return nll * (1 - smoothing) + smooth * (smoothing / c)


def nll_loss(log_probs: Tensor, targets: Any, weight: Any = None, ignore_index: int = -100,
             reduction: str = "mean", *, _name: str = "nll_loss") -> Tensor:
    """Negative log-likelihood: ``-weight[t] * log_probs[i, t]`` for each row's target ``t``.

    Parameters
    ----------
    log_probs : Tensor of shape (N, C)
        Log-probabilities (e.g. from :func:`log_softmax`).
    targets : integer array or tensor of shape (N,)
        Class indices in ``0..C-1``, or ``ignore_index`` for rows to leave out.
    weight : array or tensor of shape (C,), optional
        A weight per class; ``reduction="mean"`` divides by the total weight of the targets
        (not by N), as PyTorch. All rows ignored: the mean is NaN (0 / 0), as PyTorch.
    ignore_index : int
    reduction : "mean", "sum" or "none"
    """
    _check_reduction(reduction, _name)
    log_probs = _floating_arg(log_probs, _name, "log_probs" if _name == "nll_loss" else "logits")
    if log_probs.ndim == 1:  # one unbatched sample, as in cross_entropy
        loss = nll_loss(log_probs.reshape(1, -1), _batch_of_one(targets, log_probs, _name),
                        weight, ignore_index, reduction, _name=_name)
        return loss.reshape(()) if reduction == "none" else loss
    t = _check_targets(log_probs, targets, _name)
    xp = log_probs._xp
    n, c = log_probs.shape
    _check_target_values(t, c, ignore_index, _name)
    w = _class_weight(weight, c, log_probs, _name)
    valid = t != ignore_index
    safe = xp.where(valid, t, 0)  # ignored rows read class 0, then get weight 0
    picked = log_probs.gather(1, safe[:, None])[:, 0]  # (N,): log_probs[i, t[i]]
    w_row = xp.astype(valid, log_probs.dtype) if w is None else \
        xp.where(valid, backend_take(w, safe), 0.0)
    losses = where(valid, -picked * Tensor(w_row), 0.0)
    if reduction == "mean":
        return losses.sum() / Tensor(xp.sum(w_row))
    return _reduce(losses, reduction)


def mse_loss(prediction: Tensor, target: Any, reduction: str = "mean") -> Tensor:
    """Mean squared error ``mean((prediction - target) ** 2)`` (or its sum, or per element)."""
    _check_reduction(reduction, "mse_loss")
    if not isinstance(target, Tensor):  # a list or number takes a float prediction's dtype
        target = _as_tensor(target, prediction) if isinstance(prediction, Tensor) and \
            is_floating(prediction._xp, prediction.dtype) else Tensor(target)
    if prediction.shape != target.shape:
        raise ValueError(f"mse_loss: prediction has shape {prediction.shape} but target has "
                         f"shape {target.shape}")
    diff = prediction - target
    return _reduce(diff * diff, reduction)


_BCE_EPS = 9.999999960041972e-13  # PyTorch's 1e-12, rounded to float32 as PyTorch stores it


def _binary_target(name: str, x: Tensor, target: Any, reduction: str) -> tuple[Tensor, Any]:
    """The two binary cross-entropies' checks: the reduction, and a target of ``x``'s shape;
    returns the target as a tensor and its values in ``x``'s dtype."""
    _check_reduction(reduction, name)
    _tensor_arg(x, name)
    t = _as_tensor(target, x)
    if t.shape != x.shape:
        raise ValueError(f"{name}: target has shape {t.shape} but input has shape {x.shape}; "
                         "they must match")
    return t, _to_dtype(t.data, x)


def binary_cross_entropy(probs: Tensor, target: Any, weight: Any = None,
                         reduction: str = "mean") -> Tensor:
    """``-(t * log(p) + (1 - t) * log(1 - p))`` for probabilities ``p`` in [0, 1], as PyTorch.

    Each log is clamped at -100 (so ``p = 0`` gives a loss of 100, not inf), and the
    backward, ``(p - t) / (p * (1 - p))``, divides by at least 1e-12, as PyTorch.
    ``target`` has ``probs``' shape; a target tensor that requires grad gets
    ``log(1 - p) - log(p)`` (not clamped: infinite at ``p`` = 0 or 1, as PyTorch's).
    ``weight`` multiplies each loss.
    """
    t, tv = _binary_target("binary_cross_entropy", probs, target, reduction)
    xp, p = probs._xp, probs.data
    if _host_values(p) and p.size and not bool(xp.all((p >= 0) & (p <= 1))):  # NaN too
        raise ValueError("binary_cross_entropy: input must hold probabilities in [0, 1]; got "
                         f"values from {float(xp.min(p))} to {float(xp.max(p))} (use "
                         "binary_cross_entropy_with_logits for raw scores)")
    loss = -(tv * xp.maximum(xp.log(p), -100.0) + (1 - tv) * xp.maximum(xp.log(1 - p), -100.0))
    target_grad = t.requires_grad

    def vjp(g: Any, p: Any, t: Any) -> tuple[Any, Any]:
        return (g * (p - t) / xp.maximum(p * (1 - p), _BCE_EPS),
                g * (xp.log1p(-p) - xp.log(p)) if target_grad else None)

    out = op(loss, (probs, t), vjp, saved=(p, tv), name="binary_cross_entropy")
    if weight is not None:
        out = out * _elementwise_weight(weight, probs, "binary_cross_entropy", "weight")
    return _reduce(out, reduction)


def binary_cross_entropy_with_logits(logits: Tensor, target: Any, weight: Any = None,
                                     reduction: str = "mean", pos_weight: Any = None) -> Tensor:
    """Binary cross-entropy of ``sigmoid(logits)``, computed stably from the logits.

    Forward: ``(1 - t) * x + (1 + (w_pos - 1) * t) * softplus(-x)``, with
    ``softplus(-x) = log1p(exp(-|x|)) + max(-x, 0)`` (never overflows). Backward:
    ``sigmoid(x) - t`` when ``pos_weight`` is not given. A target tensor that requires grad
    gets ``-x + (w_pos - 1) * softplus(-x)``, as PyTorch. A ``pos_weight`` that requires grad
    is an error, as in PyTorch (it is not differentiable with respect to ``pos_weight``).
    """
    t, tv = _binary_target("binary_cross_entropy_with_logits", logits, target, reduction)
    xp, x = logits._xp, logits.data
    if isinstance(pos_weight, Tensor) and pos_weight.requires_grad:
        raise ValueError("binary_cross_entropy_with_logits: pos_weight must not require grad "
                         "(no gradient is computed for it, as in PyTorch); pass "
                         "pos_weight.detach()")
    pw = 1.0 if pos_weight is None else _to_dtype(
        _elementwise_weight(pos_weight, logits, "binary_cross_entropy_with_logits",
                            "pos_weight").data, logits)
    lw = 1 + (pw - 1) * tv  # the weight of the positive term
    softplus_neg = xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(-x, 0.0)  # log(1 + exp(-x))
    loss = (1 - tv) * x + lw * softplus_neg
    s = 0.5 * (xp.tanh(0.5 * x) + 1)  # sigmoid(x)
    # x and softplus(-x) are kept for the target's gradient only when it needs one
    target_terms = (x, softplus_neg) if t.requires_grad else ()

    def vjp(g: Any, s: Any, t: Any, lw: Any, *target_terms: Any) -> tuple[Any, Any]:
        dx = g * ((1 - t) - lw * (1 - s))
        if not target_terms:
            return dx, None
        x, sp = target_terms
        return dx, g * ((pw - 1) * sp - x)

    out = op(loss, (logits, t), vjp, saved=(s, tv, lw, *target_terms),
             name="binary_cross_entropy_with_logits")
    if weight is not None:
        out = out * _elementwise_weight(weight, logits, "binary_cross_entropy_with_logits",
                                        "weight")
    return _reduce(out, reduction)


def _elementwise_weight(weight: Any, x: Tensor, name: str, arg: str) -> Tensor:
    """A weight of the binary cross-entropies as a tensor; its shape must broadcast to the
    input's (``pos_weight``: one per class, the last axis), as PyTorch's."""
    w = _as_tensor(weight, x)
    if broadcast_shapes(w.shape, x.shape, op=f"{name}: {arg}") != x.shape:
        raise ValueError(f"{name}: {arg} of shape {w.shape} does not broadcast to the input's "
                         f"shape {x.shape}")
    return w


def _to_dtype(a: Any, like: Tensor) -> Any:
    """``a`` converted to ``like``'s dtype (targets given as integers or bools)."""
    return like._xp.astype(a, like.dtype) if a.dtype != like.dtype else a


def one_hot(labels: Any, num_classes: int = -1) -> Tensor:
    """Integer labels (any shape) as one-hot int64 vectors on a new last axis, as PyTorch.

    ``num_classes=-1`` uses the largest label + 1. Negative labels, or labels not below
    ``num_classes``, are an error. No gradient.
    """
    t = labels.data if isinstance(labels, Tensor) else asarray(labels)
    xp = namespace(t)
    if not is_integer(xp, t.dtype):
        raise TypeError(f"one_hot: labels must be integers; got dtype {t.dtype}")
    if not isinstance(num_classes, int) or isinstance(num_classes, bool) or num_classes < -1:
        raise ValueError(f"one_hot: num_classes must be a non-negative int, or -1 (the largest "
                         f"label + 1); got {num_classes!r}")
    if t.size:
        low, high = int(xp.min(t)), int(xp.max(t))
        if low < 0:
            raise ValueError(f"one_hot: labels must be non-negative; got {low}")
        if num_classes == -1:
            num_classes = high + 1
        elif high >= num_classes:
            raise ValueError(f"one_hot: label {high} is not below num_classes={num_classes}")
    elif num_classes == -1:
        raise ValueError("one_hot: cannot infer num_classes from an empty tensor; pass it")
    return Tensor(xp.astype(t[..., None] == xp.arange(num_classes), xp.int64))


# ---------------------------------------------------------------------------------------------
# Activations (the nn layers of the same names call these)


# relu, sigmoid, tanh and leaky_relu are minigrad's own (imported from tensor above).


# erf's Taylor series, 2/sqrt(pi) * sum of (-1)^n x^(2n+1) / (n! (2n+1)): its coefficients
_ERF_TAYLOR = [2 / math.sqrt(math.pi) * (-1) ** n / (math.factorial(n) * (2 * n + 1))
               for n in range(36)]


def _erf(xp: Any, x: Any) -> Any:
    """The error function, to about 1e-14 in float64 (the array API has no ``erf``).

    For ``|x| < 2.5``: its Taylor series (36 terms, in Horner's form: two array passes a
    term). Beyond: ``1 - erfc``, with ``erfc`` from its continued fraction
    ``exp(-x**2) / sqrt(pi) / (x + (1/2) / (x + 1 / (x + (3/2) / ...)))`` (20 terms). Against
    ``math.erf`` on 200,001 points of [-8, 8]: at most 6.3e-15 off (the 50-term series and
    60-term fraction cut at 3 that this replaced: 8.5e-14, in about 370 array passes to 120).
    """
    a = xp.abs(x)
    s = xp.minimum(a, 2.5)
    s2 = s * s
    total = _ERF_TAYLOR[-1] * s2 + _ERF_TAYLOR[-2]
    for c in reversed(_ERF_TAYLOR[:-2]):
        total = total * s2 + c
    series = total * s
    b = xp.maximum(a, 2.5)
    k = b
    for n in range(20, 0, -1):
        k = b + (n / 2) / k
    tail = 1 - xp.exp(-b * b) / (math.sqrt(math.pi) * k)
    return xp.sign(x) * xp.where(a < 2.5, series, tail)


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    """``x * Phi(x)``, Phi the standard normal CDF (``approximate="tanh"``: its tanh formula).

    Backward: ``Phi(x) + x * phi(x)``, phi the normal density (for "tanh", the derivative of
    the tanh formula), as PyTorch.
    """
    xp, v = _tensor_arg(x, "gelu")._xp, x.data
    if approximate == "none":
        cdf = 0.5 * (1 + _erf(xp, v / math.sqrt(2)))
        return op(v * cdf, (x,), lambda g, v, cdf: g * (cdf + v * xp.exp(-0.5 * v * v)
                                                         / math.sqrt(2 * math.pi)),
                  saved=(v, cdf), name="gelu")
    if approximate != "tanh":
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh'; got {approximate!r}")
    # a = (1 + tanh(k (v + c v^3))) / 2 and y = v a; the backward, in the saved a and
    # u = k (1 + c v^2): dy/dv = a + 2 v a (1 - a) (3u - 2k), since 1 - tanh^2 = 4a(1 - a) and
    # the tanh's argument's derivative is k (1 + 3c v^2) = 3u - 2k (8 array passes each way)
    k, c = math.sqrt(2 / math.pi), 0.044715
    u = v * v * (k * c) + k
    a = xp.tanh(u * v) * 0.5 + 0.5
    return op(v * a, (x,), lambda g, v, a, u: g * ((1 - a) * a * (u * 6 - 4 * k) * v + a),
              saved=(v, a, u), name="gelu")


def silu(x: Tensor) -> Tensor:
    """``x * sigmoid(x)`` (also called swish). Backward: ``s * (1 + x * (1 - s))``."""
    xp, v = _tensor_arg(x, "silu")._xp, x.data
    s = 0.5 * (xp.tanh(0.5 * v) + 1)
    return op(v * s, (x,), lambda g, v, s: g * s * (1 + v * (1 - s)), saved=(v, s), name="silu")


def elu(x: Tensor, alpha: float = 1.0) -> Tensor:
    """``x`` where positive, else ``alpha * (exp(x) - 1)``. Backward: 1, or ``alpha * exp(x)``
    (at 0: ``alpha``, as PyTorch)."""
    xp, v = _tensor_arg(x, "elu")._xp, x.data
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) and \
            not hasattr(alpha, "__float__"):
        raise TypeError(f"elu: alpha must be a number; got {alpha!r:.40}")
    return op(xp.where(v > 0, v, alpha * xp.expm1(xp.minimum(v, 0.0))), (x,),
              lambda g, v: xp.where(v <= 0, g * alpha * xp.exp(xp.minimum(v, 0.0)), g),
              saved=(v,), name="elu")


def softplus(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, and just ``x`` where ``beta * x > threshold``.

    Backward: ``sigmoid(beta * x)`` (1 above the threshold), as PyTorch.
    """
    xp, v = _tensor_arg(x, "softplus")._xp, x.data
    bx = beta * v
    linear_part = bx > threshold
    y = xp.where(linear_part, v, (xp.log1p(xp.exp(-xp.abs(bx))) + xp.maximum(bx, 0.0)) / beta)
    return op(y, (x,), lambda g, bx: xp.where(bx > threshold, g, g * 0.5 * (xp.tanh(0.5 * bx)
                                                                              + 1)),
              saved=(bx,), name="softplus")


def hardtanh(x: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``x`` clipped to ``[min_val, max_val]``. Backward: 1 strictly inside, 0 at the bounds
    and outside, as PyTorch (unlike :meth:`Tensor.clamp`, which passes it at the bounds)."""
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val {min_val} is larger than max_val {max_val}")
    xp, v = _tensor_arg(x, "hardtanh")._xp, x.data
    return op(xp.clip(v, min_val, max_val), (x,),
              lambda g, v: times_mask(g, xp.logical_not((v <= min_val) | (v >= max_val))),
              saved=(v,), name="hardtanh")


def logsigmoid(x: Tensor) -> Tensor:
    """``log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))``, stable for any x.

    Backward: ``1 - sigmoid(x)``.
    """
    xp, v = _tensor_arg(x, "logsigmoid")._xp, x.data
    y = xp.minimum(v, 0.0) - xp.log1p(xp.exp(-xp.abs(v)))
    return op(y, (x,), lambda g, v: g * 0.5 * (1 - xp.tanh(0.5 * v)), saved=(v,),
              name="logsigmoid")


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``x @ weight.T + bias`` as one operation of the graph (not three), as
    ``torch.nn.functional.linear``; :class:`minigrad.nn.Linear` calls it.

    Shapes: ``x`` (..., in), ``weight`` (out, in), ``bias`` (out,); the result is (..., out).
    ``x`` has the weight's dtype: mixed dtypes raise a TypeError, as in PyTorch (a Python list
    is converted to the weight's dtype; an array or tensor is not converted).
    Backward, with ``g`` the output's gradient: ``dx = g @ W``, ``dW = g.T @ x``,
    ``db = sum(g, axis=0)`` (batch axes flattened first), computed as the matrix-vector
    product ``g.T @ ones``: the same sum, several times faster than a reduction over the batch
    on NumPy when the features are few.
    """
    if not isinstance(weight, Tensor):
        raise TypeError(f"linear: weight must be a Tensor; got {type(weight).__name__}")
    if not isinstance(x, Tensor):  # an array as it is; numbers and lists in the weight's dtype
        x = Tensor(x if hasattr(x, "dtype") else asarray(x, dtype=weight.data.dtype,
                                                         like=weight.data))
    xd, wd = x.data, weight.data
    # One quick test (dtypes by identity: the same dtype is one object); any doubt goes to
    # _check_linear, which raises naming the problem (or returns if there is none).
    if (type(xd) is not type(wd) or wd.ndim != 2 or not xd.ndim or xd.shape[-1] != wd.shape[1]
            or xd.dtype is not wd.dtype
            or bias is not None and (not isinstance(bias, Tensor) or bias.data.dtype is not wd.dtype
                                     or bias.data.ndim != 1 or bias.data.shape[0] != wd.shape[0])):
        _check_linear(x, weight, bias)
    xp = x._xp
    batch_last, shape = x.ndim == 2, x.shape
    # A batch (N, in) gives y = (W @ x.T).T: the same numbers as x @ W.T, stored batch-last
    # ((out, N) in memory). NumPy then reduces y and its gradient, over the features
    # (softmax) or over the batch (the bias gradient), several times faster. Extra batch axes
    # (..., in) are flattened to one product of (rows, in) by (in, out): NumPy's matmul of a
    # 3-d array makes one small product per leading index, 1.4-1.9 times slower (measured
    # in docs/guide/performance.md).
    if batch_last:
        y = (weight.data @ x.data.T).T
    elif x.ndim > 2:
        y = xp.reshape(xp.reshape(x.data, (-1, shape[-1])) @ weight.data.T,
                       shape[:-1] + (wd.shape[0],))
    else:
        y = x.data @ weight.data.T
    if bias is not None:
        y += bias.data
    needs_dx = x.requires_grad

    def vjp(g: Any, x: Any, w: Any) -> tuple[Any, ...]:
        if batch_last:
            dx = (w.T @ g.T).T if needs_dx else None  # = g @ w, stored batch-last
        else:  # one sample (in,), or extra batch axes (..., in): make it 2-D
            g, x = xp.reshape(g, (-1, g.shape[-1])), xp.reshape(x, (-1, x.shape[-1]))
            dx = xp.reshape(g @ w, shape) if needs_dx else None
        dw = gradient_product(g.T, x, weight)  # g.T @ x, into a fused optimizer's buffer
        if bias is None:
            return dx, dw
        return dx, dw, gradient_product(g.T, xp.ones(g.shape[0], dtype=g.dtype), bias)

    parents: tuple[Tensor, ...] = (x, weight) if bias is None else (x, weight, bias)
    return op(y, parents, vjp, saved=(x.data, weight.data), name="linear")


def _check_linear(x: Tensor, weight: Any, bias: Any) -> None:
    """Raise the error that says what is wrong with :func:`linear`'s arguments.

    Mixed dtypes are refused, as PyTorch refuses them in a matrix product (and as ``conv2d``
    and the recurrent layers do here): a float32 layer given float64 input would otherwise
    compute in float64 and return float64 without a word.
    """
    for arg, t in (("weight", weight), ("bias", bias)):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(f"linear: {arg} must be a Tensor; got {type(t).__name__}")
    if type(x.data) is not type(weight.data):  # e.g. a CuPy input to a NumPy layer
        check_same_device("linear", x.data, weight.data)  # raises naming both devices
    if namespace(x.data) is not namespace(weight.data):  # (an ndarray subclass is NumPy's)
        raise TypeError(f"linear: the input is a {type(x.data).__module__} array but the weight "
                        f"a {type(weight.data).__module__} one; move one with .to(...)")
    if weight.ndim != 2:
        raise ValueError(f"linear: expected weight of shape (out_features, in_features); got "
                         f"shape {weight.shape}")
    out_features, in_features = weight.shape
    if x.ndim == 0:
        raise ValueError(f"linear: expected input of shape (..., {in_features}); got a 0-d "
                         "tensor")
    if x.shape[-1] != in_features:
        raise ValueError(f"linear: input has {x.shape[-1]} features (shape {x.shape}) but weight "
                         f"expects {in_features} (weight shape {weight.shape} is "
                         f"(out_features, in_features))")
    if bias is not None and bias.shape != (out_features,):
        raise ValueError(f"linear: expected bias of shape ({out_features},), one per output "
                         f"feature; got shape {bias.shape}")
    for arg, t in (("input", x), ("bias", bias)):
        if t is not None and t.dtype != weight.dtype:
            other = (f" or the layer with .to(dtype={str(t.dtype)!r})"
                     if is_floating(t._xp, t.dtype) else "")
            raise TypeError(f"linear: {arg} has dtype {t.dtype} but weight has dtype "
                            f"{weight.dtype}; mixed dtypes are refused, as in PyTorch. Convert "
                            f"the {arg} with .astype({str(weight.dtype)!r}){other}")
