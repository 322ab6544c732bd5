"""The judges of lesson 4's checks (:mod:`minigrad.course.checks.lesson4` holds the probes and
the runs): the expected values (NumPy's forward pass, the engine's gradients, the hand-built
loop of :mod:`minigrad.course.byhand`), compared with what came back, and the usual causes."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from minigrad import Tensor
from minigrad import functional as F
from minigrad.course import byhand
from minigrad.course.checks import (judged_cases, malformed, mismatch, received_or_type,
                                    type_sent, value_at)
from minigrad.course.checks.lesson4 import (  # what the judges share with the runs
    _CHECK_41, _CHECK_42, _CHECK_43, _LESSONS_NETWORK, _WEIGHTS)


def _fmt(a: Any) -> str:
    return np.array2string(np.asarray(a, dtype=float), precision=6, suppress_small=True,
                           separator=", ").replace("\n", "")


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _close(got: np.ndarray | None, want: Any, rtol: float = 1e-5, atol: float = 1e-8) -> bool:
    """Same shape and values within tolerance (``got`` None, or of another shape: False)."""
    return got is not None and got.shape == np.shape(want) and \
        bool(np.allclose(got, want, rtol=rtol, atol=atol))


def _logits(net: dict[str, Any], x: np.ndarray, act: Callable[..., Any] = _sigmoid) -> np.ndarray:
    return act(x @ net["W1"].T + net["b1"]) @ net["W2"].T + net["b2"]


def _network_cause(net: dict[str, Any], x: np.ndarray, got: np.ndarray | None) -> str:
    """What usually makes a model return the logits ``got``: the first mistake whose logits
    they are."""
    expected = _logits(net, x)
    if got is None:
        return "the model is Linear(W1, b1), Sigmoid, Linear(W2, b2), and returns logits"
    if got.shape != expected.shape:
        return ("read the layer sizes off the weights: nn.Linear(W1.shape[1], W1.shape[0]) "
                "and nn.Linear(W2.shape[1], W2.shape[0])")
    mistakes = [
        (_logits(net, x, act=lambda z: np.maximum(z, 0)), 1e-8,
         "the hidden activation of this network is nn.Sigmoid(), not ReLU"),
        (_logits(net, x, act=lambda z: z), 1e-8,
         "nn.Sigmoid() is missing between the two Linear layers"),
        (np.exp(expected) / np.exp(expected).sum(axis=1, keepdims=True), 1e-8,
         "return the logits: the softmax belongs to the loss (F.cross_entropy), not to the model"),
        (expected, 1e-3, "close but not equal: the layers must hold exactly the given weights "
                         "(load them; don't keep the random initial values)")]
    return next((cause for logits, atol, cause in mistakes
                 if np.allclose(got, logits, atol=atol)),
                "load W1, b1, W2, b2 as they are (nn.Linear keeps its weight as (out, in), like "
                "W1 and W2), e.g. with model.load_state_dict({'0.weight': W1, '0.bias': b1, "
                "'2.weight': W2, '2.bias': b2})")


def _network_judge(probes: dict[str, Any], outputs: Any) -> str:
    """4.1: the logits against NumPy's forward pass; four parameters, all reached by backward."""
    check, cases = _CHECK_41, probes["cases"]
    for net, result in judged_cases(check, cases, outputs):
        case, expected = net["name"], _logits(net, net["batch"])
        got, instead = received_or_type(value_at(result, check, "logits"))
        if not _close(got, expected, atol=1e-12):
            raise mismatch(check, f"{case}: logits of 5 inputs", _fmt(expected),
                           _fmt(got) if got is not None else instead,
                           _network_cause(net, net["batch"], got))
        n, reached = value_at(result, check, "parameters"), value_at(result, check, "reached")
        if not isinstance(n, int) or isinstance(n, bool):
            malformed(check, "a case's 'parameters'", "the number of parameters, an int", n)
        if n != 4:
            raise mismatch(check, case, "4 parameters (two weights, two biases)", f"{n}",
                           "use nn.Linear layers with bias=True; they hold the weights as "
                           "Parameters")
        through = "the forward pass must go through the layers' Parameters"
        if isinstance(reached, str):
            raise mismatch(check, case, "loss.backward() to run through your model", reached,
                           through)
        if not isinstance(reached, list) or len(reached) != n or \
                not all(isinstance(r, bool) for r in reached):
            malformed(check, "a case's 'reached'",
                      f"{n} booleans (each parameter reached by backward)", reached)
        if not all(reached):
            raise mismatch(check, case, "a gradient on every parameter after backward",
                           "a parameter without gradient", through)
    which = ("the lesson's network and three random ones" if cases[0]["name"] == _LESSONS_NETWORK
             else f"{len(cases)} random networks of random sizes")
    return (f"check 4.1: network(W1, b1, W2, b2) returns a minigrad.nn model whose logits equal "
            f"sigmoid(x @ W1.T + b1) @ W2.T + b2 for {which} (sizes read off the weights), with "
            "copies of the weights as its four parameters, all reached by backward.")


