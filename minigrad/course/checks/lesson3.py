"""Checks for lesson 3, "Parameters, modules and an optimizer".

Each check takes the classes the student wrote in the notebook, builds small cases out of
them, and compares what they do with numbers computed here in plain NumPy. A check prints
what it verified when everything agrees, and otherwise raises
:class:`minigrad.course.checks.CheckFailed` naming the case, what was expected, what came, and the
mistake that usually causes it.

The checks are independent: each one needs only the classes it is given, so a mistake costs
only its own exercise (the SGD check, for instance, does not need a working ``Module``).
"""
from __future__ import annotations

import contextlib
import importlib
import types
from typing import Any, Callable, Iterator

import numpy as np

from minigrad import Tensor, no_grad
from minigrad.course.checks import (CheckFailed, exercise, passed, require_student, student_code,
                                    with_globals)

# The module itself (``minigrad.tensor`` the attribute is the function ``tensor``).
_engine = importlib.import_module("minigrad.tensor")

__all__ = ["EXERCISES", "parameter", "parameters", "linear", "relu_and_sequential", "sgd"]

EXERCISES = {
    "3.1": {"title": "Parameter: a tensor the model learns", "points": 1},
    "3.2": {"title": "Module.parameters(): find every parameter, however deep", "points": 3},
    "3.3": {"title": "Linear: y = x @ W.T + b", "points": 2},
    "3.4": {"title": "ReLU and Sequential", "points": 1},
    "3.5": {"title": "SGD: step() outside the graph, zero_grad()", "points": 3},
}


# ---------------------------------------------------------------------------------------------
# Helpers


def _fail(check: str, case: str, expected: Any, got: Any, cause: str) -> CheckFailed:
    """A CheckFailed whose message names the case, expected vs got, and the usual cause."""
    return CheckFailed(
        f"{check}, case '{case}':\n"
        f"  expected: {expected}\n"
        f"  got:      {got}\n"
        f"  usual cause: {cause}")


def _refuse_minigrad(obj: Any, what: str, check: str) -> None:
    """Refuse minigrad's own classes (and anything that is not a class): the check is about
    the student's code."""
    require_student(obj, what)
    if not isinstance(obj, type):
        raise CheckFailed(
            f"{check}: expected the class {what} itself (`{what}`, not `{what}()`); got "
            f"{type(obj).__name__} {obj!r:.60}")


def _array(x: Any) -> np.ndarray:
    return np.asarray(x.data if isinstance(x, Tensor) else x, dtype=float)


def _fmt(a: Any) -> str:
    return np.array2string(np.asarray(a, dtype=float), precision=6, suppress_small=True,
                           separator=", ").replace("\n", "")


def _shape(x: Any) -> str:
    return str(tuple(np.shape(x.data if isinstance(x, Tensor) else x)))


def _find_tensors(value: Any, path: str, out: dict[int, tuple[str, Any]],
                  seen: set[int]) -> None:
    """The reference traversal: every Tensor reachable from ``value``, named by its path."""
    if id(value) in seen:
        return
    if isinstance(value, Tensor):
        out.setdefault(id(value), (path, value))
        return
    if isinstance(value, (list, tuple)):
        seen.add(id(value))
        for i, item in enumerate(value):
            _find_tensors(item, f"{path}.{i}" if path else str(i), out, seen)
    elif isinstance(value, dict):
        seen.add(id(value))
        for key, item in value.items():
            _find_tensors(item, f"{path}.{key}" if path else str(key), out, seen)
    elif hasattr(value, "__dict__") and not isinstance(value, type):
        seen.add(id(value))
        for key, item in vars(value).items():
            _find_tensors(item, f"{path}.{key}" if path else key, out, seen)


def _names(module: Any, params: list[Any]) -> list[str]:
    found: dict[int, tuple[str, Any]] = {}
    _find_tensors(module, "", found, set())
    return [f"{found[id(p)][0] if id(p) in found else '<not in the module>'} "
            f"{_shape(p)}" for p in params]


