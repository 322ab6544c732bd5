"""Recurrent layers, Embedding and clip_grad_norm_: PyTorch's values, gradients, long sequences.

The pinned values (``rnn_values.json``) are PyTorch's (torch 2.13.0, float64) for the
deterministic recipe ``CASES`` / ``case_arrays``; ``python -m bench.torch_parity_rnn`` recomputes
them with torch and compares (CI never installs torch).
"""
from __future__ import annotations

import gc
import json
import math
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest
from tests.support.engine_helpers import NAMESPACES, layer_function, make, namespace

import minigrad as mg
from minigrad import graph, nn
from minigrad.nn.utils import clip_grad_norm_

# ---------------------------------------------------------------------------------------------
# The recipe (read by bench/torch_parity_rnn.py too) and PyTorch's outputs for it

# Each case: (name, layer, constructor keywords, input shape, initial state given?)
# Input shapes are (L, N, I), (N, L, I) with batch_first, (L, I) unbatched, or (N, I) for a cell.
CASES: list[tuple[str, str, dict, tuple[int, ...], bool]] = [
    ("rnn_tanh_2layers_h0", "RNN", {"input_size": 3, "hidden_size": 4, "num_layers": 2},
     (5, 2, 3), True),
    ("rnn_relu_batch_first", "RNN", {"input_size": 3, "hidden_size": 4, "nonlinearity": "relu",
                                     "batch_first": True}, (2, 5, 3), False),
    ("lstm_2layers_state", "LSTM", {"input_size": 3, "hidden_size": 4, "num_layers": 2},
     (5, 2, 3), True),
    ("lstm_nobias_batch_first", "LSTM", {"input_size": 3, "hidden_size": 4, "bias": False,
                                         "batch_first": True}, (2, 5, 3), False),
    ("gru_2layers_h0", "GRU", {"input_size": 3, "hidden_size": 4, "num_layers": 2}, (5, 2, 3),
     True),
    ("gru_unbatched", "GRU", {"input_size": 3, "hidden_size": 4}, (5, 3), False),
    ("rnncell", "RNNCell", {"input_size": 3, "hidden_size": 4}, (2, 3), True),
    ("lstmcell", "LSTMCell", {"input_size": 3, "hidden_size": 4}, (2, 3), True),
    ("grucell", "GRUCell", {"input_size": 3, "hidden_size": 4}, (2, 3), True),
]


def fixed(shape: tuple[int, ...], phase: float, scale: float = 0.5) -> np.ndarray:
    """Deterministic, irregular values: ``scale * sin(0.7 * k + phase)`` for k = 0, 1, ..."""
    return scale * np.sin(0.7 * np.arange(math.prod(shape)) + phase).reshape(shape)


def case_arrays(kind: str, kwargs: dict, x_shape: tuple[int, ...], with_state: bool,
                parameter_shapes: list[tuple[str, tuple[int, ...]]]) -> dict:
    """The weights (in named_parameters order), the input and the initial state of a case."""
    weights = {name: fixed(shape, phase=1.0 + j) for j, (name, shape) in
               enumerate(parameter_shapes)}
    hidden, layers = kwargs["hidden_size"], kwargs.get("num_layers", 1)
    if kind.endswith("Cell"):
        state_shape: tuple[int, ...] = (x_shape[0], hidden)
    elif len(x_shape) == 2:  # unbatched
        state_shape = (layers, hidden)
    else:
        state_shape = (layers, x_shape[0 if kwargs.get("batch_first") else 1], hidden)
    return {"weights": weights, "x": fixed(x_shape, phase=0.3, scale=1.0),
            "h": fixed(state_shape, phase=2.0, scale=0.3) if with_state else None,
            "c": fixed(state_shape, phase=2.5, scale=0.3) if with_state else None}


# PyTorch's outputs for CASES (torch 2.13.0, float64): data, one line a case.
PINNED = json.loads((Path(__file__).resolve().parent / "rnn_values.json").read_text())["cases"]


