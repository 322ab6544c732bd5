"""The broadcast plan: which cells of A and B each result cell reads, and the sums back.

:func:`unbroadcast` answers "what is the gradient of the input?" in one call; the plan spells the
same thing out cell by cell, for the widget's pictures and for tests.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from .text import say
__all__ = ["plan", "broadcast_pair", "BroadcastPlan", "NUMPY_RULE", "OPERATORS"]


# ``unbroadcast`` answers "what is the gradient of the input?" in one call. The plan answers the
# question underneath it, cell by cell: which cell of A and which cell of B each result cell was
# computed from. Reversed, that says which result cells send their gradient back into each
# input cell. The broadcast widget (minigrad.course.widgets) draws it; the tests check it against
# NumPy. It is plain Python on shapes and index tuples: no arrays.

Index = tuple[int, ...]

NUMPY_RULE = say("numpy_rule")

# The operators plan() accepts, by symbol or name, and the symbol each stands for.
OPERATORS = {"+": "+", "-": "-", "*": "*", "/": "/",
              "add": "+", "sub": "-", "mul": "*", "div": "/"}


@dataclass(frozen=True)
class BroadcastPlan:
    """How ``A op B`` broadcasts: the result shape, and where each result cell reads from.

    Made by :func:`plan`. Axes are numbered as the *result's* axes (0 is the first).

    Attributes
    ----------
    op : str
        ``"+"``, ``"-"``, ``"*"`` or ``"/"``.
    shape_a, shape_b : tuple of int
        The shapes of A and B.
    shape : tuple of int
        The shape of the result.
    source_a, source_b : dict
        For every result index (in row-major order), the index of the cell of A (of B) that
        the result cell was computed from.
    added_a, added_b : tuple of int
        The leading result axes the input did not have: broadcasting added them.
    stretched_a, stretched_b : tuple of int
        The result axes on which the input has size 1 and the result more: broadcasting
        copied the input along them.

    Examples
    --------
    >>> p = plan((3, 1), (4,), "+")
    >>> p.shape
    (3, 4)
    >>> p.source_a[(2, 3)], p.source_b[(2, 3)]
    ((2, 0), (3,))
    >>> p.stretched_a, p.added_b
    ((1,), (0,))
    """

    op: str
    shape_a: tuple[int, ...]
    shape_b: tuple[int, ...]
    shape: tuple[int, ...]
    source_a: dict[Index, Index]
    source_b: dict[Index, Index]
    added_a: tuple[int, ...]
    added_b: tuple[int, ...]
    stretched_a: tuple[int, ...]
    stretched_b: tuple[int, ...]

    def _pick(self, operand: str, a: Any, b: Any) -> Any:
        if operand in ("a", "A"):
            return a
        if operand in ("b", "B"):
            return b
        raise ValueError(f"operand must be 'a' or 'b'; got {operand!r}")

    def input_shape(self, operand: str) -> tuple[int, ...]:
        """The shape of input ``"a"`` or ``"b"``."""
        return self._pick(operand, self.shape_a, self.shape_b)

    def source(self, operand: str) -> dict[Index, Index]:
        """Result index -> the index of the input cell it was computed from."""
        return self._pick(operand, self.source_a, self.source_b)

    def summed_axes(self, operand: str) -> tuple[int, ...]:
        """The result axes that the backward pass sums over for this input (as unbroadcast).

        The added leading axes and the stretched axes.
        """
        return tuple(sorted(self._pick(operand, self.added_a + self.stretched_a,
                                       self.added_b + self.stretched_b)))

    def copied_axes(self, operand: str) -> tuple[int, ...]:
        """The summed axes along which the input really was copied (result size above 1)."""
        return tuple(ax for ax in self.summed_axes(operand) if self.shape[ax] > 1)

    def readers(self, operand: str) -> dict[Index, list[Index]]:
        """Input index -> the result cells computed from that input cell, in row-major order.

        In the backward pass these are the cells whose gradients add up into the input cell.
        The first one is the original; the rest are broadcast copies.
        """
        out: dict[Index, list[Index]] = {
            i: [] for i in itertools.product(*(range(n) for n in self.input_shape(operand)))}
        for r, i in self.source(operand).items():
            out[i].append(r)
        return out

    def is_copy(self, operand: str, index: Index) -> bool:
        """True when result cell ``index`` reads a *copy* of its input cell, not the original.

        The original is the copy at position 0 along every axis the input was broadcast along.
        """
        return any(index[ax] != 0 for ax in self.summed_axes(operand))

    def describe(self, operand: str) -> str:
        """One sentence on what broadcasting did to input ``"a"`` or ``"b"``."""
        name = self._pick(operand, "A", "B")
        shape = self.input_shape(operand)
        added = self._pick(operand, self.added_a, self.added_b)
        stretched = self._pick(operand, self.stretched_a, self.stretched_b)
        if shape == self.shape:
            return say("describe_same", name=name, shape=shape)
        copied = self.copied_axes(operand)
        if not copied:
            return say("describe_gains", name=name, shape=shape, result=self.shape)
        parts = []
        if added:
            word = say("word_axis") if len(added) == 1 else say("word_axes")
            axes = ", ".join(str(ax) for ax in added)
            sizes = " × ".join(str(self.shape[ax]) for ax in added)
            parts.append(say("describe_new_axes", word=word, axes=axes, sizes=sizes))
        if stretched:
            moves = ", ".join(say("describe_move", axis=ax, size=self.shape[ax])
                              for ax in stretched)
            parts.append(say("describe_stretched", moves=moves))
        copies = 1
        for ax in copied:
            copies *= self.shape[ax]
        return say("describe_used", name=name, shape=shape, parts=say("word_and").join(parts),
                   copies=copies)


def _as_shape(shape: Any, name: str) -> tuple[int, ...]:
    """Check that ``shape`` is a sequence of non-negative integers; return it as a tuple."""
    try:
        sizes = tuple(shape)
    except TypeError:
        raise TypeError(f"plan: the shape of {name} must be a tuple of integers; "
                        f"got {shape!r}") from None
    for axis, n in enumerate(sizes):
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"plan: the shape of {name} must be a tuple of integers; got "
                            f"{shape!r}, whose axis {axis} is {n!r}")
        if n < 0:
            raise ValueError(f"plan: the shape of {name}, {sizes}, has the negative size {n} "
                             f"on axis {axis}")
    return sizes


def broadcast_pair(shape_a: tuple[int, ...], shape_b: tuple[int, ...],
                   op: str = "+") -> tuple[int, ...]:
    """The result shape of ``A op B``, or a ``ValueError`` naming every axis that clashes.

    Cheap (it looks only at the shapes), so it is safe on shapes far too big to :func:`plan`.

    >>> broadcast_pair((2, 3), (3,))
    (2, 3)
    """
    symbol = _operator(op)
    shape_a, shape_b = _as_shape(shape_a, "A"), _as_shape(shape_b, "B")
    ndim = max(len(shape_a), len(shape_b))
    pa = (1,) * (ndim - len(shape_a)) + shape_a
    pb = (1,) * (ndim - len(shape_b)) + shape_b
    result, clashes = [], []
    for axis, (m, n) in enumerate(zip(pa, pb)):
        if m == n or n == 1:
            result.append(m)
        elif m == 1:
            result.append(n)
        else:
            own_a, own_b = axis - (ndim - len(shape_a)), axis - (ndim - len(shape_b))
            clashes.append(say("clash_axis", axis=axis - ndim, own_a=own_a, own_b=own_b, m=m,
                               n=n))
    if clashes:
        raise ValueError(say("clash", symbol=symbol, shape_a=shape_a, shape_b=shape_b,
                             clashes="; ".join(clashes), rule=NUMPY_RULE))
    return tuple(result)


def _operator(op: str) -> str:
    if op not in OPERATORS:
        raise ValueError(f"plan: op must be one of '+', '-', '*', '/' (or 'add', 'sub', 'mul', "
                         f"'div'); got {op!r}")
    return OPERATORS[op]


def plan(shape_a: tuple[int, ...], shape_b: tuple[int, ...], op: str = "+",
         cells: bool = True) -> BroadcastPlan:
    """Work out, cell by cell, how NumPy broadcasts ``A op B``.

    Parameters
    ----------
    shape_a, shape_b : tuple of int
        The shapes of the two operands (sizes may be 0, as in NumPy).
    op : str
        ``"+"``, ``"-"``, ``"*"`` or ``"/"`` (or ``"add"``, ``"sub"``, ``"mul"``, ``"div"``).
        Broadcasting is the same for all four; the plan records it for the picture.
    cells : bool
        ``False`` skips listing the cells: ``source_a`` and ``source_b`` stay empty and only the
        shapes and axes are worked out, which is cheap at any size (``describe``,
        ``summed_axes`` and ``copied_axes`` still work; ``readers`` does not).

    Returns
    -------
    BroadcastPlan
        The result shape, the source cell in A and in B of every result cell, and the axes
        along which each input was added or stretched. It lists every result cell, so its
        size grows with the result: use :func:`broadcast_pair` to check huge shapes.

    Raises
    ------
    ValueError
        If the shapes do not broadcast: the message names every clashing axis and NumPy's rule.

    Examples
    --------
    >>> p = plan((2, 1), (3,), "*")
    >>> p.shape, p.source_a[(1, 2)], p.source_b[(1, 2)]
    ((2, 3), (1, 0), (2,))
    >>> p.readers("a")[(0, 0)]
    [(0, 0), (0, 1), (0, 2)]
    """
    symbol = _operator(op)
    shape_a, shape_b = _as_shape(shape_a, "A"), _as_shape(shape_b, "B")
    shape = broadcast_pair(shape_a, shape_b, symbol)
    ndim = len(shape)

    def trace(own: tuple[int, ...]) -> tuple[dict[Index, Index], tuple[int, ...], tuple[int, ...]]:
        lead = ndim - len(own)  # the leading axes broadcasting adds to this input
        added = tuple(range(lead))
        stretched = tuple(lead + i for i, n in enumerate(own) if n == 1 and shape[lead + i] != 1)
        source = {}
        for r in itertools.product(*(range(n) for n in shape)) if cells else ():
            # drop the added axes; read index 0 on the input's size-1 axes
            source[r] = tuple(0 if n == 1 else r[lead + i] for i, n in enumerate(own))
        return source, added, stretched

    source_a, added_a, stretched_a = trace(shape_a)
    source_b, added_b, stretched_b = trace(shape_b)
    return BroadcastPlan(op=symbol, shape_a=shape_a, shape_b=shape_b, shape=shape,
                         source_a=source_a, source_b=source_b, added_a=added_a,
                         added_b=added_b, stretched_a=stretched_a, stretched_b=stretched_b)