def _numeric_grad(f: Callable[[], float], array: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of ``f()`` with respect to each element of ``array`` (in place)."""
    grad = np.zeros_like(array)
    for i in np.ndindex(array.shape):
        old = array[i]
        array[i] = old + eps
        up = f()
        array[i] = old - eps
        down = f()
        array[i] = old
        grad[i] = (up - down) / (2 * eps)
    return grad


@contextlib.contextmanager
def _recorded_ops() -> Iterator[list[str]]:
    """Record the name of every operation that is written into a graph inside the block."""
    recorded: list[str] = []
    original = _engine.op

    def spy(data: Any, parents: Any, vjp: Any, saved: tuple = (), name: str = "op") -> Tensor:
        out = original(data, parents, vjp, saved=saved, name=name)
        if out._vjp is not None:
            recorded.append(name)
        return out

    _engine.op = spy
    try:
        yield recorded
    finally:
        _engine.op = original


# ---------------------------------------------------------------------------------------------
# 3.1 Parameter


@exercise("3.1")
def parameter(Parameter: type) -> None:
    """Check 3.1: ``Parameter(data)`` is a leaf Tensor that requires grad and keeps its values.

    Parameters
    ----------
    Parameter : type
        The student's Parameter class (a subclass of ``minigrad.Tensor``).
    """
    check = "check 3.1 (Parameter)"
    _refuse_minigrad(Parameter, "Parameter", check)
    if not issubclass(Parameter, Tensor):
        raise _fail(check, "class", "a subclass of minigrad.Tensor",
                    f"bases {[b.__name__ for b in Parameter.__mro__[1:]]}",
                    "write `class Parameter(Tensor):` so a parameter takes part in every "
                    "Tensor operation and its gradient lands in .grad")
    cases = [("a 2x3 array", np.arange(6.0).reshape(2, 3) / 4 - 0.5),
             ("a list of floats", [0.25, -1.5, 3.0]),
             ("a single number", 2.5)]
    for case, data in cases:
        with student_code(f"{check}, case '{case}'", "Parameter(data)"):
            p = Parameter(data)
        expected = np.asarray(data, dtype=float)
        if not isinstance(p, Tensor) or not hasattr(p, "data"):
            raise _fail(check, case, "a Tensor", type(p).__name__,
                        "call super().__init__(...) in Parameter.__init__")
        if p.requires_grad is not True:
            raise _fail(check, case, "requires_grad=True", f"requires_grad={p.requires_grad}",
                        "a parameter is what training changes, so it always needs a gradient: "
                        "pass requires_grad=True to Tensor.__init__")
        if _shape(p) != str(expected.shape) or not np.array_equal(_array(p), expected):
            raise _fail(check, case, f"values {_fmt(expected)}", f"{_fmt(_array(p))}",
                        "keep the data you are given (no copying into another shape)")
        if not p.is_leaf:
            raise _fail(check, case, "a leaf (no operation recorded)", "a tensor with history",
                        "build the Parameter with Tensor.__init__, not from an operation")
    with student_code(f"{check}, case 'float32 data'", "Parameter(data)"):
        p = Parameter(np.ones((2, 2), dtype=np.float32))
    if p.dtype != np.float32:
        raise _fail(check, "float32 data", "dtype float32 kept", f"dtype {p.dtype}",
                    "do not convert the data; Tensor keeps the dtype it is given")
    passed("check 3.1: Parameter(data) is a leaf Tensor with requires_grad=True that keeps "
          "its values, shape and dtype (array, list and number inputs).")


# ---------------------------------------------------------------------------------------------
# 3.2 Module.parameters()


class _ReferenceParameter(Tensor):
    """Stands in for the student's Parameter while exercise 3.1 is not done."""

    def __init__(self, data: Any, dtype: Any = None) -> None:
        super().__init__(data, requires_grad=True, dtype=dtype)


def _parameter_works(Parameter: type) -> bool:
    try:
        p = Parameter(np.zeros(2))
        return isinstance(p, Tensor) and p.requires_grad is True
    except Exception:  # noqa: BLE001 - any failure means exercise 3.1 is not done
        return False


_Case = tuple[Callable[[], tuple[Any, list]], str]


def _modules_for(Module: type, Parameter: type) -> dict[str, _Case]:
    """The test cases: small module trees built from the student's classes.

    Each entry is (a function making a fresh (module, expected parameters) pair, the usual
    cause when parameters are missing).
    """
    rng = np.random.default_rng(3)

    class Affine(Module):  # type: ignore[misc, valid-type]
        def __init__(self, n_in: int, n_out: int) -> None:
            self.w = Parameter(rng.normal(size=(n_out, n_in)))
            self.b = Parameter(np.zeros(n_out))
            self.scale = 0.5                  # a number, not a parameter
            self.mask = Tensor(np.ones(n_out))  # a constant tensor, not a parameter
            self.label = "affine"

        def forward(self, x: Tensor) -> Tensor:
            return (x @ self.w.T + self.b) * self.mask

    class Nothing(Module):  # type: ignore[misc, valid-type]
        def forward(self, x: Tensor) -> Tensor:
            return x

    class Block(Module):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            self.first = Affine(3, 4)
            self.act = Nothing()
            self.second = Affine(4, 2)
            self.gain = Parameter(np.ones(2))

    class Stack(Module):  # type: ignore[misc, valid-type]
        def __init__(self, n: int) -> None:
            self.layers = [Affine(2, 2) for _ in range(n)]

    class Containers(Module):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            self.pair = (Affine(2, 3), Parameter(np.zeros(3)))
            self.heads = {"left": Affine(3, 1), "right": Affine(3, 1)}

    class Deep(Module):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            self.body = [Block(), Stack(2)]
            self.head = Block()

    class Tied(Module):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            self.encoder = Affine(3, 2)
            self.decoder = self.encoder          # the same module under two names
            self.extra = [self.encoder.w]        # and its weight once more in a list
            self.bias = Parameter(np.zeros(2))

    def expect(module: Any, *paths: str) -> tuple[Any, list]:
        found: dict[int, tuple[str, Any]] = {}
        _find_tensors(module, "", found, set())
        by_path = {path: t for path, t in found.values()}
        return module, [by_path[p] for p in paths]

    def affine_paths(prefix: str) -> list[str]:
        return [f"{prefix}.w", f"{prefix}.b"] if prefix else ["w", "b"]

    def block_paths(prefix: str) -> list[str]:
        pre = f"{prefix}." if prefix else ""
        return affine_paths(pre + "first") + affine_paths(pre + "second") + [pre + "gain"]

    attrs = ("look at every attribute of the module (vars(self).values()) and keep the "
             "values that are Parameters")
    nested = ("parameters() only collects the Parameters stored directly on the module: when "
              "an attribute holds a Module, add that module's parameters() too (recursion)")
    containers = ("parameters() does not look inside lists, tuples or dicts: when an attribute "
                  "holds one, go through its items (a dict's values) the same way as through "
                  "attributes")
    return {
        "no parameters": (lambda: expect(Nothing()), attrs),
        "flat: two Parameters beside a number, a string and a constant Tensor":
            (lambda: expect(Affine(3, 2), *affine_paths("")), attrs),
        "nested: Modules inside a Module": (lambda: expect(Block(), *block_paths("")), nested),
        "a list of Modules": (lambda: expect(
            Stack(3), *[p for i in range(3) for p in affine_paths(f"layers.{i}")]), containers),
        "a tuple and a dict": (lambda: expect(
            Containers(), *affine_paths("pair.0"), "pair.1", *affine_paths("heads.left"),
            *affine_paths("heads.right")), containers),
        "deep: lists of Modules of Modules": (lambda: expect(
            Deep(), *block_paths("body.0"), *affine_paths("body.1.layers.0"),
            *affine_paths("body.1.layers.1"), *block_paths("head")), containers),
        "shared: one module and one weight reachable twice": (lambda: expect(
            Tied(), "encoder.w", "encoder.b", "bias"), nested),
    }


@exercise("3.2")
def parameters(Module: type, Parameter: type) -> None:
    """Check 3.2: ``Module.parameters()`` finds every Parameter exactly once.

    Builds module trees from the student's ``Module`` and ``Parameter``: flat, nested, in
    lists, tuples and dicts, several levels deep, and with a module and a weight shared.

    Parameters
    ----------
    Module : type
        The student's Module base class.
    Parameter : type
        The student's Parameter class.
    """
    check = "check 3.2 (Module.parameters)"
    _refuse_minigrad(Module, "Module", check)
    _refuse_minigrad(Parameter, "Parameter", check)
    if not _parameter_works(Parameter):
        # Exercise 3.1 is not done: test parameters() with a reference Parameter in its place,
        # so that a mistake there costs only exercise 3.1.
        method = vars(Module).get("parameters")
        if isinstance(method, types.FunctionType):
            Module = type(Module.__name__, (Module,), {
                "parameters": with_globals(method, Parameter=_ReferenceParameter),
                "__module__": Module.__module__})
            Parameter = _ReferenceParameter
        else:
            raise CheckFailed(f"{check}: this check builds modules out of your Parameter "
                              "class, which does not work yet. Make check 3.1 pass first.")
    for case, (make, cause) in _modules_for(Module, Parameter).items():
        module, expected = make()
        with student_code(f"{check}, case '{case}'", "parameters()"):
            try:
                got = module.parameters()
            except RecursionError as e:
                raise _fail(check, case, f"{len(expected)} parameters", "RecursionError",
                            "parameters() calls itself on the same module again; recurse into "
                            "the attribute's module (value.parameters()), not self") from e
            except ValueError as e:
                if "broadcast" not in str(e) and "truth value" not in str(e):
                    raise
                raise _fail(check, case, f"{len(expected)} parameters",
                            f"ValueError: {str(e).strip()}",
                            "`value in found` (and ==) compare tensors element by element, "
                            "which fails for tensors of different shapes. To skip a parameter "
                            "you already have, compare identities: "
                            "any(value is p for p in found)") from e
            if got is None:
                raise _fail(check, case, "a list of parameters", "None",
                            "return the list you built (the return statement is missing)")
            got = list(got)
        for p in got:
            if not isinstance(p, Parameter):
                what = ("a Tensor that is not a Parameter" if isinstance(p, Tensor)
                        else type(p).__name__)
                raise _fail(check, case, "only Parameters",
                            f"{what}: " + (_names(module, [p])[0] if isinstance(p, Tensor)
                                           else repr(p)),
                            "keep only values with isinstance(value, Parameter): constant "
                            "Tensors, numbers and strings are not trained")
        ids = [id(p) for p in got]
        dup = [p for k, p in enumerate(got) if id(p) in ids[:k]]
        if dup:
            raise _fail(check, case, f"each parameter once: {', '.join(_names(module, expected))}",
                        f"{', '.join(_names(module, dup))} more than once",
                        "a parameter reachable by two paths (a module shared by two "
                        "attributes, tied weights) must be returned once, or SGD would update "
                        "it twice per step. Skip a parameter you already have (compare with "
                        "`is`, or keep a set of id(p)).")
        missing = [p for p in expected if id(p) not in ids]
        extra = [p for p in got if id(p) not in {id(q) for q in expected}]
        if missing or extra:
            listed = ", ".join(_names(module, expected)) or "none"
            raise _fail(check, case, f"{len(expected)} parameters: {listed}",
                        f"{len(got)} found" + (f"; missing {', '.join(_names(module, missing))}"
                                               if missing else "")
                        + (f"; not in this module: {len(extra)}" if extra else ""), cause)
        with student_code(f"{check}, case '{case}' (called twice)", "parameters()"):
            again = list(module.parameters())
        if [id(p) for p in again] != ids and sorted(map(id, again)) != sorted(ids):
            raise _fail(check, case + " (called twice)", f"{len(ids)} parameters again",
                        f"{len(again)}", "parameters() must start from scratch on every call: "
                        "build a new list inside the method, not on the class")
    passed("check 3.2: parameters() finds every Parameter exactly once: directly on a "
          "module, in nested Modules, in lists, tuples and dicts, three levels deep, and when a "
          "module or weight is shared; it skips numbers, strings and constant Tensors.")


# ---------------------------------------------------------------------------------------------
# 3.3 Linear


def _with_working_parameter(Layer: type, Parameter: type) -> tuple[type, type]:
    """The student's layer and Parameter; if their Parameter does not work yet, the layer with
    a reference Parameter put in its place (so that this check tests only the layer)."""
    if _parameter_works(Parameter):
        return Layer, Parameter
    init = Layer.__init__
    if not isinstance(init, types.FunctionType):
        return Layer, Parameter
    scaffold = type(Layer.__name__, (Layer,),
                    {"__init__": with_globals(init, Parameter=_ReferenceParameter),
                     "__module__": Layer.__module__})
    return scaffold, _ReferenceParameter


@exercise("3.3")
def linear(Linear: type, Parameter: type) -> None:
    """Check 3.3: ``Linear(in_features, out_features, rng)`` computes ``x @ W.T + b``.

    Checks the shapes and initialisation of the parameters, the forward values against
    NumPy, and the gradients of weight, bias and input against the hand formulas
    (``dW = G.T @ x``, ``db = G.sum(0)``, ``dx = G @ W``) and against finite differences.

    Parameters
    ----------
    Linear : type
        The student's Linear class.
    Parameter : type
        The student's Parameter class (the weight and bias must be Parameters).
    """
    check = "check 3.3 (Linear)"
    _refuse_minigrad(Linear, "Linear", check)
    _refuse_minigrad(Parameter, "Parameter", check)
    Linear, Parameter = _with_working_parameter(Linear, Parameter)

    def make(n_in: int, n_out: int, seed: int) -> Any:
        with student_code(f"{check}, case 'Linear({n_in}, {n_out}, rng=default_rng({seed}))'",
                          "Linear"):
            return Linear(n_in, n_out, rng=np.random.default_rng(seed))

    def run(layer: Any, x: Tensor, case: str) -> Any:
        with student_code(f"{check}, case '{case}'", "Linear.forward"):
            try:
                return layer(x)
            except ValueError as e:
                if "matmul" not in str(e):
                    raise
                raise _fail(check, case, f"x of shape {x.shape} @ W.T of shape "
                            f"{tuple(layer.weight.shape[::-1])}", f"ValueError: {e}",
                            "the weight has shape (out, in) and x has shape (N, in): multiply "
                            "by the transpose, x @ self.weight.T") from e

    # Shapes and initialisation.
    layer = make(4, 3, 0)
    for name, shape in (("weight", (3, 4)), ("bias", (3,))):
        p = getattr(layer, name, None)
        if p is None:
            raise _fail(check, "Linear(4, 3)", f"an attribute self.{name}", "none",
                        f"store the {name} as self.{name} (PyTorch's names)")
        if not isinstance(p, Parameter):
            raise _fail(check, "Linear(4, 3)", f"self.{name} a Parameter", type(p).__name__,
                        "wrap the initial values in Parameter(...) so parameters() finds them "
                        "and they get a gradient")
        if tuple(p.shape) != shape:
            cause = ("the weight is stored transposed: PyTorch keeps it as "
                     "(out_features, in_features) and computes x @ W.T + b"
                     if name == "weight" and tuple(p.shape) == shape[::-1] else
                     f"{name} has one value per output feature" if name == "bias" else
                     "the weight has one row per output and one column per input")
            raise _fail(check, f"Linear(in_features=4, out_features=3).{name}",
                        f"shape {shape}", f"shape {tuple(p.shape)}", cause)
    w = _array(layer.weight)
    bound = 1 / np.sqrt(4)
    if np.all(w == w.flat[0]):
        raise _fail(check, "initial weight", "different random values",
                    f"all equal to {w.flat[0]}", "equal weights make every output unit learn "
                    "the same thing; draw them with rng.uniform(-k, k, size=...)")
    if np.all(w == w[:1]):
        raise _fail(check, "initial weight of Linear(4, 3)", "a different row for each output unit",
                    f"three equal rows {_fmt(w[0])}", "rows that start equal get equal "
                    "gradients and stay equal: the 3 output units would compute the same thing "
                    "forever. Draw the whole (out, in) matrix at once: rng.uniform(-k, k, "
                    "size=(out_features, in_features))")
    if np.abs(w).max() > bound or np.abs(_array(layer.bias)).max() > bound:
        raise _fail(check, "initial values of Linear(4, 3)",
                    f"every value in [-{bound}, {bound}] (k = 1/sqrt(in_features))",
                    f"largest |value| {max(np.abs(w).max(), np.abs(_array(layer.bias)).max()):.4f}",
                    "use PyTorch's default: rng.uniform(-k, k, size) with k = 1/sqrt(in_features)")
    again = make(4, 3, 0)
    if not np.array_equal(_array(again.weight), w):
        raise _fail(check, "two layers from default_rng(0)", "the same weights",
                    "different weights", "draw the random numbers from the rng you are given "
                    "(np.random.default_rng(rng)), not from np.random directly")

    # Forward values, fixed decimal weights.
    W = np.array([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]])
    b = np.array([0.01, -0.02])
    x = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]])
    G = np.array([[1.0, -2.0], [0.5, 3.0]])  # the gradient that arrives from above
    layer = make(3, 2, 1)
    layer.weight.data = W.copy()
    layer.bias.data = b.copy()
    xt = Tensor(x, requires_grad=True)
    y = run(layer, xt, "forward of a batch of 2 inputs with 3 features")
    expected = x @ W.T + b
    if not isinstance(y, Tensor):
        raise _fail(check, "forward", "a Tensor", type(y).__name__,
                    "compute with the Tensors (x @ self.weight.T + self.bias), not their .data "
                    "arrays, so that the graph is recorded")
    if y.shape != expected.shape:
        raise _fail(check, "forward of a batch of 2 inputs with 3 features", "shape (2, 2)",
                    f"shape {y.shape}", "y = x @ W.T + b: (2, 3) @ (3, 2) -> (2, 2)")
    if not np.allclose(_array(y), expected, atol=1e-12):
        cause = "compute x @ self.weight.T + self.bias"
        if np.allclose(_array(y), x @ W.T, atol=1e-12):
            cause = "the bias is not added"
        raise _fail(check, "forward with W = [[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]], b = [0.01, "
                    "-0.02]", _fmt(expected), _fmt(_array(y)), cause)
    one = run(layer, Tensor(x[:1]), "forward of a batch of one")
    if one.shape != (1, 2) or not np.allclose(_array(one), expected[:1], atol=1e-12):
        raise _fail(check, "forward of a batch of one", _fmt(expected[:1]), _fmt(_array(one)),
                    "the layer must work for any batch size N: (N, in) -> (N, out)")

    # Gradients: hand formulas.
    if y.requires_grad:
        (y * Tensor(G)).sum().backward()
    hand = {"weight": G.T @ x, "bias": G.sum(axis=0), "input x": G @ W}
    grads = {"weight": layer.weight.grad, "bias": layer.bias.grad, "input x": xt.grad}
    causes = {"weight": "the weight must take part in the forward as a Tensor "
                        "(self.weight, not self.weight.data)",
              "bias": "the bias must be added as a Tensor (self.bias, not self.bias.data), or "
                      "its gradient never arrives",
              "input x": "the input must flow through Tensor operations (x @ ...), not x.data, or "
                         "the layers below this one get no gradient"}
    for name, g in grads.items():
        if g is None:
            raise _fail(check, f"gradient of {name} after backward", _fmt(hand[name]),
                        "None (no gradient arrived)", causes[name])
        if not np.allclose(_array(g), hand[name], atol=1e-10):
            raise _fail(check, f"gradient of {name} for loss = sum(y * G), G = {_fmt(G)}",
                        f"{_fmt(hand[name])} (by hand)", _fmt(_array(g)), causes[name])

    # Gradients: finite differences of the student's own forward.
    def loss() -> float:
        with no_grad():
            return float((_array(run(layer, Tensor(x), "finite differences")) * G).sum())

    for name, p in (("weight", layer.weight), ("bias", layer.bias)):
        numeric = _numeric_grad(loss, p.data)
        if not np.allclose(_array(p.grad), numeric, atol=1e-6):
            raise _fail(check, f"gradient of {name} against finite differences",
                        _fmt(numeric), _fmt(_array(p.grad)), causes[name])
    passed("check 3.3: weight (out, in) and bias (out,) are Parameters drawn from "
          "U(-1/sqrt(in), 1/sqrt(in)) with the given rng; the forward x @ W.T + b matches NumPy "
          "for batches of 2 and 1; the gradients of weight, bias and input match the hand "
          "formulas G.T @ x, G.sum(0), G @ W and finite differences.")


