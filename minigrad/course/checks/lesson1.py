"""Checks for lesson 1, "From scalars to tensors": the probes and runs, and what the judges
(``checks/judges/lesson1.py``, not in the grader's sandbox) share with them.

Each check puts the one piece it is given (``Tensor``, ``topological_order``, ``backward``, an
operation of the tables of 1.4 and 1.5) into a *reference scaffold*, so a mistake costs only its
own exercise. Operations are compared element by element with the scalar engine
(:class:`minigrad.course.scalar.Var`), which catches a wrong forward pass that is consistent
with its backward rule, and with finite differences of the student's own forward pass.
"""
from __future__ import annotations

import contextlib
import gc
import inspect
import sys
import weakref
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from minigrad._utils import topological_order as _ref_topological_order
from minigrad.course.checks import (CheckFailed, Split, exercise, exercises, fail, judged,
                                    judges_names, numerical_vjp, require_student, sent, show,
                                    student_code, with_globals)
from minigrad.course.checks.table import (LETTERS, Operation, away_from_zero, each_case, normal,
                                          not_near_zero, operation, operations, positive)
from minigrad.course.scalar import Var  # noqa: F401 - the judges' reference, never a run's

__all__ = ["EXERCISES", "tensor_class", "topological_order", "backward", "binary_ops",
           "unary_ops", "add", "sub", "mul", "div", "power", "exp", "log", "tanh", "relu",
           "ReferenceTensor"]

EXERCISES = exercises(1)  # titles and points: the course's table, exercises.json

#: The operations each table exercise covers, in the order the check takes them.
BINARY = ("add", "sub", "mul", "div")
UNARY = ("exp", "log", "tanh", "relu")

# A chain deeper than Python's recursion limit, held at 1000 (a fresh interpreter's) while a
# check runs: a recursive solution fails the same way everywhere, and cannot crash it.
RECURSION_LIMIT = 1000
DEPTH = 2 * RECURSION_LIMIT


@contextlib.contextmanager
def _recursion_limit(limit: int = RECURSION_LIMIT) -> Iterator[None]:
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, len(inspect.stack(0)) + 100))
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


class ReferenceTensor:
    """The lesson's ``Tensor``, done right: what a student's piece is plugged into."""

    def __init__(self, data: Any, parents: Sequence["ReferenceTensor"] = (),
                 vjp: Callable[..., Any] | None = None, name: str = "") -> None:
        self.data = np.asarray(data, dtype=np.float64)
        self.grad: np.ndarray | None = None
        self.parents, self.vjp, self.name = tuple(parents), vjp, name

    def __repr__(self) -> str:
        return f"Tensor({self.name or show(self.data)})"


ReferenceTensor.__name__ = ReferenceTensor.__qualname__ = "Tensor"  # as the student knows it
T = ReferenceTensor


# The reference operations the graphs are made of (the reference order, the repository's one
# topological order, is ``minigrad._utils.topological_order``: the solution of exercise 1.2).
def _r_add(a: T, b: T, name: str = "") -> T:
    return T(a.data + b.data, (a, b), lambda g: (g, g), name)


def _r_mul(a: T, b: T, name: str = "") -> T:
    return T(a.data * b.data, (a, b), lambda g: (g * b.data, g * a.data), name)


def _r_exp(a: T, name: str = "") -> T:
    y = np.exp(a.data)
    return T(y, (a,), lambda g: (g * y,), name)


def _r_tanh(a: T, name: str = "") -> T:
    y = np.tanh(a.data)
    return T(y, (a,), lambda g: (g * (1 - y * y),), name)


def _seed_probe(notebook_seed: int) -> Callable[[np.random.Generator | None], dict[str, Any]]:
    """A probe that is one seed, the lesson's own or the grader's: both halves build on it."""
    return lambda rng: {"seed": notebook_seed if rng is None else int(rng.integers(2**31))}


# 1.1 The Tensor class

def _tensor_datas(seed: int) -> list[Any]:
    """What 1.1 builds tensors from: a list of ints, a float, an integer 2-D array."""
    if seed == 0:
        return [[1, 2, 3], 2.5, np.arange(6).reshape(2, 3)]
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 6))
    return [[int(v) for v in rng.integers(-9, 10, size=n)], round(float(rng.normal()), 3),
            rng.integers(-5, 6, size=(int(rng.integers(1, 4)), int(rng.integers(2, 5))))]


