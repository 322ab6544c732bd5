"""minigrad.optim against updates computed by hand, and resuming from a saved state."""
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim

P0 = [1.0, -2.0]
GRADS = [[0.5, -1.0], [0.25, 0.75], [-1.0, 2.0]]  # the gradient seen at steps 1, 2, 3


def run(opt_class, steps=3, **settings):
    """Apply ``steps`` updates with the gradients of GRADS set by hand; the values after each."""
    p = nn.Parameter(np.array(P0))
    opt = opt_class([p], **settings)
    history = []
    for g in GRADS[:steps]:
        p.grad = np.array(g)
        opt.step()
        history.append(p.data.copy())
    return history


def by_hand_sgd(lr, momentum=0.0, dampening=0.0, nesterov=False, weight_decay=0.0):
    """The same updates, one element at a time, in plain Python floats."""
    out = []
    p, buf = list(P0), [None, None]
    for g in GRADS:
        for i in range(2):
            d = g[i] + weight_decay * p[i]
            if momentum:
                buf[i] = d if buf[i] is None else momentum * buf[i] + (1 - dampening) * d
                d = d + momentum * buf[i] if nesterov else buf[i]
            p[i] = p[i] - lr * d
        out.append(list(p))
    return out


@pytest.mark.parametrize("settings", [
    dict(lr=0.1),
    dict(lr=0.1, momentum=0.9),
    dict(lr=0.1, momentum=0.9, dampening=0.5),
    dict(lr=0.1, momentum=0.9, nesterov=True),
    dict(lr=0.1, weight_decay=0.01),
    dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1),
], ids=["plain", "momentum", "dampening", "nesterov", "weight_decay", "all"])
def test_sgd_matches_hand_computation(settings):
    got = run(optim.SGD, **settings)
    for step, (a, b) in enumerate(zip(got, by_hand_sgd(**settings)), 1):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-15, err_msg=f"step {step}")


def test_sgd_momentum_written_out():
    # lr 0.1, momentum 0.9, first element: b1 = 0.5, b2 = 0.9*0.5 + 0.25 = 0.7,
    # b3 = 0.9*0.7 - 1.0 = -0.37; p = 1 - 0.1*(0.5 + 0.7 - 0.37) = 0.917
    got = run(optim.SGD, lr=0.1, momentum=0.9)
    assert got[0][0] == pytest.approx(0.95, abs=1e-15)
    assert got[1][0] == pytest.approx(0.88, abs=1e-15)
    assert got[2][0] == pytest.approx(0.917, abs=1e-15)
    # nesterov: d = g + 0.9 * b: 0.95, 0.25 + 0.63 = 0.88 -> p = 1 - 0.1*(0.95 + 0.88) = 0.817
    got = run(optim.SGD, steps=2, lr=0.1, momentum=0.9, nesterov=True)
    assert got[1][0] == pytest.approx(0.817, abs=1e-15)


def by_hand_adam(lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
    b1, b2 = betas
    out = []
    p, m, v = list(P0), [0.0, 0.0], [0.0, 0.0]
    for t, g in enumerate(GRADS, 1):
        for i in range(2):
            d = g[i] + weight_decay * p[i]
            m[i] = b1 * m[i] + (1 - b1) * d
            v[i] = b2 * v[i] + (1 - b2) * d * d
            m_hat = m[i] / (1 - b1 ** t)
            v_hat = v[i] / (1 - b2 ** t)
            p[i] = p[i] - lr * m_hat / (math.sqrt(v_hat) + eps)
        out.append(list(p))
    return out


@pytest.mark.parametrize("settings", [
    dict(lr=0.1),
    dict(lr=0.01, betas=(0.8, 0.99), eps=1e-3),
    dict(lr=0.1, weight_decay=0.1),
])
def test_adam_matches_hand_computation(settings):
    got = run(optim.Adam, **settings)
    for step, (a, b) in enumerate(zip(got, by_hand_adam(**settings)), 1):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-13, err_msg=f"step {step}")


def test_adam_first_step_is_lr_times_sign():
    # after bias correction m_hat = g and v_hat = g^2, so the first step is lr * g / |g|
    got = run(optim.Adam, steps=1, lr=0.1, eps=0.0)
    np.testing.assert_allclose(got[0], [1.0 - 0.1, -2.0 + 0.1], rtol=0, atol=1e-15)


def quadratic_steps(zero_grads: bool, lr=0.1):
    """Two SGD steps on loss = sum(p**2); returns p after them."""
    p = nn.Parameter(np.array([1.0, -3.0]))
    opt = optim.SGD([p], lr=lr)
    for _ in range(2):
        if zero_grads:
            opt.zero_grad()
        (p * p).sum().backward()
        opt.step()
    return p.data


