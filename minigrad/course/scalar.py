"""A scalar autodiff engine: the ``Var`` the course starts from.

Every ``Var`` holds one number (``data``) and, after :meth:`Var.backward`, the derivative of the
final result with respect to it (``grad``). A ``Var`` made by an operation remembers its
*parents* and the *local derivative* of the operation with respect to each parent, computed
during the forward pass. ``z = x * y`` stores ``parents = (x, y)`` and
``local_grads = (y.data, x.data)``, because dz/dx = y and dz/dy = x.

The backward pass is then the chain rule, applied in reverse topological order::

    parent.grad += local_grad * child.grad

Nothing in a ``Var`` refers back to the ``Var`` itself, so a graph holds no reference cycles
and is freed as soon as its last ``Var`` goes away. This module is standalone: it does not
import the tensor engine or NumPy. The one thing it shares is the topological order, from
``minigrad._utils``, a module that imports nothing (the same walk orders lesson 1's graphs and
minigrad's; a student's own version of it is the solution of exercise 1.2).

>>> x, y = Var(2.0), Var(3.0)
>>> z = x * y + x.exp()
>>> z.backward()
>>> x.grad  # y + exp(x)
10.38905609893065
>>> y.grad  # x
2.0
"""
from __future__ import annotations

import math
from typing import Union

from minigrad._utils import topological_order

__all__ = ["Var"]

Number = Union[int, float]


class Var:
    """A scalar that records the operations applied to it.

    Parameters
    ----------
    data : int or float
        The value (stored as a float).
    parents : tuple of Var, optional
        The inputs of the operation that made this ``Var`` (empty for a leaf).
    local_grads : tuple of float, optional
        The derivative of this value with respect to each parent, same order.
    op : str, optional
        The operation's name, for printing and drawing graphs.
    """

    __slots__ = ("data", "grad", "parents", "local_grads", "op", "__weakref__")

    def __init__(self, data: Number, parents: tuple["Var", ...] = (),
                 local_grads: tuple[float, ...] = (), op: str = "") -> None:
        if isinstance(data, Var):
            raise TypeError("Var(data): data must be a number, got a Var; use the Var itself")
        self.data = float(data)
        self.grad = 0.0
        self.parents = parents
        self.local_grads = local_grads
        self.op = op

    def __repr__(self) -> str:
        return f"Var(data={self.data!r}, grad={self.grad!r})"

    # --- arithmetic: each op is its value, its parents, and the local derivatives ------------

    def __add__(self, other: Var | Number) -> Var:
        other = _as_var(other)
        return Var(self.data + other.data, (self, other), (1.0, 1.0), "+")

    def __mul__(self, other: Var | Number) -> Var:
        other = _as_var(other)
        return Var(self.data * other.data, (self, other), (other.data, self.data), "*")

    def __pow__(self, other: Var | Number) -> Var:
        x = self.data
        if isinstance(other, Var):  # x ** e: d/dx = e x^(e-1), d/de = x^e log(x)
            e = other.data
            y = x ** e
            return Var(y, (self, other), (e * x ** (e - 1), _pow_exponent_grad(x, y)), "**")
        if not isinstance(other, (int, float)):
            return NotImplemented
        return Var(x ** other, (self,), (other * x ** (other - 1),), f"**{other}")

    def __neg__(self) -> Var:
        return Var(-self.data, (self,), (-1.0,), "neg")

    def __sub__(self, other: Var | Number) -> Var:
        other = _as_var(other)
        return Var(self.data - other.data, (self, other), (1.0, -1.0), "-")

    def __truediv__(self, other: Var | Number) -> Var:
        other = _as_var(other)
        x, y = self.data, other.data  # d(x/y)/dx = 1/y, d(x/y)/dy = -x/y^2
        return Var(x / y, (self, other), (1.0 / y, -x / (y * y)), "/")

    # reversed operators: 2 + x, 2 - x, 2 * x, 2 / x, 2 ** x
    def __radd__(self, other: Number) -> Var:
        return _as_var(other) + self

    def __rsub__(self, other: Number) -> Var:
        return _as_var(other) - self

    def __rmul__(self, other: Number) -> Var:
        return _as_var(other) * self

    def __rtruediv__(self, other: Number) -> Var:
        return _as_var(other) / self

    def __rpow__(self, other: Number) -> Var:
        return _as_var(other) ** self

    # --- functions ------------------------------------------------------------------------

    def exp(self) -> Var:
        y = math.exp(self.data)
        return Var(y, (self,), (y,), "exp")  # d exp(x)/dx = exp(x)

    def log(self) -> Var:
        if self.data <= 0:
            raise ValueError(f"log: needs a positive value, got {self.data}")
        return Var(math.log(self.data), (self,), (1.0 / self.data,), "log")

    def tanh(self) -> Var:
        y = math.tanh(self.data)
        return Var(y, (self,), (1.0 - y * y,), "tanh")  # d tanh(x)/dx = 1 - tanh(x)^2

    def sigmoid(self) -> Var:
        y = 0.5 * (math.tanh(0.5 * self.data) + 1.0)  # = 1 / (1 + exp(-x)), never overflows
        return Var(y, (self,), (y * (1.0 - y),), "sigmoid")

    def relu(self) -> Var:
        positive = self.data > 0
        return Var(self.data if positive else 0.0, (self,), (1.0 if positive else 0.0,), "relu")

    # --- backward -----------------------------------------------------------------------------

    def backward(self) -> None:
        """Add d(self)/d(v) to ``v.grad`` for every ``Var`` v that ``self`` depends on.

        The graph is put in topological order with an explicit stack (no recursion, so a chain
        of 10,000 operations works), then the chain rule runs from ``self`` back to the leaves.
        Gradients accumulate across calls, as in PyTorch: set ``v.grad = 0.0`` to start over.
        """
        order = topological_order(self)  # each Var after its parents
        grads = {id(self): 1.0}  # this pass's gradients, kept apart from earlier passes
        for node in reversed(order):
            g = grads.pop(id(node), 0.0)
            node.grad += g
            for parent, local in zip(node.parents, node.local_grads):
                grads[id(parent)] = grads.get(id(parent), 0.0) + local * g


def _as_var(x: Var | Number) -> Var:
    if isinstance(x, Var):
        return x
    if isinstance(x, (int, float)):
        return Var(x)
    raise TypeError(f"Var: cannot combine a Var with {type(x).__name__}; "
                    "expected a number or a Var")


def _pow_exponent_grad(x: float, y: float) -> float:
    """d(x^e)/de = x^e log(x): defined for x > 0; 0 at x = 0 (the limit); nan below."""
    if x > 0:
        return y * math.log(x)
    return 0.0 if x == 0 else math.nan
