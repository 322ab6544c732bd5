"""Fast path: gradients written straight into the buffers a fused optimizer keeps.

A fused optimizer (:mod:`minigrad.optim`) keeps every parameter's gradient in one flat buffer,
and gives each parameter its slice as ``p._grad_buffer``. Then ``backward()`` need not make a
new ``.grad`` array at every step: it writes the gradient into that same memory, the way the
tuned NumPy loop writes ``matmul(g.T, x, out=dW)``. Nothing here changes a number: the values
are the eager engine's, only the memory they land in differs, and any case this path does not
cover steps aside to the engine's plain rule.

Two entries, each a small function:

* :func:`store`, the core's one hook (:func:`minigrad.tensor._accumulate_grad` calls it for a
  leaf that has a buffer and no ``.grad`` yet): copy the first gradient into the buffer;
* :func:`gradient_product`, called by a VJP that computes a weight's whole gradient as one
  product (``F.linear``'s ``g.T @ x``): the product is written into the buffer directly, and
  :func:`store` then finds it already there (one copy fewer).

:mod:`minigrad.compile` sees these writes as it sees any other (``home[...] = g`` and the
``out=`` of the product are recorded like every NumPy call on the arrays it traces).
This module imports only :mod:`minigrad.backend`: it reads a tensor's attributes, never the
engine.
"""
from __future__ import annotations

from typing import Any

from .backend import Array, matmul_into

__all__ = ["store", "gradient_product"]


def store(leaf: Any, g: Array) -> bool:
    """Make ``g`` the first ``.grad`` of ``leaf`` in the buffer its fused optimizer keeps.

    Returns True when done: ``g`` already is the buffer (:func:`gradient_product` wrote it
    there), or it was copied in (``home[...] = g``: a copy into memory the leaf owns, so no
    other tensor shares it). Returns False, changing nothing, when the buffer cannot take it
    (another dtype than the leaf's, another array library): the core then makes a new array.
    """
    home = leaf._grad_buffer
    if g is home:  # the VJP wrote it there already (gradient_product): nothing to copy
        leaf.grad = home
        return True
    if home.dtype == leaf.data.dtype and type(home) is type(g):
        home[...] = g
        leaf.grad = home
        return True
    return False


def gradient_product(a: Array, b: Array, leaf: Any) -> Array:
    """``a @ b``, computed in a VJP as the whole gradient of the leaf ``leaf`` (a weight's
    ``g.T @ x``): a fast path for training with a fused optimizer.

    When this product is about to become ``leaf.grad`` in the buffer its fused optimizer keeps
    for it (the leaf has no gradient yet this step), the product is written straight into that
    buffer, and :func:`store` keeps it as it is: one copy of the gradient fewer, as the tuned
    NumPy loop's ``matmul(g.T, x, out=dW)``. In every other case (no such buffer, a gradient
    already there, another dtype or array library) it is the plain ``a @ b``.
    """
    if leaf.requires_grad and leaf._vjp is None and leaf.grad is None:
        home = leaf._grad_buffer
        if home is not None and home.shape == leaf.data.shape:
            try:
                into = matmul_into(a, b, home)
            except ValueError:  # a product of another shape: backward() will say so
                into = None
            if into is not None:
                return into
    return a @ b
