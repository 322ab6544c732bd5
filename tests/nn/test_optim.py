"""minigrad.optim against updates computed by hand, and resuming from a saved state."""
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim
from minigrad.data import moons

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


# ---------------------------------------------------------------------------------------------
# Fused (flat-buffer) steps take exactly the per-parameter steps


def moons_run(opt_class, settings, fused, steps=100, dtype="float64", freeze=None):
    """Train a 2-16-16-2 network on moons for ``steps`` steps; the parameters after each step.

    ``freeze(step)`` may name a layer index whose gradients are dropped at that step (a
    parameter without a gradient is skipped), so that the fused optimizer has to fall back to
    the per-parameter loop and then come back to the flat buffers.
    """
    X, y = moons(64, noise=0.1, seed=3)
    model = nn.Sequential(nn.Linear(2, 16, seed=0, dtype=dtype), nn.ReLU(),
                          nn.Linear(16, 16, seed=1, dtype=dtype), nn.ReLU(),
                          nn.Linear(16, 2, seed=2, dtype=dtype))
    opt = opt_class(model.parameters(), fused=fused, **settings)
    loss_fn = nn.CrossEntropyLoss()
    history = []
    for step in range(steps):
        idx = np.arange(step * 16, step * 16 + 16) % 64
        opt.zero_grad()
        loss_fn(model(mg.tensor(X[idx], dtype=dtype)), y[idx]).backward()
        if freeze is not None and freeze(step) is not None:
            layer = model[freeze(step)]
            layer.weight.grad = layer.bias.grad = None
        opt.step()
        history.append([p.data.copy() for p in model.parameters()])
    return model, opt, history


FUSED_SETTINGS = [
    (optim.SGD, dict(lr=0.1)),
    (optim.SGD, dict(lr=0.1, momentum=0.9)),
    (optim.SGD, dict(lr=0.1, weight_decay=0.01)),
    (optim.SGD, dict(lr=0.05, momentum=0.9, weight_decay=0.01)),
    (optim.SGD, dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.01)),
    (optim.SGD, dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.001)),
    (optim.Adam, dict(lr=0.01)),
    (optim.Adam, dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.01)),
]
FUSED_IDS = ["sgd", "momentum", "weight_decay", "momentum+wd", "dampening+wd", "nesterov+wd",
             "adam", "adam+wd"]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("opt_class, settings", FUSED_SETTINGS, ids=FUSED_IDS)
def test_fused_steps_equal_per_parameter_steps_over_100_steps(opt_class, settings, dtype):
    model, opt, fused = moons_run(opt_class, settings, fused=None, dtype=dtype)
    _, opt_loop, loop = moons_run(opt_class, settings, fused=False, dtype=dtype)
    # the fused run really ran on flat buffers: every parameter is a view of one array
    flat = [p.data.base for p in model.parameters()]
    assert all(b is not None and b is flat[0] for b in flat)
    assert not opt_loop._groups
    for step, (a, b) in enumerate(zip(fused, loop), 1):
        for k, (pa, pb) in enumerate(zip(a, b)):
            np.testing.assert_array_equal(pa, pb, err_msg=f"step {step}, parameter {k}")
    for i, (sa, sb) in enumerate(zip(opt.state, opt_loop.state)):  # the state too
        assert sa.keys() == sb.keys()
        for key in sa:
            np.testing.assert_array_equal(sa[key], sb[key], err_msg=f"{key} of parameter {i}")


@pytest.mark.parametrize("opt_class, settings", [FUSED_SETTINGS[3], FUSED_SETTINGS[7]],
                         ids=["momentum+wd", "adam+wd"])
def test_fused_steps_with_parameters_skipped_now_and_then(opt_class, settings):
    # layer 2 has no gradient at steps 3 and 10 (skipped: no update, no state change), and
    # layer 0 none at the first two steps (its state starts later than the others')
    def freeze(step):
        return {0: 0, 1: 0, 3: 2, 10: 2}.get(step)

    _, _, fused = moons_run(opt_class, settings, fused=None, steps=30, freeze=freeze)
    _, _, loop = moons_run(opt_class, settings, fused=False, steps=30, freeze=freeze)
    for step, (a, b) in enumerate(zip(fused, loop), 1):
        for k, (pa, pb) in enumerate(zip(a, b)):
            np.testing.assert_array_equal(pa, pb, err_msg=f"step {step}, parameter {k}")
    np.testing.assert_array_equal(fused[0][0], fused[1][0])  # layer 0 frozen at step 2
    assert not np.array_equal(fused[1][0], fused[2][0])      # and moving at step 3


