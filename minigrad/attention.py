"""Attention as a function: ``F.scaled_dot_product_attention``, one operation of the graph.

For queries ``q`` (..., L, E), keys ``k`` (..., S, E) and values ``v`` (..., S, Ev)::

    s = q @ k.T * scale          # (..., L, S) how well each query matches each key
    s = s + mask                 # -inf where a query may not look (causal, padding, ...)
    p = softmax(s)               # each row: weights over the keys, summing to 1
    y = p @ v                    # (..., L, Ev) each query's weighted average of the values

The backward rule is written beside it, in the output gradient ``g`` and the saved ``p``::

    dv = p.T @ g
    dp = g @ v.T
    ds = p * (dp - sum(dp * p))  # the softmax's VJP, row by row
    dq = ds @ k * scale,   dk = ds.T @ q * scale,   d(float mask) = ds

A row whose keys are all masked has weights 0 (not NaN) and gets no gradient, as PyTorch's
``scaled_dot_product_attention``. :class:`minigrad.nn.MultiheadAttention` with
``need_weights=True`` computes the weights with separate operations instead (as PyTorch
does), where such a row is NaN.
"""
from __future__ import annotations

import math
from typing import Any

from . import backend
from .backend import Array, is_floating
from .broadcast import broadcast_shapes, unbroadcast
from .reductions import _row_sums
from .tensor import Tensor, _tensor_arg, op

__all__ = ["scaled_dot_product_attention", "causal_mask"]


def causal_mask(xp: Any, length: int, source_length: int | None = None) -> Array:
    """The boolean (L, S) mask that lets query ``i`` see keys ``0..i`` (True: may attend).

    It is PyTorch's ``is_causal`` mask: the lower triangle ``ones(L, S).tril()``, aligned at
    the top left when ``L != S``. Made through ``xp`` (the array's namespace), so a compiled
    step sees it being made.
    """
    s = length if source_length is None else source_length
    return xp.arange(length)[:, None] >= xp.arange(s)[None, :]


def _mask_arg(attn_mask: Any, q: Tensor, shape: tuple[int, ...]) -> tuple[Any, Tensor | None]:
    """(boolean array or None, float Tensor or None) for ``attn_mask``, checked."""
    if attn_mask is None:
        return None, None
    m = attn_mask.data if isinstance(attn_mask, Tensor) else attn_mask
    if not hasattr(m, "dtype") or not hasattr(m, "shape"):
        raise TypeError(f"scaled_dot_product_attention: attn_mask must be a Tensor or an array "
                        f"(bool, or the query's dtype); got {type(attn_mask).__name__}")
    xp = q._xp
    try:
        broadcast_shapes(tuple(m.shape), shape, op="scaled_dot_product_attention (attn_mask)")
        ok = broadcast_shapes(tuple(m.shape), shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"scaled_dot_product_attention: attn_mask of shape {tuple(m.shape)} "
                         f"does not broadcast to the scores' shape {shape} (..., L, S)")
    if xp.isdtype(m.dtype, "bool"):
        return m, None
    if m.dtype != q.dtype:
        raise TypeError(f"scaled_dot_product_attention: expected attn_mask dtype to be bool or "
                        f"to match the query's dtype {q.dtype}; got {m.dtype}")
    return None, attn_mask if isinstance(attn_mask, Tensor) else Tensor(m)


