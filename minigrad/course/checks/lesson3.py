"""Checks for lesson 3, "Parameters, modules and an optimizer".

Each check needs only the classes it is given, so a mistake costs only its own exercise (a
reference Parameter stands in where the student's does not work yet). Every check is a
:class:`~minigrad.course.checks.Split`: ``probe`` draws the cases (the lesson's own in a
notebook, fresh ones of random sizes in the grader); ``run``, here, builds them out of the
student's classes and sends back what came out as plain data, deciding by itself only what the
student's process alone can see (its ``self_reported``); the judge, in
:mod:`minigrad.course.checks.judges.lesson3` (not in the grader's sandbox), computes the
expected values and names the mistake.
"""
from __future__ import annotations

import contextlib
import copy
import importlib
import sys
import types
from typing import Any, Callable, Iterator

import numpy as np

from minigrad import Tensor, no_grad
from minigrad.course.checks import (CheckFailed, Split, exercise, exercises, judged, judges_names,
                                    mismatch, numerical_gradient, require_student, student_code,
                                    with_globals)

__all__ = ["EXERCISES", "parameter", "parameters", "linear", "relu_and_sequential", "sgd"]

EXERCISES = exercises(3)  # titles and points: the course's table, exercises.json
_engine = importlib.import_module("minigrad.tensor")  # the module (minigrad.tensor: a function)
_CHECK_31, _CHECK_32, _CHECK_33, _CHECK_34, _CHECK_35 = (
    f"check 3.{n} ({name})" for n, name in enumerate(
        ["Parameter", "Module.parameters", "Linear", "ReLU and Sequential", "SGD"], 1))


def _split(probe: Callable[..., Any], run: Callable[..., Any], judge: str, self_reported: str
           ) -> Split:
    """A check's split, its judge ``judge`` of judges/lesson3.py imported when first called."""
    return Split(probe, run, judged("lesson3", judge), self_reported=self_reported)


def _refuse_minigrad(check: str, **classes: Any) -> None:
    """Refuse minigrad's own classes, and anything that is not a class, in the order given."""
    for what, obj in classes.items():
        require_student(obj, what)
        if not isinstance(obj, type):
            raise CheckFailed(f"{check}: expected the class {what} itself (`{what}`, not "
                              f"`{what}()`); got {type(obj).__name__} {obj!r:.60}")


def _called(check: str, case: str, name: str, make: Callable[[], Any]) -> Any:
    """``make()``, which runs the student's ``name``: an error it raises names ``case``."""
    with student_code(f"{check}, case '{case}'", name):
        return make()


def _array(x: Any) -> Any:
    """``x`` (a Tensor's data) as a float array; None (a gradient that never came) stays."""
    return None if x is None else np.asarray(x.data if isinstance(x, Tensor) else x, dtype=float)


def _grad(t: Any) -> Any:
    return _array(getattr(t, "grad", None))


def _fmt(a: Any) -> str:
    return np.array2string(np.asarray(a, dtype=float), precision=6, suppress_small=True,
                           separator=", ").replace("\n", "")


def _numbers_text(a: Any) -> str:
    """``[[0.1, -0.2], [0.4, 0.5]]``: a small array's numbers as short as they go."""
    a = np.asarray(a, dtype=float)
    return f"{a:g}" if a.ndim == 0 else "[" + ", ".join(_numbers_text(r) for r in a) + "]"


def _join(path: str, key: Any) -> str:
    """The path of an attribute or item: ``first.w``, ``layers.0``, ``heads.left``."""
    return f"{path}.{key}" if path else str(key)


def _find_tensors(value: Any, path: str, out: dict[int, str], seen: set[int]) -> None:
    """The path of every Tensor reachable from ``value`` (the first path that reaches it)."""
    if isinstance(value, Tensor):
        out.setdefault(id(value), path)
        return
    if isinstance(value, (list, tuple)):
        items: Any = enumerate(value)
    elif isinstance(value, dict):
        items = value.items()
    elif hasattr(value, "__dict__") and not isinstance(value, type):
        items = vars(value).items()
    else:
        return
    if id(value) not in seen:
        seen.add(id(value))
        for key, item in list(items):
            _find_tensors(item, _join(path, key), out, seen)