# PyTorch's parameter names and shapes (torch.nn.LSTM(3, 4, num_layers=2) etc.)
TORCH_PARAMETERS = {
    "LSTM(3, 4, num_layers=2)": [
        ("weight_ih_l0", (16, 3)), ("weight_hh_l0", (16, 4)), ("bias_ih_l0", (16,)),
        ("bias_hh_l0", (16,)), ("weight_ih_l1", (16, 4)), ("weight_hh_l1", (16, 4)),
        ("bias_ih_l1", (16,)), ("bias_hh_l1", (16,))],
    "GRU(3, 4, bias=False)": [("weight_ih_l0", (12, 3)), ("weight_hh_l0", (12, 4))],
    "RNN(3, 4, num_layers=2, nonlinearity='relu')": [
        ("weight_ih_l0", (4, 3)), ("weight_hh_l0", (4, 4)), ("bias_ih_l0", (4,)),
        ("bias_hh_l0", (4,)), ("weight_ih_l1", (4, 4)), ("weight_hh_l1", (4, 4)),
        ("bias_ih_l1", (4,)), ("bias_hh_l1", (4,))],
    "LSTMCell(3, 4)": [("weight_ih", (16, 3)), ("weight_hh", (16, 4)), ("bias_ih", (16,)),
                       ("bias_hh", (16,))],
    "GRUCell(3, 4)": [("weight_ih", (12, 3)), ("weight_hh", (12, 4)), ("bias_ih", (12,)),
                      ("bias_hh", (12,))],
    "RNNCell(3, 4, bias=False)": [("weight_ih", (4, 3)), ("weight_hh", (4, 4))],
    "Embedding(10, 3)": [("weight", (10, 3))],
}


def run_minigrad(kind: str, kwargs: dict, arrays: dict) -> dict[str, np.ndarray]:
    """Load the case's weights into a minigrad layer, run it, return its outputs as NumPy."""
    layer = getattr(nn, kind)(**kwargs, seed=0)
    layer.load_state_dict(arrays["weights"])  # PyTorch's names: loads unchanged
    x = mg.tensor(arrays["x"])
    h = mg.tensor(arrays["h"]) if arrays["h"] is not None else None
    c = mg.tensor(arrays["c"]) if arrays["c"] is not None else None
    if kind == "LSTM":
        out, (h_n, c_n) = layer(x, (h, c)) if h is not None else layer(x)
        return {"output": out.numpy(), "h_n": h_n.numpy(), "c_n": c_n.numpy()}
    if kind == "LSTMCell":
        h1, c1 = layer(x, (h, c))
        return {"h": h1.numpy(), "c": c1.numpy()}
    if kind.endswith("Cell"):
        return {"h": layer(x, h).numpy()}
    out, h_n = layer(x, h) if h is not None else layer(x)
    return {"output": out.numpy(), "h_n": h_n.numpy()}


# ---------------------------------------------------------------------------------------------
# Same names, shapes and numbers as PyTorch


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_outputs_match_pytorch_for_fixed_weights(case):
    name, kind, kwargs, x_shape, with_state = case
    shapes = [(n, p.shape) for n, p in getattr(nn, kind)(**kwargs, seed=0).named_parameters()]
    got = run_minigrad(kind, kwargs, case_arrays(kind, kwargs, x_shape, with_state, shapes))
    assert set(got) == set(PINNED[name])
    for key, expected in PINNED[name].items():
        np.testing.assert_allclose(got[key], np.array(expected), rtol=0, atol=1e-11,
                                   err_msg=f"{name}: {key}")


@pytest.mark.parametrize("spec", list(TORCH_PARAMETERS))
def test_parameter_names_and_shapes_are_pytorchs(spec):
    layer = eval(spec, {}, vars(nn))
    assert [(n, p.shape) for n, p in layer.named_parameters()] == TORCH_PARAMETERS[spec]
    assert list(layer.state_dict()) == [n for n, _ in TORCH_PARAMETERS[spec]]


def test_initial_values_are_uniform_in_pytorchs_range():
    lstm = nn.LSTM(3, 25, num_layers=2, seed=0)
    for name, p in lstm.named_parameters():
        assert np.abs(p.numpy()).max() <= 1 / 5, name  # U(-1/sqrt(H), 1/sqrt(H))
        assert np.abs(p.numpy()).max() > 0.15, name
    again = nn.LSTM(3, 25, num_layers=2, seed=0)
    assert all(np.array_equal(a.numpy(), b.numpy())
               for a, b in zip(lstm.parameters(), again.parameters()))


def test_repr():
    assert repr(nn.LSTM(3, 4, num_layers=2, batch_first=True)) == \
        "LSTM(3, 4, num_layers=2, batch_first=True)"
    assert repr(nn.RNN(3, 4, nonlinearity="relu", bias=False)) == \
        "RNN(3, 4, bias=False, nonlinearity='relu')"
    assert repr(nn.GRUCell(2, 5)) == "GRUCell(2, 5)"
    assert repr(nn.Embedding(10, 3, padding_idx=0)) == "Embedding(10, 3, padding_idx=0)"