_NAME = "scaled_dot_product_attention"


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Any = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False, *, generator: Any = None,
                                 seed: int | None = None) -> Tensor:
    """``softmax(query @ key.T * scale + mask) @ value``, as
    ``torch.nn.functional.scaled_dot_product_attention``.

    Parameters
    ----------
    query, key, value : Tensor
        (..., L, E): L queries of size E (the leading axes: batch, heads); (..., S, E): S keys,
        the leading axes broadcasting against the query's; (..., S, Ev).
    attn_mask : Tensor or array, optional
        Broadcasts to (..., L, S). Boolean: True where a query may attend to a key (PyTorch's
        meaning; note that ``nn.MultiheadAttention``'s masks mean the opposite). Floating (the
        query's dtype): added to the scores (``-inf`` forbids); a float mask tensor that
        requires grad gets one.
    dropout_p : float
        Drop each attention weight with this probability (and scale the rest by 1/(1-p)).
        Applied whenever it is above 0: pass 0 in evaluation, as in PyTorch.
    is_causal : bool
        Query ``i`` sees keys ``0..i`` only (:func:`causal_mask`). Not with ``attn_mask``.
    scale : float, optional
        The factor of the scores; ``1 / sqrt(E)`` by default.
    enable_gqa : bool
        Grouped-query attention: the query's heads (axis -3) come in groups that share one head
        of key and value; the query's head count must be a multiple of theirs.
    generator, seed : optional
        The dropout's random numbers (a NumPy Generator, or a seed for a new one).

    Returns
    -------
    Tensor
        (..., L, Ev), the leading axes broadcast.
    """
    q, k, v = _checked(query, key, value, attn_mask, dropout_p, is_causal, generator, seed)
    if enable_gqa:
        return _grouped(q, k, v, attn_mask, dropout_p, is_causal, scale, generator, seed)
    xp, big_l, s_len = q._xp, q.shape[-2], k.shape[-2]
    batch = broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2], op=_NAME)
    allowed, float_mask = _mask_arg(attn_mask, q, batch + (big_l, s_len))
    if is_causal:
        allowed = causal_mask(xp, big_l, s_len)
    c = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    scores = (q.data * c) @ xp.matrix_transpose(k.data)  # (..., L, S); scaled on the smaller q
    # the causal mask (alone: no attn_mask with it) leaves every row its first key
    p = _masked_softmax(xp, scores, allowed, float_mask, not is_causal or s_len == 0)
    kept = _dropout_scale(xp, p, dropout_p, generator, seed) if dropout_p > 0.0 else None
    weights = p if kept is None else p * kept
    y = weights @ v.data  # (..., L, Ev)
    parents = [q, k, v] + ([float_mask] if float_mask is not None else [])
    return op(y, parents, _vjp(xp, c, [t.shape for t in parents]),
              saved=(q.data, k.data, v.data, p, weights, kept), name=_NAME)


def _checked(query: Any, key: Any, value: Any, attn_mask: Any, dropout_p: Any, is_causal: bool,
             generator: Any, seed: Any) -> tuple[Tensor, Tensor, Tensor]:
    """The query, key and value as tensors, every argument checked (a clear error if not)."""
    name = _NAME
    q, k, v = (_tensor_arg(t, name) for t in (query, key, value))
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise ValueError(f"{name}: expected query, key and value to have at least 2 axes "
                         f"(..., L, E); got shapes {q.shape}, {k.shape} and {v.shape}")
    if not (q.dtype == k.dtype == v.dtype):
        raise TypeError(f"{name}: expected query, key and value to have the same dtype; got "
                        f"{q.dtype}, {k.dtype} and {v.dtype}")
    if not is_floating(q._xp, q.dtype):
        raise TypeError(f"{name}: expected floating-point query, key and value; got {q.dtype}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"{name}: the query's and the key's last axes (E) differ: shapes "
                         f"{q.shape} and {k.shape}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"{name}: key and value need the same number of entries S (axis -2): "
                         f"shapes {k.shape} and {v.shape}")
    if isinstance(dropout_p, bool) or not isinstance(dropout_p, (int, float)) \
            or not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"{name}: dropout_p must be a probability in [0, 1]; got {dropout_p!r}")
    if is_causal and attn_mask is not None:
        raise ValueError(f"{name}: explicit attn_mask should not be set when is_causal=True")
    if generator is not None and seed is not None:
        raise ValueError(f"{name}: pass generator or seed, not both")
    return q, k, v