@contextlib.contextmanager
def _recorded_ops() -> Iterator[list[str]]:
    """The name of every operation written into a graph inside the block, seen by a spy put in
    place of ``op`` in every engine module that calls it (the core, ``minigrad.elementwise``,
    ``reductions``, ...)."""
    recorded: list[str] = []
    original = getattr(_engine, "op")
    callers = [m for name, m in list(sys.modules.items())
               if name.startswith("minigrad.") and getattr(m, "op", None) is original]

    def spy(data: Any, parents: Any, vjp: Any, saved: tuple[Any, ...] = (),
            name: str = "op") -> Tensor:
        out = original(data, parents, vjp, saved=saved, name=name)
        if out._vjp is not None:
            recorded.append(name)
        return out

    for module in callers:
        setattr(module, "op", spy)
    try:
        yield recorded
    finally:
        for module in callers:
            setattr(module, "op", original)


class _ReferenceParameter(Tensor):
    """Stands in for the student's Parameter while exercise 3.1 is not done."""

    def __init__(self, data: Any, dtype: Any = None) -> None:
        super().__init__(data, requires_grad=True, dtype=dtype)


def _working(Parameter: type) -> type:
    """The student's Parameter when it works (exercise 3.1 done), else the reference one."""
    with contextlib.suppress(Exception):   # any failure means exercise 3.1 is not done
        p = Parameter(np.zeros(2))
        if isinstance(p, Tensor) and p.requires_grad is True:
            return Parameter
    return _ReferenceParameter


def _scaffolded(cls: type, name: str, method: Any, Parameter: type) -> tuple[type, type] | None:
    """``(cls, Parameter)``; while the student's Parameter does not work, ``cls`` with
    ``method`` as its ``name`` reading the reference Parameter for the global ``Parameter``, and
    the reference (so that the check tests ``cls`` alone); None if ``method`` is no function."""
    if _working(Parameter) is Parameter:
        return cls, Parameter
    if not isinstance(method, types.FunctionType):
        return None
    return type(cls.__name__, (cls,), {name: with_globals(method, Parameter=_ReferenceParameter),
                                       "__module__": cls.__module__}), _ReferenceParameter


# ---------------------------------------------------------------------------------------------
# 3.1 Parameter. The probe is a seed (None in a notebook): the run makes the data from it and
# the judge makes it again, so the probe never holds the values a Parameter should keep.


def _parameter_probe(rng: np.random.Generator | None) -> dict[str, Any]:
    return {"seed": None if rng is None else int(rng.integers(2**31))}


def _parameter_cases(seed: Any) -> list[dict[str, Any]]:
    """An array, a list, a number and float32 data, from ``seed`` (the lesson's if it is not
    a whole number)."""
    if not isinstance(seed, int) or isinstance(seed, bool):
        array, values, number = np.arange(6.0).reshape(2, 3) / 4 - 0.5, [0.25, -1.5, 3.0], 2.5
        float32 = np.ones((2, 2), dtype=np.float32)
    else:
        rng = np.random.default_rng(seed)
        array = rng.normal(size=(int(rng.integers(1, 5)), int(rng.integers(2, 5)))).round(3)
        values = [round(float(v), 3) for v in rng.normal(size=int(rng.integers(1, 6)))]
        number = round(float(rng.normal()), 3)
        float32 = rng.normal(size=(int(rng.integers(1, 4)),
                                   int(rng.integers(1, 4)))).astype(np.float32)
    return [{"case": "a {}x{} array".format(*array.shape), "data": array},
            {"case": "a list of floats", "data": values},
            {"case": "a single number", "data": number},
            {"case": "float32 data", "data": float32}]


def _parameter_run(probes: dict[str, Any], Parameter: type) -> dict[str, Any]:
    """3.1, run: a Parameter of each data; what it holds (values and dtype) goes back."""
    check = _CHECK_31
    _refuse_minigrad(check, Parameter=Parameter)
    if not issubclass(Parameter, Tensor):
        raise mismatch(check, "class", "a subclass of minigrad.Tensor",
                       f"bases {[b.__name__ for b in Parameter.__mro__[1:]]}",
                       "write `class Parameter(Tensor):` so a parameter takes part in every "
                       "Tensor operation and its gradient lands in .grad")
    results = []
    for item in _parameter_cases(probes.get("seed")):
        case = item["case"]
        p = _called(check, case, "Parameter(data)", lambda: Parameter(copy.deepcopy(item["data"])))
        if not isinstance(p, Tensor) or not hasattr(p, "data"):
            raise mismatch(check, case, "a Tensor", type(p).__name__,
                           "call super().__init__(...) in Parameter.__init__")
        if p.requires_grad is not True:
            raise mismatch(check, case, "requires_grad=True", f"requires_grad={p.requires_grad}",
                           "a parameter is what training changes, so it always needs a gradient: "
                           "pass requires_grad=True to Tensor.__init__")
        if not p.is_leaf:
            raise mismatch(check, case, "a leaf (no operation recorded)", "a tensor with history",
                           "build the Parameter with Tensor.__init__, not from an operation")
        results.append({"data": np.array(p.data)})   # its own dtype, which the judge checks
    return {"cases": results}