# ---------------------------------------------------------------------------------------------
# Shapes, states and conventions


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_batch_first_and_unbatched_agree_with_the_default_layout(kind):
    layer = getattr(nn, kind)(3, 4, num_layers=2, seed=1)
    x = np.random.default_rng(0).normal(size=(6, 2, 3))  # (L, N, I)
    out, state = layer(x)
    first = getattr(nn, kind)(3, 4, num_layers=2, batch_first=True, seed=1)
    out_bf, state_bf = first(np.swapaxes(x, 0, 1))
    np.testing.assert_allclose(out_bf.numpy(), np.swapaxes(out.numpy(), 0, 1), atol=1e-15)
    h, h_bf = (state[0], state_bf[0]) if kind == "LSTM" else (state, state_bf)
    assert h.shape == h_bf.shape == (2, 2, 4)  # states are never batch-first
    np.testing.assert_allclose(h_bf.numpy(), h.numpy(), atol=1e-15)
    out_one, state_one = layer(x[:, 1])  # one sequence without a batch axis
    assert out_one.shape == (6, 4)
    np.testing.assert_allclose(out_one.numpy(), out.numpy()[:, 1], atol=1e-15)
    h_one = state_one[0] if kind == "LSTM" else state_one
    assert h_one.shape == (2, 4)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_the_state_carries_over_between_calls(kind):
    """Two halves with the state passed on give the same as the whole sequence at once."""
    layer = getattr(nn, kind)(2, 3, num_layers=2, seed=2)
    x = np.random.default_rng(1).normal(size=(8, 2, 2))
    whole, _ = layer(x)
    first, state = layer(x[:4])
    second, _ = layer(x[4:], state)
    np.testing.assert_allclose(np.concatenate([first.numpy(), second.numpy()]), whole.numpy(),
                               atol=1e-14)


@pytest.mark.parametrize("kind, cell", [("RNN", "RNNCell"), ("LSTM", "LSTMCell"),
                                        ("GRU", "GRUCell")])
def test_a_layer_is_its_cell_applied_step_by_step(kind, cell):
    layer = getattr(nn, kind)(3, 4, seed=3)
    step = getattr(nn, cell)(3, 4, seed=9)
    step.load_state_dict({k[:-3]: v for k, v in layer.state_dict().items()})  # drop "_l0"
    x = np.random.default_rng(2).normal(size=(5, 2, 3))
    out, _ = layer(x)
    state = None
    for t in range(5):
        state = step(x[t], state)
        h = state[0] if kind == "LSTM" else state
        np.testing.assert_allclose(h.numpy(), out.numpy()[t], atol=1e-15)


def test_clear_errors():
    lstm = nn.LSTM(3, 4, num_layers=2)
    with pytest.raises(ValueError, match=r"expected input of shape \(L, N, input_size\).*"
                                         r"got \(5, 2, 7\)"):
        lstm(np.zeros((5, 2, 7)))
    with pytest.raises(ValueError, match=r"expected h_0 of shape \(2, 2, 4\).*got \(1, 2, 4\)"):
        lstm(np.zeros((5, 2, 3)), (np.zeros((1, 2, 4)), np.zeros((2, 2, 4))))
    with pytest.raises(TypeError, match="input has dtype float32 but the layer's parameters "
                                        "are float64"):
        lstm(np.zeros((5, 2, 3), dtype=np.float32))
    with pytest.raises(ValueError, match="nonlinearity must be 'tanh' or 'relu'; got 'sigmoid'"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="hidden_size must be a positive int; got 0"):
        nn.GRU(3, 0)
    with pytest.raises(ValueError, match=r"expected hx of shape \(2, 4\)"):
        nn.GRUCell(3, 4)(np.zeros((2, 3)), np.zeros((3, 4)))


def test_float32_layers_stay_float32():
    lstm = nn.LSTM(3, 4, dtype="float32", seed=0)
    out, (h, c) = lstm(np.ones((2, 1, 3), dtype=np.float32))
    assert out.dtype == h.dtype == c.dtype == np.float32
    out.sum().backward()
    assert all(p.grad.dtype == np.float32 for p in lstm.parameters())


# ---------------------------------------------------------------------------------------------
# Gradients against finite differences, on NumPy and array-api-strict


