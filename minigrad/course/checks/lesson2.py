"""Checks for lesson 2, "Matrix products, reductions and broadcasting".

The student writes ``matmul``, ``sum``, ``reshape``, ``transpose``, ``unbroadcast`` (on arrays)
and a fused ``cross_entropy``, the others each one graph node made with :func:`minigrad.op`.
A check compares the forward value with NumPy (a wrong forward consistent with its backward
rule passes finite differences), the gradients the node's VJP returns for a random output
gradient with the formula and with finite differences of the student's own forward, and their
shapes with the inputs', naming the usual cause. The lesson's other functions are the engine's
while a check runs (:func:`~minigrad.course.checks.with_globals`): a mistake costs one exercise.

Every check is split (:class:`~minigrad.course.checks.Split`): the probe draws the cases (the
lesson's own in a notebook, fresh ones in the grader), the run calls the student's function on
them in order, sends back what came out and checks itself only what the student's process alone
can see, and the judge (``checks/judges/lesson2.py``, which the grader's sandbox does not hold)
computes the expected values and compares, reporting the first mistake.
"""
from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from minigrad.broadcast import unbroadcast as _ref_unbroadcast
from minigrad.course.checks import (CheckFailed, Split, exercise, exercises, fail, judged,
                                    judges_names, numerical_vjp, require_student, run_cases,
                                    sent, show, student_code, with_globals)
from minigrad import functional as F
from minigrad.tensor import Tensor

__all__ = ["EXERCISES", "matmul", "sum", "reshape", "transpose", "reshape_and_transpose",
           "unbroadcast", "cross_entropy"]

EXERCISES = exercises(2)  # titles and points: the course's table, exercises.json

#: What a check swaps in for the student's *other* functions while it runs: the engine's own
#: operations (the engine is in the sandbox anyway; the lesson's references are with the judges).
_SCAFFOLD: dict[str, Callable[..., Any]] = {
    "matmul": lambda a, b: a @ b,
    "sum": lambda x, axis=None, keepdims=False: x.sum(axis=axis, keepdims=keepdims),
    "reshape": lambda x, shape: x.reshape(*shape) if isinstance(shape, (tuple, list))
    else x.reshape(shape),
    "transpose": lambda x, axes=None: x.transpose() if axes is None else x.transpose(*axes),
    "unbroadcast": _ref_unbroadcast,
    "cross_entropy": F.cross_entropy,
}


