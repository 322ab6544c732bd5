"""Checks for lesson 2, "Matrix products, reductions and broadcasting".

The student writes ``matmul``, ``sum``, ``reshape``, ``transpose``, ``unbroadcast`` and a fused
``cross_entropy``, each (but ``unbroadcast``, which works on arrays) building one graph node
with :func:`minigrad.op`. A check runs the student's function on ``minigrad.Tensor`` inputs and
compares

* the forward value with NumPy (a forward pass that is wrong but consistent with its backward
  rule passes finite differences, so the value is always compared too);
* the gradient the node's VJP returns for a random output gradient, with the formula and with
  central finite differences of the student's own forward pass;
* the gradient's shape with the input's shape, naming the usual cause when they differ.

The other functions of the lesson are replaced by reference versions while a check runs
(:func:`minigrad.course.checks.with_globals`), so a mistake in ``sum`` cannot fail ``cross_entropy``.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from minigrad.broadcast import unbroadcast as _ref_unbroadcast
from minigrad.course.checks import (CheckFailed, assert_close, exercise, fail, numerical_vjp,
                                    passed, require_student, show, student_code, with_globals)
from minigrad.tensor import Tensor, op

__all__ = ["EXERCISES", "matmul", "sum", "reshape", "transpose", "unbroadcast",
           "cross_entropy"]

EXERCISES = {
    "2.1": {"title": "matmul: two VJPs read off from the shapes", "points": 2},
    "2.2": {"title": "sum: spreading the gradient back", "points": 2},
    "2.3": {"title": "reshape, undone", "points": 1},
    "2.4": {"title": "transpose, undone with the inverse permutation", "points": 1},
    "2.5": {"title": "unbroadcast: summing the copies away", "points": 2},
    "2.6": {"title": "cross_entropy, fused and stable", "points": 3},
}


# ---------------------------------------------------------------------------------------------
# Reference versions, swapped in for the student's other functions while a check runs


def _r_matmul(a: Tensor, b: Tensor) -> Tensor:
    return op(a.data @ b.data, (a, b), lambda g, x, w: (g @ w.T, x.T @ g),
              saved=(a.data, b.data), name="matmul")


def _r_sum(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    shape = x.shape

    def vjp(g: np.ndarray) -> np.ndarray:
        if axis is not None and not keepdims:
            g = np.expand_dims(g, axis)
        return np.broadcast_to(g, shape)
    return op(np.sum(x.data, axis=axis, keepdims=keepdims), (x,), vjp, name="sum")


def _r_reshape(x: Tensor, shape: Sequence[int]) -> Tensor:
    old = x.shape
    return op(np.reshape(x.data, shape), (x,), lambda g: np.reshape(g, old), name="reshape")


def _r_transpose(x: Tensor, axes: Sequence[int] | None = None) -> Tensor:
    axes = tuple(reversed(range(x.ndim))) if axes is None else tuple(axes)
    inverse = tuple(np.argsort(axes))
    return op(np.transpose(x.data, axes), (x,), lambda g: np.transpose(g, inverse),
              name="transpose")


def _log_softmax(z: np.ndarray) -> np.ndarray:
    s = z - z.max(axis=1, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=1, keepdims=True))


def _r_cross_entropy(logits: Tensor, targets: Any) -> Tensor:
    z, t = logits.data, np.asarray(targets)
    n = z.shape[0]
    log_p = _log_softmax(z)
    onehot = np.zeros_like(z)
    onehot[np.arange(n), t] = 1.0
    return op(-(log_p * onehot).sum() / n, (logits,),
              lambda g, log_p, onehot: g * (np.exp(log_p) - onehot) / n,
              saved=(log_p, onehot), name="cross_entropy")


_REFERENCES = {"matmul": _r_matmul, "sum": _r_sum, "reshape": _r_reshape,
               "transpose": _r_transpose, "unbroadcast": _ref_unbroadcast,
               "cross_entropy": _r_cross_entropy}


def _in_scaffold(fn: Callable, name: str) -> Callable:
    """The student's ``fn`` with the lesson's *other* functions replaced by references."""
    require_student(fn, name)
    env = {k: v for k, v in _REFERENCES.items() if k != name and k in fn.__globals__}
    return with_globals(fn, **env)


# ---------------------------------------------------------------------------------------------
# Running one node


def _node(fn: Callable, name: str, case: str, inputs: Sequence[Tensor], *args: Any) -> Tensor:
    """Call the student's function and check it returned a recorded minigrad node."""
    with student_code(case, f"your {name}"):
        out = fn(*inputs, *args)
    if not isinstance(out, Tensor):
        fail(case, f"{name} returned {type(out).__name__} {show(out)}; expected a minigrad "
                   "Tensor", "return the node that op(value, parents, vjp, ...) makes")
    vjp = out._vjp
    if vjp is None:
        fail(case, "the result is not part of a graph (it has no VJP)",
             "build the result with op(value, parents, vjp): the inputs as parents and your "
             "VJP closure")
    if getattr(vjp, "__module__", "").split(".")[0] == "minigrad":
        fail(case, f"the node was made by minigrad's own operation ({out._op}), not by a VJP "
                   "you wrote", "compute the value on arrays (.data) and pass your own vjp to "
                                "op(...); do not call the Tensor's built-in operations")
    parents = out._parents
    if len(parents) != len(inputs) or any(p is not t for p, t in zip(parents, inputs)):
        fail(case, f"the node's parents are {len(parents)} tensors, not the {len(inputs)} "
                   "input(s) themselves", "pass the input tensors as parents: op(value, (a, b), "
                                          "vjp) for two inputs, op(value, (x,), vjp) for one")
    return out


