"""Drawing a :class:`~minigrad.course.widgets.scene.Scene` as a PNG: the forward and backward pictures.

The pictures are built from two kinds of item laid out in rows:

* a :class:`Grid` -- an array drawn as cells, one number each; 3-D and 4-D arrays become rows
  of 2-D slices of their last two axes;
* a :class:`Symbol` -- an operator or an arrow between grids.

Everything is measured in *cells* (a cell is 1 x 1) and turned into inches only at the end, so
the layout does not depend on the screen. Figures are made with ``matplotlib.figure.Figure``
and the Agg canvas, never with ``pyplot``: pyplot keeps every figure it opens until it is
closed, these are freed like any other object once drawn, and there is no GUI backend to pick.
The same PNG bytes then show up alike in JupyterLab, Voilà and a headless test.
"""
from __future__ import annotations

import io
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import hsv_to_rgb, to_rgba
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .picture import _operands, format_number
from .scene import Scene

__all__ = ["render_forward", "render_backward", "render_matmul", "format_number", "SYMBOLS"]

Index = tuple[int, ...]
Colour = str | tuple[float, float, float]  # a colour's name or hex code, or RGB in 0..1

# How the four operators are written in the picture.
SYMBOLS = {"+": "+", "-": "−", "*": "×", "/": "÷", "@": "@"}

# Light colours for whole grids (the matrix product); cells of an input get hues of their own
# (_colour): the same colour marks one input cell wherever it was copied to.
PALETTE = ["#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5",
           "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5", "#d9d9d9"]

# Layout, in cells.
GAP = 0.5          # between the slices of a 3-D or 4-D array
LABEL_H = 0.6      # room for a slice's label, such as [0, 1, :, :]
TITLE_H = 1.3      # two lines of title above each grid
ROW_GAP = 0.8      # between rows of items
MARGIN = 0.5
HEADING_H = 1.0
FOOTER_LINE_H = 0.55

# Font heights, in cells; a character is about 0.6 of its height wide.
FONT = {"heading": 0.5, "title": 0.38, "subtitle": 0.3, "value": 0.36, "note": 0.2,
        "label": 0.26, "symbol": 0.7, "arrow": 0.3, "footer": 0.3}
CHAR_W = 0.6

INCH_PER_CELL = 0.42   # cell size on the page, shrunk when the picture would be too wide
MAX_WIDTH_IN = 12.0
DPI = 100


def _colour(index: Index, shape: tuple[int, ...]) -> Colour:
    """A light colour of its own for each cell of an input: hues spread evenly over the cells.

    Unlike a fixed palette this never repeats within one picture, so "the sum of its colour"
    always names one cell (the browser widget tells cells apart by index labels instead).
    """
    count = int(np.prod(shape)) if shape else 1
    flat = int(np.ravel_multi_index(index, shape)) if shape else 0
    if count <= 1:
        return PALETTE[0]
    r, g, b = (float(v) for v in hsv_to_rgb((flat / count, 0.35, 1.0)))
    return r, g, b


def _text_width(text: str, font: str) -> float:
    return max((len(line) for line in text.split("\n")), default=0) * FONT[font] * CHAR_W


# ---------------------------------------------------------------------------------------------
# Items