def _in_scaffold(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """The student's ``fn`` with the lesson's *other* functions replaced by the engine's."""
    require_student(fn, name)
    return with_globals(fn, **{k: v for k, v in _SCAFFOLD.items()
                               if k != name and k in fn.__globals__})


#: What a run checks on its own, for the grader's report.
_SELF_REPORTED = ("the result is a graph node made by op(), with the inputs as parents and a "
                  "VJP of yours")
_OVERFLOW = ("exp of a large logit overflows: subtract each row's max before exp, and compute "
             "log-softmax as (z - max) - log(sum(exp(z - max))), never log(softmax(z))")


def _check(exercise_id: str, name: str, probe: Callable[..., dict[str, Any]], judge: str,
           run: Callable[..., dict[str, Any]] | None = None,
           self_reported: str = _SELF_REPORTED) -> Callable[[Callable[..., None]], Any]:
    """What makes a function the check ``name`` of an exercise: its split, of one node's run
    unless ``run`` is given, whose judge (``judge`` in judges/lesson2.py) turns any error that
    malformed outputs cause into a :class:`CheckFailed`."""
    found = judged("lesson2", judge)

    @functools.wraps(found)
    def robust(probes: Any, outputs: Any) -> str:
        try:
            return str(found(probes, outputs))
        except CheckFailed:
            raise
        except Exception as error:  # noqa: BLE001 - malformed outputs are a failure, with why
            raise CheckFailed(f"{name}: the values sent back could not be judged "
                              f"({type(error).__name__}: {error})") from None
    return exercise(exercise_id, split=Split(probe, run or _node_run(name), robust, self_reported))


def _floats(x: Any) -> np.ndarray:
    """A probe's array (a list after the trip into the sandbox) as float64."""
    return np.asarray(x, dtype=np.float64)


def _ints(x: Any) -> tuple[int, ...]:
    """A probe's shape or axes (lists after the trip into the sandbox) as a tuple."""
    return tuple(int(n) for n in x)


# ---------------------------------------------------------------------------------------------
# The five checks of one node: their cases, and the run they share


@dataclass(frozen=True)
class _Case:
    """A case of a check of one node, as the run and the judge both read it from the probe."""

    label: str                      # "matmul, case 1 of 4: A (2, 3) @ B (3, 4)"
    inputs: tuple[np.ndarray, ...]  # the arrays of the input tensors
    args: tuple[Any, ...]           # the other arguments (axis, shape, axes, targets)
    g: np.ndarray                   # the output gradient
    fd: bool                        # whether to compare with finite differences
    named: dict[str, Any]           # inputs, arguments and g by name, for the messages


#: Each check of one node: the names of its inputs and arguments, how its cases are labelled,
#: and the usual cause when its VJP raises a shape error.
_NODES = {
    "matmul": (("A", "B"), "A {A.shape} @ B {B.shape}",
               "the shapes must fit: dA = dC @ B.T is {g.shape} @ {B.T.shape}, dB = A.T @ dC "
               "is {A.T.shape} @ {g.shape}"),
    "sum": (("x", "axis", "keepdims"),
            "sum(x, axis={axis}, keepdims={keepdims}) with x of shape {x.shape}",
            "g has the shape of the sum; put the summed axes back as size 1 (np.expand_dims(g, "
            "axis), unless keepdims) before np.broadcast_to(g, x.shape)"),
    "reshape": (("x", "shape"), "x of shape {x.shape} to {shape}",
                "reshape g to x's old shape, kept from before"),
    "transpose": (("x", "axes"), "x of shape {x.shape}, axes={axes}",
                  "permute g with the inverse permutation np.argsort(axes)"),
    "cross_entropy": (("z", "targets"), "{label}", ""),
}


def _case(inputs: Sequence[np.ndarray], args: Sequence[Any], g: Any, fd: bool = True,
          **more: Any) -> dict[str, Any]:
    """A case of a probe, as plain data (shapes and axes as lists)."""
    return {"inputs": list(inputs), "g": np.asarray(g), "fd": fd, **more,
            "args": [list(a) if isinstance(a, tuple) else a for a in args]}


def _cases(name: str, probes: dict[str, Any]) -> list[_Case]:
    """The cases of check ``name`` in ``probes``."""
    names, label, _ = _NODES[name]
    cases = probes["cases"]
    read = []
    for k, case in enumerate(cases):
        inputs = tuple(_floats(x) for x in case["inputs"])
        args = tuple(_ints(a) if isinstance(a, (list, tuple)) else a for a in case["args"])
        g = _floats(case["g"])
        named = {"axes": None, "label": case.get("label"), "g": g,   # transpose's axes: None
                 **dict(zip(names, inputs + args))}                    # when not passed
        read.append(_Case(f"{name}, case {k + 1} of {len(cases)}: " + label.format(**named),
                          inputs, args, g, bool(case["fd"]), named))
    return read


def _node(fn: Callable[..., Any], name: str, case: str, inputs: Sequence[Tensor],
          *args: Any) -> Tensor:
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
    if (getattr(vjp, "__module__", None) or "").split(".")[0] == "minigrad":
        fail(case, f"the node was made by minigrad's own operation ({out._op}), not by a VJP "
                   "you wrote", "compute the value on arrays (.data) and pass your own vjp to "
                                "op(...); do not call the Tensor's built-in operations")
    parents = out._parents
    if len(parents) != len(inputs) or any(p is not t for p, t in zip(parents, inputs)):
        fail(case, f"the node's parents are {len(parents)} tensors, not the {len(inputs)} "
                   "input(s) themselves", "pass the input tensors as parents: op(value, (a, b), "
                                          "vjp) for two inputs, op(value, (x,), vjp) for one")
    return out


def _vjp(out: Tensor, g: np.ndarray, case: str, name: str, cause: str | None = None) -> list[Any]:
    """The gradients the node's VJP returns for output gradient ``g``, as plain data;
    ``cause`` is added to the message when the VJP raises a shape error."""
    try:
        with student_code(case, f"the VJP of your {name}"):
            grads = out._vjp(np.array(g, copy=True), *out._saved)  # type: ignore[misc]
    except CheckFailed as e:
        if cause and isinstance(e.__cause__, (ValueError, IndexError)):
            raise CheckFailed(f"{e}\n  usual cause: {cause}") from e.__cause__
        raise
    return [sent(grad) for grad in (grads if isinstance(grads, tuple) else (grads,))]


@contextlib.contextmanager
def _overflow(case: str, where: str, on: bool) -> Iterator[None]:
    """When ``on`` (cross_entropy), NumPy's overflow raises, and is reported with its cause."""
    if not on:
        yield
        return
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        try:
            yield
        except CheckFailed as e:
            if isinstance(e.__cause__, FloatingPointError):
                fail(case, f"NumPy reported {e.__cause__} in the {where} pass", _OVERFLOW)
            raise


def _node_run(name: str) -> Callable[..., dict[str, Any]]:
    """The run of check ``name``: for each case, the student's forward value (cross_entropy's
    loss), the gradients its VJP returns for g, finite differences of its own forward where
    the case asks for them, and (cross_entropy) the gradients for an output gradient of 0.5."""
    ce = name == "cross_entropy"

    def run(probes: dict[str, Any], student: Callable[..., Any]) -> dict[str, Any]:
        fn = _in_scaffold(student, name)

        def one(k: int, c: _Case, result: dict[str, Any]) -> None:
            leaves = [Tensor(np.array(x), requires_grad=True) for x in c.inputs]
            with _overflow(c.label, "forward", ce):
                out = _node(fn, name, c.label, leaves, *c.args)
            result["loss" if ce else "forward"] = sent(out.data)
            with _overflow(c.label, "backward", ce):
                result["grads"] = _vjp(out, c.g, c.label, name, _NODES[name][2].format(**c.named))
            if c.fd and np.shape(out.data) != c.g.shape:
                result["fd"] = None     # the judge tells the forward value's shape first
            elif c.fd:
                with student_code(c.label, f"your {name} (run again for finite differences)"):
                    result["fd"] = numerical_vjp(
                        lambda *xs: np.asarray(fn(*map(Tensor, xs), *c.args).data), c.inputs, c.g)
            if ce:
                result["grads_half"] = _vjp(out, 0.5 * c.g, c.label, name)
        return run_cases(_cases(name, probes), one)
    run.__name__ = run.__qualname__ = f"_{name}_run"
    return run



# ---------------------------------------------------------------------------------------------
# The probes: the lesson's cases from a fixed seed (rng is None), or fresh ones like them


def _drawn(draw: np.random.Generator, specs: Sequence[tuple[Sequence[Any], tuple[Any, ...]]],
           out_shape: Callable[..., tuple[int, ...]], fd: bool = True) -> dict[str, Any]:
    """The cases of ``specs`` (the shapes of the inputs, the other arguments): the inputs
    drawn, then g, of the shape ``out_shape(*inputs, *args)``."""
    cases = []
    for shapes, args in specs:
        inputs = [draw.normal(size=shape) for shape in shapes]
        cases.append(_case(inputs, args, draw.normal(size=out_shape(*inputs, *args)), fd))
    return {"cases": cases}


def _matmul_probe(rng: np.random.Generator | None) -> dict[str, Any]:
    """2.1: four products: non-square, a row times a column, square, a column times a row."""
    if rng is None:
        shapes = [((2, 3), (3, 4)), ((1, 5), (5, 1)), ((4, 4), (4, 4)), ((3, 1), (1, 2))]
    else:
        m, k, n, s, r = (int(d) for d in rng.integers(2, 6, size=5))
        shapes = [((m, k), (k, n)), ((1, r), (r, 1)), ((s, s), (s, s)), ((n, 1), (1, m))]
    return _drawn(np.random.default_rng(21) if rng is None else rng,
                  [(pair, ()) for pair in shapes], lambda A, B: (A.shape[0], B.shape[1]))


def _sum_probe(rng: np.random.Generator | None) -> dict[str, Any]:
    """2.2: one x and eight reductions of it: all axes, one (first, middle, last counted from
    the end), two, with and without keepdims; an output gradient for each."""
    axes: list[tuple[Any, bool]]
    shape: tuple[int, ...]
    if rng is None:
        draw, shape = np.random.default_rng(22), (2, 3, 4)
        axes = [(None, False), (0, False), (1, False), (-1, False), ((0, 2), False),
                (None, True), (1, True), ((0, 2), True)]
    else:
        draw, shape = rng, _ints(rng.integers(2, 5, size=int(rng.integers(3, 5))))
        nd = len(shape)
        pair = tuple(sorted(int(a) for a in rng.choice(nd, size=2, replace=False)))
        middle = int(rng.integers(1, nd))   # not axis 0, where g broadcasts back unchanged
        axes = [(None, False), (0, False), (middle, False), (-int(rng.integers(1, nd)), False),
                (pair, False), (None, True), (int(rng.integers(nd)), True), (pair, True)]
    X = draw.normal(size=shape)
    return {"cases": [_case((X,), (axis, keepdims),
                            draw.normal(size=np.shape(np.sum(X, axis=axis, keepdims=keepdims))))
                      for axis, keepdims in axes]}


def _reshapes(rng: np.random.Generator | None) -> list[tuple[Any, Any]]:
    """Five reshapes: merge two axes, flatten, split, -1, row to column."""
    a, b, c, p, q, n = (2, 3, 4, 2, 3, 5) if rng is None else \
        (int(d) for d in rng.integers(2, 6, size=6))
    return [((a, b, c), (a * b, c)), ((a, b, c), (a * b * c,)), ((p * q,), (p, q)),
            ((a, b, c), (c, -1)), ((1, n), (n, 1))]


def _transposes(rng: np.random.Generator | None) -> list[tuple[Any, Any]]:
    """Five transposes: reversed (2-D, 3-D), two 3-cycles (not their own inverse), one swap;
    fresh ones on axes of distinct sizes, so that a wrong permutation shows."""
    def dims(n: int) -> tuple[int, ...]:
        return (2, 3, 4)[:n] if rng is None else \
            _ints(rng.choice(np.arange(2, 7), size=n, replace=False))
    cycle = (1, 2, 0) if rng is None else [(1, 2, 0), (2, 0, 1)][int(rng.integers(2))]
    swap = (0, 2, 1) if rng is None else [(0, 2, 1), (1, 0, 2), (2, 1, 0)][int(rng.integers(3))]
    return [(dims(2), None), (dims(3), None), (dims(3), cycle), (dims(3), _ints(np.argsort(cycle))),
            (dims(3), swap)]


def _moves_probe(name: str) -> Callable[[np.random.Generator | None], dict[str, Any]]:
    """2.3: reshape's or transpose's cases: x, the new shape or the axes (none for None), g;
    no finite differences (they move values without computing any)."""
    shapes: Callable[..., list[tuple[Any, Any]]]
    move: Callable[..., Any]
    seed, shapes, move = (23, _reshapes, np.reshape) if name == "reshape" else \
        (24, _transposes, np.transpose)

    def probe(rng: np.random.Generator | None) -> dict[str, Any]:
        specs = [((shape,), () if arg is None else (arg,)) for shape, arg in shapes(rng)]
        return _drawn(np.random.default_rng(seed) if rng is None else rng, specs,
                      lambda X, *arg: move(X, *arg).shape, fd=False)
    return probe


def _moves_both_probe(rng: np.random.Generator | None) -> dict[str, Any]:
    """2.3, as its check cell calls it: the cases of reshape and of transpose, by name."""
    return {name: _moves_probe(name)(rng) for name in ("reshape", "transpose")}


def _random_pairs(rng: np.random.Generator) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Twelve pairs like the lesson's: ``a`` whole or stretched, ``b`` missing leading axes
    and with size-1 axes; a scalar and two equal shapes among them."""
    def stretched(shape: tuple[Any, ...], keep_all: bool) -> tuple[Any, ...]:
        drop = 0 if keep_all else int(rng.integers(0, len(shape) + 1))
        return tuple(1 if rng.random() < 0.4 else d for d in shape[drop:])

    pairs = []
    for i in range(10):
        c = _ints(rng.integers(2, 6, size=int(rng.integers(1, 4))))
        pairs.append((stretched(c, True) if i % 3 == 2 else c, stretched(c, False)))
    c = _ints(rng.integers(2, 6, size=2))
    return pairs + [(c, ()), (c, c)]


def _unbroadcast_probe(rng: np.random.Generator | None) -> dict[str, Any]:
    """2.4: pairs of shapes of a and b, and for each the gradient of c = a + b."""
    draw = np.random.default_rng(25) if rng is None else rng
    pairs = [((2, 3), (3,)), ((2, 3), (1, 3)), ((2, 3), (2, 1)), ((2, 3), (1, 1)), ((2, 3), ()),
             ((4, 2, 3), (2, 1)), ((4, 2, 3), (4, 1, 3)), ((4, 2, 3), (1, 2, 3)), ((5,), (1,)),
             ((3, 4), (3, 4)), ((2, 1, 3), (4, 1)), ((3, 1, 5), (1, 4, 1))] \
        if rng is None else _random_pairs(rng)
    return {"pairs": [{"a": list(sa), "b": list(sb),
                       "g": draw.normal(size=np.broadcast_shapes(sa, sb))} for sa, sb in pairs]}


def _unbroadcast_cases(probes: dict[str, Any]) -> list[dict[str, Any]]:
    """Two cases a pair: a's gradient, then b's, each unbroadcast from c's gradient g."""
    cases: list[dict[str, Any]] = []
    for pair in probes["pairs"]:
        sa, sb, g = _ints(pair["a"]), _ints(pair["b"]), _floats(pair["g"])
        for who, shape in (("a", sa), ("b", sb)):
            cases.append({"who": who, "shape": shape, "g": g, "name": (
                f"unbroadcast, case {len(cases) + 1}: in c = a + b with a of shape {sa} and b "
                f"of shape {sb}, c has shape {g.shape}; unbroadcast(grad of shape {g.shape}, "
                f"{shape}) gives {who}'s gradient")})
    return cases


#: Logits and targets whose loss and gradient a student can derive by hand; the judge computes
#: them like any other case (tests/course/checks/test_checks_lesson2.py holds the numbers).
_HAND = [([[0.0, 0.0, 0.0, 0.0]], [2]), ([[0.0, np.log(3.0)]], [1]),
         ([[np.log(2.0), 0.0], [0.0, np.log(2.0)]], [0, 0])]
_LARGE = "logits of +-1e4 (exp(1e4) overflows float64)"


def _ce_probe(rng: np.random.Generator | None) -> dict[str, Any]:
    """2.5: small logits (by hand in the lesson), random ones, and logits of +-1e4, where exp
    overflows (no finite differences there)."""
    cases: list[dict[str, Any]] = []
    z: Any
    t: Any

    def add(label: str, z: Any, t: Any) -> None:
        z = np.asarray(z, dtype=np.float64)
        cases.append(_case((z,), (np.asarray(t, dtype=np.int64),), np.array(1.0),
                           fd=bool(np.abs(z).max() < 100), label=label))

    if rng is None:
        for z, t in _HAND:
            add(f"by hand: logits {show(np.asarray(z))}, targets {t}", z, t)
        draw, shapes = np.random.default_rng(26), [(4, 5), (1, 3)]
    else:
        for _ in range(2):
            z = rng.integers(-2, 3, size=(int(rng.integers(1, 4)), int(rng.integers(2, 5))))
            t = rng.integers(0, z.shape[1], size=z.shape[0])
            add(f"small logits {show(z.astype(float))}, targets {t.tolist()}", z, t)
        draw = rng
        shapes = [(int(rng.integers(2, 7)), int(rng.integers(2, 7))) for _ in range(2)]
        shapes.append((1, int(rng.integers(2, 7))))
    for n_rows, n_cls in shapes:
        z = draw.normal(scale=2.0, size=(n_rows, n_cls))
        t = draw.integers(0, n_cls, size=n_rows)
        add(f"random logits of shape {z.shape}, targets {t.tolist()}", z, t)
    if rng is None:
        add(_LARGE, [[1e4, -1e4, 0.0], [-1e4, 1e4, 0.0], [1e4, 1e4, -1e4]], [0, 0, 2])
    else:
        n_rows, n_cls = (int(d) for d in rng.integers(2, 5, size=2))
        z = rng.choice([-1e4, 0.0, 1e4], size=(n_rows, n_cls))
        z[np.arange(n_rows), rng.integers(0, n_cls, size=n_rows)] = 1e4
        add(_LARGE, z, rng.integers(0, n_cls, size=n_rows))
    return {"cases": cases}


# ---------------------------------------------------------------------------------------------
# The runs that are not one node's, and the checks


def _moves_both_run(probes: dict[str, Any], reshape: Callable[..., Any],
                    transpose: Callable[..., Any]) -> dict[str, Any]:
    """2.3, as its check cell calls it: both runs, each on its own cases."""
    return {"reshape": _node_run("reshape")(probes["reshape"], reshape),
            "transpose": _node_run("transpose")(probes["transpose"], transpose)}


def _unbroadcast_run(probes: dict[str, Any], unbroadcast: Callable[..., Any]) -> dict[str, Any]:
    """2.4, run: the student's unbroadcast of each gradient; that it leaves g unchanged is
    seen here."""
    fn = _in_scaffold(unbroadcast, "unbroadcast")

    def one(k: int, probe: dict[str, Any], result: dict[str, Any]) -> None:
        g, case = probe["g"].copy(), probe["name"]
        with student_code(case, "your unbroadcast"):
            got = fn(g, probe["shape"])
        if not np.array_equal(g, probe["g"]):
            fail(case, "unbroadcast changed the gradient it was given, in place",
                 "compute a new array (grad.sum(...)); never write into grad")
        result["got"] = sent(got)
    return run_cases(_unbroadcast_cases(probes), one)


@_check("2.1", "matmul", _matmul_probe, "_matmul_judge")
def matmul(matmul: Callable[..., Any]) -> None:
    """Exercise 2.1: ``matmul(a, b)`` for matrices; ``dA = dC @ B.T``, ``dB = A.T @ dC``."""


@_check("2.2", "sum", _sum_probe, "_sum_judge")
def sum(sum: Callable[..., Any]) -> None:  # noqa: A001 - the student's function is called sum
    """Exercise 2.2: ``sum(x, axis=None, keepdims=False)`` spreads the gradient back."""


@_check("2.3", "reshape", _moves_probe("reshape"), "_reshape_judge")
def reshape(reshape: Callable[..., Any]) -> None:
    """Exercise 2.3, its reshape half (the lesson calls reshape_and_transpose)."""


@_check("2.3", "transpose", _moves_probe("transpose"), "_transpose_judge")
def transpose(transpose: Callable[..., Any]) -> None:
    """Exercise 2.3, its transpose half (the lesson calls reshape_and_transpose)."""


@_check("2.3", "reshape and transpose", _moves_both_probe, "_moves_both_judge", _moves_both_run)
def reshape_and_transpose(reshape: Callable[..., Any], transpose: Callable[..., Any]) -> None:
    """Exercise 2.3: ``reshape(x, shape)`` and ``transpose(x, axes=None)``, each undone."""


@_check("2.4", "unbroadcast", _unbroadcast_probe, "_unbroadcast_judge", _unbroadcast_run,
        "the gradient passed in is left unchanged")
def unbroadcast(unbroadcast: Callable[..., Any]) -> None:
    """Exercise 2.4: ``unbroadcast(grad, shape)`` sums a gradient back to ``shape``."""


@_check("2.5", "cross_entropy", _ce_probe, "_ce_judge",
        self_reported=_SELF_REPORTED + "; NumPy reported no overflow")
def cross_entropy(cross_entropy: Callable[..., Any]) -> None:
    """Exercise 2.5: ``cross_entropy(logits, targets)``: mean softmax cross-entropy as one
    node, stable for any logits, with the gradient ``(softmax - onehot) / N``."""


#: What is in :mod:`minigrad.course.checks.judges.lesson2` (found here too, in a notebook).
_JUDGED = frozenset({
    "_REFERENCES", "_r_matmul", "_r_sum", "_r_reshape", "_r_transpose", "_log_softmax",
    "_r_cross_entropy", "_ce_expected", "_CE_SLIPS", "_ROWS", "_UNBROADCAST_SHAPE",
    "_gradients", "_finite_differences", "_compare_grad", "_node_judge", "_ce_judge",
    "_matmul_judge", "_sum_judge", "_reshape_judge", "_transpose_judge", "_moves_both_judge",
    "_unbroadcast_judge"})

__getattr__ = judges_names(__name__, _JUDGED)