def _tensor_run(probes: dict[str, Any], Tensor: type) -> dict[str, Any]:
    """1.1, run: build tensors; check what only this process can see; return their .data."""
    require_student(Tensor, "Tensor")
    if not isinstance(Tensor, type):
        fail("Tensor", f"expected your class Tensor itself; got {show(Tensor)}")
    datas = []
    for data in _tensor_datas(probes["seed"]):
        case = f"Tensor, case Tensor({show(data)})"
        with student_code(case, "Tensor(data)"):
            t = Tensor(data)
        d = getattr(t, "data", None)
        if not isinstance(d, np.ndarray):
            fail(case, f".data should be a NumPy array; got {type(d).__name__}: {show(d)}",
                 "store np.asarray(data, dtype=np.float64), so lists and numbers become arrays")
        if d.dtype != np.float64:
            fail(case, f".data has dtype {d.dtype}; expected float64",
                 "integers cannot carry gradients: convert with dtype=np.float64")
        for attr, cause in (("grad", "set self.grad = None in __init__ (a leaf has no gradient "
                                     "yet and no closure)"),
                            ("vjp", "store the vjp argument (None by default)")):
            if getattr(t, attr, "<missing>") is not None:
                fail(case, f".{attr} should be None for a new tensor; got "
                           f"{show(getattr(t, attr, '<missing>'))}", cause)
        if getattr(t, "parents", None) != ():
            fail(case, f".parents should be the empty tuple (); got "
                       f"{show(getattr(t, 'parents', '<missing>'))}", "store tuple(parents)")
        datas.append(np.array(d))
    a, b = Tensor([1.0]), Tensor([2.0])

    def vjp(g: Any) -> tuple[Any, ...]:
        return g, g

    case = "Tensor, case Tensor([3.0], parents=[a, b], vjp=vjp)"
    with student_code(case, "Tensor(data, parents, vjp)"):
        t = Tensor([3.0], [a, b], vjp)
    parents = getattr(t, "parents", None)
    if not isinstance(parents, tuple) or len(parents) != 2 or parents[0] is not a \
            or parents[1] is not b:
        fail(case, f".parents should be the tuple (a, b) of the very tensors passed in; got "
                   f"{show(parents)}", "store tuple(parents): a tuple, not a copy of the tensors")
    if getattr(t, "vjp", None) is not vjp:
        fail(case, ".vjp should be the closure passed in", "store self.vjp = vjp")
    return {"datas": datas}


@exercise("1.1", split=Split(_seed_probe(0), _tensor_run, judged("lesson1", "_tensor_judge"),
                             self_reported="the dtype float64, .grad, .vjp and .parents"))
def tensor_class(Tensor: type) -> None:
    """Exercise 1.1: ``Tensor(data, parents=(), vjp=None)`` stores a float array, ``grad``
    None, the parents as a tuple and the closure."""


# 1.2 topological order and 1.3 backward: graphs, each the list of its tensors, its root last

def _chain(first: T, n: int, step: Callable[[T, str], T], prefix: str) -> list[T]:
    """``first`` and ``n`` tensors after it, each ``step(the one before, name)``."""
    nodes = [first]
    for i in range(n):
        nodes.append(step(nodes[-1], f"{prefix}{i + 1}"))
    return nodes


def _deep_chain() -> list[T]:
    return _chain(T([0.1, -0.2], name="x"), DEPTH, _r_tanh, "t")


def _product(xv: Any, yv: Any) -> list[T]:
    x, y = T(xv, name="x"), T(yv, name="y")
    return [x, y, _r_mul(x, y, "z")]


def _diamond(xv: Any, wv: Any, shortcut: bool = False) -> list[T]:
    """a = x * w; z = tanh(a) * exp(a) (z = a * tanh(a) if ``shortcut``)."""
    x, w = T(xv, name="x"), T(wv, name="w")
    a = _r_mul(x, w, "a")
    b = _r_tanh(a, "b")
    if shortcut:
        return [x, w, a, b, _r_mul(a, b, "z")]
    c = _r_exp(a, "c")
    return [x, w, a, b, c, _r_mul(b, c, "z")]