def _engine_gradients(net: dict[str, Any]) -> dict[str, Any]:
    """The reference: the engine's gradients of the cross-entropy of one input."""
    W1, b1, W2, b2 = (Tensor(net[k], requires_grad=True) for k in _WEIGHTS)
    logits = (Tensor(net["x"][None, :]) @ W1.T + b1).sigmoid() @ W2.T + b2
    F.cross_entropy(logits, np.array([net["t"]])).backward()
    return {"W1": W1.grad, "b1": b1.grad, "W2": W2.grad, "b2": b2.grad}


def _hand_variants(net: dict[str, Any]) -> list[tuple[str, dict[str, np.ndarray]]]:
    """The gradients of the usual mistakes, each with its cause, in the order they are tried."""
    x, t, W1, b1, W2, b2 = (net[k] for k in ("x", "t", *_WEIGHTS))
    z1 = W1 @ x + b1
    h = _sigmoid(z1)
    z2 = W2 @ h + b2
    p = np.exp(z2 - z2.max())
    p /= p.sum()
    onehot = np.eye(len(b2))[t]
    d2, twice = p - onehot, _sigmoid(h)  # twice: the sigmoid applied to its own output

    def grads(d2: np.ndarray, d1: np.ndarray, transposed: bool = False) -> dict[str, np.ndarray]:
        if transposed:
            return {"W2": np.outer(h, d2), "b2": d2, "W1": np.outer(x, d1), "b1": d1}
        return {"W2": np.outer(d2, h), "b2": d2, "W1": np.outer(d1, x), "b1": d1}

    square = W2.shape[0] == W2.shape[1]
    return [
        ("the sign is flipped: dL/dz2 = p - onehot(t) (the probabilities minus the target), not "
         "onehot - p", grads(-d2, -(W2.T @ d2) * h * (1 - h))),
        ("each weight gradient has its weight's shape (out, in): dW2 = outer(delta2, h) and dW1 "
         "= outer(delta1, x), not outer(h, delta2)", grads(d2, (W2.T @ d2) * h * (1 - h), True)),
        ("the sigmoid's derivative is missing: delta1 = (W2.T @ delta2) * h * (1 - h)",
         grads(d2, W2.T @ d2)),
        ("the sigmoid's derivative is h * (1 - h) with h = sigmoid(z1), not z1 * (1 - z1)",
         grads(d2, (W2.T @ d2) * z1 * (1 - z1))),
        ("the sigmoid's derivative is h * (1 - h) with h the sigmoid's output; do not apply the "
         "sigmoid again", grads(d2, (W2.T @ d2) * twice * (1 - twice))),
        *([("the gradient goes back through W2 transposed: dL/dh = W2.T @ delta2 (each hidden "
            "unit collects from every output it feeds)", grads(d2, (W2 @ d2) * h * (1 - h)))]
          if square else []),
        ("dL/dz2 = softmax(z2) - onehot(t): use the probabilities p, not the logits z2",
         grads(z2 - onehot, (W2.T @ (z2 - onehot)) * h * (1 - h)))]


#: What each gradient is, when the answer matches none of the usual mistakes.
_RULES = {"b2": "delta2 = dL/dz2 = p - onehot(t), with p = softmax(z2)",
          "W2": "dW2 = outer(delta2, h): dL/dW2[i, j] = delta2[i] * h[j]",
          "b1": "delta1 = dL/dz1 = (W2.T @ delta2) * h * (1 - h)",
          "W1": "dW1 = outer(delta1, x): dL/dW1[i, j] = delta1[i] * x[j]"}


