"""Checks made of a table: one row per operation the student writes, from which the probe, the
run and the judge of the grader's split (:class:`~minigrad.course.checks.Split`) are made.

A row (:class:`Operation`) says how to draw the inputs of the operation's cases, the formula of
its forward value (named when the value is wrong), the reference computation and the usual
cause of each wrong gradient. The reference is named with :func:`~minigrad.course.checks.judged`
and lives in ``checks/judges/lessonN.py``: the grader's sandbox does not hold it, nor the judge
that compares (``checks/judges/table.py``). From a table, :func:`operations` makes the check of
an exercise:

* the **probe** draws each operation's cases (the lesson's own from the row's ``seed`` in a
  notebook, fresh ones from the grader's secret seed): input arrays and an output gradient
  ``g``, never an expected value;
* the **run** is the lesson's (its scaffold: lesson 1's ``_op_run`` puts the student's
  operation into the reference ``Tensor``): it calls the student's operation on each case and sends back the forward value,
  the gradients its closure returns for ``g`` and finite differences of its own forward pass,
  as plain data, checking by itself only what its process alone can see;
* the **judge** computes the reference value and gradients and compares, case by case, with
  the cause of the row; malformed data is a :class:`~minigrad.course.checks.CheckFailed`.

Adding an exercise (see docs/guide/add-an-exercise.md), in ``checks/lesson1.py``::

    OPERATIONS["sin"] = Operation(
        forward="np.sin(a.data)", inputs=(normal,), seed=20, against="NumPy",
        reference=judged("lesson1", "sin_reference"),
        causes=("d sin(x)/dx = cos(x): the gradient is g * np.cos(a.data)",))
    sin_cos = operations("1.6", OPERATIONS, ("sin", "cos"), _op_run)

and in ``checks/judges/lesson1.py`` the reference, elementwise: the value and the derivative of
the value with respect to each input::

    def sin_reference(a):
        return np.sin(a), [np.cos(a)]
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from minigrad.course.checks import Split, exercise, fail, judged

__all__ = ["Operation", "Domain", "normal", "positive", "away_from_zero", "not_near_zero",
           "operations", "operation", "case_label", "each_case", "LETTERS", "SHAPES"]

#: Draws one input array of a given shape.
Domain = Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]
#: The shapes of every operation's cases: a vector, a matrix, a scalar.
SHAPES: tuple[tuple[int, ...], ...] = ((3,), (2, 3), ())
#: The names of the inputs, in messages: ``a``, ``b``.
LETTERS = "abcd"
#: Where the output gradient of case ``k`` comes from in a notebook: ``default_rng(G_SEED + k)``.
G_SEED = 100


def normal(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Standard normal values."""
    return rng.normal(size=shape)


