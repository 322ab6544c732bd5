"""What the browser draws, as plain data: grids of numbers, which cell links to which, the steps.

The widget's JavaScript draws and links; everything it shows is worked out here, in Python, with
minigrad's own forward and backward pass:

* **broadcast mode** (``A + B``, ``A - B``, ``A * B``, ``A / B``): the engine computes the result
  and ``A.grad``, ``B.grad`` at the real shapes (up to :data:`MAX_COMPUTE` elements), and what
  each drawn result cell sends back (one leaf per drawn cell, so each leaf's gradient is that
  cell's share before anything is summed);
* **matrix-product mode** (``A @ B``): the engine computes ``C = A @ B`` and ``A.grad``,
  ``B.grad``; the picture reads them off as ``dC @ B.T`` and ``A.T @ dC``.

A picture is a dict that ``json`` can send as it is::

    {"mode", "headline", "error": "", "computed_at": "real" | "shown",
     "views": {"forward": VIEW, "backward": VIEW}}
    VIEW = {"rows": [[ITEM, ...], ...], "notes": [str], "alt": str, "steps": [FRAME]}
    ITEM = {"kind": "sym", "text": "×"}
         | {"kind": "grid", "id", "title", "subtitle", "cut", "tone",
            "shape": shown shape, "real": real shape,
            "cells": [{"name", "v", "copy", "info", "lit": [[grid id, cell number], ...]}]}
    FRAME = {"text", "lit": [[grid id, cell number]], "set": {grid id: {cell number: str}}}

Cells are numbered row-major within their grid's *shown* shape. Every cell has a name with its
real index, such as ``A.grad[0, 3]``, so no two cells look alike; sentences use the real shapes.
"""
from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ...tensor import Tensor
from .plan import BroadcastPlan, broadcast_pair, plan
from .shapes import MAX_SIDE, ShapeError, cap_shapes
from .text import say

__all__ = ["picture", "format_number", "parse_gradient", "MAX_COMPUTE", "SYMBOLS",
           "UPSTREAM"]

MAX_COMPUTE = 1_000_000  # past this many elements the engine runs on the drawn cells only

# How each operator is written; "@" is the matrix product.
SYMBOLS = {"+": "+", "-": "−", "*": "×", "/": "÷", "@": "@"}
_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "@": operator.matmul}

# The upstream gradient put on the result: what the "Send back" button sends.
UPSTREAM = {kind: say(f"upstream_{kind}") for kind in ("ones", "random", "typed")}

Index = tuple[int, ...]
Json = dict[str, Any]  # a grid, a cell, a view or a picture: what json sends as it is


def format_number(x: float) -> str:
    """A number as a reader wants it: ``3``, ``−1/4``, ``16/15``; decimals only as a last resort.

    Negative numbers get a true minus sign (−), as in the rest of the picture.

    >>> format_number(4.0), format_number(-0.25), format_number(1.0666666666666667)
    ('4', '−1/4', '16/15')
    """
    return _format(float(x))


@functools.lru_cache(maxsize=4096)  # a picture writes the same few numbers many times
def _format(x: float) -> str:
    if abs(x - round(x)) < 1e-9:
        text = str(int(round(x)))
    else:
        q = Fraction(x).limit_denominator(1000)
        text = f"{q.numerator}/{q.denominator}" if abs(float(q) - x) < 1e-9 else f"{x:.3g}"
    return text.replace("-", "−")


def _paren(text: str) -> str:
    """Bracket a negative number or a fraction when it is multiplied: ``2 × (−1/4)``."""
    return f"({text})" if text.startswith("−") or "/" in text else text


def _name(grid: str, index: Index) -> str:
    return f"{grid}[{', '.join(map(str, index))}]" if index else grid


def _cells(shape: tuple[int, ...]) -> list[Index]:
    return list(np.ndindex(*shape))


def _flat(index: Index, shape: tuple[int, ...]) -> int:
    """The row-major number of a cell (as ``np.ravel_multi_index``, without its overhead)."""
    flat = 0
    for i, n in zip(index, shape):
        flat = flat * n + int(i)
    return flat


def _cut(shown: tuple[int, ...], real: tuple[int, ...]) -> str:
    """``"showing 8 of 100000 rows"``: how the drawn grid is cut from the real one ('' if not)."""
    parts = []
    for axis, (s, n) in enumerate(zip(shown, real)):
        if s == n:
            continue
        if axis == len(real) - 1:
            what = say("cut_columns") if len(real) > 1 else say("cut_cells")
        elif axis == len(real) - 2:
            what = say("cut_rows")
        else:
            what = say("cut_slices", axis=axis)
        parts.append(say("cut_part", shown=s, real=n, what=what))
    return say("cut", parts=", ".join(parts)) if parts else ""