@dataclass
class Grid:
    """An array drawn as cells.

    ``text``, ``face`` and ``note`` map an index to the cell's number, colour and a small note
    under the number; ``dashed`` holds the cells drawn as broadcast copies.
    """

    shape: tuple[int, ...]
    title: str
    subtitle: str = ""
    text: dict[Index, str] = field(default_factory=dict)
    face: dict[Index, Colour] = field(default_factory=dict)
    dashed: set[Index] = field(default_factory=set)
    note: dict[Index, str] = field(default_factory=dict)

    def _dims(self) -> tuple[int, int, int, int]:
        """The shape as (rows of slices, slices per row, rows per slice, columns)."""
        padded = (1,) * (4 - len(self.shape)) + tuple(self.shape)
        return padded  # type: ignore[return-value]

    @property
    def label_h(self) -> float:
        return LABEL_H if len(self.shape) >= 3 else 0.0

    @property
    def body(self) -> tuple[float, float]:
        """Width and height of the cells and slice labels."""
        P, Q, R, C = self._dims()
        return Q * C + (Q - 1) * GAP, P * (R + self.label_h) + (P - 1) * GAP

    @property
    def width(self) -> float:
        return max(self.body[0], _text_width(self.title, "title"),
                   _text_width(self.subtitle, "subtitle"))

    @property
    def height(self) -> float:
        return TITLE_H + self.body[1]

    def cell_xy(self, index: Index) -> tuple[float, float]:
        """Top-left corner of a cell, relative to the top-left of the body."""
        P, Q, R, C = self._dims()
        p, q, r, c = (0,) * (4 - len(index)) + tuple(index)
        return q * (C + GAP) + c, p * (R + self.label_h + GAP) + self.label_h + r

    def draw(self, ax: Axes, x: float, y: float, scale: float) -> None:
        cx = x + self.width / 2
        ax.text(cx, y + 0.05, self.title, ha="center", va="top", fontweight="bold",
                fontsize=FONT["title"] * scale)
        if self.subtitle:
            ax.text(cx, y + 0.62, self.subtitle, ha="center", va="top", color="#333333",
                    fontsize=FONT["subtitle"] * scale)
        bx, by = x + (self.width - self.body[0]) / 2, y + TITLE_H
        P, Q, R, C = self._dims()
        if len(self.shape) >= 3:  # label each 2-D slice by its leading indices
            for p in range(P):
                for q in range(Q):
                    lead = f"{p}, {q}" if len(self.shape) == 4 else f"{q}"
                    sx, sy = bx + q * (C + GAP), by + p * (R + self.label_h + GAP)
                    ax.text(sx, sy + self.label_h * 0.75, f"[{lead}, :, :]", ha="left",
                            va="bottom", color="#555555", fontsize=FONT["label"] * scale)
        for index in np.ndindex(*self.shape):
            ox, oy = self.cell_xy(index)
            self._cell(ax, bx + ox, by + oy, index, scale)

    def _cell(self, ax: Axes, x: float, y: float, index: Index, scale: float) -> None:
        copy = index in self.dashed
        ax.add_patch(Rectangle(
            (x + 0.04, y + 0.04), 0.92, 0.92,
            facecolor=to_rgba(self.face.get(index, "white"), 0.45 if copy else 1.0),
            edgecolor="#666666" if copy else "#222222", linewidth=0.9 * scale / 30,
            linestyle=(0, (3, 2)) if copy else "solid"))
        value = self.text.get(index, "")
        note = self.note.get(index)
        size = FONT["value"] * scale * min(1.0, 3.4 / max(len(value), 1))
        ax.text(x + 0.5, y + (0.42 if note else 0.52), value, ha="center", va="center",
                fontsize=size, color="#555555" if copy else "black",
                fontstyle="italic" if copy else "normal")
        if note:
            ax.text(x + 0.5, y + 0.8, note, ha="center", va="center", color="#333333",
                    fontsize=FONT["note"] * scale)


@dataclass
class Symbol:
    """An operator, or a short labelled arrow, between two grids."""

    text: str
    font: str = "symbol"
    min_width: float = 0.0

    @property
    def width(self) -> float:
        return max(_text_width(self.text, self.font) + 0.8, self.min_width)

    height = 0.0

    def draw(self, ax: Axes, x: float, y: float, scale: float) -> None:
        ax.text(x + self.width / 2, y, self.text, ha="center", va="center",
                fontsize=FONT[self.font] * scale, linespacing=1.3)


Item = Grid | Symbol  # what a row of a picture holds


# ---------------------------------------------------------------------------------------------
# Composing a figure


