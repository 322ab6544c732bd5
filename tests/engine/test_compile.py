"""minigrad.compile: a replayed step computes exactly what the eager step computes.

Each test trains two copies of one network from the same weights on the same batches, one
with the plain step and one with ``minigrad.compile(step)``, and compares losses, parameters
and gradients *bit for bit* (``np.array_equal``, no tolerance) over 100 steps; and it checks
that the compiled copy really replayed (``calls``), or really fell back, with its reason.
"""
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad import nn, optim
from minigrad.compile import CompiledStep, CompileWarning
from minigrad.data import moons

X, Y = moons(1000, noise=0.1, seed=0)
X = X.astype("float32")


def mlp():
    return nn.Sequential(nn.Linear(2, 16, seed=0, dtype="float32"), nn.ReLU(),
                         nn.Linear(16, 16, seed=1, dtype="float32"), nn.ReLU(),
                         nn.Linear(16, 2, seed=2, dtype="float32"))


def convnet():
    """LeNet-5 in small: conv, ReLU, max-pool, twice, then two linear layers."""
    return nn.Sequential(nn.Conv2d(1, 4, 3, seed=0, dtype="float32"), nn.ReLU(),
                         nn.MaxPool2d(2),
                         nn.Conv2d(4, 6, 3, padding=1, seed=1, dtype="float32"), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(6 * 3 * 3, 16, seed=2, dtype="float32"), nn.ReLU(),
                         nn.Linear(16, 3, seed=3, dtype="float32"))


OPTIMIZERS = {
    "sgd-momentum": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
    "sgd-nesterov-decay": lambda ps: optim.SGD(ps, lr=0.05, momentum=0.8, nesterov=True,
                                               weight_decay=1e-3),
    "adam": lambda ps: optim.Adam(ps, lr=0.01),
    "adam-per-parameter": lambda ps: optim.Adam(ps, lr=0.01, weight_decay=1e-2, fused=False),
    "sgd-per-parameter": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, fused=False),
}


def trainer(make_model, make_opt):
    model = make_model()
    opt = make_opt(model.parameters())

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return model, opt, step


def moons_batches(n_steps, batch=32):
    for i in range(n_steps):
        j = (i * batch) % (len(X) - batch)
        yield mg.tensor(X[j:j + batch]), Y[j:j + batch]


def image_batches(n_steps, batch=8, sizes=None):
    rng = np.random.default_rng(0)
    images = rng.standard_normal((64, 1, 14, 14)).astype("float32")
    labels = rng.integers(0, 3, 64)
    for i in range(n_steps):
        b = batch if sizes is None else sizes[i % len(sizes)]
        j = (i * 8) % (64 - b)
        yield mg.tensor(images[j:j + b]), labels[j:j + b]


def assert_same_training(make_model, make_opt, batches, expect_replays=None):
    """Train eagerly and compiled on ``batches``; everything bit for bit the same."""
    model_a, _, step_a = trainer(make_model, make_opt)
    model_b, opt_b, step_b = trainer(make_model, make_opt)
    compiled = mg.compile(step_b)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)  # no fallback expected here
        for k, (x, y) in enumerate(batches):
            a, b = step_a(x, y), compiled(x, y)
            assert a.data.tobytes() == b.data.tobytes(), f"loss at step {k}: {a} != {b}"
    for (name, p), q in zip(model_a.named_parameters(), model_b.parameters()):
        assert np.array_equal(p.data, q.data), f"{name} after training"
        assert np.array_equal(p.grad, q.grad), f"{name}.grad after training"
    if expect_replays is not None:
        assert compiled.calls["replayed"] == expect_replays, compiled.calls
    return compiled, opt_b


@pytest.mark.parametrize("kind", list(OPTIMIZERS))
def test_moons_mlp_bit_for_bit_over_100_steps(kind):
    # 1 eager call (finds the optimizer), 2 recordings (compared), then 97 replays
    compiled, _ = assert_same_training(mlp, OPTIMIZERS[kind], moons_batches(100),
                                       expect_replays=97)
    assert compiled.calls == {"eager": 1, "recorded": 2, "replayed": 97}
    assert compiled.reasons == {}


