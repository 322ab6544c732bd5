"""The judges of lesson 3's checks (:mod:`minigrad.course.checks.lesson3`, which holds the
probes, the runs and the helpers both sides use): they compute the expected values and compare.

What they read came from the student's process in the grader, so its form is checked as it is
read (``judged_cases`` and ``value_at`` of :mod:`minigrad.course.checks`, then :func:`_numbers`
or :func:`_texts`): anything malformed is a CheckFailed that says where, never a crash.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable

import numpy as np

from minigrad.course.checks import judged_cases, malformed, mismatch, place, value_at
from minigrad.course.checks.lesson3 import (  # what the judges share with the runs
    _CHECK_31, _CHECK_32, _CHECK_33, _CHECK_34, _CHECK_35, _LAYERS, _fmt, _join, _numbers_text,
    _order_label, _parameter_cases)


def _numbers(outputs: Any, check: str, *path: str | int) -> np.ndarray:
    """``outputs[path...]`` as an array of numbers (its dtype kept)."""
    value = value_at(outputs, check, *path)
    if isinstance(value, (np.ndarray, np.generic, list, int, float)) and \
            not isinstance(value, bool):
        with contextlib.suppress(TypeError, ValueError):   # a ragged list is malformed
            array = np.asarray(value)
            if array.dtype.kind in "iuf":
                return array
    malformed(check, place(path), "an array of numbers", value)


def _numbers_or_none(outputs: Any, check: str, *path: str | int) -> np.ndarray | None:
    """``outputs[path...]`` as an array of numbers, or None (a gradient that never came)."""
    return None if value_at(outputs, check, *path) is None else _numbers(outputs, check, *path)


def _shape_sent(outputs: Any, check: str, *path: str | int) -> tuple[int, ...]:
    """``outputs[path...]`` as a shape: a list of whole numbers."""
    value = _numbers(outputs, check, *path)
    if value.ndim != 1 or (value.size and value.dtype.kind not in "iu"):
        malformed(check, place(path), "a shape (a list of whole numbers)", value)
    return tuple(int(n) for n in value)


def _texts(outputs: Any, check: str, *path: str | int) -> list[str]:
    """``outputs[path...]`` as a list of strings (the names or paths a run found)."""
    value = value_at(outputs, check, *path)
    if not isinstance(value, list) or not all(isinstance(text, str) for text in value):
        malformed(check, place(path), "a list of strings", value)
    return value


def _differs(got: np.ndarray | None, want: np.ndarray, atol: float | None = None) -> bool:
    """Whether ``got`` is None, or not ``want`` (exactly, or within ``atol``)."""
    return got is None or got.shape != want.shape or not (
        np.array_equal(got, want) if atol is None else np.allclose(got, want, atol=atol))


def _parameter_judge(probes: dict[str, Any], outputs: Any) -> str:
    """3.1, judge: each Parameter kept the values, shape and dtype it was given."""
    check = _CHECK_31
    for item, result in judged_cases(check, _parameter_cases(probes.get("seed")), outputs):
        expected, got = np.asarray(item["data"]), _numbers(result, check, "data")
        if _differs(got, expected):
            raise mismatch(check, item["case"], f"values {_fmt(expected)}", _fmt(got),
                           "keep the data you are given (no copying into another shape)")
        if got.dtype != expected.dtype:
            raise mismatch(check, item["case"], f"dtype {expected.dtype} kept",
                           f"dtype {got.dtype}",
                           "do not convert the data; Tensor keeps the dtype it is given")
    return ("check 3.1: Parameter(data) is a leaf Tensor with requires_grad=True that keeps "
            "its values, shape and dtype (array, list and number inputs).")


_CAUSES_32 = {
    "attributes": "look at every attribute of the module (vars(self).values()) and keep the "
                  "values that are Parameters",
    "nested": "parameters() only collects the Parameters stored directly on the module: when "
              "an attribute holds a Module, add that module's parameters() too (recursion)",
    "containers": "parameters() does not look inside lists, tuples or dicts: when an attribute "
                  "holds one, go through its items (a dict's values) the same way as through "
                  "attributes",
}


def _tree_parameters(node: dict[str, Any], path: str = "") -> list[tuple[str, tuple[int, ...]]]:
    """The expected answer: (path, shape) of every Parameter in a tree, each once."""
    (kind, value), = node.items()
    if kind == "param":
        return [(path, tuple(value))]
    children = (value.items() if kind in ("module", "dict") else
                enumerate(value) if kind in ("list", "tuple") else ())  # else nothing to train
    return [found for key, child in children
            for found in _tree_parameters(child, _join(path, key))]


def _parameters_judge(probes: dict[str, Any], outputs: Any) -> str:
    """3.2, judge: every Parameter of each tree found exactly once, and nothing else."""
    check = _CHECK_32
    for item, result in judged_cases(check, probes["cases"], outputs):
        case, shapes = item["case"], dict(_tree_parameters(item["tree"]))

        def names(paths: list[str]) -> str:
            return ", ".join(f"{p} {shapes[p]}" for p in paths)

        if value_at(result, check, "found") is None:
            raise mismatch(check, case, "a list of parameters", "None",
                           "return the list you built (the return statement is missing)")
        paths, others = _texts(result, check, "found"), _texts(result, check, "not parameters")
        if others:
            raise mismatch(check, case, "only Parameters", others[0],
                           "keep only values with isinstance(value, Parameter): constant "
                           "Tensors, numbers and strings are not trained")
        seen, dup = set[str](), list[str]()
        for path in paths:     # one pass: the list came from the sandbox, of any length
            if path in shapes and path in seen:
                dup.append(path)
            seen.add(path)
        if dup:
            raise mismatch(check, case, f"each parameter once: {names(list(shapes))}",
                           f"{names(dup)} more than once",
                           "a parameter reachable by two paths (a module shared by two "
                           "attributes, tied weights) must be returned once, or SGD would update "
                           "it twice per step. Skip a parameter you already have (compare with "
                           "`is`, or keep a set of id(p)).")
        missing = [path for path in shapes if path not in paths]
        extra = [path for path in paths if path not in shapes]
        if missing or extra:
            listed = names(list(shapes)) or "none"
            raise mismatch(check, case, f"{len(shapes)} parameters: {listed}",
                           f"{len(paths)} found"
                           + (f"; missing {names(missing)}" if missing else "")
                           + (f"; not in this module: {len(extra)}" if extra else ""),
                           _CAUSES_32[item["cause"]])
        again = [] if value_at(result, check, "again") is None else _texts(result, check, "again")
        if sorted(again) != sorted(paths):
            raise mismatch(check, case + " (called twice)", f"{len(paths)} parameters again",
                           f"{len(again)}", "parameters() must start from scratch on every call: "
                           "build a new list inside the method, not on the class")
    return ("check 3.2: parameters() finds every Parameter exactly once: directly on a "
            "module, in nested Modules, in lists, tuples and dicts, three levels deep, and when a "
            "module or weight is shared; it skips numbers, strings and constant Tensors.")


def _linear_shapes(check: str, n_in: int, n_out: int, shapes: dict[str, tuple[int, ...]]) -> None:
    """Fail unless a Linear(n_in, n_out) has a weight (out, in) and a bias (out,)."""
    for name, shape in (("weight", (n_out, n_in)), ("bias", (n_out,))):
        if shapes[name] != shape:
            cause = ("the weight is stored transposed: PyTorch keeps it as "
                     "(out_features, in_features) and computes x @ W.T + b"
                     if name == "weight" and shapes[name] == shape[::-1] else
                     f"{name} has one value per output feature" if name == "bias" else
                     "the weight has one row per output and one column per input")
            raise mismatch(check, f"Linear(in_features={n_in}, out_features={n_out}).{name}",
                           f"shape {shape}", f"shape {shapes[name]}", cause)


def _linear_init_judge(check: str, probes: dict[str, Any], outputs: Any) -> None:
    """3.3: the shapes and the initialisation of two layers made from the same seed."""
    n_in, n_out = probes["init"]["in"], probes["init"]["out"]
    w, bias, again = (_numbers(outputs, check, name) for name in ("weight", "bias", "weight again"))
    _linear_shapes(check, n_in, n_out, {"weight": w.shape, "bias": bias.shape})
    if np.all(w == w.flat[0]):
        raise mismatch(check, "initial weight", "different random values",
                       f"all equal to {w.flat[0]}", "equal weights make every output unit learn "
                       "the same thing; draw them with rng.uniform(-k, k, size=...)")
    if np.all(w == w[:1]):
        raise mismatch(check, f"initial weight of Linear({n_in}, {n_out})",
                       "a different row for each output unit",
                       f"{n_out} equal rows {_fmt(w[0])}", "rows that start equal get equal "
                       f"gradients and stay equal: the {n_out} output units would compute the same "
                       "thing forever. Draw the whole (out, in) matrix at once: rng.uniform(-k, k, "
                       "size=(out_features, in_features))")
    bound, largest = 1 / np.sqrt(n_in), max(np.abs(w).max(), np.abs(bias).max())
    if largest > bound:
        raise mismatch(check, f"initial values of Linear({n_in}, {n_out})",
                       f"every value in [-{bound:g}, {bound:g}] (k = 1/sqrt(in_features))",
                       f"largest |value| {largest:.4f}", "use PyTorch's default: "
                       "rng.uniform(-k, k, size) with k = 1/sqrt(in_features)")
    if _differs(again, w):
        raise mismatch(check, f"two layers from default_rng({probes['init']['seed']})",
                       "the same weights", "different weights", "draw the random numbers from "
                       "the rng you are given (np.random.default_rng(rng)), not from np.random "
                       "directly")


def _linear_forward_judge(check: str, probes: dict[str, Any], outputs: Any) -> None:
    """3.3: the forward values, with the probe's weights put into a layer of their size."""
    W, b, x = (np.asarray(probes[k], dtype=float) for k in ("W", "b", "x"))
    _linear_shapes(check, W.shape[1], W.shape[0], {
        name: _shape_sent(outputs, check, "shapes", name) for name in ("weight", "bias")})
    expected, y = x @ W.T + b, _numbers(outputs, check, "y")
    if y.shape != expected.shape:
        raise mismatch(check, f"forward of a batch of {len(x)} inputs with {W.shape[1]} features",
                       f"shape {expected.shape}", f"shape {y.shape}",
                       f"y = x @ W.T + b: {x.shape} @ {W.T.shape} -> {expected.shape}")
    if not np.allclose(y, expected, atol=1e-12):
        no_bias = np.allclose(y, x @ W.T, atol=1e-12)
        raise mismatch(check, f"forward with W = {_numbers_text(W)}, b = {_numbers_text(b)}",
                       _fmt(expected), _fmt(y), "the bias is not added" if no_bias else
                       "compute x @ self.weight.T + self.bias")
    one = _numbers(outputs, check, "one")
    if _differs(one, expected[:1], atol=1e-12):
        raise mismatch(check, "forward of a batch of one", _fmt(expected[:1]), _fmt(one),
                       "the layer must work for any batch size N: (N, in) -> (N, out)")


