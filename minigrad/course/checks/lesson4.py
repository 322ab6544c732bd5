"""Checks for lesson 4, "Train with your engine and check it".

The student builds the 2-2-2 network with :mod:`minigrad.nn`, derives its gradients by hand
(in NumPy, from the chain rule), and writes the training loop. Each check runs the student's
function on the lesson's network and on other, random networks (so that numbers copied from
the lesson's table do not pass), and compares with two references: the engine
(:mod:`minigrad.nn`, :mod:`minigrad.functional`) and the hand-built layers of
:mod:`minigrad.course.byhand`. On failure the message names the case, expected vs got, and the
mistake that usually causes it.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from minigrad import Tensor
from minigrad.course import byhand
from minigrad import functional as F
from minigrad import nn
from minigrad.course.checks import CheckFailed, exercise, passed, require_student, student_code

__all__ = ["EXERCISES", "NETWORK", "network", "hand_gradients", "train_loop"]

EXERCISES = {
    "4.1": {"title": "The 2-2-2 network with minigrad.nn", "points": 2},
    "4.2": {"title": "Every gradient of the 2-2-2 network by hand", "points": 3},
    "4.3": {"title": "The training loop", "points": 3},
}

#: The lesson's 2-2-2 network: one input ``x`` of class ``t`` and its fixed decimal weights.
NETWORK = {
    "x": np.array([1.0, -0.5]),
    "t": 1,
    "W1": np.array([[0.5, -0.3], [0.2, 0.8]]),
    "b1": np.array([0.1, -0.2]),
    "W2": np.array([[0.7, -0.4], [-0.6, 0.5]]),
    "b2": np.array([0.05, -0.05]),
}


# ---------------------------------------------------------------------------------------------
# Helpers


def _fail(check: str, case: str, expected: Any, got: Any, cause: str) -> CheckFailed:
    return CheckFailed(
        f"{check}, case '{case}':\n"
        f"  expected: {expected}\n"
        f"  got:      {got}\n"
        f"  usual cause: {cause}")


def _fmt(a: Any) -> str:
    return np.array2string(np.asarray(a, dtype=float), precision=6, suppress_small=True,
                           separator=", ").replace("\n", "")


def _array(x: Any) -> np.ndarray:
    return np.asarray(x.data if isinstance(x, Tensor) else x, dtype=float)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _random_network(rng: np.random.Generator, n_in: int, n_hidden: int, n_out: int
                    ) -> dict[str, Any]:
    return {"x": rng.normal(size=n_in), "t": int(rng.integers(n_out)),
            "W1": np.round(rng.uniform(-1, 1, size=(n_hidden, n_in)), 2),
            "b1": np.round(rng.uniform(-0.5, 0.5, size=n_hidden), 2),
            "W2": np.round(rng.uniform(-1, 1, size=(n_out, n_hidden)), 2),
            "b2": np.round(rng.uniform(-0.5, 0.5, size=n_out), 2)}


def _cases() -> list[tuple[str, dict[str, Any]]]:
    rng = np.random.default_rng(44)
    return [("the lesson's 2-2-2 network", {k: np.copy(v) for k, v in NETWORK.items()}),
            ("a random 2-2-2 network", _random_network(rng, 2, 2, 2)),
            ("a random 3-4-3 network", _random_network(rng, 3, 4, 3)),
            ("a random 2-5-3 network", _random_network(rng, 2, 5, 3))]


def _logits(net: dict[str, Any], x: np.ndarray, act: Callable = _sigmoid) -> np.ndarray:
    return act(x @ net["W1"].T + net["b1"]) @ net["W2"].T + net["b2"]


def _engine_gradients(net: dict[str, Any]) -> dict[str, np.ndarray]:
    """The reference: the engine's gradients of the cross-entropy of one input."""
    W1, b1, W2, b2 = (Tensor(net[k], requires_grad=True) for k in ("W1", "b1", "W2", "b2"))
    x = Tensor(net["x"][None, :])
    logits = (x @ W1.T + b1).sigmoid() @ W2.T + b2
    F.cross_entropy(logits, np.array([net["t"]])).backward()
    return {"W1": W1.grad, "b1": b1.grad, "W2": W2.grad, "b2": b2.grad}


