"""The hand-built layers: finite-difference checks, and the engine matching them exactly."""
import ast
import pathlib
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim
from minigrad.course import byhand
from minigrad.gradcheck import numerical_gradient
from minigrad.data import batches, moons


def rand(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


# ---------------------------------------------------------------------------------------------
# Each hand-written backward against central differences


def weighted(out, seed=9):
    """A scalar from a layer's output with irregular weights, so every entry of the VJP counts."""
    w = rand(*out.shape, seed=seed)
    return float((out * w).sum()), w


def test_linear_backward_against_finite_differences():
    layer = byhand.Linear(3, 4, rng=0)
    x = rand(5, 3)
    _, w = weighted(layer.forward(x))
    dx = layer.backward(w)

    def loss(_):
        return weighted(layer.forward(x))[0]

    np.testing.assert_allclose(layer.dW, numerical_gradient(loss, layer.W), atol=1e-8)
    np.testing.assert_allclose(layer.db, numerical_gradient(loss, layer.b), atol=1e-8)
    np.testing.assert_allclose(dx, numerical_gradient(loss, x), atol=1e-8)


@pytest.mark.parametrize("layer_class", [byhand.ReLU, byhand.Sigmoid])
def test_activation_backward_against_finite_differences(layer_class):
    layer = layer_class()
    x = rand(4, 5, seed=1)
    x[np.abs(x) < 1e-3] = 0.5  # keep away from ReLU's kink
    _, w = weighted(layer.forward(x))
    dx = layer.backward(w)
    numeric = numerical_gradient(lambda x: weighted(layer.forward(x))[0], x)
    np.testing.assert_allclose(dx, numeric, atol=1e-8)


def test_softmax_cross_entropy_against_finite_differences():
    loss_fn = byhand.SoftmaxCrossEntropy()
    z = rand(6, 4, seed=2) * 3
    t = np.array([0, 3, 1, 1, 2, 0])
    loss_fn.forward(z, t)
    dz = loss_fn.backward()
    numeric = numerical_gradient(lambda z: loss_fn.forward(z, t), z)
    np.testing.assert_allclose(dz, numeric, atol=1e-9)
    assert loss_fn.backward(2.0) == pytest.approx(2 * dz)


def test_whole_mlp_against_finite_differences():
    model = byhand.MLP.from_sizes([2, 5, 3], activation=byhand.Sigmoid, rng=3)
    loss_fn = byhand.SoftmaxCrossEntropy()
    X, y = rand(7, 2, seed=4), np.array([0, 1, 2, 0, 1, 2, 0])
    loss_fn.forward(model.forward(X), y)
    model.backward(loss_fn.backward())
    for p, dp in model.params():
        numeric = numerical_gradient(lambda _: loss_fn.forward(model.forward(X), y), p)
        np.testing.assert_allclose(dp, numeric, atol=1e-9)


def test_stable_for_extreme_values():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warnings
        y = byhand.Sigmoid().forward(np.array([-1000.0, 0.0, 1000.0]))
        loss = byhand.SoftmaxCrossEntropy().forward(np.array([[1e4, -1e4]]), np.array([1]))
    assert y.tolist() == [0.0, 0.5, 1.0]
    assert loss == pytest.approx(2e4)


def test_byhand_data_and_scalar_do_not_import_the_engine():
    root = pathlib.Path(mg.__file__).parent
    allowed = {"__future__", "typing", "math", "numpy", "sklearn"}
    for name in ("course/byhand.py", "data.py", "course/scalar.py"):
        for node in ast.walk(ast.parse((root / name).read_text())):
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{name} imports from the package: {node.module}"
                modules = [node.module]
            else:
                continue
            for module in modules:  # minigrad._utils imports nothing (the one topological order)
                assert module.split(".")[0] in allowed or module == "minigrad._utils", \
                    f"{name} imports {module}"


# ---------------------------------------------------------------------------------------------
# The engine equals the oracle


def engine_copy(model: byhand.MLP, activation) -> nn.Sequential:
    """The same network in minigrad.nn, with the oracle's parameters copied in."""
    layers = []
    for layer in model.layers:
        if isinstance(layer, byhand.Linear):
            n_out, n_in = layer.W.shape
            layers.append(nn.Linear(n_in, n_out))
        else:
            layers.append(activation())
    net = nn.Sequential(*layers)
    net.load_state_dict(model.state_dict())
    return net


def test_same_seed_gives_the_same_network():
    ours = byhand.MLP.from_sizes([2, 16, 16, 2], rng=11)
    rng = np.random.default_rng(11)
    theirs = nn.Sequential(nn.Linear(2, 16, rng=rng), nn.ReLU(), nn.Linear(16, 16, rng=rng),
                           nn.ReLU(), nn.Linear(16, 2, rng=rng))
    for name, value in ours.state_dict().items():
        np.testing.assert_array_equal(theirs.state_dict()[name], value, err_msg=name)


def test_engine_equals_byhand_on_the_2_2_2_network():
    # Linear(2, 2) - Sigmoid - Linear(2, 2) - softmax cross-entropy, with fixed weights
    model = byhand.MLP([byhand.Linear(2, 2), byhand.Sigmoid(), byhand.Linear(2, 2)])
    model.layers[0].W[:] = [[0.15, 0.20], [0.25, 0.30]]
    model.layers[0].b[:] = [0.35, 0.35]
    model.layers[2].W[:] = [[0.40, 0.45], [0.50, 0.55]]
    model.layers[2].b[:] = [0.60, 0.60]
    X, y = np.array([[0.05, 0.10], [0.5, -0.3], [-1.0, 2.0]]), np.array([0, 1, 1])
    loss_fn = byhand.SoftmaxCrossEntropy()
    loss = loss_fn.forward(model.forward(X), y)
    dX = model.backward(loss_fn.backward())

    net = engine_copy(model, nn.Sigmoid)
    x = mg.tensor(X, requires_grad=True)
    engine_loss = nn.CrossEntropyLoss()(net(x), y)
    engine_loss.backward()

    assert abs(engine_loss.item() - loss) <= 1e-12
    np.testing.assert_allclose(x.grad, dX, rtol=0, atol=1e-12)
    grads = {name: p.grad for name, p in net.named_parameters()}
    for i in (0, 2):
        layer = model.layers[i]
        np.testing.assert_allclose(grads[f"{i}.weight"], layer.dW, rtol=0, atol=1e-12)
        np.testing.assert_allclose(grads[f"{i}.bias"], layer.db, rtol=0, atol=1e-12)


def test_engine_equals_byhand_on_moons_for_100_sgd_steps():
    X, y = moons(1000, noise=0.1, seed=0)
    model = byhand.MLP.from_sizes([2, 16, 16, 2], rng=0)
    net = engine_copy(model, nn.ReLU)
    opt = optim.SGD(net.parameters(), lr=0.1)
    loss_fn, oracle_loss = nn.CrossEntropyLoss(), byhand.SoftmaxCrossEntropy()

    params = list(net.parameters())
    stream = (b for _ in range(10) for b in batches(X, y, batch_size=32, seed=_))
    for step in range(100):
        Xb, yb = next(stream)
        expected = oracle_loss.forward(model.forward(Xb), yb)
        model.backward(oracle_loss.backward())
        byhand.sgd_step(model, lr=0.1)

        opt.zero_grad()
        loss = loss_fn(net(mg.tensor(Xb)), yb)
        loss.backward()
        opt.step()

        assert abs(loss.item() - expected) <= 1e-12, f"step {step}"
        for p, (q, _) in zip(params, model.params()):
            np.testing.assert_allclose(p.data, q, rtol=0, atol=1e-12, err_msg=f"step {step}")
    assert expected < 0.3  # it did learn something along the way


def test_byhand_training_loop_learns_moons():
    X, y = moons(1000, noise=0.1, seed=0)
    model = byhand.MLP.from_sizes([2, 16, 16, 2], rng=0)
    seen = []
    losses = byhand.train(model, X, y, epochs=60, lr=0.1, batch_size=32, seed=0,
                          callback=lambda step, loss: seen.append(step))
    assert len(losses) == 60 * 32 and seen[-1] == len(losses)
    assert np.mean(losses[-32:]) < np.mean(losses[:32]) / 5
    accuracy = (model.forward(X).argmax(axis=1) == y).mean()
    assert accuracy >= 0.97
    full_batch = byhand.train(byhand.MLP.from_sizes([2, 4, 2], rng=0), X, y, epochs=3)
    assert len(full_batch) == 3