def _render(heading: str, rows: list[list[Item]], footer: Iterable[str]) -> bytes:
    """Lay the rows out under a heading and above a footer; return the PNG bytes."""
    footer_lines = [line for text in footer for line in textwrap.wrap(text, 90)]
    widths = [sum(item.width for item in row) for row in rows]
    heights = [max((item.height for item in row), default=0.0) for row in rows]
    width = 2 * MARGIN + max(widths + [_text_width(line, "footer") for line in footer_lines]
                             + [_text_width(heading, "heading")])
    height = (2 * MARGIN + HEADING_H + sum(heights) + ROW_GAP * len(rows)
              + FOOTER_LINE_H * len(footer_lines))
    inch = min(INCH_PER_CELL, MAX_WIDTH_IN / width)
    scale = inch * 72  # font heights are in cells; this turns them into points

    fig = Figure(figsize=(width * inch, height * inch), dpi=DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)  # y grows downwards, as rows are read
    ax.set_axis_off()

    ax.text(MARGIN, MARGIN, heading, ha="left", va="top", fontweight="bold",
            fontsize=FONT["heading"] * scale)
    y = MARGIN + HEADING_H
    for row, row_height in zip(rows, heights):
        x = MARGIN
        grids = [item for item in row if isinstance(item, Grid)]
        middle = y + TITLE_H + max(g.body[1] for g in grids) / 2 if grids else y
        for item in row:
            item.draw(ax, x, middle if isinstance(item, Symbol) else y, scale)
            x += item.width
        y += row_height + ROW_GAP
    for line in footer_lines:
        ax.text(MARGIN, y, line, ha="left", va="top", color="#333333",
                fontsize=FONT["footer"] * scale)
        y += FOOTER_LINE_H

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()


def _copied(scene: Scene, operand: str) -> str:
    axes = scene.plan.copied_axes(operand)
    if not axes:
        return "not copied"
    word = "axis" if len(axes) == 1 else "axes"
    return f"copied along {word} {', '.join(map(str, axes))}"


def _stretched_grid(scene: Scene, operand: str) -> Grid:
    """An input drawn at the result's shape: its own cells solid, broadcast copies dashed."""
    p = scene.plan
    values = scene.a if operand == "a" else scene.b
    own = p.input_shape(operand)
    source = p.source(operand)
    name = operand.upper()
    title = f"{name} {own}" + (f" → {p.shape}" if own != p.shape else "")
    return Grid(p.shape, title, _copied(scene, operand),
                text={r: format_number(values[i]) for r, i in source.items()},
                face={r: _colour(i, own) for r, i in source.items()},
                dashed={r for r in source if p.is_copy(operand, r)})


def _slices_note(scene: Scene) -> list[str]:
    if len(scene.plan.shape) >= 3:
        return ["3-D and 4-D arrays are drawn as 2-D slices of their last two axes, each "
                "labelled by its leading indices, as in [0, 1, :, :]."]
    return []


def render_forward(scene: Scene) -> bytes:
    """The forward picture: A and B stretched to the result's shape, then the result."""
    p = scene.plan
    op = SYMBOLS[p.op]
    result = Grid(p.shape, f"A {op} B {p.shape}", "the result",
                  text={r: format_number(scene.out[r]) for r in np.ndindex(*p.shape)})
    rows: list[list[Item]] = [[_stretched_grid(scene, "a"), Symbol(op),
                               _stretched_grid(scene, "b"), Symbol("="), result]]
    footer = ["Solid cells are the inputs' own values; dashed cells are broadcast copies "
              "(one colour per input cell)."] + _slices_note(scene)
    return _render(f"Forward: A {op} B", rows, footer)


# What one result cell sends back to each input, as the rule reads (the numbers themselves
# come from the engine's backward pass).
_RULES = {"+": ("∂(a + b)/∂a = 1", "∂(a + b)/∂b = 1"),
          "-": ("∂(a − b)/∂a = 1", "∂(a − b)/∂b = −1"),
          "*": ("∂(a × b)/∂a = b", "∂(a × b)/∂b = a"),
          "/": ("∂(a ÷ b)/∂a = 1/b", "∂(a ÷ b)/∂b = −a/b²")}


