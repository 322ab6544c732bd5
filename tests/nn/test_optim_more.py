"""AdamW, RMSprop, Adagrad and the learning-rate schedules, against PyTorch's pinned answers
(tests/support/optim_cases.py; re-derived by ``python -m bench.torch_parity_optim``)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim
from minigrad.optim import lr_scheduler as L

from tests.support import optim_cases as cases

PINNED = cases.load_pinned()


@pytest.mark.parametrize("name", sorted(cases.OPTIMIZERS))
def test_optimizer_follows_pytorch(name):
    got = cases.run_optimizer(name, "minigrad")
    want = PINNED["optimizers"][name]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", sorted(cases.OPTIMIZERS))
def test_fused_and_per_parameter_updates_are_the_same(name):
    cls, kwargs = cases.OPTIMIZERS[name]
    results = []
    for fused in (True, False):
        model = nn.Sequential(nn.Linear(3, 4, seed=0), nn.ReLU(), nn.Linear(4, 2, seed=1))
        opt = getattr(optim, cls)(model.parameters(), fused=fused, **kwargs)
        x = mg.tensor(np.linspace(-1, 1, 15).reshape(5, 3))
        for _ in range(4):
            opt.zero_grad()
            (model(x) ** 2).sum().backward()
            opt.step()
        results.append([p.data.copy() for p in model.parameters()])
    for a, b in zip(*results):
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("name", sorted(cases.OPTIMIZERS))
def test_optimizer_state_dict_round_trip(name):
    cls, kwargs = cases.OPTIMIZERS[name]

    def run(resume: bool) -> list[np.ndarray]:
        model = nn.Linear(3, 2, seed=0)
        opt = getattr(optim, cls)(model.parameters(), **kwargs)
        x = mg.tensor(np.linspace(-1, 1, 12).reshape(4, 3))
        for k in range(6):
            if resume and k == 3:  # a new optimizer, loaded from the saved state
                saved = opt.state_dict()
                opt = getattr(optim, cls)(model.parameters(), **kwargs)
                opt.load_state_dict(saved)
            opt.zero_grad()
            (model(x) ** 2).sum().backward()
            opt.step()
        return [p.data.copy() for p in model.parameters()]

    for a, b in zip(run(False), run(True)):
        assert a.tobytes() == b.tobytes()


BAD_SETTINGS = [
    ("AdamW", {"lr": -1.0}, "lr must be >= 0"),
    ("AdamW", {"betas": (0.9, 1.0)}, "betas must be two numbers in [0, 1)"),
    ("RMSprop", {"alpha": 1.5}, "alpha must be >= 0 and <= 1"),
    ("RMSprop", {"momentum": float("nan")}, "momentum must be >= 0"),
    ("Adagrad", {"lr_decay": -0.1}, "lr_decay must be >= 0"),
    ("Adagrad", {"initial_accumulator_value": "1"}, "must be a number"),
]


@pytest.mark.parametrize("cls,kwargs,message", BAD_SETTINGS)
def test_bad_settings_are_refused_with_the_name(cls, kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message.replace("(", r"\(")
                       .replace(")", r"\)").replace("[", r"\[")):
        getattr(optim, cls)(nn.Linear(2, 1, seed=0).parameters(), **kwargs)


@pytest.mark.parametrize("name", sorted(cases.SCHEDULES))
def test_schedule_follows_pytorch(name):
    got = cases.run_schedule(name, "minigrad")
    want = PINNED["schedules"][name]
    np.testing.assert_allclose(got["lr"], want["lr"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got["momentum"], want["momentum"], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", sorted(set(cases.SCHEDULES) - {"lambda"}))
def test_schedule_state_dict_round_trip(name):
    def lrs(resume: bool) -> list[float]:
        p = mg.tensor([0.0], requires_grad=True)
        opt = optim.SGD([p], lr=0.1, momentum=0.9)
        sched = cases.SCHEDULES[name](L, opt)
        out = []
        for k in range(cases.EPOCHS - 1):
            if resume and k == 5:
                saved_sched, saved_opt = sched.state_dict(), opt.state_dict()
                p = mg.tensor([0.0], requires_grad=True)
                opt = optim.SGD([p], lr=0.1, momentum=0.9)
                sched = cases.SCHEDULES[name](L, opt)
                opt.load_state_dict(saved_opt)
                sched.load_state_dict(saved_sched)
            opt.step()
            sched.step()
            out.append(opt.lr)
        return out

    assert lrs(False) == lrs(True)


def test_one_cycle_refuses_a_step_past_its_end():
    opt = optim.SGD([mg.tensor([0.0], requires_grad=True)], lr=0.1, momentum=0.9)
    sched = L.OneCycleLR(opt, max_lr=1.0, total_steps=3)
    sched.step()
    sched.step()
    with pytest.raises(ValueError, match="total_steps is 3"):
        sched.step()
        sched.step()


def test_a_scheduler_needs_a_minigrad_optimizer():
    with pytest.raises(TypeError, match="expected an optimizer of minigrad.optim"):
        L.StepLR(object(), step_size=1)  # type: ignore[arg-type]


@pytest.mark.parametrize("schedule", ["step", "cosine", "one-cycle-no-momentum"])
@pytest.mark.parametrize("kind", ["AdamW", "RMSprop", "Adagrad", "SGD"])
def test_a_schedule_replays_a_compiled_step_exactly(kind, schedule):
    import minigrad.functional as F

    def make():
        model = nn.Sequential(nn.Linear(3, 6, seed=0), nn.Tanh(), nn.Linear(6, 2, seed=1))
        opt = getattr(optim, kind)(model.parameters(), lr=0.05,
                                   **({"momentum": 0.9} if kind == "SGD" else {}))
        sched = {"step": lambda: L.StepLR(opt, step_size=3, gamma=0.5),
                 "cosine": lambda: L.CosineAnnealingLR(opt, T_max=6),
                 "one-cycle-no-momentum": lambda: L.OneCycleLR(
                     opt, max_lr=0.1, total_steps=20, cycle_momentum=False)}[schedule]()

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        return model, sched, step

    model_a, sched_a, step_a = make()
    model_b, sched_b, step_b = make()
    compiled = mg.compile(step_b)
    rng = np.random.default_rng(0)
    for k in range(16):
        x, y = mg.tensor(rng.uniform(-1, 1, (5, 3))), rng.integers(0, 2, 5)
        assert step_a(x, y).data.tobytes() == compiled(x, y).data.tobytes(), f"call {k}"
        sched_a.step()
        sched_b.step()
    for p, q in zip(model_a.parameters(), model_b.parameters()):
        assert p.data.tobytes() == q.data.tobytes()
    assert compiled.calls == {"eager": 1, "recorded": 2, "replayed": 13}


def test_a_scheduler_stepped_inside_the_compiled_step_runs_eagerly_and_says_why():
    import minigrad.functional as F
    from minigrad.compile import CompileWarning

    model = nn.Linear(3, 2, seed=0)
    opt = optim.SGD(model.parameters(), lr=0.1)
    sched = L.ExponentialLR(opt, gamma=0.9)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        sched.step()  # a replay would not run this
        return loss

    compiled = mg.compile(step)
    with pytest.warns(CompileWarning, match="scheduler.step"):
        for k in range(6):
            compiled(mg.tensor(np.ones((2, 3))), np.array([0, 1]))
    assert compiled.calls["replayed"] == 0
    assert math.isclose(opt.lr, 0.1 * 0.9 ** 6)