def _hand_variants(net: dict[str, Any]) -> dict[str, dict[str, np.ndarray]]:
    """Gradients computed with the usual mistakes, to name the cause of a wrong answer."""
    x, t, W1, b1, W2, b2 = (net[k] for k in ("x", "t", "W1", "b1", "W2", "b2"))
    z1 = W1 @ x + b1
    h = _sigmoid(z1)
    z2 = W2 @ h + b2
    p = np.exp(z2 - z2.max())
    p /= p.sum()
    onehot = np.eye(len(b2))[t]
    out = {}

    def grads(d2: np.ndarray, d1: np.ndarray, transposed: bool = False) -> dict[str, np.ndarray]:
        if transposed:
            return {"W2": np.outer(h, d2), "b2": d2, "W1": np.outer(x, d1), "b1": d1}
        return {"W2": np.outer(d2, h), "b2": d2, "W1": np.outer(d1, x), "b1": d1}

    d2 = p - onehot
    out["right"] = grads(d2, (W2.T @ d2) * h * (1 - h))
    out["sign"] = grads(-d2, -(W2.T @ d2) * h * (1 - h))
    out["transposed"] = grads(d2, (W2.T @ d2) * h * (1 - h), transposed=True)
    out["no sigmoid derivative"] = grads(d2, W2.T @ d2)
    out["derivative at z1"] = grads(d2, (W2.T @ d2) * z1 * (1 - z1))
    twice = _sigmoid(h)  # the sigmoid applied to its own output
    out["sigmoid derivative of z1 as exp"] = grads(d2, (W2.T @ d2) * twice * (1 - twice))
    if W2.shape[0] == W2.shape[1]:
        out["W2 not transposed"] = grads(d2, (W2 @ d2) * h * (1 - h))
    out["softmax forgotten"] = grads(z2 - onehot, (W2.T @ (z2 - onehot)) * h * (1 - h))
    return out


_CAUSES = {
    "sign": "the sign is flipped: dL/dz2 = p - onehot(t) (the probabilities minus the target), "
            "not onehot - p",
    "transposed": "each weight gradient has its weight's shape (out, in): dW2 = outer(delta2, h) "
                  "and dW1 = outer(delta1, x), not outer(h, delta2)",
    "no sigmoid derivative": "the sigmoid's derivative is missing: delta1 = (W2.T @ delta2) * "
                             "h * (1 - h)",
    "derivative at z1": "the sigmoid's derivative is h * (1 - h) with h = sigmoid(z1), not "
                        "z1 * (1 - z1)",
    "sigmoid derivative of z1 as exp": "the sigmoid's derivative is h * (1 - h) with h the "
                                       "sigmoid's output; do not apply the sigmoid again",
    "W2 not transposed": "the gradient goes back through W2 transposed: dL/dh = W2.T @ delta2 "
                         "(each hidden unit collects from every output it feeds)",
    "softmax forgotten": "dL/dz2 = softmax(z2) - onehot(t): use the probabilities p, not the "
                         "logits z2",
}


# ---------------------------------------------------------------------------------------------
# 4.1 The network with minigrad.nn