def _vjp(out: Tensor, g: np.ndarray, case: str, name: str, cause: str | None = None) -> tuple:
    """The gradients the node's VJP returns for output gradient ``g`` (always a tuple).

    ``cause`` is added to the message when the VJP raises a shape error.
    """
    try:
        with student_code(case, f"the VJP of your {name}"):
            grads = out._vjp(np.array(g, copy=True), *out._saved)
    except CheckFailed as e:
        if cause and isinstance(e.__cause__, (ValueError, IndexError)):
            raise CheckFailed(f"{e}\n  usual cause: {cause}") from e.__cause__
        raise
    if not isinstance(grads, tuple):
        grads = (grads,)
    if len(grads) != len(out._parents):
        fail(case, f"the VJP returned {len(grads)} gradients for {len(out._parents)} parents",
             "return one gradient per parent, in the order of the parents")
    return grads


def _compare_grad(got: Any, want: np.ndarray, fd: np.ndarray | None, case: str, what: str,
                  shape_cause: str, value_cause: str) -> None:
    if got is None:
        fail(case, f"{what} is None", "return an array for every parent")
    got_shape = tuple(np.shape(got))
    if got_shape != want.shape:
        fail(case, f"{what} has shape {got_shape} but the input has shape {want.shape}",
             shape_cause)
    assert_close(got, want, case, what, value_cause)
    if fd is not None:
        assert_close(got, fd, case, f"{what} (vs finite differences of your forward)",
                     value_cause, rtol=1e-4, atol=1e-6)


def _forward(out: Tensor, want: np.ndarray, case: str, cause: str) -> None:
    got = np.asarray(out.data)
    if got.shape != np.shape(want):
        fail(case, f"the result has shape {got.shape}; expected {np.shape(want)}", cause)
    assert_close(got, want, case, "the forward value", cause)


def _leaf(a: np.ndarray) -> Tensor:
    return Tensor(np.array(a, dtype=np.float64), requires_grad=True)


# ---------------------------------------------------------------------------------------------
# 2.1 matmul


