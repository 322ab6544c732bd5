"""ONNX translations of the attention layers, for :func:`minigrad.export.onnx.export`.

==============================  ===============================================================
minigrad                        ONNX
==============================  ===============================================================
``Embedding``                   ``Gather`` of the rows (the graph's input: int64 token ids)
``GELU``                        ``Erf`` (exact) or ``Tanh`` (``approximate="tanh"``) formulas
``MultiheadAttention``          self-attention of its input (query = key = value, no masks;
                                the output only, as ``need_weights=False``): the packed
                                projection ``MatMul``, ``Reshape``/``Transpose`` into heads,
                                ``MatMul``, ``Mul`` by the scale, ``Softmax``, ``MatMul``, the
                                heads joined, ``out_proj``
``TransformerEncoderLayer``     its attention (above), ``LayerNormalization``, the
                                feed-forward ``MatMul``/``Add`` and activation, the residual
                                ``Add``; no masks (a model that passes the causal mask, as
                                ``examples/char_gpt.py``, exports its layers with ``causal``)
==============================  ===============================================================

Each function has the exporter's translation signature ``(graph, path, layer, x, in_shape,
out_shape)`` and reaches the other translations through ``graph.translate`` (so this module
does not import the exporter). ``causal=True`` adds PyTorch's causal mask as a constant of the
example's sequence length: such a graph takes that length only (any batch size).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from minigrad import functional as F
from minigrad import nn

__all__ = ["TRANSLATIONS", "INTEGER_INPUT", "multihead_attention", "encoder_layer",
           "embedding", "gelu"]


def _scalar(graph: Any, path: str, value: float) -> str:
    """A 0-d float constant of the model's dtype."""
    return graph.constant(f"{path}.scalar" if path else "scalar", [float(value)], ())


def _int64(graph: Any, path: str, what: str, values: list[int]) -> str:
    return graph.constant_int64(f"{path}.{what}" if path else what, values)


def _matmul_linear(graph: Any, path: str, x: str, weight: Any, bias: Any) -> str:
    """``x @ weight.T + bias`` for an input of any rank (MatMul broadcasts)."""
    w = graph.node("Transpose", [graph.initializer(weight)], path, perm=[1, 0])
    y = graph.node("MatMul", [x, w], path)
    return graph.node("Add", [y, graph.initializer(bias)], path) if bias is not None else y


def multihead_attention(graph: Any, path: str, layer: Any, x: str, in_shape: tuple[int, ...],
                        out_shape: tuple[int, ...], causal: bool = False) -> str:
    """Self-attention of ``x`` ((L, N, E), (N, L, E) with batch_first, or (L, E))."""
    if not layer._qkv_same_embed_dim:
        raise TypeError(f"export: the MultiheadAttention at {path!r} has kdim/vdim of its own: "
                        "it attends to other inputs than its own, which a one-input graph "
                        "cannot give it")
    e, h = layer.embed_dim, layer.num_heads
    hd = e // h
    if len(in_shape) == 2:  # unbatched (L, E): a batch of one
        x = graph.node("Unsqueeze", [x, _int64(graph, path, "axes", [0])], path)
    elif not layer.batch_first:  # (L, N, E) -> (N, L, E)
        x = graph.node("Transpose", [x], path, perm=[1, 0, 2])
    length = in_shape[0] if len(in_shape) == 2 or not layer.batch_first else in_shape[1]
    qkv = _matmul_linear(graph, path, x, layer.in_proj_weight, layer.in_proj_bias)  # (N, L, 3E)
    qkv = graph.node("Reshape", [qkv, _int64(graph, path, "heads", [0, 0, 3, h, hd])], path)
    qkv = graph.node("Transpose", [qkv], path, perm=[2, 0, 3, 1, 4])  # (3, N, H, L, hd)
    q, k, v = (graph.node("Squeeze", [graph.node("Gather", [qkv, _int64(graph, path, "index",
                                                                         [i])], path, axis=0),
                                      _int64(graph, path, "axes", [0])], path)
               for i in range(3))
    kt = graph.node("Transpose", [k], path, perm=[0, 1, 3, 2])
    scores = graph.node("Mul", [graph.node("MatMul", [q, kt], path),
                                _scalar(graph, path, 1.0 / math.sqrt(hd))], path)  # (N,H,L,L)
    if causal:  # -inf above the diagonal, 0 elsewhere: the example's length only
        future = np.triu(np.ones((length, length), dtype=bool), 1)
        mask = graph.constant(f"{path}.causal_mask" if path else "causal_mask",
                              np.where(future, -np.inf, 0.0).reshape(-1).tolist(),
                              (length, length))
        scores = graph.node("Add", [scores, mask], path)
    weights = graph.node("Softmax", [scores], path, axis=-1)
    out = graph.node("MatMul", [weights, v], path)  # (N, H, L, hd)
    out = graph.node("Transpose", [out], path, perm=[0, 2, 1, 3])
    out = graph.node("Reshape", [out, _int64(graph, path, "join", [0, 0, e])], path)
    out = _matmul_linear(graph, f"{path}.out_proj" if path else "out_proj", out,
                         layer.out_proj.weight, layer.out_proj.bias)
    if len(in_shape) == 2:
        return graph.node("Squeeze", [out, _int64(graph, path, "axes", [0])], path)
    if not layer.batch_first:
        return graph.node("Transpose", [out], path, perm=[1, 0, 2])
    return out