_LINEAR_CAUSES = {
    "weight": "the weight must take part in the forward as a Tensor (self.weight, not "
              "self.weight.data)",
    "bias": "the bias must be added as a Tensor (self.bias, not self.bias.data), or its "
            "gradient never arrives",
    "input x": "the input must flow through Tensor operations (x @ ...), not x.data, or the "
               "layers below this one get no gradient"}


def _linear_gradients_judge(check: str, probes: dict[str, Any], outputs: Any) -> None:
    """3.3: the gradients, against the hand formulas and finite differences of the student's
    own forward."""
    W, x, G = (np.asarray(probes[k], dtype=float) for k in ("W", "x", "G"))
    hand = {"weight": G.T @ x, "bias": G.sum(axis=0), "input x": G @ W}
    grads: dict[str, np.ndarray] = {}
    for name in hand:
        g = _numbers_or_none(outputs, check, "grads", name)
        if g is None:
            raise mismatch(check, f"gradient of {name} after backward", _fmt(hand[name]),
                           "None (no gradient arrived)", _LINEAR_CAUSES[name])
        if _differs(g, hand[name], atol=1e-10):
            raise mismatch(check, f"gradient of {name} for loss = sum(y * G), G = {_fmt(G)}",
                           f"{_fmt(hand[name])} (by hand)", _fmt(g), _LINEAR_CAUSES[name])
        grads[name] = g
    for name in ("weight", "bias"):
        numeric = _numbers(outputs, check, "numeric", name)
        if numeric.shape != hand[name].shape or not np.allclose(grads[name], numeric, atol=1e-6):
            raise mismatch(check, f"gradient of {name} against finite differences",
                           _fmt(numeric), _fmt(grads[name]), _LINEAR_CAUSES[name])


