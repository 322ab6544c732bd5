"""Broadcasting, undone.

When NumPy broadcasts, an input is copied along some axes before the operation runs. In the
backward pass every copy sent a gradient back, so the input's gradient is the *sum* over the
copies: :func:`unbroadcast` sums a gradient back down to the shape of the input it belongs to.
The cell-by-cell version of the same thing, for the broadcast widget's pictures, is
:func:`minigrad.course.widgets.plan.plan`.
"""
from __future__ import annotations

from typing import Any

from .backend import namespace, reduce_sum

__all__ = ["unbroadcast", "broadcast_shapes"]


def broadcast_shapes(*shapes: tuple[int, ...], op: str = "broadcast") -> tuple[int, ...]:
    """The shape NumPy's broadcasting gives ``shapes``, or a ``ValueError`` naming the clash.

    Shapes are aligned at their right end; two sizes agree when they are equal or one is 1.
    """
    ndim = max(len(s) for s in shapes)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    out = []
    for axis, sizes in enumerate(zip(*padded)):
        big = {n for n in sizes if n != 1}
        if len(big) > 1:
            shown = " and ".join(str(tuple(s)) for s in shapes)
            raise ValueError(
                f"{op}: shapes {shown} do not broadcast: axis {axis - ndim} has sizes "
                f"{' vs '.join(str(n) for n in sizes)} (sizes must be equal or 1)")
        out.append(big.pop() if big else 1)
    return tuple(out)


def unbroadcast(grad: Any, shape: tuple[int, ...]) -> Any:
    """Sum ``grad`` down to ``shape``, undoing NumPy broadcasting.

    Two kinds of axes were made by broadcasting: leading axes that ``shape`` does not have
    (summed away), and axes where ``shape`` has size 1 but ``grad`` does not (summed, kept
    as size 1).

    >>> import numpy as np
    >>> unbroadcast(np.ones((2, 3)), (3,))
    array([2., 2., 2.])
    >>> unbroadcast(np.ones((2, 3)), (2, 1))
    array([[3.],
           [3.]])
    """
    shape = tuple(shape)
    if grad.shape == shape:
        return grad
    extra = grad.ndim - len(shape)
    if extra < 0:
        raise ValueError(f"unbroadcast: gradient of shape {grad.shape} cannot be summed "
                         f"to the larger shape {shape}")
    for axis, n in enumerate(shape):
        if n != 1 and grad.shape[extra + axis] != n:
            raise ValueError(f"unbroadcast: gradient of shape {grad.shape} was not broadcast "
                             f"from {shape}: axis {axis} has size {grad.shape[extra + axis]}")
    stretched = tuple(extra + i for i, n in enumerate(shape) if n == 1 and grad.shape[extra + i] != 1)
    summed = reduce_sum(grad, axis=tuple(range(extra)) + stretched, keepdims=True)  # = xp.sum
    return namespace(grad).reshape(summed, shape)
