"""Attention layers: :class:`MultiheadAttention`, as ``torch.nn.MultiheadAttention``.

Multi-head attention projects the queries, keys and values (one packed weight
``in_proj_weight`` of shape (3E, E), PyTorch's layout, so a PyTorch state dict loads
unchanged), splits each into ``num_heads`` heads of size E / H, runs
:func:`~minigrad.functional.scaled_dot_product_attention` in every head at once, joins the
heads and projects the result with ``out_proj``.

Masks follow PyTorch's ``nn.MultiheadAttention``, where a boolean ``True`` means "may *not*
attend" (the opposite of ``F.scaled_dot_product_attention``'s boolean mask) and a float mask
is added to the scores.
"""
from __future__ import annotations

import math
from typing import Any

from .. import backend
from .. import functional as F
from ..attention import scaled_dot_product_attention
from ..tensor import Tensor, _tensor_arg
from .modules import Linear, Module, Parameter, _generator

__all__ = ["MultiheadAttention"]


def _xavier(rng: Any, shape: tuple[int, int], dtype: Any, device: str | None) -> Parameter:
    """``torch.nn.init.xavier_uniform_``: U(-a, a), ``a = sqrt(6 / (fan_in + fan_out))``."""
    bound = math.sqrt(6.0 / (shape[0] + shape[1]))
    return Parameter(backend.uniform(rng, -bound, bound, shape, dtype, device=device))


def _zeros(n: int, dtype: Any, device: str | None) -> Parameter:
    return Parameter(backend.copy_to(backend.asarray([0.0] * n), dtype=dtype, device=device))