@exercise("2.1")
def matmul(matmul: Callable) -> None:
    """Exercise 2.1: ``matmul(a, b)`` for matrices; ``dA = dC @ B.T``, ``dB = A.T @ dC``."""
    fn = _in_scaffold(matmul, "matmul")
    rng = np.random.default_rng(21)
    shapes = [((2, 3), (3, 4)), ((1, 5), (5, 1)), ((4, 4), (4, 4)), ((3, 1), (1, 2))]
    for k, (sa, sb) in enumerate(shapes):
        A, B = rng.normal(size=sa), rng.normal(size=sb)
        case = f"matmul, case {k + 1} of {len(shapes)}: A {sa} @ B {sb}"
        a, b = _leaf(A), _leaf(B)
        out = _node(fn, "matmul", case, (a, b))
        _forward(out, A @ B, case, "the forward value is a.data @ b.data")
        g = rng.normal(size=(sa[0], sb[1]))
        ga, gb = _vjp(out, g, case, "matmul", "the shapes must fit: dA = dC @ B.T is "
                      f"{g.shape} @ {B.T.shape}, dB = A.T @ dC is {A.T.shape} @ {g.shape}")
        fa, fb = numerical_vjp(lambda x, w: np.asarray(fn(Tensor(x), Tensor(w)).data), (A, B), g)
        _compare_grad(ga, g @ B.T, fa, case, "the gradient for A",
                      f"dA must have A's shape {sa}: of the products of dC {g.shape} with B or "
                      f"B.T, only dC @ B.T has it",
                      "dA = dC @ B.T (the output gradient times B transposed)")
        _compare_grad(gb, A.T @ g, fb, case, "the gradient for B",
                      f"dB must have B's shape {sb}: only A.T @ dC has it",
                      "dB = A.T @ dC (A transposed times the output gradient)")
    passed(f"matmul: forward values, dA = dC @ B.T and dB = A.T @ dC agree with NumPy and "
           f"finite differences ({len(shapes)} shape pairs, square and non-square)")


# ---------------------------------------------------------------------------------------------
# 2.2 sum


@exercise("2.2")
def sum(sum: Callable) -> None:  # noqa: A001 - the student's function is called sum
    """Exercise 2.2: ``sum(x, axis=None, keepdims=False)`` spreads the gradient back."""
    fn = _in_scaffold(sum, "sum")
    rng = np.random.default_rng(22)
    X = rng.normal(size=(2, 3, 4))
    cases = [(None, False), (0, False), (1, False), (-1, False), ((0, 2), False),
             (None, True), (1, True), ((0, 2), True)]
    for k, (axis, keepdims) in enumerate(cases):
        call = f"sum(x, axis={axis}, keepdims={keepdims}) with x of shape {X.shape}"
        case = f"sum, case {k + 1} of {len(cases)}: {call}"
        x = _leaf(X)
        out = _node(fn, "sum", case, (x,), axis, keepdims)
        want = np.sum(X, axis=axis, keepdims=keepdims)
        _forward(out, want, case, f"the forward value is np.sum(x.data, axis={axis}, "
                                  f"keepdims={keepdims})")
        g = rng.normal(size=np.shape(want))
        (gx,) = _vjp(out, g, case, "sum", "g has the shape of the sum; put the summed axes "
                     "back as size 1 (np.expand_dims(g, axis), unless keepdims) before "
                     "np.broadcast_to(g, x.shape)")
        kept = np.expand_dims(g, axis) if axis is not None and not keepdims else g
        (fd,) = numerical_vjp(lambda v: np.asarray(fn(Tensor(v), axis, keepdims).data), (X,), g)
        _compare_grad(gx, np.broadcast_to(kept, X.shape) + 0.0, fd, case, "the gradient for x",
                      "the gradient must have x's shape: put the summed axes back as size 1 "
                      "(np.expand_dims(g, axis), unless keepdims) and copy g along them "
                      "(np.broadcast_to(g, x.shape))",
                      "every element of x appears once in its sum, so it gets its sum's "
                      "gradient unchanged (no scaling)")
    passed(f"sum: forward values and gradients (spread back along the summed axes) agree with "
           f"NumPy and finite differences ({len(cases)} cases: axis None, 0, 1, -1, (0, 2), "
           f"with and without keepdims)")