def positive(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Values in [0.5, 2.5) (for log, and powers that are not whole)."""
    return rng.uniform(0.5, 2.5, size=shape)


def away_from_zero(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Values of either sign, at least 0.5 from zero (for a divisor)."""
    return rng.uniform(0.5, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def not_near_zero(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Normal values, none within 0.1 of zero (where relu has its kink)."""
    x = rng.normal(size=shape)
    return np.where(np.abs(x) < 0.1, 0.5, x)


@dataclass(frozen=True)
class Operation:
    """One row of a table of operations: an elementwise operation the student writes.

    Parameters
    ----------
    forward : str
        The forward value's formula, as the lesson writes it (``"np.sin(a.data)"``); a wrong
        forward value is told to be it. Names of ``params`` in it are replaced by their values.
    reference : callable
        ``reference(*inputs, *params) -> (value, [d value / d input_k, ...])`` on arrays,
        elementwise: what the judge compares with (the expected gradient of input ``k`` is
        ``g * derivative_k``). Name it with :func:`~minigrad.course.checks.judged`, so that it
        lives in ``checks/judges/`` and never in the grader's sandbox.
    causes : tuple of str
        The usual cause of a wrong gradient, one per input.
    inputs : tuple of Domain
        How to draw each input (:func:`normal`, :func:`positive`, ...): one case per shape of
        :data:`SHAPES`.
    seed : int
        The seed of the lesson's own cases (the notebook's messages are reproducible).
    params : tuple of tuples
        Arguments that are numbers, not tensors (``power``'s exponent): a group of cases for
        each tuple. ``((),)``, the default: none.
    param_names : str
        Their names, in the order of each tuple (``"p"``).
    at_zero : str
        For an operation with a kink at 0: the usual cause of a wrong gradient there. A case
        with inputs exactly at 0 is added; finite differences are not compared at 0.
    against : str
        What the reference is, in messages.
    """

    forward: str
    reference: Callable[..., tuple[Any, list[Any]]]
    causes: tuple[str, ...]
    inputs: tuple[Domain, ...]
    seed: int
    params: tuple[tuple[float, ...], ...] = ((),)
    param_names: str = ""
    at_zero: str = ""
    against: str = "the scalar engine"

    def formula(self, params: Sequence[Any]) -> str:
        """The forward formula with the values of ``params`` in place of their names."""
        text = self.forward
        for name, value in zip(self.param_names.split(), params):
            text = text.replace(f" {name}", f" {value}")
        return text

    def probe(self, name: str, rng: np.random.Generator | None) -> dict[str, Any]:
        """The cases of operation ``name``: ``{"op": name, "groups": [{"extra": params,
        "cases": [{"inputs": [...], "g": ...}, ...]}, ...]}`` (``rng`` None: the lesson's)."""
        groups = []
        for j, extra in enumerate(self.params):
            draw = rng if rng is not None else np.random.default_rng(self.seed + 1000 * j)
            drawn = [[domain(draw, shape) for domain in self.inputs] for shape in SHAPES]
            if self.at_zero:       # inputs exactly at 0, where the gradient is 0 by convention
                drawn.append([np.array([-1.0, 0.0, 2.0, 0.0]) for _ in self.inputs])
            cases = []
            for k, arrays in enumerate(drawn):
                g = (rng if rng is not None else np.random.default_rng(G_SEED + k)).normal(
                    size=arrays[0].shape)
                cases.append({"inputs": arrays, "g": g})
            groups.append({"extra": list(extra), "cases": cases})
        return {"op": name, "groups": groups}


def case_label(name: str, k: int, n: int, inputs: Sequence[Any], extra: Sequence[Any]) -> str:
    """``mul, case 1 of 3: mul(a, b) with inputs of shape (3,)``."""
    call = f"{name}({', '.join(LETTERS[:len(inputs)])}{''.join(f', {e}' for e in extra)})"
    return (f"{name}, case {k + 1} of {n}: {call} with inputs of shape "
            f"{tuple(np.shape(inputs[0]))}")


def each_case(probes: dict[str, Any]) -> Iterator[tuple[int, str, list[np.ndarray],
                                                         tuple[Any, ...], np.ndarray]]:
    """Each case of an operation's probes: ``(group, label, input arrays, params, g)``."""
    for j, group in enumerate(probes["groups"]):
        extra = tuple(group["extra"])
        for k, case in enumerate(group["cases"]):
            arrays = [np.asarray(a, dtype=np.float64) for a in case["inputs"]]
            label = case_label(probes["op"], k, len(group["cases"]), arrays, extra)
            yield j, label, arrays, extra, np.asarray(case["g"], dtype=np.float64)


#: A lesson's run of one operation: ``run(row, probes, student_fn) -> {"groups": [[{"forward":
#: ..., "grads": [...], "fd": [...]}, ...], ...]}`` (see :func:`each_case`).
OperationRun = Callable[[Operation, dict[str, Any], Callable[..., Any]], dict[str, Any]]

_SELF_REPORTED = "the output's parents and closure, no reference cycle, inputs left unchanged"


def _table_judge(name: str, *bound: Any) -> Callable[[Any, Any], str]:
    """The judge ``name`` of ``judges/table.py`` with ``bound`` first, imported when called."""
    judge = judged("table", name)

    def bound_judge(probes: Any, outputs: Any) -> str:
        return str(judge(*bound, probes, outputs))

    bound_judge.__name__ = bound_judge.__qualname__ = name
    return bound_judge


def operation(exercise_id: str, table: Mapping[str, Operation], name: str, run: OperationRun,
              doc: str) -> Callable[..., None]:
    """The check of the one operation ``name`` of ``table``, recorded under ``exercise_id``:
    ``check(fn)``."""
    row = table[name]
    split = Split(probe=lambda rng: row.probe(name, rng),
                  run=lambda probes, fn: run(row, probes, fn),
                  judge=_table_judge("operation_judge", row), self_reported=_SELF_REPORTED)

    def check(operation: Callable[..., Any]) -> None:
        """(not run: the split is the check)"""

    check.__name__ = check.__qualname__ = name
    check.__doc__ = doc
    return exercise(exercise_id, split=split)(check)


def operations(exercise_id: str, table: Mapping[str, Operation], names: Sequence[str],
               run: OperationRun, name: str = "", doc: str = "") -> Callable[..., None]:
    """The check of exercise ``exercise_id``: the operations ``names`` of ``table``, each run
    and judged as on its own, in order: ``check(fn_1, fn_2, ...)``, its parameters named as
    the operations (the grader passes the student's functions of those names)."""
    names = tuple(names)
    rows = {n: table[n] for n in names}

    def probe(rng: np.random.Generator | None) -> dict[str, Any]:
        return {n: rows[n].probe(n, rng) for n in names}

    def run_all(probes: dict[str, Any], *functions: Callable[..., Any]) -> dict[str, Any]:
        if len(functions) != len(names):
            fail(f"check of {', '.join(names)}", f"expected {len(names)} operations "
                 f"({', '.join(names)}); got {len(functions)}", "pass them in that order")
        return {n: run(rows[n], probes[n], fn) for n, fn in zip(names, functions)}

    split = Split(probe=probe, run=run_all, judge=_table_judge("operations_judge", rows),
                  self_reported="each " + _SELF_REPORTED.replace("the output's", "output's"))

    def check(*functions: Callable[..., Any]) -> None:
        """(not run: the split is the check)"""

    check.__name__ = check.__qualname__ = name or "_".join(names)
    check.__doc__ = doc or f"Exercise {exercise_id}: {', '.join(names)}."
    check.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])
    return exercise(exercise_id, split=split)(check)
