"""Interactive widgets for the course.

``BroadcastBackward`` shows broadcasting and its backward pass for two shapes the student types::

    from minigrad.course.widgets import BroadcastBackward
    BroadcastBackward(shape_a="3,1", shape_b="1,4", op="+")

What lives here: the broadcast plan (``plan.py``: which cells each result cell reads), the
picture's data (``picture.py``, computed with minigrad's own forward and backward), the
browser side (``broadcast_backward.js``, an anywidget ES module) and the PNG fallback. Every
sentence the widget shows is a template in ``messages.json`` (``text.py``), shared with the
static mode the website uses (``static_mode.js`` computes the same picture in the browser with
no kernel; ``static_page.js`` mounts it on a page; see :mod:`minigrad.course.site`). Imports:
the engine, anywidget, traitlets and, for the PNG, matplotlib; never the checks or the grader.
"""
from .shapes import ShapeError, parse_shape
from .widget import BroadcastBackward

__all__ = ["BroadcastBackward", "parse_shape", "ShapeError"]