def _gradients_judge(probes: dict[str, Any], outputs: Any) -> str:
    """4.2: each gradient against the engine's; a wrong one against the usual mistakes."""
    check, cases = _CHECK_42, probes["cases"]
    for net, result in judged_cases(check, cases, outputs):
        case, keys = net["name"], result.get("keys")
        keys = keys if isinstance(keys, list) and all(isinstance(k, str) for k in keys) else None
        if keys != sorted(_WEIGHTS):
            raise mismatch(check, case, "a dict with keys 'W1', 'b1', 'W2', 'b2'",
                           keys if keys is not None else
                           type_sent(value_at(result, check, "not a dict")),
                           "return {'W1': dW1, 'b1': db1, 'W2': dW2, 'b2': db2}")
        gradients = value_at(result, check, "gradients")
        engine, variants = _engine_gradients(net), _hand_variants(net)
        for name in ("b2", "W2", "b1", "W1"):  # in the order the chain rule computes them
            want, what = np.asarray(engine[name]), f"{case}, dL/d{name}"
            grad, instead = received_or_type(value_at(gradients, check, name))
            if grad is None:
                raise mismatch(check, what, f"an array of shape {want.shape}", instead,
                               "return NumPy arrays")
            if _close(grad, want, rtol=1e-9, atol=1e-12):
                continue
            cause = next((text for text, variant in variants
                          if _close(grad, variant[name], atol=1e-9)), _RULES[name])
            if grad.shape != want.shape:
                raise mismatch(check, what, f"shape {want.shape}, like {name}",
                               f"shape {grad.shape}", cause)
            raise mismatch(check, what, f"{_fmt(want)} (the engine)", _fmt(grad), cause)
    sizes = [f"{n['W1'].shape[1]}-{n['W1'].shape[0]}-{n['W2'].shape[0]}" for n in cases[1:]]
    which = (f"the lesson's 2-2-2 network and for random {', '.join(sizes[:-1])} and "
             f"{sizes[-1]} networks" if cases[0]["name"] == _LESSONS_NETWORK
             else f"{len(cases)} random networks of random sizes")
    return ("check 4.2: your chain rule gives the engine's dL/dW1, dL/db1, dL/dW2, dL/db2 "
            f"(to 1e-9) for {which} with random targets.")


#: The mistakes :func:`_byhand_run` can make, and what each one's message says.
_LOOP_MISTAKES = {
    "no zero_grad": "the gradients accumulate from step to step: call opt.zero_grad() before "
                    "each backward pass",
    "step before backward": "opt.step() runs before loss.backward(), so each step uses the "
                            "previous step's gradient",
    "no lr": "the learning rate is not used: SGD(model.parameters(), lr=lr)",
}


def _byhand_run(state: dict[str, np.ndarray], X: np.ndarray, y: np.ndarray, steps: int,
                lr: float, variant: str = "") -> tuple[list[float], dict[str, np.ndarray]]:
    """The reference training loop with the hand-built layers, or one of _LOOP_MISTAKES: its
    losses and final parameters."""
    (n_hidden, n_in), (n_out, _) = state["0.weight"].shape, state["2.weight"].shape
    mlp = byhand.MLP([byhand.Linear(n_in, n_hidden), byhand.ReLU(),
                      byhand.Linear(n_hidden, n_out)])
    for k, v in mlp.state_dict().items():
        v[...] = state[k]
    loss_fn, losses = byhand.SoftmaxCrossEntropy(), []
    total = {id(p): np.zeros_like(p) for p, _ in mlp.params()}
    late: list[tuple[np.ndarray, np.ndarray]] = []   # the previous step's gradients
    for _ in range(steps):
        for p, g in late:
            p -= lr * g
        losses.append(loss_fn.forward(mlp.forward(X), y))
        mlp.backward(loss_fn.backward())
        grads = [(p, dp.copy()) for p, dp in mlp.params()]
        if variant == "no zero_grad":
            for p, dp in grads:
                total[id(p)] += dp
            grads = [(p, total[id(p)].copy()) for p, _ in grads]
        if variant == "step before backward":
            late = grads
            continue
        for p, g in grads:
            p -= (1.0 if variant == "no lr" else lr) * g
    return losses, mlp.state_dict()