def _graphs(seed: int = 1) -> dict[str, tuple[T, list[T]]]:
    """1.2's graphs by name: (root, every tensor in it). The values, and the random graph,
    come from ``seed``; the last is a chain too deep for recursion."""
    rng = np.random.default_rng(seed)
    graphs = {"a single leaf x": [T(rng.normal(size=3), name="x")],
              "z = x * y": _product([1.0, 2.0], [3.0, 4.0]),
              "a diamond: a = x * w; z = tanh(a) * exp(a)": _diamond([0.5, -1.0], [2.0, 0.3]),
              "a shortcut: a = x * w; z = a * tanh(a) (a is a parent of z and of tanh(a))":
                  _diamond([0.5, -1.0], [2.0, 0.3], shortcut=True),
              "a ladder: s1 = x + x, s2 = s1 + s1, ..., s16 (each used twice, 65536 paths)":
                  _chain(T([1.0, 2.0], name="x"), 16, lambda s, name: _r_add(s, s, name), "s")}
    # a random graph: each new tensor adds or multiplies one or two earlier ones
    nodes = [T(rng.normal(size=2), name=f"x{i}") for i in range(3)]
    for i in range(int(rng.integers(12, 25))):
        picks = rng.choice(len(nodes), size=2, replace=bool(rng.integers(2)))
        a, b = nodes[int(picks[0])], nodes[int(picks[1])]
        nodes.append((_r_add if rng.integers(2) else _r_mul)(a, b, f"n{i + 1}"))
    for i, node in enumerate(nodes[:-1]):   # make every tensor an ancestor of the root
        nodes.append(_r_add(nodes[-1], node, f"r{i + 1}"))
    graphs[f"a random graph of {len(nodes)} tensors"] = nodes
    graphs[f"a chain of {DEPTH} tanh operations"] = _deep_chain()
    return {name: (nodes[-1], nodes) for name, nodes in graphs.items()}


def _as_list(case: str, got: Any) -> list[Any]:
    """What ``topological_order`` returned, as a list (a failure if it is None or no sequence)."""
    if got is None:
        fail(case, "topological_order returned None", "return the list you built")
    try:
        return list(got)
    except TypeError:
        fail(case, f"expected a list of tensors; got {type(got).__name__}")


def _order_run(probes: dict[str, Any], topological_order: Callable[..., Any]) -> dict[str, Any]:
    """1.2, run: the student's order of each graph, as positions in the graph's node list
    (-1 for anything that is not one of its tensors)."""
    require_student(topological_order, "topological_order")
    orders = []
    for name, (root, nodes) in _graphs(probes["seed"]).items():
        case = f"topological_order, case '{name}'"
        with student_code(case, "topological_order(root)"), _recursion_limit():
            got = topological_order(root)
        where = {id(t): i for i, t in enumerate(nodes)}
        orders.append([where.get(id(t), -1) for t in _as_list(case, got)])
    return {"orders": orders}


@exercise("1.2", split=Split(_seed_probe(1), _order_run, judged("lesson1", "_order_judge")))
def topological_order(topological_order: Callable[..., Any]) -> None:
    """Exercise 1.2: every tensor once, each after all its parents, without recursion."""


def _backward_cases(seed: int = 2) -> dict[str, Callable[[], list[T]]]:
    """1.3's graphs by name, each built afresh when called; the leaves are those without vjp."""
    rng = np.random.default_rng(seed)
    xv, yv, wv = rng.normal(size=3), rng.normal(size=3), rng.normal(size=(2, 3))

    def square() -> list[T]:
        x = T(xv, name="x")
        return [x, _r_mul(x, x, "z")]

    def sum_then_reuse() -> list[T]:
        x, y = T(xv, name="x"), T(yv, name="y")
        s = _r_add(x, y, "s")
        return [x, y, s, _r_add(s, x, "z")]

    def used_fifty_times() -> list[T]:
        x = T(xv, name="x")
        return _chain(x, 49, lambda s, name: _r_add(s, x, name), "s")

    return {"z = x * y": lambda: _product(xv, yv), "z = x * x": square,
            "z = (x + y) + x": sum_then_reuse,
            "z = x + x + ... + x (x used 50 times)": used_fifty_times,
            "a diamond: a = x * w; z = tanh(a) * exp(a)": lambda: _diamond(wv[0], wv[1]),
            "a shortcut: a = x * w; z = a * tanh(a)": lambda: _diamond(wv[0], wv[1], True),
            f"a chain of {DEPTH} tanh operations": _deep_chain}