def test_forgetting_zero_grad_changes_the_result():
    # gradient 2p: step 1 uses 2*p0 and gives p1 = 0.8 p0 either way.
    # With zero_grad, step 2 uses 2*p1 = 1.6 p0:                 p2 = 0.8 p1 = 0.64 p0.
    # Without it, .grad still holds 2*p0 and gets 2*p1 added: 3.6 p0, and
    # p2 = 0.8 p0 - 0.1 * 3.6 p0 = 0.44 p0.
    p0 = np.array([1.0, -3.0])
    np.testing.assert_allclose(quadratic_steps(zero_grads=True), 0.64 * p0, rtol=1e-15)
    np.testing.assert_allclose(quadratic_steps(zero_grads=False), 0.44 * p0, rtol=1e-15)


def test_zero_grad_modes_and_parameters_without_grad():
    a, b = nn.Parameter(np.ones(2)), nn.Parameter(np.ones(3))
    opt = optim.SGD([a, b], lr=0.5, momentum=0.9)
    a.grad = np.array([1.0, 2.0])
    opt.step()  # b has no gradient: left alone, no state made for it
    assert a.data.tolist() == [0.5, 0.0] and b.data.tolist() == [1.0, 1.0, 1.0]
    assert list(opt.state_dict()["state"]) == [0]
    opt.zero_grad(set_to_none=False)
    assert a.grad.tolist() == [0.0, 0.0] and b.grad is None
    opt.zero_grad()
    assert a.grad is None


def test_step_is_not_recorded_in_a_graph():
    p = nn.Parameter(np.array([2.0]))
    opt = optim.Adam([p], lr=0.1)
    (p * 3).sum().backward()
    opt.step()
    assert p.is_leaf and p._parents == () and p.requires_grad


def test_changing_lr_takes_effect():
    p = nn.Parameter(np.array([1.0]))
    opt = optim.SGD([p], lr=0.1)
    p.grad = np.array([1.0])
    opt.lr = 0.5
    opt.step()
    assert p.data.tolist() == [0.5]
    assert repr(opt) == "SGD(lr=0.5, momentum=0.0, dampening=0.0, nesterov=False, weight_decay=0.0)"


def test_float32_parameters_stay_float32():
    for opt_class, settings in ((optim.SGD, dict(lr=0.1, momentum=0.9, weight_decay=0.1)),
                                (optim.Adam, dict(lr=0.1, weight_decay=0.1))):
        p = nn.Parameter(np.ones(3, dtype=np.float32))
        opt = opt_class([p], **settings)
        for _ in range(2):
            p.grad = np.full(3, 0.5, dtype=np.float32)
            opt.step()
        assert p.dtype == np.float32
        assert all(v.dtype == np.float32 for s in opt.state for v in s.values()
                   if hasattr(v, "dtype"))


def test_argument_errors():
    with pytest.raises(ValueError, match="empty list of parameters"):
        optim.SGD([], lr=0.1)
    model = nn.Linear(2, 2)
    params = model.parameters()
    optim.SGD(params, lr=0.1)
    with pytest.raises(ValueError, match="already used up"):
        optim.SGD(params, lr=0.1)  # a generator used twice
    with pytest.raises(TypeError, match="parameter 0 is a ndarray"):
        optim.SGD([np.ones(2)], lr=0.1)
    w = nn.Parameter(np.ones(2))
    with pytest.raises(ValueError, match="parameter 1 appears twice"):
        optim.SGD([w, w], lr=0.1)
    with pytest.raises(ValueError, match="computed by an operation"):
        optim.SGD([w * 2], lr=0.1)
    with pytest.raises(ValueError, match="nesterov=True needs momentum > 0"):
        optim.SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="must be >= 0"):
        optim.SGD([w], lr=-1.0)
    with pytest.raises(ValueError, match="betas must be two numbers"):
        optim.Adam([w], betas=(0.9, 1.0))


# ---------------------------------------------------------------------------------------------
# Resuming


def make_run(opt_class, settings, seed=0):
    model = nn.Sequential(nn.Linear(2, 8, seed=seed), nn.Tanh(), nn.Linear(8, 2, seed=seed + 1))
    return model, opt_class(model.parameters(), **settings)


def train(model, opt, steps, start):
    rng = np.random.default_rng(100)
    X, y = rng.normal(size=(64, 2)), rng.integers(0, 2, 64)
    loss_fn = nn.CrossEntropyLoss()
    for step in range(start, start + steps):
        idx = np.arange(step * 8, step * 8 + 8) % 64
        opt.zero_grad()
        loss_fn(model(mg.tensor(X[idx])), y[idx]).backward()
        opt.step()