@exercise("3.1", split=_split(_parameter_probe, _parameter_run, "_parameter_judge",
                              "Parameter subclasses Tensor; each Parameter requires grad and "
                              "is a leaf"))
def parameter(Parameter: type) -> None:
    """Check 3.1: ``Parameter(data)`` is a leaf Tensor that requires grad and keeps its values."""


# ---------------------------------------------------------------------------------------------
# 3.2 Module.parameters(). A module tree travels as plain data, each node a dict of one key:
#   {"module": {name: node, ...}}  a Module with these attributes, in this order
#   {"param": shape}  a Parameter        {"tensor": shape}  a constant Tensor (not trained)
#   {"number": x}     {"text": "..."}    {"list": [...]}  {"tuple": [...]}  {"dict": {...}}
#   {"same": path}    the very object already built at ``path`` (a module or weight shared)
# The run builds it out of the student's classes; the judge reads the expected parameters
# (the path of every "param" node) from the same data.


def _parameters_probe(rng: np.random.Generator | None) -> dict[str, Any]:
    """The lesson's module trees, or random ones of the same kinds (other sizes, list lengths
    and attribute orders)."""
    def size(fixed: int, high: int = 6) -> int:
        return fixed if rng is None else int(rng.integers(1, high))

    def affine(n_in: int, n_out: int) -> dict[str, Any]:
        """Two Parameters beside a number, a constant Tensor and a string."""
        attributes = {"w": {"param": [n_out, n_in]}, "b": {"param": [n_out]},
                      "scale": {"number": 0.5}, "mask": {"tensor": [n_out]},
                      "label": {"text": "affine"}}
        names = list(attributes)
        order = range(len(names)) if rng is None else rng.permutation(len(names))
        return {"module": {names[int(i)]: attributes[names[int(i)]] for i in order}}

    def block() -> dict[str, Any]:
        a, b, c = size(3), size(4), size(2)
        return {"module": {"first": affine(a, b), "act": {"module": {}},
                           "second": affine(b, c), "gain": {"param": [c]}}}

    def stack(n: int) -> dict[str, Any]:
        s = size(2)
        return {"module": {"layers": {"list": [affine(s, s) for _ in range(n)]}}}

    nothing: dict[str, Any] = {"module": {}}
    if rng is not None:   # no parameters, but a constant and a number to be skipped
        nothing = {"module": {"mask": {"tensor": [size(2)]}, "scale": {"number": 0.5}}}
    a, b = size(2), size(3)
    containers = {"module": {"pair": {"tuple": [affine(a, b), {"param": [b]}]},
                             "heads": {"dict": {"left": affine(b, 1), "right": affine(b, 1)}}}}
    a, b = size(3), size(2)
    tied = {"module": {"encoder": affine(a, b),
                       "decoder": {"same": "encoder"},          # one module under two names
                       "extra": {"list": [{"same": "encoder.w"}]},  # and its weight once more
                       "bias": {"param": [b]}}}
    cases = [
        ("no parameters", "attributes", nothing),
        ("flat: two Parameters beside a number, a string and a constant Tensor", "attributes",
         affine(size(3), size(2))),
        ("nested: Modules inside a Module", "nested", block()),
        ("a list of Modules", "containers", stack(size(3, 5))),
        ("a tuple and a dict", "containers", containers),
        ("deep: lists of Modules of Modules", "containers",
         {"module": {"body": {"list": [block(), stack(size(2, 5))]}, "head": block()}}),
        ("shared: one module and one weight reachable twice", "nested", tied)]
    return {"cases": [{"case": case, "cause": cause, "tree": tree}
                      for case, cause, tree in cases]}