def parse_gradient(text: str, count: int, shape: tuple[int, ...]) -> np.ndarray:
    """Read a typed upstream gradient: one number for every cell, or ``count`` numbers row by row.

    Numbers are separated by commas, spaces or new lines; ``1/2`` and ``-0.5`` are numbers too.

    Raises
    ------
    ShapeError
        If a piece is not a number, or the count is neither 1 nor ``count``.

    >>> parse_gradient("1, 2, -1/2, 0", 4, (2, 2)).tolist()
    [[1.0, 2.0], [-0.5, 0.0]]
    """
    cleaned = text.replace("[", " ").replace("]", " ").replace("(", " ").replace(")", " ")
    pieces = [p for p in cleaned.replace(",", " ").split() if p]
    if not pieces:
        raise ShapeError(say("gradient_empty", count=count))
    values = []
    for piece in pieces:
        bad = [ch for ch in piece if ch.isdigit() and ch not in "0123456789"]
        if bad:
            raise ShapeError(say("gradient_bad_digit", piece=piece, ch=bad[0]))
        try:
            values.append(float(Fraction(piece)))
        except (ValueError, ZeroDivisionError):
            raise ShapeError(say("gradient_not_number", piece=piece)) from None
    if len(values) == 1:
        return np.full(shape, values[0])
    if len(values) != count:
        raise ShapeError(say("gradient_count", shape=shape, count=count, typed=len(values)))
    return np.array(values, dtype=np.float64).reshape(shape)


def _operands(shape_a: tuple[int, ...], shape_b: tuple[int, ...], seed: int,
              op: str) -> tuple[np.ndarray, np.ndarray]:
    """Small non-zero integers (float64), seeded; A and B have their own streams."""
    a = np.random.default_rng([seed, 0]).integers(1, 6, size=shape_a).astype(np.float64)
    b = np.random.default_rng([seed, 1]).integers(1, 6, size=shape_b).astype(np.float64)
    if op == "@":  # keep the products short to read: 1..3
        a, b = np.ceil(a / 2), np.ceil(b / 2)
    return a, b


def _upstream(kind: str, typed: str, real: tuple[int, ...], shown: tuple[int, ...],
              computed_at_real: bool, seed: int) -> np.ndarray:
    """The gradient put on the result, at the shape the engine runs at."""
    shape = real if computed_at_real else shown
    if kind == "ones":
        return np.ones(shape)
    if kind == "random":
        g = np.random.default_rng([seed, 2]).integers(-3, 4, size=shape).astype(np.float64)
        g[g == 0] = 1.0  # non-zero, so that every cell visibly sends something
        return g
    if kind == "typed":
        n = math.prod(real)
        if real != shown:
            raise ShapeError(say("gradient_too_big", drawn=math.prod(shown), shape=real, count=n))
        return parse_gradient(typed, n, real)
    raise ValueError(f"upstream must be one of {sorted(UPSTREAM)}; got {kind!r}")


def _grid(gid: str, title: str, shape: tuple[int, ...], real: tuple[int, ...],
          values: dict[Index, str], tone: str, subtitle: str = "",
          copies: set[Index] | None = None) -> Json:
    copies = copies or set()
    return {"kind": "grid", "id": gid, "title": title, "subtitle": subtitle, "tone": tone,
            "shape": list(shape), "real": list(real), "cut": _cut(shape, real),
            "cells": [{"name": _name(gid, i), "v": values[i], "copy": i in copies, "info": "",
                       "lit": []} for i in _cells(shape)]}


def _numbers(values: Any, shown: tuple[int, ...]) -> dict[Index, str]:
    """The shown cells of an array, each as the picture writes a number."""
    return {i: format_number(values[i]) for i in _cells(shown)}


def _link_product(out: tuple[Json, str, Any], left: tuple[Json, str, Any],
                  right: tuple[Json, str, Any], real_inner: int) -> None:
    """Link each cell of ``out = left @ right`` to the row of ``left`` and the column of
    ``right`` it multiplies, with the sum of products written out. Each argument is
    ``(grid, name, shown values)``; ``real_inner`` is the inner size before cutting."""
    (grid, name, total), (left_grid, left_name, a), (right_grid, right_name, b) = out, left, right
    inner = a.shape[1]
    for i, j in _cells(tuple(grid["shape"])):
        terms = [f"{_paren(format_number(a[i, q]))}×{_paren(format_number(b[q, j]))}"
                 for q in range(inner)]
        _link(grid, (i, j), say("mm_info_product", name=name, i=i, j=j, left=left_name,
                                right=right_name,
                                sum=_sum_text(terms, format_number(total[i, j]), real_inner)),
              [(left_grid, (i, q)) for q in range(inner)]
              + [(right_grid, (q, j)) for q in range(inner)])


