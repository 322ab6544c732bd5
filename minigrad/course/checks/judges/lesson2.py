"""The judges of lesson2's checks: they compute the expected values and compare.

They run in the grader's process (and in a notebook, after the run), never in the grader's
sandbox, which does not hold this file (:data:`minigrad.course.grading.sandbox.GRADER_ONLY`).
The probes, the runs and the helpers both sides use are in :mod:`minigrad.course.checks.lesson2`.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from minigrad.broadcast import unbroadcast as _ref_unbroadcast
from minigrad.course.checks import (CheckFailed, assert_close, fail, judged_cases, received,
                                    show, value_at)
from minigrad.course.checks.lesson2 import (  # what the judges share with the runs
    _OVERFLOW, _axis, _ce_case, _floats, _ints, _matmul_case, _moves_case, _sum_case,
    _unbroadcast_cases)
from minigrad.tensor import Tensor, op


# Reference versions of the lesson's operations: what the demos fall back to
# (minigrad.course.demos reads _REFERENCES).


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



def _forward(got: Any, want: np.ndarray, case: str, cause: str) -> None:
    got = received(got, case, "the result", cause)
    if got.shape != np.shape(want):
        fail(case, f"the result has shape {got.shape}; expected {np.shape(want)}", cause)
    assert_close(got, want, case, "the forward value", cause)


def _gradients(result: dict[str, Any], n: int, case: str, key: str = "grads") -> list[Any]:
    """The gradients the VJP returned, one per parent (not yet compared)."""
    grads = value_at(result, case, key)
    if not isinstance(grads, list) or len(grads) != n:
        got = f"{len(grads)} gradients" if isinstance(grads, list) else show(grads)
        fail(case, f"the VJP returned {got} for {n} parent{'s' if n > 1 else ''}",
             "return one gradient per parent, in the order of the parents")
    return grads


def _finite_differences(result: dict[str, Any], inputs: Sequence[np.ndarray],
                        case: str) -> list[np.ndarray]:
    """The finite differences of the student's forward, one per input. The run sends them
    whenever the forward value has the right shape, which the judge has seen by now."""
    fd = value_at(result, case, "fd")
    if not isinstance(fd, list) or len(fd) != len(inputs):
        fail(case, f"expected the finite differences for {len(inputs)} input(s); got {show(fd)}")
    arrays = [received(f, case, "a finite difference") for f in fd]
    for a, x in zip(arrays, inputs):
        if a.shape != x.shape:
            fail(case, f"a finite difference has shape {a.shape}; expected {x.shape}")
    return arrays


def _compare_grad(got: Any, want: np.ndarray, fd: Any, case: str, what: str,
                  shape_cause: str, value_cause: str) -> None:
    if got is None:
        fail(case, f"{what} is None", "return an array for every parent")
    got = received(got, case, what, value_cause)
    if got.shape != want.shape:
        fail(case, f"{what} has shape {got.shape} but the input has shape {want.shape}",
             shape_cause)
    assert_close(got, want, case, what, value_cause)
    if fd is not None:
        assert_close(got, fd, case, f"{what} (vs finite differences of your forward)",
                     value_cause, rtol=1e-4, atol=1e-6)


def _matmul_judge(probes: dict[str, Any], outputs: Any) -> str:
    """2.1, judge: A @ B, dA = dC @ B.T and dB = A.T @ dC."""
    cases = probes["cases"]
    for k, (probe, result) in enumerate(judged_cases("matmul", cases, outputs)):
        A, B, g = _floats(probe["A"]), _floats(probe["B"]), _floats(probe["g"])
        case = _matmul_case(k, len(cases), A, B)
        _forward(value_at(result, case, "forward"), A @ B, case,
                 "the forward value is a.data @ b.data")
        ga, gb = _gradients(result, 2, case)
        fa, fb = _finite_differences(result, (A, B), case)
        _compare_grad(ga, g @ B.T, fa, case, "the gradient for A",
                      f"dA must have A's shape {A.shape}: of the products of dC {g.shape} with "
                      f"B or B.T, only dC @ B.T has it",
                      "dA = dC @ B.T (the output gradient times B transposed)")
        _compare_grad(gb, A.T @ g, fb, case, "the gradient for B",
                      f"dB must have B's shape {B.shape}: only A.T @ dC has it",
                      "dB = A.T @ dC (A transposed times the output gradient)")
    return (f"matmul: forward values, dA = dC @ B.T and dB = A.T @ dC agree with NumPy and "
            f"finite differences ({len(cases)} shape pairs, square and non-square)")


def _sum_judge(probes: dict[str, Any], outputs: Any) -> str:
    """2.2, judge: np.sum's value, and g copied back along the summed axes."""
    X, cases = _floats(probes["x"]), probes["cases"]
    for k, (probe, result) in enumerate(judged_cases("sum", cases, outputs)):
        axis, keepdims, g = _axis(probe["axis"]), bool(probe["keepdims"]), _floats(probe["g"])
        case = _sum_case(k, len(cases), axis, keepdims, X)
        want = np.sum(X, axis=axis, keepdims=keepdims)
        _forward(value_at(result, case, "forward"), want, case,
                 f"the forward value is np.sum(x.data, axis={axis}, keepdims={keepdims})")
        (gx,) = _gradients(result, 1, case)
        (fd,) = _finite_differences(result, (X,), case)
        kept = np.expand_dims(g, axis) if axis is not None and not keepdims else g
        _compare_grad(gx, np.broadcast_to(kept, X.shape) + 0.0, fd, case, "the gradient for x",
                      "the gradient must have x's shape: put the summed axes back as size 1 "
                      "(np.expand_dims(g, axis), unless keepdims) and copy g along them "
                      "(np.broadcast_to(g, x.shape))",
                      "every element of x appears once in its sum, so it gets its sum's "
                      "gradient unchanged (no scaling)")
    named = ", ".join(dict.fromkeys(str(_axis(c["axis"])) for c in cases))
    return (f"sum: forward values and gradients (spread back along the summed axes) agree with "
            f"NumPy and finite differences ({len(cases)} cases: axis {named}, with and without "
            f"keepdims)")


