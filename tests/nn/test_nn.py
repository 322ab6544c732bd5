"""minigrad.nn: module traversal, state dicts and their errors, layers, initialisation."""
import ast
import pathlib

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad import graph, nn
from minigrad.course import byhand


def rand(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


# ---------------------------------------------------------------------------------------------
# Parameters and traversal


class Block(nn.Module):
    def __init__(self, seed):
        super().__init__()
        self.fc = nn.Linear(3, 3, seed=seed)
        self.act = nn.Tanh()


class Net(nn.Module):
    """Parameters in attributes, nested modules, a list, a dict and a list inside a dict."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(np.ones(3))
        self.blocks = [Block(1), Block(2)]
        self.heads = {"a": nn.Linear(3, 2, seed=3), "b": nn.Linear(3, 1, seed=4, bias=False)}
        self.extra = {"pair": [nn.Parameter(np.zeros(2)), nn.Parameter(np.zeros((1, 2)))]}
        self.sizes = [3, 3]  # not a module: ignored
        self.constant = mg.tensor([1.0, 2.0])  # a plain tensor: not a parameter

    def forward(self, x):
        for block in self.blocks:
            x = block.act(block.fc(x))
        return self.heads["a"](x * self.scale)


def test_named_parameters_walks_attributes_lists_and_dicts():
    net = Net()
    names = [name for name, _ in net.named_parameters()]
    assert names == [
        "scale",
        "blocks.0.fc.weight", "blocks.0.fc.bias", "blocks.1.fc.weight", "blocks.1.fc.bias",
        "heads.a.weight", "heads.a.bias", "heads.b.weight",
        "extra.pair.0", "extra.pair.1",
    ]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in net.parameters())
    assert len(list(net.parameters())) == 10
    assert [n for n, _ in net.named_children()] == ["blocks.0", "blocks.1", "heads.a", "heads.b"]
    assert [n for n, _ in net.named_modules()] == [
        "", "blocks.0", "blocks.0.fc", "blocks.0.act", "blocks.1", "blocks.1.fc",
        "blocks.1.act", "heads.a", "heads.b"]


def test_a_module_holding_its_parent_does_not_loop():
    outer = nn.Sequential(nn.Linear(2, 2, seed=0))
    outer[0].owner = outer
    assert [n for n, _ in outer.named_parameters()] == ["0.weight", "0.bias"]
    assert len(list(outer.modules())) == 2


def test_shared_parameters_and_modules_are_listed_once():
    shared = nn.Linear(2, 2, seed=0)
    model = nn.Sequential(shared, nn.ReLU(), shared)
    assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias"]
    assert len(list(model.modules())) == 3  # Sequential, Linear, ReLU


def test_module_works_without_super_init():
    class Lazy(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(np.ones(2))

        def forward(self, x):
            return x * self.w

    m = Lazy()
    assert m.training is True
    assert [n for n, _ in m.named_parameters()] == ["w"]
    assert m.eval().training is False
    assert m(mg.tensor([1.0, 2.0])).numpy().tolist() == [1.0, 2.0]


def test_forward_must_be_defined():
    with pytest.raises(NotImplementedError, match="Empty has no forward"):
        type("Empty", (nn.Module,), {})()(1)


def test_parameter_is_a_tensor_that_requires_grad():
    p = nn.Parameter([1.0, 2.0])
    assert isinstance(p, mg.Tensor) and p.requires_grad and p.is_leaf
    assert repr(p).startswith("Parameter containing:\ntensor([1., 2.]")
    assert type(p * 2) is mg.Tensor  # results of ops are plain tensors
    with pytest.raises(TypeError, match="only floating-point"):
        nn.Parameter([1, 2])


def test_zero_grad():
    model = nn.Linear(2, 2, seed=0)
    model(mg.tensor(rand(4, 2))).sum().backward()
    assert model.weight.grad is not None
    model.zero_grad(set_to_none=False)
    assert np.all(model.weight.grad == 0) and model.weight.grad.shape == (2, 2)
    model.zero_grad()
    assert model.weight.grad is None and model.bias.grad is None


def test_train_and_eval_reach_every_module():
    net = Net()
    assert net.eval() is net
    assert all(m.training is False for m in net.modules())
    net.train()
    assert all(m.training is True for m in net.modules())


def test_repr_tree():
    model = nn.Sequential(nn.Flatten(), nn.Linear(4, 3, seed=0), nn.LeakyReLU(0.2),
                          nn.Sequential(nn.Dropout(0.1), nn.Linear(3, 2, bias=False, seed=0)))
    assert repr(model) == (
        "Sequential(\n"
        "  (0): Flatten(start_dim=1, end_dim=-1)\n"
        "  (1): Linear(in_features=4, out_features=3, bias=True)\n"
        "  (2): LeakyReLU(negative_slope=0.2)\n"
        "  (3): Sequential(\n"
        "    (0): Dropout(p=0.1)\n"
        "    (1): Linear(in_features=3, out_features=2, bias=False)\n"
        "  )\n"
        ")")
    assert repr(Block(0)) == (
        "Block(\n  (fc): Linear(in_features=3, out_features=3, bias=True)\n  (act): Tanh()\n)")


# ---------------------------------------------------------------------------------------------
# state_dict and load_state_dict


def test_state_dict_round_trip():
    a, b = Net(), Net()
    for p in b.parameters():  # make b different from a
        p.data = p.data + 1.0
    sd = a.state_dict()
    assert list(sd) == [n for n, _ in a.named_parameters()]
    assert sd["blocks.0.fc.weight"] is a.blocks[0].fc.weight.data  # live arrays, not copies
    result = b.load_state_dict(sd)
    assert result.missing_keys == [] and result.unexpected_keys == []
    for (name, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters()):
        np.testing.assert_array_equal(pa.data, pb.data, err_msg=name)
        assert pa.data is not pb.data  # copied, so training one does not move the other
    x = mg.tensor(rand(5, 3))
    np.testing.assert_array_equal(a(x).numpy(), b(x).numpy())


def test_load_state_dict_accepts_tensors_and_lists_and_keeps_dtype():
    model = nn.Linear(2, 1, seed=0, dtype="float32")
    model.load_state_dict({"weight": mg.tensor([[1.0, 2.0]]), "bias": [0.5]})
    assert model.weight.dtype == np.float32 and model.bias.dtype == np.float32
    assert model.weight.numpy().tolist() == [[1.0, 2.0]] and model.bias.numpy().tolist() == [0.5]


def test_missing_keys_are_named():
    model = nn.Sequential(nn.Linear(2, 3, seed=0), nn.ReLU(), nn.Linear(3, 2, seed=0))
    sd = dict(model.state_dict())
    del sd["2.weight"], sd["2.bias"]
    with pytest.raises(RuntimeError, match=r"missing keys.*'2\.weight', '2\.bias'") as info:
        model.load_state_dict(sd)
    assert "Sequential" in str(info.value) and "unexpected" not in str(info.value)


def test_unexpected_keys_are_named():
    model = nn.Linear(2, 3, seed=0)
    sd = {**model.state_dict(), "extra.weight": np.zeros(3)}
    with pytest.raises(RuntimeError, match=r"unexpected keys.*'extra\.weight'"):
        model.load_state_dict(sd)


def test_mis_shaped_keys_are_named_with_both_shapes():
    model = nn.Linear(2, 3, seed=0)
    sd = {"weight": np.zeros((3, 4)), "bias": np.zeros(3)}
    with pytest.raises(RuntimeError, match=r"size mismatch for 'weight': the state dict has "
                                           r"shape \(3, 4\), the model has shape \(3, 2\)"):
        model.load_state_dict(sd)
    with pytest.raises(RuntimeError, match="size mismatch"):
        model.load_state_dict(sd, strict=False)  # a wrong shape is never ignored


def test_all_problems_reported_together_and_nothing_changed():
    model = nn.Sequential(nn.Linear(2, 3, seed=0), nn.Linear(3, 1, seed=1))
    before = {k: v.copy() for k, v in model.state_dict().items()}
    sd = {"0.weight": np.zeros((3, 2)), "0.bias": np.zeros(5), "9.bias": np.zeros(1)}
    with pytest.raises(RuntimeError) as info:
        model.load_state_dict(sd)
    message = str(info.value)
    for part in ("missing keys", "'1.weight'", "'1.bias'", "unexpected keys", "'9.bias'",
                 "size mismatch for '0.bias'"):
        assert part in message
    for k, v in model.state_dict().items():  # the valid "0.weight" was not loaded either
        np.testing.assert_array_equal(v, before[k])


# PyTorch copies a checkpoint with ``param.copy_(value)``: another float dtype or an int is
# converted (float64 into float32 rounds); a value that is not numbers cannot be a tensor at
# all ("expected torch.Tensor or Tensor-like object from checkpoint"); a complex one is cast to
# real with a warning. minigrad refuses all of these, naming the key, before changing anything.
@pytest.mark.parametrize("late_value, problem", [
    (np.array(["a"]), r"dtype mismatch for '1\.bias': the state dict holds dtype <U1; "
                      r"expected numbers or booleans, to copy into the model's float64"),
    (np.array([1 + 2j]), r"dtype mismatch for '1\.bias': the state dict holds dtype complex128"),
    (np.array([{}], dtype=object), r"dtype mismatch for '1\.bias'.*dtype object"),
    ([[1.0], [2.0, 3.0]], r"'1\.bias' cannot be read as an array \(.*inhomogeneous"),
    (mg.tensor([[1.0]]), r"size mismatch for '1\.bias': the state dict has shape \(1, 1\)"),
])
def test_a_bad_late_key_changes_nothing(late_value, problem):
    # The issue: a load that failed on a late key had already overwritten the earlier ones.
    model = nn.Sequential(nn.Linear(2, 3, seed=0), nn.Linear(3, 1, seed=1))
    before = {name: (t, t.data.copy()) for name, t in model._named_tensors()}
    sd = {"0.weight": np.ones((3, 2)), "0.bias": np.ones(3), "1.weight": np.ones((1, 3)),
          "1.bias": late_value}
    with pytest.raises(RuntimeError, match=problem):
        model.load_state_dict(sd)
    for name, t in model._named_tensors():
        assert t is before[name][0]
        np.testing.assert_array_equal(t.data, before[name][1], err_msg=name)


def test_a_failure_while_copying_changes_nothing(monkeypatch):
    # Every value is converted before the first is written: a copy that fails on the last key
    # (here: out of memory) leaves the first ones as they were.
    from minigrad import backend

    model = nn.Sequential(nn.Linear(2, 3, seed=0), nn.Linear(3, 1, seed=1))
    before = {name: t.data for name, t in model._named_tensors()}
    real_copy, calls = backend.copy_to, []

    def copy_that_fails_the_fourth_time(*args, **kwargs):
        calls.append(1)
        if len(calls) == 4:
            raise MemoryError("out of memory")
        return real_copy(*args, **kwargs)

    monkeypatch.setattr(backend, "copy_to", copy_that_fails_the_fourth_time)
    with pytest.raises(MemoryError):
        model.load_state_dict({k: np.ones_like(v) for k, v in before.items()})
    assert len(calls) == 4
    assert all(t.data is before[name] for name, t in model._named_tensors())


def test_load_state_dict_converts_numbers_as_pytorch_copy_does():
    model = nn.Linear(2, 1, seed=0, dtype="float32")
    weight = model.weight
    model.load_state_dict({"weight": np.array([[0.1, 2]], dtype=np.float64),
                           "bias": np.array([3], dtype=np.int64)})
    assert model.weight is weight  # the same Parameter: an optimizer still updates it
    assert model.weight.dtype == np.float32 and model.bias.dtype == np.float32
    # torch: w = torch.zeros(1, 2); w.copy_(torch.tensor([[0.1, 2.]], dtype=torch.float64))
    #   -> tensor([[0.1000, 2.0000]]) in float32, i.e. 0.1 rounded to 0.100000001490116...
    assert model.weight.numpy().tolist() == [[float(np.float32(0.1)), 2.0]]
    assert model.bias.numpy().tolist() == [3.0]


def test_load_state_dict_needs_a_dict():
    # torch: TypeError: Expected state_dict to be dict-like, got <class 'list'>.
    with pytest.raises(TypeError, match="expected a dict .*; got list"):
        nn.Linear(2, 1).load_state_dict([np.ones((1, 2)), np.ones(1)])


def test_strict_false_loads_what_matches():
    model = nn.Sequential(nn.Linear(2, 3, seed=0), nn.Linear(3, 1, seed=1))
    result = model.load_state_dict({"0.weight": np.ones((3, 2)), "other": np.ones(1)},
                                   strict=False)
    assert result.missing_keys == ["0.bias", "1.weight", "1.bias"]
    assert result.unexpected_keys == ["other"]
    assert np.all(model[0].weight.data == 1)


def test_buffers_are_saved_and_loaded():
    class WithBuffer(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2, seed=0)
            self.register_buffer("running_mean", np.zeros(2))

    m = WithBuffer()
    # PyTorch's order: module by module, each module's parameters, then its buffers
    assert list(m.state_dict()) == ["running_mean", "fc.weight", "fc.bias"]
    assert [n for n, _ in m.named_parameters()] == ["fc.weight", "fc.bias"]
    m.load_state_dict({**m.state_dict(), "running_mean": np.array([1.0, 2.0])})
    assert m.running_mean.numpy().tolist() == [1.0, 2.0]
    assert [n for n, _ in nn.Sequential(m).named_buffers()] == ["0.running_mean"]


def test_to_converts_dtype_in_place():
    model = nn.Linear(2, 2, seed=0)
    weight = model.weight
    model(mg.tensor(rand(1, 2))).sum().backward()
    model.to(dtype="float32")
    assert model.weight is weight and weight.dtype == np.float32 and weight.grad is None
    assert model.to("cpu").weight.dtype == np.float32


# ---------------------------------------------------------------------------------------------
# Linear


def test_linear_init_follows_pytorch_default():
    rng = np.random.default_rng(7)
    layer = nn.Linear(50, 40, rng=rng)
    bound = 1 / np.sqrt(50)
    assert layer.weight.shape == (40, 50) and layer.bias.shape == (40,)
    assert layer.weight.dtype == np.float64
    for p in (layer.weight, layer.bias):
        assert np.all(np.abs(p.data) <= bound)
    assert np.abs(layer.weight.data).max() > 0.95 * bound  # uses the whole range
    # the weight first, then the bias, from the same Generator
    expected = np.random.default_rng(7)
    np.testing.assert_array_equal(layer.weight.data, expected.uniform(-bound, bound, (40, 50)))
    np.testing.assert_array_equal(layer.bias.data, expected.uniform(-bound, bound, (40,)))


def test_linear_seed_and_rng_agree_and_match_byhand():
    a = nn.Linear(3, 4, seed=5)
    b = nn.Linear(3, 4, rng=np.random.default_rng(5))
    c = byhand.Linear(3, 4, rng=5)
    np.testing.assert_array_equal(a.weight.data, b.weight.data)
    np.testing.assert_array_equal(a.weight.data, c.W)
    np.testing.assert_array_equal(a.bias.data, c.b)
    f32 = nn.Linear(3, 4, seed=5, dtype="float32")
    assert f32.weight.dtype == np.float32
    np.testing.assert_array_equal(f32.weight.data, a.weight.data.astype(np.float32))
    assert not np.array_equal(nn.Linear(3, 4, seed=6).weight.data, a.weight.data)


def test_linear_argument_errors():
    with pytest.raises(ValueError, match="rng or seed, not both"):
        nn.Linear(2, 2, rng=np.random.default_rng(0), seed=0)
    with pytest.raises(ValueError, match="in_features must be a positive int; got 0"):
        nn.Linear(0, 2)


def test_linear_forward_is_one_op_with_the_right_values():
    layer = nn.Linear(3, 2, seed=0)
    x = rand(4, 3)
    y = layer(mg.tensor(x, requires_grad=True))
    np.testing.assert_allclose(y.numpy(), x @ layer.weight.data.T + layer.bias.data,
                               rtol=0, atol=1e-15)
    assert graph.count_ops(y) == {"linear": 1}
    # a raw array is accepted as input
    np.testing.assert_array_equal(layer(x).numpy(), y.numpy())


@pytest.mark.parametrize("shape", [(5, 3), (3,), (2, 4, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_gradcheck(shape, bias):
    layer = nn.Linear(3, 2, bias=bias, seed=0)

    def f(x, w, *b):
        layer.weight = w
        layer.bias = b[0] if b else None
        return layer(x)

    inputs = [mg.tensor(rand(*shape, seed=1), requires_grad=True),
              mg.tensor(rand(2, 3, seed=2), requires_grad=True)]
    if bias:
        inputs.append(mg.tensor(rand(2, seed=3), requires_grad=True))
    result = mg.gradcheck(f, *inputs)
    assert result, result.message


def test_linear_matches_functional_linear_gradients():
    layer = nn.Linear(3, 2, seed=0)
    x = mg.tensor(rand(4, 3), requires_grad=True)
    (layer(x) ** 2).sum().backward()
    w = mg.tensor(layer.weight.data, requires_grad=True)
    b = mg.tensor(layer.bias.data, requires_grad=True)
    x2 = mg.tensor(x.data, requires_grad=True)
    (F.linear(x2, w, b) ** 2).sum().backward()
    for got, want in ((x.grad, x2.grad), (layer.weight.grad, w.grad), (layer.bias.grad, b.grad)):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)


def test_linear_input_without_grad_gets_none():
    layer = nn.Linear(3, 2, seed=0)
    x = mg.tensor(rand(4, 3))
    layer(x).sum().backward()
    assert x.grad is None and layer.weight.grad.shape == (2, 3)


# ---------------------------------------------------------------------------------------------
# Other layers and losses


def test_activations_match_the_tensor_functions():
    x = mg.tensor(rand(3, 4))
    for module, fn in ((nn.ReLU(), F.relu), (nn.Sigmoid(), F.sigmoid), (nn.Tanh(), F.tanh),
                       (nn.LeakyReLU(0.3), lambda t: F.leaky_relu(t, 0.3))):
        np.testing.assert_array_equal(module(x).numpy(), fn(x).numpy())
    assert nn.LeakyReLU()(mg.tensor([-1.0])).item() == pytest.approx(-0.01)


def test_flatten():
    x = mg.tensor(rand(2, 3, 4, 5))
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0)(x).shape == (120,)
    assert nn.Flatten(1, 2)(x).shape == (2, 12, 5)


def test_sequential_indexing_iteration_and_errors():
    layers = [nn.Linear(2, 3, seed=0), nn.ReLU(), nn.Linear(3, 1, seed=1)]
    model = nn.Sequential(*layers)
    assert len(model) == 3 and list(model) == layers
    assert model[0] is layers[0] and model[-1] is layers[2]
    head = model[:2]
    assert isinstance(head, nn.Sequential) and len(head) == 2
    x = mg.tensor(rand(4, 2))
    np.testing.assert_array_equal(model(x).numpy(), layers[2](layers[1](layers[0](x))).numpy())
    model.append(nn.Sigmoid())
    assert len(model) == 4
    with pytest.raises(TypeError, match=r"argument 1 is a type.*nn.ReLU\(\)"):
        nn.Sequential(nn.Linear(2, 2), nn.ReLU)


def test_dropout_only_in_training():
    drop = nn.Dropout(0.25, seed=0)
    x = mg.tensor(np.ones((200, 50)), requires_grad=True)
    y = drop(x)
    kept = y.numpy() != 0
    assert 0.70 < kept.mean() < 0.80
    np.testing.assert_allclose(y.numpy()[kept], 1 / 0.75)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, np.where(kept, 1 / 0.75, 0.0))
    drop.eval()
    assert drop(x) is x
    # the same seed gives the same masks; float32 stays float32
    a = nn.Dropout(0.5, seed=3)(mg.tensor(np.ones(10, dtype=np.float32)))
    b = nn.Dropout(0.5, seed=3)(mg.tensor(np.ones(10, dtype=np.float32)))
    assert a.dtype == np.float32
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_dropout_edge_probabilities():
    x = mg.tensor(rand(3, 3))
    assert nn.Dropout(0.0)(x) is x
    assert np.all(nn.Dropout(1.0)(x).numpy() == 0)
    with pytest.raises(ValueError, match="probability in"):
        nn.Dropout(1.5)


def test_losses():
    logits = mg.tensor(rand(5, 3), requires_grad=True)
    targets = np.array([0, 2, 1, 1, 0])
    assert nn.CrossEntropyLoss()(logits, targets).item() == F.cross_entropy(logits,
                                                                            targets).item()
    pred, target = mg.tensor(rand(4)), rand(4, seed=1)
    assert nn.MSELoss()(pred, target).item() == pytest.approx(np.mean((pred.numpy() - target) ** 2))


def test_engine_modules_do_not_import_numpy():
    root = pathlib.Path(mg.__file__).parent
    for name in ("nn/modules.py", "optim/__init__.py", "optim/lr_scheduler.py", "serialize.py"):
        tree = ast.parse((root / name).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                assert not any(a.name.split(".")[0] in ("numpy", "cupy") for a in node.names), name
            if isinstance(node, ast.ImportFrom) and node.module:
                assert node.module.split(".")[0] not in ("numpy", "cupy"), name


def test_load_state_dict_checks_dtypes_of_any_namespace():
    xp = pytest.importorskip("array_api_strict")
    model = nn.Linear(2, 1, seed=0)
    before = model.weight.data.copy()
    good = {"weight": xp.asarray([[1.0, 2.0]], dtype=xp.float32), "bias": xp.asarray([3])}
    with pytest.raises(RuntimeError, match=r"dtype mismatch for 'bias': the state dict holds "
                                           r"dtype complex128"):
        model.load_state_dict({**good, "bias": xp.asarray([1j])})
    np.testing.assert_array_equal(model.weight.data, before)
    model.load_state_dict(good)  # strict arrays are copied into the model's NumPy arrays
    assert model.weight.numpy().tolist() == [[1.0, 2.0]] and model.bias.dtype == np.float64


def test_linear_on_array_api_strict():
    xp = pytest.importorskip("array_api_strict")
    layer = nn.Linear(3, 2, seed=0)
    ref = nn.Linear(3, 2, seed=0)
    for p in layer.parameters():
        p.data = xp.asarray(p.data)
        p._xp = xp
    layer.load_state_dict(ref.state_dict())  # numpy arrays are copied into strict arrays
    strict_array = type(xp.asarray([1.0]))
    assert type(layer.weight.data) is strict_array and layer.weight._xp is not ref.weight._xp
    x = rand(4, 3)
    y = layer(mg.tensor(xp.asarray(x)))
    (y * y).sum().backward()
    y_ref = ref(mg.tensor(x))
    (y_ref * y_ref).sum().backward()
    assert type(layer.weight.grad) is strict_array and type(y.data) is strict_array
    np.testing.assert_allclose(np.asarray(layer.weight.grad), ref.weight.grad, atol=1e-14)
    np.testing.assert_allclose(np.asarray(y.data), y_ref.numpy(), atol=1e-14)


# PyTorch builds Conv2d(1, 2, 0) (a weight with no elements, and a warning), MaxPool2d(0) and
# Conv2d(1, 2, 3, padding=-1), and fails only in forward, if at all ("stride should not be
# zero", "negative padding is not supported"); minigrad refuses them when the layer is made,
# in the same words for both layers (minigrad._utils.pair).
@pytest.mark.parametrize("make, error, message", [
    (lambda: nn.Conv2d(1, 2, 0), ValueError, r"Conv2d: kernel_size must be >= 1; got 0"),
    (lambda: nn.Conv2d(1, 2, (3,)), TypeError,
     r"Conv2d: kernel_size must be an int or a pair of ints; got \(3,\)"),
    (lambda: nn.Conv2d(1, 2, 3, stride=(1, 0)), ValueError, r"Conv2d: stride must be >= 1"),
    (lambda: nn.Conv2d(1, 2, 3, padding=-1), ValueError, r"Conv2d: padding must be >= 0; got -1"),
    (lambda: nn.Conv2d(1, 2, 3, padding=1.5), TypeError, r"Conv2d: padding must be an int"),
    (lambda: nn.MaxPool2d(0), ValueError, r"MaxPool2d: kernel_size must be >= 1; got 0"),
    (lambda: nn.MaxPool2d(2, stride=True), TypeError,
     r"MaxPool2d: stride must be an int or a pair of ints; got True"),
])
def test_conv_and_pool_sizes_are_checked_when_made(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_conv_and_pool_keep_sizes_as_pytorch_shows_them():
    conv = nn.Conv2d(1, 2, [3, 5], stride=2, padding=(0, 1), seed=0)
    assert (conv.kernel_size, conv.stride, conv.padding) == ((3, 5), (2, 2), (0, 1))
    pool = nn.MaxPool2d(2)  # torch: MaxPool2d(kernel_size=2, stride=2, ...): ints kept as given
    assert (pool.kernel_size, pool.stride) == (2, 2)