def _link(grid: Json, index: Index, info: str, lit: Sequence[tuple[Json, Index]]) -> None:
    cell = grid["cells"][_flat(index, tuple(grid["shape"]))]
    cell["info"] = info
    cell["lit"] = [[g["id"], _flat(i, tuple(g["shape"]))] for g, i in lit]


def _sym(text: str) -> Json:
    return {"kind": "sym", "text": text}


def _sum_text(terms: list[str], total: str, real_count: int) -> str:
    """``1 + 1 + 1 = 3``, or with ``… (100000 terms, 8 drawn)`` when not all are drawn."""
    written = " + ".join(_paren(t) if t.startswith("−") else t for t in terms)
    if real_count > len(terms):
        written += say("sum_more", count=real_count, drawn=len(terms))
    return f"{written} = {total}"


# ---------------------------------------------------------------------------------------------
# Broadcast mode


_RULES = {op: (say(f"rule_{name}_a"), say(f"rule_{name}_b"))
          for op, name in (("+", "add"), ("-", "sub"), ("*", "mul"), ("/", "div"))}


def _rule_with_numbers(op: str, operand: str, g: str, a: str, b: str, sent: str) -> str:
    """``g × b = 2 × 3 = 6``: the rule for what one cell sends back, with its numbers."""
    if op in "+-":
        local = "1" if (op == "+" or operand == "a") else "(−1)"
        return say("numbers_addsub", local=local, g=_paren(g), sent=sent)
    if op == "*":
        other = b if operand == "a" else a
        return say("numbers_mul", other_name="b" if operand == "a" else "a", g=_paren(g),
                   other=_paren(other), sent=sent)
    if operand == "a":
        return say("numbers_div_a", g=_paren(g), b=_paren(b), sent=sent)
    return say("numbers_div_b", g=_paren(g), a=_paren(a), b=_paren(b), sent=sent)


@dataclass
class _Broadcast:
    """What broadcast mode draws, computed: the drawn cells' values, the plans, the counts."""

    op: str
    upstream: str
    real: Index  # the result's real shape
    shown: Index  # the result's drawn shape
    at_real: bool  # whether the engine ran at the real shapes (else at the drawn ones)
    real_in: dict[str, Index]  # "a", "b": each input's real shape
    shown_in: dict[str, Index]  # and its drawn shape
    vals: dict[str, np.ndarray]  # the drawn input values
    grads: dict[str, np.ndarray]  # the drawn cells of A.grad, B.grad
    sent: dict[str, np.ndarray]  # what each drawn result cell sends back to A, B
    g_sh: np.ndarray  # the drawn upstream gradient
    out_sh: np.ndarray  # the drawn result
    p: BroadcastPlan  # the drawn cells, one by one
    big: BroadcastPlan  # the real shapes: axes and counts only
    counts: dict[str, int]  # how many result cells read one input cell (real shapes)

    @property
    def sym(self) -> str:
        return SYMBOLS[self.op]


def _broadcast(shape_a: tuple[int, ...], shape_b: tuple[int, ...], op: str, upstream: str,
               typed: str, seed: int) -> Json:
    d = _broadcast_computed(shape_a, shape_b, op, upstream, typed, seed)
    return _finish("broadcast", say("headline", shape_a=shape_a, sym=d.sym, shape_b=shape_b,
                                    real=d.real), _broadcast_forward(d), _broadcast_backward(d),
                   d.at_real, math.prod(d.real), d.shown)


def _broadcast_computed(shape_a: tuple[int, ...], shape_b: tuple[int, ...], op: str,
                        upstream: str, typed: str, seed: int) -> _Broadcast:
    """The engine, as in any program: forward, then backward with the upstream gradient (at
    the real shapes, or the drawn ones past MAX_COMPUTE elements); then the drawn result
    cells, each a leaf of its own, to show what each sends back."""
    real = broadcast_pair(shape_a, shape_b, op)
    shown_a, shown_b, shown = cap_shapes(shape_a, shape_b, real)
    at_real = math.prod(real) <= MAX_COMPUTE
    f = _OPS[op]
    a, b = _operands(shape_a if at_real else shown_a, shape_b if at_real else shown_b, seed, op)
    g = _upstream(upstream, typed, real, shown, at_real, seed)
    A, B = Tensor(a, requires_grad=True), Tensor(b, requires_grad=True)
    out = f(A, B)
    out.backward(g)
    lead = tuple(slice(0, n) for n in shown)
    a_sh, b_sh = a[tuple(slice(0, n) for n in shown_a)], b[tuple(slice(0, n) for n in shown_b)]
    g_sh, out_sh = g[lead], np.asarray(out.data)[lead]
    grad_a = np.asarray(A.grad)[tuple(slice(0, n) for n in shown_a)]
    grad_b = np.asarray(B.grad)[tuple(slice(0, n) for n in shown_b)]

    # What each drawn result cell sends back: the drawn inputs copied out, one leaf per cell.
    A_copies = Tensor(np.broadcast_to(a_sh, shown).copy(), requires_grad=True)
    B_copies = Tensor(np.broadcast_to(b_sh, shown).copy(), requires_grad=True)
    f(A_copies, B_copies).backward(g_sh)
    sent = {"a": np.asarray(A_copies.grad), "b": np.asarray(B_copies.grad)}

    big = plan(shape_a, shape_b, op, cells=False)
    return _Broadcast(
        op=op, upstream=upstream, real=real, shown=shown, at_real=at_real,
        real_in={"a": shape_a, "b": shape_b}, shown_in={"a": shown_a, "b": shown_b},
        vals={"a": a_sh, "b": b_sh}, grads={"a": grad_a, "b": grad_b}, sent=sent,
        g_sh=g_sh, out_sh=out_sh, p=plan(shown_a, shown_b, op), big=big,
        counts={o: math.prod(real[ax] for ax in big.summed_axes(o)) for o in "ab"})