# ---------------------------------------------------------------------------------------------
# 2.3 reshape and 2.4 transpose


@exercise("2.3")
def reshape(reshape: Callable) -> None:
    """Exercise 2.3: ``reshape(x, shape)``; the gradient is reshaped back."""
    fn = _in_scaffold(reshape, "reshape")
    rng = np.random.default_rng(23)
    cases = [((2, 3, 4), (6, 4)), ((2, 3, 4), (24,)), ((6,), (2, 3)), ((2, 3, 4), (4, -1)),
             ((1, 5), (5, 1))]
    for k, (old, new) in enumerate(cases):
        X = rng.normal(size=old)
        case = f"reshape, case {k + 1} of {len(cases)}: x of shape {old} to {new}"
        x = _leaf(X)
        out = _node(fn, "reshape", case, (x,), new)
        want = X.reshape(new)
        _forward(out, want, case, "the forward value is np.reshape(x.data, shape)")
        g = rng.normal(size=want.shape)
        (gx,) = _vjp(out, g, case, "reshape", "reshape g to x's old shape, kept from before")
        _compare_grad(gx, g.reshape(old), None, case, "the gradient for x",
                      "reshape the output gradient back to x's shape (keep the old shape in "
                      "the closure)", "a reshape moves no value: the gradient is g reshaped "
                                      "back, element for element")
    passed(f"reshape: forward values and gradients (g reshaped back) agree with NumPy "
           f"({len(cases)} cases, -1 included)")


@exercise("2.4")
def transpose(transpose: Callable) -> None:
    """Exercise 2.4: ``transpose(x, axes=None)``; the gradient is permuted back."""
    fn = _in_scaffold(transpose, "transpose")
    rng = np.random.default_rng(24)
    cases = [((2, 3), None), ((2, 3, 4), None), ((2, 3, 4), (1, 2, 0)), ((2, 3, 4), (2, 0, 1)),
             ((2, 3, 4), (0, 2, 1))]
    for k, (shape, axes) in enumerate(cases):
        X = rng.normal(size=shape)
        case = f"transpose, case {k + 1} of {len(cases)}: x of shape {shape}, axes={axes}"
        x = _leaf(X)
        out = _node(fn, "transpose", case, (x,), *(() if axes is None else (axes,)))
        want = np.transpose(X, axes)
        _forward(out, want, case, "the forward value is np.transpose(x.data, axes); with "
                                  "axes=None the axes are reversed")
        g = rng.normal(size=want.shape)
        (gx,) = _vjp(out, g, case, "transpose", "permute g with the inverse permutation "
                     "np.argsort(axes)")
        _compare_grad(gx, np.transpose(g, np.argsort(axes if axes else range(len(shape))[::-1])),
                      None, case, "the gradient for x",
                      "permute the gradient back with the inverse permutation "
                      "np.argsort(axes); for (1, 2, 0) it is (2, 0, 1), not the same axes",
                      "the inverse permutation (np.argsort(axes)) puts every value back where "
                      "it came from")
    passed(f"transpose: forward values and gradients (permuted back with the inverse "
           f"permutation) agree with NumPy ({len(cases)} cases, 2-D and 3-D)")


# ---------------------------------------------------------------------------------------------
# 2.5 unbroadcast

_PAIRS = [  # (shape of a, shape of b, the operation): b is unbroadcast from the result
    ((2, 3), (3,)), ((2, 3), (1, 3)), ((2, 3), (2, 1)), ((2, 3), (1, 1)), ((2, 3), ()),
    ((4, 2, 3), (2, 1)), ((4, 2, 3), (4, 1, 3)), ((4, 2, 3), (1, 2, 3)), ((5,), (1,)),
    ((3, 4), (3, 4)), ((2, 1, 3), (4, 1)), ((3, 1, 5), (1, 4, 1)),
]