def test_fused_optimizer_follows_replaced_parameter_arrays():
    # model.load_state_dict gives each parameter a new array: the optimizer copies it into
    # its flat buffer at the next step and keeps updating the parameter
    model, opt, _ = moons_run(optim.SGD, dict(lr=0.1, momentum=0.9), fused=None, steps=2)
    snapshot = {k: v.copy() for k, v in model.state_dict().items()}
    model.load_state_dict({k: v * 0 + 1.0 for k, v in snapshot.items()})
    w = model[0].weight
    w.grad = np.ones(w.shape)
    for p in model.parameters():
        if p is not w:
            p.grad = np.zeros(p.shape)
    buf = opt.state[0]["momentum_buffer"].copy()
    opt.step()
    np.testing.assert_allclose(w.data, 1.0 - 0.1 * (0.9 * buf + 1.0), rtol=1e-15)
    assert w.data.base is model[2].bias.data.base  # back in the flat buffer


def test_fused_true_needs_numpy_or_cupy_arrays():
    xp = pytest.importorskip("array_api_strict")
    p = nn.Parameter(xp.asarray([1.0, 2.0], dtype=xp.float64))
    with pytest.raises(ValueError, match="fused=True needs NumPy or CuPy arrays"):
        optim.SGD([p], lr=0.1, fused=True)
    with pytest.raises(TypeError, match="fused must be None, True or False"):
        optim.SGD([nn.Parameter(np.ones(2))], lr=0.1, fused="yes")


def test_parameters_of_two_dtypes_get_a_flat_buffer_each():
    a = nn.Parameter(np.array([1.0, 2.0], dtype=np.float32))
    b = nn.Parameter(np.array([3.0, 4.0, 5.0]))
    c = nn.Parameter(np.array([6.0], dtype=np.float32))
    opt = optim.SGD([a, b, c], lr=0.5)
    assert a.data.base is c.data.base and b.data.base is not a.data.base
    assert (a.dtype, b.dtype) == (np.float32, np.float64)
    for p in (a, b, c):
        p.grad = np.ones(p.shape, dtype=p.dtype)
    opt.step()
    assert a.data.tolist() == [0.5, 1.5] and b.data.tolist() == [2.5, 3.5, 4.5]
    assert c.data.tolist() == [5.5]


# ---------------------------------------------------------------------------------------------
# Checks before anything is written (issue 12)


@pytest.mark.parametrize("opt_class, settings, match", [
    (optim.SGD, dict(lr=float("nan")), "lr must be >= 0"),
    (optim.SGD, dict(lr=-0.1), "lr must be >= 0"),
    (optim.SGD, dict(lr=float("inf")), "lr must be >= 0, a finite number; got inf"),
    (optim.SGD, dict(lr=0.1, momentum=float("nan")), "momentum must be >= 0"),
    (optim.SGD, dict(lr=0.1, momentum=-0.9), "momentum must be >= 0"),
    (optim.SGD, dict(lr=0.1, weight_decay=-1e-4), "weight_decay must be >= 0"),
    (optim.SGD, dict(lr=0.1, dampening=float("nan")), "dampening must be >= 0"),
    (optim.Adam, dict(lr=float("nan")), "lr must be >= 0"),
    (optim.Adam, dict(eps=float("nan")), "eps must be >= 0"),
    (optim.Adam, dict(eps=-1e-8), "eps must be >= 0"),
    (optim.Adam, dict(betas=(float("nan"), 0.999)), r"betas must be two numbers in \[0, 1\)"),
    (optim.Adam, dict(betas=(0.9, -0.1)), r"betas\[1\] must be >= 0"),
    (optim.Adam, dict(betas=(0.9,)), r"betas must be two numbers in \[0, 1\); got \(0.9,\)"),
])
def test_bad_hyperparameters_are_refused_at_construction(opt_class, settings, match):
    with pytest.raises(ValueError, match=match):
        opt_class([nn.Parameter(np.ones(2))], **settings)