def _broadcast_forward(d: _Broadcast) -> Json:
    """The forward view: A and B as stored, each stretched to the result's shape, and C;
    every cell linked to the cells it reads or is read by; one step per result cell."""
    p, real, shown, vals, sym, fmt = d.p, d.real, d.shown, d.vals, d.sym, format_number
    own = {o: _grid(o.upper(), say("title_input", name=o.upper(), shape=d.real_in[o]),
                    d.shown_in[o], d.real_in[o], _numbers(vals[o], d.shown_in[o]), o,
                    say("subtitle_stored"))
           for o in "ab"}
    stretched = {o: _grid(f"{o.upper()}→", say("title_stretched", name=o.upper(), real=real),
                          shown, real,
                          {r: fmt(vals[o][p.source(o)[r]]) for r in _cells(shown)}, o,
                          _copied_words(d.big, o), {r for r in _cells(shown) if p.is_copy(o, r)})
                 for o in "ab"}
    result = _grid("C", say("title_result", sym=sym, real=real), shown, real,
                   _numbers(d.out_sh, shown), "out", say("subtitle_result"))
    for r in _cells(shown):
        ia, ib = p.source_a[r], p.source_b[r]
        info = say("info_result", cell=_name("C", r), a=_name("A", ia), sym=sym,
                   b=_name("B", ib), va=fmt(vals["a"][ia]), vb=_paren(fmt(vals["b"][ib])),
                   vc=fmt(d.out_sh[r]))
        lit = [(own["a"], ia), (own["b"], ib), (stretched["a"], r), (stretched["b"], r)]
        _link(result, r, info, lit)
        for o, i in (("a", ia), ("b", ib)):
            kind = say("copy_kind_copy") if p.is_copy(o, r) else say("copy_kind_original")
            _link(stretched[o], r, say("info_stretched", cell=_name(o.upper() + "→", r),
                                       kind=kind, source=_name(o.upper(), i),
                                       v=fmt(vals[o][i])),
                  [(own[o], i), (result, r)])
    for o in "ab":
        readers = p.readers(o)
        for i, rs in readers.items():
            n = d.counts[o]
            more = say("drawn_count", drawn=len(rs)) if n > len(rs) else ""
            _link(own[o], i, say("info_read_by", cell=_name(o.upper(), i), v=fmt(vals[o][i]),
                                 n=n, cells=say("word_cells" if n != 1 else "word_cell"),
                                 more=more),
                  [(stretched[o], r) for r in rs] + [(result, r) for r in rs])
    forward_steps = []
    for k, r in enumerate(_cells(shown)):
        ia, ib = p.source_a[r], p.source_b[r]
        forward_steps.append({
            "text": say("step_cell", k=k + 1, total=len(p.source_a),
                        info=result["cells"][k]["info"]),
            "lit": [[g_["id"], _flat(i, tuple(g_["shape"]))] for g_, i in
                    [(own["a"], ia), (own["b"], ib), (stretched["a"], r), (stretched["b"], r),
                     (result, r)]], "set": {}})
    return {
        "rows": [[own["a"], own["b"]],
                 [stretched["a"], _sym(sym), stretched["b"], _sym("="), result]],
        "notes": [say("note_forward", shape_a=d.real_in["a"], sym=sym, shape_b=d.real_in["b"],
                      real=real),
                  d.big.describe("a"), d.big.describe("b")],
        "steps": forward_steps}