def _build_tree(node: dict[str, Any], path: str, Module: type, Parameter: type,
                built: dict[str, Any], rng: np.random.Generator) -> Any:
    """The object a tree describes, made of the student's Module and Parameter."""
    (kind, value), = node.items()

    def child(key: Any, sub: dict[str, Any]) -> Any:
        return _build_tree(sub, _join(path, key), Module, Parameter, built, rng)

    if kind == "same":
        return built[value]
    if kind == "param":
        obj: Any = Parameter(rng.normal(size=tuple(value)))
    elif kind == "tensor":
        obj = Tensor(np.ones(tuple(value)))
    elif kind in ("number", "text"):
        obj = value
    elif kind in ("list", "tuple"):
        items = [child(i, sub) for i, sub in enumerate(value)]
        obj = items if kind == "list" else tuple(items)
    elif kind == "dict":
        obj = {key: child(key, sub) for key, sub in value.items()}
    else:
        class Node(Module):  # type: ignore[misc]
            def __init__(self) -> None:   # the attributes are set below, in the tree's order
                pass

        obj = Node()
        for name, sub in value.items():
            setattr(obj, name, child(name, sub))
    built[path] = obj
    return obj


def _returned(built: dict[str, Any], got: list[Any] | None, again: list[Any] | None,
              Parameter: type) -> dict[str, Any]:
    """What parameters() returned, called twice, as plain data: the path in the tree where
    each item was built ("" for what is no Tensor; the path comes from the tree, so that a
    Module that keeps its parameters elsewhere, as PyTorch's does, reads the same), and what
    each item of the first call that is no Parameter is."""
    where = {id(obj): path for path, obj in built.items() if isinstance(obj, Tensor)}

    def paths(found: list[Any] | None) -> list[str] | None:
        return None if found is None else [
            where.get(id(p), "<not in the module>") if isinstance(p, Tensor) else "" for p in found]

    others = [f"a Tensor that is not a Parameter: {where.get(id(p), '<not in the module>')} "
              f"{tuple(int(n) for n in p.shape)}" if isinstance(p, Tensor) else
              f"{type(p).__name__}: {p!r:.60}" for p in got or [] if not isinstance(p, Parameter)]
    return {"found": paths(got), "again": paths(again), "not parameters": others}


def _parameters_run(probes: dict[str, Any], Module: type, Parameter: type) -> dict[str, Any]:
    """3.2, run: build each tree from the student's classes, call parameters() twice, send
    back what it found (as paths in the tree)."""
    check = _CHECK_32
    _refuse_minigrad(check, Module=Module, Parameter=Parameter)
    scaffolded = _scaffolded(Module, "parameters", vars(Module).get("parameters"), Parameter)
    if scaffolded is None:
        raise CheckFailed(f"{check}: this check builds modules out of your Parameter class, "
                          "which does not work yet. Make check 3.1 pass first.")
    Module, Parameter = scaffolded

    def call(module: Any, case: str) -> list[Any] | None:
        with student_code(f"{check}, case '{case}'", "parameters()"):
            try:
                got = module.parameters()
            except RecursionError as e:
                raise mismatch(check, case, "every Parameter, each once", "RecursionError",
                               "parameters() calls itself on the same module again; recurse "
                               "into the attribute's module (value.parameters()), not self") from e
            except ValueError as e:
                if "broadcast" not in str(e) and "truth value" not in str(e):
                    raise
                raise mismatch(check, case, "every Parameter, each once",
                               f"ValueError: {str(e).strip()}",
                               "`value in found` (and ==) compare tensors element by element, "
                               "which fails for tensors of different shapes. To skip a "
                               "parameter you already have, compare identities: "
                               "any(value is p for p in found)") from e
            return None if got is None else list(got)

    rng = np.random.default_rng(3)       # the parameters' values (any will do)
    results = []
    for item in probes["cases"]:
        case = item["case"]
        built: dict[str, Any] = {}
        with student_code(f"{check}, case '{case}' (building it)", "your Module"):
            module = _build_tree(item["tree"], "", Module, Parameter, built, rng)
        got = call(module, case)
        again = None if got is None else call(module, f"{case} (called twice)")
        results.append(_returned(built, got, again, Parameter))
    return {"cases": results}


@exercise("3.2", split=_split(_parameters_probe, _parameters_run, "_parameters_judge",
                              "which of the objects parameters() returned are Parameters"))
def parameters(Module: type, Parameter: type) -> None:
    """Check 3.2: ``Module.parameters()`` finds every Parameter exactly once, in module trees
    flat, nested, in lists, tuples and dicts, several levels deep, and shared."""


# ---------------------------------------------------------------------------------------------
# 3.3 Linear


