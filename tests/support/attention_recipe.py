"""Attention and Transformer layers against PyTorch: one recipe, run by both libraries.

Each case builds a layer (or none, for ``F.scaled_dot_product_attention``), loads fixed
weights into it by PyTorch's state-dict names, runs it on fixed inputs, and back-propagates
``sum(output * weights)`` with fixed weights: what is compared is the output and the gradient
of every input and every parameter. ``tests/nn/test_attention.py`` runs the recipe on minigrad and
compares with PyTorch's answers pinned in ``attention_values.json`` (CI has no PyTorch);
``python -m bench.torch_parity_attention`` runs it on PyTorch (2.13, float64), compares both
and rewrites the pins with ``--write``. This file never imports torch: the library comes in as
an adapter (:class:`Lib`).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

PINNED_PATH = Path(__file__).resolve().parent / "attention_values.json"


def fixed(shape: tuple[int, ...], phase: float, scale: float = 0.5) -> np.ndarray:
    """Deterministic, irregular values: ``scale * sin(0.7 * k + phase)`` for k = 0, 1, ..."""
    return scale * np.sin(0.7 * np.arange(math.prod(shape)) + phase).reshape(shape)


def upper(length: int, source: int | None = None) -> np.ndarray:
    """True above the diagonal: nn.MultiheadAttention's causal mask (True: may not attend)."""
    return np.triu(np.ones((length, source or length), dtype=bool), 1)


def row_masked(shape: tuple[int, ...]) -> np.ndarray:
    """A boolean SDPA mask (True: may attend) with a pattern and one fully masked row."""
    m = (np.arange(math.prod(shape)).reshape(shape) % 3) != 1
    m[..., 1, :] = False
    return m


def float_mask(shape: tuple[int, ...]) -> np.ndarray:
    m = fixed(shape, 0.9, 1.0)
    m.reshape(-1)[::4] = -np.inf
    return m


def padding(n: int, s: int) -> np.ndarray:
    """key_padding_mask: batch b ignores its last b keys (True: ignore)."""
    return np.arange(s)[None, :] >= s - np.arange(n)[:, None]


@dataclass
class Case:
    """``build(nn)`` the layer (or None); ``call(F, layer, t)`` the outputs (a tensor or a
    tuple; None entries skipped) from the tensors ``t`` made of ``inputs``: name -> (array,
    requires_grad)."""

    name: str
    build: Callable[[Any], Any] | None
    call: Callable[[Any, Any, dict], Any]
    inputs: dict[str, tuple[np.ndarray, bool]] = field(default_factory=dict)


def x(shape: tuple[int, ...], phase: float = 0.3) -> tuple[np.ndarray, bool]:
    return fixed(shape, phase, 1.0), True


def const(array: np.ndarray) -> tuple[np.ndarray, bool]:
    return array, False


SDPA = "scaled_dot_product_attention"