def _broadcast_backward(d: _Broadcast) -> Json:
    """The backward view: the upstream gradient, what each result cell sends to A and B,
    and their sums, A.grad and B.grad; every cell linked and its rule written out with its
    numbers; one step per broadcast copy added."""
    p, real, shown, op, fmt = d.p, d.real, d.shown, d.op, format_number
    a_sh, b_sh, g_sh, sent = d.vals["a"], d.vals["b"], d.g_sh, d.sent
    up = _grid("g", say("title_upstream", real=real), shown, real,
               _numbers(g_sh, shown), "g", UPSTREAM[d.upstream])
    refs = {o: _grid(o.upper(), say("title_input", name=o.upper(), shape=d.real_in[o]),
                     d.shown_in[o], d.real_in[o], _numbers(d.vals[o], d.shown_in[o]), o,
                     say("subtitle_values"))
            for o in "ab"}
    sent_grids, grad_grids = {}, {}
    for o in "ab":
        rule = _RULES[op][0 if o == "a" else 1]
        sent_grids[o] = _grid(f"to {o.upper()}", say("title_sent", name=o.upper()), shown, real,
                              _numbers(sent[o], shown), o, say("subtitle_sent", rule=rule),
                              {r for r in _cells(shown) if p.is_copy(o, r)})
        grad_grids[o] = _grid(f"{o.upper()}.grad",
                              say("title_input", name=f"{o.upper()}.grad", shape=d.real_in[o]),
                              d.shown_in[o], d.real_in[o], _numbers(d.grads[o], d.shown_in[o]),
                              o, say("subtitle_grad", name=o.upper(), axes=_axes_words(d.big, o)))
    for r in _cells(shown):
        ia, ib = p.source_a[r], p.source_b[r]
        _link(up, r, say("info_upstream", cell=_name("g", r), v=fmt(g_sh[r]), c=_name("C", r),
                         a=_name("A", ia), b=_name("B", ib)),
              [(sent_grids["a"], r), (sent_grids["b"], r), (grad_grids["a"], ia),
               (grad_grids["b"], ib)])
        for o, i in (("a", ia), ("b", ib)):
            rule = _RULES[op][0 if o == "a" else 1]
            filled = _rule_with_numbers(op, o, fmt(g_sh[r]), fmt(a_sh[ia]), fmt(b_sh[ib]),
                                        fmt(sent[o][r]))
            _link(sent_grids[o], r, say("info_sent", c=_name("C", r), x=_name(o.upper(), i),
                                        rule=rule, filled=filled),
                  [(up, r), (refs["a"], ia), (refs["b"], ib), (grad_grids[o], i)])
    sums: dict[str, dict[Index, list[Index]]] = {o: p.readers(o) for o in "ab"}
    for o in "ab":
        for i, rs in sums[o].items():
            terms = [fmt(sent[o][r]) for r in rs]
            total = fmt(d.grads[o][i])
            _link(grad_grids[o], i, f"{_name(o.upper() + '.grad', i)} = "  # a formula
                                    + _sum_text(terms, total, d.counts[o]),
                  [(sent_grids[o], r) for r in rs] + [(up, r) for r in rs])
    notes = [say("note_backward", upstream=UPSTREAM[d.upstream], real=real)]
    notes += [_sums_sentence(d.big, o, len(next(iter(sums[o].values())))) for o in "ab"]
    if op in "*/":
        notes.append(say("note_mul_div", sym=d.sym))
    return {
        "rows": [[refs["a"], refs["b"]],
                 [up, _sym("→"), sent_grids["a"], _sym("sum →"), grad_grids["a"]],
                 [sent_grids["b"], _sym("sum →"), grad_grids["b"]]],
        "notes": notes,
        "steps": _backward_steps(sums, sent, sent_grids, grad_grids, d.counts)}


def _copied_words(p: BroadcastPlan, operand: str) -> str:
    axes = p.copied_axes(operand)
    if not axes:
        return say("not_copied")
    return say("copied_along", word=say("word_axis" if len(axes) == 1 else "word_axes"),
               axes=", ".join(map(str, axes)))


def _axes_words(p: BroadcastPlan, operand: str) -> str:
    axes = p.copied_axes(operand)
    if not axes:
        return say("axes_none")
    return say("axes_some", word=say("word_axis" if len(axes) == 1 else "word_axes"),
               axes=", ".join(map(str, axes)))


def _sums_sentence(p: BroadcastPlan, operand: str, drawn: int) -> str:
    """What the backward pass adds up for one input, with the real shapes and counts."""
    name = operand.upper()
    axes = p.copied_axes(operand)
    shape = p.input_shape(operand)
    if not axes:
        return say("note_sums_none", name=name, shape=shape)
    n = math.prod(p.shape[ax] for ax in axes)
    drawn_words = say("note_sums_drawn", drawn=drawn) if drawn < n else ""
    return say("note_sums", name=name, shape=shape, n=n,
               word=say("word_axis" if len(axes) == 1 else "word_axes"),
               axes=", ".join(map(str, axes)), drawn=drawn_words)