@exercise("4.1")
def network(network: Callable[..., Any]) -> None:
    """Check 4.1: ``network(W1, b1, W2, b2)`` returns Linear, Sigmoid, Linear with those weights.

    Parameters
    ----------
    network : callable
        The student's function; returns a ``minigrad.nn.Module`` computing the logits
        ``sigmoid(x @ W1.T + b1) @ W2.T + b2`` of a batch ``x``.
    """
    check = "check 4.1 (network)"
    require_student(network, "network")
    rng = np.random.default_rng(41)
    for case, net in _cases():
        given = {k: np.copy(net[k]) for k in ("W1", "b1", "W2", "b2")}
        with student_code(f"{check}, case '{case}'", "network(W1, b1, W2, b2)"):
            try:
                model = network(given["W1"], given["b1"], given["W2"], given["b2"])
            except RuntimeError as e:
                if "size mismatch" not in str(e):
                    raise
                raise _fail(check, case, "layers sized like the given weights",
                            f"RuntimeError: {e}", "read the layer sizes off the weights: "
                            "nn.Linear(W1.shape[1], W1.shape[0]), nn.Linear(W2.shape[1], "
                            "W2.shape[0])") from e
        if not isinstance(model, nn.Module):
            raise _fail(check, case, "a minigrad.nn.Module (e.g. nn.Sequential(...))",
                        type(model).__name__, "build the model from minigrad.nn layers and "
                        "return it")
        n_in = net["W1"].shape[1]
        x = rng.normal(size=(5, n_in))
        with student_code(f"{check}, case '{case}', forward of a batch of 5", "your model"):
            out = model(Tensor(x))
        expected = _logits(net, x)
        got = _array(out) if isinstance(out, Tensor) else None
        if got is None or got.shape != expected.shape or not np.allclose(got, expected,
                                                                         atol=1e-12):
            cause = "the model is Linear(W1, b1), Sigmoid, Linear(W2, b2), and returns logits"
            if got is not None and got.shape == expected.shape:
                relu = _logits(net, x, act=lambda z: np.maximum(z, 0))
                linear = _logits(net, x, act=lambda z: z)
                soft = np.exp(expected) / np.exp(expected).sum(axis=1, keepdims=True)
                if np.allclose(got, relu):
                    cause = "the hidden activation of this network is nn.Sigmoid(), not ReLU"
                elif np.allclose(got, linear):
                    cause = "nn.Sigmoid() is missing between the two Linear layers"
                elif np.allclose(got, soft):
                    cause = ("return the logits: the softmax belongs to the loss "
                             "(F.cross_entropy), not to the model")
                elif np.allclose(got, _logits(net, x), atol=1e-3):
                    cause = ("close but not equal: the layers must hold exactly the given "
                             "weights (load them; don't keep the random initial values)")
                else:
                    cause = ("load W1, b1, W2, b2 as they are (nn.Linear keeps its weight as "
                             "(out, in), like W1 and W2), e.g. with model.load_state_dict({"
                             "'0.weight': W1, '0.bias': b1, '2.weight': W2, '2.bias': b2})")
            elif got is not None:
                cause = ("read the layer sizes off the weights: nn.Linear(W1.shape[1], "
                         "W1.shape[0]) and nn.Linear(W2.shape[1], W2.shape[0])")
            raise _fail(check, f"{case}: logits of 5 inputs", _fmt(expected),
                        _fmt(got) if got is not None else type(out).__name__, cause)
        params = list(model.parameters())
        if len(params) != 4:
            raise _fail(check, case, "4 parameters (two weights, two biases)",
                        f"{len(params)}", "use nn.Linear layers with bias=True; they hold the "
                        "weights as Parameters")
        for p in params:
            for k, v in given.items():
                if np.shares_memory(p.data, v):
                    raise _fail(check, case, f"the model's parameters to be copies of {k}",
                                f"a parameter that shares memory with {k}",
                                "load the values with load_state_dict (which copies) or "
                                "copy them (W.copy()); otherwise training the model would "
                                "change the arrays you passed in")
        F.cross_entropy(out, np.zeros(5, dtype=np.int64)).backward()
        if any(p.grad is None for p in params):
            raise _fail(check, case, "a gradient on every parameter after backward",
                        "a parameter without gradient", "the forward pass must go through the "
                        "layers' Parameters")
    passed("check 4.1: network(W1, b1, W2, b2) returns a minigrad.nn model whose logits equal "
           "sigmoid(x @ W1.T + b1) @ W2.T + b2 for the lesson's network and three random "
           "ones (sizes read off the weights), with copies of the weights as its four "
           "parameters, all reached by backward.")


# ---------------------------------------------------------------------------------------------
# 4.2 Hand-derived gradients


