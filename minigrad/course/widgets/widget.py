"""The "Broadcast and backward" widget: type two shapes, pick an operator, send a gradient back.

An ``anywidget``: the browser half is one plain ES module, ``broadcast_backward.js`` (with
``broadcast_backward.css``), shipped inside the package; it draws SVG and links cells on hover
without asking the kernel. This Python half only reads the controls and sends data:

* :func:`minigrad.course.widgets.shapes.parse_shape` reads the typed shapes;
* :func:`minigrad.course.widgets.picture.picture` runs minigrad forward and backward and says
  what every cell is, which cells it is linked to, and the steps of every sum;
* :mod:`minigrad.course.widgets.draw` draws a PNG of the same numbers for places that run no
  JavaScript (nbval output, GitHub's notebook preview).
"""
from __future__ import annotations

import base64
import math
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from .picture import UPSTREAM, picture
from .plan import OPERATORS
from .shapes import PRESETS, ShapeError, cap_shapes, parse_shape
from .text import say

__all__ = ["BroadcastBackward"]

_HERE = Path(__file__).resolve().parent

ALL_OPS_UP_TO = 100_000  # result cells up to which +, −, ×, ÷ are all computed (prefetched)

# The presets the browser offers: (label, shape of A, shape of B, operator).
_PRESETS = [[label, a, b, "+"] for label, a, b in PRESETS] + [
    ["divide, column by row: (3, 1) ÷ (1, 4)", "3,1", "1,4", "/"],
    ["big: (100000, 1) and (1, 4)", "100000,1", "1,4", "+"],
    ["matrix product: (2, 3) @ (3, 4)", "2,3", "3,4", "@"],
]