CASES: list[Case] = [
    # --- F.scaled_dot_product_attention ----------------------------------------------------
    Case("sdpa_plain", None, lambda F, m, t: getattr(F, SDPA)(t["q"], t["k"], t["v"]),
         {"q": x((2, 3, 4)), "k": x((2, 5, 4), 1.1), "v": x((2, 5, 6), 2.3)}),
    Case("sdpa_bool_mask_full_row", None,
         lambda F, m, t: getattr(F, SDPA)(t["q"], t["k"], t["v"], attn_mask=t["mask"]),
         {"q": x((2, 3, 4)), "k": x((2, 5, 4), 1.1), "v": x((2, 5, 6), 2.3),
          "mask": const(row_masked((3, 5)))}),
    Case("sdpa_float_mask_grad", None,
         lambda F, m, t: getattr(F, SDPA)(t["q"], t["k"], t["v"], attn_mask=t["mask"]),
         {"q": x((2, 2, 3, 4)), "k": x((2, 2, 5, 4), 1.1), "v": x((2, 2, 5, 3), 2.3),
          "mask": (fixed((2, 1, 3, 5), 0.4, 1.0), True)}),
    Case("sdpa_float_mask_inf", None,
         lambda F, m, t: getattr(F, SDPA)(t["q"], t["k"], t["v"], attn_mask=t["mask"]),
         {"q": x((2, 3, 4)), "k": x((2, 5, 4), 1.1), "v": x((2, 5, 6), 2.3),
          "mask": const(float_mask((3, 5)))}),
    Case("sdpa_causal", None,
         lambda F, m, t: getattr(F, SDPA)(t["q"], t["k"], t["v"], is_causal=True),
         {"q": x((2, 2, 4, 3)), "k": x((2, 2, 4, 3), 1.1), "v": x((2, 2, 4, 3), 2.3)}),
    Case("sdpa_causal_rectangular", None,
         lambda F, m, t: getattr(F, SDPA)(t["q"], t["k"], t["v"], is_causal=True),
         {"q": x((2, 3, 4)), "k": x((2, 5, 4), 1.1), "v": x((2, 5, 2), 2.3)}),
    Case("sdpa_scale", None,
         lambda F, m, t: getattr(F, SDPA)(t["q"], t["k"], t["v"], scale=0.3),
         {"q": x((3, 4)), "k": x((5, 4), 1.1), "v": x((5, 6), 2.3)}),
    Case("sdpa_broadcast_batch", None,
         lambda F, m, t: getattr(F, SDPA)(t["q"], t["k"], t["v"]),
         {"q": x((2, 3, 3, 4)), "k": x((1, 3, 5, 4), 1.1), "v": x((3, 5, 2), 2.3)}),
    Case("sdpa_gqa", None,
         lambda F, m, t: getattr(F, SDPA)(t["q"], t["k"], t["v"], enable_gqa=True,
                                          is_causal=True),
         {"q": x((2, 4, 3, 2)), "k": x((2, 2, 3, 2), 1.1), "v": x((2, 2, 3, 5), 2.3)}),
    # --- nn.MultiheadAttention ---------------------------------------------------------------
    Case("mha_self_weights", lambda nn: nn.MultiheadAttention(6, 2),
         lambda F, m, t: m(t["x"], t["x"], t["x"]), {"x": x((4, 2, 6))}),
    Case("mha_self_no_weights", lambda nn: nn.MultiheadAttention(6, 3),
         lambda F, m, t: m(t["x"], t["x"], t["x"], need_weights=False), {"x": x((4, 2, 6))}),
    Case("mha_cross_batch_first_padding",
         lambda nn: nn.MultiheadAttention(6, 2, batch_first=True),
         lambda F, m, t: m(t["q"], t["kv"], t["kv"], key_padding_mask=t["pad"],
                           average_attn_weights=False),
         {"q": x((3, 4, 6)), "kv": x((3, 5, 6), 1.7), "pad": const(padding(3, 5))}),
    Case("mha_padding_no_weights",
         lambda nn: nn.MultiheadAttention(6, 2, batch_first=True),
         lambda F, m, t: m(t["q"], t["k"], t["v"], key_padding_mask=t["pad"],
                           need_weights=False),
         {"q": x((3, 4, 6)), "k": x((3, 5, 6), 1.7), "v": x((3, 5, 6), 2.9),
          "pad": const(padding(3, 5))}),
    Case("mha_causal_hint", lambda nn: nn.MultiheadAttention(4, 2, batch_first=True),
         lambda F, m, t: m(t["x"], t["x"], t["x"], attn_mask=t["mask"], is_causal=True,
                           need_weights=False),
         {"x": x((2, 5, 4)), "mask": const(upper(5))}),
    Case("mha_float_mask_and_padding", lambda nn: nn.MultiheadAttention(4, 2),
         lambda F, m, t: m(t["x"], t["x"], t["x"], attn_mask=t["mask"],
                           key_padding_mask=t["pad"]),
         {"x": x((5, 2, 4)), "mask": const(fixed((5, 5), 0.2, 1.0)),
          "pad": const(padding(2, 5))}),
    Case("mha_mask_per_head", lambda nn: nn.MultiheadAttention(4, 2),
         lambda F, m, t: m(t["x"], t["x"], t["x"], attn_mask=t["mask"], need_weights=False),
         {"x": x((5, 2, 4)), "mask": const(
             np.stack([upper(5), upper(5).T, upper(5), np.zeros((5, 5), bool)]))}),
    Case("mha_kdim_vdim", lambda nn: nn.MultiheadAttention(6, 3, kdim=4, vdim=5),
         lambda F, m, t: m(t["q"], t["k"], t["v"]),
         {"q": x((3, 2, 6)), "k": x((4, 2, 4), 1.1), "v": x((4, 2, 5), 2.3)}),
    Case("mha_unbatched_no_bias", lambda nn: nn.MultiheadAttention(4, 2, bias=False),
         lambda F, m, t: m(t["x"], t["x"], t["x"], key_padding_mask=t["pad"]),
         {"x": x((5, 4)), "pad": const(np.array([False, False, True, False, True]))}),
    # --- nn.TransformerEncoderLayer and nn.TransformerEncoder --------------------------------
    Case("encoder_post_norm_relu",
         lambda nn: nn.TransformerEncoderLayer(6, 2, 10, dropout=0.0),
         lambda F, m, t: m(t["x"]), {"x": x((4, 2, 6))}),
    Case("encoder_pre_norm_gelu_causal",
         lambda nn: nn.TransformerEncoderLayer(6, 3, 8, dropout=0.0, activation="gelu",
                                               batch_first=True, norm_first=True),
         lambda F, m, t: m(t["x"], src_mask=t["mask"], is_causal=True),
         {"x": x((2, 5, 6)), "mask": const(upper(5))}),
    Case("encoder_padding_eps_no_bias",
         lambda nn: nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, layer_norm_eps=1e-3,
                                               batch_first=True, bias=False),
         lambda F, m, t: m(t["x"], src_key_padding_mask=t["pad"]),
         {"x": x((3, 5, 4)), "pad": const(padding(3, 5))}),
    Case("encoder_stack_with_norm",
         lambda nn: nn.TransformerEncoder(
             nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, norm_first=True,
                                        batch_first=True), 2, norm=nn.LayerNorm(4)),
         lambda F, m, t: m(t["x"], mask=t["mask"]),
         {"x": x((2, 5, 4)), "mask": const(upper(5))}),
]

