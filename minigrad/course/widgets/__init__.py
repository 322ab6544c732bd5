"""Interactive widgets for the course.

``BroadcastBackward`` shows broadcasting and its backward pass for two shapes the student types::

    from minigrad.course.widgets import BroadcastBackward
    BroadcastBackward(shape_a="3,1", shape_b="1,4", op="+")
"""
from .shapes import ShapeError, parse_shape
from .widget import BroadcastBackward

__all__ = ["BroadcastBackward", "parse_shape", "ShapeError"]