def _backward_row(scene: Scene, operand: str) -> list[Item]:
    p = scene.plan
    name = operand.upper()
    own = p.input_shape(operand)
    sent = scene.sent_a if operand == "a" else scene.sent_b
    grad = scene.grad_a if operand == "a" else scene.grad_b
    source = p.source(operand)
    readers = p.readers(operand)
    rule = _RULES[p.op][0 if operand == "a" else 1]
    sent_grid = Grid(p.shape, f"sent back to {name}", f"each cell: {rule}",
                     text={r: format_number(sent[r]) for r in source},
                     face={r: _colour(i, own) for r, i in source.items()},
                     dashed={r for r in source if p.is_copy(operand, r)})
    axes = p.copied_axes(operand)
    if axes:
        word = "axis" if len(axes) == 1 else "axes"
        arrow = Symbol(f"sum over\n{word} {', '.join(map(str, axes))}\n⟶", "arrow")
    else:
        arrow = Symbol("one cell\neach\n⟶", "arrow")
    grad_grid = Grid(own, f"{name}.grad {own}", "each cell: the sum of its colour",
                     text={i: format_number(grad[i]) for i in readers},
                     face={i: _colour(i, own) for i in readers},
                     note={i: f"{len(cells)} cell{'s' if len(cells) != 1 else ''}"
                           for i, cells in readers.items()})
    return [sent_grid, arrow, grad_grid]


def render_backward(scene: Scene) -> bytes:
    """The backward picture: ones on the result, what each cell sends back, and the sums."""
    p = scene.plan
    op = SYMBOLS[p.op]
    ones = Grid(p.shape, f"gradient of A {op} B", "ones, one per result cell",
                text={r: "1" for r in np.ndindex(*p.shape)},
                face={r: "#eeeeee" for r in np.ndindex(*p.shape)})
    into = Symbol("⟶", "arrow")
    same = Symbol("the same\nones ⟶", "arrow", min_width=ones.width + into.width)
    first: list[Item] = [ones, into]
    rows = [first + _backward_row(scene, "a"), [same] + _backward_row(scene, "b")]
    footer = ["Each result cell sends its gradient back to the input cell it read (same "
              "colour); each cell of A.grad and B.grad is the sum of what its colour sent. "
              "All numbers come from minigrad's backward pass."] + _slices_note(scene)
    return _render(f"Backward: ones sent back through A {op} B", rows, footer)


def render_matmul(shape_a: tuple[int, ...], shape_b: tuple[int, ...], seed: int = 0) -> bytes:
    """The matrix-product picture, ``A @ B = C``, with at most 8 rows and columns of each drawn.

    The values are the widget's (:func:`minigrad.course.widgets.picture._operands`); the product
    is NumPy's, for this still picture only.
    """
    a, b = _operands(shape_a, shape_b, seed, "@")
    (n, k), m = shape_a, shape_b[1]
    sn, sk, sm = min(n, 8), min(k, 8), min(m, 8)
    c = a @ b
    grids: list[Item] = [
        Grid((sn, sk), f"A {shape_a}", "row i of A ...",
             text={i: format_number(a[i]) for i in np.ndindex(sn, sk)},
             face=_tone((sn, sk), PALETTE[0])),
        Symbol("@"),
        Grid((sk, sm), f"B {shape_b}", "... times column j of B",
             text={i: format_number(b[i]) for i in np.ndindex(sk, sm)},
             face=_tone((sk, sm), PALETTE[1])),
        Symbol("="),
        Grid((sn, sm), f"C {(n, m)}", "is C[i, j]",
             text={i: format_number(c[i]) for i in np.ndindex(sn, sm)})]
    footer = ["Each cell of C adds the products of a row of A and a column of B. Backward: "
              "A.grad = dC @ B.T and B.grad = A.T @ dC, the only products with A's and B's shapes."]
    if (sn, sk, sm) != (n, k, m):
        footer.append(f"Only the first {sn} x {sk}, {sk} x {sm} and {sn} x {sm} cells are drawn.")
    return _render(f"Matrix product: A {shape_a} @ B {shape_b}", [grids], footer)


def _tone(shape: tuple[int, ...], colour: str) -> dict[Index, Colour]:
    return {i: colour for i in np.ndindex(*shape)}
