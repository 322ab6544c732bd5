"""Transformer layers: :class:`TransformerEncoderLayer` and :class:`TransformerEncoder`, as
``torch.nn``.

An encoder layer is self-attention and a two-layer MLP (the *feed-forward* block), each wrapped
in a residual connection and a layer normalization::

    norm_first=False (post-norm, the 2017 paper):   x = norm1(x + sa(x));   x = norm2(x + ff(x))
    norm_first=True  (pre-norm, GPT-2 and after):   x = x + sa(norm1(x));   x = x + ff(norm2(x))

with ``sa(x) = dropout1(self_attn(x, x, x)[0])`` and
``ff(x) = dropout2(linear2(dropout(activation(linear1(x)))))``. The names and shapes of the
parameters are PyTorch's, so a PyTorch state dict loads unchanged.
"""
from __future__ import annotations

import copy
from typing import Any, Callable

from .. import functional as F
from ..tensor import Tensor, _tensor_arg
from .attention import MultiheadAttention
from .containers import ModuleList
from .modules import Dropout, Linear, Module, _generator
from .normalization import LayerNorm

__all__ = ["TransformerEncoderLayer", "TransformerEncoder"]

_ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {"relu": F.relu, "gelu": F.gelu}


class TransformerEncoderLayer(Module):
    """Self-attention and a feed-forward block, as ``torch.nn.TransformerEncoderLayer``.

    Parameters
    ----------
    d_model : int
        E, the size of each position's vector.
    nhead : int
        The attention heads (E must be a multiple).
    dim_feedforward : int
        The hidden size of the feed-forward block.
    dropout : float
        Dropout after the attention, inside and after the feed-forward block, and on the
        attention weights (in training mode).
    activation : "relu", "gelu" or callable
        The feed-forward block's nonlinearity (GELU is the exact one, as PyTorch's "gelu").
    layer_norm_eps : float
        The ``eps`` of both layer norms.
    batch_first : bool
        Inputs (N, L, E) instead of (L, N, E).
    norm_first : bool
        Pre-norm (normalize before each block) instead of post-norm.
    bias : bool
        Biases in the linear layers and the layer norms.
    rng, seed, dtype, device : optional
        As for :class:`~minigrad.nn.Linear`; ``rng`` draws every weight in turn, then the
        dropout masks.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable[[Tensor], Tensor] = "relu",
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, *, rng: Any = None,
                 seed: int | None = None, dtype: Any = "float64",
                 device: str | None = None) -> None:
        super().__init__()
        if isinstance(activation, str):
            if activation not in _ACTIVATIONS:
                raise ValueError(f"TransformerEncoderLayer: activation should be relu/gelu, not "
                                 f"{activation!r}")
            self.activation_name = activation
            fn = _ACTIVATIONS[activation]
        elif callable(activation):
            self.activation_name, fn = getattr(activation, "__name__", repr(activation)), \
                activation
        else:
            raise TypeError(f"TransformerEncoderLayer: activation must be 'relu', 'gelu' or a "
                            f"callable; got {type(activation).__name__}")
        rng = _generator("TransformerEncoderLayer", rng, seed)
        kw = {"dtype": dtype, "device": device}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, rng=rng, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, rng=rng, **kw)
        self.dropout = Dropout(dropout, rng=rng)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, rng=rng, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout, rng=rng)
        self.dropout2 = Dropout(dropout, rng=rng)
        self.activation = fn
        self.batch_first = batch_first

    def _sa_block(self, x: Tensor, attn_mask: Any, key_padding_mask: Any,
                  is_causal: bool) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src: Tensor, src_mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool = False) -> Tensor:
        """One layer over ``src`` ((L, N, E), or (N, L, E) with ``batch_first``, or (L, E)).

        ``src_mask`` and ``src_key_padding_mask`` are the ``attn_mask`` and
        ``key_padding_mask`` of :class:`MultiheadAttention` (boolean True: may not attend);
        ``is_causal`` is the hint that ``src_mask`` is the causal mask.
        """
        x = _tensor_arg(src, "TransformerEncoderLayer")
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def extra_repr(self) -> str:
        return f"activation={self.activation_name}, norm_first={self.norm_first}"


def _copy(module: Module) -> Module:
    """A deep copy of ``module`` (new arrays, the same array namespaces: modules are shared,
    never copied)."""
    memo: dict[int, Any] = {}
    for _, t in module._named_tensors():
        memo[id(t._xp)] = t._xp
    return copy.deepcopy(module, memo)


class TransformerEncoder(Module):
    """``num_layers`` copies of an encoder layer, then an optional norm, as
    ``torch.nn.TransformerEncoder`` (its state-dict keys: ``layers.0.self_attn....``).

    Parameters
    ----------
    encoder_layer : TransformerEncoderLayer
        Copied ``num_layers`` times (deep copies: the same initial weights in every layer, as
        PyTorch).
    num_layers : int
        How many layers.
    norm : Module, optional
        Applied to the last layer's output.
    """

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__()
        if not isinstance(num_layers, int) or isinstance(num_layers, bool) or num_layers < 1:
            raise ValueError(f"TransformerEncoder: num_layers must be a positive int; got "
                             f"{num_layers!r}")
        self.layers = ModuleList([_copy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src: Tensor, mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool = False) -> Tensor:
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=is_causal)
        return self.norm(x) if self.norm is not None else x
