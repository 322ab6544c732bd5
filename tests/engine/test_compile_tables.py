"""minigrad.compile through the engine's own tables: exact or eager, never wrong.

Every case builds the same training step twice from the same seeds, runs one copy eagerly and
the other through ``minigrad.compile`` for ``CALLS`` calls on changing batches, and compares,
after *every* call, the returned loss, every parameter and every gradient bit for bit
(``tobytes``). A compile that never replays would be exact and useless, so each deterministic
case must also replay at least ``MIN_REPLAYS`` of its calls (1 eager call finds the optimizers,
2 recordings are compared, the rest replay); the cases that are eager by design (random
numbers, data-dependent shapes) must instead say so with a :class:`CompileWarning`.

The tables vary one axis at a time: every operation of the op tables (tests/engine/test_tensor_ops.py),
every trainable case of the pinned PyTorch cases (tests/support/torch_cases.py), every layer, every
loss option, every optimizer option.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad import nn, optim
from minigrad.compile import CompileWarning
from minigrad.nn.utils import clip_grad_norm_

from tests.support import torch_cases
from tests.engine.test_tensor_ops import BINARY, REDUCTIONS, SHAPE_OPS, UNARY

CALLS = 10
MIN_REPLAYS = 7

Make = Callable[[], tuple[list[mg.Tensor], Callable[..., Any]]]


def batches(shape: tuple[int, ...], seed: int = 0, n: int = CALLS,
            low: float = -1.5, high: float = 1.5) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(low, high, size=shape) for _ in range(n)]


def _bits(x: Any) -> bytes | None:
    if x is None:
        return None
    return np.asarray(x.data if isinstance(x, mg.Tensor) else x).tobytes()


def run_both(make: Make, calls: list[tuple[Any, ...]], eager_by_design: str | None = None
             ) -> Any:
    """Run ``make()``'s step eagerly and compiled on ``calls``; compare after every call.

    ``make()`` returns ``(tensors, step)``: the tensors whose values and gradients are compared
    (the parameters) and the step, a function of the call's arguments. Returns the compiled
    step.
    """
    params_a, step_a = make()
    params_b, step_b = make()
    compiled = mg.compile(step_b)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CompileWarning)
        for k, args in enumerate(calls):
            a, b = step_a(*args), compiled(*args)
            outs_a = a if isinstance(a, tuple) else (a,)
            outs_b = b if isinstance(b, tuple) else (b,)
            for i, (oa, ob) in enumerate(zip(outs_a, outs_b)):
                assert _bits(oa) == _bits(ob), f"call {k}: output {i} {oa} != {ob}"
            for i, (p, q) in enumerate(zip(params_a, params_b)):
                assert _bits(p) == _bits(q), f"call {k}: parameter {i} differs"
                assert _bits(p.grad) == _bits(q.grad), f"call {k}: gradient {i} differs"
    reasons = [str(w.message) for w in caught if issubclass(w.category, CompileWarning)]
    if eager_by_design is None:
        assert not reasons, reasons
        assert compiled.calls["replayed"] >= min(MIN_REPLAYS, len(calls) - 3), compiled.calls
    else:
        assert any(eager_by_design in r for r in reasons), (reasons, compiled.calls)
    return compiled


def sgd_on(params: list[mg.Tensor], lr: float = 0.05) -> optim.Optimizer:
    return optim.SGD(params, lr=lr, momentum=0.9)


def training(params: list[mg.Tensor], loss_of: Callable[..., mg.Tensor],
             make_opt: Callable[[list[mg.Tensor]], optim.Optimizer] = sgd_on
             ) -> tuple[list[mg.Tensor], Callable[..., Any]]:
    opt = make_opt(params)

    def step(*args: Any) -> mg.Tensor:
        opt.zero_grad()
        loss = loss_of(*args)
        loss.backward()
        opt.step()
        return loss

    return params, step


def weighted_sum(out: mg.Tensor) -> mg.Tensor:
    """A scalar from any output, with fixed irregular weights (every element counts)."""
    w = np.asarray(torch_cases._weights(max(out.size, 1)), dtype=out.dtype).reshape(out.shape)
    return (out * mg.tensor(w)).sum()


# --- 1. every operation of the op tables ------------------------------------------------------

def op_case(fn: Callable[..., mg.Tensor], shapes: list[tuple[int, ...]]) -> Make:
    def make() -> tuple[list[mg.Tensor], Callable[..., Any]]:
        rng = np.random.default_rng(1)
        params = [mg.Tensor(rng.uniform(0.5, 1.5, size=s), requires_grad=True) for s in shapes]

        def loss_of(*xs: np.ndarray) -> mg.Tensor:
            inputs = [p * mg.tensor(x) for p, x in zip(params, xs)]
            return weighted_sum(fn(*inputs))

        return training(params, loss_of)
    return make


def op_calls(shapes: list[tuple[int, ...]]) -> list[tuple[Any, ...]]:
    columns = [batches(s, seed=i) for i, s in enumerate(shapes)]
    return list(zip(*columns))


OP_CASES: dict[str, tuple[Callable[..., mg.Tensor], list[tuple[int, ...]]]] = {}
for _name, _fn in UNARY.items():
    OP_CASES[f"unary-{_name}"] = (_fn, [(3, 4)])
for _name, _fn in BINARY.items():
    OP_CASES[f"binary-{_name}"] = (_fn, [(3, 4), (4,)])
for _name, (_fn, _) in REDUCTIONS.items():
    OP_CASES[f"reduce-{_name}-all"] = (_fn, [(2, 3, 4)])
    OP_CASES[f"reduce-{_name}-axis"] = (lambda a, f=_fn: f(a, axis=1), [(2, 3, 4)])
    OP_CASES[f"reduce-{_name}-keepdims"] = (lambda a, f=_fn: f(a, axis=(0, 2), keepdims=True),
                                            [(2, 3, 4)])
for _name, _fn in SHAPE_OPS.items():
    OP_CASES[f"shape-{_name}"] = (_fn, [(2, 3, 4)])
OP_CASES.update({
    "matmul-2d": (lambda a, b: a @ b, [(3, 4), (4, 2)]),
    "matmul-batched": (lambda a, b: a @ b, [(2, 3, 4), (4, 2)]),
    "matmul-vector": (lambda a, b: a @ b, [(3, 4), (4,)]),
    "index-int-array": (lambda a: a[np.array([0, 2, 2])], [(3, 4)]),
    "index-column": (lambda a: a[:, 0], [(3, 4)]),
    "index-last": (lambda a: a[:, -1], [(3, 4)]),
    "index-used-twice": (lambda a: a[:, 0] * a[:, 1] + a[1:, 2].sum(), [(3, 4)]),
    "slices-in-a-loop": (lambda a: mg.stack([a[i] * (i + 1.0) for i in range(3)]), [(3, 4)]),
})


@pytest.mark.parametrize("name", sorted(OP_CASES))
def test_every_op_compiles_exactly(name):
    fn, shapes = OP_CASES[name]
    run_both(op_case(fn, shapes), op_calls(shapes))


# --- 2. every trainable case of the pinned PyTorch cases -----------------------------------

def _trainable(case: torch_cases.Case) -> bool:
    return not case.raises and any(spec[2] for spec in case.inputs)


TORCH_CASES = {c.name: c for c in torch_cases.CASES if _trainable(c)}


def torch_case(case: torch_cases.Case) -> Make:
    def make() -> tuple[list[mg.Tensor], Callable[..., Any]]:
        inputs = [mg.tensor(v, dtype=d, requires_grad=g) for v, d, g in case.inputs]
        params = [t for t, spec in zip(inputs, case.inputs) if spec[2]]

        def loss_of(scale: np.ndarray) -> mg.Tensor:
            out = case.fn(mg, F, *inputs)
            first = out[0] if isinstance(out, tuple) else out
            return weighted_sum(first) * mg.tensor(scale)

        # lr=0: the cases sit at edges (probabilities 0 and 1, -inf logits) that an update
        # would leave; the scale of each call still changes every gradient of the replay
        return training(params, loss_of, lambda ps: optim.SGD(ps, lr=0.0, momentum=0.5))
    return make


@pytest.mark.parametrize("name", sorted(TORCH_CASES))
def test_every_pinned_pytorch_case_compiles_exactly(name):
    case = TORCH_CASES[name]
    calls = [(np.asarray(1.0 + 0.1 * k),) for k in range(CALLS)]
    run_both(torch_case(case), calls)


# --- 3. layers ------------------------------------------------------------------------------

def layer_case(build: Callable[[], nn.Module], head: Callable[[Any], mg.Tensor] = lambda o: o,
               make_opt: Callable[[list[mg.Tensor]], optim.Optimizer] = sgd_on,
               float32: bool = False) -> Make:
    def make() -> tuple[list[mg.Tensor], Callable[..., Any]]:
        model = build()
        params = list(model.parameters())

        def loss_of(x: Any) -> mg.Tensor:
            return weighted_sum(head(model(mg.tensor(x, dtype="float32" if float32 else None))))

        return training(params, loss_of, make_opt)
    return make


def rnn_out(o: Any) -> mg.Tensor:
    return o[0][:, -1] if isinstance(o, tuple) else o  # output's last step (batch_first)


def lstm_last(o: Any) -> mg.Tensor:
    output, state = o
    return output[-1] + (state[1][-1] if isinstance(state, tuple) else state[-1])


def cell_loop(cell_type: type, **kw: Any) -> Callable[[], nn.Module]:
    class Unrolled(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.cell = cell_type(3, 4, seed=0, **kw)

        def forward(self, x: mg.Tensor) -> mg.Tensor:
            state = None
            outs = []
            for t in range(x.shape[0]):
                state = self.cell(x[t], state)
                h = state[0] if isinstance(state, tuple) else state
                outs.append(h)
            return mg.stack(outs)
    return Unrolled


def self_attention(need_weights: bool = True, batch_first: bool = False,
                   **masks: Any) -> Callable[[], nn.Module]:
    """nn.MultiheadAttention over its input (query, key and value the same), with masks."""
    class SelfAttention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.attn = nn.MultiheadAttention(6, 2, batch_first=batch_first, seed=0)

        def forward(self, x: mg.Tensor) -> Any:
            return self.attn(x, x, x, need_weights=need_weights, **masks)
    return SelfAttention


def attention_both(o: Any) -> mg.Tensor:
    out, weights = o
    return out if weights is None else out + weights.sum()


class SdpaLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(6, 18, seed=0)

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        q, k, v = self.qkv(x).reshape(2, 5, 3, 6).permute(2, 0, 1, 3)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.5)


class CausalEncoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(6, 3, 8, dropout=0.0, activation="gelu",
                                                batch_first=True, norm_first=True, seed=0)

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        mask = np.triu(np.ones((x.shape[1],) * 2, bool), 1)
        return self.layer(x, src_mask=mask, is_causal=True)


LAYER_CASES: dict[str, tuple[Make, tuple[int, ...]]] = {
    "linear": (layer_case(lambda: nn.Linear(3, 4, seed=0)), (5, 3)),
    "linear-no-bias": (layer_case(lambda: nn.Linear(3, 4, bias=False, seed=0)), (5, 3)),
    "linear-float32": (layer_case(lambda: nn.Linear(3, 4, seed=0, dtype="float32"),
                                  float32=True), (5, 3)),
    "mlp-sliced-output": (layer_case(lambda: nn.Sequential(nn.Linear(3, 8, seed=0), nn.ReLU(),
                                                           nn.Linear(8, 2, seed=1)),
                                     head=lambda o: o[:, 0]), (5, 3)),
    "sigmoid-tanh-leaky": (layer_case(lambda: nn.Sequential(
        nn.Linear(3, 6, seed=0), nn.Sigmoid(), nn.Linear(6, 6, seed=1), nn.Tanh(),
        nn.Linear(6, 2, seed=2), nn.LeakyReLU(0.1))), (5, 3)),
    "activations": (layer_case(lambda: nn.Sequential(
        nn.Linear(3, 6, seed=0), nn.GELU(), nn.Linear(6, 6, seed=1), nn.SiLU(), nn.ELU(),
        nn.Softplus(), nn.Hardtanh(), nn.LogSigmoid(), nn.Linear(6, 3, seed=2),
        nn.LogSoftmax(dim=1))), (5, 3)),
    "conv2d": (layer_case(lambda: nn.Conv2d(2, 3, 3, seed=0)), (2, 2, 7, 7)),
    "conv2d-stride-padding": (layer_case(lambda: nn.Conv2d(2, 3, 3, stride=2, padding=1,
                                                           seed=0)), (2, 2, 7, 7)),
    "conv2d-no-bias": (layer_case(lambda: nn.Conv2d(2, 3, (3, 2), bias=False, seed=0)),
                       (2, 2, 6, 6)),
    "maxpool": (layer_case(lambda: nn.Sequential(nn.Conv2d(1, 2, 3, seed=0),
                                                 nn.MaxPool2d(2))), (2, 1, 8, 8)),
    "maxpool-3-stride-2": (layer_case(lambda: nn.Sequential(nn.Conv2d(1, 2, 3, seed=0),
                                                            nn.MaxPool2d(3, stride=2))),
                           (2, 1, 9, 9)),
    "avgpool": (layer_case(lambda: nn.Sequential(nn.Conv2d(1, 2, 3, seed=0),
                                                 nn.AvgPool2d(2))), (2, 1, 8, 8)),
    "flatten-linear": (layer_case(lambda: nn.Sequential(nn.Conv2d(1, 2, 3, seed=0), nn.ReLU(),
                                                        nn.Flatten(),
                                                        nn.Linear(2 * 4 * 4, 3, seed=1))),
                       (2, 1, 6, 6)),
    "rnn": (layer_case(lambda: nn.RNN(3, 4, seed=0), head=lstm_last), (5, 2, 3)),
    "rnn-relu-2-layers": (layer_case(lambda: nn.RNN(3, 4, num_layers=2, nonlinearity="relu",
                                                    seed=0), head=lstm_last), (5, 2, 3)),
    "lstm": (layer_case(lambda: nn.LSTM(3, 4, seed=0), head=lstm_last), (5, 2, 3)),
    "lstm-2-layers": (layer_case(lambda: nn.LSTM(3, 4, num_layers=2, seed=0),
                                 head=lstm_last), (5, 2, 3)),
    "lstm-batch-first-last-step": (layer_case(lambda: nn.LSTM(3, 4, batch_first=True, seed=0),
                                              head=rnn_out), (2, 5, 3)),
    "gru": (layer_case(lambda: nn.GRU(3, 4, seed=0), head=lstm_last), (5, 2, 3)),
    "gru-2-layers-batch-first": (layer_case(lambda: nn.GRU(3, 4, num_layers=2,
                                                           batch_first=True, seed=0),
                                            head=rnn_out), (2, 5, 3)),
    "rnn-cell-loop": (layer_case(cell_loop(nn.RNNCell)), (5, 2, 3)),
    "lstm-cell-loop": (layer_case(cell_loop(nn.LSTMCell)), (5, 2, 3)),
    "gru-cell-loop": (layer_case(cell_loop(nn.GRUCell)), (5, 2, 3)),
    # issue 30: attention and the Transformer encoder layer
    "mha-self-weights": (layer_case(self_attention(need_weights=True), head=attention_both),
                         (4, 2, 6)),
    "mha-padding-causal": (layer_case(self_attention(
        batch_first=True, attn_mask=np.triu(np.ones((4, 4), bool), 1),
        key_padding_mask=np.array([[False] * 4, [False, False, False, True]]),
        need_weights=False), head=attention_both), (2, 4, 6)),
    "mha-float-mask-weights": (layer_case(self_attention(
        attn_mask=np.linspace(-1.0, 1.0, 16).reshape(4, 4)), head=attention_both), (4, 2, 6)),
    "sdpa-causal": (layer_case(lambda: SdpaLayer()), (2, 5, 6)),
    "encoder-post-norm": (layer_case(lambda: nn.TransformerEncoderLayer(
        6, 2, 8, dropout=0.0, seed=0)), (4, 2, 6)),
    "encoder-pre-norm-gelu-causal": (layer_case(lambda: CausalEncoder()), (2, 4, 6)),
}


@pytest.mark.parametrize("name", sorted(LAYER_CASES))
def test_every_layer_compiles_exactly(name):
    make, shape = LAYER_CASES[name]
    run_both(make, [(x,) for x in batches(shape)])


def conv_functional(**options: Any) -> Make:
    def make() -> tuple[list[mg.Tensor], Callable[..., Any]]:
        rng = np.random.default_rng(0)
        groups = options.get("groups", 1)
        w = mg.Tensor(rng.uniform(-0.5, 0.5, (4, 4 // groups, 3, 3)), requires_grad=True)
        b = mg.Tensor(rng.uniform(-0.5, 0.5, (4,)), requires_grad=True)
        return training([w, b], lambda x: weighted_sum(F.conv2d(mg.tensor(x), w, b,
                                                               **options)))
    return make


CONV_OPTIONS = {
    "stride": {"stride": 2}, "padding": {"padding": 2}, "dilation": {"dilation": 2},
    "groups": {"groups": 2}, "everything": {"stride": 2, "padding": 1, "dilation": 2,
                                            "groups": 4},
}


@pytest.mark.parametrize("name", sorted(CONV_OPTIONS))
def test_conv2d_options_compile_exactly(name):
    run_both(conv_functional(**CONV_OPTIONS[name]), [(x,) for x in batches((2, 4, 9, 9))])


def embedding_case(**options: Any) -> Make:
    def make() -> tuple[list[mg.Tensor], Callable[..., Any]]:
        model = nn.Sequential(nn.Embedding(6, 3, seed=0, **options), nn.Linear(3, 2, seed=1))
        return training(list(model.parameters()), lambda ids: weighted_sum(model(ids)))
    return make


@pytest.mark.parametrize("options", [{}, {"padding_idx": 0}], ids=["plain", "padding_idx"])
def test_embedding_compiles_exactly(options):
    rng = np.random.default_rng(0)
    run_both(embedding_case(**options), [(rng.integers(0, 6, (4, 3)),) for _ in range(CALLS)])


# --- 4. every loss, each option on its own ----------------------------------------------------

def loss_case(loss: Callable[[mg.Tensor, Any], mg.Tensor], n_out: int,
              sliced: bool = False) -> Make:
    def make() -> tuple[list[mg.Tensor], Callable[..., Any]]:
        model = nn.Linear(3, n_out + (1 if sliced else 0), seed=0)

        def loss_of(x: np.ndarray, target: Any) -> mg.Tensor:
            out = model(mg.tensor(x))
            return loss(out[:, :n_out] if sliced else out, target)

        return training(list(model.parameters()), loss_of)
    return make


W3 = np.array([1.0, 2.0, 0.5])
LOSSES: dict[str, tuple[Callable[..., mg.Tensor], int, str]] = {
    # name: (loss, outputs, kind of target)
    "ce": (lambda z, t: F.cross_entropy(z, t), 3, "class"),
    "ce-weight": (lambda z, t: F.cross_entropy(z, t, weight=mg.tensor(W3)), 3, "class"),
    "ce-ignore-index": (lambda z, t: F.cross_entropy(z, t, ignore_index=1), 3, "class"),
    "ce-label-smoothing": (lambda z, t: F.cross_entropy(z, t, label_smoothing=0.1), 3,
                           "class"),
    "ce-sum": (lambda z, t: F.cross_entropy(z, t, reduction="sum"), 3, "class"),
    "ce-none": (lambda z, t: weighted_sum(F.cross_entropy(z, t, reduction="none")), 3,
                "class"),
    "ce-probabilities": (lambda z, t: F.cross_entropy(z, mg.tensor(t)), 3, "probs"),
    "ce-module": (lambda z, t: nn.CrossEntropyLoss()(z, t), 3, "class"),
    "nll": (lambda z, t: F.nll_loss(F.log_softmax(z, dim=1), t), 3, "class"),
    "nll-weight-sum": (lambda z, t: F.nll_loss(F.log_softmax(z, dim=1), t,
                                               weight=mg.tensor(W3), reduction="sum"), 3,
                       "class"),
    "nll-none": (lambda z, t: weighted_sum(F.nll_loss(F.log_softmax(z, dim=1), t,
                                                      reduction="none")), 3, "class"),
    "mse": (lambda z, t: F.mse_loss(z, mg.tensor(t)), 2, "real"),
    "mse-sum": (lambda z, t: F.mse_loss(z, mg.tensor(t), reduction="sum"), 2, "real"),
    "mse-none": (lambda z, t: weighted_sum(F.mse_loss(z, mg.tensor(t), reduction="none")), 2,
                 "real"),
    "mse-module": (lambda z, t: nn.MSELoss()(z, mg.tensor(t)), 2, "real"),
    "bce": (lambda z, t: F.binary_cross_entropy(z.sigmoid(), mg.tensor(t)), 2, "binary"),
    "bce-weight-sum": (lambda z, t: F.binary_cross_entropy(
        z.sigmoid(), mg.tensor(t), weight=mg.tensor([1.0, 3.0]), reduction="sum"), 2, "binary"),
    "bce-logits": (lambda z, t: F.binary_cross_entropy_with_logits(z, mg.tensor(t)), 2,
                   "binary"),
    "bce-logits-pos-weight": (lambda z, t: F.binary_cross_entropy_with_logits(
        z, mg.tensor(t), pos_weight=mg.tensor([2.0, 0.5])), 2, "binary"),
    "bce-logits-none": (lambda z, t: weighted_sum(F.binary_cross_entropy_with_logits(
        z, mg.tensor(t), reduction="none")), 2, "binary"),
}


def targets(kind: str, n: int, k: int) -> Any:
    rng = np.random.default_rng(100 + k)
    if kind == "class":
        return rng.integers(0, 3, n)
    if kind == "probs":
        p = rng.uniform(0.1, 1.0, (n, 3))
        return p / p.sum(axis=1, keepdims=True)
    if kind == "binary":
        return rng.integers(0, 2, (n, 2)).astype("float64")
    return rng.uniform(-1, 1, (n, 2))


@pytest.mark.parametrize("sliced", [False, True], ids=["whole", "sliced"])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_every_loss_option_compiles_exactly(name, sliced):
    loss, n_out, kind = LOSSES[name]
    xs = batches((6, 3))
    run_both(loss_case(loss, n_out, sliced), [(x, targets(kind, 6, k)) for k, x in enumerate(xs)])


# --- 5. optimizers ----------------------------------------------------------------------------

OPTIMIZERS: dict[str, Callable[[list[mg.Tensor]], optim.Optimizer]] = {
    "sgd": lambda ps: optim.SGD(ps, lr=0.1),
    "sgd-momentum": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
    "sgd-dampening": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.3),
    "sgd-nesterov": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
    "sgd-weight-decay": lambda ps: optim.SGD(ps, lr=0.1, weight_decay=1e-2),
    "sgd-per-parameter": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, fused=False),
    "adam": lambda ps: optim.Adam(ps, lr=0.01),
    "adam-betas-eps": lambda ps: optim.Adam(ps, lr=0.01, betas=(0.8, 0.99), eps=1e-6),
    "adam-weight-decay": lambda ps: optim.Adam(ps, lr=0.01, weight_decay=1e-2),
    "adam-per-parameter": lambda ps: optim.Adam(ps, lr=0.01, fused=False),
    "adamw": lambda ps: optim.AdamW(ps, lr=0.01),
    "adamw-per-parameter": lambda ps: optim.AdamW(ps, lr=0.01, weight_decay=0.1, fused=False),
    "rmsprop": lambda ps: optim.RMSprop(ps, lr=0.01),
    "rmsprop-centered-momentum": lambda ps: optim.RMSprop(ps, lr=0.01, centered=True,
                                                          momentum=0.9, weight_decay=0.01),
    "rmsprop-per-parameter": lambda ps: optim.RMSprop(ps, lr=0.01, momentum=0.5, fused=False),
    "adagrad": lambda ps: optim.Adagrad(ps, lr=0.1),
    "adagrad-decay-initial": lambda ps: optim.Adagrad(ps, lr=0.1, lr_decay=0.1,
                                                      initial_accumulator_value=0.1),
    "adagrad-per-parameter": lambda ps: optim.Adagrad(ps, lr=0.1, lr_decay=0.1, fused=False),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_every_optimizer_option_compiles_exactly(name):
    make = layer_case(lambda: nn.Sequential(nn.Linear(3, 8, seed=0), nn.ReLU(),
                                            nn.Linear(8, 2, seed=1)),
                      make_opt=OPTIMIZERS[name])
    run_both(make, [(x,) for x in batches((5, 3))])


# --- 6. eager by design: random numbers and data-dependent shapes -------------------------

def test_dropout_runs_eagerly_and_says_why():
    make = layer_case(lambda: nn.Sequential(nn.Linear(3, 8, seed=0), nn.Dropout(0.5),
                                            nn.Linear(8, 2, seed=1)))
    mg.manual_seed(0) if hasattr(mg, "manual_seed") else None
    # the two copies draw different masks, so only the compiled copy's reason is compared
    params, step = make()
    compiled = mg.compile(step)
    with pytest.warns(CompileWarning, match="random numbers"):
        for x in batches((5, 3)):
            compiled(x)
    assert compiled.calls["replayed"] == 0


def test_attention_dropout_runs_eagerly_and_says_why():
    """A Transformer layer in training with dropout draws new masks at every call (in the
    attention weights and after each block): never a replay of an old mask."""
    make = layer_case(lambda: nn.TransformerEncoderLayer(6, 2, 8, dropout=0.3, seed=0))
    params, step = make()
    compiled = mg.compile(step)
    with pytest.warns(CompileWarning, match="random numbers"):
        for x in batches((4, 2, 6)):
            compiled(x)
    assert compiled.calls["replayed"] == 0


def test_a_boolean_mask_of_changing_size_runs_eagerly_and_says_why():
    def make() -> tuple[list[mg.Tensor], Callable[..., Any]]:
        w = mg.Tensor(np.linspace(0.5, 1.5, 12).reshape(3, 4), requires_grad=True)

        def loss_of(x: np.ndarray) -> mg.Tensor:
            y = w * mg.tensor(x)
            return y[x > 0].sum()

        return training([w], loss_of)
    rng = np.random.default_rng(0)
    xs = [rng.uniform(-1, 1, (3, 4)) for _ in range(CALLS)]
    compiled = run_both(make, [(x,) for x in xs], eager_by_design="data-dependent shape")
    assert compiled.calls["replayed"] == 0


# --- 7. the examples' steps -------------------------------------------------------------------

def char_lstm(make_opt: Callable[[list[mg.Tensor]], optim.Optimizer], clip: float | None
              ) -> Make:
    """The char-RNN example's step: Embedding, a 2-layer LSTM, a head, Adam, clipping."""
    def make() -> tuple[list[mg.Tensor], Callable[..., Any]]:
        rng = np.random.default_rng(0)
        embed = nn.Embedding(7, 4, rng=rng)
        lstm = nn.LSTM(4, 5, num_layers=2, rng=rng)
        head = nn.Linear(5, 7, rng=rng)
        params = [*embed.parameters(), *lstm.parameters(), *head.parameters()]
        opt = make_opt(params)

        def step(x: np.ndarray, y: np.ndarray) -> mg.Tensor:
            output, _ = lstm(embed(x))
            logits = head(output)
            loss = F.cross_entropy(logits.reshape(-1, 7), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            if clip is not None:
                clip_grad_norm_(params, clip)
            opt.step()
            return loss

        return params, step
    return make


@pytest.mark.parametrize("clip", [None, 5.0, 0.01], ids=["no-clip", "clip-5", "clip-tiny"])
def test_the_char_lstm_step_replays_exactly(clip):
    rng = np.random.default_rng(0)
    calls = [(rng.integers(0, 7, (6, 3)), rng.integers(0, 7, (6, 3))) for _ in range(CALLS)]
    compiled = run_both(char_lstm(lambda ps: optim.Adam(ps, lr=0.01), clip), calls)
    assert compiled.calls["replayed"] >= MIN_REPLAYS


# --- 8. issue 29: the new layers, loss modules and functions --------------------------------

def _eval_batchnorm(cls: type, n: int, **kw: Any) -> nn.Module:
    """A BatchNorm layer with running statistics that are not 0 and 1, in eval()."""
    bn = cls(n, **kw)
    rng = np.random.default_rng(7)
    shape = (6, n) if cls is nn.BatchNorm1d else (3, n, 4, 4)
    for _ in range(2):
        bn(mg.tensor(rng.uniform(-2, 2, shape)))
    return bn.eval()


ISSUE29_LAYERS: dict[str, tuple[Make, tuple[int, ...]]] = {
    "layernorm": (layer_case(lambda: nn.Sequential(nn.Linear(3, 4, seed=0), nn.LayerNorm(4),
                                                   nn.Tanh())), (5, 3)),
    "layernorm-2-axes-no-affine": (layer_case(lambda: nn.Sequential(
        nn.Conv2d(1, 2, 3, seed=0), nn.LayerNorm((4, 4), elementwise_affine=False))),
        (2, 1, 6, 6)),
    "batchnorm1d-eval": (layer_case(lambda: nn.Sequential(
        nn.Linear(3, 4, seed=0), _eval_batchnorm(nn.BatchNorm1d, 4), nn.ReLU())), (5, 3)),
    "batchnorm2d-eval": (layer_case(lambda: nn.Sequential(
        nn.Conv2d(1, 2, 3, seed=0), _eval_batchnorm(nn.BatchNorm2d, 2))), (2, 1, 6, 6)),
    "batchnorm1d-no-running-stats": (layer_case(lambda: nn.Sequential(
        nn.Linear(3, 4, seed=0), nn.BatchNorm1d(4, track_running_stats=False))), (5, 3)),
    "conv2d-groups-dilation": (layer_case(lambda: nn.Conv2d(4, 6, 3, padding=1, dilation=2,
                                                            groups=2, seed=0)), (2, 4, 7, 7)),
    "conv1d": (layer_case(lambda: nn.Sequential(
        nn.Conv1d(2, 4, 3, padding=1, dilation=2, groups=2, seed=0), nn.ReLU(),
        nn.Conv1d(4, 3, 2, stride=2, seed=1))), (2, 2, 9)),
    "maxpool-padding": (layer_case(lambda: nn.Sequential(nn.Conv2d(1, 2, 3, seed=0),
                                                         nn.MaxPool2d(3, 2, padding=1))),
                        (2, 1, 8, 8)),
    "lstm-bidirectional-2-layers": (layer_case(lambda: nn.LSTM(3, 4, num_layers=2,
                                                               bidirectional=True, seed=0),
                                               head=lambda o: o[0][-1] + o[1][1].sum(0).sum()),
                                    (5, 2, 3)),
    "gru-bidirectional-batch-first": (layer_case(lambda: nn.GRU(3, 4, bidirectional=True,
                                                                batch_first=True, seed=0),
                                                 head=rnn_out), (2, 5, 3)),
    "lstm-dropout-in-eval": (layer_case(lambda: nn.LSTM(3, 4, num_layers=2, dropout=0.5,
                                                        seed=0).eval(), head=lstm_last),
                             (5, 2, 3)),
    "adaptive-avgpool": (layer_case(lambda: nn.Sequential(nn.Conv2d(1, 2, 3, seed=0),
                                                          nn.AdaptiveAvgPool2d((2, 3)),
                                                          nn.Flatten(),
                                                          nn.Linear(12, 2, seed=1))),
                         (2, 1, 7, 9)),
}


@pytest.mark.parametrize("name", sorted(ISSUE29_LAYERS))
def test_issue29_layers_compile_exactly(name):
    make, shape = ISSUE29_LAYERS[name]
    run_both(make, [(x,) for x in batches(shape)])


ISSUE29_LOSSES: dict[str, tuple[Callable[..., mg.Tensor], int, str]] = {
    "ce-module-options": (lambda z, t: nn.CrossEntropyLoss(
        weight=mg.tensor(W3), ignore_index=1, label_smoothing=0.1, reduction="sum")(z, t), 3,
        "class"),
    "nll-module": (lambda z, t: nn.NLLLoss(weight=mg.tensor(W3))(F.log_softmax(z, dim=1), t), 3,
                   "class"),
    "bce-module": (lambda z, t: nn.BCELoss(weight=mg.tensor([1.0, 3.0]))(z.sigmoid(),
                                                                         mg.tensor(t)), 2,
                   "binary"),
    "bce-logits-module": (lambda z, t: nn.BCEWithLogitsLoss(pos_weight=mg.tensor([2.0, 0.5]))(
        z, mg.tensor(t)), 2, "binary"),
    "l1": (lambda z, t: nn.L1Loss()(z, mg.tensor(t)), 2, "real"),
    "huber": (lambda z, t: nn.HuberLoss(delta=0.3)(z, mg.tensor(t)), 2, "real"),
    "smooth-l1-sum": (lambda z, t: nn.SmoothL1Loss(beta=0.5, reduction="sum")(z, mg.tensor(t)),
                      2, "real"),
    "mse-module-sum": (lambda z, t: nn.MSELoss(reduction="sum")(z, mg.tensor(t)), 2, "real"),
}


@pytest.mark.parametrize("name", sorted(ISSUE29_LOSSES))
def test_issue29_loss_modules_compile_exactly(name):
    loss, n_out, kind = ISSUE29_LOSSES[name]
    xs = batches((6, 3))
    run_both(loss_case(loss, n_out), [(x, targets(kind, 6, k)) for k, x in enumerate(xs)])


ISSUE29_OPS: dict[str, tuple[Callable[..., mg.Tensor], list[tuple[int, ...]]]] = {
    "split": (lambda a: mg.cat([p * (k + 1.0) for k, p in enumerate(a.split([1, 3], dim=1))],
                               dim=1), [(3, 4)]),
    "chunk": (lambda a: mg.cat([p * (k + 1.0) for k, p in enumerate(a.chunk(2))]), [(3, 4)]),
    "repeat": (lambda a: a.repeat(2, 1, 3), [(3, 4)]),
    "flip": (lambda a: a.flip((0, 1)), [(3, 4)]),
    "sort": (lambda a: a.sort(dim=1, descending=True).values, [(3, 4)]),
    "norm": (lambda a: a.norm(dim=1) + a.norm(p=1) + a.norm(p=math.inf, dim=0).sum(), [(3, 4)]),
    "einsum": (lambda a, b: mg.einsum("ij,j->i", a, b), [(3, 4), (4,)]),
    "softmax-method": (lambda a: a.softmax(dim=1) * a.log_softmax(0), [(3, 4)]),
    "pad-modes": (lambda a: F.pad(a, (1, 2)) .sum() + F.pad(a[None], (2, 1), mode="reflect")
                  + F.pad(a, (1, 1), mode="replicate").sum(), [(3, 4)]),
    "layer-norm": (lambda a, w: F.layer_norm(a, (4,), w), [(3, 4), (4,)]),
    "batch-norm-training-function": (lambda a, w: F.batch_norm(a, None, None, w,
                                                               training=True), [(5, 4), (4,)]),
}


@pytest.mark.parametrize("name", sorted(ISSUE29_OPS))
def test_issue29_functions_compile_exactly(name):
    fn, shapes = ISSUE29_OPS[name]
    run_both(op_case(fn, shapes), op_calls(shapes))


def test_batchnorm_in_training_runs_eagerly_and_says_why():
    """Its running statistics are state kept between calls (a new array at each step), which
    compile recognises: every call is the eager step, with the reason."""
    make = layer_case(lambda: nn.Sequential(nn.Linear(3, 4, seed=0), nn.BatchNorm1d(4)))
    compiled = run_both(make, [(x,) for x in batches((5, 3))],
                        eager_by_design="state kept between calls")
    assert compiled.calls["replayed"] == 0


def test_recurrent_dropout_in_training_runs_eagerly_and_says_why():
    make = layer_case(lambda: nn.GRU(3, 4, num_layers=2, dropout=0.5, seed=0), head=lstm_last)
    params, step = make()
    compiled = mg.compile(step)
    with pytest.warns(CompileWarning, match="random numbers"):
        for x in batches((5, 2, 3)):
            compiled(x)
    assert compiled.calls["replayed"] == 0


def test_a_compiled_eval_step_sees_new_running_statistics():
    """load_state_dict gives the buffers new arrays: a replay must read them, never the old."""
    def make() -> tuple[list[mg.Tensor], Callable[..., Any], nn.Module]:
        model = nn.Sequential(nn.Linear(3, 4, seed=0), _eval_batchnorm(nn.BatchNorm1d, 4))
        params, step = layer_case(lambda: model)()
        return params, step, model
    _, eager, model_a = make()
    _, step_b, model_b = make()
    compiled = mg.compile(step_b)
    xs = batches((5, 3))
    new_stats = {"1.running_mean": np.array([0.5, -0.5, 1.0, 0.0]),
                 "1.running_var": np.array([2.0, 0.5, 1.0, 3.0])}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        for k, x in enumerate(xs):
            if k == 6:
                for m in (model_a, model_b):
                    m.load_state_dict(new_stats, strict=False)
            assert _bits(eager(x)) == _bits(compiled(x)), f"call {k}"
    assert compiled.calls["replayed"] >= 3, compiled.calls  # replayed before the change