# ---------------------------------------------------------------------------------------------
# 3.4 ReLU and Sequential


class _AddOne:
    """A layer for the Sequential check: x + 1 (callable, and with a forward)."""

    def __call__(self, x: Tensor) -> Tensor:
        return self.forward(x)

    def forward(self, x: Tensor) -> Tensor:
        return x + 1.0


class _Double(_AddOne):
    def forward(self, x: Tensor) -> Tensor:
        return x * 2.0


def _contains(value: Any, target: Any, depth: int = 0) -> bool:
    if value is target:
        return True
    if depth > 3:
        return False
    if isinstance(value, (list, tuple)):
        return any(_contains(v, target, depth + 1) for v in value)
    if isinstance(value, dict):
        return any(_contains(v, target, depth + 1) for v in value.values())
    return False


@exercise("3.4")
def relu_and_sequential(ReLU: type, Sequential: type) -> None:
    """Check 3.4: ``ReLU()`` and ``Sequential(*layers)`` forward values and gradients.

    Parameters
    ----------
    ReLU : type
        The student's ReLU module class.
    Sequential : type
        The student's Sequential module class.
    """
    check = "check 3.4 (ReLU and Sequential)"
    _refuse_minigrad(ReLU, "ReLU", check)
    _refuse_minigrad(Sequential, "Sequential", check)

    def run(make: Callable[[], Any], case: str, name: str) -> Any:
        with student_code(f"{check}, case '{case}'", name):
            return make()

    x = np.array([[-2.0, -0.5, 0.0, 0.5, 3.0]])
    y = run(lambda: ReLU()(Tensor(x)), "ReLU forward of [-2, -0.5, 0, 0.5, 3]", "ReLU")
    if not isinstance(y, Tensor):
        raise _fail(check, "ReLU forward", "a Tensor", type(y).__name__,
                    "return a Tensor operation (x.relu()), not a NumPy array")
    if not np.array_equal(_array(y), np.maximum(x, 0)):
        raise _fail(check, "ReLU forward of [-2, -0.5, 0, 0.5, 3]", _fmt(np.maximum(x, 0)),
                    _fmt(_array(y)), "ReLU keeps positive values and sets the others to 0")
    xs = Tensor(np.array([[-2.0, -0.5, 0.5, 3.0]]), requires_grad=True)
    out = run(lambda: ReLU()(xs), "ReLU gradient", "ReLU")
    if isinstance(out, Tensor) and out.requires_grad:
        (out * Tensor(np.array([[1.0, 2.0, 3.0, 4.0]]))).sum().backward()
    if xs.grad is None or not np.array_equal(_array(xs.grad), [[0.0, 0.0, 3.0, 4.0]]):
        raise _fail(check, "ReLU gradient at [-2, -0.5, 0.5, 3] with upstream [1, 2, 3, 4]",
                    "[[0, 0, 3, 4]]", "None" if xs.grad is None else _fmt(_array(xs.grad)),
                    "use the engine's relu on the Tensor, so that its backward rule is recorded")
    params: dict[int, tuple[str, Any]] = {}
    _find_tensors(run(ReLU, "ReLU()", "ReLU"), "", params, set())
    if params:
        raise _fail(check, "ReLU's attributes", "no tensors (ReLU has nothing to learn)",
                    ", ".join(path for path, _ in params.values()),
                    "ReLU needs no weights; its forward is just x.relu()")

    add, double = _AddOne(), _Double()
    v = np.array([[1.0, -3.0]])
    for layers, expected, order in (((add, double), 2 * (v + 1), "add 1, then double"),
                                    ((double, add), 2 * v + 1, "double, then add 1"),
                                    ((add, double, add, add), 2 * (v + 1) + 2,
                                     "add 1, double, add 1, add 1")):
        seq = run(lambda: Sequential(*layers), f"Sequential({order})", "Sequential")
        got = run(lambda: seq(Tensor(v)), f"Sequential({order}) on {_fmt(v)}", "Sequential")
        if not isinstance(got, Tensor) or not np.allclose(_array(got), expected):
            raise _fail(check, f"Sequential({order}) on {_fmt(v)}", _fmt(expected),
                        _fmt(_array(got)) if isinstance(got, Tensor) else repr(got),
                        "apply the layers one after another in the order given, each to the "
                        "previous layer's output: for layer in self.layers: x = layer(x)")
        for layer in set(map(id, layers)):
            obj = next(lay for lay in layers if id(lay) == layer)
            if not any(_contains(value, obj) for value in vars(seq).values()):
                raise _fail(check, "where Sequential keeps its layers",
                            "the layers in an attribute, e.g. self.layers = list(layers)",
                            f"attributes {sorted(vars(seq))}",
                            "parameters() looks through attributes and lists: keep the layers "
                            "in a list attribute so their parameters are found")
    xs = Tensor(np.array([[-1.0, 2.0]]), requires_grad=True)
    out = run(lambda: Sequential(ReLU(), double)(xs), "gradient through Sequential(ReLU(), "
              "double)", "Sequential")
    if isinstance(out, Tensor) and out.requires_grad:
        out.sum().backward()
    if xs.grad is None or not np.array_equal(_array(xs.grad), [[0.0, 2.0]]):
        raise _fail(check, "gradient through Sequential(ReLU(), double) at [-1, 2]", "[[0, 2]]",
                    "None" if xs.grad is None else _fmt(_array(xs.grad)),
                    "Sequential must pass the Tensors along unchanged (no .data), so that the "
                    "graph connects the layers")
    passed("check 3.4: ReLU's forward and gradient are right and it holds no tensors; "
          "Sequential applies its layers in order (3 orders tried), keeps them where "
          "parameters() can find them, and lets gradients flow through.")


