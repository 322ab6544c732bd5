"""What a lesson's demos run on: the student's code once its check has passed, else the reference.

A demo that needs exercise 3.3's ``Linear`` should still run when 3.3 is not passing yet, so that
one stuck exercise costs only itself. Each demo asks for the pieces it uses::

    demo = yours_or_reference("3.3", "3.4", Linear=Linear, ReLU=ReLU, Sequential=Sequential)
    model = demo.Sequential(demo.Linear(1, 8, rng=0), demo.ReLU(), demo.Linear(8, 1, rng=1))

and gets back the student's objects when every one of those exercises' checks has passed in
this kernel (:func:`minigrad.course.checks.done`), or else the reference versions of *all* of
them (so that they work together), with one line saying so. The student's own names are never
rebound: the demo reads ``demo.Linear``.

The references are the ones the checks use where the checks have them (lesson 1's reference
``Tensor``, lesson 2's reference operations), and the library's own classes for lesson 3
(``minigrad.nn``, ``minigrad.optim``).
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # imported when lesson 1's references are first asked for
    from .checks.lesson1 import ReferenceTensor

__all__ = ["reference", "yours_or_reference"]

VJP = Callable[[Any], tuple[Any, ...]]  # the output's gradient -> the parents' gradients


def yours_or_reference(*exercises: str, **yours: Any) -> SimpleNamespace:
    """The student's objects if the checks of all ``exercises`` passed here, else references.

    Parameters
    ----------
    *exercises : str
        The exercise ids whose work the demo uses, e.g. ``"3.3", "3.4"``.
    **yours : object
        The student's objects the demo uses, by the name the lesson gives them.

    Returns
    -------
    types.SimpleNamespace
        The objects under the same names: the student's, or every one a reference.
    """
    from . import checks

    missing = [e for e in exercises if not checks.done(e)]
    if not missing:
        return SimpleNamespace(**yours)
    lesson = int(missing[0].split(".")[0])
    ids = " and ".join([", ".join(missing[:-1]), missing[-1]] if len(missing) > 1 else missing)
    names = list(yours)
    shown = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    verb = "is" if len(missing) == 1 else "are"
    print(f"exercise{'s' if len(missing) > 1 else ''} {ids} {verb} not passing yet: this demo "
          f"uses the reference {shown}")
    return SimpleNamespace(**{name: reference(lesson, name) for name in names})


def reference(lesson: int, name: str) -> Any:
    """The reference version of ``name`` from lesson ``lesson`` (what a demo falls back to)."""
    table = _table(lesson)
    if name not in table:
        raise KeyError(f"lesson {lesson} has no reference {name!r}; it has {sorted(table)}")
    return table[name]


@functools.cache
def _table(lesson: int) -> dict[str, Any]:
    """Made once per kernel, so that a demo's pieces all come from one table."""
    return _REFERENCES[lesson]()


# ---------------------------------------------------------------------------------------------
# Lesson 1: the reference Tensor, with backward() and the operators


def _lesson1() -> dict[str, Any]:
    Tensor = _lesson1_tensor()
    # Each operation is also a function, add(a, b) as a + b: what exercises 1.4 and 1.5 ask.
    return {"Tensor": Tensor, "topological_order": topological_order, "backward": backward,
            "add": Tensor.__add__, "sub": Tensor.__sub__, "mul": Tensor.__mul__,
            "div": Tensor.__truediv__, "power": Tensor.__pow__, "exp": Tensor.exp,
            "log": Tensor.log, "tanh": Tensor.tanh, "relu": Tensor.relu}