def _backward_steps(sums: dict[str, dict[Index, list[Index]]], sent: dict[str, np.ndarray],
                    sent_grids: dict[str, Json], grad_grids: dict[str, Json],
                    counts: dict[str, int]) -> list[Json]:
    """One frame per broadcast copy: every cell of A.grad and B.grad adds its next copy."""
    n_steps = max(len(rs) for o in "ab" for rs in sums[o].values())
    frames = []
    for s in range(n_steps + 1):
        frame: Json = {"lit": [], "set": {}}
        example = []
        for o in "ab":
            gid = grad_grids[o]["id"]
            shape = tuple(grad_grids[o]["shape"])
            frame["set"][gid] = {}
            for i, rs in sums[o].items():
                done = rs[:s]
                frame["set"][gid][_flat(i, shape)] = format_number(
                    sum(float(sent[o][r]) for r in done))
                if 0 < s <= len(rs):
                    frame["lit"].append([sent_grids[o]["id"],
                                         _flat(rs[s - 1], tuple(sent_grids[o]["shape"]))])
                    frame["lit"].append([gid, _flat(i, shape)])
            first, rs = next(iter(sums[o].items()))
            terms = [_paren(format_number(sent[o][r])) for r in rs[:s]]
            example.append(say("step_so_far", cell=_name(gid, first),
                               terms=" + ".join(terms) + " = " if terms else "",
                               value=frame["set"][gid][_flat(first, shape)]))
        if s == 0:
            head = say("step_zero")
        else:
            head = say("step_n", s=s, n=n_steps)
        left = [say("step_left", name=o.upper(), count=counts[o])
                for o in "ab" if counts[o] > max(len(rs) for rs in sums[o].values())]
        frame["text"] = " ".join([head] + [e + "." for e in example]) + (
            say("step_left_all", parts="; ".join(left)) if left else "")
        frames.append(frame)
    return frames


# ---------------------------------------------------------------------------------------------
# Matrix-product mode


@dataclass
class _Matmul:
    """What matrix-product mode draws, computed: C = A @ B, A (n, k), B (k, m); the drawn
    sides are at most MAX_SIDE (sn, sk, sm), and the arrays are their drawn corners."""

    n: int
    k: int
    m: int
    sn: int
    sk: int
    sm: int
    upstream: str
    a_sh: np.ndarray
    b_sh: np.ndarray
    g_sh: np.ndarray  # dC
    out_sh: np.ndarray  # C
    grad_a: np.ndarray
    grad_b: np.ndarray


def _matmul(shape_a: tuple[int, ...], shape_b: tuple[int, ...], upstream: str, typed: str,
            seed: int) -> Json:
    if len(shape_a) != 2 or len(shape_b) != 2:
        raise ShapeError(say("matmul_not_2d", shape_a=shape_a, shape_b=shape_b))
    (n, k), (k2, m) = shape_a, shape_b
    if k != k2:
        raise ShapeError(say("matmul_no_align", shape_a=shape_a, shape_b=shape_b, k=k, k2=k2))
    real = (n, m)
    sn, sk, sm = min(n, MAX_SIDE), min(k, MAX_SIDE), min(m, MAX_SIDE)
    shown_a, shown_b, shown = (sn, sk), (sk, sm), (sn, sm)
    size = max(n * k, k * m, n * m)
    at_real = size <= MAX_COMPUTE and n * k * m <= 50 * MAX_COMPUTE
    a, b = _operands(shape_a if at_real else shown_a, shape_b if at_real else shown_b, seed, "@")
    g = _upstream(upstream, typed, real, shown, at_real, seed)
    A, B = Tensor(a, requires_grad=True), Tensor(b, requires_grad=True)
    out = A @ B
    out.backward(g)
    d = _Matmul(n, k, m, sn, sk, sm, upstream, a_sh=a[:sn, :sk], b_sh=b[:sk, :sm],
                g_sh=g[:sn, :sm], out_sh=np.asarray(out.data)[:sn, :sm],
                grad_a=np.asarray(A.grad)[:sn, :sk], grad_b=np.asarray(B.grad)[:sk, :sm])
    return _finish("matmul", say("headline", shape_a=shape_a, sym="@", shape_b=shape_b, real=real),
                   _matmul_forward(d), _matmul_backward(d), at_real, size, shown)