class BroadcastBackward(anywidget.AnyWidget):
    """Broadcasting (or a matrix product), forward and backward, for two shapes the student types.

    Parameters
    ----------
    shape_a, shape_b : str
        The shapes of A and B as typed, e.g. ``"3,1"``, ``"(2, 3, 1)"``, ``"4"`` or ``"()"``.
    op : str
        ``"+"``, ``"-"``, ``"*"``, ``"/"`` (broadcasting) or ``"@"`` (matrix product).
    seed : int
        Seed of the operands' values (small non-zero integers) and of a random gradient.
    upstream : str
        The gradient sent back: ``"ones"``, ``"random"`` or ``"typed"`` (then see ``typed``).

    Attributes
    ----------
    shape_a, shape_b, op, upstream, typed, view : str
        The controls, shared with the browser (``view`` is ``"forward"`` or ``"backward"``).
    data : dict
        What the browser draws: ``data["ops"]`` maps an operator to its picture (see
        :mod:`minigrad.course.widgets.picture`). For shapes up to :data:`ALL_OPS_UP_TO` result
        cells the four broadcast operators are all computed (:meth:`prefetch`), so switching
        between them needs no kernel. ``data["error"]`` holds the student's problem while the input is not
        usable; the last good pictures stay, and the browser greys them out.
    current : dict
        The picture of the current operator (``{}`` when there is none).
    result_shape : tuple of int or None
        The shape of ``A op B`` (``None`` while the input is not usable).
    error : str or None
        The problem with the current input, as shown.

    Examples
    --------
    >>> from minigrad.course.widgets import BroadcastBackward
    >>> w = BroadcastBackward("3,1", "1,4", "*")
    >>> w.result_shape
    (3, 4)
    """

    _esm = _HERE / "broadcast_backward.js"
    _css = _HERE / "broadcast_backward.css"

    shape_a = traitlets.Unicode("3,1").tag(sync=True)
    shape_b = traitlets.Unicode("1,4").tag(sync=True)
    op = traitlets.Unicode("+").tag(sync=True)
    upstream = traitlets.Unicode("ones").tag(sync=True)
    typed = traitlets.Unicode("").tag(sync=True)
    view = traitlets.Unicode("forward").tag(sync=True)
    data = traitlets.Dict().tag(sync=True)
    presets: traitlets.List[Any] = traitlets.List().tag(sync=True)
    revision = traitlets.Int(0).tag(sync=True)  # grows on every recomputation

    def __init__(self, shape_a: str = "3,1", shape_b: str = "1,4", op: str = "+",
                 seed: int = 0, upstream: str = "ones", **kwargs: Any) -> None:
        _check_op(op)
        if upstream not in UPSTREAM:
            raise ValueError(f"BroadcastBackward: upstream must be one of {sorted(UPSTREAM)}; "
                             f"got {upstream!r}")
        self.seed = seed
        self.result_shape: tuple[int, ...] | None = None
        self.error: str | None = None
        self._good: dict[str, Any] = {}  # the last pictures that worked ...
        self._good_inputs: tuple[Any, ...] = ()  # ... and the inputs they were made from
        super().__init__(shape_a=str(shape_a), shape_b=str(shape_b), op=OPERATORS.get(op, op),
                         upstream=upstream, presets=_PRESETS, **kwargs)
        self.observe(self._changed, names=["shape_a", "shape_b", "op", "upstream", "typed"])
        self.on_msg(self._on_message)
        self.update()
        self.prefetch()

    # --- what the buttons do ----------------------------------------------------------------

    @property
    def current(self) -> dict[str, Any]:
        """The picture of the current operator, as the browser draws it (``{}`` if none)."""
        return (self.data.get("ops") or {}).get(self.op, {})

    def send_back(self) -> None:
        """Show the backward picture (as the "Send back ones" button does)."""
        self.view = "backward"

    def show_forward(self) -> None:
        """Show the forward picture again."""
        self.view = "forward"

    def _changed(self, change: dict[str, Any]) -> None:
        if (change["name"] == "op" and self.error is None and self.current
                and self._good_inputs == (self.shape_a, self.shape_b, self.upstream, self.typed)):
            # computed already: the browser switched without asking the kernel
            self.result_shape = _result_shape(self.current)
            return
        self.update()

    # --- computing ----------------------------------------------------------------------------

    def update(self) -> None:
        """Read the controls and send a new picture; problems become a message, never an error."""
        try:
            _check_op(self.op)
            shape_a = parse_shape(self.shape_a, "A")
            shape_b = parse_shape(self.shape_b, "B")
            first = picture(shape_a, shape_b, self.op, self.upstream, self.typed, self.seed)
        except ShapeError as err:
            detail = ""
            if "do not broadcast" in str(err):
                detail = _alignment(parse_shape(self.shape_a), parse_shape(self.shape_b))
            self._problem(str(err), detail)
        except Exception as err:  # a bug of ours, not the student's: say so, plainly
            self._problem(say("went_wrong", kind=type(err).__name__, error=err))
        else:
            # Only the picture asked for is computed and sent (the browser redraws on
            # ``revision``); the browser asks for the other operators' once it has drawn it
            # (prefetch), so that they never delay the redraw the student is waiting for.
            self._good = {"ops": {self.op: first}, "error": "", "error_detail": ""}
            self._good_inputs = (self.shape_a, self.shape_b, self.upstream, self.typed)
            self.error = None
            self.result_shape = _result_shape(first)
            with self.hold_sync():
                self.data = self._good
                self.revision += 1

    def prefetch(self) -> None:
        """Compute the other broadcast operators' pictures for the current shapes.

        Then switching between +, −, × and ÷ needs no kernel. The browser asks for this once
        it has drawn a new picture; results past :data:`ALL_OPS_UP_TO` cells, the matrix
        product and an input with a problem are left out.
        """
        ops = self._good.get("ops", {})
        if (self.error is not None or self.op == "@" or self.result_shape is None
                or math.prod(self.result_shape) > ALL_OPS_UP_TO or set("+-*/") <= set(ops)
                or self._good_inputs != (self.shape_a, self.shape_b, self.upstream, self.typed)):
            return
        shape_a, shape_b = parse_shape(self.shape_a, "A"), parse_shape(self.shape_b, "B")
        self._good = {**self._good, "ops": {op: ops.get(op) or picture(
            shape_a, shape_b, op, self.upstream, self.typed, self.seed) for op in "+-*/"}}
        self.data = self._good

    def _on_message(self, widget: Any, content: Any, buffers: Any) -> None:
        """The browser's messages: ``{"type": "prefetch", "revision": n}`` once it has drawn
        revision ``n`` (a request for an older picture is dropped)."""
        if isinstance(content, dict) and content.get("type") == "prefetch" \
                and content.get("revision") == self.revision:
            self.prefetch()

    def _problem(self, text: str, detail: str = "") -> None:
        self.error = text
        self.result_shape = None
        with self.hold_sync():
            self.data = {"ops": self._good.get("ops", {}), "error": text, "error_detail": detail}
            self.revision += 1

    # --- for places without JavaScript ------------------------------------------------------

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The live widget, plus a PNG and a text description for static viewers.

        JupyterLab, Voilà, VS Code and Colab run the widget; a notebook viewed statically
        (GitHub, nbconvert, nbval's saved output) shows the PNG, and a reader with no images
        gets the picture's text description.
        """
        data = super()._repr_mimebundle_(**kwargs)
        if data is None:
            return None
        bundle, metadata = data if isinstance(data, tuple) else (data, {})
        view = (self.current.get("views") or {}).get(self.view)
        bundle["text/plain"] = (f"BroadcastBackward(shape_a={self.shape_a!r}, "
                                f"shape_b={self.shape_b!r}, op={self.op!r})"
                                + (f"\n{view['alt']}" if view else ""))
        png = self.png()
        if png:
            bundle["image/png"] = base64.b64encode(png).decode("ascii")
        return (bundle, metadata) if isinstance(data, tuple) else bundle

    def png(self) -> bytes:
        """The current picture as a PNG (matplotlib), or ``b""`` when there is none to draw."""
        from . import draw  # matplotlib: loaded only when a static picture is asked for
        from .plan import plan
        from .scene import make_scene

        if self.error is not None or self.result_shape is None:
            return b""
        shape_a, shape_b = parse_shape(self.shape_a), parse_shape(self.shape_b)
        if self.op == "@":
            return draw.render_matmul(shape_a, shape_b, self.seed)
        shown_a, shown_b, _ = cap_shapes(shape_a, shape_b, self.result_shape)
        scene = make_scene(plan(shown_a, shown_b, self.op), self.seed)
        return (draw.render_backward if self.view == "backward" else draw.render_forward)(scene)


def _result_shape(pic: dict[str, Any]) -> tuple[int, ...]:
    """The real shape of the result, read from a picture (its last grid in the forward view)."""
    return tuple(pic["views"]["forward"]["rows"][-1][-1]["real"])


def _check_op(op: str) -> None:
    if op != "@" and op not in OPERATORS:
        raise ValueError(f"BroadcastBackward: op must be one of '+', '-', '*', '/', '@'; "
                         f"got {op!r}")


def _alignment(shape_a: tuple[int, ...], shape_b: tuple[int, ...]) -> str:
    """The two shapes lined up at their right ends, with ✗ under the axes that clash."""
    ndim = max(len(shape_a), len(shape_b))
    pa = [""] * (ndim - len(shape_a)) + [str(n) for n in shape_a]
    pb = [""] * (ndim - len(shape_b)) + [str(n) for n in shape_b]
    marks = ["✗" if a and b and a != b and "1" not in (a, b) else "✓" for a, b in zip(pa, pb)]
    w = max(len(s) for s in pa + pb + ["✓"]) + 2

    def row(label: str, cells: list[str]) -> str:
        return label + "".join(c.rjust(w) for c in cells)

    return "\n".join([row("A:    ", pa), row("B:    ", pb), row("      ", marks)])

