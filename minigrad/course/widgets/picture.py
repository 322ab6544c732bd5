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
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from ...tensor import Tensor
from .plan import BroadcastPlan, broadcast_pair, plan
from .shapes import MAX_SIDE, ShapeError, cap_shapes

__all__ = ["picture", "format_number", "parse_gradient", "MAX_COMPUTE", "SYMBOLS",
           "UPSTREAM"]

MAX_COMPUTE = 1_000_000  # past this many elements the engine runs on the drawn cells only

# How each operator is written; "@" is the matrix product.
SYMBOLS = {"+": "+", "-": "−", "*": "×", "/": "÷", "@": "@"}
_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "@": operator.matmul}

# The upstream gradient put on the result: what the "Send back" button sends.
UPSTREAM = {"ones": "ones", "random": "small random integers", "typed": "typed in"}

Index = tuple[int, ...]


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
            what = "columns" if len(real) > 1 else "cells"
        elif axis == len(real) - 2:
            what = "rows"
        else:
            what = f"slices along axis {axis}"
        parts.append(f"{s} of {n} {what}")
    return ("showing " + ", ".join(parts)) if parts else ""


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
        raise ShapeError(f"Type the gradient for the result's {count} cells, row by row, such as "
                         "1, 2, 0, -1 (or one number for all of them).")
    values = []
    for piece in pieces:
        bad = [ch for ch in piece if ch.isdigit() and ch not in "0123456789"]
        if bad:
            raise ShapeError(f"gradient: '{piece}' contains '{bad[0]}', a digit that is not "
                             "0-9: type numbers with the ASCII digits 0-9.")
        try:
            values.append(float(Fraction(piece)))
        except (ValueError, ZeroDivisionError):
            raise ShapeError(f"gradient: '{piece}' is not a number. Type numbers such as 2, -1, "
                             "0.5 or 1/3, separated by commas.") from None
    if len(values) == 1:
        return np.full(shape, values[0])
    if len(values) != count:
        raise ShapeError(f"gradient: the result has shape {shape}, so it needs {count} numbers "
                         f"(or one for every cell); {len(values)} were typed.")
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
            raise ShapeError(f"gradient: typing in a gradient works for results of up to "
                             f"{math.prod(shown)} cells that are drawn in full; this result "
                             f"has shape {real} ({n} cells). Pick ones or random integers.")
        return parse_gradient(typed, n, real)
    raise ValueError(f"upstream must be one of {sorted(UPSTREAM)}; got {kind!r}")


def _grid(gid: str, title: str, shape: tuple[int, ...], real: tuple[int, ...],
          values: dict[Index, str], tone: str, subtitle: str = "",
          copies: set[Index] | None = None) -> dict:
    copies = copies or set()
    return {"kind": "grid", "id": gid, "title": title, "subtitle": subtitle, "tone": tone,
            "shape": list(shape), "real": list(real), "cut": _cut(shape, real),
            "cells": [{"name": _name(gid, i), "v": values[i], "copy": i in copies, "info": "",
                       "lit": []} for i in _cells(shape)]}


def _numbers(values: Any, shown: tuple[int, ...]) -> dict[Index, str]:
    """The shown cells of an array, each as the picture writes a number."""
    return {i: format_number(values[i]) for i in _cells(shown)}


def _link_product(out: tuple[dict, str, Any], left: tuple[dict, str, Any],
                  right: tuple[dict, str, Any], real_inner: int) -> None:
    """Link each cell of ``out = left @ right`` to the row of ``left`` and the column of
    ``right`` it multiplies, with the sum of products written out. Each argument is
    ``(grid, name, shown values)``; ``real_inner`` is the inner size before cutting."""
    (grid, name, total), (left_grid, left_name, a), (right_grid, right_name, b) = out, left, right
    inner = a.shape[1]
    for i, j in _cells(tuple(grid["shape"])):
        terms = [f"{_paren(format_number(a[i, q]))}×{_paren(format_number(b[q, j]))}"
                 for q in range(inner)]
        _link(grid, (i, j), f"{name}[{i}, {j}] = row {i} of {left_name} · column {j} of "
                            f"{right_name} = " + _sum_text(terms, format_number(total[i, j]),
                                                           real_inner),
              [(left_grid, (i, q)) for q in range(inner)]
              + [(right_grid, (q, j)) for q in range(inner)])