# ---------------------------------------------------------------------------------------------
# 3.5 SGD


@exercise("3.5")
def sgd(SGD: type, Parameter: type) -> None:
    """Check 3.5: ``SGD(params, lr)``: ``step()`` and ``zero_grad()`` against hand numbers.

    ``step()`` must compute ``p <- p - lr * grad`` in place (the same Parameter objects, still
    leaves), skip parameters without a gradient, and record nothing into a graph.

    Parameters
    ----------
    SGD : type
        The student's SGD optimizer class.
    Parameter : type
        The student's Parameter class (plain ``Tensor(..., requires_grad=True)`` are used if
        it does not work yet).
    """
    check = "check 3.5 (SGD)"
    _refuse_minigrad(SGD, "SGD", check)
    _refuse_minigrad(Parameter, "Parameter", check)

    def make(data: list) -> Tensor:
        try:
            p = Parameter(np.array(data))
            if isinstance(p, Tensor) and p.requires_grad:
                return p
        except Exception:
            pass
        return Tensor(np.array(data), requires_grad=True)

    def step(opt: Any, case: str) -> None:
        with student_code(f"{check}, case '{case}'", "SGD.step"):
            try:
                opt.step()
            except TypeError as e:
                if "NoneType" in str(e):
                    raise _fail(check, "a parameter whose grad is None", "it is skipped",
                                f"TypeError: {e}", "skip parameters whose .grad is None "
                                "(frozen, or not used by this loss)") from e
                raise

    w0, b0 = np.array([[1.0, -2.0], [0.5, 4.0]]), np.array([0.25, -0.75])
    gw, gb = np.array([[0.5, 0.25], [-1.0, 2.0]]), np.array([1.0, -4.0])
    for lr in (0.1, 0.5):
        w, b, frozen = make(w0.tolist()), make(b0.tolist()), make([3.0, 3.0])
        w.grad, b.grad = gw.copy(), gb.copy()   # frozen has no gradient: it must not move
        case = f"one step with lr={lr}, w = {_fmt(w0)}, grad = {_fmt(gw)}"
        with student_code(f"{check}, case '{case}'", "SGD(params, lr)"):
            opt = SGD([w, b, frozen], lr=lr)
        with _recorded_ops() as recorded:
            step(opt, case)
        if recorded:
            raise _fail(check, case, "no operation recorded into the graph",
                        f"step() recorded {len(recorded)} operation(s): {', '.join(recorded)}",
                        "an update written with Tensor arithmetic is recorded like any forward "
                        "operation; run it under `with no_grad():` (or decorate step with "
                        "@no_grad()), or compute on the arrays p.data and p.grad")
        if any(not isinstance(p.data, np.ndarray) for p in (w, b)):
            raise _fail(check, case, "p.data an array", type(w.data).__name__,
                        "assign an array to p.data (p.data - lr * p.grad), not a Tensor")
        params = list(getattr(opt, "params", [w, b, frozen]))
        if any(not (p is q) for p, q in zip(params, (w, b, frozen))) or len(params) != 3:
            raise _fail(check, case, "opt.params to hold the very Parameters it was given",
                        "other objects", "update each parameter in place (p.data = ...); "
                        "replacing it with a new tensor means the model never sees the update")
        want_w, want_b = w0 - lr * gw, b0 - lr * gb
        got_w = _array(w)
        if not np.allclose(got_w, want_w, atol=1e-12):
            if np.allclose(got_w, w0 + lr * gw):
                cause = "wrong sign: the gradient points uphill; step against it, p - lr * grad"
            elif np.allclose(got_w, w0 - gw):
                cause = "the learning rate is missing: p - lr * grad, with lr = self.lr"
            elif np.allclose(got_w, w0):
                cause = ("the parameter did not change: rebinding a name (p = p - ...) changes "
                         "nothing; write into p.data")
            else:
                cause = "the update is p <- p - lr * p.grad for every parameter"
            raise _fail(check, case, f"w = {_fmt(want_w)}", f"w = {_fmt(got_w)}", cause)
        if not np.allclose(_array(b), want_b, atol=1e-12):
            raise _fail(check, case, f"b = {_fmt(want_b)}", f"b = {_fmt(_array(b))}",
                        "every parameter in the list must be updated, not only the first")
        if not np.array_equal(_array(frozen), [3.0, 3.0]):
            raise _fail(check, "a parameter whose grad is None", "unchanged [3, 3]",
                        _fmt(_array(frozen)), "skip parameters whose .grad is None")
        if not (w.is_leaf and w.requires_grad and isinstance(w, Tensor)):
            raise _fail(check, case, "w still a leaf that requires grad", repr(w),
                        "update p.data; do not turn the parameter into an operation's output")

    # A second step uses the parameters as they are after the first.
    w, b = make(w0.tolist()), make(b0.tolist())
    case = "two steps with lr=0.1, parameters given as a generator"
    with student_code(f"{check}, case '{case}'", "SGD(params, lr)"):
        opt = SGD((p for p in [w, b]), lr=0.1)    # a generator, as model.parameters() may be
    for _ in range(2):
        w.grad, b.grad = gw.copy(), gb.copy()
        step(opt, case)
    if not np.allclose(_array(w), w0 - 0.2 * gw, atol=1e-12):
        cause = ("the optimizer kept the generator it was given; a generator runs once, so the "
                 "second step updated nothing. Store list(params)."
                 if np.allclose(_array(w), w0 - 0.1 * gw) else
                 "each step must start from the current values of the parameters")
        raise _fail(check, case,
                    f"w = {_fmt(w0 - 0.2 * gw)}", f"w = {_fmt(_array(w))}", cause)

    with student_code(f"{check}, case 'zero_grad()'", "SGD.zero_grad"):
        opt.zero_grad()
    for name, p in (("w", w), ("b", b)):
        if p.grad is not None and np.any(_array(p.grad) != 0):
            raise _fail(check, "zero_grad()", f"{name}.grad None (or zeros)",
                        _fmt(_array(p.grad)), "set p.grad = None for every parameter")
    passed("check 3.5: step() gives p - lr * grad for lr = 0.1 and 0.5 (hand numbers), "
          "updates the same Parameter objects in place, skips parameters without a gradient, "
          "records nothing into a graph, works twice on parameters given as a generator; "
          "zero_grad() clears the gradients.")