def test_zero_grad_to_zeros_and_no_return_value():
    # zero_grad(set_to_none=False) zeroes the gradient buffers in place: recorded and replayed
    def run(compiled):
        model = mlp()
        opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        def step(x, y):
            opt.zero_grad(set_to_none=False)
            F.cross_entropy(model(x), y).backward()
            opt.step()

        step = mg.compile(step) if compiled else step
        for x, y in moons_batches(30):
            assert step(x, y) is None
        return model, step

    (eager, _), (model, step) = run(False), run(True)
    assert step.calls["replayed"] == 27
    for p, q in zip(eager.parameters(), model.parameters()):
        assert np.array_equal(p.data, q.data) and np.array_equal(p.grad, q.grad)


def test_adam_state_follows_the_replays():
    _, opt = assert_same_training(mlp, OPTIMIZERS["adam"], moons_batches(20))
    assert [s["step"] for s in opt.state] == [20] * 6  # counted by the replays too


def test_convnet_bit_for_bit_over_100_steps():
    assert_same_training(convnet, OPTIMIZERS["sgd-momentum"], image_batches(100),
                         expect_replays=97)


def test_a_nan_reaching_a_max_pool_runs_that_call_eagerly():
    # max_pool2d reads in its forward pass whether a window holds a NaN (its gradient rule
    # changes then): a replay checks that reading first and, when it differs, runs eagerly.
    model_a, _, step_a = trainer(convnet, OPTIMIZERS["sgd-momentum"])
    model_b, _, step_b = trainer(convnet, OPTIMIZERS["sgd-momentum"])
    compiled = mg.compile(step_b)
    batches = list(image_batches(8))
    images = batches[-1][0].numpy().copy()
    images[0, 0, 5, 5] = np.nan
    batches[-1] = (mg.tensor(images), batches[-1][1])
    with pytest.warns(CompileWarning, match="replay stopped"):
        for x, y in batches:
            assert step_a(x, y).data.tobytes() == compiled(x, y).data.tobytes()
    assert compiled.calls == {"eager": 2, "recorded": 2, "replayed": 4}
    for p, q in zip(model_a.parameters(), model_b.parameters()):
        assert np.isnan(q.data).any()  # the NaN reached every parameter, as in eager
        assert np.array_equal(p.data, q.data, equal_nan=True)


def test_a_new_shape_is_recorded_again():
    # batches of 8, 8, 5 in turn (an epoch's short last batch): two keys, each recorded
    # twice and then replayed; the results stay the eager ones
    compiled, _ = assert_same_training(convnet, OPTIMIZERS["adam"],
                                       image_batches(60, sizes=[8, 8, 5]))
    assert len(compiled.entries) == 2
    assert all(e.program is not None for e in compiled.entries.values())
    assert compiled.calls["recorded"] == 4 and compiled.calls["replayed"] == 60 - 1 - 4


@pytest.mark.parametrize("kind", ["sgd-momentum", "adam", "sgd-per-parameter"])
def test_a_learning_rate_schedule_replays(kind):
    # lr is read again at every replay: a new value at every call needs no new recording
    model_a, opt_a, step_a = trainer(mlp, OPTIMIZERS[kind])
    model_b, opt_b, step_b = trainer(mlp, OPTIMIZERS[kind])
    compiled = mg.compile(step_b)
    for k, (x, y) in enumerate(moons_batches(40)):
        opt_a.lr = opt_b.lr = 0.1 * 0.95 ** k
        assert step_a(x, y).data.tobytes() == compiled(x, y).data.tobytes()
    for p, q in zip(model_a.parameters(), model_b.parameters()):
        assert np.array_equal(p.data, q.data)
    assert compiled.calls == {"eager": 1, "recorded": 2, "replayed": 37}


def test_changing_another_hyperparameter_records_again():
    model_a, opt_a, step_a = trainer(mlp, OPTIMIZERS["sgd-momentum"])
    model_b, opt_b, step_b = trainer(mlp, OPTIMIZERS["sgd-momentum"])
    compiled = mg.compile(step_b)
    for k, (x, y) in enumerate(moons_batches(40)):
        if k == 20:
            opt_a.momentum = opt_b.momentum = 0.5
        assert step_a(x, y).item() == compiled(x, y).item()
    for p, q in zip(model_a.parameters(), model_b.parameters()):
        assert np.array_equal(p.data, q.data)
    assert compiled.calls["recorded"] == 4 and "momentum" not in compiled.changes[0]
    assert "SGD changed" in compiled.changes[0]