@exercise("4.2")
def hand_gradients(hand_gradients: Callable[..., Any]) -> None:
    """Check 4.2: the chain rule in NumPy gives the engine's gradients.

    Parameters
    ----------
    hand_gradients : callable
        The student's ``hand_gradients(x, t, W1, b1, W2, b2)``, returning a dict with the
        gradients of the cross-entropy loss: ``{"W1": ..., "b1": ..., "W2": ..., "b2": ...}``.
    """
    check = "check 4.2 (hand_gradients)"
    require_student(hand_gradients, "hand_gradients")
    for case, net in _cases():
        args = [np.copy(net[k]) if k != "t" else net[k]
                for k in ("x", "t", "W1", "b1", "W2", "b2")]
        with student_code(f"{check}, case '{case}'", "hand_gradients"):
            got = hand_gradients(*args)
        if not isinstance(got, dict) or set(got) != {"W1", "b1", "W2", "b2"}:
            raise _fail(check, case, "a dict with keys 'W1', 'b1', 'W2', 'b2'",
                        sorted(got) if isinstance(got, dict) else type(got).__name__,
                        "return {'W1': dW1, 'b1': db1, 'W2': dW2, 'b2': db2}")
        engine = _engine_gradients(net)
        variants = _hand_variants(net)
        for name in ("b2", "W2", "b1", "W1"):  # in the order the chain rule computes them
            want = np.asarray(engine[name])
            try:
                value = _array(got[name])
            except (TypeError, ValueError):
                raise _fail(check, f"{case}, dL/d{name}", f"an array of shape {want.shape}",
                            type(got[name]).__name__, "return NumPy arrays") from None
            if value.shape == want.shape and np.allclose(value, want, rtol=1e-9, atol=1e-12):
                continue
            cause = None
            for variant, cause_text in _CAUSES.items():
                v = variants.get(variant)
                if v is not None and v[name].shape == value.shape \
                        and np.allclose(v[name], value, atol=1e-9):
                    cause = cause_text
                    break
            if cause is None:
                cause = {"b2": "delta2 = dL/dz2 = p - onehot(t), with p = softmax(z2)",
                         "W2": "dW2 = outer(delta2, h): dL/dW2[i, j] = delta2[i] * h[j]",
                         "b1": "delta1 = dL/dz1 = (W2.T @ delta2) * h * (1 - h)",
                         "W1": "dW1 = outer(delta1, x): dL/dW1[i, j] = delta1[i] * x[j]"}[name]
            if value.shape != want.shape:
                got_text = f"shape {value.shape}"
                expected = f"shape {want.shape}, like {name}"
            else:
                got_text, expected = _fmt(value), f"{_fmt(want)} (the engine)"
            raise _fail(check, f"{case}, dL/d{name}", expected, got_text, cause)
    passed("check 4.2: your chain rule gives the engine's dL/dW1, dL/db1, dL/dW2, dL/db2 "
           "(to 1e-9) for the lesson's 2-2-2 network and for random 2-2-2, 3-4-3 and 2-5-3 "
           "networks with random targets.")


# ---------------------------------------------------------------------------------------------
# 4.3 The training loop


def _byhand_run(state: dict[str, np.ndarray], X: np.ndarray, y: np.ndarray, steps: int,
                lr: float, variant: str = "right") -> tuple[list[float], dict[str, np.ndarray]]:
    """The reference training loop with the hand-built layers, or one of the usual mistakes."""
    mlp = byhand.MLP([byhand.Linear(2, 4), byhand.ReLU(), byhand.Linear(4, 3)])
    for i, layer in ((0, mlp.layers[0]), (2, mlp.layers[2])):
        layer.W, layer.b = state[f"{i}.weight"].copy(), state[f"{i}.bias"].copy()
    loss_fn = byhand.SoftmaxCrossEntropy()
    total = {id(p): np.zeros_like(p) for p, _ in mlp.params()}
    previous: list[tuple[np.ndarray, np.ndarray]] | None = None
    losses = []
    for _ in range(steps):
        if variant == "step before backward" and previous is not None:
            for p, g in previous:
                p -= lr * g
        loss = loss_fn.forward(mlp.forward(X), y)
        mlp.backward(loss_fn.backward())
        grads = [(p, dp.copy()) for p, dp in mlp.params()]
        if variant == "no zero_grad":
            for p, dp in grads:
                total[id(p)] += dp
            grads = [(p, total[id(p)].copy()) for p, _ in grads]
        if variant == "step before backward":
            previous = grads
        else:
            scale = 1.0 if variant != "no lr" else 1.0 / lr
            for p, g in grads:
                p -= lr * scale * g
        losses.append(loss)
    final = {}
    for i in (0, 2):
        final[f"{i}.weight"], final[f"{i}.bias"] = mlp.layers[i].W, mlp.layers[i].b
    return losses, final