@pytest.mark.parametrize("opt_class, settings", [
    (optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3)),
    (optim.Adam, dict(lr=0.01, betas=(0.8, 0.99), weight_decay=1e-3)),
])
def test_resume_from_saved_state_is_identical(tmp_path, opt_class, settings):
    model, opt = make_run(opt_class, settings)
    train(model, opt, 10, start=0)

    model_a, opt_a = make_run(opt_class, settings)
    train(model_a, opt_a, 5, start=0)
    mg.save({"model": model_a.state_dict(), "optimizer": opt_a.state_dict()}, tmp_path / "ck.npz")
    del model_a, opt_a

    model_b, opt_b = make_run(opt_class, {**settings, "lr": 123.0}, seed=42)  # all overwritten
    checkpoint = mg.load(tmp_path / "ck.npz")
    model_b.load_state_dict(checkpoint["model"])
    opt_b.load_state_dict(checkpoint["optimizer"])
    assert opt_b.lr == settings["lr"]
    train(model_b, opt_b, 5, start=5)

    for (name, p), (_, q) in zip(model.named_parameters(), model_b.named_parameters()):
        np.testing.assert_array_equal(p.data, q.data, err_msg=name)


def test_resuming_without_optimizer_state_differs():
    # the reason to save the optimizer: a fresh momentum buffer changes the result
    settings = dict(lr=0.1, momentum=0.9)
    model, opt = make_run(optim.SGD, settings)
    train(model, opt, 10, start=0)
    model_b, opt_b = make_run(optim.SGD, settings)
    train(model_b, opt_b, 5, start=0)
    opt_b = optim.SGD(model_b.parameters(), **settings)
    train(model_b, opt_b, 5, start=5)
    assert not np.allclose(model[0].weight.data, model_b[0].weight.data)


def test_state_dict_layout_and_copy_on_load():
    model, opt = make_run(optim.SGD, dict(lr=0.1, momentum=0.9))
    train(model, opt, 1, start=0)
    sd = opt.state_dict()
    assert sd["param_groups"] == [dict(lr=0.1, momentum=0.9, dampening=0.0, nesterov=False,
                                       weight_decay=0.0, params=[0, 1, 2, 3])]
    assert sorted(sd["state"]) == [0, 1, 2, 3]
    assert sd["state"][0]["momentum_buffer"].shape == (8, 2)
    _, other = make_run(optim.SGD, dict(lr=0.1, momentum=0.9))
    other.load_state_dict(sd)
    assert other.state[0]["momentum_buffer"] is not opt.state[0]["momentum_buffer"]
    np.testing.assert_array_equal(other.state[0]["momentum_buffer"],
                                  opt.state[0]["momentum_buffer"])


def test_scalar_parameter_state_survives_a_round_trip(tmp_path):
    def run_steps(opt, p, grads):
        for g in grads:
            p.grad = np.array(g)
            opt.step()

    p = nn.Parameter(np.array(1.0))
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    run_steps(opt, p, [0.5, 0.25, -1.0])
    q = nn.Parameter(np.array(1.0))
    first = optim.SGD([q], lr=0.1, momentum=0.9)
    run_steps(first, q, [0.5, 0.25])
    mg.save(first.state_dict(), tmp_path / "s.npz")
    second = optim.SGD([q], lr=0.1, momentum=0.9)
    second.load_state_dict(mg.load(tmp_path / "s.npz"))
    assert second.state[0]["momentum_buffer"].shape == ()
    run_steps(second, q, [-1.0])
    assert q.data == p.data


def test_load_state_dict_errors():
    model, sgd = make_run(optim.SGD, dict(lr=0.1, momentum=0.9))
    train(model, sgd, 1, start=0)
    sd = sgd.state_dict()
    small = optim.SGD([nn.Parameter(np.ones(2))], lr=0.1)
    with pytest.raises(ValueError, match="saved state is for 4 parameters but this optimizer "
                                         "has 1"):
        small.load_state_dict(sd)
    _, transposed = make_run(optim.SGD, dict(lr=0.1))
    transposed.params[0] = nn.Parameter(np.ones((2, 8)))
    with pytest.raises(ValueError, match=r"'momentum_buffer' of parameter 0 has shape \(8, 2\), "
                                         r"but the parameter has shape \(2, 8\)"):
        transposed.load_state_dict(sd)
    _, adam = make_run(optim.Adam, dict(lr=0.1))
    with pytest.raises(ValueError, match="unknown hyperparameters.*another kind of optimizer"):
        adam.load_state_dict(sd)
    with pytest.raises(ValueError, match="expected a dict with 'state' and 'param_groups'"):
        adam.load_state_dict(model.state_dict())


def test_optimizer_on_array_api_strict_matches_numpy():
    xp = pytest.importorskip("array_api_strict")
    for opt_class, settings in ((optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True)),
                                (optim.Adam, dict(lr=0.1))):
        p_np = nn.Parameter(np.array(P0))
        p_xp = nn.Parameter(xp.asarray(P0, dtype=xp.float64))
        opts = [opt_class([p_np], **settings), opt_class([p_xp], **settings)]
        for g in GRADS:
            p_np.grad, p_xp.grad = np.array(g), xp.asarray(g, dtype=xp.float64)
            for opt in opts:
                opt.step()
        assert type(p_xp.data) is type(xp.asarray(1.0))
        np.testing.assert_allclose(np.asarray(p_xp.data), p_np.data, rtol=0, atol=1e-15)