def _matmul_forward(d: _Matmul) -> Json:
    """The forward view, A @ B = C: each cell of C linked to its row of A and column of B,
    with the sum of products; one step per cell of C."""
    n, k, m, sn, sk, sm, fmt = d.n, d.k, d.m, d.sn, d.sk, d.sm, format_number
    shape_a, shape_b, real = (n, k), (k, m), (n, m)
    gA = _grid("A", say("mm_title_a", shape=shape_a), (sn, sk), shape_a,
               _numbers(d.a_sh, (sn, sk)), "a", say("mm_sub_a"))
    gB = _grid("B", say("mm_title_b", shape=shape_b), (sk, sm), shape_b,
               _numbers(d.b_sh, (sk, sm)), "b", say("mm_sub_b"))
    gC = _grid("C", say("mm_title_c", shape=real), (sn, sm), real, _numbers(d.out_sh, (sn, sm)),
               "out", say("mm_sub_c"))
    _link_product((gC, "C", d.out_sh), (gA, "A", d.a_sh), (gB, "B", d.b_sh), k)
    for i, p in _cells((sn, sk)):
        _link(gA, (i, p), say("mm_info_a", i=i, p=p, v=fmt(d.a_sh[i, p]), m=m),
              [(gC, (i, j)) for j in range(sm)] + [(gB, (p, j)) for j in range(sm)])
    for p, j in _cells((sk, sm)):
        _link(gB, (p, j), say("mm_info_b", p=p, j=j, v=fmt(d.b_sh[p, j]), n=n),
              [(gC, (i, j)) for i in range(sn)] + [(gA, (i, p)) for i in range(sn)])
    forward_steps = [{"text": say("step_cell", k=t + 1, total=sn * sm,
                                  info=gC["cells"][t]["info"]),
                      "lit": [["C", t]] + [["A", i * sk + p] for p in range(sk)]
                      + [["B", p * sm + j] for p in range(sk)], "set": {}}
                     for t, (i, j) in enumerate(_cells((sn, sm)))]
    return {"rows": [[gA, _sym("@"), gB, _sym("="), gC]],
            "notes": [say("mm_note_forward", shape_a=shape_a, shape_b=shape_b, real=real,
                          k=k, k2=k)],
            "steps": forward_steps}


def _matmul_backward(d: _Matmul) -> Json:
    """The backward view, dC @ B.T = A.grad and A.T @ dC = B.grad: each cell of a gradient
    linked to the row and column it multiplies; the steps add one column of B.T (row of
    A.T) at a time."""
    n, k, m, sn, sk, sm, fmt = d.n, d.k, d.m, d.sn, d.sk, d.sm, format_number
    shape_a, shape_b, real, shown = (n, k), (k, m), (n, m), (sn, sm)
    a_sh, b_sh, g_sh = d.a_sh, d.b_sh, d.g_sh
    dC = _grid("dC", say("mm_title_dc", shape=real), shown, real, _numbers(g_sh, shown), "g",
               say("mm_sub_dc", upstream=UPSTREAM[d.upstream]))
    dC2 = _grid("dC ", say("mm_title_dc", shape=real), shown, real, _numbers(g_sh, shown), "g",
                say("mm_sub_dc2"))
    BT = _grid("B.T", say("mm_title_bt", shape=(m, k)), (sm, sk), (m, k),
               _numbers(b_sh.T, (sm, sk)), "b", say("mm_sub_bt"))
    AT = _grid("A.T", say("mm_title_at", shape=(k, n)), (sk, sn), (k, n),
               _numbers(a_sh.T, (sk, sn)), "a", say("mm_sub_at"))
    dA = _grid("A.grad", say("mm_title_da", shape=shape_a), (sn, sk), shape_a,
               _numbers(d.grad_a, (sn, sk)), "a", say("mm_sub_da"))
    dB = _grid("B.grad", say("mm_title_db", shape=shape_b), (sk, sm), shape_b,
               _numbers(d.grad_b, (sk, sm)), "b", say("mm_sub_db"))
    _link_product((dA, "A.grad", d.grad_a), (dC, "dC", g_sh), (BT, "B.T", b_sh.T), m)
    _link_product((dB, "B.grad", d.grad_b), (AT, "A.T", a_sh.T), (dC2, "dC", g_sh), n)
    for grid, other in ((dC, dC2), (dC2, dC)):
        for i, j in _cells(shown):
            _link(grid, (i, j), say("mm_info_dc", i=i, j=j, v=fmt(g_sh[i, j])),
                  [(other, (i, j))] + [(dA, (i, p)) for p in range(sk)]
                  + [(dB, (p, j)) for p in range(sk)])
    for j, p in _cells((sm, sk)):
        _link(BT, (j, p), say("mm_info_bt", j=j, p=p, v=fmt(b_sh[p, j])),
              [(dA, (i, p)) for i in range(sn)])
    for p, i in _cells((sk, sn)):
        _link(AT, (p, i), say("mm_info_at", p=p, i=i, v=fmt(a_sh[i, p])),
              [(dB, (p, j)) for j in range(sm)])
    return {
        "rows": [[dC, _sym("@"), BT, _sym("="), dA], [AT, _sym("@"), dC2, _sym("="), dB]],
        "notes": [say("mm_note_shapes", shape_a=shape_a, shape_b=shape_b, real=real, bt=(m, k),
                      at=(k, n)),
                  say("mm_note_counts", m=m, n=n)],
        "steps": _matmul_frames(d)}