def test_replaced_parameter_array_records_again():
    model, _, step = trainer(mlp, OPTIMIZERS["sgd-per-parameter"])
    compiled = mg.compile(step)
    batches = list(moons_batches(8))
    for x, y in batches[:5]:
        compiled(x, y)
    assert compiled.calls["replayed"] == 2
    w = model[0].weight
    w.data = w.data.copy()  # a new array: the recording refers to the old one
    compiled(*batches[5])
    assert compiled.calls["recorded"] == 3


def test_returning_a_python_number_falls_back_and_says_why():
    model_a, _, step_a = trainer(mlp, OPTIMIZERS["sgd-momentum"])
    model_b, _, step_b = trainer(mlp, OPTIMIZERS["sgd-momentum"])
    compiled = mg.compile(lambda x, y: step_b(x, y).item())
    with pytest.warns(CompileWarning, match="returns a float"):
        for x, y in moons_batches(10):
            assert step_a(x, y).item() == compiled(x, y)
    assert compiled.calls["replayed"] == 0 and compiled.calls["eager"] == 9
    for p, q in zip(model_a.parameters(), model_b.parameters()):
        assert np.array_equal(p.data, q.data)


def test_dropout_is_not_replayed():
    # a new random mask at every call: two recordings differ, so the step stays eager
    def make():
        return nn.Sequential(nn.Linear(2, 16, seed=0), nn.Dropout(0.5, seed=1),
                             nn.Linear(16, 2, seed=2))
    _, _, step_a = trainer(make, OPTIMIZERS["sgd-momentum"])
    _, _, step_b = trainer(make, OPTIMIZERS["sgd-momentum"])
    compiled = mg.compile(step_b)
    with pytest.warns(CompileWarning, match="random numbers"):
        for x, y in moons_batches(10):
            x = mg.tensor(x.data.astype("float64"))
            assert step_a(x, y).item() == compiled(x, y).item()
    assert compiled.calls["replayed"] == 0


def reads_the_loss(model, opt):
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        if loss.item() > 100:  # Python control flow on a value that changes at every call
            loss = loss * 0.5
        loss.backward()
        opt.step()
        return loss
    return step


def scales_by_a_growing_number(model, opt):
    weight = [1.0]

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y) * weight[0]  # a Python number, new at each call
        weight[0] += 0.5
        loss.backward()
        opt.step()
        return loss
    return step


@pytest.mark.parametrize("make_step, reason", [
    (reads_the_loss, "a value read into Python changed"),
    (scales_by_a_growing_number, "an argument changed"),
], ids=["control-flow-on-a-value", "number-baked-into-a-call"])
def test_a_step_that_differs_between_calls_stays_eager_and_says_why(make_step, reason):
    model = mlp()
    compiled = mg.compile(make_step(model, optim.SGD(model.parameters(), lr=0.1)))
    reference = mlp()
    eager = make_step(reference, optim.SGD(reference.parameters(), lr=0.1))
    with pytest.warns(CompileWarning, match=reason):
        for x, y in moons_batches(8):
            assert compiled(x, y).item() == eager(x, y).item()
    assert compiled.calls == {"eager": 6, "recorded": 2, "replayed": 0}


def test_a_parameter_updated_by_hand_is_not_replayed():
    model = mlp()

    def step(x, y):  # the course's SGD, written out: no optimizer to watch
        for p in model.parameters():
            p.grad = None
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        with mg.no_grad():
            for p in model.parameters():
                p.data -= 0.1 * p.grad
        return loss

    reference = mlp()
    compiled = mg.compile(step)
    with pytest.warns(CompileWarning, match="belongs to no optimizer"):
        for x, y in moons_batches(6):
            loss = F.cross_entropy(reference(x), y)
            for p in reference.parameters():
                p.grad = None
            loss.backward()
            for p in reference.parameters():
                p.data -= 0.1 * p.grad
            assert compiled(x, y).item() == loss.item()
    assert compiled.calls["replayed"] == 0


