"""Small helpers that several parts of minigrad need, each written once.

What lives here: checks of arguments that the engine (``conv``), the layers (``nn``) and the
exporters (``export``) all take, and the one topological order of a graph (``graph``, the scalar
engine and lesson 1's checks walk their graphs with it). It imports nothing from minigrad, so any
module may import it, even the stand-alone scalar engine.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

__all__ = ["pair", "topological_order"]

Node = TypeVar("Node")


def pair(value: Any, where: str, name: str, low: int = 0) -> tuple[int, int]:
    """An int-or-pair argument as a pair: ``3 -> (3, 3)``; ``(2, 3)`` or ``[2, 3]`` -> ``(2, 3)``.

    Parameters
    ----------
    value : int or pair of ints
        What the caller passed, e.g. a ``kernel_size``, ``stride`` or ``padding``.
    where, name : str
        The function or layer and the argument, for the error message.
    low : int
        The smallest value allowed (1 for a kernel size or a stride, 0 for padding).

    Raises
    ------
    TypeError
        If ``value`` is not an int or a pair of ints (booleans are not ints here).
    ValueError
        If either number is below ``low``.

    >>> pair(5, "Conv2d", "kernel_size", low=1)
    (5, 5)
    >>> pair([0, 0], "Conv2d", "padding")
    (0, 0)
    """
    both = (value, value) if isinstance(value, int) else (
        tuple(value) if isinstance(value, (tuple, list)) else ())
    if len(both) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in both):
        raise TypeError(f"{where}: {name} must be an int or a pair of ints; got {value!r}")
    if min(both) < low:
        raise ValueError(f"{where}: {name} must be >= {low}; got {value!r}")
    return both[0], both[1]


def _parents_attribute(node: Any) -> Iterable[Any]:
    parents: Iterable[Any] = node.parents
    return parents


def topological_order(root: Node, parents: Callable[[Node], Iterable[Node]] = _parents_attribute
                      ) -> list[Node]:
    """Every node that ``root`` depends on, ``root`` included, each once, after all its parents.

    A depth-first walk with an explicit stack, so a chain 10,000 operations deep works (a
    recursive walk stops at Python's recursion limit). A node is put in the order only when it
    is popped the second time, with all of its parents already placed: one reached early
    through a short path still comes after every parent it has along a longer one.

    Parameters
    ----------
    root : node
        The output whose graph is walked.
    parents : callable, optional
        ``parents(node)`` gives the nodes ``node`` was computed from. By default the node's
        ``parents`` attribute (the scalar ``Var``, lesson 1's ``Tensor``); ``minigrad.graph``
        passes the tensors in ``Tensor._parents`` that need a gradient.

    Returns
    -------
    list
        The nodes, inputs first and ``root`` last: run backward over ``reversed(order)``.

    >>> class N:
    ...     def __init__(self, name, *parents):
    ...         self.name, self.parents = name, parents
    >>> a = N("a"); b = N("b", a); c = N("c", a, b)
    >>> [n.name for n in topological_order(c)]
    ['a', 'b', 'c']
    """
    # The same walk as the solution of exercise 1.2 (solutions/01_…), on purpose: the course's
    # reference is what students write.
    order: list[Node] = []
    visited: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, parents_done = stack.pop()
        if parents_done:  # every parent is already in the order: the node can follow
            order.append(node)
            continue
        if id(node) in visited:  # reached again through another path
            continue
        visited.add(id(node))
        stack.append((node, True))
        for parent in parents(node):
            if id(parent) not in visited:
                stack.append((parent, False))
    return order
