"""Checks for lesson 4, "Train with your engine and check it".

The student builds the 2-2-2 network with :mod:`minigrad.nn`, derives its gradients by hand
(in NumPy, from the chain rule), and writes the training loop. Each check runs the student's
function on the lesson's network and on other, random networks (so that numbers copied from
the lesson's table do not pass), and compares with two references: the engine
(:mod:`minigrad.nn`, :mod:`minigrad.functional`) and the hand-built layers of
:mod:`minigrad.course.byhand`. On failure the message names the case, expected vs got, and the
mistake that usually causes it.

Every check is split in three (see :class:`minigrad.course.checks.Split`): ``probe`` makes the
networks and data (the lesson's own in a notebook, fresh random ones of random sizes in the
grader), ``run`` calls the student's function on them and sends back what came out (logits,
gradients, losses, final parameters) as plain data, and ``judge`` computes the expected values
from the probes and names the mistake. Only what can be seen inside the student's process alone
(an object's type, memory shared with an input) is decided by ``run``.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from minigrad import Tensor
from minigrad.course import byhand
from minigrad import functional as F
from minigrad import nn
from minigrad.course.checks import (Split, described, exercise, exercises, judged, judged_cases,
                                    judges_names, malformed, mismatch, received_or_type,
                                    require_student, run_cases, sent, student_code, type_sent,
                                    value_at)

__all__ = ["EXERCISES", "NETWORK", "network", "hand_gradients", "train_loop"]

EXERCISES = exercises(4)  # titles and points: the course's table, exercises.json

# The judges are in checks/judges/lesson4.py, which the grader's sandbox does not hold;
# these names import them when first called (see checks.judged).
_gradients_judge = judged("lesson4", "_gradients_judge")
_network_judge = judged("lesson4", "_network_judge")
_train_judge = judged("lesson4", "_train_judge")

#: The lesson's 2-2-2 network: one input ``x`` of class ``t`` and its fixed decimal weights.
NETWORK: dict[str, Any] = {
    "x": np.array([1.0, -0.5]),
    "t": 1,
    "W1": np.array([[0.5, -0.3], [0.2, 0.8]]),
    "b1": np.array([0.1, -0.2]),
    "W2": np.array([[0.7, -0.4], [-0.6, 0.5]]),
    "b2": np.array([0.05, -0.05]),
}

_WEIGHTS = ("W1", "b1", "W2", "b2")
_LESSONS_NETWORK = "the lesson's 2-2-2 network"
_CHECK_41, _CHECK_42, _CHECK_43 = ("check 4.1 (network)", "check 4.2 (hand_gradients)",
                                   "check 4.3 (train)")


# ---------------------------------------------------------------------------------------------
# Helpers



# ---------------------------------------------------------------------------------------------
# The networks of checks 4.1 and 4.2


def _random_network(rng: np.random.Generator, n_in: int, n_hidden: int, n_out: int
                    ) -> dict[str, Any]:
    return {"x": rng.normal(size=n_in), "t": int(rng.integers(n_out)),
            "W1": np.round(rng.uniform(-1, 1, size=(n_hidden, n_in)), 2),
            "b1": np.round(rng.uniform(-0.5, 0.5, size=n_hidden), 2),
            "W2": np.round(rng.uniform(-1, 1, size=(n_out, n_hidden)), 2),
            "b2": np.round(rng.uniform(-0.5, 0.5, size=n_out), 2)}


def _networks(rng: np.random.Generator | None) -> list[dict[str, Any]]:
    """The cases of 4.1 and 4.2, each a network with a name: in a notebook (``rng`` None) the
    lesson's 2-2-2 network and random 2-2-2, 3-4-3 and 2-5-3 ones; in the grader a random
    2-2-2 network and three of random sizes (inputs 2-4, hidden 2-5, outputs 2-4)."""
    if rng is None:
        rng = np.random.default_rng(44)
        sizes: list[tuple[int, ...]] = [(2, 2, 2), (3, 4, 3), (2, 5, 3)]
        cases = [{"name": _LESSONS_NETWORK,
                  **{k: np.copy(np.asarray(v)) for k, v in NETWORK.items()}}]
    else:
        sizes = [(2, 2, 2)] + [tuple(int(n) for n in rng.integers((2, 2, 2), (5, 6, 5)))
                               for _ in range(3)]
        cases = []
    for n_in, n_hidden, n_out in sizes:
        cases.append({"name": f"a random {n_in}-{n_hidden}-{n_out} network",
                      **_random_network(rng, n_in, n_hidden, n_out)})
    return cases



# ---------------------------------------------------------------------------------------------
# 4.1 The network with minigrad.nn


def _network_probe(rng: np.random.Generator | None) -> dict[str, Any]:
    """4.1: the networks' weights, and a batch of 5 inputs for each."""
    batches = np.random.default_rng(41) if rng is None else rng
    cases = []
    for case in _networks(rng):
        cases.append({"name": case["name"], **{k: case[k] for k in _WEIGHTS},
                      "batch": batches.normal(size=(5, np.shape(case["W1"])[1]))})
    return {"cases": cases}


