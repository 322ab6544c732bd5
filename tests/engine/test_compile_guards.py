"""A compiled step sees when the state it reaches changes, and records again.

Each case trains two copies of one network, eagerly and compiled, makes the same change to
both in the middle (a new model or optimizer bound to the name the step uses, a parameter or
layer replaced, a layer frozen, ``eval()``), and checks that the two copies stay bit for bit
the same after every call, that the compiled copy noticed (``changes``), and that it replays
again after the change.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad import nn, optim
from minigrad.compile import CompileWarning
from minigrad.compile_guards import StateGuard
from minigrad.nn.utils import clip_grad_norm_

CALLS, CHANGE_AT = 16, 6


def mlp(seed: int = 0) -> nn.Sequential:
    return nn.Sequential(nn.Linear(3, 8, seed=seed), nn.ReLU(), nn.Linear(8, 2, seed=seed + 1))


def batches() -> list[tuple[mg.Tensor, np.ndarray]]:
    rng = np.random.default_rng(0)
    return [(mg.tensor(rng.uniform(-1, 1, (6, 3))), rng.integers(0, 2, 6)) for _ in range(CALLS)]


def in_a_dict() -> tuple[dict[str, Any], Callable[..., Any]]:
    """A step that reaches its model and optimizer through a dict in its closure."""
    state: dict[str, Any] = {"model": mlp()}
    state["opt"] = optim.SGD(state["model"].parameters(), lr=0.1, momentum=0.9)

    def step(x: mg.Tensor, y: np.ndarray) -> mg.Tensor:
        state["opt"].zero_grad()
        loss = F.cross_entropy(state["model"](x), y)
        loss.backward()
        state["opt"].step()
        return loss

    return state, step


def new_model(state: dict[str, Any]) -> None:
    state["model"] = mlp(seed=5)
    state["opt"] = optim.SGD(state["model"].parameters(), lr=0.1, momentum=0.9)


def new_optimizer(state: dict[str, Any]) -> None:
    state["opt"] = optim.Adam(state["model"].parameters(), lr=0.01)


def new_parameter(state: dict[str, Any]) -> None:
    # the optimizer keeps the old Parameter (as in PyTorch): the new one gets gradients only
    layer = state["model"][0]
    layer.weight = nn.Parameter(np.full((8, 3), 0.25))


def new_parameter_and_optimizer(state: dict[str, Any]) -> None:
    new_parameter(state)
    state["opt"] = optim.SGD(state["model"].parameters(), lr=0.1)


def swapped_layer(state: dict[str, Any]) -> None:
    state["model"][1] = nn.Tanh()


def frozen_layer(state: dict[str, Any]) -> None:
    for p in state["model"][0].parameters():
        p.requires_grad_(False)


def eval_mode(state: dict[str, Any]) -> None:
    state["model"].eval()


def new_array(state: dict[str, Any]) -> None:
    w = state["model"][2].weight
    w.data = w.data * 0.5


CHANGES = {  # the change, and None (it replays again) or why it runs eagerly from then on
    "a new model and optimizer": (new_model, None),
    "SGD becomes Adam": (new_optimizer, None),
    # no optimizer zeroes the new Parameter's gradient: it adds up in place from call to call,
    # an array no optimizer of the step owns (eager, as a parameter updated by hand)
    "a parameter replaced": (new_parameter, "belongs to no optimizer"),
    "a parameter replaced, a new optimizer": (new_parameter_and_optimizer, None),
    "a layer swapped in the Sequential": (swapped_layer, None),
    "a layer frozen": (frozen_layer, None),
    "eval mode": (eval_mode, None),
    "a parameter's array replaced": (new_array, None),
}


def _same(a: dict[str, Any], b: dict[str, Any], k: int) -> None:
    for (name, p), q in zip(a["model"].named_parameters(), b["model"].parameters()):
        assert p.data.tobytes() == q.data.tobytes(), f"call {k}: {name}"
        assert (p.grad is None) == (q.grad is None), f"call {k}: {name}.grad"
        if p.grad is not None:
            assert p.grad.tobytes() == q.grad.tobytes(), f"call {k}: {name}.grad"


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_a_change_of_the_state_records_again(name):
    change, eager_reason = CHANGES[name]
    state_a, step_a = in_a_dict()
    state_b, step_b = in_a_dict()
    compiled = mg.compile(step_b)
    replayed_before = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CompileWarning)
        for k, (x, y) in enumerate(batches()):
            if k == CHANGE_AT:
                replayed_before = compiled.calls["replayed"]
                change(state_a)
                change(state_b)
            a, b = step_a(x, y), compiled(x, y)
            assert a.data.tobytes() == b.data.tobytes(), f"call {k}: loss"
            _same(state_a, state_b, k)
    reasons = [str(w.message) for w in caught]
    assert replayed_before == CHANGE_AT - 3
    assert len(compiled.changes) >= 1, compiled.changes
    if eager_reason is None:
        assert reasons == []
        assert compiled.calls["replayed"] >= replayed_before + CALLS - CHANGE_AT - 4, \
            compiled.calls
    else:
        assert len(reasons) == 1 and eager_reason in reasons[0], reasons
        assert compiled.calls["replayed"] == replayed_before


MODEL = mlp()
OPT = optim.SGD(MODEL.parameters(), lr=0.1)


def global_step(x: mg.Tensor, y: np.ndarray) -> mg.Tensor:
    OPT.zero_grad()
    loss = F.cross_entropy(MODEL(x), y)
    loss.backward()
    OPT.step()
    return loss


def test_globals_the_step_names_are_guarded():
    global MODEL, OPT
    compiled = mg.compile(global_step)
    for k, (x, y) in enumerate(batches()):
        if k == CHANGE_AT:
            MODEL = mlp(seed=3)
            OPT = optim.Adam(MODEL.parameters(), lr=0.01)
            ref_model = mlp(seed=3)
            ref_opt = optim.Adam(ref_model.parameters(), lr=0.01)
        loss = compiled(x, y)
        if k >= CHANGE_AT:
            ref_opt.zero_grad()
            ref = F.cross_entropy(ref_model(x), y)
            ref.backward()
            ref_opt.step()
            assert loss.data.tobytes() == ref.data.tobytes(), f"call {k}"
    assert any("global MODEL" in c for c in compiled.changes), compiled.changes
    assert compiled.calls["replayed"] >= 2 * CALLS // 2 - 6


def test_the_step_that_changes_its_own_state_runs_eagerly_and_says_why():
    model = mlp()
    holder = {"opt": optim.SGD(model.parameters(), lr=0.1)}

    def step(x: mg.Tensor, y: np.ndarray) -> mg.Tensor:
        holder["opt"].zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        holder["opt"].step()
        holder["opt"] = optim.SGD(model.parameters(), lr=0.1)  # a new one at every call
        return loss

    compiled = mg.compile(step)
    with pytest.warns(CompileWarning, match="changes the state it reaches"):
        for x, y in batches():
            compiled(x, y)
    assert compiled.calls["replayed"] == 0


def test_a_python_number_in_the_closure_needs_reset():
    # the documented limit: a number the step uses as a constant is part of the recording;
    # after changing it, step.reset() records anew
    def make() -> tuple[nn.Module, dict[str, float], Callable[..., Any]]:
        model = mlp()
        opt = optim.SGD(model.parameters(), lr=0.1)
        settings = {"scale": 1.0}

        def step(x: mg.Tensor, y: np.ndarray) -> mg.Tensor:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y) * settings["scale"]
            loss.backward()
            opt.step()
            return loss

        return model, settings, step

    model_a, settings_a, step_a = make()
    model_b, settings_b, step_b = make()
    compiled = mg.compile(step_b)
    for k, (x, y) in enumerate(batches()):
        if k == CHANGE_AT:
            settings_a["scale"] = settings_b["scale"] = 3.0
            compiled.reset()
        assert step_a(x, y).data.tobytes() == compiled(x, y).data.tobytes(), f"call {k}"
    for p, q in zip(model_a.parameters(), model_b.parameters()):
        assert p.data.tobytes() == q.data.tobytes()
    assert compiled.changes == []  # not seen: only reset() made it record again
    assert compiled.calls == {"eager": 2, "recorded": 4, "replayed": CALLS - 6}


def test_clipping_and_a_schedule_in_the_step_replay():
    # the char-RNN example's step: clip_grad_norm_ and a learning rate that changes every call
    def make() -> tuple[nn.Module, optim.Optimizer, Callable[..., Any]]:
        model = mlp()
        opt = optim.Adam(model.parameters(), lr=0.05)

        def step(x: mg.Tensor, y: np.ndarray) -> mg.Tensor:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            clip_grad_norm_(model.parameters(), 0.5)
            opt.step()
            return loss

        return model, opt, step

    model_a, opt_a, step_a = make()
    model_b, opt_b, step_b = make()
    compiled = mg.compile(step_b)
    for k, (x, y) in enumerate(batches()):
        opt_a.lr = opt_b.lr = 0.05 / (1 + k)
        assert step_a(x, y).data.tobytes() == compiled(x, y).data.tobytes()
    for p, q in zip(model_a.parameters(), model_b.parameters()):
        assert p.data.tobytes() == q.data.tobytes()
    assert compiled.calls == {"eager": 1, "recorded": 2, "replayed": CALLS - 3}


def test_the_guard_names_what_changed():
    state, step = in_a_dict()
    guard = StateGuard(step, [state["opt"]])
    assert guard.changed() is None
    state["model"][1] = nn.Tanh()
    assert "state['model']._layers[1] is another object (Tanh)" in guard.changed()
    state["model"][1] = nn.ReLU()
    state["model"][0].weight.requires_grad_(False)
    guard = StateGuard(step, [state["opt"]])
    assert guard.changed() is None
    state["model"][0].weight.requires_grad_(True)
    assert "state['model']._layers[0].weight.requires_grad is True" in guard.changed()


CALLS_SEEN = 0


def test_plain_values_the_step_keeps_do_not_stop_the_replays():
    # a log of losses, a counter, the last loss kept in a dict: outputs of the step, not state
    model = mlp()
    opt = optim.SGD(model.parameters(), lr=0.1)
    log: list[float] = []
    last: dict[str, Any] = {}

    def step(x: mg.Tensor, y: np.ndarray) -> mg.Tensor:
        global CALLS_SEEN
        CALLS_SEEN += 1
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        log.append(0.0)
        last["loss"] = loss
        return loss

    compiled = mg.compile(step)
    for x, y in batches():
        compiled(x, y)
    assert compiled.calls == {"eager": 1, "recorded": 2, "replayed": CALLS - 3}
    assert compiled.changes == []


class KeepsItsHidden(nn.Module):
    """Keeps an intermediate result to look at later, as a student might."""

    def __init__(self) -> None:
        super().__init__()
        self.first, self.second = nn.Linear(3, 8, seed=0), nn.Linear(8, 2, seed=1)

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        self.hidden = self.first(x).relu() * 2.0  # nothing in the step reads it
        return self.second(self.hidden)


@pytest.mark.parametrize("where", ["module attribute", "closure list"])
def test_a_computed_tensor_kept_in_the_state_runs_eagerly_and_says_where(where):
    """A replay runs no Python: a tensor the step keeps would hold the recorded values (it
    did, silently, before). The step runs eagerly, exact, and says where the tensor is."""
    runs = []
    for compiled in (False, True):
        model = KeepsItsHidden()
        opt = optim.SGD(model.parameters(), lr=0.1)
        kept: list[mg.Tensor] = []

        def step(x: mg.Tensor, y: np.ndarray) -> mg.Tensor:
            opt.zero_grad()
            logits = model(x)
            if where == "closure list":
                kept[:] = [logits]
            loss = F.cross_entropy(logits, y)
            loss.backward()
            opt.step()
            return loss

        run = mg.compile(step) if compiled else step
        seen = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for x, y in batches():
                run(x, y)
                seen.append((model.hidden if where == "module attribute" else kept[0]).data.copy())
        runs.append(seen)
    assert all(np.array_equal(a, b) for a, b in zip(*runs))
    assert run.calls["replayed"] == 0
    said = [str(w.message) for w in caught if issubclass(w.category, CompileWarning)]
    name = "model.hidden" if where == "module attribute" else "step: kept[0]"
    assert said and f"the step keeps a tensor it computed in {name}: a replay" in said[0], said


def test_a_kept_tensor_returned_instead_replays():
    model = KeepsItsHidden()
    opt = optim.SGD(model.parameters(), lr=0.1)

    def step(x: mg.Tensor, y: np.ndarray) -> tuple[mg.Tensor, mg.Tensor]:
        opt.zero_grad()
        logits = model(x)
        del model.hidden  # not kept: returned
        loss = F.cross_entropy(logits, y)
        loss.backward()
        opt.step()
        return loss, logits

    compiled = mg.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        for x, y in batches():
            compiled(x, y)
    assert compiled.calls["replayed"] == CALLS - 3


class Trainer:
    def __init__(self) -> None:
        self.model = mlp()
        self.opt = optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9)

    def step(self, x: mg.Tensor, y: np.ndarray) -> mg.Tensor:
        self.opt.zero_grad()
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.opt.step()
        return loss


def test_a_bound_method_and_its_object_are_guarded():
    a, b = Trainer(), Trainer()
    compiled = mg.compile(b.step)
    for k, (x, y) in enumerate(batches()):
        if k == CHANGE_AT:
            for t in (a, b):
                t.model = mlp(seed=9)
                t.opt = optim.SGD(t.model.parameters(), lr=0.05)
        assert a.step(x, y).data.tobytes() == compiled(x, y).data.tobytes(), f"call {k}"
    assert any("__self__.model" in c for c in compiled.changes), compiled.changes
    assert compiled.calls["replayed"] >= CALLS - 7