def _reshape_judge(probes: dict[str, Any], outputs: Any) -> str:
    """2.3, judge: np.reshape's value; the gradient is g reshaped back."""
    cases = probes["cases"]
    for k, (probe, result) in enumerate(judged_cases("reshape", cases, outputs)):
        X, g, new = _floats(probe["x"]), _floats(probe["g"]), _ints(probe["arg"])
        case = _moves_case("reshape", k, len(cases), X, new)
        _forward(value_at(result, case, "forward"), X.reshape(new), case,
                 "the forward value is np.reshape(x.data, shape)")
        (gx,) = _gradients(result, 1, case)
        _compare_grad(gx, g.reshape(X.shape), None, case, "the gradient for x",
                      "reshape the output gradient back to x's shape (keep the old shape in "
                      "the closure)", "a reshape moves no value: the gradient is g reshaped "
                                      "back, element for element")
    return (f"reshape: forward values and gradients (g reshaped back) agree with NumPy "
            f"({len(cases)} cases, -1 included)")


def _transpose_judge(probes: dict[str, Any], outputs: Any) -> str:
    """2.3, judge: np.transpose's value; the gradient is g permuted back."""
    cases = probes["cases"]
    for k, (probe, result) in enumerate(judged_cases("transpose", cases, outputs)):
        X, g = _floats(probe["x"]), _floats(probe["g"])
        axes = None if probe["arg"] is None else _ints(probe["arg"])
        case = _moves_case("transpose", k, len(cases), X, axes)
        _forward(value_at(result, case, "forward"), np.transpose(X, axes), case,
                 "the forward value is np.transpose(x.data, axes); with axes=None the axes are "
                 "reversed")
        (gx,) = _gradients(result, 1, case)
        inverse = np.argsort(axes if axes else range(X.ndim)[::-1])
        _compare_grad(gx, np.transpose(g, inverse), None, case, "the gradient for x",
                      "permute the gradient back with the inverse permutation "
                      "np.argsort(axes); for (1, 2, 0) it is (2, 0, 1), not the same axes",
                      "the inverse permutation (np.argsort(axes)) puts every value back where "
                      "it came from")
    return (f"transpose: forward values and gradients (permuted back with the inverse "
            f"permutation) agree with NumPy ({len(cases)} cases, 2-D and 3-D)")


def _moves_both_judge(probes: dict[str, Any], outputs: Any) -> str:
    """Both judges, reshape's first; the text of both \u2713 lines."""
    if not isinstance(outputs, dict) or set(outputs) != {"reshape", "transpose"}:
        raise CheckFailed("reshape and transpose: the values sent back for judging are "
                          "malformed: expected a dict with 'reshape' and 'transpose'; got "
                          f"{show(outputs, 80)}")
    first = _reshape_judge(probes["reshape"], outputs["reshape"])
    return first + "\n\u2713 " + _transpose_judge(probes["transpose"], outputs["transpose"])