@exercise("2.5")
def unbroadcast(unbroadcast: Callable) -> None:
    """Exercise 2.5: ``unbroadcast(grad, shape)`` sums a gradient back to ``shape``."""
    fn = _in_scaffold(unbroadcast, "unbroadcast")
    rng = np.random.default_rng(25)
    n = 0
    for sa, sb in _PAIRS:
        out_shape = np.broadcast_shapes(sa, sb)
        g = rng.normal(size=out_shape)
        for who, shape in (("a", sa), ("b", sb)):
            n += 1
            case = (f"unbroadcast, case {n}: in c = a + b with a of shape {sa} and b of shape "
                    f"{sb}, c has shape {out_shape}; unbroadcast(grad of shape {out_shape}, "
                    f"{shape}) gives {who}'s gradient")
            before = g.copy()
            with student_code(case, "your unbroadcast"):
                got = fn(g, shape)
            if not np.array_equal(g, before):
                fail(case, "unbroadcast changed the gradient it was given, in place",
                     "compute a new array (grad.sum(...)); never write into grad")
            want = _ref_unbroadcast(g, shape)
            got_shape = tuple(np.shape(got)) if got is not None else None
            if got_shape != tuple(shape):
                extra = len(out_shape) - len(shape)
                if got_shape is not None and len(got_shape) > len(shape):
                    cause = (f"sum away the {extra} leading axes that {who} does not have "
                             f"(axis=tuple(range({extra})))")
                elif got_shape is not None and len(got_shape) < len(shape):
                    cause = (f"keep the axes where {who} has size 1: sum them with "
                             "keepdims=True")
                else:
                    cause = f"sum over the axes where {who} has size 1 and the gradient does not"
                fail(case, f"the gradient for {who} has shape {got_shape} but {who} has shape "
                           f"{tuple(shape)}: did you unbroadcast?", cause)
            assert_close(got, want, case, f"the gradient for {who}",
                         "every broadcast copy sent its own gradient back: add them up (a "
                         "sum, not a mean, and not one copy)")
    passed(f"unbroadcast: the right shape and values for {n} gradients of {len(_PAIRS)} "
           f"broadcast pairs (leading axes, size-1 axes, both, scalars and no broadcasting)")


# ---------------------------------------------------------------------------------------------
# 2.6 cross-entropy

_HAND = [  # (logits, targets, loss, gradient): numbers a student can derive by hand
    ([[0.0, 0.0, 0.0, 0.0]], [2], np.log(4.0), [[0.25, 0.25, -0.75, 0.25]]),
    ([[0.0, np.log(3.0)]], [1], -np.log(0.75), [[0.25, -0.25]]),
    ([[np.log(2.0), 0.0], [0.0, np.log(2.0)]], [0, 0], (np.log(1.5) + np.log(3.0)) / 2,
     [[-1 / 6, 1 / 6], [-1 / 3, 1 / 3]]),
]