def test_a_data_dependent_shape_stops_the_replay_before_any_change():
    def make():
        model = mlp()
        opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        def step(x, y, keep):  # train on the rows a boolean mask keeps: a shape from values
            opt.zero_grad()
            loss = F.cross_entropy(model(x)[keep], y[keep])
            loss.backward()
            opt.step()
            return loss
        return model, step

    (model_a, step_a), (model_b, step_b) = make(), make()
    compiled = mg.compile(step_b)
    keep = np.arange(32) < 20  # 20 rows, then 25 at the last call
    batches = list(moons_batches(6))
    with pytest.warns(CompileWarning, match="data-dependent shape"):
        for k, (x, y) in enumerate(batches):
            mask = keep if k < 5 else np.arange(32) < 25
            assert step_a(x, y, mask).item() == compiled(x, y, mask).item()
    assert compiled.calls == {"eager": 2, "recorded": 2, "replayed": 2}
    for p, q in zip(model_a.parameters(), model_b.parameters()):
        assert np.array_equal(p.data, q.data)


def test_arrays_of_another_library_run_eagerly():
    import array_api_strict as xp
    w = mg.tensor(xp.asarray([[0.5], [-1.0]]), requires_grad=True)
    opt = optim.SGD([w], lr=0.1)  # per-parameter: not NumPy arrays

    def step(x):
        opt.zero_grad()
        loss = ((x @ w) ** 2).sum()
        loss.backward()
        opt.step()
        return loss

    compiled = mg.compile(step)
    x = mg.tensor(xp.asarray([[1.0, 2.0]]))
    with pytest.warns(CompileWarning, match="not NumPy arrays"):
        losses = [float(compiled(x).item()) for _ in range(4)]
    assert losses[0] > losses[-1]  # it trains, eagerly
    assert compiled.calls == {"eager": 4, "recorded": 0, "replayed": 0}


def test_keyword_arguments_run_eagerly():
    _, _, step = trainer(mlp, OPTIMIZERS["sgd-momentum"])
    compiled = mg.compile(step)
    x, y = next(moons_batches(1))
    with pytest.warns(CompileWarning, match="keyword arguments"):
        for _ in range(4):
            compiled(x, y=y)
    assert compiled.calls == {"eager": 4, "recorded": 0, "replayed": 0}


def test_a_failing_check_runs_the_call_eagerly_and_raises_as_eager():
    model_a, _, step_a = trainer(mlp, OPTIMIZERS["sgd-momentum"])
    model_b, _, step_b = trainer(mlp, OPTIMIZERS["sgd-momentum"])
    compiled = mg.compile(step_b)
    for x, y in moons_batches(6):
        step_a(x, y), compiled(x, y)
    x, y = next(moons_batches(1))
    bad = y.copy()
    bad[3] = 7  # not a class: cross_entropy's check reads a count that now differs
    with pytest.raises(IndexError, match="target 7"):
        step_a(x, bad)
    with pytest.warns(CompileWarning, match="replay stopped"), \
            pytest.raises(IndexError, match="target 7"):
        compiled(x, bad)
    for p, q in zip(model_a.parameters(), model_b.parameters()):  # nothing half-updated
        assert np.array_equal(p.data, q.data)
        assert np.array_equal(p.grad, q.grad)


def test_compiled_step_returns_a_new_tensor_each_call():
    _, _, step = trainer(mlp, OPTIMIZERS["sgd-momentum"])
    compiled = mg.compile(step)
    assert isinstance(compiled, CompiledStep)
    losses = [compiled(x, y) for x, y in moons_batches(6)]
    values = [loss.item() for loss in losses]
    assert len(set(values)) == 6  # not one buffer returned six times
    assert not losses[-1].requires_grad


def test_recording_patches_nothing_and_other_threads_see_nothing():
    # the engine's array makers report to the recording thread's hook only: NumPy itself is
    # never patched, and a thread running the engine while a step records is not recorded
    import threading

    from minigrad import backend

    original_zeros = np.zeros
    seen: dict[str, object] = {}

    model, opt, step = trainer(mlp, OPTIMIZERS["sgd-momentum"])

    def other_thread() -> None:
        xp = backend.namespace(np.ones(2))
        seen["type"] = type(xp.zeros(3))
        seen["grad"] = (mg.tensor(np.ones((2, 2)), requires_grad=True) * 2.0).sum()

    def watched(x, y):
        seen.setdefault("patched", []).append(np.zeros is not original_zeros)
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
        return step(x, y)

    compiled = mg.compile(watched)
    for x, y in moons_batches(6):
        compiled(x, y)
    assert compiled.calls["replayed"] == 3
    assert seen["patched"] == [False, False, False]  # the calls that ran the step itself
    assert seen["type"] is np.ndarray