def _train_cause(losses: np.ndarray, parameters: dict[str, np.ndarray | None],
                 probes: dict[str, Any], want_losses: list[float]) -> str:
    """What usually makes a loop give these losses and parameters instead of the right ones."""
    start, X, y, steps, lr = (probes[k] for k in ("start", "X", "y", "steps", "lr"))
    for variant, text in _LOOP_MISTAKES.items():
        v_losses, v_params = _byhand_run(start, X, y, steps, lr, variant)
        if _close(losses, np.array(v_losses), rtol=1e-8) and all(
                _close(parameters.get(k), v_params[k], rtol=1e-8) for k in v_params):
            return text
    first, last, n = float(losses[0]), float(losses[-1]), len(y)
    if np.isclose(first, want_losses[0] * n, rtol=1e-8):
        return (f"your first loss is {n} times the right one: the loss is summed over the {n} "
                f"points instead of averaged. Use F.cross_entropy(logits, y) as it is (it is the "
                f"mean); the summed loss also makes every step {n} times too large")
    if last > first and want_losses[-1] < want_losses[0]:
        return (f"your loss rises (from {first:.4f} to {last:.4f}) where it should fall: the "
                "parameters move up the gradient (gradient ascent). Call backward() on the "
                "loss itself, not on -loss, and let SGD subtract lr * grad with the positive lr "
                "you are given")
    if all(_close(parameters.get(k), start[k], rtol=1e-5) for k in start):
        return ("the parameters did not change: call opt.step() after loss.backward(), with "
                "an optimizer made from model.parameters()")
    return ("each step is: opt.zero_grad(), logits = model(X), loss = F.cross_entropy(logits, "
            "y), loss.backward(), opt.step(); with opt = SGD(model.parameters(), lr=lr) made "
            "once, before the loop")


def _train_judge(probes: dict[str, Any], outputs: Any) -> str:
    """4.3: the losses and final parameters against the hand-built loop's."""
    check, case = _CHECK_43, probes["case"]
    X, y, steps = probes["X"], probes["y"], probes["steps"]
    losses = value_at(outputs, check, "losses")
    if not isinstance(losses, list):
        raise mismatch(check, case, f"a list of {steps} losses", type_sent(losses),
                       "append each step's loss.item() to a list and return it")
    not_numbers = [v for v in losses if isinstance(v, bool) or not isinstance(v, (int, float))]
    if any(type_sent(v) == "Tensor" for v in not_numbers):
        raise mismatch(check, case, "the losses as Python floats", "Tensors",
                       "append loss.item(): a kept loss Tensor keeps its whole graph (every "
                       "step's activations) in memory")
    if not_numbers:
        raise mismatch(check, case, "the losses as Python floats", type_sent(not_numbers[0]),
                       "append each step's loss.item(), a Python float")
    if len(losses) != steps:
        raise mismatch(check, case, f"{steps} losses (one per step)", f"{len(losses)}",
                       "run exactly `steps` steps and record the loss of each")
    X_after, y_after = value_at(outputs, check, "X"), value_at(outputs, check, "y")
    if not (_close(received_or_type(X_after)[0], X, rtol=0.0, atol=0.0)
            and _close(received_or_type(y_after)[0], y, rtol=0.0, atol=0.0)):
        raise mismatch(check, case, "X and y unchanged", "changed", "do not modify the data")
    got_params = value_at(outputs, check, "parameters")
    if not isinstance(got_params, dict):
        malformed(check, "the values['parameters']", "the final parameters, a dict of arrays",
                  got_params)
    parameters = {k: received_or_type(got_params.get(k))[0] for k in probes["start"]}
    want_losses, want_params = _byhand_run(probes["start"], X, y, steps, probes["lr"])
    got_losses = np.array(losses, dtype=np.float64)
    same_losses = _close(got_losses, np.array(want_losses), rtol=1e-10, atol=1e-12)
    if same_losses and all(_close(parameters[k], want_params[k], rtol=1e-10, atol=1e-12)
                           for k in want_params):   # the ✓ line: the same whatever the seed
        which = f"{steps} losses" if probes["lesson"] else "losses at every step"
        return (f"check 4.3: your loop's {which} and final parameters equal the hand-built "
                "loop's (minigrad.course.byhand) to 1e-10: zero_grad, forward, cross-entropy, "
                "backward and the SGD step, in that order.")
    cause = _train_cause(got_losses, parameters, probes, want_losses)
    if not same_losses:
        k = int(np.argmax(~np.isclose(got_losses, want_losses, rtol=1e-10, atol=1e-12)))
        raise mismatch(check, case + f", the loss of step {k + 1} of {steps}",
                       f"loss {want_losses[k]:.10f} (the hand-built loop)",
                       f"loss {got_losses[k]:.10f}", cause)
    raise mismatch(check, case, "the hand-built loop's final parameters",
                   "different parameters (the losses agree)", cause)