def _counted(root: T) -> dict[int, list[Any]]:
    """Wrap every closure of the graph so calls are counted: {id(node): [node, calls]}."""
    counts: dict[int, list[Any]] = {}
    for node in _ref_topological_order(root):
        if node.vjp is not None:
            entry = counts[id(node)] = [node, 0]

            def counting(g: Any, f: Callable[..., Any] = node.vjp, entry: list[Any] = entry,
                         is_root: bool = node is root) -> Any:
                if g is None and is_root:
                    raise CheckFailed(
                        f"the closure of the output {entry[0]!r} was called with gradient "
                        "None: the output's own gradient was never set. backward() starts by "
                        "seeding it: self.grad = np.ones_like(self.data) (d output / d output "
                        "is 1 everywhere), before the loop over the nodes.")
                if g is None:
                    raise CheckFailed(
                        f"the closure of {entry[0]!r} was called with gradient None: its "
                        "gradient had not been computed yet. Go through topological_order(self) "
                        "reversed (the output first) and pass each node's own .grad.")
                entry[1] += 1
                return f(g)
            node.vjp = counting
    return counts


_ACCUMULATE = "z1 = x * y, then z2 = exp(x): x.grad after both backward calls"


def _accumulate_values(seed: int) -> tuple[np.ndarray, np.ndarray]:
    if seed == 2:
        return np.array([0.5, -1.0]), np.array([2.0, 3.0])
    rng = np.random.default_rng(seed + 1)
    return rng.normal(size=2), rng.normal(size=2)


def _backward_run(probes: dict[str, Any], backward: Callable[..., Any]) -> dict[str, Any]:
    """1.3, run: the student's backward on each graph; the gradients it left on the output
    and the leaves, whether two share one array; that each closure ran once is seen only here."""
    require_student(backward, "backward")
    fn = with_globals(backward, topological_order=_ref_topological_order, Tensor=T)
    results = []
    for name, build in _backward_cases(probes["seed"]).items():
        case = f"backward, case '{name}'"
        nodes = build()
        leaves, counts = [t for t in nodes if t.vjp is None], _counted(nodes[-1])
        with student_code(case, "backward()"), _recursion_limit():
            fn(nodes[-1])
        for node, n in counts.values():
            if n != 1:
                fail(case, f"the closure of {node!r} ran {n} times; it must run exactly once",
                     "run each closure once, after its node's gradient is complete: loop over "
                     "reversed(topological_order(self)) and nothing else")
        grads = [n.grad for n in _ref_topological_order(nodes[-1])
                 if isinstance(n.grad, np.ndarray)]
        results.append({"root": sent(nodes[-1].grad),
                        "leaves": [sent(t.grad) for t in leaves],
                        "shared": any(a is b for i, a in enumerate(grads) for b in grads[:i])})
    # gradients add up across two backward calls that share a leaf (as with Var and PyTorch)
    xv, yv = _accumulate_values(probes["seed"])
    x, y = T(xv, name="x"), T(yv, name="y")
    with student_code(f"backward, case '{_ACCUMULATE}'", "backward()"):
        fn(_r_mul(x, y, "z1"))
        fn(_r_exp(x, "z2"))
    return {"cases": results, "accumulated": sent(x.grad)}


@exercise("1.3", split=Split(_seed_probe(2), _backward_run, judged("lesson1", "_backward_judge"),
                             self_reported="each closure ran exactly once"))
def backward(backward: Callable[..., Any]) -> None:
    """Exercise 1.3: seed the output with ones, run each closure once in reverse topological
    order, and add the gradients that reach a tensor from all its uses."""


# 1.4 and 1.5 the operations: a table (see :mod:`minigrad.course.checks.table`)

def _ref(name: str) -> Callable[..., tuple[Any, list[Any]]]:
    """The reference of operation ``name``: ``judges/lesson1.py``'s ``<name>_reference``."""
    return judged("lesson1", f"{name}_reference")


