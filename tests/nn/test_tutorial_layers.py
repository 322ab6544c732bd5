"""Issue 29: the layers and utilities a PyTorch tutorial reaches for, family by family.

PyTorch's values and gradients are pinned in tests/support/torch_cases_issue29.py (run by
tests/engine/test_torch_parity.py, and compiled by tests/engine/test_compile_tables.py); here:

* finite differences of every new function on NumPy and array-api-strict;
* modules: PyTorch's state-dict keys, shapes and reprs (pinned below from PyTorch 2.13, re-derived
  by ``python -m bench.torch_parity``), a PyTorch-shaped state dict loading unchanged, buffers
  (in the state dict, moved by ``to()``, not parameters), ``train()``/``eval()``;
* ``minigrad.utils.data``; ``nn.init``; ``F.dropout``;
* the exporters: ONNX (run in onnxruntime) and the C generator's refusals;
* bad arguments: clear errors naming the argument.
"""
from __future__ import annotations

import io
import math
from typing import Any, Callable

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad import nn
from minigrad.utils.data import DataLoader, Dataset, TensorDataset, default_collate

from tests.support.engine_helpers import NAMESPACES, host, make, namespace

# --- 1. finite differences, NumPy and array-api-strict -----------------------------------------

R = np.random.default_rng(29)


def _values(*shape: int, low: float = -1.5, high: float = 1.5) -> np.ndarray:
    return R.uniform(low, high, size=shape)


# name: (function of tensors, input arrays); values are distinct (no ties, no kinks at 0)
FUNCTIONS: dict[str, tuple[Callable[..., mg.Tensor], list[np.ndarray]]] = {
    "split": (lambda x: mg.cat([p * (k + 1.0) for k, p in enumerate(x.split([1, 2], dim=1))],
                               dim=1), [_values(2, 3)]),
    "chunk": (lambda x: mg.cat([p * (k + 2.0) for k, p in enumerate(mg.chunk(x, 2, 0))]),
              [_values(3, 2)]),
    "repeat": (lambda x: x.repeat(2, 1, 3), [_values(2, 3)]),
    "flip": (lambda x: mg.flip(x, (0, 2)), [_values(2, 3, 2)]),
    "sort-values": (lambda x: mg.sort(x, dim=1).values * mg.Tensor(
        x._xp.asarray([1.0, 2.0, 3.0, 4.0])), [_values(3, 4)]),
    "sort-descending": (lambda x: x.sort(dim=0, descending=True).values, [_values(3, 4)]),
    "norm-fro": (lambda x: mg.norm(x), [_values(3, 4)]),
    "norm-p3-dim": (lambda x: x.norm(p=3, dim=1, keepdim=True), [_values(3, 4, low=0.2)]),
    "norm-inf": (lambda x: mg.norm(x, p=math.inf, dim=0), [_values(3, 4)]),
    "norm-1": (lambda x: mg.norm(x, p=1, dim=(0, 1)), [_values(3, 4, low=0.2)]),
    "softmax-method": (lambda x: x.softmax(dim=0), [_values(3, 4)]),
    "log-softmax-method": (lambda x: x.log_softmax(1), [_values(3, 4)]),
    "einsum-matmul": (lambda a, b: mg.einsum("ij,jk->ik", a, b), [_values(2, 3), _values(3, 4)]),
    "einsum-batch-trace": (lambda a, b: mg.einsum("bij,bjk->b", a, b),
                           [_values(2, 2, 3), _values(2, 3, 2)]),
    "pad-constant": (lambda x: F.pad(x, (1, 2, -1, 1), value=0.5), [_values(2, 3, 4)]),
    "pad-reflect": (lambda x: F.pad(x, (2, 1, 1, 2), mode="reflect"), [_values(1, 3, 4)]),
    "pad-replicate": (lambda x: F.pad(x, (3, 1), mode="replicate"), [_values(2, 3)]),
    "pad-circular": (lambda x: F.pad(x, (2, 3), mode="circular"), [_values(2, 4)]),
    "layer-norm": (lambda x, w, b: F.layer_norm(x, (4,), w, b), [_values(3, 4), _values(4),
                                                                _values(4)]),
    "layer-norm-2-axes": (lambda x: F.layer_norm(x, (2, 3)), [_values(2, 2, 3)]),
    "batch-norm-training": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                            [_values(4, 3, 2), _values(3), _values(3)]),
    "batch-norm-eval": (lambda x, w, b: F.batch_norm(
        x, mg.Tensor(x._xp.asarray([0.1, -0.2, 0.3])), mg.Tensor(x._xp.asarray([1.5, 0.5, 2.0])),
        w, b),
        [_values(4, 3), _values(3), _values(3)]),
    "conv1d": (lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2, groups=2),
               [_values(2, 4, 7), _values(4, 2, 2), _values(4)]),
    "adaptive-avg-pool2d": (lambda x: F.adaptive_avg_pool2d(x, (2, 3)), [_values(1, 2, 5, 7)]),
    "max-pool2d-padding": (lambda x: F.max_pool2d(x, 3, 2, padding=1), [_values(1, 2, 5, 5)]),
    "l1-loss": (lambda p, t: F.l1_loss(p, t), [_values(3, 2), _values(3, 2)]),
    "huber-loss": (lambda p, t: F.huber_loss(p, t, delta=0.7), [_values(3, 2), _values(3, 2)]),
    "smooth-l1-loss": (lambda p, t: F.smooth_l1_loss(p, t, beta=0.5, reduction="sum"),
                       [_values(3, 2), _values(3, 2)]),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("ns", NAMESPACES)
