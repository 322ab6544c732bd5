"""Checks for lesson 4, "Train with your engine and check it": the network with minigrad.nn
(4.1), its gradients by hand (4.2) and the training loop (4.3), each run on the lesson's network
and on random ones (numbers copied from the lesson's tables do not pass).

Each check is a :class:`~minigrad.course.checks.Split`: the probes and the runs are here, in the
grader's sandbox; the judges (the expected values and the usual causes) are in
``checks/judges/lesson4.py``, which it does not hold. A run decides only what the student's
process alone can see: an object's type, memory shared with an input.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from minigrad import Tensor, nn
from minigrad import functional as F
from minigrad.course import byhand  # noqa: F401 - a test makes sure that no run uses it
from minigrad.course.checks import (Split, described, exercise, exercises, judged, judges_names,
                                    mismatch, require_student, run_cases, sent, student_code)

__all__ = ["EXERCISES", "NETWORK", "network", "hand_gradients", "train_loop"]
EXERCISES = exercises(4)  # titles and points: the course's table, exercises.json
#: The lesson's 2-2-2 network: one input ``x`` of class ``t`` and its fixed decimal weights.
NETWORK: dict[str, Any] = {
    "x": np.array([1.0, -0.5]), "t": 1,
    "W1": np.array([[0.5, -0.3], [0.2, 0.8]]), "b1": np.array([0.1, -0.2]),
    "W2": np.array([[0.7, -0.4], [-0.6, 0.5]]), "b2": np.array([0.05, -0.05])}
_WEIGHTS = ("W1", "b1", "W2", "b2")
_LESSONS_NETWORK = "the lesson's 2-2-2 network"
_CHECK_41, _CHECK_42, _CHECK_43 = "check 4.1 (network)", "check 4.2 (hand_gradients)", \
    "check 4.3 (train)"


def _networks(rng: np.random.Generator | None, batches: bool = False) -> dict[str, Any]:
    """The cases of 4.2, or with ``batches`` of 4.1 (the weights, and a batch of 5 inputs): in a
    notebook (``rng`` None) the lesson's network and random 2-2-2, 3-4-3 and 2-5-3 ones; in the
    grader a random 2-2-2 network and three of random sizes (inputs 2-4, hidden 2-5, outputs
    2-4)."""
    lesson = rng is None
    draw = np.random.default_rng(44) if rng is None else rng
    sizes: list[tuple[int, ...]]
    cases: list[dict[str, Any]]
    if lesson:
        sizes = [(2, 2, 2), (3, 4, 3), (2, 5, 3)]
        cases = [{"name": _LESSONS_NETWORK, **{k: np.copy(v) for k, v in NETWORK.items()}}]
    else:
        sizes = [(2, 2, 2)] + [tuple(int(n) for n in draw.integers((2, 2, 2), (5, 6, 5)))
                               for _ in range(3)]
        cases = []
    for n_in, n_hidden, n_out in sizes:
        cases.append({"name": f"a random {n_in}-{n_hidden}-{n_out} network",
                      "x": draw.normal(size=n_in), "t": int(draw.integers(n_out)),
                      "W1": np.round(draw.uniform(-1, 1, size=(n_hidden, n_in)), 2),
                      "b1": np.round(draw.uniform(-0.5, 0.5, size=n_hidden), 2),
                      "W2": np.round(draw.uniform(-1, 1, size=(n_out, n_hidden)), 2),
                      "b2": np.round(draw.uniform(-0.5, 0.5, size=n_out), 2)})
    if batches:
        draw = np.random.default_rng(41) if lesson else draw
        cases = [{"name": net["name"], **{k: net[k] for k in _WEIGHTS},
                  "batch": draw.normal(size=(5, net["W1"].shape[1]))} for net in cases]
    return {"cases": cases}


def _each_case(name: str, run_one: Callable[[dict[str, Any], Any, dict[str, Any]], None]
               ) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """The run of 4.1 or 4.2: refuse minigrad's own ``name``, then fill each case's result
    with ``run_one(case, the student's function, result)`` (see checks.run_cases)."""
    def run(probes: dict[str, Any], student: Any) -> dict[str, Any]:
        require_student(student, name)
        return run_cases(probes["cases"], lambda k, case, result: run_one(case, student, result))
    return run


def _run_network(net: dict[str, Any], network: Any, result: dict[str, Any]) -> None:
    """4.1, one case: the model's logits on the batch, how many parameters it has and which of
    them backward reached."""
    check, case = _CHECK_41, net["name"]
    given = {k: np.array(net[k], dtype=np.float64) for k in _WEIGHTS}
    with student_code(f"{check}, case '{case}'", "network(W1, b1, W2, b2)"):
        try:
            model = network(given["W1"], given["b1"], given["W2"], given["b2"])
        except RuntimeError as e:
            if "size mismatch" not in str(e):
                raise
            raise mismatch(check, case, "layers sized like the given weights",
                           f"RuntimeError: {e}", "read the layer sizes off the weights: "
                           "nn.Linear(W1.shape[1], W1.shape[0]), nn.Linear(W2.shape[1], "
                           "W2.shape[0])") from e
    if not isinstance(model, nn.Module):
        raise mismatch(check, case, "a minigrad.nn.Module (e.g. nn.Sequential(...))",
                       type(model).__name__, "build the model from minigrad.nn layers and "
                       "return it")
    with student_code(f"{check}, case '{case}', forward of a batch of 5", "your model"):
        out = model(Tensor(np.array(net["batch"], dtype=np.float64)))
    with student_code(f"{check}, case '{case}'", "model.parameters()"):
        params = list(model.parameters())
    shared = [k for p in params for k, v in given.items() if np.shares_memory(p.data, v)]
    if shared:
        raise mismatch(check, case, f"the model's parameters to be copies of {shared[0]}",
                       f"a parameter that shares memory with {shared[0]}", "load the values "
                       "with load_state_dict (which copies) or copy them (W.copy()); otherwise "
                       "training the model would change the arrays you passed in")
    result["logits"] = sent(out.data) if isinstance(out, Tensor) else described(out)
    reached: list[bool] | str = "no Tensor to call backward on"
    if isinstance(out, Tensor):
        try:   # logits of a wrong shape fail here: the judge says why, from the logits
            F.cross_entropy(out, np.zeros(len(net["batch"]), dtype=np.int64)).backward()
            reached = [p.grad is not None for p in params]
        except Exception as e:  # noqa: BLE001 - reported by the judge, after the logits
            reached = f"{type(e).__name__}: {e}"
    result.update(parameters=len(params), reached=reached)


def _run_gradients(net: dict[str, Any], hand_gradients: Any, result: dict[str, Any]) -> None:
    """4.2, one case: the student's gradients, or what was returned instead of a dict."""
    x, W1, b1, W2, b2 = (np.array(net[k], dtype=np.float64) for k in ("x", *_WEIGHTS))
    with student_code(f"{_CHECK_42}, case '{net['name']}'", "hand_gradients"):
        got = hand_gradients(x, net["t"], W1, b1, W2, b2)
    if not isinstance(got, dict):
        result["not a dict"] = described(got)
        return
    gradients = {k: got[k] for k in _WEIGHTS if k in got}
    result["keys"] = sorted(str(k) for k in got)
    result["gradients"] = {k: sent(g.data if isinstance(g, Tensor) else g)
                           for k, g in gradients.items()}


def _train_probe(rng: np.random.Generator | None) -> dict[str, Any]:
    """4.3: the data, the number of steps, the learning rate and the model's starting weights:
    in a notebook 6 steps of a 2-4-3 network on 12 points, lr=0.5; in the grader 4-8 steps of
    a random (2-3)-(3-6)-(2-4) network on 8-16 points."""
    lesson, draw = rng is None, np.random.default_rng(43) if rng is None else rng
    n_points, n_in, n_hidden, n_out, steps = (12, 2, 4, 3, 6) if lesson else (
        int(n) for n in draw.integers((8, 2, 3, 2, 4), (17, 4, 7, 5, 9)))
    lr = 0.5 if lesson else round(float(draw.uniform(0.1, 0.8)), 2)
    X, y = draw.normal(size=(n_points, n_in)), draw.integers(0, n_out, size=n_points)
    model = nn.Sequential(nn.Linear(n_in, n_hidden, rng=draw), nn.ReLU(),
                          nn.Linear(n_hidden, n_out, rng=draw))
    return {"X": X, "y": y, "steps": steps, "lr": lr, "lesson": lesson,
            "start": {k: np.array(v, dtype=np.float64) for k, v in model.state_dict().items()},
            "case": f"{steps} steps of a {n_in}-{n_hidden}-{n_out} network on {n_points} "
                    f"points, lr={lr}"}


def _train_run(probes: dict[str, Any], train: Callable[..., Any]) -> dict[str, Any]:
    """4.3: train the model from the probes' weights with the student's loop; send back the
    losses (a Tensor is not taken for its number: keeping one is the mistake), the final
    parameters, and the data as the loop left it."""
    def loss_sent(loss: Any) -> float | dict[str, str]:
        try:
            if not isinstance(loss, Tensor):
                return float(np.asarray(loss, dtype=np.float64).reshape(()))
        except (TypeError, ValueError):
            pass
        return described(loss)

    require_student(train, "train")
    start = {k: np.array(v, dtype=np.float64) for k, v in probes["start"].items()}
    (n_hidden, n_in), (n_out, _) = start["0.weight"].shape, start["2.weight"].shape
    model = nn.Sequential(nn.Linear(n_in, n_hidden, seed=0), nn.ReLU(),
                          nn.Linear(n_hidden, n_out, seed=0))
    model.load_state_dict(start)
    X, y = np.array(probes["X"], dtype=np.float64), np.array(probes["y"], dtype=np.int64)
    with student_code(f"{_CHECK_43}, case '{probes['case']}'", "train"):
        losses = train(model, X, y, int(probes["steps"]), float(probes["lr"]))
    return {"losses": [loss_sent(v) for v in losses] if isinstance(losses, (list, tuple))
            else described(losses),
            "parameters": {k: sent(v) for k, v in model.state_dict().items()}, "X": X, "y": y}


@exercise("4.1", split=Split(lambda rng: _networks(rng, batches=True),
                             _each_case("network", _run_network),
                             judged("lesson4", "_network_judge"),
                             self_reported="the model is a minigrad.nn.Module, its parameters "
                                           "share no memory with the weights passed in, and "
                                           "backward reaches each of them"))
def network(network: Callable[..., Any]) -> None:
    """Check 4.1: the student's ``network(W1, b1, W2, b2)`` returns a ``minigrad.nn.Module``
    (Linear, Sigmoid, Linear) computing the logits ``sigmoid(x @ W1.T + b1) @ W2.T + b2``."""


@exercise("4.2", split=Split(_networks, _each_case("hand_gradients", _run_gradients),
                             judged("lesson4", "_gradients_judge")))
def hand_gradients(hand_gradients: Callable[..., Any]) -> None:
    """Check 4.2: the student's ``hand_gradients(x, t, W1, b1, W2, b2)`` returns the engine's
    gradients of the cross-entropy loss: ``{"W1": ..., "b1": ..., "W2": ..., "b2": ...}``."""


@exercise("4.3", split=Split(_train_probe, _train_run, judged("lesson4", "_train_judge")))
def train_loop(train: Callable[..., Any]) -> None:
    """Check 4.3: the student's ``train(model, X, y, steps, lr)`` (SGD, ``F.cross_entropy``,
    full batch), returning every step's loss, gives the hand-built loop's losses and final
    parameters to 1e-10 (a 2-4-3 network on 12 points; in the grader, of random sizes)."""


#: What is in :mod:`minigrad.course.checks.judges.lesson4` (found here too, in a notebook).
_JUDGED = frozenset({"_LOOP_MISTAKES", "_RULES", "_byhand_run", "_close", "_engine_gradients",
                     "_fmt", "_hand_variants", "_logits", "_network_cause", "_sigmoid",
                     "_train_cause"})
__getattr__ = judges_names(__name__, _JUDGED)