def _link(grid: dict, index: Index, info: str, lit: list[tuple[dict, Index]]) -> None:
    cell = grid["cells"][_flat(index, tuple(grid["shape"]))]
    cell["info"] = info
    cell["lit"] = [[g["id"], _flat(i, tuple(g["shape"]))] for g, i in lit]


def _sym(text: str) -> dict:
    return {"kind": "sym", "text": text}


def _sum_text(terms: list[str], total: str, real_count: int) -> str:
    """``1 + 1 + 1 = 3``, or with ``… (100000 terms, 8 drawn)`` when not all are drawn."""
    written = " + ".join(_paren(t) if t.startswith("−") else t for t in terms)
    if real_count > len(terms):
        written += f" + … ({real_count} terms, {len(terms)} drawn)"
    return f"{written} = {total}"


# ---------------------------------------------------------------------------------------------
# Broadcast mode


_RULES = {"+": ("∂(a + b)/∂a = 1", "∂(a + b)/∂b = 1"),
          "-": ("∂(a − b)/∂a = 1", "∂(a − b)/∂b = −1"),
          "*": ("∂(a × b)/∂a = b", "∂(a × b)/∂b = a"),
          "/": ("∂(a ÷ b)/∂a = 1/b", "∂(a ÷ b)/∂b = −a/b²")}


def _rule_with_numbers(op: str, operand: str, g: str, a: str, b: str, sent: str) -> str:
    """``g × b = 2 × 3 = 6``: the rule for what one cell sends back, with its numbers."""
    if op in "+-":
        local = "1" if (op == "+" or operand == "a") else "(−1)"
        return f"g × {local} = {_paren(g)} × {local} = {sent}"
    if op == "*":
        other = b if operand == "a" else a
        return f"g × {operand == 'a' and 'b' or 'a'} = {_paren(g)} × {_paren(other)} = {sent}"
    if operand == "a":
        return f"g × 1/b = {_paren(g)} × 1/{_paren(b)} = {sent}"
    return f"g × (−a/b²) = {_paren(g)} × (−{_paren(a)}/{_paren(b)}²) = {sent}"