def test_hyperparameters_are_checked_when_set_later_too():
    p = nn.Parameter(np.ones(2))
    opt = optim.SGD([p], lr=0.1)
    with pytest.raises(ValueError, match="lr must be >= 0"):
        opt.lr = float("nan")
    with pytest.raises(TypeError, match="lr must be a number; got str '0.1'"):
        opt.lr = "0.1"
    assert opt.lr == 0.1
    adam = optim.Adam([nn.Parameter(np.ones(2))])
    with pytest.raises(ValueError, match="betas"):
        adam.betas = (0.9, 1.0)
    assert adam.betas == (0.9, 0.999)


@pytest.mark.parametrize("fused", [None, False])
@pytest.mark.parametrize("opt_class, settings", [(optim.SGD, dict(lr=0.1, momentum=0.9)),
                                                 (optim.Adam, dict(lr=0.1))])
def test_step_checks_every_gradient_shape_before_writing(opt_class, settings, fused):
    a, b = nn.Parameter(np.ones(3)), nn.Parameter(np.ones((2, 2)))
    opt = opt_class([a, b], fused=fused, **settings)
    a.grad, b.grad = np.ones(3), np.ones(4)  # b's gradient has the wrong shape
    with pytest.raises(ValueError, match=r"gradient of parameter 1 has shape \(4,\) but the "
                                         r"parameter has shape \(2, 2\); nothing was updated"):
        opt.step()
    assert a.data.tolist() == [1.0, 1.0, 1.0] and opt.state == [{}, {}]
    b.grad = np.ones((2, 2))
    opt.step()
    assert a.data.tolist() != [1.0, 1.0, 1.0]


@pytest.mark.parametrize("fused", [None, False])
def test_load_state_dict_is_all_or_nothing(fused):
    model, opt = make_run(optim.SGD, dict(lr=0.1, momentum=0.9))
    train(model, opt, 2, start=0)
    good = {"state": {i: {k: v.copy() for k, v in s.items()} for i, s in
                      opt.state_dict()["state"].items()},
            "param_groups": [dict(opt.state_dict()["param_groups"][0], lr=0.5, momentum=0.5)]}
    bad = {"state": dict(good["state"]), "param_groups": good["param_groups"]}
    bad["state"][3] = {"momentum_buffer": np.ones(5)}  # the last parameter's is wrong

    model_b, opt_b = make_run(optim.SGD, dict(lr=0.1, momentum=0.9))
    opt_b = optim.SGD(model_b.parameters(), lr=0.1, momentum=0.9, fused=fused)
    train(model_b, opt_b, 1, start=0)
    before = [s["momentum_buffer"].copy() for s in opt_b.state]
    with pytest.raises(ValueError, match=r"'momentum_buffer' of parameter 3 has shape \(5,\)"):
        opt_b.load_state_dict(bad)
    assert (opt_b.lr, opt_b.momentum) == (0.1, 0.9)
    for s, b in zip(opt_b.state, before):
        np.testing.assert_array_equal(s["momentum_buffer"], b)
    bad_hyper = {"state": good["state"], "param_groups": [dict(good["param_groups"][0],
                                                               lr=float("nan"))]}
    with pytest.raises(ValueError, match="lr must be >= 0"):
        opt_b.load_state_dict(bad_hyper)
    assert opt_b.lr == 0.1
    for s, b in zip(opt_b.state, before):
        np.testing.assert_array_equal(s["momentum_buffer"], b)
    opt_b.load_state_dict(good)
    assert (opt_b.lr, opt_b.momentum) == (0.5, 0.5)
    np.testing.assert_array_equal(opt_b.state[3]["momentum_buffer"],
                                  good["state"][3]["momentum_buffer"])


def test_model_converted_after_the_optimizer_falls_back_to_the_loop():
    # Module.to(dtype=...) gives the parameters arrays of another dtype: the flat layout no
    # longer fits, so the optimizer goes on one parameter at a time, updating the new arrays
    model = nn.Linear(2, 1, seed=0)
    opt = optim.SGD(model.parameters(), lr=0.5)
    model.to(dtype="float32")
    w0 = model.weight.data.copy()
    opt.zero_grad()
    model(mg.tensor(np.ones((1, 2), dtype=np.float32))).sum().backward()
    assert model.weight.grad.dtype == np.float32
    opt.step()
    assert model.weight.dtype == np.float32 and not opt._groups
    np.testing.assert_array_equal(model.weight.data, w0 - np.float32(0.5) * np.ones((1, 2)))