def _linear_judge(probes: dict[str, Any], outputs: Any) -> str:
    """3.3, judge: shapes and initialisation, forward values, gradients by hand and by finite
    differences."""
    for judge in (_linear_init_judge, _linear_forward_judge, _linear_gradients_judge):
        judge(_CHECK_33, probes, outputs)
    return ("check 3.3: weight (out, in) and bias (out,) are Parameters drawn from "
            "U(-1/sqrt(in), 1/sqrt(in)) with the given rng; the forward x @ W.T + b matches "
            f"NumPy for batches of {len(probes['x'])} and 1; the gradients of weight, bias and "
            "input match the hand formulas G.T @ x, G.sum(0), G @ W and finite differences.")


def _gradient(check: str, got: np.ndarray | None, want: np.ndarray, case: str, cause: str) -> None:
    """Fail unless the gradient ``got`` is exactly ``want``."""
    if _differs(got, want):
        raise mismatch(check, case, _numbers_text(want), "None" if got is None else _fmt(got),
                       cause)


def _relu_sequential_judge(probes: dict[str, Any], outputs: Any) -> str:
    """3.4, judge: ReLU's values and gradient, each order of layers, the gradient through."""
    check = _CHECK_34
    x, y = np.asarray(probes["relu x"], dtype=float), _numbers(outputs, check, "relu")
    if _differs(y, np.maximum(x, 0)):
        raise mismatch(check, f"ReLU forward of {_numbers_text(np.ravel(x))}",
                       _fmt(np.maximum(x, 0)), _fmt(y),
                       "ReLU keeps positive values and sets the others to 0")
    xs, upstream = (np.asarray(probes[k], dtype=float) for k in ("grad x", "upstream"))
    _gradient(check, _numbers_or_none(outputs, check, "relu grad"), upstream * (xs > 0),
              f"ReLU gradient at {_numbers_text(np.ravel(xs))} with upstream "
              f"{_numbers_text(np.ravel(upstream))}",
              "use the engine's relu on the Tensor, so that its backward rule is recorded")
    tensors = _texts(outputs, check, "relu tensors")
    if tensors:
        raise mismatch(check, "ReLU's attributes", "no tensors (ReLU has nothing to learn)",
                       ", ".join(tensors), "ReLU needs no weights; its forward is just x.relu()")
    v, orders = np.asarray(probes["v"], dtype=float), probes["orders"]
    for order, result in judged_cases(check, orders, outputs):
        want = v
        for name in order:
            want = _LAYERS[name][0](want)
        got = _numbers(result, check, "y")
        if got.shape != want.shape or not np.allclose(got, want):
            raise mismatch(check, f"Sequential({_order_label(order)}) on {_fmt(v)}", _fmt(want),
                           _fmt(got), "apply the layers one after another in the order given, "
                           "each to the previous layer's output: for layer in self.layers: "
                           "x = layer(x)")
    through = np.asarray(probes["through x"], dtype=float)
    _gradient(check, _numbers_or_none(outputs, check, "through grad"), 2.0 * (through > 0),
              f"gradient through Sequential(ReLU(), double) at {_numbers_text(np.ravel(through))}",
              "Sequential must pass the Tensors along unchanged (no .data), so that the graph "
              "connects the layers")
    return ("check 3.4: ReLU's forward and gradient are right and it holds no tensors; "
            f"Sequential applies its layers in order ({len(orders)} orders tried), keeps them "
            "where parameters() can find them, and lets gradients flow through.")