def _broadcast(shape_a: tuple[int, ...], shape_b: tuple[int, ...], op: str, upstream: str,
               typed: str, seed: int) -> dict:
    real = broadcast_pair(shape_a, shape_b, op)
    shown_a, shown_b, shown = cap_shapes(shape_a, shape_b, real)
    size = math.prod(real)
    at_real = size <= MAX_COMPUTE
    f = _OPS[op]

    # The engine, as in any program: forward, then backward with the upstream gradient.
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

    p = plan(shown_a, shown_b, op)  # the drawn cells, one by one
    big = plan(shape_a, shape_b, op, cells=False)  # the real shapes: axes and counts only
    sym = SYMBOLS[op]
    fmt = format_number
    vals = {"a": a_sh, "b": b_sh}
    grads = {"a": grad_a, "b": grad_b}
    real_in = {"a": shape_a, "b": shape_b}
    shown_in = {"a": shown_a, "b": shown_b}
    counts = {o: math.prod(real[ax] for ax in big.summed_axes(o)) for o in "ab"}

    # --- forward view -------------------------------------------------------------------------
    own = {o: _grid(o.upper(), f"{o.upper()} {real_in[o]}", shown_in[o], real_in[o],
                    _numbers(vals[o], shown_in[o]), o, "as stored")
           for o in "ab"}
    stretched = {o: _grid(f"{o.upper()}→", f"{o.upper()} broadcast to {real}", shown, real,
                          {r: fmt(vals[o][p.source(o)[r]]) for r in _cells(shown)}, o,
                          _copied_words(big, o), {r for r in _cells(shown) if p.is_copy(o, r)})
                 for o in "ab"}
    result = _grid("C", f"C = A {sym} B {real}", shown, real,
                   _numbers(out_sh, shown), "out", "the result")
    for r in _cells(shown):
        ia, ib = p.source_a[r], p.source_b[r]
        info = (f"{_name('C', r)} = {_name('A', ia)} {sym} {_name('B', ib)} = "
                f"{fmt(a_sh[ia])} {sym} {_paren(fmt(b_sh[ib]))} = {fmt(out_sh[r])}")
        lit = [(own["a"], ia), (own["b"], ib), (stretched["a"], r), (stretched["b"], r)]
        _link(result, r, info, lit)
        for o, i in (("a", ia), ("b", ib)):
            kind = "a broadcast copy of" if p.is_copy(o, r) else "the original"
            _link(stretched[o], r, f"{_name(o.upper() + '→', r)} is {kind} "
                                   f"{_name(o.upper(), i)} = {fmt(vals[o][i])}",
                  [(own[o], i), (result, r)])
    for o in "ab":
        readers = p.readers(o)
        for i, rs in readers.items():
            n = counts[o]
            more = f" ({len(rs)} drawn)" if n > len(rs) else ""
            _link(own[o], i, f"{_name(o.upper(), i)} = {fmt(vals[o][i])} is read by {n} result "
                             f"cell{'s' if n != 1 else ''}{more}",
                  [(stretched[o], r) for r in rs] + [(result, r) for r in rs])
    forward_steps = []
    for k, r in enumerate(_cells(shown)):
        ia, ib = p.source_a[r], p.source_b[r]
        forward_steps.append({
            "text": f"Cell {k + 1} of {len(p.source_a)}: " + result["cells"][k]["info"],
            "lit": [[g_["id"], _flat(i, tuple(g_["shape"]))] for g_, i in
                    [(own["a"], ia), (own["b"], ib), (stretched["a"], r), (stretched["b"], r),
                     (result, r)]], "set": {}})
    forward = {
        "rows": [[own["a"], own["b"]],
                 [stretched["a"], _sym(sym), stretched["b"], _sym("="), result]],
        "notes": [f"A {shape_a} {sym} B {shape_b} → result {real}.",
                  big.describe("a"), big.describe("b")],
        "steps": forward_steps}

    # --- backward view ------------------------------------------------------------------------
    up = _grid("g", f"g: the gradient on C {real}", shown, real,
               _numbers(g_sh, shown), "g", UPSTREAM[upstream])
    refs = {o: _grid(o.upper(), f"{o.upper()} {real_in[o]}", shown_in[o], real_in[o],
                     _numbers(vals[o], shown_in[o]), o, "values, for the rule")
            for o in "ab"}
    sent_grids, grad_grids = {}, {}
    for o in "ab":
        rule = _RULES[op][0 if o == "a" else 1]
        sent_grids[o] = _grid(f"to {o.upper()}", f"sent back to {o.upper()}", shown, real,
                              _numbers(sent[o], shown), o,
                              f"each cell: {rule}", {r for r in _cells(shown) if p.is_copy(o, r)})
        grad_grids[o] = _grid(f"{o.upper()}.grad", f"{o.upper()}.grad {real_in[o]}", shown_in[o],
                              real_in[o], _numbers(grads[o], shown_in[o]), o,
                              f"{o.upper()}'s shape: the sum over {_axes_words(big, o)}")
    for r in _cells(shown):
        ia, ib = p.source_a[r], p.source_b[r]
        _link(up, r, f"{_name('g', r)} = {fmt(g_sh[r])} arrives at {_name('C', r)}, which "
                     f"read {_name('A', ia)} and {_name('B', ib)}",
              [(sent_grids["a"], r), (sent_grids["b"], r), (grad_grids["a"], ia),
               (grad_grids["b"], ib)])
        for o, i in (("a", ia), ("b", ib)):
            rule = _RULES[op][0 if o == "a" else 1]
            filled = _rule_with_numbers(op, o, fmt(g_sh[r]), fmt(a_sh[ia]), fmt(b_sh[ib]),
                                        fmt(sent[o][r]))
            _link(sent_grids[o], r, f"{_name('C', r)} sends back to {_name(o.upper(), i)}: "
                                    f"{rule}, so {filled}",
                  [(up, r), (refs["a"], ia), (refs["b"], ib), (grad_grids[o], i)])
    sums: dict[str, dict[Index, list[Index]]] = {o: p.readers(o) for o in "ab"}
    for o in "ab":
        for i, rs in sums[o].items():
            terms = [fmt(sent[o][r]) for r in rs]
            total = fmt(grads[o][i])
            _link(grad_grids[o], i, f"{_name(o.upper() + '.grad', i)} = "
                                    + _sum_text(terms, total, counts[o]),
                  [(sent_grids[o], r) for r in rs] + [(up, r) for r in rs])
    backward = {
        "rows": [[refs["a"], refs["b"]],
                 [up, _sym("→"), sent_grids["a"], _sym("sum →"), grad_grids["a"]],
                 [sent_grids["b"], _sym("sum →"), grad_grids["b"]]],
        "notes": [f"Backward: the gradient on the result ({UPSTREAM[upstream]}, shape {real}) "
                  "goes back to the cells of A and B each result cell read."]
        + [_sums_sentence(big, o, len(next(iter(sums[o].values())))) for o in "ab"],
        "steps": _backward_steps(sums, sent, sent_grids, grad_grids, counts)}
    if op in "*/":
        backward["notes"].append(
            f"For {sym} what a cell sends back depends on the values of A and B (drawn above), "
            "so the sums are more than counts: hover a cell to see the rule with its numbers.")
    return _finish("broadcast", f"A {shape_a} {sym} B {shape_b} → {real}", forward, backward,
                   at_real, size, shown)