def _network_run(probes: dict[str, Any], network: Callable[..., Any]) -> dict[str, Any]:
    """4.1, run: build each model, return its logits on the batch, how many parameters it has
    and which of them backward reached. Whether it is a ``Module`` and whether its parameters
    share memory with the weights passed in is seen only here."""
    require_student(network, "network")
    return run_cases(probes["cases"], lambda k, net, result: _run_network(net, network, result))


def _run_network(net: dict[str, Any], network: Callable[..., Any], result: dict[str, Any]
                 ) -> None:
    """4.1, run, one case: what came out goes into ``result``."""
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
                       type(model).__name__,
                       "build the model from minigrad.nn layers and return it")
    batch = np.array(net["batch"], dtype=np.float64)
    with student_code(f"{check}, case '{case}', forward of a batch of 5", "your model"):
        out = model(Tensor(batch))
    with student_code(f"{check}, case '{case}'", "model.parameters()"):
        params = list(model.parameters())
    for p in params:
        for k, v in given.items():
            if np.shares_memory(p.data, v):
                raise mismatch(check, case, f"the model's parameters to be copies of {k}",
                               f"a parameter that shares memory with {k}",
                               "load the values with load_state_dict (which copies) or copy them "
                               "(W.copy()); otherwise training the model would change the arrays "
                               "you passed in")
    logits = sent(out.data) if isinstance(out, Tensor) else described(out)
    reached: list[bool] | str = "no Tensor to call backward on"
    if isinstance(out, Tensor):
        try:   # logits of a wrong shape fail here: the judge says why, from the logits
            F.cross_entropy(out, np.zeros(len(batch), dtype=np.int64)).backward()
            reached = [p.grad is not None for p in params]
        except Exception as e:  # noqa: BLE001 - reported by the judge, after the logits
            reached = f"{type(e).__name__}: {e}"
    result.update(logits=logits, parameters=len(params), reached=reached)



@exercise("4.1", split=Split(_network_probe, _network_run, _network_judge,
                             self_reported="the model is a minigrad.nn.Module, its parameters "
                                           "share no memory with the weights passed in, and "
                                           "backward reaches each of them"))
def network(network: Callable[..., Any]) -> None:
    """Check 4.1: ``network(W1, b1, W2, b2)`` returns Linear, Sigmoid, Linear with those weights.

    Parameters
    ----------
    network : callable
        The student's function; returns a ``minigrad.nn.Module`` computing the logits
        ``sigmoid(x @ W1.T + b1) @ W2.T + b2`` of a batch ``x``.
    """


# ---------------------------------------------------------------------------------------------
# 4.2 Hand-derived gradients



def _gradients_probe(rng: np.random.Generator | None) -> dict[str, Any]:
    """4.2: the networks, each with one input ``x`` and its class ``t``."""
    return {"cases": _networks(rng)}


def _gradients_run(probes: dict[str, Any], hand_gradients: Callable[..., Any]
                   ) -> dict[str, Any]:
    """4.2, run: the student's gradients of each network, or what was returned instead."""
    require_student(hand_gradients, "hand_gradients")
    return run_cases(probes["cases"],
                     lambda k, net, result: _run_gradients(net, hand_gradients, result))


def _run_gradients(net: dict[str, Any], hand_gradients: Callable[..., Any],
                   result: dict[str, Any]) -> None:
    """4.2, run, one case: what came out goes into ``result``."""
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



@exercise("4.2", split=Split(_gradients_probe, _gradients_run, _gradients_judge))
def hand_gradients(hand_gradients: Callable[..., Any]) -> None:
    """Check 4.2: the chain rule in NumPy gives the engine's gradients.

    Parameters
    ----------
    hand_gradients : callable
        The student's ``hand_gradients(x, t, W1, b1, W2, b2)``, returning a dict with the
        gradients of the cross-entropy loss: ``{"W1": ..., "b1": ..., "W2": ..., "b2": ...}``.
    """