def _linear_probe(rng: np.random.Generator | None) -> dict[str, Any]:
    """A layer to initialise (sizes and seed), and fixed weights, inputs and the gradient G
    that arrives from above, for the forward and backward passes."""
    if rng is None:
        return {"init": {"in": 4, "out": 3, "seed": 0},
                "W": np.array([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]), "b": np.array([0.01, -0.02]),
                "x": np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]]),
                "G": np.array([[1.0, -2.0], [0.5, 3.0]]), "seed": 1}
    n_in = int(rng.integers(2, 7))
    n_out = int(rng.choice([n for n in range(2, 7) if n != n_in]))   # a transposed W shows
    m_in, m_out, batch = int(rng.integers(2, 6)), int(rng.integers(1, 5)), int(rng.integers(2, 5))
    return {"init": {"in": n_in, "out": n_out, "seed": int(rng.integers(2**31))},
            "W": rng.normal(size=(m_out, m_in)).round(2), "b": rng.normal(size=m_out).round(2),
            "x": rng.normal(size=(batch, m_in)).round(2),
            "G": rng.normal(size=(batch, m_out)).round(2), "seed": int(rng.integers(2**31))}


def _linear_made(Linear: type, Parameter: type, n_in: int, n_out: int, seed: int) -> Any:
    """``Linear(n_in, n_out, rng=default_rng(seed))``, its weight and bias Parameters."""
    check, case = _CHECK_33, f"Linear({n_in}, {n_out})"
    layer = _called(check, f"Linear({n_in}, {n_out}, rng=default_rng({seed}))", "Linear",
                    lambda: Linear(n_in, n_out, rng=np.random.default_rng(seed)))
    for name in ("weight", "bias"):
        p = getattr(layer, name, None)
        if p is None:
            raise mismatch(check, case, f"an attribute self.{name}", "none",
                           f"store the {name} as self.{name} (PyTorch's names)")
        if not isinstance(p, Parameter):
            raise mismatch(check, case, f"self.{name} a Parameter", type(p).__name__,
                           "wrap the initial values in Parameter(...) so parameters() finds "
                           "them and they get a gradient")
    return layer


def _linear_forward(layer: Any, x: Tensor, case: str) -> Any:
    """The layer's output for ``x``, which must be a Tensor."""
    check = _CHECK_33
    with student_code(f"{check}, case '{case}'", "Linear.forward"):
        try:
            y = layer(x)
        except ValueError as e:
            if "matmul" not in str(e):
                raise
            raise mismatch(check, case, f"x of shape {x.shape} @ W.T of shape "
                           f"{tuple(layer.weight.shape[::-1])}", f"ValueError: {e}",
                           "the weight has shape (out, in) and x has shape (N, in): multiply "
                           "by the transpose, x @ self.weight.T") from e
    if not isinstance(y, Tensor):
        raise mismatch(check, case, "a Tensor", type(y).__name__,
                       "compute with the Tensors (x @ self.weight.T + self.bias), not their "
                       ".data arrays, so that the graph is recorded")
    return y


def _linear_run(probes: dict[str, Any], Linear: type, Parameter: type) -> dict[str, Any]:
    """3.3, run: two layers from one seed; the forward and backward passes with the probe's
    weights; back go the initial weights, the outputs, the gradients and finite differences
    of the student's own forward."""
    _refuse_minigrad(_CHECK_33, Linear=Linear, Parameter=Parameter)
    Linear, Parameter = (_scaffolded(Linear, "__init__", getattr(Linear, "__init__"), Parameter)
                         or (Linear, Parameter))
    init = probes["init"]
    first, second = (_linear_made(Linear, Parameter, init["in"], init["out"], init["seed"])
                     for _ in range(2))
    sent: dict[str, Any] = {"weight": _array(first.weight), "bias": _array(first.bias),
                            "weight again": _array(second.weight)}
    W, b, x, G = (np.array(probes[k], dtype=float) for k in ("W", "b", "x", "G"))
    layer = _linear_made(Linear, Parameter, W.shape[1], W.shape[0], probes["seed"])
    sent["shapes"] = {name: [int(n) for n in getattr(layer, name).shape]
                      for name in ("weight", "bias")}
    if sent["shapes"] != {"weight": list(W.shape), "bias": list(b.shape)}:
        return sent           # the probe's weights do not fit this layer: the judge says why
    layer.weight.data, layer.bias.data = W.copy(), b.copy()
    xt = Tensor(x.copy(), requires_grad=True)
    y = _linear_forward(layer, xt, f"forward of a batch of {len(x)} inputs with {W.shape[1]} "
                                   "features")
    one = _linear_forward(layer, Tensor(x[:1].copy()), "forward of a batch of one")
    fits = y.shape == G.shape            # else the judge stops at the shape of y
    if fits and y.requires_grad:
        (y * Tensor(G.copy())).sum().backward()
    grads = {"weight": layer.weight, "bias": layer.bias, "input x": xt}

    def loss(_: np.ndarray) -> float:   # the student's forward, at the weights as they are
        with no_grad():
            return float((_array(_linear_forward(layer, Tensor(x.copy()), "finite differences"))
                          * G).sum())

    sent.update({"y": _array(y), "one": _array(one),
                 "grads": {name: _grad(t) for name, t in grads.items()},
                 "numeric": {name: numerical_gradient(loss, getattr(layer, name).data)
                             if fits else None for name in ("weight", "bias")}})
    return sent


