"""The judges of lesson2's checks, which compute the expected values and compare, and the
lesson's reference operations (:data:`_REFERENCES`: the judges' expected values, and what the
demos fall back to). They run in the grader's process (and in a notebook, after the run), never
in its sandbox, which does not hold this file (:data:`minigrad.course.grading.sandbox.GRADER_ONLY`).
The probes and the runs are in :mod:`minigrad.course.checks.lesson2`.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from minigrad.broadcast import unbroadcast as _ref_unbroadcast
from minigrad.course.checks import (CheckFailed, assert_close, fail, judged_cases, received,
                                    show, value_at)
from minigrad.course.checks.lesson2 import _OVERFLOW, _Case, _cases, _unbroadcast_cases
from minigrad.tensor import Tensor, op


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


_REFERENCES: dict[str, Callable[..., Any]] = {
    "matmul": _r_matmul, "sum": _r_sum, "reshape": _r_reshape, "transpose": _r_transpose,
    "unbroadcast": _ref_unbroadcast, "cross_entropy": _r_cross_entropy}


def _gradients(result: dict[str, Any], c: _Case, key: str = "grads") -> list[Any]:
    """The gradients the VJP returned, one per parent (not yet compared)."""
    grads, n = value_at(result, c.label, key), len(c.inputs)
    if not isinstance(grads, list) or len(grads) != n:
        got = f"{len(grads)} gradients" if isinstance(grads, list) else show(grads)
        fail(c.label, f"the VJP returned {got} for {n} parent{'s' if n > 1 else ''}",
             "return one gradient per parent, in the order of the parents")
    return grads


def _finite_differences(result: dict[str, Any], c: _Case) -> list[np.ndarray | None]:
    """The finite differences of the student's forward, one per input (None where the case
    has none). The run sends them whenever the forward value has the right shape, which the
    judge has seen by now."""
    if not c.fd:
        return [None] * len(c.inputs)
    fd = value_at(result, c.label, "fd")
    if not isinstance(fd, list) or len(fd) != len(c.inputs):
        fail(c.label, f"expected the finite differences for {len(c.inputs)} input(s); got "
                      f"{show(fd)}")
    arrays = [received(f, c.label, "a finite difference") for f in fd]
    for a, x in zip(arrays, c.inputs):
        if a.shape != x.shape:
            fail(c.label, f"a finite difference has shape {a.shape}; expected {x.shape}")
    return list(arrays)


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


#: Each check of one node: the cause of a wrong forward value; for each input, what its
#: gradient is called, the cause of a wrong shape and of wrong values; the ✓ line.
_ROWS: dict[str, tuple[str, tuple[tuple[str, str, str], ...], str]] = {
    "matmul": ("the forward value is a.data @ b.data", (
        ("the gradient for A", "dA must have A's shape {A.shape}: of the products of dC "
         "{g.shape} with B or B.T, only dC @ B.T has it",
         "dA = dC @ B.T (the output gradient times B transposed)"),
        ("the gradient for B", "dB must have B's shape {B.shape}: only A.T @ dC has it",
         "dB = A.T @ dC (A transposed times the output gradient)")),
        "matmul: forward values, dA = dC @ B.T and dB = A.T @ dC agree with NumPy and finite "
        "differences ({n} shape pairs, square and non-square)"),
    "sum": ("the forward value is np.sum(x.data, axis={axis}, keepdims={keepdims})", (
        ("the gradient for x", "the gradient must have x's shape: put the summed axes back as "
         "size 1 (np.expand_dims(g, axis), unless keepdims) and copy g along them "
         "(np.broadcast_to(g, x.shape))", "every element of x appears once in its sum, so it "
         "gets its sum's gradient unchanged (no scaling)"),),
        "sum: forward values and gradients (spread back along the summed axes) agree with "
        "NumPy and finite differences ({n} cases: axis {axes}, with and without keepdims)"),
    "reshape": ("the forward value is np.reshape(x.data, shape)", (
        ("the gradient for x", "reshape the output gradient back to x's shape (keep the old "
         "shape in the closure)", "a reshape moves no value: the gradient is g reshaped back, "
         "element for element"),),
        "reshape: forward values and gradients (g reshaped back) agree with NumPy ({n} cases, "
        "-1 included)"),
    "transpose": ("the forward value is np.transpose(x.data, axes); with axes=None the axes are "
                  "reversed", (
        ("the gradient for x", "permute the gradient back with the inverse permutation "
         "np.argsort(axes); for (1, 2, 0) it is (2, 0, 1), not the same axes", "the inverse "
         "permutation (np.argsort(axes)) puts every value back where it came from"),),
        "transpose: forward values and gradients (permuted back with the inverse permutation) "
        "agree with NumPy ({n} cases, 2-D and 3-D)"),
}


def _node_judge(name: str) -> Callable[[Any, Any], str]:
    """The judge of check ``name``: the forward value, then each gradient, against the
    reference's (and finite differences of the student's forward, where the case has them)."""
    forward, inputs, passed = _ROWS[name]

    def judge(probes: Any, outputs: Any) -> str:
        cases = _cases(name, probes)
        for c, result in judged_cases(name, cases, outputs):
            out = _REFERENCES[name](*(Tensor(x, requires_grad=True) for x in c.inputs), *c.args)
            want_grads = out._vjp(c.g, *out._saved)     # the reference's value and gradients
            want_grads = want_grads if isinstance(want_grads, tuple) else (want_grads,)
            cause = forward.format(**c.named)
            got = received(value_at(result, c.label, "forward"), c.label, "the result", cause)
            if got.shape != out.shape:
                fail(c.label, f"the result has shape {got.shape}; expected {out.shape}", cause)
            assert_close(got, out.data, c.label, "the forward value", cause)
            grads, fds = _gradients(result, c), _finite_differences(result, c)
            for got, fd, w, (what, shape_cause, value_cause) in zip(grads, fds, want_grads,
                                                                     inputs):
                _compare_grad(got, np.asarray(w), fd, c.label, what,
                              shape_cause.format(**c.named), value_cause)
        axes = ", ".join(dict.fromkeys(str(c.named.get("axis")) for c in cases))
        return passed.format(n=len(cases), axes=axes)
    judge.__name__ = judge.__qualname__ = f"_{name}_judge"
    return judge


_matmul_judge, _sum_judge, _reshape_judge, _transpose_judge = (
    _node_judge(name) for name in ("matmul", "sum", "reshape", "transpose"))


def _moves_both_judge(probes: dict[str, Any], outputs: Any) -> str:
    """Both judges, reshape's first; the text of both \u2713 lines."""
    if not isinstance(outputs, dict) or set(outputs) != {"reshape", "transpose"}:
        raise CheckFailed("reshape and transpose: the values sent back for judging are "
                          "malformed: expected a dict with 'reshape' and 'transpose'; got "
                          f"{show(outputs, 80)}")
    first = _reshape_judge(probes["reshape"], outputs["reshape"])
    return first + "\n\u2713 " + _transpose_judge(probes["transpose"], outputs["transpose"])