LAYERS = {
    "rnn_tanh": (lambda: nn.RNN(2, 3, num_layers=2, seed=0), (3, 2, 2),
                 lambda m, x: m(x)[0]),
    "rnn_relu": (lambda: nn.RNN(2, 3, nonlinearity="relu", seed=4), (3, 2, 2),
                 lambda m, x: m(x)[1]),
    "lstm": (lambda: nn.LSTM(2, 3, num_layers=2, seed=0), (3, 2, 2),
             lambda m, x: m(x)[0] * 1.0 + m(x)[1][1].sum()),
    "gru_batch_first": (lambda: nn.GRU(2, 3, num_layers=2, batch_first=True, seed=0), (2, 3, 2),
                        lambda m, x: m(x)[0]),
    "rnn_cell": (lambda: nn.RNNCell(2, 3, seed=0), (2, 2), lambda m, x: m(x, m(x))),
    "lstm_cell": (lambda: nn.LSTMCell(2, 3, seed=0), (2, 2), lambda m, x: m(x, m(x))[1]),
    "gru_cell": (lambda: nn.GRUCell(2, 3, seed=0), (2, 2), lambda m, x: m(x, m(x))),
}


@pytest.mark.parametrize("ns", NAMESPACES)
@pytest.mark.parametrize("name", list(LAYERS))
def test_gradients_match_finite_differences(name, ns):
    build, x_shape, call = LAYERS[name]
    layer = build()
    values = [p.numpy() for p in layer.parameters()]
    x0 = np.random.default_rng(5).normal(size=x_shape)
    with namespace(ns) as xp:
        inputs = [make(xp, x0)] + [make(xp, v) for v in values]
        result = mg.gradcheck(layer_function(layer, call), *inputs, atol=1e-7, rtol=1e-6)
    assert result, result.message


@pytest.mark.parametrize("ns", NAMESPACES)
def test_embedding_gradient_matches_finite_differences(ns):
    emb = nn.Embedding(5, 3, padding_idx=1, seed=0)
    ids = np.array([[0, 2, 2], [4, 1, 0]])
    with namespace(ns) as xp:
        ids_x = ids if xp is np else xp.asarray(ids)

        def fn(weight):
            emb.weight = weight
            return emb(ids_x).tanh()

        weight = make(xp, emb.weight.numpy())
        # the padding row gets no gradient, so leave it out of the comparison: its
        # finite difference is not zero, but PyTorch (and we) define its gradient as zero
        result = mg.gradcheck(lambda w: fn(w * mask(xp)), weight)
    assert result, result.message


def mask(xp):
    keep = np.ones((5, 1))
    keep[1] = 0.0
    return mg.Tensor(keep if xp is np else xp.asarray(keep))


# ---------------------------------------------------------------------------------------------
# Embedding


def test_embedding_looks_up_rows_and_adds_repeated_gradients():
    emb = nn.Embedding(4, 2, seed=0)
    ids = np.array([[3, 1], [3, 3]])
    out = emb(ids)
    np.testing.assert_array_equal(out.numpy(), emb.weight.numpy()[ids])
    g = np.arange(8.0).reshape(2, 2, 2)
    out.backward(g)
    expected = np.zeros((4, 2))
    expected[1] = g[0, 1]
    expected[3] = g[0, 0] + g[1, 0] + g[1, 1]  # token 3 read three times: three gradients
    np.testing.assert_array_equal(emb.weight.grad, expected)


def test_embedding_padding_row_is_zero_and_never_learns():
    emb = nn.Embedding(4, 2, padding_idx=0, seed=0)
    assert np.all(emb.weight.numpy()[0] == 0) and np.all(emb.weight.numpy()[1:] != 0)
    emb(np.array([0, 2, 0])).sum().backward()
    np.testing.assert_array_equal(emb.weight.grad, [[0, 0], [0, 0], [1, 1], [0, 0]])


def test_embedding_errors():
    emb = nn.Embedding(4, 2)
    with pytest.raises(IndexError, match=r"indices must be in \[0, 4\); got values from 0 to 4"):
        emb(np.array([0, 4]))
    with pytest.raises(TypeError, match="indices must be integers; got dtype float64"):
        emb(np.array([0.0, 1.0]))


# ---------------------------------------------------------------------------------------------
# clip_grad_norm_ (PyTorch's values: torch.nn.utils.clip_grad_norm_ gives the same)


def params_with_grads(*grads):
    params = []
    for g in grads:
        p = nn.Parameter(np.zeros(np.shape(g)))
        p.grad = None if g is None else np.array(g, dtype=float)
        params.append(p)
    return params


def test_clip_grad_norm_scales_all_gradients_together():
    a, b, none = params_with_grads([3.0, 4.0], [[12.0]], None)
    total = clip_grad_norm_([a, b, none], max_norm=6.5)
    assert isinstance(total, mg.Tensor) and total.item() == pytest.approx(13.0)
    scale = 6.5 / (13.0 + 1e-6)
    np.testing.assert_allclose(a.grad, [3 * scale, 4 * scale])
    np.testing.assert_allclose(b.grad, [[12 * scale]])
    assert none.grad is None


