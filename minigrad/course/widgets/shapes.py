"""Reading the shapes a student types, and keeping the picture small enough to read.

Everything here raises :class:`ShapeError` with a sentence meant for the student, never a bare
Python error: the widget shows the sentence as it is.
"""
from __future__ import annotations

import math
import re
import unicodedata

from .text import say
__all__ = ["ShapeError", "parse_shape", "cap_shapes", "MAX_DIMS", "MAX_SIDE", "MAX_CELLS",
           "PRESETS"]

MAX_DIMS = 4     # the picture draws up to 4-D arrays, as rows of 2-D slices
MAX_SIDE = 8     # at most this many cells are drawn along one axis ...
MAX_CELLS = 64   # ... and this many in the whole result

# (label, shape of A, shape of B): the cases a course on broadcasting walks through.
PRESETS = [
    ("column and row: (3, 1) and (1, 4)", "3,1", "1,4"),
    ("matrix and row vector: (2, 3) and (3,)", "2,3", "3"),
    ("matrix and column: (2, 3) and (2, 1)", "2,3", "2,1"),
    ("number and matrix: () and (2, 3)", "()", "2,3"),
    ("bias over a batch: (4, 3) and (1, 3)", "4,3", "1,3"),
    ("3-D: (2, 3, 1) and (1, 4)", "2,3,1", "1,4"),
    ("4-D: (2, 1, 3, 1) and (2, 1, 2)", "2,1,3,1", "2,1,2"),
    ("these do not broadcast: (2, 3) and (2,)", "2,3", "2"),
]


class ShapeError(ValueError):
    """A shape the widget cannot use; the message says why, for the student."""


_WHOLE = re.compile(r"[+-]?\d+")


def parse_shape(text: str, name: str = "A") -> tuple[int, ...]:
    """Read a shape typed as ``3,1``, ``(2, 3, 1)``, ``[2, 3]``, ``4`` or ``()``.

    Parameters
    ----------
    text : str
        What the student typed. Sizes are separated by commas (or spaces); one pair of round
        or square brackets around them is allowed, and so is a trailing comma, as in ``(4,)``.
    name : str
        The operand's name, used in messages.

    Returns
    -------
    tuple of int
        The shape; ``()`` for a single number.

    Raises
    ------
    ShapeError
        If the text is empty or not a list of whole numbers, if a size is below 1, or if
        there are more than ``MAX_DIMS`` axes. The message quotes the text and says what to type.

    Examples
    --------
    >>> parse_shape("(2, 3, 1)"), parse_shape("4"), parse_shape("4,"), parse_shape("()")
    ((2, 3, 1), (4,), (4,), ())
    """
    raw = text.strip()
    if not raw:
        raise ShapeError(say("shape_empty", name=name))
    _check_characters(text, raw, name)
    inner = raw
    bracketed = len(inner) >= 2 and (inner[0], inner[-1]) in (("(", ")"), ("[", "]"))
    if bracketed:
        inner = inner[1:-1].strip()
    if not inner and bracketed:  # () is the shape of a single number
        return ()
    if inner.endswith(","):  # (4,) is how Python writes a 1-tuple
        inner = inner[:-1].strip()
    if not inner:
        raise ShapeError(say("shape_no_sizes", name=name, text=text))
    pieces = re.split(r"\s*,\s*|\s+", inner)
    sizes = []
    for axis, piece in enumerate(pieces):
        if not piece:
            raise ShapeError(say("shape_empty_size", name=name, text=text))
        if not _WHOLE.fullmatch(piece):
            raise ShapeError(say("shape_not_whole", name=name, text=text, piece=piece))
        n = int(piece)
        if n < 0:
            raise ShapeError(say("shape_negative", name=name, text=text, n=n, axis=axis))
        if n == 0:
            raise ShapeError(say("shape_zero", name=name, text=text, axis=axis))
        sizes.append(n)
    if len(sizes) > MAX_DIMS:
        raise ShapeError(say("shape_too_many_axes", name=name, text=text, count=len(sizes),
                             most=MAX_DIMS))
    return tuple(sizes)


_PAIRS = {"(": ")", "[": "]"}


def _check_characters(text: str, raw: str, name: str) -> None:
    """Refuse, with a precise message, digits that are not 0-9 and brackets that do not pair."""
    for ch in raw:
        if ch.isdigit() and ch not in "0123456789":
            what = unicodedata.name(ch, say("shape_bad_digit_unnamed")).lower()
            raise ShapeError(say("shape_bad_digit", name=name, text=text, ch=ch, what=what))
    opens = [ch for ch in raw if ch in "(["]
    closes = [ch for ch in raw if ch in ")]"]
    if not opens and not closes:
        return
    first, last = raw[0], raw[-1]
    if len(opens) == 1 and not closes and first in _PAIRS:
        raise ShapeError(say("bracket_unclosed", name=name, text=text, first=first, raw=raw,
                             close=_PAIRS[first], rest=raw[1:]))
    if len(closes) == 1 and not opens and last in _PAIRS.values():
        opener = "(" if last == ")" else "["
        raise ShapeError(say("bracket_unopened", name=name, text=text, last=last,
                             opener=opener, raw=raw, rest=raw[:-1]))
    if not (len(opens) == len(closes) == 1 and _PAIRS.get(first) == last):
        raise ShapeError(say("bracket_unpaired", name=name, text=text))


def cap_shapes(shape_a: tuple[int, ...], shape_b: tuple[int, ...],
               result: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Shrink a broadcast that is too big to draw, keeping what broadcasting does to it.

    Each result axis is cut to at most ``MAX_SIDE`` cells, then the longest axes are cut
    further until the result has at most ``MAX_CELLS`` cells. An input axis of size 1 stays
    1 (it is still stretched); any other input axis is cut like the result axis it lines up
    with. So the shrunk shapes broadcast exactly as the real ones do, only with fewer copies.

    Returns the shapes to draw: ``(shape_a, shape_b, result)``; unchanged when small enough.

    >>> cap_shapes((100, 1), (1, 3), (100, 3))
    ((8, 1), (1, 3), (8, 3))
    """
    shown = [min(n, MAX_SIDE) for n in result]
    while math.prod(shown) > MAX_CELLS:
        longest = max(range(len(shown)), key=lambda ax: shown[ax])
        shown[longest] -= 1

    def cut(shape: tuple[int, ...]) -> tuple[int, ...]:
        lead = len(result) - len(shape)
        return tuple(1 if n == 1 else shown[lead + i] for i, n in enumerate(shape))

    return cut(shape_a), cut(shape_b), tuple(shown)