def test_gradients_match_finite_differences(name, ns):
    fn, arrays = FUNCTIONS[name]
    with namespace(ns) as xp:
        inputs = [make(xp, a) for a in arrays]
        result = mg.gradcheck(fn, *inputs)
    assert result, f"{name} on {ns}: {result}"


def test_the_functions_stay_in_their_namespace():
    with namespace("strict") as xp:
        x = make(xp, _values(2, 3, 4))
        for y in (x.flip(0), x.repeat(1, 2, 1), F.pad(x, (1, 1), mode="reflect"),
                  mg.sort(x).values, mg.sort(x).indices, x.norm(dim=1), mg.any(x > 0),
                  F.layer_norm(x, (4,)), mg.einsum("abc->ca", x)):
            assert type(y.data) is type(x.data)


# --- 2. modules: PyTorch's state dicts, reprs, buffers, train/eval --------------------------

from tests.support.torch_cases_issue29 import STATE_DICTS, _build, state_dict_spec  # noqa: E402


@pytest.mark.parametrize("name", sorted(STATE_DICTS))
def test_state_dict_keys_shapes_and_repr_are_pytorchs(name):
    spec, want, text = STATE_DICTS[name]
    module = _build(spec, mg)
    assert state_dict_spec(module) == [tuple(w) for w in want] or \
        state_dict_spec(module) == [(k, s, d) for k, s, d in want]
    if text is not None:
        assert repr(module) == text
    # a PyTorch-shaped state dict (other values, float32 and int64 as PyTorch saves) loads
    values = {k: (np.full(s, 7, dtype="int64") if d == "int64" else
                  np.arange(math.prod(s), dtype="float32").reshape(s) + 0.5)
              for k, s, d in want}
    module.load_state_dict(values)
    for key, array in module.state_dict().items():
        assert np.array_equal(array, values[key]) and array.shape == values[key].shape