@exercise("3.3", split=_split(_linear_probe, _linear_run, "_linear_judge",
                              "weight and bias are Parameters; the layer returns a Tensor"))
def linear(Linear: type, Parameter: type) -> None:
    """Check 3.3: ``Linear(in_features, out_features, rng)``: its parameters' shapes and
    initialisation, ``x @ W.T + b`` against NumPy, the gradients of weight, bias and input
    against ``G.T @ x``, ``G.sum(0)``, ``G @ W`` and finite differences."""


# ---------------------------------------------------------------------------------------------
# 3.4 ReLU and Sequential

#: The layers a Sequential is made of, by name: what each does (to a Tensor or an array), its
#: label in messages.
_LAYERS: dict[str, tuple[Callable[[Any], Any], str]] = {
    "add": (lambda v: v + 1.0, "add 1"), "double": (lambda v: v * 2.0, "double")}


class _Layer:
    """A layer of ``_LAYERS`` for the Sequential check (callable, and with a forward)."""

    def __init__(self, name: str) -> None:
        self.forward = _LAYERS[name][0]

    def __call__(self, x: Tensor) -> Any:
        return self.forward(x)


def _order_label(order: list[str]) -> str:
    """``add 1, then double`` for two layers; ``add 1, double, add 1`` for more."""
    labels = [_LAYERS[name][1] for name in order]
    return ", then ".join(labels) if len(labels) == 2 else ", ".join(labels)


def _contains(value: Any, target: Any, depth: int = 0) -> bool:
    if value is target:
        return True
    if depth > 3 or not isinstance(value, (list, tuple, dict)):
        return False
    return any(_contains(v, target, depth + 1)
               for v in (value.values() if isinstance(value, dict) else value))


def _relu_sequential_probe(rng: np.random.Generator | None) -> dict[str, Any]:
    """Inputs for ReLU (a zero among them), for its gradient (no zero: relu has a kink there),
    the orders of layers for Sequential, and inputs for a gradient through Sequential."""
    if rng is None:
        return {"relu x": [[-2.0, -0.5, 0.0, 0.5, 3.0]], "grad x": [[-2.0, -0.5, 0.5, 3.0]],
                "upstream": [[1.0, 2.0, 3.0, 4.0]],
                "orders": [["add", "double"], ["double", "add"], ["add", "double", "add", "add"]],
                "v": [[1.0, -3.0]], "through x": [[-1.0, 2.0]]}

    def nonzero(n: int) -> np.ndarray:
        return (rng.uniform(0.2, 3.0, size=(1, n)) * rng.choice([-1.0, 1.0], size=(1, n))).round(1)

    relu_x = rng.normal(size=(1, int(rng.integers(3, 8)))).round(1)
    relu_x[0, int(rng.integers(relu_x.shape[1]))] = 0.0
    n = int(rng.integers(3, 7))
    first = ["add", "double"] if rng.integers(2) else ["double", "add"]
    longer = ["add", "double"] + [str(rng.choice(["add", "double"]))
                                  for _ in range(int(rng.integers(1, 4)))]
    longer = [longer[int(i)] for i in rng.permutation(len(longer))]
    return {"relu x": relu_x, "grad x": nonzero(n),
            "upstream": rng.integers(1, 6, size=(1, n)).astype(float),
            "orders": [first, first[::-1], longer],
            "v": rng.normal(size=(1, int(rng.integers(2, 5)))).round(1),
            "through x": nonzero(int(rng.integers(2, 5)))}


