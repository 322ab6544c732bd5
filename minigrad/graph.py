"""Walking and measuring the graph that a forward pass recorded.

Every operation keeps the arrays its backward rule needs (``saved=`` in :func:`minigrad.op`).
:func:`saved_bytes` adds them up, so a student can watch the memory a graph holds and see it
released by ``backward()`` and by ``del``.
"""
from __future__ import annotations

from typing import Any, Iterator

from .tensor import Tensor

__all__ = ["nodes", "saved_arrays", "saved_bytes", "count_ops", "to_dot"]


def nodes(root: Tensor) -> list[Tensor]:
    """Every tensor of the graph behind ``root`` that needs a gradient, inputs first.

    A depth-first walk with an explicit stack (no recursion: a chain 10,000 operations deep
    works). A tensor is marked visited when it is popped, so one reached early through a
    short path still comes after every parent it has along a longer one.
    """
    order: list[Tensor] = []
    visited: set[int] = set()
    stack: list[tuple[Tensor, bool]] = [(root, False)]
    while stack:
        node, parents_done = stack.pop()
        if parents_done:  # every parent is already in the order: the node can follow
            order.append(node)
            continue
        if id(node) in visited:
            continue
        visited.add(id(node))
        stack.append((node, True))
        for parent in node._parents:
            if parent.requires_grad and id(parent) not in visited:
                stack.append((parent, False))
    return order


def saved_arrays(root: Tensor) -> Iterator[Any]:
    """Each array saved for backward in the graph behind ``root``, once."""
    seen: set[int] = set()
    for node in nodes(root):
        for array in node._saved:
            if id(array) not in seen:
                seen.add(id(array))
                yield array


def saved_bytes(root: Tensor) -> int:
    """Bytes held by the arrays saved for backward (0 once ``backward()`` has freed them)."""
    return sum(int(a.size) * a.dtype.itemsize if hasattr(a.dtype, "itemsize") else
               int(a.size) * 8 for a in saved_arrays(root))


def count_ops(root: Tensor) -> dict[str, int]:
    """How many times each operation appears in the graph, e.g. ``{"matmul": 3, ...}``."""
    counts: dict[str, int] = {}
    for node in nodes(root):
        if node._op is not None:
            counts[node._op] = counts.get(node._op, 0) + 1
    return counts


def to_dot(root: Tensor) -> str:
    """The graph in Graphviz's dot language (render with ``dot -Tpng``)."""
    lines = ["digraph minigrad {", "  rankdir=LR;"]
    for node in nodes(root):
        label = f"{node._op or 'leaf'}\\n{node.shape}"
        shape = "box" if node._op else "ellipse"
        lines.append(f'  n{id(node)} [label="{label}", shape={shape}];')
        for parent in node._parents:
            if parent.requires_grad:
                lines.append(f"  n{id(parent)} -> n{id(node)};")
    lines.append("}")
    return "\n".join(lines)