def _unbroadcast_judge(probes: dict[str, Any], outputs: Any) -> str:
    """2.4, judge: the shape, then the values, against minigrad's unbroadcast."""
    cases = _unbroadcast_cases(probes)
    for k, (probe, result) in enumerate(judged_cases("unbroadcast", cases, outputs)):
        who, shape, g, case = probe["who"], probe["shape"], probe["g"], probe["name"]
        got = value_at(result, case, "got")
        if got is not None:
            got = received(got, case, f"the gradient for {who}")
        got_shape = None if got is None else got.shape
        if got_shape != shape:
            extra = g.ndim - len(shape)
            if got_shape is not None and len(got_shape) > len(shape):
                cause = (f"sum away the {extra} leading axes that {who} does not have "
                         f"(axis=tuple(range({extra})))")
            elif got_shape is not None and len(got_shape) < len(shape):
                cause = f"keep the axes where {who} has size 1: sum them with keepdims=True"
            else:
                cause = f"sum over the axes where {who} has size 1 and the gradient does not"
            fail(case, f"the gradient for {who} has shape {got_shape} but {who} has shape "
                       f"{shape}: did you unbroadcast?", cause)
        assert_close(got, _ref_unbroadcast(g, shape), case, f"the gradient for {who}",
                     "every broadcast copy sent its own gradient back: add them up (a sum, not "
                     "a mean, and not one copy)")
    return (f"unbroadcast: the right shape and values for {len(cases)} gradients of "
            f"{len(probes['pairs'])} broadcast pairs (leading axes, size-1 axes, both, scalars "
            f"and no broadcasting)")


def _ce_expected(Z: np.ndarray, T: np.ndarray) -> tuple[float, np.ndarray]:
    """The mean cross-entropy of logits ``Z`` against targets ``T`` and its gradient."""
    n_rows = Z.shape[0]
    log_p = _log_softmax(Z)
    onehot = np.eye(Z.shape[1])[T]
    return float(-np.mean(log_p[np.arange(n_rows), T])), (np.exp(log_p) - onehot) / n_rows


def _ce_judge(probes: dict[str, Any], outputs: Any) -> str:
    """2.5, judge: the loss and (softmax - onehot) / N, naming the usual slip when one fits."""
    cases = probes["cases"]
    for k, (probe, result) in enumerate(judged_cases("cross_entropy", cases, outputs)):
        Z, T = _floats(probe["logits"]), np.asarray(probe["targets"], dtype=np.int64)
        case = _ce_case(k, len(cases), probe)
        want_loss, want_grad = _ce_expected(Z, T)
        n_rows = Z.shape[0]
        loss = received(value_at(result, case, "loss"), case, "the loss")
        if loss.shape != ():
            fail(case, f"the loss has shape {loss.shape}; expected a single value, shape ()",
                 "average over the rows: the loss is one number for the whole batch")
        if not np.isfinite(loss):
            fail(case, f"the loss is {loss}; expected {want_loss:.6g}", _OVERFLOW)
        loss_cause = "the loss is the mean over rows of logsumexp(z) - z[target]"
        if n_rows > 1 and np.isclose(float(loss), want_loss * n_rows, rtol=1e-6):
            loss_cause = (f"the loss is {n_rows} times too large: it is summed over the "
                          f"{n_rows} rows instead of averaged. The loss is the mean over rows: "
                          f"divide the sum by N = {n_rows}")
        assert_close(loss, want_loss, case, "the loss", loss_cause)
        (gz,) = _gradients(result, 1, case)
        what = "the gradient for the logits"
        gz = received(gz, case, what, "return an array for every parent")
        if gz.shape == Z.shape and not np.all(np.isfinite(gz)):
            fail(case, f"the gradient holds inf or nan: {show(gz)}", _OVERFLOW)
        fd = _finite_differences(result, (Z,), case)[0] if np.abs(Z).max() < 100 else None
        grad_cause = "the fused rule is (softmax(z) - onehot(targets)) / N"
        if gz.shape == Z.shape:
            if np.allclose(gz, want_grad + np.eye(Z.shape[1])[T] / n_rows, atol=1e-9):
                grad_cause = ("the one-hot targets are not subtracted: the gradient is "
                              "(softmax(z) - onehot(targets)) / N, and you return softmax(z) / N")
            elif n_rows > 1 and np.allclose(gz, want_grad * n_rows, atol=1e-9):
                grad_cause = (f"the gradient is {n_rows} times too large: divide by N, the "
                              "number of rows: (softmax - onehot) / N, since the loss is a mean")
            elif np.allclose(gz, -want_grad, atol=1e-9):
                grad_cause = ("the sign is flipped: the gradient of the loss is "
                              "(softmax - onehot) / N, not (onehot - softmax) / N")
        _compare_grad(gz, want_grad, fd, case, what,
                      "the gradient has the logits' shape (N, C): (softmax(z) - onehot) / N",
                      grad_cause)
        (half,) = _gradients(result, 1, case, key="grads_half")
        assert_close(received(half, case, what), 0.5 * want_grad, case,
                     "the gradient for an output gradient of 0.5",
                     "multiply by the output gradient g: g * (softmax - onehot) / N")
    return (f"cross_entropy: loss and gradient (softmax - onehot) / N agree with hand-derived "
            f"numbers, NumPy and finite differences, and stay finite at logits of +-1e4 "
            f"({len(cases)} cases)")