def _matmul_frames(d: _Matmul) -> list[Json]:
    """The backward steps: after step s, A.grad and B.grad hold the sums of their first s
    products, and the column of dC and B.T (row of A.T and dC) being added is lit."""
    sn, sk, sm, fmt = d.sn, d.sk, d.sm, format_number
    a_sh, b_sh, g_sh = d.a_sh, d.b_sh, d.g_sh
    frames = []
    for s in range(max(sm, sn) + 1):
        frame: Json = {"lit": [], "set": {"A.grad": {}, "B.grad": {}}}
        for i, p in _cells((sn, sk)):
            frame["set"]["A.grad"][i * sk + p] = fmt(sum(g_sh[i, j] * b_sh[p, j]
                                                         for j in range(min(s, sm))))
        for p, j in _cells((sk, sm)):
            frame["set"]["B.grad"][p * sm + j] = fmt(sum(a_sh[i, p] * g_sh[i, j]
                                                         for i in range(min(s, sn))))
        if 0 < s <= sm:
            frame["lit"] += [["dC", i * sm + s - 1] for i in range(sn)]
            frame["lit"] += [["B.T", (s - 1) * sk + p] for p in range(sk)]
        if 0 < s <= sn:
            frame["lit"] += [["A.T", p * sn + s - 1] for p in range(sk)]
            frame["lit"] += [["dC ", (s - 1) * sm + j] for j in range(sm)]
        frame["text"] = (say("mm_step_zero") if s == 0 else
                         say("mm_step_n", s=s, m=d.m, n=d.n, c=s - 1))
        frames.append(frame)
    return frames


# ---------------------------------------------------------------------------------------------


def _alt(view: Json, headline: str) -> str:
    """A text alternative: every grid with its real shape and the first drawn values."""
    parts = [headline + "."]
    for row in view["rows"]:
        for item in row:
            if item["kind"] != "grid":
                continue
            values = ", ".join(c["v"] for c in item["cells"][:12])
            more = ", …" if len(item["cells"]) > 12 else ""
            cut = f" ({item['cut']})" if item["cut"] else ""
            parts.append(say("alt_grid", title=item["title"], subtitle=item["subtitle"],
                             values=values, more=more, cut=cut))
    return " ".join(parts)


def _finish(mode: str, headline: str, forward: Json, backward: Json, at_real: bool, size: int,
            shown: tuple[int, ...]) -> Json:
    if at_real:
        where = say("where_real", size=size)
    else:
        where = say("where_shown", size=size, most=MAX_COMPUTE, shown=shown)
    for view in (forward, backward):
        cut = sorted({i["cut"] for row in view["rows"] for i in row
                      if i["kind"] == "grid" and i["cut"]})
        if cut:
            view["notes"].append(say("too_big", cuts="; ".join(cut)))
        view["notes"].append(where)
        view["alt"] = _alt(view, headline)
    return {"mode": mode, "headline": headline, "error": "",
            "computed_at": "real" if at_real else "shown",
            "views": {"forward": forward, "backward": backward}}


def picture(shape_a: tuple[int, ...], shape_b: tuple[int, ...], op: str = "+",
            upstream: str = "ones", typed: str = "", seed: int = 0) -> dict[str, Any]:
    """Everything the browser draws for ``A op B``, forward and backward, as plain data.

    Parameters
    ----------
    shape_a, shape_b : tuple of int
        The real shapes (already parsed).
    op : str
        ``"+"``, ``"-"``, ``"*"``, ``"/"`` (broadcast mode) or ``"@"`` (matrix product).
    upstream : str
        The gradient put on the result: ``"ones"``, ``"random"`` (small non-zero integers,
        seeded) or ``"typed"`` (read from ``typed`` by :func:`parse_gradient`).
    typed : str
        The typed gradient, used when ``upstream == "typed"``.
    seed : int
        Seeds the operands' values (1..5; 1..3 for ``@``) and the random gradient.

    Returns
    -------
    dict
        See the module docstring.

    Raises
    ------
    ShapeError
        If the shapes do not broadcast (or align, for ``@``), or the typed gradient is not
        usable; the message is for the student.
    """
    if op == "@":
        return _matmul(tuple(shape_a), tuple(shape_b), upstream, typed, seed)
    try:
        return _broadcast(tuple(shape_a), tuple(shape_b), op, upstream, typed, seed)
    except ShapeError:
        raise
    except ValueError as err:
        if "do not broadcast" in str(err):
            raise ShapeError(str(err)) from None
        raise