def _copied_words(p: BroadcastPlan, operand: str) -> str:
    axes = p.copied_axes(operand)
    if not axes:
        return "not copied"
    return f"copied along {'axis' if len(axes) == 1 else 'axes'} {', '.join(map(str, axes))}"


def _axes_words(p: BroadcastPlan, operand: str) -> str:
    axes = p.copied_axes(operand)
    if not axes:
        return "nothing (one cell each)"
    return f"{'axis' if len(axes) == 1 else 'axes'} {', '.join(map(str, axes))}"


def _sums_sentence(p: BroadcastPlan, operand: str, drawn: int) -> str:
    """What the backward pass adds up for one input, with the real shapes and counts."""
    name = operand.upper()
    axes = p.copied_axes(operand)
    shape = p.input_shape(operand)
    if not axes:
        return (f"{name}.grad has {name}'s shape {shape}: each cell gets what its one result "
                "cell sent back, with nothing to add up.")
    n = math.prod(p.shape[ax] for ax in axes)
    drawn_words = f"; the picture draws {drawn} of them" if drawn < n else ""
    return (f"{name}.grad has {name}'s shape {shape}: each cell adds up what the {n} result "
            f"cells that read it sent back (unbroadcast sums over "
            f"{'axis' if len(axes) == 1 else 'axes'} {', '.join(map(str, axes))}){drawn_words}.")


def _backward_steps(sums: dict, sent: dict, sent_grids: dict, grad_grids: dict,
                    counts: dict) -> list[dict]:
    """One frame per broadcast copy: every cell of A.grad and B.grad adds its next copy."""
    n_steps = max(len(rs) for o in "ab" for rs in sums[o].values())
    frames = []
    for s in range(n_steps + 1):
        frame: dict[str, Any] = {"lit": [], "set": {}}
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
            example.append(f"{_name(gid, first)} so far: " +
                           (" + ".join(terms) + " = " if terms else "") +
                           frame["set"][gid][_flat(first, shape)])
        if s == 0:
            head = "Step 0: every cell of A.grad and B.grad starts at 0."
        else:
            head = (f"Step {s} of {n_steps}: every cell of A.grad and B.grad adds broadcast "
                    f"copy {s} of what it received (if it has that many).")
        left = [f"{o.upper()}.grad cells each sum {counts[o]} terms in all"
                for o in "ab" if counts[o] > max(len(rs) for rs in sums[o].values())]
        frame["text"] = " ".join([head] + [e + "." for e in example]) + (
            " (" + "; ".join(left) + ": the rest are not drawn.)" if left else "")
        frames.append(frame)
    return frames


# ---------------------------------------------------------------------------------------------
# Matrix-product mode