class MultiheadAttention(Module):
    """Attention with several heads, as ``torch.nn.MultiheadAttention``.

    Parameters
    ----------
    embed_dim : int
        E, the size of each query (and of the output).
    num_heads : int
        H, the number of heads; E must be a multiple of it (each head has E / H features).
    dropout : float
        Dropout on the attention weights, in training mode.
    bias : bool
        Learn ``in_proj_bias`` (3E,) and ``out_proj.bias`` (E,).
    kdim, vdim : int, optional
        The sizes of the keys and values (E by default). When either differs from E, the
        projections are three weights ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight``
        instead of ``in_proj_weight``, as PyTorch.
    batch_first : bool
        Inputs and output are (N, L, E) instead of (L, N, E).
    rng, seed : optional
        Draw the initial weights (PyTorch's: Xavier-uniform projections, zero biases, the
        output projection as a ``Linear``), then the dropout masks.
    dtype, device : optional
        As for :class:`~minigrad.nn.Linear`.

    >>> MultiheadAttention(8, 2, seed=0).in_proj_weight.shape
    (24, 8)
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 *, rng: Any = None, seed: int | None = None, dtype: Any = "float64",
                 device: str | None = None) -> None:
        super().__init__()
        for label, n in (("embed_dim", embed_dim), ("num_heads", num_heads)):
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                raise ValueError(f"MultiheadAttention: {label} must be a positive int; got "
                                 f"{n!r}")
        if embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim must be divisible by num_heads; "
                             f"got {embed_dim} and {num_heads}")
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"MultiheadAttention: dropout must be a probability in [0, 1]; "
                             f"got {dropout!r}")
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("MultiheadAttention: add_bias_kv and add_zero_attn are "
                                      "not supported (leave them False)")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.head_dim = embed_dim // num_heads
        self.dropout, self.batch_first = dropout, batch_first
        rng = _generator("MultiheadAttention", rng, seed)
        if self._qkv_same_embed_dim:
            self.in_proj_weight = _xavier(rng, (3 * embed_dim, embed_dim), dtype, device)
        else:
            self.q_proj_weight = _xavier(rng, (embed_dim, embed_dim), dtype, device)
            self.k_proj_weight = _xavier(rng, (embed_dim, self.kdim), dtype, device)
            self.v_proj_weight = _xavier(rng, (embed_dim, self.vdim), dtype, device)
        self.in_proj_bias = _zeros(3 * embed_dim, dtype, device) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, rng=rng, dtype=dtype,
                               device=device)
        if bias:
            self.out_proj.bias = _zeros(embed_dim, dtype, device)
        self._rng = rng  # then draws the dropout masks

    # ------------------------------------------------------------------------------------------

    def _project(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, ...]:
        """q, k, v, each (N, L or S, E), from the batch-first inputs."""
        e, b = self.embed_dim, self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
        if self._qkv_same_embed_dim:
            # three products with row blocks of the packed weight (rather than one product and
            # slices of its result: a compiled step replays about 8% faster at the char-GPT's
            # size, the slices' gradients being a zero-filled (N, L, 3E) array each)
            w = self.in_proj_weight
            wq, wk, wv = w[:e], w[e:2 * e], w[2 * e:]
        else:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        return F.linear(query, wq, bq), F.linear(key, wk, bk), F.linear(value, wv, bv)

    def _heads(self, t: Tensor) -> Tensor:
        """(N, L, E) -> (N, H, L, E/H)."""
        n, length = t.shape[0], t.shape[1]
        return t.reshape(n, length, self.num_heads, self.head_dim).transpose(1, 2)

    def _masks(self, key_padding_mask: Any, attn_mask: Any, n: int, big_l: int, s: int,
               like: Tensor) -> tuple[Any, Tensor | None]:
        """The merged mask for (N, H, L, S) scores: (boolean array True where a query may
        attend, or None) and (float Tensor to add, or None); never both."""
        xp, h = like._xp, self.num_heads
        parts = []  # (array or tensor, shape it has for (N, H, L, S) scores)
        if attn_mask is not None:
            m = attn_mask.data if isinstance(attn_mask, Tensor) else attn_mask
            if not hasattr(m, "shape") or not hasattr(m, "dtype"):
                raise TypeError(f"MultiheadAttention: attn_mask must be a Tensor or array; got "
                                f"{type(attn_mask).__name__}")
            if tuple(m.shape) == (big_l, s):
                shape: tuple[int, ...] = (1, 1, big_l, s)
            elif tuple(m.shape) == (n * h, big_l, s):
                shape = (n, h, big_l, s)
            else:
                raise ValueError(f"MultiheadAttention: attn_mask should have shape "
                                 f"{(big_l, s)} or {(n * h, big_l, s)} (L, S or N*H, L, S); "
                                 f"got {tuple(m.shape)}")
            parts.append((attn_mask, shape, "attn_mask"))
        if key_padding_mask is not None:
            m = key_padding_mask.data if isinstance(key_padding_mask, Tensor) \
                else key_padding_mask
            if not hasattr(m, "shape") or not hasattr(m, "dtype"):
                raise TypeError(f"MultiheadAttention: key_padding_mask must be a Tensor or "
                                f"array; got {type(key_padding_mask).__name__}")
            if tuple(m.shape) != (n, s):
                raise ValueError(f"MultiheadAttention: expected key_padding_mask of shape "
                                 f"{(n, s)} (N, S); got {tuple(m.shape)}")
            parts.append((key_padding_mask, (n, 1, 1, s), "key_padding_mask"))
        if not parts:
            return None, None
        for mask, _, label in parts:
            d = (mask.data if isinstance(mask, Tensor) else mask).dtype
            if not xp.isdtype(d, "bool") and d != like.dtype:
                raise TypeError(f"MultiheadAttention: {label} must be boolean or of the "
                                f"query's dtype {like.dtype}; got {d}")
        if all(xp.isdtype((m.data if isinstance(m, Tensor) else m).dtype, "bool")
               for m, _, _ in parts):
            allowed = None
            for m, shape, _ in parts:
                ok = xp.reshape(~(m.data if isinstance(m, Tensor) else m), shape)
                allowed = ok if allowed is None else allowed & ok
            return allowed, None
        total: Tensor | None = None
        for m, shape, _ in parts:  # PyTorch's _canonical_mask: True -> -inf, False -> 0
            raw = m.data if isinstance(m, Tensor) else m
            if xp.isdtype(raw.dtype, "bool"):
                t = Tensor(xp.where(raw, xp.asarray(-math.inf, dtype=like.dtype),
                                    xp.asarray(0.0, dtype=like.dtype)))
            else:
                t = m if isinstance(m, Tensor) else Tensor(raw)
            t = t.reshape(shape)
            total = t if total is None else total + t
        return None, total

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Any = None,
                need_weights: bool = True, attn_mask: Any = None,
                average_attn_weights: bool = True, is_causal: bool = False
                ) -> tuple[Tensor, Tensor | None]:
        """Attend from ``query`` to ``key``/``value``.

        Parameters
        ----------
        query : Tensor
            (L, N, E), or (N, L, E) with ``batch_first``, or (L, E) unbatched.
        key, value : Tensor
            (S, N, kdim) and (S, N, vdim), laid out as ``query``.
        key_padding_mask : Tensor or array, optional
            (N, S) or (S,) unbatched: boolean True marks a key to ignore (padding); floating:
            added to the scores of that key.
        need_weights : bool
            Also return the attention weights (computed with separate operations, as PyTorch
            does; without them the fused ``scaled_dot_product_attention`` runs).
        attn_mask : Tensor or array, optional
            (L, S), or (N*H, L, S) per batch and head: boolean True forbids a query to attend
            to a key; floating: added to the scores.
        average_attn_weights : bool
            Average the returned weights over the heads: (N, L, S), else (N, H, L, S).
        is_causal : bool
            A hint that ``attn_mask`` is the causal mask (it is still needed, as PyTorch).

        Returns
        -------
        (Tensor, Tensor or None)
            The output, laid out as ``query``, and the weights (or None).
        """
        query, key, value, key_padding_mask, batched = self._batch_first(
            query, key, value, key_padding_mask, attn_mask, is_causal)
        n, big_l, s = query.shape[0], query.shape[1], key.shape[1]
        q, k, v = (self._heads(t) for t in self._project(query, key, value))  # (N, H, *, E/H)
        allowed, float_mask = self._masks(key_padding_mask, attn_mask, n, big_l, s, q)
        # PyTorch's use of the hint: attn_mask *is* the causal mask, so SDPA makes its own
        causal = is_causal and key_padding_mask is None and not need_weights
        if causal:
            allowed = float_mask = None
        p_drop = self.dropout if self.training else 0.0
        weights = None
        if need_weights:  # separate operations, as PyTorch: the weights are returned
            out, weights = self._with_weights(q, k, v, allowed, float_mask, p_drop,
                                              average_attn_weights)
            if not batched:
                weights = weights.squeeze(0)
        else:
            mask = allowed if allowed is not None else float_mask
            out = scaled_dot_product_attention(q, k, v, mask, p_drop, is_causal=causal,
                                               generator=self._rng if p_drop else None)
        out = out.transpose(1, 2).reshape(n, big_l, self.embed_dim)  # join the heads
        out = self.out_proj(out)
        if not batched:
            out = out.squeeze(0)
        elif not self.batch_first:
            out = out.transpose(0, 1)
        return out, weights

    def _batch_first(self, query: Any, key: Any, value: Any, key_padding_mask: Any,
                     attn_mask: Any, is_causal: bool) -> tuple[Tensor, Tensor, Tensor, Any, bool]:
        """The inputs checked and laid out (N, L or S, E), the key padding mask for them, and
        whether they were batched."""
        name = "MultiheadAttention"
        query, key, value = (_tensor_arg(t, name) for t in (query, key, value))
        if is_causal and attn_mask is None:
            raise ValueError("MultiheadAttention: need attn_mask if specifying the is_causal "
                             "hint (make one with minigrad.functional.causal_mask)")
        batched = query.ndim == 3
        if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
            raise ValueError(f"{name}: expected query, key and value all 3-D (batched) or all "
                             f"2-D (unbatched); got shapes {query.shape}, {key.shape} and "
                             f"{value.shape}")
        for label, t, size in (("query", query, self.embed_dim), ("key", key, self.kdim),
                               ("value", value, self.vdim)):
            if t.shape[-1] != size:
                raise ValueError(f"{name}: expected {label} with last axis {size}; got shape "
                                 f"{t.shape}")
        same = query is key and key is value
        if not batched:  # one sequence: a batch of one
            query, key, value = (t.unsqueeze(0) for t in (query, key, value))
            if key_padding_mask is not None:
                m = key_padding_mask.data if isinstance(key_padding_mask, Tensor) \
                    else key_padding_mask
                key_padding_mask = query._xp.reshape(m, (1,) + tuple(m.shape)) \
                    if hasattr(m, "shape") else m
        elif not self.batch_first:  # (L, N, E) -> (N, L, E)
            query = query.transpose(0, 1)
            key, value = (query, query) if same else (key.transpose(0, 1),
                                                      value.transpose(0, 1))
        if same:
            key = value = query
        n = query.shape[0]
        if key.shape[:2] != value.shape[:2] or key.shape[0] != n:
            raise ValueError(f"{name}: key and value must have the same batch and sequence "
                             f"sizes as each other, and the query's batch size; got shapes "
                             f"{key.shape} and {value.shape} for a query of batch {n}")
        return query, key, value, key_padding_mask, batched

    def _with_weights(self, q: Tensor, k: Tensor, v: Tensor, allowed: Any,
                      float_mask: Tensor | None, p_drop: float,
                      average: bool) -> tuple[Tensor, Tensor]:
        """Attention through separate operations, as PyTorch's with ``need_weights``: the heads'
        outputs (N, H, L, E/H) and the weights ((N, L, S) averaged over the heads, or
        (N, H, L, S))."""
        scores = (q * math.sqrt(1.0 / self.head_dim)) @ k.transpose(-2, -1)
        if allowed is not None:
            scores = scores.masked_fill(~allowed, -math.inf)
        if float_mask is not None:
            scores = scores + float_mask
        weights = F.softmax(scores, dim=-1)  # (N, H, L, S)
        if p_drop:  # the weights returned are the dropped ones, as PyTorch's
            weights = F.dropout(weights, p_drop, generator=self._rng)
        out = weights @ v
        return out, weights.mean(axis=1) if average else weights

    def extra_repr(self) -> str:
        s = f"{self.embed_dim}, {self.num_heads}"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if not self._qkv_same_embed_dim:
            s += f", kdim={self.kdim}, vdim={self.vdim}"
        if self.batch_first:
            s += ", batch_first=True"
        return s