def test_buffers_are_state_not_parameters():
    bn = nn.BatchNorm1d(3)
    assert [n for n, _ in bn.named_parameters()] == ["weight", "bias"]
    assert [n for n, _ in bn.named_buffers()] == ["running_mean", "running_var",
                                                  "num_batches_tracked"]
    opt = mg.optim.SGD(bn.parameters(), lr=0.1)
    assert len(opt.params) == 2
    bn.to(dtype="float32")
    assert bn.running_mean.dtype == np.float32 and bn.weight.dtype == np.float32
    assert bn.num_batches_tracked.dtype == np.int64  # to(dtype=) converts floating tensors only
    y = bn(mg.tensor(_values(4, 3), dtype="float32"))
    assert y.dtype == np.float32 and bn.running_mean.dtype == np.float32
    assert int(bn.num_batches_tracked.item()) == 1


def test_register_buffer_as_pytorch():
    class M(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(2, 2, seed=0)
            self.register_buffer("kept", mg.tensor([1.0, 2.0]))
            self.register_buffer("scratch", mg.tensor([3.0]), persistent=False)
            self.register_buffer("nothing", None)

    m = M()
    assert list(m.state_dict()) == ["kept", "fc.weight", "fc.bias"]
    assert [n for n, _ in m.named_buffers()] == ["kept", "scratch"]
    m.to(dtype="float32")
    assert m.scratch.dtype == np.float32  # moved and converted, though not saved
    m.load_state_dict({"kept": np.zeros(2), "fc.weight": np.eye(2), "fc.bias": np.zeros(2)})
    with pytest.raises(RuntimeError, match="unexpected keys.*'scratch'"):
        m.load_state_dict({**m.state_dict(), "scratch": np.zeros(1)})
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("fc", mg.tensor([1.0]))
    with pytest.raises(KeyError, match='"."'):
        m.register_buffer("a.b", mg.tensor([1.0]))
    with pytest.raises(TypeError, match="should be a string"):
        m.register_buffer(3, mg.tensor([1.0]))


def test_train_normalizes_with_the_batch_and_eval_with_the_running_statistics():
    bn = nn.BatchNorm1d(2, momentum=0.5)
    x = mg.tensor([[1.0, 10.0], [3.0, 30.0], [5.0, 20.0]])
    y = bn(x)
    assert np.allclose(y.data.mean(axis=0), 0) and np.allclose(y.data.var(axis=0), 1, atol=1e-4)
    # running = 0.5 * (0, 1) + 0.5 * (mean, unbiased variance)
    assert np.allclose(bn.running_mean.data, [1.5, 10.0])
    assert np.allclose(bn.running_var.data, [0.5 + 0.5 * 4.0, 0.5 + 0.5 * 100.0])
    bn.eval()
    before = bn.running_mean.data.copy()
    z = bn(x)
    assert np.array_equal(bn.running_mean.data, before)  # eval() leaves the statistics alone
    want = (x.data - bn.running_mean.data) / np.sqrt(bn.running_var.data + 1e-5)
    assert np.allclose(z.data, want)
    assert int(bn.num_batches_tracked.item()) == 1
    bn.train()
    bn(x)
    assert int(bn.num_batches_tracked.item()) == 2


def test_momentum_none_is_a_cumulative_average():
    bn = nn.BatchNorm1d(1, momentum=None, affine=False)
    batches = [np.array([[1.0], [3.0]]), np.array([[5.0], [9.0]]), np.array([[0.0], [0.0]])]
    for b in batches:
        bn(mg.tensor(b))
    assert np.allclose(bn.running_mean.data, np.mean([b.mean() for b in batches]))


def test_reset_running_stats():
    bn = nn.BatchNorm2d(2)
    bn(mg.tensor(_values(2, 2, 3, 3)))
    bn.reset_running_stats()
    assert bn.running_mean.data.tolist() == [0.0, 0.0]
    assert bn.running_var.data.tolist() == [1.0, 1.0]
    assert int(bn.num_batches_tracked.item()) == 0


def test_loss_modules_hold_their_options():
    w = mg.tensor([1.0, 2.0, 0.5])
    z, t = mg.tensor(_values(4, 3), requires_grad=True), mg.tensor([0, 1, 2, 1])
    m = nn.CrossEntropyLoss(weight=w, ignore_index=1, reduction="sum", label_smoothing=0.2)
    assert m(z, t).item() == F.cross_entropy(z, t, weight=w, ignore_index=1, reduction="sum",
                                             label_smoothing=0.2).item()
    assert "weight" in m.state_dict() and not list(m.parameters())
    assert nn.HuberLoss(delta=2.0).delta == 2.0
    assert nn.MSELoss(reduction="none")(z, z * 0).shape == (4, 3)


# --- 3. minigrad.utils.data ----------------------------------------------------------------

DS = TensorDataset(mg.tensor(np.arange(14.0).reshape(7, 2)), mg.tensor(np.arange(7)))

LOADERS: dict[str, tuple[dict[str, Any], list[list[int]]]] = {
    # options: the sample indices of each batch
    "batches": ({"batch_size": 3}, [[0, 1, 2], [3, 4, 5], [6]]),
    "drop-last": ({"batch_size": 3, "drop_last": True}, [[0, 1, 2], [3, 4, 5]]),
    "one-by-one": ({}, [[i] for i in range(7)]),
    "whole": ({"batch_size": 10}, [list(range(7))]),
    "shuffled-seed": ({"batch_size": 4, "shuffle": True, "seed": 3},
                      [list(map(int, np.random.default_rng(3).permutation(7)[:4])),
                       list(map(int, np.random.default_rng(3).permutation(7)[4:]))]),
}


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_dataloader_batches(name):
    options, want = LOADERS[name]
    loader = DataLoader(DS, **options)
    got = [y.data.tolist() for _, y in loader]
    assert got == want and len(loader) == len(want)
    for x, y in loader:
        assert x.shape == (len(y.data), 2) and np.array_equal(x.data[:, 0], 2 * y.data)


def test_shuffle_draws_a_new_order_each_epoch_from_the_generator():
    rng = np.random.default_rng(0)
    loader = DataLoader(DS, batch_size=7, shuffle=True, generator=rng)
    first, second = ([int(v) for v in next(iter(loader))[1].data] for _ in range(2))
    again = np.random.default_rng(0)
    assert first == list(again.permutation(7)) and second == list(again.permutation(7))
    assert sorted(first) == list(range(7))


def test_collate_and_custom_datasets():
    class Squares(Dataset):
        def __len__(self) -> int:
            return 5

        def __getitem__(self, i: int) -> dict[str, Any]:
            return {"x": float(i), "y": i * i, "v": np.array([i, -i], dtype="float64")}

    batch = next(iter(DataLoader(Squares(), batch_size=3)))
    assert batch["x"].data.tolist() == [0.0, 1.0, 2.0] and batch["x"].dtype == np.float64
    assert batch["y"].data.tolist() == [0, 1, 4] and batch["y"].dtype == np.int64
    assert batch["v"].shape == (3, 2)
    assert default_collate([(1, 2.0), (3, 4.0)])[1].data.tolist() == [2.0, 4.0]
    joined = DataLoader(Squares(), batch_size=2, collate_fn=lambda s: [b["y"] for b in s])
    assert list(joined) == [[0, 1], [4, 9], [16]]
    assert [item["y"] for item in DataLoader(Squares(), batch_size=None)] == [0, 1, 4, 9, 16]


# --- 4. nn.init and dropout: explicit generators --------------------------------------------

def _param(*shape: int, dtype: str = "float64") -> nn.Parameter:
    return nn.Parameter(np.zeros(shape, dtype=dtype))


# name: (fill, shape, the bound |w| <= bound, or None; the expected standard deviation or None)
INITS: dict[str, tuple[Callable[..., Any], tuple[int, ...], float | None, float | None]] = {
    "uniform": (lambda w, g: nn.init.uniform_(w, -0.3, 0.2, generator=g), (40, 50), 0.3, None),
    "normal": (lambda w, g: nn.init.normal_(w, 0.0, 0.5, generator=g), (40, 50), None, 0.5),
    "xavier-uniform": (lambda w, g: nn.init.xavier_uniform_(w, gain=2.0, generator=g),
                       (30, 20, 3), 2.0 * math.sqrt(6 / (60 + 90)), None),
    "xavier-normal": (lambda w, g: nn.init.xavier_normal_(w, generator=g), (60, 40),
                      None, math.sqrt(2 / 100)),
    "kaiming-uniform-default": (lambda w, g: nn.init.kaiming_uniform_(w, a=math.sqrt(5),
                                                                        generator=g),
                                (50, 16), 1 / 4, None),  # PyTorch's Linear: 1/sqrt(fan_in)
    "kaiming-uniform-relu-fan-out": (lambda w, g: nn.init.kaiming_uniform_(
        w, mode="fan_out", nonlinearity="relu", generator=g), (8, 50, 2, 2),
        math.sqrt(2) * math.sqrt(3 / 32), None),
    "kaiming-normal": (lambda w, g: nn.init.kaiming_normal_(w, nonlinearity="relu",
                                                            generator=g), (80, 50),
                       None, math.sqrt(2 / 50)),
    "zeros": (lambda w, g: nn.init.zeros_(w), (3, 4), 0.0, None),
    "ones": (lambda w, g: nn.init.ones_(w), (3, 4), 1.0, 0.0),
    "constant": (lambda w, g: nn.init.constant_(w, -0.25), (3, 4), 0.25, 0.0),
}


@pytest.mark.parametrize("name", sorted(INITS))
def test_init_fills_in_place_from_the_generator(name):
    fill, shape, bound, std = INITS[name]
    w = _param(*shape)
    data = w.data
    out = fill(w, np.random.default_rng(5))
    assert out is w and w.data is data  # in place: an optimizer's view stays valid
    if bound is not None:
        assert np.all(np.abs(w.data) <= bound + 1e-12)
        if name.endswith("uniform") or "uniform-" in name:
            assert np.abs(w.data).max() > 0.9 * bound  # the whole range is used
    if std is not None:
        assert abs(w.data.std() - std) <= 0.08 * std + 1e-12
    again = fill(_param(*shape, dtype="float32"), np.random.default_rng(5))
    assert np.array_equal(again.data, w.data.astype("float32"))  # same draws, rounded


def test_init_gains_and_fans_are_pytorchs():
    # torch.nn.init.calculate_gain and _calculate_fan_in_and_fan_out, PyTorch 2.13
    gains = {"linear": 1, "conv2d": 1, "sigmoid": 1, "tanh": 1.6666666666666667,
             "relu": 1.4142135623730951, "selu": 0.75, "leaky_relu": 1.4141428569978354}
    for name, want in gains.items():
        assert nn.init.calculate_gain(name) == want
    assert nn.init.calculate_gain("leaky_relu", 0.2) == 1.3867504905630728
    assert nn.init._fans(_param(6, 4, 3, 2)) == (24, 36)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.xavier_uniform_(_param(5))
    with pytest.raises(ValueError, match="Mode fan_sideways not supported"):
        nn.init.kaiming_uniform_(_param(3, 3), mode="fan_sideways")
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        nn.init.calculate_gain("swish")


def test_dropout_is_the_layers_rule_from_an_explicit_generator():
    x = mg.tensor(_values(20, 30), requires_grad=True)
    y = F.dropout(x, 0.3, generator=np.random.default_rng(1))
    layer = nn.Dropout(0.3, rng=np.random.default_rng(1))
    assert np.array_equal(y.data, layer(x).data)
    kept = y.data != 0
    assert np.allclose(y.data[kept], x.data[kept] / 0.7)
    assert 0.6 < kept.mean() < 0.8
    y.sum().backward()
    assert np.allclose(x.grad, kept / 0.7)
    assert F.dropout(x, 0.3, training=False) is x
    assert np.array_equal(F.dropout(x, 0.3, seed=4).data, F.dropout(x, 0.3, seed=4).data)


def test_recurrent_dropout_between_layers_only_in_training():
    x = mg.tensor(_values(5, 2, 3))
    plain = nn.LSTM(3, 4, num_layers=2, seed=0)
    dropped = nn.LSTM(3, 4, num_layers=2, dropout=0.5, seed=0)
    again = nn.LSTM(3, 4, num_layers=2, dropout=0.5, seed=0)
    out, _ = dropped(x)
    assert not np.allclose(out.data, plain(x)[0].data)  # the first layer's output was dropped
    assert np.array_equal(out.data, again(x)[0].data)  # the masks come from the seed
    dropped.eval()
    assert np.array_equal(dropped(x)[0].data, plain(x)[0].data)  # eval(): no dropout
    with pytest.warns(UserWarning, match="num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.5, seed=0)
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        nn.RNN(3, 4, num_layers=2, dropout=1.5)


def test_bidirectional_output_is_forward_then_reverse():
    x = mg.tensor(_values(5, 2, 3))
    both = nn.GRU(3, 4, bidirectional=True, seed=0)
    forward = nn.GRU(3, 4, seed=1)
    forward.load_state_dict({k: v for k, v in both.state_dict().items() if "reverse" not in k})
    out, h_n = both(x)
    assert out.shape == (5, 2, 8) and h_n.shape == (2, 2, 4)
    assert np.allclose(out.data[..., :4], forward(x)[0].data)
    backward = nn.GRU(3, 4, seed=2)
    backward.load_state_dict({k.replace("_reverse", ""): v for k, v in both.state_dict().items()
                              if "reverse" in k})
    reversed_out, _ = backward(mg.flip(x, 0))
    assert np.allclose(out.data[..., 4:], mg.flip(reversed_out, 0).data)
    assert np.allclose(h_n.data[1], reversed_out.data[-1])


# --- 5. bad arguments: clear errors -----------------------------------------------------------

X = mg.tensor(_values(2, 3, 4))

ERRORS: list[tuple[str, Callable[[], Any], type, str]] = [
    ("split-size-negative", lambda: X.split(-1), ValueError, "split_size"),
    ("chunk-zero", lambda: X.chunk(0), ValueError, "chunks"),
    ("flip-axis", lambda: X.flip(3), mg.AxisError, "out of range"),
    ("sort-axis", lambda: X.sort(dim=5), mg.AxisError, "out of range"),
    ("norm-int", lambda: mg.tensor([1, 2]).norm(), TypeError, "floating-point"),
    ("norm-p-string", lambda: X.norm(p="nuc"), ValueError, "'fro'"),
    ("einsum-letter-twice", lambda: mg.einsum("ii->i", X[0, :, :3]), ValueError, "diagonal"),
    ("einsum-sizes", lambda: mg.einsum("ij,jk->ik", X[0], X[0]), ValueError, "size"),
    ("pad-odd", lambda: F.pad(X, (1, 2, 3)), ValueError, "pairs"),
    ("pad-mode", lambda: F.pad(X, (1, 1), mode="mirror"), ValueError, "mode"),
    ("pad-too-many-axes", lambda: F.pad(X, (1,) * 8), ValueError, "axes to pad"),
    ("dropout-p", lambda: F.dropout(X, 1.5), ValueError, "between 0 and 1"),
    ("layer-norm-weight", lambda: F.layer_norm(X, (4,), mg.tensor(np.ones(3))), ValueError,
     "weight must have shape (4,)"),
    ("batch-norm-eval-without-stats", lambda: F.batch_norm(X, None, None), ValueError,
     "running_mean"),
    ("batch-norm-stats-dtype", lambda: F.batch_norm(mg.tensor(_values(3, 2), dtype="float32"),
                                                    mg.tensor([0.0, 0.0]), mg.tensor([1.0, 1.0])),
     TypeError, "must match"),
    ("batchnorm2d-3d", lambda: nn.BatchNorm2d(3)(X), ValueError, "expected 4D input"),
    ("batchnorm-features", lambda: nn.BatchNorm1d(0), ValueError, "num_features"),
    ("conv2d-groups", lambda: nn.Conv2d(3, 4, 3, groups=2), ValueError, "divisible by groups"),
    ("conv1d-groups", lambda: nn.Conv1d(4, 3, 3, groups=2), ValueError, "divisible by groups"),
    ("conv1d-input", lambda: F.conv1d(X[0], mg.tensor(np.ones((1, 3, 2)))), ValueError,
     "(N, C, L)"),
    ("adaptive-size", lambda: F.adaptive_avg_pool2d(X, 0), ValueError, "positive int"),
    ("max-pool-dilation", lambda: F.max_pool2d(X[None], 2, dilation=2), NotImplementedError,
     "dilation"),
    ("loss-reduction", lambda: nn.L1Loss(reduction="avg"), ValueError, "reduction"),
    ("loss-legacy", lambda: nn.MSELoss(size_average=True), TypeError, "reduction="),
    ("label-smoothing", lambda: nn.CrossEntropyLoss(label_smoothing=1.5), ValueError,
     "label_smoothing"),
    ("huber-delta", lambda: F.huber_loss(X, X, delta=0.0), ValueError, "delta"),
    ("huber-shapes", lambda: F.huber_loss(X, X[0]), ValueError, "shape"),
    ("loader-batch-size", lambda: DataLoader(DS, batch_size=0), ValueError, "batch_size"),
    ("loader-generator-and-seed", lambda: DataLoader(DS, shuffle=True, seed=1,
                                                     generator=np.random.default_rng(1)),
     ValueError, "not both"),
    ("dataset-lengths", lambda: TensorDataset(mg.tensor([1.0, 2.0]), mg.tensor([1.0])),
     ValueError, "size mismatch"),
    ("dataset-array", lambda: TensorDataset(np.ones(3)), TypeError, "Wrap it"),
    ("init-not-tensor", lambda: nn.init.zeros_(np.ones(3)), TypeError, "Tensor"),
]


@pytest.mark.parametrize("name,call,error,match", ERRORS, ids=[e[0] for e in ERRORS])
def test_bad_arguments_raise_clear_errors(name, call, error, match):
    with pytest.raises(error, match=match.replace("(", r"\(").replace(")", r"\)")):
        call()


# --- 6. the exporters -------------------------------------------------------------------------

def _trained(model: nn.Module, shape: tuple[int, ...]) -> nn.Module:
    """Run a few batches in training mode, so running statistics are not 0 and 1."""
    rng = np.random.default_rng(0)
    for _ in range(3):
        model(mg.tensor(rng.normal(size=shape).astype("float32")))
    return model


F32 = {"dtype": "float32"}
ONNX_MODELS: dict[str, tuple[Callable[[], nn.Module], tuple[int, ...]]] = {
    "conv2d-groups-dilation-batchnorm2d": (lambda: nn.Sequential(
        nn.Conv2d(2, 4, 3, padding=1, groups=2, dilation=2, seed=0, **F32),
        nn.BatchNorm2d(4, **F32), nn.ReLU()), (3, 2, 8, 8)),
    "maxpool-padding-global-pool": (lambda: nn.Sequential(
        nn.Conv2d(1, 3, 3, seed=0, **F32), nn.MaxPool2d(3, 2, padding=1),
        nn.AdaptiveAvgPool2d(1), nn.Flatten()), (2, 1, 9, 9)),
    "adaptive-divisible-layernorm": (lambda: nn.Sequential(
        nn.Conv2d(1, 2, 3, seed=0, **F32), nn.AdaptiveAvgPool2d((2, 3)),
        nn.LayerNorm((2, 3), **F32)), (2, 1, 6, 8)),
    "linear-batchnorm1d-layernorm-plain": (lambda: nn.Sequential(
        nn.Linear(3, 4, seed=0, **F32), nn.BatchNorm1d(4, affine=False, **F32),
        nn.LayerNorm(4, elementwise_affine=False, **F32), nn.Linear(4, 2, seed=1, **F32)),
        (5, 3)),
    "conv1d": (lambda: nn.Sequential(nn.Conv1d(2, 4, 3, padding=1, dilation=2, groups=2,
                                               seed=0, **F32), nn.Tanh(),
                                     nn.Conv1d(4, 2, 2, stride=2, seed=1, **F32)), (3, 2, 9)),
}


@pytest.mark.parametrize("name", sorted(ONNX_MODELS))
def test_the_new_layers_export_to_onnx_and_run_in_onnxruntime(name):
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from minigrad.export.onnx import export
    build, shape = ONNX_MODELS[name]
    model = _trained(build(), shape)
    x = np.random.default_rng(1).normal(size=shape).astype("float32")
    buffer = io.BytesIO()
    export(model, x, buffer)
    assert model.training  # left in the mode it was in
    got, = ort.InferenceSession(buffer.getvalue()).run(None, {"input": x})
    model.eval()
    with mg.no_grad():
        want = model(mg.tensor(x)).data
    assert got.shape == want.shape and np.allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layer,why", [
    (lambda: nn.AdaptiveAvgPool2d((2, 2)), "bins of different sizes"),
    (lambda: nn.BatchNorm2d(1, track_running_stats=False, dtype="float32"),
     "track_running_stats=False"),
], ids=["adaptive-uneven", "batchnorm-no-stats"])
def test_onnx_refuses_what_it_cannot_express(layer, why):
    pytest.importorskip("onnx")
    from minigrad.export.onnx import export
    model = nn.Sequential(nn.Conv2d(1, 1, 2, seed=0, dtype="float32"), layer())
    with pytest.raises(TypeError, match=why):
        export(model, np.zeros((1, 1, 6, 6), dtype="float32"), io.BytesIO())