def _lesson1_tensor() -> Any:  # a class made when first asked for (its base is imported then)
    """Lesson 1's Tensor: the checks' reference Tensor with the operators and backward()."""
    from .checks.lesson1 import ReferenceTensor

    class Tensor(ReferenceTensor):
        """Lesson 1's Tensor with every exercise done (the checks' reference Tensor)."""

        def __init__(self, data: Any, parents: tuple[ReferenceTensor, ...] = (),
                     vjp: VJP | None = None, op: str = "") -> None:
            super().__init__(data, parents, vjp)
            self.op = op  # what graph.draw shows

        @property
        def shape(self) -> tuple[int, ...]:
            return self.data.shape

        def backward(self) -> None:
            backward(self)

        def __add__(self, other: ReferenceTensor) -> Tensor:
            return Tensor(self.data + other.data, (self, other), lambda g: (g, g), "add")

        def __sub__(self, other: ReferenceTensor) -> Tensor:
            return Tensor(self.data - other.data, (self, other), lambda g: (g, -g), "sub")

        def __mul__(self, other: ReferenceTensor) -> Tensor:
            a, b = self.data, other.data
            return Tensor(a * b, (self, other), lambda g: (g * b, g * a), "mul")

        def __truediv__(self, other: ReferenceTensor) -> Tensor:
            a, b = self.data, other.data
            return Tensor(a / b, (self, other), lambda g: (g / b, -g * a / b**2), "div")

        def __pow__(self, p: float) -> Tensor:
            a = self.data
            return Tensor(a**p, (self,), lambda g: (g * p * a ** (p - 1),), "power")

        def __neg__(self) -> Tensor:
            return Tensor(-self.data, (self,), lambda g: (-g,), "neg")

        def exp(self) -> Tensor:
            y = np.exp(self.data)
            return Tensor(y, (self,), lambda g: (g * y,), "exp")

        def log(self) -> Tensor:
            a = self.data
            return Tensor(np.log(a), (self,), lambda g: (g / a,), "log")

        def tanh(self) -> Tensor:
            y = np.tanh(self.data)
            return Tensor(y, (self,), lambda g: (g * (1 - y**2),), "tanh")

        def relu(self) -> Tensor:
            a = self.data
            return Tensor(np.maximum(a, 0.0), (self,), lambda g: (np.where(a > 0, g, 0.0),),
                          "relu")

    return Tensor


def topological_order(root: ReferenceTensor) -> list[ReferenceTensor]:
    """Every node ``root`` depends on, each after its parents (the solution of exercise 1.2)."""
    order: list[ReferenceTensor] = []
    visited: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, parents_done = stack.pop()
        if parents_done:
            order.append(node)
        elif id(node) not in visited:
            visited.add(id(node))
            stack.append((node, True))
            stack.extend((p, False) for p in node.parents if id(p) not in visited)
    return order


def backward(self: ReferenceTensor) -> None:
    """The gradient of ``self`` with respect to every node before it (exercise 1.3)."""
    self.grad = np.ones_like(self.data)
    for node in reversed(topological_order(self)):
        if node.vjp is not None:
            for parent, g in zip(node.parents, node.vjp(node.grad)):
                parent.grad = g if parent.grad is None else parent.grad + g


# ---------------------------------------------------------------------------------------------
# Lesson 2: the reference operations the checks swap in


def _lesson2() -> dict[str, Any]:
    from .checks import lesson2

    return dict(lesson2._REFERENCES)


# ---------------------------------------------------------------------------------------------
# Lesson 3: the library's classes, which the lesson's are modelled on


def _lesson3() -> dict[str, Any]:
    from minigrad import nn, optim

    return {"Parameter": nn.Parameter, "Module": nn.Module, "Linear": nn.Linear,
            "ReLU": nn.ReLU, "Sequential": nn.Sequential, "SGD": optim.SGD}


# ---------------------------------------------------------------------------------------------
# Lesson 4: the 2-2-2 network, its gradients by hand, the training loop


def _lesson4() -> dict[str, Any]:
    from minigrad import Tensor, nn, optim
    from minigrad import functional as F

    def network(W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, b2: np.ndarray) -> nn.Module:
        model = nn.Sequential(nn.Linear(W1.shape[1], W1.shape[0]), nn.Sigmoid(),
                              nn.Linear(W2.shape[1], W2.shape[0]))
        model.load_state_dict({"0.weight": W1, "0.bias": b1, "2.weight": W2, "2.bias": b2})
        return model

    def hand_gradients(x: np.ndarray, t: int, W1: np.ndarray, b1: np.ndarray,
                       W2: np.ndarray, b2: np.ndarray) -> dict[str, np.ndarray]:
        h = 1 / (1 + np.exp(-(W1 @ x + b1)))
        z2 = W2 @ h + b2
        p = np.exp(z2 - z2.max())
        delta2 = p / p.sum() - np.eye(len(z2))[t]
        delta1 = (W2.T @ delta2) * h * (1 - h)
        return {"W1": np.outer(delta1, x), "b1": delta1, "W2": np.outer(delta2, h),
                "b2": delta2}

    # The solution of exercise 4.3 as students write it (solutions/04_…: a pair on purpose).
    def train(model: nn.Module, X: np.ndarray, y: np.ndarray, steps: int,
              lr: float) -> list[float]:
        inputs, opt, losses = Tensor(X), optim.SGD(model.parameters(), lr=lr), []
        for _ in range(steps):
            opt.zero_grad()
            loss = F.cross_entropy(model(inputs), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses

    return {"network": network, "hand_gradients": hand_gradients, "train": train}


_REFERENCES: dict[int, Callable[[], dict[str, Any]]] = {
    1: _lesson1, 2: _lesson2, 3: _lesson3, 4: _lesson4}