def test_clip_grad_norm_leaves_small_gradients_and_other_norms():
    a, b = params_with_grads([3.0, -4.0], [1.0])
    assert clip_grad_norm_(iter([a, b]), max_norm=10.0).item() == pytest.approx(26 ** 0.5)
    np.testing.assert_array_equal(a.grad, [3.0, -4.0])
    assert clip_grad_norm_([a, b], 10.0, norm_type=1).item() == pytest.approx(8.0)
    assert clip_grad_norm_(a, 1.0, norm_type=float("inf")).item() == pytest.approx(4.0)
    np.testing.assert_allclose(a.grad, [3 / (4 + 1e-6), -4 / (4 + 1e-6)])
    c, = params_with_grads([np.inf])
    with pytest.raises(RuntimeError, match="not finite"):
        clip_grad_norm_([c], 1.0, error_if_nonfinite=True)


# ---------------------------------------------------------------------------------------------
# The graph per step, and long sequences


@pytest.mark.parametrize("kind, ops, values", [("RNN", 2, (1, 1)), ("LSTM", 14, (1, 7)),
                                               ("GRU", 19, (1, 6))])
def test_what_the_graph_holds_per_step_is_what_the_docstring_says(kind, ops, values):
    """The module docstring's table: operations, and saved values ``a * I + b * H`` per sample."""
    n, i, h = 5, 3, 7
    layer = getattr(nn, kind)(i, h, seed=0)
    measured = []
    for steps in (4, 5):
        out = layer(mg.tensor(np.ones((steps, n, i))))[0]
        measured.append((sum(graph.count_ops(out).values()), graph.saved_bytes(out)))
    assert measured[1][0] - measured[0][0] == ops
    assert measured[1][1] - measured[0][1] == 8 * n * (values[0] * i + values[1] * h)


def stack_depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def test_bptt_over_1000_steps_without_recursion_and_the_graph_is_freed():
    steps = 1000
    lstm = nn.LSTM(2, 6, seed=0)
    x = mg.tensor(np.random.default_rng(0).normal(size=(steps, 1, 2)))
    was_enabled, limit = gc.isenabled(), sys.getrecursionlimit()
    gc.disable()  # only reference counting may free the graph
    try:
        out, (h_n, c_n) = lstm(x)
        loss = (out[-1] * out[0]).sum() + c_n.sum()
        assert sum(graph.count_ops(loss).values()) > 14 * steps
        first_step, last = weakref.ref(out._parents[0]), weakref.ref(h_n)
        sys.setrecursionlimit(stack_depth() + 100)  # a recursive walk of 14,000 nodes fails
        loss.backward()
        assert graph.saved_bytes(loss) == 0  # backward dropped every saved array
        del out, h_n, c_n, loss
        assert first_step() is None and last() is None  # freed with the collector off
        sys.setrecursionlimit(limit)
    finally:
        sys.setrecursionlimit(limit)
        if was_enabled:
            gc.enable()
    grads = {n: p.grad for n, p in lstm.named_parameters()}
    assert all(np.all(np.isfinite(g)) for g in grads.values())
    # the gradient reaches the first step: a directional finite difference agrees
    w = lstm.weight_ih_l0
    direction = np.random.default_rng(1).normal(size=w.shape)

    def loss_at(values):
        lstm.weight_ih_l0 = nn.Parameter(values)
        with mg.no_grad():
            out, (_, c_n) = lstm(x)
            return float(((out[-1] * out[0]).sum() + c_n.sum()).item())

    eps = 1e-6
    numeric = (loss_at(w.numpy() + eps * direction) - loss_at(w.numpy() - eps * direction)) / (
        2 * eps)
    assert np.sum(grads["weight_ih_l0"] * direction) == pytest.approx(numeric, rel=1e-6)


def test_truncated_bptt_detach_cuts_the_graph_between_chunks():
    gru = nn.GRU(2, 3, seed=0)
    x = mg.tensor(np.random.default_rng(0).normal(size=(20, 2, 2)))
    _, h = gru(x[:10])
    out, _ = gru(x[10:], h.detach())
    chunk_ops = sum(graph.count_ops(out).values())
    out_whole, _ = gru(x[10:], h)  # without detach the graph reaches back into chunk 1
    assert sum(graph.count_ops(out_whole).values()) > 1.9 * chunk_ops
    out.sum().backward()
    assert all(np.all(np.isfinite(p.grad)) for p in gru.parameters())