def gelu(graph: Any, path: str, x: str, approximate: str) -> str:
    """``x * Phi(x)`` with ``Erf``, or GELU's tanh formula."""
    half = graph.node("Mul", [x, _scalar(graph, path, 0.5)], path)
    if approximate == "tanh":  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        cube = graph.node("Mul", [graph.node("Mul", [x, x], path), x], path)
        inner = graph.node("Add", [x, graph.node("Mul", [cube, _scalar(graph, path, 0.044715)],
                                                 path)], path)
        t = graph.node("Tanh", [graph.node("Mul", [inner, _scalar(
            graph, path, math.sqrt(2.0 / math.pi))], path)], path)
    else:  # 0.5 x (1 + erf(x / sqrt(2)))
        t = graph.node("Erf", [graph.node("Mul", [x, _scalar(graph, path, 1 / math.sqrt(2))],
                                          path)], path)
    return graph.node("Mul", [half, graph.node("Add", [t, _scalar(graph, path, 1.0)], path)],
                      path)


def _activation(graph: Any, path: str, fn: Any, x: str) -> str:
    if fn is F.relu or isinstance(fn, nn.ReLU):
        return graph.node("Relu", [x], path)
    if fn is F.gelu:
        return gelu(graph, path, x, "none")
    if isinstance(fn, nn.GELU):
        return gelu(graph, path, x, fn.approximate)
    raise TypeError(f"export: the TransformerEncoderLayer at {path!r} has the activation "
                    f"{fn!r}; export translates 'relu', 'gelu', nn.ReLU() and nn.GELU()")


def encoder_layer(graph: Any, path: str, layer: Any, x: str, in_shape: tuple[int, ...],
                  out_shape: tuple[int, ...], causal: bool = False) -> str:
    """A TransformerEncoderLayer in eval() mode (dropouts are the identity)."""
    def sub(name: str) -> str:
        return f"{path}.{name}" if path else name

    def sa(v: str) -> str:
        return multihead_attention(graph, sub("self_attn"), layer.self_attn, v, in_shape,
                                   in_shape, causal=causal)

    def ff(v: str) -> str:
        hidden = _matmul_linear(graph, sub("linear1"), v, layer.linear1.weight,
                                layer.linear1.bias)
        hidden = _activation(graph, sub("activation"), layer.activation, hidden)
        return _matmul_linear(graph, sub("linear2"), hidden, layer.linear2.weight,
                              layer.linear2.bias)

    def norm(name: str, v: str) -> str:
        return graph.translate(sub(name), getattr(layer, name), v, in_shape, in_shape)

    if layer.norm_first:
        x = graph.node("Add", [x, sa(norm("norm1", x))], path)
        return graph.node("Add", [x, ff(norm("norm2", x))], path)
    x = norm("norm1", graph.node("Add", [x, sa(x)], path))
    return norm("norm2", graph.node("Add", [x, ff(x)], path))


def embedding(graph: Any, path: str, layer: Any, x: str, in_shape: tuple[int, ...],
              out_shape: tuple[int, ...]) -> str:
    """Rows of ``weight`` for int64 ids of any shape."""
    return graph.node("Gather", [graph.initializer(layer.weight), x], path, axis=0)


def _gelu_layer(graph: Any, path: str, layer: Any, x: str, in_shape: tuple[int, ...],
                out_shape: tuple[int, ...]) -> str:
    return gelu(graph, path, x, layer.approximate)


TRANSLATIONS = {nn.MultiheadAttention: multihead_attention,
                nn.TransformerEncoderLayer: encoder_layer, nn.Embedding: embedding,
                nn.GELU: _gelu_layer}
#: Layers whose input is integer ids (the graph's input is then int64).
INTEGER_INPUT = {nn.Embedding}
