"""The "Broadcast and backward" widget: type two shapes, pick an operator, send back ones.

The widget only reads controls and shows pictures. What it shows comes from elsewhere:

* :func:`minigrad.course.widgets.shapes.parse_shape` reads the typed shapes;
* :func:`minigrad.broadcast.plan` says where every result cell comes from;
* :func:`minigrad.course.widgets.scene.make_scene` runs the engine, forward and backward;
* :mod:`minigrad.course.widgets.draw` draws a PNG, shown in an ``ipywidgets.Image``.

A PNG in an ``Image`` (rather than ``plt.show()`` in an ``Output``) looks the same in
JupyterLab, in Voilà and in a test with no screen at all.
"""
from __future__ import annotations

import base64
import html
import math
import struct

import ipywidgets as widgets

from .plan import OPERATORS, BroadcastPlan, broadcast_pair, plan
from .draw import SYMBOLS, render_backward, render_forward
from .scene import Scene, make_scene
from .shapes import MAX_CELLS, MAX_SIDE, PRESETS, ShapeError, cap_shapes, parse_shape

__all__ = ["BroadcastBackward"]

_SEND = "Send back ones"
_FORWARD = "Show forward pass"


class BroadcastBackward(widgets.VBox):
    """Broadcasting, forward and backward, for two shapes the student types.

    Parameters
    ----------
    shape_a, shape_b : str
        The shapes of A and B as typed, e.g. ``"3,1"``, ``"(2, 3, 1)"``, ``"4"`` or ``"()"``.
    op : str
        ``"+"``, ``"-"``, ``"*"`` or ``"/"``.
    seed : int
        Seed of the operands' values (small non-zero integers).

    Attributes
    ----------
    shape_a_box, shape_b_box : ipywidgets.Text
        Where the shapes are typed (the picture updates on Enter or leaving the box).
    op_buttons : ipywidgets.ToggleButtons
        The operator.
    presets : ipywidgets.Dropdown
        Pairs of shapes worth trying; picking one fills both boxes.
    backward_button : ipywidgets.Button
        Switches between the forward picture and the backward one.
    message : ipywidgets.HTML
        What the picture shows, or why there is no new picture.
    image : ipywidgets.Image
        The picture (PNG).
    view : str
        ``"forward"`` or ``"backward"``.
    result_shape : tuple of int or None
        The shape of ``A op B`` (``None`` while the input is not valid).
    scene : Scene or None
        The numbers drawn: values, result and the engine's gradients (``None`` until valid).
    error : str or None
        The problem with the current input, as shown in the message.

    Examples
    --------
    >>> from minigrad.course.widgets import BroadcastBackward
    >>> w = BroadcastBackward("3,1", "1,4", "*")
    >>> w.result_shape
    (3, 4)
    """

    def __init__(self, shape_a: str = "3,1", shape_b: str = "1,4", op: str = "+",
                 seed: int = 0) -> None:
        if op not in OPERATORS:
            raise ValueError(f"BroadcastBackward: op must be one of '+', '-', '*', '/'; "
                             f"got {op!r}")
        self.seed = seed
        self.view = "forward"
        self.result_shape: tuple[int, ...] | None = None
        self.scene: Scene | None = None
        self.error: str | None = None
        self._quiet = False  # set while a preset fills both boxes, so the picture updates once

        self.shape_a_box = widgets.Text(
            value=str(shape_a), description="A shape", placeholder="e.g. 3,1",
            continuous_update=False, layout=widgets.Layout(width="15em"))
        self.shape_b_box = widgets.Text(
            value=str(shape_b), description="B shape", placeholder="e.g. 1,4",
            continuous_update=False, layout=widgets.Layout(width="15em"))
        self.op_buttons = widgets.ToggleButtons(
            options=[(SYMBOLS[s], s) for s in ("+", "-", "*", "/")], value=OPERATORS[op],
            tooltips=["add", "subtract", "multiply", "divide"],
            style={"button_width": "2.6em"})
        self.presets = widgets.Dropdown(
            options=[("Try a preset…", "")] + [(label, (a, b)) for label, a, b in PRESETS],
            value="", layout=widgets.Layout(width="24em"))
        self.backward_button = widgets.Button(
            description=_SEND, icon="arrow-left", button_style="info",
            tooltip="Put a gradient of 1 on every result cell and run the backward pass",
            layout=widgets.Layout(width="15em"))
        self.message = widgets.HTML()
        self.image = widgets.Image(format="png", layout=widgets.Layout(max_width="100%",
                                                                       height="auto"))
        # classes by which a browser test (or a stylesheet) finds the parts
        self.shape_a_box.add_class("mg-shape-a")
        self.shape_b_box.add_class("mg-shape-b")
        self.op_buttons.add_class("mg-op")
        self.backward_button.add_class("mg-backward")
        self.message.add_class("mg-message")
        self.image.add_class("mg-image")

        self.shape_a_box.observe(self._typed, names="value")
        self.shape_b_box.observe(self._typed, names="value")
        self.op_buttons.observe(self._changed, names="value")
        self.presets.observe(self._preset, names="value")
        self.backward_button.on_click(self._toggle)

        super().__init__([
            widgets.HBox([self.shape_a_box, self.op_buttons, self.shape_b_box]),
            widgets.HBox([self.presets, self.backward_button]),
            self.message,
            self.image,
        ])
        self.add_class("mg-broadcast-backward")
        self.update()

    def _repr_mimebundle_(self, **kwargs) -> dict | None:
        """The live widget, plus the current picture for viewers that cannot run widgets.

        JupyterLab and Voilà show the live widget; a notebook viewed statically (GitHub,
        nbconvert) falls back to the PNG and a short line of text instead of the repr of every
        control.
        """
        data = super()._repr_mimebundle_(**kwargs)
        if data is None:
            return None
        data["text/plain"] = (f"BroadcastBackward(shape_a={self.shape_a_box.value!r}, "
                              f"shape_b={self.shape_b_box.value!r}, op={self.op_buttons.value!r})")
        if self.image.value:
            data["image/png"] = base64.b64encode(bytes(self.image.value)).decode("ascii")
        return data

    # --- what the buttons do ------------------------------------------------------------------

    def send_back(self) -> None:
        """Show the backward picture (as the "Send back ones" button does)."""
        self.view = "backward"
        self.update()

    def show_forward(self) -> None:
        """Show the forward picture again."""
        self.view = "forward"
        self.update()

    def _toggle(self, _button: widgets.Button) -> None:
        self.view = "forward" if self.view == "backward" else "backward"
        self.update()

    def _typed(self, _change: dict) -> None:
        if not self._quiet:
            self.presets.value = ""  # typed by hand: no longer the preset shown
            self.update()

    def _changed(self, _change: dict) -> None:
        self.update()

    def _preset(self, change: dict) -> None:
        if not change["new"]:  # the "Try a preset…" line
            return
        a, b = change["new"]
        self._quiet = True
        try:
            self.shape_a_box.value, self.shape_b_box.value = a, b
        finally:
            self._quiet = False
        self.update()

    # --- drawing ----------------------------------------------------------------------------

    def update(self) -> None:
        """Read the controls and redraw; problems become a message, never an exception."""
        try:
            self._update()
        except Exception as err:  # a bug of ours, not the student's: say so, plainly
            self._problem("Something went wrong while drawing this picture "
                          f"({type(err).__name__}: {err}). Please tell your instructor.")

    def _update(self) -> None:
        op = self.op_buttons.value
        try:
            shape_a = parse_shape(self.shape_a_box.value, "A")
            shape_b = parse_shape(self.shape_b_box.value, "B")
        except ShapeError as err:
            self._problem(html.escape(str(err)))
            return
        try:
            result = broadcast_pair(shape_a, shape_b, op)
        except ValueError as err:
            self._problem(_alignment(shape_a, shape_b) + html.escape(str(err)))
            return
        shown_a, shown_b, shown = cap_shapes(shape_a, shape_b, result)
        self.scene = make_scene(plan(shown_a, shown_b, op), self.seed)
        self.result_shape = result
        self.error = None
        png = (render_backward if self.view == "backward" else render_forward)(self.scene)
        self.image.value = png
        self.image.width = str(_png_width(png))
        self.backward_button.description = _FORWARD if self.view == "backward" else _SEND
        self.backward_button.icon = "arrow-right" if self.view == "backward" else "arrow-left"

        lines = [f"<b>A</b> {shape_a} {SYMBOLS[op]} <b>B</b> {shape_b} → result "
                 f"<b>{result}</b>."]
        if shown != result:
            lines.append(f"<i>These shapes are too big to draw in full: the picture shows A as "
                         f"{shown_a}, B as {shown_b} and the result as {shown} (at most "
                         f"{MAX_SIDE} cells along an axis and {MAX_CELLS} in all); they "
                         f"broadcast the same way.</i>")
        p = self.scene.plan
        if self.view == "forward":
            lines += [html.escape(p.describe("a")), html.escape(p.describe("b")),
                      "Press <b>Send back ones</b> to run the backward pass."]
        else:
            lines.append("Backward: every result cell gets a gradient of 1 and sends it back "
                         "to the cells of A and B it was computed from.")
            lines += [_sums(p, "a"), _sums(p, "b")]
            if op in ("*", "/"):
                lines.append("For × and ÷ what a cell sends back depends on the other "
                             "operand's values, so the sums are more than counts.")
        self.message.value = "<br>".join(lines)

    def _problem(self, text: str) -> None:
        self.error = text
        self.result_shape = None
        self.scene = None
        self.message.value = (
            f'<div style="color:#a40000"><b>No new picture:</b> {text}</div>'
            + ('<div style="color:#555">The picture below is still the last one that '
               'worked.</div>' if self.image.value else ""))