def _relu_sequential_run(probes: dict[str, Any], ReLU: type, Sequential: type
                         ) -> dict[str, Any]:
    """3.4, run: ReLU's outputs and gradient, and the paths of its tensors, if any;
    Sequential's outputs for each order of layers and the gradient through it."""
    check = _CHECK_34
    _refuse_minigrad(check, ReLU=ReLU, Sequential=Sequential)

    def backward(out: Any, upstream: np.ndarray) -> None:
        if isinstance(out, Tensor) and out.requires_grad and out.shape == upstream.shape:
            (out * Tensor(upstream)).sum().backward()

    x, v = (np.array(probes[k], dtype=float) for k in ("relu x", "v"))
    y = _called(check, f"ReLU forward of {_numbers_text(np.ravel(x))}", "ReLU",
                lambda: ReLU()(Tensor(x.copy())))
    if not isinstance(y, Tensor):
        raise mismatch(check, "ReLU forward", "a Tensor", type(y).__name__,
                       "return a Tensor operation (x.relu()), not a NumPy array")
    xs, through = (Tensor(np.array(probes[k], dtype=float), requires_grad=True)
                   for k in ("grad x", "through x"))
    backward(_called(check, "ReLU gradient", "ReLU", lambda: ReLU()(xs)),
             np.array(probes["upstream"], dtype=float))
    found: dict[int, str] = {}
    _find_tensors(_called(check, "ReLU()", "ReLU", ReLU), "", found, set())
    results = []
    for order in probes["orders"]:
        layers = {name: _Layer(name) for name in set(order)}
        label = _order_label(order)
        seq = _called(check, f"Sequential({label})", "Sequential",
                      lambda: Sequential(*[layers[name] for name in order]))
        case = f"Sequential({label}) on {_fmt(v)}"
        got = _called(check, case, "Sequential", lambda: seq(Tensor(v.copy())))
        if not isinstance(got, Tensor):
            raise mismatch(check, case, "a Tensor", f"{got!r:.60}",
                           "apply the layers one after another in the order given, each to the "
                           "previous layer's output, and return the last output")
        attributes = getattr(seq, "__dict__", {})
        if not all(any(_contains(value, layer) for value in attributes.values())
                   for layer in layers.values()):
            raise mismatch(check, "where Sequential keeps its layers",
                           "the layers in an attribute, e.g. self.layers = list(layers)",
                           f"attributes {sorted(attributes)}",
                           "parameters() looks through attributes and lists: keep the layers "
                           "in a list attribute so their parameters are found")
        results.append({"y": _array(got)})
    out = _called(check, "gradient through Sequential(ReLU(), double)", "Sequential",
                  lambda: Sequential(ReLU(), _Layer("double"))(through))
    backward(out, np.ones(through.shape))
    return {"relu": _array(y), "relu grad": _grad(xs), "relu tensors": list(found.values()),
            "cases": results, "through grad": _grad(through)}


@exercise("3.4", split=_split(_relu_sequential_probe, _relu_sequential_run,
                              "_relu_sequential_judge", "ReLU and Sequential return Tensors; "
                              "Sequential keeps its layers in an attribute"))
def relu_and_sequential(ReLU: type, Sequential: type) -> None:
    """Check 3.4: ``ReLU()`` and ``Sequential(*layers)``: forward values and gradients."""


# ---------------------------------------------------------------------------------------------
# 3.5 SGD


def _sgd_probe(rng: np.random.Generator | None) -> dict[str, Any]:
    """Weights, their gradients and learning rates, and the values of a parameter that has no
    gradient (it must not move)."""
    if rng is None:
        return {"w": np.array([[1.0, -2.0], [0.5, 4.0]]), "b": np.array([0.25, -0.75]),
                "gw": np.array([[0.5, 0.25], [-1.0, 2.0]]), "gb": np.array([1.0, -4.0]),
                "frozen": np.array([3.0, 3.0]), "lrs": [0.1, 0.5], "lr twice": 0.1}

    def gradient(shape: tuple[int, ...]) -> np.ndarray:      # no zeros: every entry must move
        return (rng.uniform(0.25, 4.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)).round(2)

    rows, cols = int(rng.integers(1, 4)), int(rng.integers(2, 5))
    lrs = [round(float(lr), 2) for lr in rng.choice(np.arange(0.05, 0.95, 0.05), size=2,
                                                     replace=False)]
    return {"w": rng.normal(size=(rows, cols)).round(2), "b": rng.normal(size=rows).round(2),
            "gw": gradient((rows, cols)), "gb": gradient((rows,)),
            "frozen": rng.normal(size=int(rng.integers(1, 4))).round(2), "lrs": lrs,
            "lr twice": round(float(rng.uniform(0.05, 0.9)), 2)}


def _sgd_step(opt: Any, case: str) -> None:
    """``opt.step()``, a TypeError about None explained."""
    with student_code(f"{_CHECK_35}, case '{case}'", "SGD.step"):
        try:
            opt.step()
        except TypeError as e:
            if "NoneType" in str(e):
                raise mismatch(_CHECK_35, "a parameter whose grad is None", "it is skipped",
                               f"TypeError: {e}", "skip parameters whose .grad is None "
                               "(frozen, or not used by this loss)") from e
            raise