def _matmul(shape_a: tuple[int, ...], shape_b: tuple[int, ...], upstream: str, typed: str,
            seed: int) -> dict:
    if len(shape_a) != 2 or len(shape_b) != 2:
        raise ShapeError(f"A @ B: the matrix-product mode takes two 2-D shapes, (n, k) and "
                         f"(k, m); got A {shape_a} and B {shape_b}.")
    (n, k), (k2, m) = shape_a, shape_b
    if k != k2:
        raise ShapeError(f"A @ B: shapes {shape_a} and {shape_b} do not align: A has {k} columns "
                         f"but B has {k2} rows. Each result cell multiplies a row of A with a "
                         "column of B, so the two lengths must be equal.")
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
    a_sh, b_sh, g_sh = a[:sn, :sk], b[:sk, :sm], g[:sn, :sm]
    out_sh = np.asarray(out.data)[:sn, :sm]
    grad_a, grad_b = np.asarray(A.grad)[:sn, :sk], np.asarray(B.grad)[:sk, :sm]
    fmt = format_number

    # --- forward --------------------------------------------------------------------------------
    gA = _grid("A", f"A {shape_a}", shown_a, shape_a, _numbers(a_sh, shown_a), "a", "n × k")
    gB = _grid("B", f"B {shape_b}", shown_b, shape_b, _numbers(b_sh, shown_b), "b", "k × m")
    gC = _grid("C", f"C = A @ B {real}", shown, real, _numbers(out_sh, shown), "out", "n × m")
    _link_product((gC, "C", out_sh), (gA, "A", a_sh), (gB, "B", b_sh), k)
    for i, p in _cells(shown_a):
        _link(gA, (i, p), f"A[{i}, {p}] = {fmt(a_sh[i, p])} is used by all {m} cells of row {i} "
                          f"of C, times row {p} of B",
              [(gC, (i, j)) for j in range(sm)] + [(gB, (p, j)) for j in range(sm)])
    for p, j in _cells(shown_b):
        _link(gB, (p, j), f"B[{p}, {j}] = {fmt(b_sh[p, j])} is used by all {n} cells of column "
                          f"{j} of C, times column {p} of A",
              [(gC, (i, j)) for i in range(sn)] + [(gA, (i, p)) for i in range(sn)])
    forward_steps = [{"text": f"Cell {t + 1} of {sn * sm}: " + gC["cells"][t]["info"],
                      "lit": [["C", t]] + [["A", i * sk + p] for p in range(sk)]
                      + [["B", p * sm + j] for p in range(sk)], "set": {}}
                     for t, (i, j) in enumerate(_cells(shown))]
    forward = {"rows": [[gA, _sym("@"), gB, _sym("="), gC]],
               "notes": [f"A {shape_a} @ B {shape_b} → C {real}: the inner sizes ({k} and {k2}) "
                         f"meet and vanish; each cell of C adds {k} products, a row of A times a "
                         "column of B."],
               "steps": forward_steps}

    # --- backward -------------------------------------------------------------------------------
    dC = _grid("dC", f"dC {real}", shown, real, _numbers(g_sh, shown), "g",
               f"gradient on C: {UPSTREAM[upstream]}")
    dC2 = _grid("dC ", f"dC {real}", shown, real, _numbers(g_sh, shown), "g",
                "the same gradient")
    BT = _grid("B.T", f"B.T {(m, k)}", (sm, sk), (m, k), _numbers(b_sh.T, (sm, sk)), "b",
               "B transposed")
    AT = _grid("A.T", f"A.T {(k, n)}", (sk, sn), (k, n), _numbers(a_sh.T, (sk, sn)), "a",
               "A transposed")
    dA = _grid("A.grad", f"A.grad {shape_a}", shown_a, shape_a,
               _numbers(grad_a, shown_a), "a", "dC @ B.T: A's shape")
    dB = _grid("B.grad", f"B.grad {shape_b}", shown_b, shape_b,
               _numbers(grad_b, shown_b), "b", "A.T @ dC: B's shape")
    _link_product((dA, "A.grad", grad_a), (dC, "dC", g_sh), (BT, "B.T", b_sh.T), m)
    _link_product((dB, "B.grad", grad_b), (AT, "A.T", a_sh.T), (dC2, "dC", g_sh), n)
    for grid, other in ((dC, dC2), (dC2, dC)):
        for i, j in _cells(shown):
            _link(grid, (i, j), f"dC[{i}, {j}] = {fmt(g_sh[i, j])} flows into row {i} of A.grad "
                                f"and column {j} of B.grad",
                  [(other, (i, j))] + [(dA, (i, p)) for p in range(sk)]
                  + [(dB, (p, j)) for p in range(sk)])
    for j, p in _cells((sm, sk)):
        _link(BT, (j, p), f"B.T[{j}, {p}] = B[{p}, {j}] = {fmt(b_sh[p, j])}",
              [(dA, (i, p)) for i in range(sn)])
    for p, i in _cells((sk, sn)):
        _link(AT, (p, i), f"A.T[{p}, {i}] = A[{i}, {p}] = {fmt(a_sh[i, p])}",
              [(dB, (p, j)) for j in range(sm)])
    frames = []
    for s in range(max(sm, sn) + 1):
        frame: dict[str, Any] = {"lit": [], "set": {"A.grad": {}, "B.grad": {}}}
        for i, p in _cells(shown_a):
            frame["set"]["A.grad"][i * sk + p] = fmt(sum(g_sh[i, j] * b_sh[p, j]
                                                         for j in range(min(s, sm))))
        for p, j in _cells(shown_b):
            frame["set"]["B.grad"][p * sm + j] = fmt(sum(a_sh[i, p] * g_sh[i, j]
                                                         for i in range(min(s, sn))))
        if 0 < s <= sm:
            frame["lit"] += [["dC", i * sm + s - 1] for i in range(sn)]
            frame["lit"] += [["B.T", (s - 1) * sk + p] for p in range(sk)]
        if 0 < s <= sn:
            frame["lit"] += [["A.T", p * sn + s - 1] for p in range(sk)]
            frame["lit"] += [["dC ", (s - 1) * sm + j] for j in range(sm)]
        frame["text"] = ("Step 0: A.grad and B.grad start at 0." if s == 0 else
                         f"Step {s}: A.grad adds term {s} of its {m} (column {s - 1} of dC times "
                         f"column {s - 1} of B.T); B.grad adds term {s} of its {n} (column "
                         f"{s - 1} of A.T times row {s - 1} of dC), where there are that many.")
        frames.append(frame)
    backward = {
        "rows": [[dC, _sym("@"), BT, _sym("="), dA], [AT, _sym("@"), dC2, _sym("="), dB]],
        "notes": [f"A.grad must have A's shape {shape_a} and B.grad B's shape {shape_b}. "
                  f"From dC {real} the shapes allow one product each: dC @ B.T is "
                  f"{real} @ {(m, k)} → {shape_a}, and A.T @ dC is {(k, n)} @ {real} → "
                  f"{shape_b}.",
                  f"Each cell of A.grad adds {m} products, each cell of B.grad {n}."],
        "steps": frames}
    return _finish("matmul", f"A {shape_a} @ B {shape_b} → {real}", forward, backward, at_real,
                   size, shown)


