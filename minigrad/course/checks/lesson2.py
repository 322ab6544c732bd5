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

Every check is split (:class:`minigrad.course.checks.Split`): the probe draws the cases (the
lesson's own in a notebook, fresh ones in the grader), the run calls the student's function on
them and sends back only what came out, and the judge computes the expected values and
compares. In the grader the judge runs in the grader's own process, so no expected value ever
enters the student's.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from minigrad.broadcast import unbroadcast as _ref_unbroadcast
from minigrad.course.checks import (CheckFailed, Split, assert_close, exercise, exercises, fail,
                                    judged, judged_cases, judges_names, numerical_vjp, received,
                                    require_student, run_cases, sent, show, student_code, value_at,
                                    with_globals)
from minigrad import functional as F
from minigrad.tensor import Tensor, op

__all__ = ["EXERCISES", "matmul", "sum", "reshape", "transpose", "reshape_and_transpose",
           "unbroadcast", "cross_entropy"]

EXERCISES = exercises(2)  # titles and points: the course's table, exercises.json

# The judges are in checks/judges/lesson2.py, which the grader's sandbox does not hold;
# these names import them when first called (see checks.judged).
_ce_judge = judged("lesson2", "_ce_judge")
_matmul_judge = judged("lesson2", "_matmul_judge")
_moves_both_judge = judged("lesson2", "_moves_both_judge")
_reshape_judge = judged("lesson2", "_reshape_judge")
_sum_judge = judged("lesson2", "_sum_judge")
_transpose_judge = judged("lesson2", "_transpose_judge")
_unbroadcast_judge = judged("lesson2", "_unbroadcast_judge")


# ---------------------------------------------------------------------------------------------
# What a check swaps in for the student's *other* functions while it runs: the engine's own
# operations (the engine is in the grader's sandbox anyway). The lesson's reference versions,
# which the demos show (``_REFERENCES``), are with the judges, outside the sandbox.

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
    env = {k: v for k, v in _SCAFFOLD.items() if k != name and k in fn.__globals__}
    return with_globals(fn, **env)


# ---------------------------------------------------------------------------------------------
# The split shared by the six checks
#
# Each check is a probe, a run and a judge (see :class:`minigrad.course.checks.Split`). The
# probe lists the cases (inputs and output gradients) as plain data. The run calls the
# student's function on each case, in order, and records what came out (forward value,
# gradients, finite differences of the student's own forward pass); what only its own process
# can see (the result is a node of the graph with the inputs as parents and a VJP of the
# student's, an input left unchanged, the student's code ran without an error) it checks
# itself. The judge recomputes the expected values from the probes and compares.
#
# The run stops at the first case where the student's code fails, and the judge reports that
# failure when it reaches it, after the values that came before: the first mistake is the one
# reported (see :func:`minigrad.course.checks.run_cases` and ``judged_cases``).

#: What a run checks on its own, for the grader's report.
_SELF_REPORTED = ("the result is a graph node made by op(), with the inputs as parents and a "
                  "VJP of yours")


def _robust(check: str, judge: Callable[[Any, Any], str]) -> Callable[[Any, Any], str]:
    """``judge``, turning any error that malformed outputs cause into a :class:`CheckFailed`."""
    @functools.wraps(judge)
    def judged(probes: Any, outputs: Any) -> str:
        try:
            return judge(probes, outputs)
        except CheckFailed:
            raise
        except Exception as error:  # noqa: BLE001 - malformed outputs are a failure, with why
            raise CheckFailed(f"{check}: the values sent back could not be judged "
                              f"({type(error).__name__}: {error})") from None
    return judged


def _split(check: str, probe: Callable[[np.random.Generator | None], dict[str, Any]],
           run: Callable[..., dict[str, Any]], judge: Callable[[Any, Any], str],
           self_reported: str = _SELF_REPORTED) -> Split:
    return Split(probe=probe, run=run, judge=_robust(check, judge), self_reported=self_reported)


def _floats(x: Any) -> np.ndarray:
    """A probe's array (a list after the trip into the sandbox) as float64."""
    return np.asarray(x, dtype=np.float64)


def _ints(x: Any) -> tuple[int, ...]:
    """A probe's shape or axes (lists after the trip into the sandbox) as a tuple."""
    return tuple(int(n) for n in x)


def _axis(x: Any) -> Any:
    """An ``axis`` argument as NumPy takes it: None, an int or a tuple."""
    return _ints(x) if isinstance(x, (list, tuple)) else x


def _leaf(a: np.ndarray) -> Tensor:
    return Tensor(np.array(a, dtype=np.float64), requires_grad=True)


# Run: one node


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
    """The gradients the node's VJP returns for output gradient ``g``, as plain data.

    ``cause`` is added to the message when the VJP raises a shape error.
    """
    try:
        with student_code(case, f"the VJP of your {name}"):
            grads = out._vjp(np.array(g, copy=True), *out._saved)  # type: ignore[misc]
    except CheckFailed as e:
        if cause and isinstance(e.__cause__, (ValueError, IndexError)):
            raise CheckFailed(f"{e}\n  usual cause: {cause}") from e.__cause__
        raise
    if not isinstance(grads, tuple):
        grads = (grads,)
    return [sent(grad) for grad in grads]


def _fd(fn: Callable[..., Any], case: str, name: str, out: Tensor, arrays: Sequence[np.ndarray],
        g: np.ndarray) -> list[Any] | None:
    """Finite differences of the student's forward ``fn`` (on arrays), for output gradient
    ``g``; None when the forward value has another shape than ``g`` (the judge says so)."""
    if np.shape(out.data) != g.shape:
        return None
    with student_code(case, f"your {name} (run again for finite differences)"):
        return numerical_vjp(lambda *xs: np.asarray(fn(*(Tensor(x) for x in xs)).data),
                             arrays, g)


# Judge: the values



# ---------------------------------------------------------------------------------------------
# 2.1 matmul

_MATMUL_SHAPES = [((2, 3), (3, 4)), ((1, 5), (5, 1)), ((4, 4), (4, 4)), ((3, 1), (1, 2))]


def _matmul_probe(rng: np.random.Generator | None) -> dict[str, Any]:
    """Four products: non-square, a row times a column, square, a column times a row."""
    if rng is None:
        shapes, draw = _MATMUL_SHAPES, np.random.default_rng(21)
    else:
        m, k, n, s, r = (int(d) for d in rng.integers(2, 6, size=5))
        shapes, draw = [((m, k), (k, n)), ((1, r), (r, 1)), ((s, s), (s, s)),
                        ((n, 1), (1, m))], rng
    cases = []
    for sa, sb in shapes:
        A, B = draw.normal(size=sa), draw.normal(size=sb)
        cases.append({"A": A, "B": B, "g": draw.normal(size=(sa[0], sb[1]))})
    return {"cases": cases}


def _matmul_case(k: int, n: int, A: np.ndarray, B: np.ndarray) -> str:
    return f"matmul, case {k + 1} of {n}: A {A.shape} @ B {B.shape}"


def _matmul_run(probes: dict[str, Any], matmul: Callable[..., Any]) -> dict[str, Any]:
    """2.1, run: the student's matmul on each pair: value, both gradients, finite differences."""
    fn = _in_scaffold(matmul, "matmul")
    cases = probes["cases"]

    def one(k: int, probe: dict[str, Any], result: dict[str, Any]) -> None:
        A, B, g = _floats(probe["A"]), _floats(probe["B"]), _floats(probe["g"])
        case = _matmul_case(k, len(cases), A, B)
        out = _node(fn, "matmul", case, (_leaf(A), _leaf(B)))
        result["forward"] = sent(out.data)
        result["grads"] = _vjp(out, g, case, "matmul", "the shapes must fit: dA = dC @ B.T is "
                               f"{g.shape} @ {B.T.shape}, dB = A.T @ dC is {A.T.shape} @ "
                               f"{g.shape}")
        result["fd"] = _fd(fn, case, "matmul", out, (A, B), g)
    return run_cases(cases, one)



@exercise("2.1", split=_split("matmul", _matmul_probe, _matmul_run, _matmul_judge))
def matmul(matmul: Callable[..., Any]) -> None:
    """Exercise 2.1: ``matmul(a, b)`` for matrices; ``dA = dC @ B.T``, ``dB = A.T @ dC``."""


# ---------------------------------------------------------------------------------------------
# 2.2 sum

_SUM_AXES = [(None, False), (0, False), (1, False), (-1, False), ((0, 2), False),
             (None, True), (1, True), ((0, 2), True)]


def _sum_probe(rng: np.random.Generator | None) -> dict[str, Any]:
    """One x and eight reductions of it: all axes, one (first, middle, last counted from the
    end), two, with and without keepdims; an output gradient for each."""
    axes: list[tuple[Any, bool]]
    shape: tuple[int, ...]
    if rng is None:
        draw, shape, axes = np.random.default_rng(22), (2, 3, 4), list(_SUM_AXES)
    else:
        draw = rng
        shape = tuple(int(d) for d in rng.integers(2, 5, size=int(rng.integers(3, 5))))
        nd = len(shape)
        pair = tuple(sorted(int(a) for a in rng.choice(nd, size=2, replace=False)))
        middle = int(rng.integers(1, nd))   # not axis 0, where g broadcasts back unchanged
        axes = [(None, False), (0, False), (middle, False), (-int(rng.integers(1, nd)), False),
                (pair, False), (None, True), (int(rng.integers(nd)), True), (pair, True)]
    X = draw.normal(size=shape)
    cases = []
    for axis, keepdims in axes:
        g = draw.normal(size=np.shape(np.sum(X, axis=axis, keepdims=keepdims)))
        cases.append({"axis": list(axis) if isinstance(axis, tuple) else axis,
                      "keepdims": keepdims, "g": g})
    return {"x": X, "cases": cases}


def _sum_case(k: int, n: int, axis: Any, keepdims: Any, X: np.ndarray) -> str:
    return (f"sum, case {k + 1} of {n}: sum(x, axis={axis}, keepdims={keepdims}) with x of "
            f"shape {X.shape}")


def _sum_run(probes: dict[str, Any], sum: Callable[..., Any]) -> dict[str, Any]:
    """2.2, run: the student's sum of x along each axis: value, gradient, finite differences."""
    fn = _in_scaffold(sum, "sum")
    X, cases = _floats(probes["x"]), probes["cases"]

    def one(k: int, probe: dict[str, Any], result: dict[str, Any]) -> None:
        axis, keepdims, g = _axis(probe["axis"]), bool(probe["keepdims"]), _floats(probe["g"])
        case = _sum_case(k, len(cases), axis, keepdims, X)
        out = _node(fn, "sum", case, (_leaf(X),), axis, keepdims)
        result["forward"] = sent(out.data)
        result["grads"] = _vjp(out, g, case, "sum", "g has the shape of the sum; put the summed "
                               "axes back as size 1 (np.expand_dims(g, axis), unless keepdims) "
                               "before np.broadcast_to(g, x.shape)")
        result["fd"] = _fd(lambda x: fn(x, axis, keepdims), case, "sum", out, (X,), g)
    return run_cases(cases, one)



@exercise("2.2", split=_split("sum", _sum_probe, _sum_run, _sum_judge))
def sum(sum: Callable[..., Any]) -> None:  # noqa: A001 - the student's function is called sum
    """Exercise 2.2: ``sum(x, axis=None, keepdims=False)`` spreads the gradient back."""


# ---------------------------------------------------------------------------------------------
# 2.3 reshape and transpose: one input, one argument, no finite differences (they move
# values without computing any)

_RESHAPES = [((2, 3, 4), (6, 4)), ((2, 3, 4), (24,)), ((6,), (2, 3)), ((2, 3, 4), (4, -1)),
             ((1, 5), (5, 1))]


def _reshape_shapes(rng: np.random.Generator) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Five reshapes like the lesson's: merge two axes, flatten, split, -1, row to column."""
    a, b, c, p, q, n = (int(d) for d in rng.integers(2, 6, size=6))
    return [((a, b, c), (a * b, c)), ((a, b, c), (a * b * c,)), ((p * q,), (p, q)),
            ((a, b, c), (c, -1)), ((1, n), (n, 1))]


def _transposes(rng: np.random.Generator) -> list[tuple[tuple[int, ...], tuple[int, ...] | None]]:
    """Five transposes like the lesson's: reversed (2-D, 3-D), two 3-cycles (not their own
    inverse), one swap; axes of distinct sizes, so that a wrong permutation shows."""
    def dims(n: int) -> tuple[int, ...]:
        return tuple(int(d) for d in rng.choice(np.arange(2, 7), size=n, replace=False))
    cycle = [(1, 2, 0), (2, 0, 1)][int(rng.integers(2))]
    swap = [(0, 2, 1), (1, 0, 2), (2, 1, 0)][int(rng.integers(3))]
    return [(dims(2), None), (dims(3), None), (dims(3), cycle),
            (dims(3), tuple(int(i) for i in np.argsort(cycle))), (dims(3), swap)]


_TRANSPOSES = [((2, 3), None), ((2, 3, 4), None), ((2, 3, 4), (1, 2, 0)), ((2, 3, 4), (2, 0, 1)),
               ((2, 3, 4), (0, 2, 1))]


def _moves_probe(name: str) -> Callable[[np.random.Generator | None], dict[str, Any]]:
    """reshape's or transpose's cases: x, the argument (the new shape, the axes) and g."""
    fixed: list[Any]
    draw_shapes: Callable[[np.random.Generator], list[Any]]
    moves: dict[str, Callable[..., Any]] = {"reshape": np.reshape, "transpose": np.transpose}
    move = moves[name]
    if name == "reshape":
        fixed, seed, draw_shapes = _RESHAPES, 23, _reshape_shapes
    else:
        fixed, seed, draw_shapes = _TRANSPOSES, 24, _transposes

    def probe(rng: np.random.Generator | None) -> dict[str, Any]:
        draw = np.random.default_rng(seed) if rng is None else rng
        cases = []
        for shape, arg in (fixed if rng is None else draw_shapes(rng)):
            X = draw.normal(size=shape)
            g = draw.normal(size=move(X, arg).shape)
            cases.append({"x": X, "arg": None if arg is None else list(arg), "g": g})
        return {"cases": cases}
    return probe


def _moves_case(name: str, k: int, n: int, X: np.ndarray, arg: tuple[Any, ...] | None) -> str:
    if name == "reshape":
        return f"reshape, case {k + 1} of {n}: x of shape {X.shape} to {arg}"
    return f"transpose, case {k + 1} of {n}: x of shape {X.shape}, axes={arg}"


def _moves_run(name: str) -> Callable[..., dict[str, Any]]:
    """reshape's or transpose's run: the value and gradient of each case."""
    cause = {"reshape": "reshape g to x's old shape, kept from before",
             "transpose": "permute g with the inverse permutation np.argsort(axes)"}[name]

    def run(probes: dict[str, Any], student: Callable[..., Any]) -> dict[str, Any]:
        fn = _in_scaffold(student, name)
        cases = probes["cases"]

        def one(k: int, probe: dict[str, Any], result: dict[str, Any]) -> None:
            X, g = _floats(probe["x"]), _floats(probe["g"])
            arg = None if probe["arg"] is None else _ints(probe["arg"])
            case = _moves_case(name, k, len(cases), X, arg)
            args = () if arg is None and name == "transpose" else (arg,)
            out = _node(fn, name, case, (_leaf(X),), *args)
            result["forward"] = sent(out.data)
            result["grads"] = _vjp(out, g, case, name, cause)
        return run_cases(cases, one)
    run.__name__ = run.__qualname__ = f"_{name}_run"
    return run



@exercise("2.3", split=_split("reshape", _moves_probe("reshape"), _moves_run("reshape"),
                              _reshape_judge))
def reshape(reshape: Callable[..., Any]) -> None:
    """Exercise 2.3, its reshape half (the lesson calls reshape_and_transpose)."""


@exercise("2.3", split=_split("transpose", _moves_probe("transpose"), _moves_run("transpose"),
                              _transpose_judge))
def transpose(transpose: Callable[..., Any]) -> None:
    """Exercise 2.3, its transpose half (the lesson calls reshape_and_transpose)."""


def _moves_both_probe(rng: np.random.Generator | None) -> dict[str, Any]:
    """The cases of reshape and of transpose, under their names."""
    return {name: _moves_probe(name)(rng) for name in ("reshape", "transpose")}


def _moves_both_run(probes: dict[str, Any], reshape: Callable[..., Any],
                    transpose: Callable[..., Any]) -> dict[str, Any]:
    """Both runs, each on its own cases."""
    return {"reshape": _moves_run("reshape")(probes["reshape"], reshape),
            "transpose": _moves_run("transpose")(probes["transpose"], transpose)}



@exercise("2.3", split=_split("reshape and transpose", _moves_both_probe, _moves_both_run,
                              _moves_both_judge))
def reshape_and_transpose(reshape: Callable[..., Any], transpose: Callable[..., Any]) -> None:
    """Exercise 2.3: ``reshape(x, shape)`` and ``transpose(x, axes=None)``, each undone."""


# ---------------------------------------------------------------------------------------------
# 2.4 unbroadcast

_PAIRS = [  # (shape of a, shape of b) in c = a + b: each one's gradient is unbroadcast from c's
    ((2, 3), (3,)), ((2, 3), (1, 3)), ((2, 3), (2, 1)), ((2, 3), (1, 1)), ((2, 3), ()),
    ((4, 2, 3), (2, 1)), ((4, 2, 3), (4, 1, 3)), ((4, 2, 3), (1, 2, 3)), ((5,), (1,)),
    ((3, 4), (3, 4)), ((2, 1, 3), (4, 1)), ((3, 1, 5), (1, 4, 1)),
]


def _random_pairs(rng: np.random.Generator) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Twelve pairs like the lesson's: ``a`` whole or stretched, ``b`` missing leading axes
    and with size-1 axes; a scalar and two equal shapes among them."""
    def stretched(shape: tuple[Any, ...], keep_all: bool) -> tuple[Any, ...]:
        drop = 0 if keep_all else int(rng.integers(0, len(shape) + 1))
        return tuple(1 if rng.random() < 0.4 else d for d in shape[drop:])

    pairs = []
    for i in range(10):
        c = tuple(int(d) for d in rng.integers(2, 6, size=int(rng.integers(1, 4))))
        pairs.append((stretched(c, True) if i % 3 == 2 else c, stretched(c, False)))
    c = tuple(int(d) for d in rng.integers(2, 6, size=2))
    return pairs + [(c, ()), (c, c)]


def _unbroadcast_probe(rng: np.random.Generator | None) -> dict[str, Any]:
    """The pairs, and for each the gradient of c = a + b."""
    draw = np.random.default_rng(25) if rng is None else rng
    pairs = _PAIRS if rng is None else _random_pairs(rng)
    return {"pairs": [{"a": list(sa), "b": list(sb),
                       "g": draw.normal(size=np.broadcast_shapes(sa, sb))} for sa, sb in pairs]}


def _unbroadcast_cases(probes: dict[str, Any]) -> list[dict[str, Any]]:
    """Two cases a pair: a's gradient, then b's, each unbroadcast from c's gradient g."""
    cases: list[dict[str, Any]] = []
    for pair in probes["pairs"]:
        sa, sb, g = _ints(pair["a"]), _ints(pair["b"]), _floats(pair["g"])
        for who, shape in (("a", sa), ("b", sb)):
            n = len(cases) + 1
            cases.append({"who": who, "shape": shape, "g": g, "name": (
                f"unbroadcast, case {n}: in c = a + b with a of shape {sa} and b of shape {sb}, "
                f"c has shape {g.shape}; unbroadcast(grad of shape {g.shape}, {shape}) gives "
                f"{who}'s gradient")})
    return cases


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



@exercise("2.4", split=_split("unbroadcast", _unbroadcast_probe, _unbroadcast_run,
                              _unbroadcast_judge,
                              self_reported="the gradient passed in is left unchanged"))
def unbroadcast(unbroadcast: Callable[..., Any]) -> None:
    """Exercise 2.4: ``unbroadcast(grad, shape)`` sums a gradient back to ``shape``."""


# ---------------------------------------------------------------------------------------------
# 2.5 cross-entropy

_HAND = [  # (logits, targets) whose loss and gradient a student can derive by hand; the
    # judge computes them like any other case (tests/course/checks/test_checks_lesson2.py
    # holds the numbers)
    ([[0.0, 0.0, 0.0, 0.0]], [2]),
    ([[0.0, np.log(3.0)]], [1]),
    ([[np.log(2.0), 0.0], [0.0, np.log(2.0)]], [0, 0]),
]
_LARGE = "logits of +-1e4 (exp(1e4) overflows float64)"
_OVERFLOW = ("exp of a large logit overflows: subtract each row's max before exp, and compute "
             "log-softmax as (z - max) - log(sum(exp(z - max))), never log(softmax(z))")


def _ce_probe(rng: np.random.Generator | None) -> dict[str, Any]:
    """Logits and targets: small ones (by hand in the lesson), random ones, and logits of
    +-1e4, where exp overflows."""
    cases: list[dict[str, Any]] = []
    z: Any
    t: Any
    shapes: list[tuple[int, int]]

    def add(label: str, z: Any, t: Any) -> None:
        cases.append({"label": label, "logits": np.asarray(z, dtype=np.float64),
                      "targets": np.asarray(t, dtype=np.int64)})

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


def _ce_case(k: int, n: int, probe: dict[str, Any]) -> str:
    return f"cross_entropy, case {k + 1} of {n}: {probe['label']}"


def _ce_run(probes: dict[str, Any], cross_entropy: Callable[..., Any]) -> dict[str, Any]:
    """2.5, run: the loss, the gradient for output gradients 1 and 0.5, finite differences.
    That NumPy reports no overflow is seen here."""
    fn = _in_scaffold(cross_entropy, "cross_entropy")
    cases = probes["cases"]

    def one(k: int, probe: dict[str, Any], result: dict[str, Any]) -> None:
        Z, T = _floats(probe["logits"]), np.asarray(probe["targets"], dtype=np.int64)
        case = _ce_case(k, len(cases), probe)
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            try:
                out = _node(fn, "cross_entropy", case, (_leaf(Z),), T)
            except CheckFailed as e:
                if isinstance(e.__cause__, FloatingPointError):
                    fail(case, f"NumPy reported {e.__cause__} in the forward pass", _OVERFLOW)
                raise
        result["loss"] = sent(out.data)
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            try:
                result["grads"] = _vjp(out, np.array(1.0), case, "cross_entropy")
            except CheckFailed as e:
                if isinstance(e.__cause__, FloatingPointError):
                    fail(case, f"NumPy reported {e.__cause__} in the backward pass", _OVERFLOW)
                raise
        if np.abs(Z).max() < 100:   # no finite differences at logits of +-1e4
            result["fd"] = _fd(lambda z: fn(z, T), case, "cross_entropy", out, (Z,),
                               np.array(1.0))
        result["grads_half"] = _vjp(out, np.array(0.5), case, "cross_entropy")
    return run_cases(cases, one)



@exercise("2.5", split=_split("cross_entropy", _ce_probe, _ce_run, _ce_judge,
                              self_reported=_SELF_REPORTED + "; NumPy reported no overflow"))
def cross_entropy(cross_entropy: Callable[..., Any]) -> None:
    """Exercise 2.5: ``cross_entropy(logits, targets)``: mean softmax cross-entropy as one
    node, stable for any logits, with the gradient ``(softmax - onehot) / N``."""


#: What moved to :mod:`minigrad.course.checks.judges.lesson2` (found here too, in a notebook).
_JUDGED = frozenset({
    '_ce_expected', '_compare_grad', '_finite_differences', '_forward', '_gradients',
    '_r_matmul', '_r_sum', '_r_reshape', '_r_transpose', '_log_softmax', '_r_cross_entropy',
    '_REFERENCES'})


__getattr__ = judges_names(__name__, _JUDGED)
