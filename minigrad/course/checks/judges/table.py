"""The judge of the checks made of a table of operations (:mod:`minigrad.course.checks.table`),
never in the grader's sandbox: case by case, the student's values against each row's reference
and against finite differences of the student's own forward pass. Its work is linear in the
probes' sizes; what came back is read through ``value_at`` and refused when malformed.
"""
from __future__ import annotations

__all__ = ["operation_judge", "operations_judge"]

from typing import Any, Mapping

import numpy as np

from minigrad.course.checks import assert_close, fail, received, show, value_at
from minigrad.course.checks.table import LETTERS, Operation, each_case


def _case(row: Operation, case: str, arrays: list[np.ndarray], extra: tuple[Any, ...],
          g: np.ndarray, result: Any) -> None:
    """One case: the forward value, then each input's gradient against the reference and the
    finite differences (at exactly 0, for a row with a kink there, against the reference only)."""
    value, derivatives = row.reference(*arrays, *extra)
    forward = received(value_at(result, case, "forward"), case, "the forward value", "")
    assert_close(forward, value, case, "the forward value",
                 f"the forward value should be {row.formula(extra)}")
    grads, fds = value_at(result, case, "grads"), value_at(result, case, "fd")
    if not isinstance(grads, list) or len(grads) != len(arrays):
        fail(case, f"the closure returned {len(grads) if isinstance(grads, list) else show(grads)}"
                   f" gradients for {len(arrays)} parents",
             "return one gradient per parent, in the order of parents")
    if not isinstance(fds, list) or len(fds) != len(arrays):
        fail(case, f"expected the finite differences for {len(arrays)} input(s); got "
                   f"{show(fds)}")
    zeros = arrays[0] == 0 if row.at_zero and np.any(arrays[0] == 0) else None
    for i, (got, derivative, fd) in enumerate(zip(grads, derivatives, fds)):
        want = g * np.asarray(derivative, dtype=np.float64)
        what, label, cause = f"the gradient for {LETTERS[i]}", case, row.causes[i]
        got = received(got, case, what, cause)
        if got.shape != want.shape:
            fail(case, f"{what} has shape {got.shape} but {LETTERS[i]} has shape {want.shape}",
                 "in an elementwise operation each input's gradient has that input's shape")
        fd = received(fd, case, "a finite difference")
        if zeros is not None:  # the gradient at exactly 0 is 0, by convention: no differences
            label, cause = case + " (inputs exactly at 0 included)", row.at_zero
            fd = np.where(zeros, want, fd) if fd.shape == want.shape else fd
        assert_close(got, want, label, f"{what} (vs {row.against}, for the output gradient "
                                       f"g = {show(g)})", cause)
        assert_close(got, fd, label, f"{what} (vs finite differences of your forward)",
                     row.causes[i], rtol=1e-4, atol=1e-6)


def operation_judge(row: Operation, probes: dict[str, Any], outputs: Any) -> str:
    """Judge one operation's cases; the ✓ line's text."""
    name = probes["op"]
    groups = value_at(outputs, name, "groups")
    if not isinstance(groups, list) or len(groups) != len(probes["groups"]):
        fail(name, f"expected results for {len(probes['groups'])} groups of cases; got "
                   f"{show(groups)}")
    for group, results in zip(probes["groups"], groups):
        if not isinstance(results, list) or len(results) != len(group["cases"]):
            fail(name, f"expected {len(group['cases'])} cases; got {show(results, 60)}")
    n, seen = 0, [0] * len(groups)
    for j, case, arrays, extra, g in each_case(probes):
        _case(row, case, arrays, extra, g, groups[j][seen[j]])
        seen[j] += 1
        n += 1
    if row.param_names:
        values = ", ".join(str(p[0]) if len(p) == 1 else str(p) for p in row.params)
        return (f"{name}: forward values and gradients agree with {row.against} and finite "
                f"differences for {row.param_names} = {values} ({n} cases)")
    return (f"{name}: forward values and the gradient of every input agree with {row.against} "
            f"element by element and with finite differences ({n} cases, shapes (3,), (2, 3) "
            f"and ())")


def operations_judge(rows: Mapping[str, Operation], probes: dict[str, Any], outputs: Any) -> str:
    """Judge each operation of a table's check in order; the ✓ line's text (that of
    :func:`operation_judge` for a check of one operation)."""
    names = tuple(rows)
    if not isinstance(outputs, dict) or set(outputs) != set(names):
        fail(f"check of {', '.join(names)}", f"expected results for {names}; got "
             f"{show(outputs)}")
    texts = [operation_judge(rows[name], probes[name], outputs[name]) for name in names]
    kinks = "".join(f", {name} at exactly 0 too" for name in names if rows[name].at_zero)
    against = dict.fromkeys(row.against for row in rows.values())
    return texts[0] if len(names) == 1 else (
        f"{', '.join(names)}: forward values and the gradient of every input agree with "
        f"{' and '.join(against)} element by element and with finite differences "
        f"(shapes (3,), (2, 3) and (){kinks})")