@exercise("4.3")
def train_loop(train: Callable[..., Any]) -> None:
    """Check 4.3: ``train(model, X, y, steps, lr)`` equals the hand-built loop step for step.

    A 2-4-3 network and 12 labelled points; the student's loop (with ``minigrad.optim.SGD``
    and ``F.cross_entropy``, full batch) must give the hand-built loop's losses and final
    parameters to 1e-10.

    Parameters
    ----------
    train : callable
        The student's ``train(model, X, y, steps, lr)``, returning the list of the losses
        (floats) of every step.
    """
    check = "check 4.3 (train)"
    require_student(train, "train")
    rng = np.random.default_rng(43)
    X = rng.normal(size=(12, 2))
    y = rng.integers(0, 3, size=12)
    steps, lr = 6, 0.5
    model = nn.Sequential(nn.Linear(2, 4, rng=rng), nn.ReLU(), nn.Linear(4, 3, rng=rng))
    start = {k: np.copy(v) for k, v in model.state_dict().items()}
    X_given, y_given = X.copy(), y.copy()
    case = f"{steps} steps of a 2-4-3 network on 12 points, lr={lr}"
    with student_code(f"{check}, case '{case}'", "train"):
        losses = train(model, X_given, y_given, steps, lr)
    want_losses, want_params = _byhand_run(start, X, y, steps, lr)
    if not isinstance(losses, (list, tuple)):
        raise _fail(check, case, f"a list of {steps} losses", type(losses).__name__,
                    "append each step's loss.item() to a list and return it")
    if any(isinstance(v, Tensor) for v in losses):
        raise _fail(check, case, "the losses as Python floats", "Tensors",
                    "append loss.item(): a kept loss Tensor keeps its whole graph (every "
                    "step's activations) in memory")
    if len(losses) != steps:
        raise _fail(check, case, f"{steps} losses (one per step)", f"{len(losses)}",
                    "run exactly `steps` steps and record the loss of each")
    if not np.array_equal(X_given, X) or not np.array_equal(y_given, y):
        raise _fail(check, case, "X and y unchanged", "changed", "do not modify the data")
    got_params = {k: np.asarray(v) for k, v in model.state_dict().items()}
    same_losses = np.allclose(losses, want_losses, rtol=1e-10, atol=1e-12)
    same_params = all(np.allclose(got_params[k], want_params[k], rtol=1e-10, atol=1e-12)
                      for k in want_params)
    if same_losses and same_params:
        passed(f"check 4.3: your loop's {steps} losses and final parameters equal the hand-built "
               "loop's (minigrad.course.byhand) to 1e-10: zero_grad, forward, cross-entropy, backward "
               "and the SGD step, in that order.")
        return
    cause = ("each step is: opt.zero_grad(), logits = model(X), loss = F.cross_entropy(logits, "
             "y), loss.backward(), opt.step(); with opt = SGD(model.parameters(), lr=lr) made "
             "once, before the loop")
    for variant, text in (
            ("no zero_grad", "the gradients accumulate from step to step: call opt.zero_grad() "
                             "before each backward pass"),
            ("step before backward", "opt.step() runs before loss.backward(), so each step "
                                     "uses the previous step's gradient"),
            ("no lr", "the learning rate is not used: SGD(model.parameters(), lr=lr)")):
        v_losses, v_params = _byhand_run(start, X, y, steps, lr, variant)
        if np.allclose(losses, v_losses, rtol=1e-8) and all(
                np.allclose(got_params[k], v_params[k], rtol=1e-8) for k in v_params):
            cause = text
            break
    else:
        got0 = float(losses[0]) if losses else float("nan")
        if np.isclose(got0, want_losses[0] * len(y), rtol=1e-8):
            cause = (f"your first loss is {len(y)} times the right one: the loss is summed over "
                     f"the {len(y)} points instead of averaged. Use F.cross_entropy(logits, y) "
                     "as it is (it is the mean); the summed loss also makes every step "
                     f"{len(y)} times too large")
        elif float(losses[-1]) > got0 and want_losses[-1] < want_losses[0]:
            cause = (f"your loss rises (from {got0:.4f} to {float(losses[-1]):.4f}) where it "
                     "should fall: the parameters move up the gradient (gradient ascent). Call "
                     "backward() on the loss itself, not on -loss, and let SGD subtract "
                     "lr * grad with the positive lr you are given")
        elif all(np.allclose(got_params[k], start[k]) for k in start):
            cause = ("the parameters did not change: call opt.step() after loss.backward(), "
                     "with an optimizer made from model.parameters()")
    if not same_losses:
        k = int(np.argmax(~np.isclose(losses, want_losses, rtol=1e-10, atol=1e-12)))
        raise _fail(check, case + f", the loss of step {k + 1} of {steps}",
                    f"loss {want_losses[k]:.10f} (the hand-built "
                    "loop)", f"loss {float(losses[k]):.10f}", cause)
    raise _fail(check, case, "the hand-built loop's final parameters",
                "different parameters (the losses agree)", cause)
