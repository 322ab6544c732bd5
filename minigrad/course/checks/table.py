"""Checks made of a table: one row (:class:`Operation`) per elementwise operation the student
writes, from which :func:`operations` makes the grader's split (see
:class:`~minigrad.course.checks.Split`; docs/guide/add-an-exercise.md adds a row). The probe
draws inputs and an output gradient ``g``, never an expected value; the lesson's run (lesson 1's
``_op_run``) sends back the forward value, the closure's gradients and finite differences of the
student's own forward pass; the judge (``checks/judges/table.py``, like the rows' references not
in the grader's sandbox) compares them with the reference.
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

    ``forward`` is the forward value's formula as the lesson writes it (told when the value is
    wrong; names of ``params`` in it are replaced by their values); ``reference(*inputs,
    *params) -> (value, [d value / d input_k, ...])``, elementwise on arrays, is named with
    :func:`~minigrad.course.checks.judged` (it lives in ``checks/judges/``); ``causes`` gives the
    usual cause of a wrong gradient, one per input; ``inputs`` the :data:`Domain` of each input
    (one case per shape of :data:`SHAPES`); ``seed`` the seed of the lesson's own cases.
    ``params`` are arguments that are numbers, not tensors (``power``'s ``p``; ``param_names``
    ``"p"``), a group of cases for each tuple; ``at_zero``, for a kink at 0, the cause of a wrong
    gradient there (a case with inputs exactly at 0 is added, and finite differences are not
    compared at 0); ``against`` what the reference is, in messages.
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
            cases = [{"inputs": arrays, "g": (rng or np.random.default_rng(G_SEED + k)).normal(
                size=arrays[0].shape)} for k, arrays in enumerate(drawn)]
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


def operation(exercise_id: str, table: Mapping[str, Operation], name: str, run: OperationRun,
              doc: str) -> Callable[..., None]:
    """The check of the one operation ``name`` of ``table``, recorded under ``exercise_id``:
    ``check(fn)``."""
    return operations(exercise_id, table, (name,), run, name, doc)


def operations(exercise_id: str, table: Mapping[str, Operation], names: Sequence[str],
               run: OperationRun, name: str = "", doc: str = "") -> Callable[..., None]:
    """The check of exercise ``exercise_id``: the operations ``names`` of ``table``, each run
    and judged as on its own, in order: ``check(fn_1, fn_2, ...)``, its parameters named as
    the operations (the grader passes the student's functions of those names)."""
    names = tuple(names)
    rows = {n: table[n] for n in names}
    judge = judged("table", "operations_judge")

    def run_all(probes: dict[str, Any], *functions: Callable[..., Any]) -> dict[str, Any]:
        if len(functions) != len(names):
            fail(f"check of {', '.join(names)}", f"expected {len(names)} operations "
                 f"({', '.join(names)}); got {len(functions)}", "pass them in that order")
        return {n: run(rows[n], probes[n], fn) for n, fn in zip(names, functions)}

    def check(*functions: Callable[..., Any]) -> None:
        """(not run: the split is the check)"""

    check.__name__ = check.__qualname__ = name or "_".join(names)
    check.__doc__ = doc or f"Exercise {exercise_id}: {', '.join(names)}."
    check.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])
    return exercise(exercise_id, split=Split(
        probe=lambda rng: {n: rows[n].probe(n, rng) for n in names}, run=run_all,
        judge=lambda probes, outputs: str(judge(rows, probes, outputs)),
        self_reported=f"{'the' if len(names) == 1 else 'each'} output's parents and closure, "
                      "no reference cycle, inputs left unchanged"))(check)