C_REFUSED: dict[str, tuple[Callable[[], nn.Module], str]] = {
    "conv2d-groups": (lambda: nn.Conv2d(2, 2, 3, groups=2, seed=0), "groups=2"),
    "conv2d-dilation": (lambda: nn.Conv2d(2, 2, 3, dilation=2, seed=0), "dilation=(2, 2)"),
    "maxpool-padding": (lambda: nn.MaxPool2d(2, padding=1), "padding=1"),
    "batchnorm2d": (lambda: nn.BatchNorm2d(2), "cannot compile the BatchNorm2d"),
    "layernorm": (lambda: nn.LayerNorm(6), "cannot compile the LayerNorm"),
    "conv1d": (lambda: nn.Conv1d(2, 2, 2, seed=0), "cannot compile the Conv1d"),
    "adaptive-pool": (lambda: nn.AdaptiveAvgPool2d(1), "cannot compile the AdaptiveAvgPool2d"),
}


@pytest.mark.parametrize("name", sorted(C_REFUSED))
def test_the_c_generator_refuses_what_it_does_not_support(name):
    from minigrad.export.c import UnsupportedModuleError, compile_training_step
    build, match = C_REFUSED[name]
    model = nn.Sequential(build(), nn.Flatten(), nn.Linear(2, 2, seed=1))
    with pytest.raises(UnsupportedModuleError, match=match.replace("(", r"\(").replace(
            ")", r"\)")):
        compile_training_step(model, loss="mse", batch_size=2, lr=0.1, input_shape=(2, 6, 6))


def test_host_helper_reads_strict_arrays():
    with namespace("strict") as xp:
        assert host(xp, mg.norm(make(xp, [3.0, 4.0])).data).tolist() == 5.0