@exercise("2.6")
def cross_entropy(cross_entropy: Callable) -> None:
    """Exercise 2.6: ``cross_entropy(logits, targets)``: mean softmax cross-entropy as one
    node, stable for any logits, with the gradient ``(softmax - onehot) / N``."""
    fn = _in_scaffold(cross_entropy, "cross_entropy")
    rng = np.random.default_rng(26)
    cases = [(f"by hand: logits {show(np.asarray(z))}, targets {t}", np.asarray(z, float),
              np.asarray(t), loss, np.asarray(grad)) for z, t, loss, grad in _HAND]
    for n_rows, n_cls in ((4, 5), (1, 3)):
        z = rng.normal(scale=2.0, size=(n_rows, n_cls))
        t = rng.integers(0, n_cls, size=n_rows)
        p = np.exp(_log_softmax(z))
        onehot = np.eye(n_cls)[t]
        cases.append((f"random logits of shape {z.shape}, targets {t.tolist()}", z, t,
                      -np.mean(np.log(p[np.arange(n_rows), t])), (p - onehot) / n_rows))
    z = np.array([[1e4, -1e4, 0.0], [-1e4, 1e4, 0.0], [1e4, 1e4, -1e4]])
    t = np.array([0, 0, 2])
    cases.append(("logits of +-1e4 (exp(1e4) overflows float64)", z, t,
                  (0.0 + 2e4 + (2e4 + np.log(2.0))) / 3,
                  np.array([[0, 0, 0], [-1, 1, 0], [0.5, 0.5, -1]]) / 3))
    overflow = ("exp of a large logit overflows: subtract each row's max before exp, and "
                "compute log-softmax as (z - max) - log(sum(exp(z - max))), never "
                "log(softmax(z))")
    for k, (label, Z, T, want_loss, want_grad) in enumerate(cases):
        case = f"cross_entropy, case {k + 1} of {len(cases)}: {label}"
        logits = _leaf(Z)
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            try:
                out = _node(fn, "cross_entropy", case, (logits,), T)
            except CheckFailed as e:
                if isinstance(e.__cause__, FloatingPointError):
                    fail(case, f"NumPy reported {e.__cause__} in the forward pass", overflow)
                raise
        loss = np.asarray(out.data)
        if loss.shape != ():
            fail(case, f"the loss has shape {loss.shape}; expected a single value, shape ()",
                 "average over the rows: the loss is one number for the whole batch")
        if not np.isfinite(loss):
            fail(case, f"the loss is {loss}; expected {want_loss:.6g}", overflow)
        n_rows = Z.shape[0]
        loss_cause = "the loss is the mean over rows of logsumexp(z) - z[target]"
        if n_rows > 1 and np.isclose(float(loss), want_loss * n_rows, rtol=1e-6):
            loss_cause = (f"the loss is {n_rows} times too large: it is summed over the "
                          f"{n_rows} rows instead of averaged. The loss is the mean over rows: "
                          f"divide the sum by N = {n_rows}")
        assert_close(loss, want_loss, case, "the loss", loss_cause)
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            try:
                (gz,) = _vjp(out, np.array(1.0), case, "cross_entropy")
            except CheckFailed as e:
                if isinstance(e.__cause__, FloatingPointError):
                    fail(case, f"NumPy reported {e.__cause__} in the backward pass", overflow)
                raise
        if np.shape(gz) == Z.shape and not np.all(np.isfinite(gz)):
            fail(case, f"the gradient holds inf or nan: {show(np.asarray(gz))}", overflow)
        fd = None
        if np.abs(Z).max() < 100:
            (fd,) = numerical_vjp(lambda v: np.asarray(fn(Tensor(v), T).data), (Z,),
                                  np.array(1.0))
        onehot_n = np.eye(Z.shape[1])[T] / n_rows
        grad_cause = "the fused rule is (softmax(z) - onehot(targets)) / N"
        if np.shape(gz) == Z.shape:
            if np.allclose(gz, want_grad + onehot_n, atol=1e-9):
                grad_cause = ("the one-hot targets are not subtracted: the gradient is "
                              "(softmax(z) - onehot(targets)) / N, and you return softmax(z) / N")
            elif n_rows > 1 and np.allclose(gz, want_grad * n_rows, atol=1e-9):
                grad_cause = (f"the gradient is {n_rows} times too large: divide by N, the "
                              "number of rows: (softmax - onehot) / N, since the loss is a mean")
            elif np.allclose(gz, -want_grad, atol=1e-9):
                grad_cause = ("the sign is flipped: the gradient of the loss is "
                              "(softmax - onehot) / N, not (onehot - softmax) / N")
        _compare_grad(gz, want_grad, fd, case, "the gradient for the logits",
                      "the gradient has the logits' shape (N, C): (softmax(z) - onehot) / N",
                      grad_cause)
        g = 0.5
        (gz_half,) = _vjp(out, np.array(g), case, "cross_entropy")
        assert_close(gz_half, g * want_grad, case, "the gradient for an output gradient of 0.5",
                     "multiply by the output gradient g: g * (softmax - onehot) / N")
    passed(f"cross_entropy: loss and gradient (softmax - onehot) / N agree with hand-derived "
           f"numbers, NumPy and finite differences, and stay finite at logits of +-1e4 "
           f"({len(cases)} cases)")