def _sums(p: BroadcastPlan, operand: str) -> str:
    """One sentence on what the backward pass adds up for input ``"a"`` or ``"b"``."""
    name = operand.upper()
    axes = p.copied_axes(operand)
    if not axes:
        return (f"{name}.grad has {name}'s shape {p.input_shape(operand)}: each cell gets "
                "what its one result cell sent back, with nothing to add up.")
    word = "axis" if len(axes) == 1 else "axes"
    per_cell = math.prod(p.shape[ax] for ax in axes)
    return (f"{name}.grad has {name}'s shape {p.input_shape(operand)}: each cell adds up "
            f"what the {per_cell} result cells that read it sent back (unbroadcast sums over "
            f"{word} {', '.join(map(str, axes))}).")


def _alignment(shape_a: tuple[int, ...], shape_b: tuple[int, ...]) -> str:
    """The two shapes lined up at their right ends, with ✗ under the axes that clash."""
    ndim = max(len(shape_a), len(shape_b))
    pa = [""] * (ndim - len(shape_a)) + [str(n) for n in shape_a]
    pb = [""] * (ndim - len(shape_b)) + [str(n) for n in shape_b]
    marks = ["✗" if a and b and a != b and "1" not in (a, b) else "✓" for a, b in zip(pa, pb)]
    w = max(len(s) for s in pa + pb + ["✓"]) + 2
    row = lambda label, cells: label + "".join(c.rjust(w) for c in cells)  # noqa: E731
    table = "\n".join([row("A:    ", pa), row("B:    ", pb), row("      ", marks)])
    return f"<pre style='line-height:1.25;margin:0.3em 0'>{html.escape(table)}</pre>"


def _png_width(png: bytes) -> int:
    """The width in pixels written in a PNG's header."""
    return struct.unpack(">I", png[16:20])[0]