_ONCE = "both inputs get the output gradient unchanged: return (g, g)"

#: The operations of exercises 1.4 and 1.5 (and ``power``): one row each.
OPERATIONS: dict[str, Operation] = {
    "add": Operation("a.data + b.data", _ref("add"), (_ONCE, _ONCE), (normal, normal), 10),
    "sub": Operation("a.data - b.data", _ref("sub"), (
        "a gets the output gradient g unchanged",
        "b enters with a minus sign, so b gets -g (check the sign)"), (normal, normal), 11),
    "mul": Operation("a.data * b.data", _ref("mul"), (
        "a's gradient is g times the *other* input: g * b.data",
        "b's gradient is g times the *other* input: g * a.data"), (normal, normal), 12),
    "div": Operation("a.data / b.data", _ref("div"), (
        "d(a/b)/da = 1/b, so a gets g / b.data",
        "d(a/b)/db = -a/b**2, so b gets -g * a.data / b.data**2 (mind the sign)"),
        (normal, away_from_zero), 13),
    "exp": Operation("np.exp(a.data)", _ref("exp"), (
        "exp is its own derivative: the gradient is g * y with y = np.exp(a.data)",),
        (normal,), 15),
    "log": Operation("np.log(a.data)", _ref("log"), (
        "d log(x)/dx = 1/x: the gradient is g / a.data",), (positive,), 16),
    "tanh": Operation("np.tanh(a.data)", _ref("tanh"), (
        "d tanh(x)/dx = 1 - tanh(x)**2: the gradient is g * (1 - y**2) with y = np.tanh(a.data)",),
        (normal,), 17),
    "relu": Operation("np.maximum(a.data, 0)", _ref("relu"), (
        "relu passes the gradient where the input is positive and blocks it elsewhere: "
        "np.where(a.data > 0, g, 0.0)",), (not_near_zero,), 18, at_zero=(
        "at x = 0 exactly relu's gradient is 0, as in the scalar Var and PyTorch: pass g only "
        "where a.data > 0 (not >= 0)")),
    "power": Operation("a.data ** p", _ref("power"), (
        "d(x**p)/dx = p * x**(p - 1): the gradient is g * p * a.data ** (p - 1); p is a number, "
        "not a tensor, so it has no gradient",), (positive,), 19,
        params=((2,), (3,), (0.5,), (-1.5,)), param_names="p"),
}


def _unchanged(case: str, name: str, inputs: Sequence[T], arrays: Sequence[np.ndarray],
               closure: bool) -> None:
    """That the student's operation (or its closure) left its inputs' data as it found it."""
    for letter, t, a in zip(LETTERS, inputs, arrays):
        if not np.array_equal(t.data, a):
            fail(case, f"the closure of {name} changed {letter}.data in place" if closure else
                       f"{name} changed its input {letter}.data in place",
                 "compute new arrays in the closure; never write into an input's data"
                 if closure else "compute new arrays (a.data * b.data); never write into an "
                                 "input's data")


def _holds(fn: Any, target: object) -> bool:
    """Whether the closure ``fn`` refers directly to ``target`` (a cycle if target holds fn)."""
    if getattr(fn, "__self__", None) is target:
        return True
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            if cell.cell_contents is target:
                return True
        except ValueError:      # a cell not filled yet
            pass
    return False


