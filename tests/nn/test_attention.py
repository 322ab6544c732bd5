"""Attention and Transformer layers: PyTorch's values and gradients, finite differences on NumPy
and array-api-strict, state dicts, dropout, masks and bad input.

The pinned values (``attention_values.json``) are PyTorch's (torch 2.13.0, float64) for the
recipe in ``attention_recipe.py``; ``python -m bench.torch_parity_attention`` recomputes them
with torch and compares (CI never installs torch).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from tests.support.attention_recipe import (BY_NAME, CASES, MinigradLib, decode, fixed, load_pinned,
                              load_state_dict_shapes, run, upper, weights_for)
from tests.support.engine_helpers import NAMESPACES, layer_function, make, namespace

import minigrad as mg
from minigrad import functional as F
from minigrad import nn

PINNED = load_pinned()
TORCH_STATE_DICTS = load_state_dict_shapes()


# ---------------------------------------------------------------------------------------------
# PyTorch's numbers and names


@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_outputs_and_every_gradient_match_pytorch(name):
    got = run(MinigradLib(), BY_NAME[name])
    expected = PINNED[name]
    assert set(got) == set(expected), f"{name}: {sorted(got)} vs {sorted(expected)}"
    for key, value in expected.items():
        want = decode(value)
        assert got[key] is not None, f"{name}: {key} got no gradient"
        np.testing.assert_allclose(got[key], want, rtol=0, atol=1e-11, err_msg=f"{name}: {key}")


@pytest.mark.parametrize("name", list(TORCH_STATE_DICTS))
def test_a_pytorch_state_dict_loads_unchanged(name):
    """The keys and shapes are PyTorch's, in its order, and a state dict of that layout (nested
    lists, as one read from a PyTorch checkpoint) loads and is what the layer then holds."""
    layer = BY_NAME[name].build(nn)
    assert [(k, tuple(v.shape)) for k, v in layer.state_dict().items()] == \
        TORCH_STATE_DICTS[name]
    state = {k: v.tolist() for k, v in weights_for(TORCH_STATE_DICTS[name]).items()}
    layer.load_state_dict(state)
    for k, v in layer.state_dict().items():
        np.testing.assert_array_equal(v, np.array(state[k]), err_msg=k)


def test_initial_values_are_pytorchs_recipe():
    mha = nn.MultiheadAttention(8, 2, seed=0)
    bound = math.sqrt(6 / (8 + 24))  # xavier_uniform_ of the packed (3E, E) weight
    w = mha.in_proj_weight.numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert not mha.in_proj_bias.numpy().any() and not mha.out_proj.bias.numpy().any()
    again = nn.MultiheadAttention(8, 2, seed=0)
    assert all(np.array_equal(a.numpy(), b.numpy())
               for a, b in zip(mha.parameters(), again.parameters()))
    layer = nn.TransformerEncoderLayer(8, 2, 16, seed=0)
    assert np.array_equal(layer.norm1.weight.numpy(), np.ones(8))


def test_repr():
    assert repr(nn.MultiheadAttention(8, 2, batch_first=True)).startswith(
        "MultiheadAttention(\n  8, 2, batch_first=True\n  (out_proj): Linear(")
    assert "activation=gelu, norm_first=True" in repr(
        nn.TransformerEncoderLayer(8, 2, 16, activation="gelu", norm_first=True))


# ---------------------------------------------------------------------------------------------
# Finite differences, on NumPy and array-api-strict


def _bool(xp, a):
    return a if xp is np else xp.asarray(a)


SDPA_CHECKS = {
    "plain": lambda xp: lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
    "bool_mask": lambda xp: lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, attn_mask=_bool(xp, np.array([[True, False, True], [True, True, False]]))),
    "float_mask": lambda xp: lambda q, k, v, m: F.scaled_dot_product_attention(
        q, k, v, attn_mask=m),
    "causal_scale": lambda xp: lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, is_causal=True, scale=0.7),
    "dropout_seeded": lambda xp: lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, dropout_p=0.4, seed=3),  # the same mask at every call: a smooth function
}


@pytest.mark.parametrize("ns", NAMESPACES)
@pytest.mark.parametrize("name", list(SDPA_CHECKS))
def test_sdpa_gradients_match_finite_differences(name, ns):
    rng = np.random.default_rng(1)
    arrays = [rng.normal(size=(2, 2, 3)), rng.normal(size=(2, 3, 3)), rng.normal(size=(2, 3, 2))]
    if name == "float_mask":
        arrays.append(rng.normal(size=(2, 3)))
    with namespace(ns) as xp:
        result = mg.gradcheck(SDPA_CHECKS[name](xp), *[make(xp, a) for a in arrays],
                              atol=1e-7, rtol=1e-6)
    assert result, result.message


LAYERS = {
    "mha_weights_padding": (lambda: nn.MultiheadAttention(4, 2, seed=0), (3, 2, 4),
                            lambda xp: lambda m, x: sum(
                                t.sum() * 0.5 + (t * t).sum() for t in m(
                                    x, x, x, key_padding_mask=_bool(xp, np.array(
                                        [[False, False, True], [False, False, False]]))))),
    "mha_cross_no_weights": (lambda: nn.MultiheadAttention(4, 2, kdim=3, vdim=3, seed=1),
                             (2, 3, 4), lambda xp: lambda m, x: m(
                                 x, x[..., :3] * 2.0, x[..., 1:].tanh(), need_weights=False)[0]),
    "encoder_post_norm": (lambda: nn.TransformerEncoderLayer(4, 2, 3, dropout=0.0, seed=2),
                          (3, 2, 4), lambda xp: lambda m, x: m(x)),
    "encoder_pre_norm_causal": (
        lambda: nn.TransformerEncoderLayer(4, 2, 3, dropout=0.0,  # gelu: in the pinned cases
                                           norm_first=True, batch_first=True, seed=3),
        (1, 3, 4), lambda xp: lambda m, x: m(x, src_mask=_bool(xp, upper(3)), is_causal=True)),
}


@pytest.mark.parametrize("ns", NAMESPACES)
@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_gradients_match_finite_differences(name, ns):
    build, x_shape, call = LAYERS[name]
    layer = build()
    values = [p.numpy() for p in layer.parameters()]
    x0 = np.random.default_rng(5).normal(size=x_shape)
    with namespace(ns) as xp:
        inputs = [make(xp, x0)] + [make(xp, v) for v in values]
        result = mg.gradcheck(layer_function(layer, call(xp)), *inputs, atol=1e-7, rtol=1e-6)
    assert result, result.message


# ---------------------------------------------------------------------------------------------
# Behaviour


def test_a_fully_masked_row_gives_zeros_in_sdpa_and_nan_in_the_weights_path():
    """As PyTorch: SDPA's softmax gives a row with no key 0 (and no gradient); the weights of
    MultiheadAttention(need_weights=True) are a plain softmax there, so NaN."""
    q = mg.tensor(fixed((1, 2, 4), 0.1), requires_grad=True)
    mask = np.array([[True, True], [False, False]])
    out = F.scaled_dot_product_attention(q, q, q, attn_mask=mask)
    assert np.array_equal(out.numpy()[0, 1], np.zeros(4))
    out.sum().backward()
    assert np.isfinite(q.grad).all()
    mha = nn.MultiheadAttention(4, 1, batch_first=True, seed=0)
    pad = np.array([[True, True]])
    with np.errstate(divide="ignore", invalid="ignore"):  # log(0) and -inf - -inf: NaN
        _, weights = mha(q, q, q, key_padding_mask=pad)
    assert np.isnan(weights.numpy()).all()
    out, _ = mha(q, q, q, key_padding_mask=pad, need_weights=False)
    assert np.isfinite(out.numpy()).all()


def test_no_keys_or_no_queries_give_empty_or_zero_outputs_as_pytorch():
    q = mg.tensor(np.ones((3, 2)), requires_grad=True)
    for causal in (False, True):
        out = F.scaled_dot_product_attention(q, mg.tensor(np.ones((0, 2))),
                                             mg.tensor(np.ones((0, 2))), is_causal=causal)
        assert np.array_equal(out.numpy(), np.zeros((3, 2)))  # an average of nothing: 0
        out.sum().backward()
        assert np.array_equal(q.grad, np.zeros((3, 2)))
        q.grad = None
    none = F.scaled_dot_product_attention(mg.tensor(np.ones((0, 2))), mg.tensor(np.ones((4, 2))),
                                          mg.tensor(np.ones((4, 3))))
    assert none.shape == (0, 3)


def test_dropout_is_seeded_scaled_and_off_at_zero():
    q, k, v = (mg.tensor(fixed((2, 6, 4), p)) for p in (0.1, 0.2, 0.3))
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, seed=7)
    b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, seed=7)
    c = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, seed=8)
    assert np.array_equal(a.numpy(), b.numpy()) and not np.array_equal(a.numpy(), c.numpy())
    plain = F.scaled_dot_product_attention(q, k, v)
    assert np.array_equal(F.scaled_dot_product_attention(q, k, v, dropout_p=0.0).numpy(),
                          plain.numpy())
    ones = mg.tensor(np.ones((1, 400, 1)))  # values all 1: each output is sum(kept p) / keep
    outs = F.scaled_dot_product_attention(ones, ones, ones, dropout_p=0.25, seed=1).numpy()
    assert abs(outs.mean() - 1.0) < 0.05  # the expectation is kept
    assert np.array_equal(F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).numpy(),
                          np.zeros((2, 6, 4)))


def test_mha_dropout_only_in_training():
    mha = nn.MultiheadAttention(4, 2, dropout=0.5, seed=0)
    x = mg.tensor(fixed((5, 2, 4), 0.4))
    a, _ = mha(x, x, x, need_weights=False)
    b, _ = mha(x, x, x, need_weights=False)
    assert not np.array_equal(a.numpy(), b.numpy())  # new masks each call
    mha.eval()
    c, w = mha(x, x, x)
    d, _ = mha(x, x, x, need_weights=False)
    np.testing.assert_allclose(c.numpy(), d.numpy(), atol=1e-15)
    np.testing.assert_allclose(w.numpy().sum(-1), np.ones((2, 5)), atol=1e-15)


def test_layouts_agree_batch_first_and_unbatched():
    x = fixed((5, 2, 4), 0.3, 1.0)
    seq = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, seed=4)
    first = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True, seed=4)
    out = seq(mg.tensor(x)).numpy()
    np.testing.assert_allclose(first(mg.tensor(x.swapaxes(0, 1))).numpy().swapaxes(0, 1), out,
                               atol=1e-14)
    np.testing.assert_allclose(seq(mg.tensor(x[:, 1])).numpy(), out[:, 1], atol=1e-14)


def test_causal_attention_does_not_see_the_future():
    """Changing the last position changes no earlier output (the GPT property)."""
    layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, norm_first=True, batch_first=True,
                                       seed=5)
    x = fixed((1, 6, 4), 0.2, 1.0)
    y = x.copy()
    y[0, -1] += 1.0
    a = layer(mg.tensor(x), src_mask=upper(6), is_causal=True).numpy()
    b = layer(mg.tensor(y), src_mask=upper(6), is_causal=True).numpy()
    np.testing.assert_array_equal(a[0, :-1], b[0, :-1])
    assert not np.allclose(a[0, -1], b[0, -1])
    q = mg.tensor(x)
    np.testing.assert_allclose(  # is_causal is the boolean lower-triangle mask
        F.scaled_dot_product_attention(q, q, q, is_causal=True).numpy(),
        F.scaled_dot_product_attention(q, q, q, attn_mask=F.causal_mask(np, 6)).numpy(),
        atol=0)


def test_a_small_mask_gives_the_values_of_the_same_mask_at_full_size():
    """A boolean mask much smaller than the scores (a causal (L, S) mask) is applied with
    fmin on NumPy, a full-size one with where(): the same values and gradients, bit for bit,
    NaN and infinite scores included; a NaN key after a query does not reach it."""
    rng = np.random.default_rng(7)
    for trial in range(60):
        big_l, s = (int(n) for n in rng.integers(1, 9, 2))
        q, k, v = (rng.standard_normal((2, 3, n, e)) for n, e in ((big_l, 4), (s, 4), (s, 3)))
        for a in (q, k):
            if trial % 2:
                a[tuple(int(rng.integers(0, d)) for d in a.shape)] = [np.nan, np.inf,
                                                                      -np.inf][trial % 3]
        small = rng.random((big_l, s)) < 0.6
        g = mg.tensor(rng.standard_normal((2, 3, big_l, 3)))
        runs = []
        for mask in (small, np.broadcast_to(small, (2, 3, big_l, s)).copy()):
            ts = [mg.tensor(a, requires_grad=True) for a in (q, k, v)]
            with np.errstate(invalid="ignore"):
                y = F.scaled_dot_product_attention(*ts, attn_mask=mask)
                (y * g).sum().backward()
            runs.append([y.numpy()] + [t.grad for t in ts])
        for a, b in zip(*runs):
            np.testing.assert_array_equal(a, b)
    q = fixed((1, 1, 6, 4), 0.3, 1.0)
    k = q.copy()
    k[0, 0, 4] = np.nan
    y = F.scaled_dot_product_attention(mg.tensor(q), mg.tensor(k), mg.tensor(q), is_causal=True)
    assert not np.isnan(y.numpy()[0, 0, :4]).any() and np.isnan(y.numpy()[0, 0, 4:]).all()


def test_encoder_copies_are_independent_and_float32_stays_float32():
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, seed=0), 2)
    a, b = enc.layers[0].linear1.weight, enc.layers[1].linear1.weight
    assert a is not b and np.array_equal(a.numpy(), b.numpy())
    a.data[0, 0] += 1.0
    assert not np.array_equal(a.numpy(), b.numpy())
    layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, dtype="float32", seed=0)
    out = layer(mg.tensor(np.ones((3, 1, 4), dtype=np.float32)))
    assert out.dtype == np.float32
    out.sum().backward()
    assert all(p.grad.dtype == np.float32 for p in layer.parameters())


BAD = [
    (lambda: F.scaled_dot_product_attention(mg.tensor(np.ones((2, 3))),
                                            mg.tensor(np.ones((2, 4))), mg.tensor(np.ones((2, 3)))),
     ValueError, "last axes"),
    (lambda: F.scaled_dot_product_attention(mg.tensor(np.ones((2, 3))),
                                            mg.tensor(np.ones((2, 3))), mg.tensor(np.ones((4, 3)))),
     ValueError, "same number of entries"),
    (lambda: F.scaled_dot_product_attention(mg.tensor(np.ones((2, 3))), mg.tensor(np.ones((2, 3))),
                                            mg.tensor(np.ones((2, 3), dtype=np.float32))),
     TypeError, "same dtype"),
    (lambda: F.scaled_dot_product_attention(mg.tensor(np.ones(3)), mg.tensor(np.ones(3)),
                                            mg.tensor(np.ones(3))), ValueError, "at least 2 axes"),
    (lambda: F.scaled_dot_product_attention(*(mg.tensor(np.ones((2, 3))),) * 3,
                                            attn_mask=np.ones((2, 2), bool), is_causal=True),
     ValueError, "should not be set when is_causal"),
    (lambda: F.scaled_dot_product_attention(*(mg.tensor(np.ones((2, 3))),) * 3,
                                            attn_mask=np.ones((2, 2), dtype=np.int64)),
     TypeError, "bool or to match"),
    (lambda: F.scaled_dot_product_attention(*(mg.tensor(np.ones((2, 3))),) * 3,
                                            attn_mask=np.ones((3, 2), bool)),
     ValueError, "does not broadcast"),
    (lambda: F.scaled_dot_product_attention(*(mg.tensor(np.ones((2, 3))),) * 3, dropout_p=1.5),
     ValueError, "dropout_p"),
    (lambda: F.scaled_dot_product_attention(np.ones((2, 3)), np.ones((2, 3)), np.ones((2, 3))),
     TypeError, "expected a Tensor"),
    (lambda: F.scaled_dot_product_attention(mg.tensor(np.ones((1, 3, 2, 2))),
                                            *(mg.tensor(np.ones((1, 2, 2, 2))),) * 2,
                                            enable_gqa=True), ValueError, "multiple"),
    (lambda: nn.MultiheadAttention(5, 2), ValueError, "divisible by num_heads"),
    (lambda: nn.MultiheadAttention(4, 2, add_bias_kv=True), NotImplementedError, "add_bias_kv"),
    (lambda: nn.MultiheadAttention(4, 2, seed=0)(*(mg.tensor(np.ones((3, 2, 4))),) * 3,
                                                 key_padding_mask=np.zeros((2, 4), bool)),
     ValueError, "key_padding_mask of shape"),
    (lambda: nn.MultiheadAttention(4, 2, seed=0)(*(mg.tensor(np.ones((3, 2, 4))),) * 3,
                                                 attn_mask=np.zeros((2, 3), bool)),
     ValueError, "attn_mask should have shape"),
    (lambda: nn.MultiheadAttention(4, 2, seed=0)(*(mg.tensor(np.ones((3, 2, 4))),) * 3,
                                                 is_causal=True),
     ValueError, "need attn_mask"),
    (lambda: nn.MultiheadAttention(4, 2, seed=0)(*(mg.tensor(np.ones((3, 2, 5))),) * 3),
     ValueError, "last axis 4"),
    (lambda: nn.TransformerEncoderLayer(4, 2, activation="tanh"), ValueError, "relu/gelu"),
    (lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2), 0), ValueError,
     "num_layers"),
]


@pytest.mark.parametrize("call, error, match", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_input_is_refused_clearly(call, error, match):
    with pytest.raises(error, match=match):
        call()