def _masked_softmax(xp: Any, scores: Array, allowed: Any, float_mask: Tensor | None,
                    may_be_empty: bool) -> Array:
    """The softmax over the last axis of the masked ``scores``; a row with no key left (only
    when ``may_be_empty``) gives 0."""
    dtype, s_len = scores.dtype, scores.shape[-1]
    if allowed is not None:
        fmin = getattr(xp, "fmin", None)  # NumPy's and CuPy's; not the array API's
        if fmin is not None and 4 * allowed.size <= scores.size:
            # fmin(s, +inf) = s and fmin(s, -inf) = -inf, NaN included: where()'s values,
            # except that a NaN score that may be seen becomes +inf (its row is NaN either
            # way); about five times faster than where() on NumPy with a causal (L, S) mask
            bound = xp.where(allowed, xp.asarray(math.inf, dtype=dtype),
                             xp.asarray(-math.inf, dtype=dtype))
            scores = fmin(scores, bound)
        else:
            scores = xp.where(allowed, scores, xp.asarray(-math.inf, dtype=dtype))
    if float_mask is not None:
        scores = scores + float_mask.data
    top = xp.max(scores, axis=-1, keepdims=True) if s_len else xp.zeros_like(scores[..., :1])
    if may_be_empty:
        top = xp.where(top == -math.inf, xp.asarray(0.0, dtype=dtype), top)
    e = xp.exp(scores - top)
    total = _row_sums(xp, e)
    if may_be_empty:
        total = xp.where(total == 0.0, xp.asarray(1.0, dtype=dtype), total)
    return e / total  # (..., L, S)


def _dropout_scale(xp: Any, p: Array, dropout_p: float, generator: Any, seed: Any) -> Array:
    """The dropout's factor of each weight: 0 (dropped) or 1 / (1 - dropout_p)."""
    rng = backend.default_rng(generator if generator is not None else seed)
    u = backend.uniform(rng, 0.0, 1.0, p.shape, like=p)
    keep = 1.0 - dropout_p
    return xp.astype(u < keep, p.dtype) / keep if keep > 0 else xp.zeros_like(p)


def _vjp(xp: Any, c: float, shapes: list[tuple[int, ...]]) -> Any:
    """The backward rule (the module's docstring), for parents of ``shapes``."""
    def vjp(g: Array, qd: Array, kd: Array, vd: Array, p: Array, weights: Array,
            kept: Any) -> tuple[Any, ...]:
        dv = xp.matrix_transpose(weights) @ g
        dp = g @ xp.matrix_transpose(vd)
        if kept is not None:
            dp = dp * kept
        ds = p * (dp - _row_sums(xp, dp * p))  # (..., L, S)
        dq = (ds @ kd) * c
        dk = (xp.matrix_transpose(ds) @ qd) * c
        grads = [dq, dk, dv] + ([ds] if len(shapes) == 4 else [])
        return tuple(unbroadcast(gr, sh) for gr, sh in zip(grads, shapes))
    return vjp


def _grouped(q: Tensor, k: Tensor, v: Tensor, attn_mask: Any, dropout_p: float,
             is_causal: bool, scale: float | None, generator: Any, seed: int | None) -> Tensor:
    """Grouped-query attention: each head of key and value serves a group of query heads."""
    name = "scaled_dot_product_attention"
    if q.ndim < 3 or k.ndim < 3 or v.ndim < 3:
        raise ValueError(f"{name}: enable_gqa needs a head axis (..., H, L, E); got shapes "
                         f"{q.shape}, {k.shape} and {v.shape}")
    hq, hk = q.shape[-3], k.shape[-3]
    if v.shape[-3] != hk or hq % hk:
        raise ValueError(f"{name}: with enable_gqa the query's heads ({hq}) must be a multiple "
                         f"of the key's and value's ({hk} and {v.shape[-3]}), which must agree")
    group = hq // hk

    def repeat(t: Tensor) -> Tensor:  # head h of the result is head h // group of t
        lead, rest = t.shape[:-3], t.shape[-2:]
        wide = t.unsqueeze(t.ndim - 2).expand(*lead, hk, group, *rest)
        return wide.reshape(*lead, hq, *rest)

    return scaled_dot_product_attention(q, repeat(k), repeat(v), attn_mask, dropout_p,
                                        is_causal, scale, generator=generator, seed=seed)