# ---------------------------------------------------------------------------------------------


def _alt(view: dict, headline: str) -> str:
    """A text alternative: every grid with its real shape and the first drawn values."""
    parts = [headline + "."]
    for row in view["rows"]:
        for item in row:
            if item["kind"] != "grid":
                continue
            values = ", ".join(c["v"] for c in item["cells"][:12])
            more = ", …" if len(item["cells"]) > 12 else ""
            cut = f" ({item['cut']})" if item["cut"] else ""
            parts.append(f"{item['title']}, {item['subtitle']}: {values}{more}{cut}.")
    return " ".join(parts)


def _finish(mode: str, headline: str, forward: dict, backward: dict, at_real: bool, size: int,
            shown: tuple[int, ...]) -> dict:
    if at_real:
        where = (f"All numbers come from minigrad's forward and backward pass, run at the real "
                 f"shapes ({size} elements).")
    else:
        where = (f"These arrays have up to {size} elements, more than the {MAX_COMPUTE} this "
                 f"widget computes: minigrad ran on the drawn cells only ({shown}), so the "
                 "sums add only the drawn terms; the counts in the sentences come from the "
                 "real shapes.")
    for view in (forward, backward):
        cut = sorted({i["cut"] for row in view["rows"] for i in row
                      if i["kind"] == "grid" and i["cut"]})
        if cut:
            view["notes"].append("Too big to draw in full: the first cells are drawn, "
                                 + "; ".join(cut) + ". Sentences give the real shapes.")
        view["notes"].append(where)
        view["alt"] = _alt(view, headline)
    return {"mode": mode, "headline": headline, "error": "",
            "computed_at": "real" if at_real else "shown",
            "views": {"forward": forward, "backward": backward}}


def picture(shape_a: tuple[int, ...], shape_b: tuple[int, ...], op: str = "+",
            upstream: str = "ones", typed: str = "", seed: int = 0) -> dict:
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