def _sgd_one_step(SGD: type, params: tuple[Tensor, Tensor, Tensor], lr: float, case: str
                  ) -> None:
    """One step on ``params``, and what only this process can see of it."""
    check, (w, b, frozen) = _CHECK_35, params
    opt = _called(check, case, "SGD(params, lr)", lambda: SGD([w, b, frozen], lr=lr))
    with _recorded_ops() as recorded:
        _sgd_step(opt, case)
    if recorded:
        raise mismatch(check, case, "no operation recorded into the graph",
                       f"step() recorded {len(recorded)} operation(s): {', '.join(recorded)}",
                       "an update written with Tensor arithmetic is recorded like any forward "
                       "operation; run it under `with no_grad():` (or decorate step with "
                       "@no_grad()), or compute on the arrays p.data and p.grad")
    if any(not isinstance(p.data, np.ndarray) for p in (w, b)):
        raise mismatch(check, case, "p.data an array", type(w.data).__name__,
                       "assign an array to p.data (p.data - lr * p.grad), not a Tensor")
    kept = list(getattr(opt, "params", [w, b, frozen]))
    if len(kept) != 3 or any(p is not q for p, q in zip(kept, (w, b, frozen))):
        raise mismatch(check, case, "opt.params to hold the very Parameters it was given",
                       "other objects", "update each parameter in place (p.data = ...); "
                       "replacing it with a new tensor means the model never sees the update")
    if not (w.is_leaf and w.requires_grad and isinstance(w, Tensor)):
        raise mismatch(check, case, "w still a leaf that requires grad", repr(w),
                       "update p.data; do not turn the parameter into an operation's output")


def _sgd_run(probes: dict[str, Any], SGD: type, Parameter: type) -> dict[str, Any]:
    """3.5, run: one step for each learning rate, two steps on parameters given as a
    generator, then zero_grad(); the parameters' values (and gradients) after each go back."""
    check = _CHECK_35
    _refuse_minigrad(check, SGD=SGD, Parameter=Parameter)
    Parameter = _working(Parameter)
    w0, b0, gw, gb, f0 = (np.array(probes[k], dtype=float)
                          for k in ("w", "b", "gw", "gb", "frozen"))
    steps = []
    for lr in probes["lrs"]:
        w, b, frozen = Parameter(w0.copy()), Parameter(b0.copy()), Parameter(f0.copy())
        w.grad, b.grad = gw.copy(), gb.copy()   # frozen has no gradient: it must not move
        _sgd_one_step(SGD, (w, b, frozen), lr, f"one step with lr={lr}, w = {_fmt(w0)}, "
                                               f"grad = {_fmt(gw)}")
        steps.append({"w": _array(w), "b": _array(b), "frozen": _array(frozen)})
    w, b = Parameter(w0.copy()), Parameter(b0.copy())
    case = f"two steps with lr={probes['lr twice']}, parameters given as a generator"
    opt = _called(check, case, "SGD(params, lr)",      # a generator, as model.parameters() may be
                  lambda: SGD((p for p in [w, b]), lr=probes["lr twice"]))
    for _ in range(2):          # the second step starts from the values after the first
        w.grad, b.grad = gw.copy(), gb.copy()
        _sgd_step(opt, case)
    twice = _array(w)
    _called(check, "zero_grad()", "SGD.zero_grad", lambda: opt.zero_grad())
    return {"cases": steps, "twice": twice, "zero_grad": {"w": _grad(w), "b": _grad(b)}}


@exercise("3.5", split=_split(_sgd_probe, _sgd_run, "_sgd_judge",
                              "step() records no operation, keeps p.data an array and updates "
                              "the very Parameter objects, which stay leaves"))
def sgd(SGD: type, Parameter: type) -> None:
    """Check 3.5: ``SGD(params, lr)``: ``step()`` computes ``p <- p - lr * grad`` in place
    (the same Parameters, still leaves), skips parameters without a gradient and records
    nothing into a graph; ``zero_grad()`` clears the gradients."""


#: What the judges (judges/lesson3.py) hold, found here too in a notebook (an ImportError in
#: the grader's sandbox).
__getattr__ = judges_names(__name__, frozenset({
    "_CAUSES_32", "_linear_shapes", "_numbers", "_numbers_or_none", "_shape_sent", "_texts",
    "_tree_parameters", "malformed", "place", "value_at"}))