# ---------------------------------------------------------------------------------------------
# 4.3 The training loop



def _train_probe(rng: np.random.Generator | None) -> dict[str, Any]:
    """4.3: the data, the number of steps, the learning rate and the model's starting weights
    (Linear, ReLU, Linear). In a notebook: 6 steps of a 2-4-3 network on 12 points, lr=0.5; in
    the grader: 4-8 steps of a random (2-3)-(3-6)-(2-4) network on 8-16 points."""
    lesson = rng is None
    if rng is None:
        rng = np.random.default_rng(43)
        n_points, n_in, n_hidden, n_out, steps, lr = 12, 2, 4, 3, 6, 0.5
    else:
        n_points, n_in, n_hidden, n_out, steps = (int(n) for n in rng.integers(
            (8, 2, 3, 2, 4), (17, 4, 7, 5, 9)))
        lr = round(float(rng.uniform(0.1, 0.8)), 2)
    X = rng.normal(size=(n_points, n_in))
    y = rng.integers(0, n_out, size=n_points)
    model = nn.Sequential(nn.Linear(n_in, n_hidden, rng=rng), nn.ReLU(),
                          nn.Linear(n_hidden, n_out, rng=rng))
    start = {k: np.array(v, dtype=np.float64) for k, v in model.state_dict().items()}
    return {"X": X, "y": y, "steps": steps, "lr": lr, "start": start, "lesson": lesson}


def _train_case(probes: dict[str, Any]) -> str:
    (n_hidden, n_in), (n_out, _) = probes["start"]["0.weight"].shape, \
        probes["start"]["2.weight"].shape
    return (f"{probes['steps']} steps of a {n_in}-{n_hidden}-{n_out} network on "
            f"{len(probes['y'])} points, lr={probes['lr']}")


def _loss_sent(loss: Any) -> float | dict[str, str]:
    """One loss as ``run`` sends it: a number, or what :func:`~minigrad.course.checks.described`
    says of it (a Tensor is not taken for its number: keeping it is the mistake)."""
    if not isinstance(loss, Tensor):
        try:
            return float(np.asarray(loss, dtype=np.float64).reshape(()))
        except (TypeError, ValueError):
            pass
    return described(loss)


def _train_run(probes: dict[str, Any], train: Callable[..., Any]) -> dict[str, Any]:
    """4.3, run: train the model from the probes' weights with the student's loop; return the
    losses, the final parameters, and the data as the loop left it."""
    require_student(train, "train")
    start = {k: np.array(v, dtype=np.float64) for k, v in probes["start"].items()}
    (n_hidden, n_in), (n_out, _) = start["0.weight"].shape, start["2.weight"].shape
    model = nn.Sequential(nn.Linear(n_in, n_hidden, seed=0), nn.ReLU(),
                          nn.Linear(n_hidden, n_out, seed=0))
    model.load_state_dict(start)
    X, y = np.array(probes["X"], dtype=np.float64), np.array(probes["y"], dtype=np.int64)
    with student_code(f"{_CHECK_43}, case '{_train_case(probes)}'", "train"):
        losses = train(model, X, y, int(probes["steps"]), float(probes["lr"]))
    return {"losses": [_loss_sent(v) for v in losses] if isinstance(losses, (list, tuple))
            else described(losses),
            "parameters": {k: sent(v) for k, v in model.state_dict().items()},
            "X": X, "y": y}



@exercise("4.3", split=Split(_train_probe, _train_run, _train_judge))
def train_loop(train: Callable[..., Any]) -> None:
    """Check 4.3: ``train(model, X, y, steps, lr)`` equals the hand-built loop step for step.

    A 2-4-3 network and 12 labelled points (in the grader: a network and data of random sizes);
    the student's loop (with ``minigrad.optim.SGD`` and ``F.cross_entropy``, full batch) must
    give the hand-built loop's losses and final parameters to 1e-10.

    Parameters
    ----------
    train : callable
        The student's ``train(model, X, y, steps, lr)``, returning the list of the losses
        (floats) of every step.
    """


#: What moved to :mod:`minigrad.course.checks.judges.lesson4` (found here too, in a notebook).
_JUDGED = frozenset({
    '_CAUSES', '_LOOP_MISTAKES', '_RULES', '_and', '_byhand_run', '_close',
    '_engine_gradients', '_fmt', '_hand_variants', '_logits', '_network_cause',
    '_sigmoid', '_size', '_train_cause'})


__getattr__ = judges_names(__name__, _JUDGED)