def _op_case(row: Operation, name: str, student: Callable[..., Any], case: str,
             arrays: list[np.ndarray], extra: tuple[Any, ...], g: np.ndarray) -> dict[str, Any]:
    """One case of an operation, on reference tensors: what came out, as plain data. What only
    this process can see (parents, closure, no cycle, inputs unchanged) is checked here."""
    inputs = tuple(T(a.copy(), name=LETTERS[i]) for i, a in enumerate(arrays))
    with student_code(case, f"your {name}"):
        out = student(*inputs, *extra)
    if not isinstance(out, T):
        fail(case, f"{name} returned {type(out).__name__} {show(out)}; expected a Tensor",
             f"return Tensor({row.forward}, parents, vjp)")
    forward = sent(out.data)
    _unchanged(case, name, inputs, arrays, closure=False)
    parents = getattr(out, "parents", None)
    if not isinstance(parents, tuple) or len(parents) != len(inputs) or \
            any(p is not t for p, t in zip(parents, inputs)):
        want = "(" + ", ".join(LETTERS[:len(inputs)]) + ("," if len(inputs) == 1 else "") + ")"
        number = " (a number like p is not a parent: it needs no gradient)" if extra else ""
        fail(case, f"the output's parents should be {want}, the input tensors themselves; got "
                   f"{show(parents)}", f"pass parents={want} to Tensor{number}")
    if not callable(getattr(out, "vjp", None)):
        fail(case, "the output has no closure (.vjp is not callable)",
             "pass the closure as vjp=: Tensor(value, parents, vjp)")
    if _holds(out.vjp, out):
        fail(case, "the closure refers to the output tensor itself. Then the output holds its "
                   "closure and the closure holds the output: a reference cycle, and the whole "
                   "graph stays in memory until the garbage collector runs",
             "the closure gets the output gradient g as its argument; if it needs the output's "
             "value, keep the array (y = ...) and use y, not the Tensor")
    with student_code(case, f"the closure of your {name}"):
        grads = out.vjp(g.copy())  # type: ignore[misc]
    if isinstance(grads, np.ndarray) or not isinstance(grads, (tuple, list)):
        fail(case, f"the closure returned {type(grads).__name__} {show(grads)}; "
                   f"expected a tuple with one gradient per parent ({len(inputs)})",
             "return a tuple even for one parent: (g * y,) with the trailing comma")
    _unchanged(case, name, inputs, arrays, closure=True)
    with student_code(case, f"your {name} (run again for finite differences)"):
        fd = numerical_vjp(lambda *xs: student(*(T(x) for x in xs), *extra).data, arrays, g)
    return {"forward": forward, "grads": [sent(x) for x in grads], "fd": fd}


def _op_run(row: Operation, probes: dict[str, Any], fn: Callable[..., Any]) -> dict[str, Any]:
    """Apply the student's operation to the probes; its forward values and gradients."""
    name = probes["op"]
    require_student(fn, name)
    student = with_globals(fn, Tensor=T)
    groups: list[list[dict[str, Any]]] = [[] for _ in probes["groups"]]
    for j, case, arrays, extra, g in each_case(probes):
        groups[j].append(_op_case(row, name, student, case, arrays, extra, g))
    first = probes["groups"][0]
    args = [T(np.asarray(a, dtype=np.float64)) for a in first["cases"][0]["inputs"]]
    was = gc.isenabled()
    gc.disable()        # the output must be freed by reference counting alone: no cycle
    try:
        alive = weakref.ref(student(*args, *first["extra"]))() is not None
    finally:
        if was:
            gc.enable()
    if alive:
        fail(name, "the output tensor stays alive after its last reference is dropped: it is "
                   "part of a reference cycle",
             "the closure must not refer to the output tensor (nor store it anywhere): use the "
             "arrays it needs")
    return {"groups": groups}


binary_ops = operations("1.4", OPERATIONS, BINARY, _op_run, name="binary_ops", doc=(
    "Exercise 1.4: ``add``, ``sub``, ``mul`` and ``div``, built from the table of rules."))
unary_ops = operations("1.5", OPERATIONS, UNARY, _op_run, name="unary_ops", doc=(
    "Exercise 1.5: ``exp``, ``log``, ``tanh`` and ``relu``, built from the table of rules."))

# One operation at a time (each records under the exercise whose table holds it).
add, sub, mul, div = (operation("1.4", OPERATIONS, name, _op_run,
                                f"Part of exercise 1.4: ``{name}(a, b)`` alone.")
                      for name in BINARY)
exp, log, tanh, relu = (operation("1.5", OPERATIONS, name, _op_run,
                                  f"Part of exercise 1.5: ``{name}(a)`` alone.") for name in UNARY)
power = operation("1.5", OPERATIONS, "power", _op_run, "``power(a, p)`` for a Python number "
                  "``p`` (inputs kept positive; the lesson gives it).")

#: What moved to :mod:`minigrad.course.checks.judges.lesson1` (found here too, in a notebook).
__getattr__ = judges_names(__name__, frozenset({
    "_check_order", "_grad", "_ref_backward", "_var_elementwise"}))