#: The usual cause of a wrong shape of unbroadcast's result, by how its rank compares with the
#: shape's (more axes, fewer, as many).
_UNBROADCAST_SHAPE = {
    1: "sum away the {extra} leading axes that {who} does not have (axis=tuple(range({extra})))",
    -1: "keep the axes where {who} has size 1: sum them with keepdims=True",
    0: "sum over the axes where {who} has size 1 and the gradient does not"}


def _unbroadcast_judge(probes: dict[str, Any], outputs: Any) -> str:
    """2.4, judge: the shape, then the values, against minigrad's unbroadcast."""
    cases = _unbroadcast_cases(probes)
    for probe, result in judged_cases("unbroadcast", cases, outputs):
        who, shape, g, case = probe["who"], probe["shape"], probe["g"], probe["name"]
        got = value_at(result, case, "got")
        got = None if got is None else received(got, case, f"the gradient for {who}")
        got_shape = None if got is None else got.shape
        if got_shape != shape:
            rank = 0 if got_shape is None else np.sign(len(got_shape) - len(shape))
            fail(case, f"the gradient for {who} has shape {got_shape} but {who} has shape "
                       f"{shape}: did you unbroadcast?",
                 _UNBROADCAST_SHAPE[int(rank)].format(who=who, extra=g.ndim - len(shape)))
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


#: The usual slips in cross_entropy's gradient, tried in order: what the student's gradient is
#: then (from the right one, the one-hot targets and N; None where it cannot be told), the cause.
_CE_SLIPS: tuple[tuple[Callable[[np.ndarray, np.ndarray, int], Any], str], ...] = (
    (lambda want, onehot, n: want + onehot / n, "the one-hot targets are not subtracted: the "
     "gradient is (softmax(z) - onehot(targets)) / N, and you return softmax(z) / N"),
    (lambda want, onehot, n: want * n if n > 1 else None, "the gradient is {n} times too "
     "large: divide by N, the number of rows: (softmax - onehot) / N, since the loss is a mean"),
    (lambda want, onehot, n: -want, "the sign is flipped: the gradient of the loss is "
     "(softmax - onehot) / N, not (onehot - softmax) / N"))


def _ce_judge(probes: dict[str, Any], outputs: Any) -> str:
    """2.5, judge: the loss and (softmax - onehot) / N, naming the usual slip when one fits."""
    cases = _cases("cross_entropy", probes)
    for c, result in judged_cases("cross_entropy", cases, outputs):
        (Z,), (T,), case, n_rows = c.inputs, c.args, c.label, c.inputs[0].shape[0]
        want_loss, want_grad = _ce_expected(Z, T)
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
        (gz,) = _gradients(result, c)
        what = "the gradient for the logits"
        gz = received(gz, case, what, "return an array for every parent")
        if gz.shape == Z.shape and not np.all(np.isfinite(gz)):
            fail(case, f"the gradient holds inf or nan: {show(gz)}", _OVERFLOW)
        (fd,) = _finite_differences(result, c)
        grad_cause = "the fused rule is (softmax(z) - onehot(targets)) / N"
        for slip, cause in _CE_SLIPS if gz.shape == Z.shape else ():
            wrong = slip(want_grad, np.eye(Z.shape[1])[T], n_rows)
            if wrong is not None and np.allclose(gz, wrong, atol=1e-9):
                grad_cause = cause.format(n=n_rows)
                break
        _compare_grad(gz, want_grad, fd, case, what,
                      "the gradient has the logits' shape (N, C): (softmax(z) - onehot) / N",
                      grad_cause)
        (half,) = _gradients(result, c, key="grads_half")
        assert_close(received(half, case, what), 0.5 * want_grad, case,
                     "the gradient for an output gradient of 0.5",
                     "multiply by the output gradient g: g * (softmax - onehot) / N")
    return (f"cross_entropy: loss and gradient (softmax - onehot) / N agree with hand-derived "
            f"numbers, NumPy and finite differences, and stay finite at logits of +-1e4 "
            f"({len(cases)} cases)")