BY_NAME = {c.name: c for c in CASES}


class Lib:
    """What the recipe needs of a library: ``F``, ``nn``, making tensors, reading them back,
    and ``make_layer(case)`` (built and given the fixed weights, float64)."""

    F: Any
    nn: Any

    def tensor(self, array: np.ndarray, requires_grad: bool) -> Any:
        raise NotImplementedError

    def numpy(self, t: Any) -> np.ndarray:
        raise NotImplementedError

    def grad(self, t: Any) -> np.ndarray | None:
        raise NotImplementedError

    def make_layer(self, case: Case) -> Any:
        raise NotImplementedError

    def named_parameters(self, layer: Any) -> list[tuple[str, Any]]:
        return list(layer.named_parameters())

    def backward(self, total: Any) -> None:
        total.backward()


class MinigradLib(Lib):
    """The recipe on minigrad."""

    def __init__(self) -> None:
        import minigrad
        self.mg, self.F, self.nn = minigrad, minigrad.functional, minigrad.nn

    def tensor(self, array: np.ndarray, requires_grad: bool) -> Any:
        return self.mg.tensor(array, requires_grad=requires_grad)

    def numpy(self, t: Any) -> np.ndarray:
        return np.asarray(t.numpy(), dtype="float64")

    def grad(self, t: Any) -> np.ndarray | None:
        return None if t.grad is None else np.asarray(t.grad, dtype="float64")

    def make_layer(self, case: Case) -> Any:
        layer = case.build(self.nn)
        layer.load_state_dict(weights_for([(k, v.shape) for k, v in layer.state_dict().items()]))
        return layer


def weights_for(shapes: list[tuple[str, tuple[int, ...]]]) -> dict[str, np.ndarray]:
    """Fixed weights for the parameter names and shapes (in state-dict order); layer norms
    get weights near 1."""
    out = {}
    for j, (name, shape) in enumerate(shapes):
        w = fixed(shape, phase=1.0 + j, scale=0.5)
        out[name] = 1.0 + w if "norm" in name and name.endswith("weight") else w
    return out


def run(lib: Lib, case: Case) -> dict[str, np.ndarray]:
    """Outputs and gradients of ``case`` in ``lib``: keys ``out0``, ``out1``, ``grad:NAME``
    for each input that requires grad, ``grad:PARAM`` for each parameter."""
    layer = lib.make_layer(case) if case.build is not None else None
    t = {name: lib.tensor(a, g) for name, (a, g) in case.inputs.items()}
    outs = case.call(lib.F, layer, t)
    outs = outs if isinstance(outs, tuple) else (outs,)
    result = {}
    total = None
    for i, o in enumerate(outs):
        if o is None:
            continue
        value = lib.numpy(o)
        result[f"out{i}"] = value
        w = lib.tensor(fixed(value.shape, 0.1 + i, 1.0), False)
        term = (o * w).sum()
        total = term if total is None else total + term
    lib.backward(total)
    for name, (_, g) in case.inputs.items():
        if g:
            result[f"grad:{name}"] = lib.grad(t[name])
    if layer is not None:
        for name, p in lib.named_parameters(layer):
            result[f"grad:{name}"] = lib.grad(p)
    return result


def load_pinned() -> dict[str, dict[str, Any]]:
    """PyTorch's outputs and gradients of each case (lists; NaN and infinities as strings)."""
    return json.loads(PINNED_PATH.read_text())["cases"]


def load_state_dict_shapes() -> dict[str, list[tuple[str, tuple[int, ...]]]]:
    """PyTorch's state-dict keys and shapes of each case's layer, in its order."""
    return {name: [(k, tuple(shape)) for k, shape in keys] for name, keys in
            json.loads(PINNED_PATH.read_text())["state_dicts"].items()}


def encode(a: np.ndarray) -> Any:
    """An array as JSON (NaN and infinities as strings)."""
    return [encode(v) for v in a] if a.ndim else (
        float(a) if np.isfinite(a) else str(float(a)))


def decode(v: Any) -> np.ndarray:
    def num(u: Any) -> Any:
        return [num(w) for w in u] if isinstance(u, list) else float(u)
    return np.array(num(v), dtype="float64")


def write_pinned(results: dict[str, dict[str, np.ndarray]],
                 state_dicts: dict[str, list[tuple[str, tuple[int, ...]]]], version: str) -> None:
    """Write PyTorch's answers (data: one line a case) to ``attention_values.json``."""
    lines = [f"  {json.dumps(name)}: " + json.dumps({k: encode(np.round(v, 13))
                                                    for k, v in values.items()})
             for name, values in results.items()]
    keys = [f"  {json.dumps(name)}: " + json.dumps([[k, list(s)] for k, s in shapes])
            for name, shapes in state_dicts.items()]
    PINNED_PATH.write_text(f'{{"torch_version": {json.dumps(version)}, "dtype": "float64",\n'
                           ' "state_dicts": {\n' + ",\n".join(keys) + "\n},\n"
                           ' "cases": {\n' + ",\n".join(lines) + "\n}}\n")