#: What a wrong w after one step of SGD usually means, tried in order: (w0, lr, g) -> w.
_SGD_CAUSES: tuple[tuple[Callable[..., Any], str], ...] = (
    (lambda w0, lr, g: w0 + lr * g,
     "wrong sign: the gradient points uphill; step against it, p - lr * grad"),
    (lambda w0, lr, g: w0 - g, "the learning rate is missing: p - lr * grad, with lr = self.lr"),
    (lambda w0, lr, g: w0, "the parameter did not change: rebinding a name (p = p - ...) "
                           "changes nothing; write into p.data"))


def _sgd_judge(probes: dict[str, Any], outputs: Any) -> str:
    """3.5, judge: p - lr * grad after one step, twice after two, nothing for a parameter
    without a gradient, and gradients cleared by zero_grad()."""
    check = _CHECK_35
    w0, b0, gw, gb, frozen0 = (np.asarray(probes[k], dtype=float)
                               for k in ("w", "b", "gw", "gb", "frozen"))
    for lr, result in judged_cases(check, probes["lrs"], outputs):
        case = f"one step with lr={lr}, w = {_fmt(w0)}, grad = {_fmt(gw)}"
        got_w, got_b, got_frozen = (_numbers(result, check, name) for name in ("w", "b", "frozen"))
        if _differs(got_w, w0 - lr * gw, atol=1e-12):
            cause = "update p.data with an array of the parameter's own shape"
            if got_w.shape == w0.shape:
                cause = next((c for wrong, c in _SGD_CAUSES
                              if np.allclose(got_w, wrong(w0, lr, gw))),
                             "the update is p <- p - lr * p.grad for every parameter")
            raise mismatch(check, case, f"w = {_fmt(w0 - lr * gw)}", f"w = {_fmt(got_w)}", cause)
        if _differs(got_b, b0 - lr * gb, atol=1e-12):
            raise mismatch(check, case, f"b = {_fmt(b0 - lr * gb)}", f"b = {_fmt(got_b)}",
                           "every parameter in the list must be updated, not only the first")
        if _differs(got_frozen, frozen0):
            raise mismatch(check, "a parameter whose grad is None", f"unchanged {_fmt(frozen0)}",
                           _fmt(got_frozen), "skip parameters whose .grad is None")
    lr, twice = probes["lr twice"], _numbers(outputs, check, "twice")
    if _differs(twice, w0 - 2 * lr * gw, atol=1e-12):
        cause = ("the optimizer kept the generator it was given; a generator runs once, so the "
                 "second step updated nothing. Store list(params)."
                 if twice.shape == w0.shape and np.allclose(twice, w0 - lr * gw) else
                 "each step must start from the current values of the parameters")
        raise mismatch(check, f"two steps with lr={lr}, parameters given as a generator",
                       f"w = {_fmt(w0 - 2 * lr * gw)}", f"w = {_fmt(twice)}", cause)
    for name in ("w", "b"):
        grad = _numbers_or_none(outputs, check, "zero_grad", name)
        if grad is not None and np.any(grad != 0):
            raise mismatch(check, "zero_grad()", f"{name}.grad None (or zeros)", _fmt(grad),
                           "set p.grad = None for every parameter")
    return (f"check 3.5: step() gives p - lr * grad for lr = {probes['lrs'][0]} and "
            f"{probes['lrs'][1]} (hand numbers), updates the same Parameter objects in place, "
            "skips parameters without a gradient, records nothing into a graph, works twice on "
            "parameters given as a generator; zero_grad() clears the gradients.")
