"""The numbers the widget draws: operand values, the result, and gradients from the engine.

Nothing here is a formula for a gradient. The engine computes them, twice:

* ``A op B`` on tensors of the inputs' own shapes, then ``backward(ones)``: the engine
  broadcasts and unbroadcasts as in any program, giving ``A.grad`` and ``B.grad``;
* the same operation on inputs already copied out to the result's shape (every result cell
  gets a leaf of its own), then ``backward(ones)``: the gradient of those copies is what each
  result cell sends back *before* anything is summed.

:func:`minigrad.broadcast.unbroadcast` sums the second into the first, and the scene checks
that it does: the picture shows per-cell numbers, sums and their agreement, all from the engine.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from ...broadcast import unbroadcast
from ...tensor import Tensor
from .plan import BroadcastPlan

__all__ = ["Scene", "make_scene"]

_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}


@dataclass(frozen=True)
class Scene:
    """Everything one picture shows, for one plan.

    Attributes
    ----------
    plan : BroadcastPlan
        Shapes, and where each result cell comes from.
    a, b : ndarray
        The operands: small non-zero integers (as float64), seeded.
    out : ndarray
        ``a op b`` as the engine computes it.
    sent_a, sent_b : ndarray
        Result-shaped: what each result cell sends back to the input cell it read, when the
        result's gradient is all ones (the engine's gradient of the copied-out inputs).
    grad_a, grad_b : ndarray
        The inputs' gradients: the engine's ``A.grad`` and ``B.grad`` after ``backward(ones)``.
    """

    plan: BroadcastPlan
    a: np.ndarray
    b: np.ndarray
    out: np.ndarray
    sent_a: np.ndarray
    sent_b: np.ndarray
    grad_a: np.ndarray
    grad_b: np.ndarray


def operand_values(shape: tuple[int, ...], seed: int, which: int) -> np.ndarray:
    """Small non-zero integers 1..5 (as float64) for operand ``which`` (0 for A, 1 for B).

    Each operand has its own stream, so changing B's shape does not change A's values.
    """
    rng = np.random.default_rng([seed, which])
    return rng.integers(1, 6, size=shape).astype(np.float64)


def make_scene(plan: BroadcastPlan, seed: int = 0) -> Scene:
    """Compute the values and gradients for ``plan`` with the engine (see the module docstring)."""
    f = _OPS[plan.op]
    a = operand_values(plan.shape_a, seed, 0)
    b = operand_values(plan.shape_b, seed, 1)
    ones = np.ones(plan.shape)

    # 1. As in any program: the engine broadcasts forward and unbroadcasts backward.
    A, B = Tensor(a, requires_grad=True), Tensor(b, requires_grad=True)
    out = f(A, B)
    out.backward(ones)

    # 2. The inputs copied out to the result's shape: one leaf per result cell, so each
    #    leaf's gradient is what that single result cell sends back.
    A_copies = Tensor(np.broadcast_to(a, plan.shape).copy(), requires_grad=True)
    B_copies = Tensor(np.broadcast_to(b, plan.shape).copy(), requires_grad=True)
    f(A_copies, B_copies).backward(ones)
    sent_a, sent_b = A_copies.grad, B_copies.grad

    # 3. Summing what the copies sent back gives the broadcasting gradient: check it.
    for name, sent, grad, shape in (("A", sent_a, A.grad, plan.shape_a),
                                    ("B", sent_b, B.grad, plan.shape_b)):
        if grad is None:
            raise AssertionError(f"the engine gave {name} no gradient")
        if not np.allclose(unbroadcast(sent, shape), grad):
            raise AssertionError(f"the engine's {name}.grad {grad.tolist()} is not the sum of "
                                 f"what the copies sent back, {unbroadcast(sent, shape).tolist()}")
    return Scene(plan=plan, a=a, b=b, out=np.asarray(out.data), sent_a=np.asarray(sent_a),
                 sent_b=np.asarray(sent_b), grad_a=np.asarray(A.grad),
                 grad_b=np.asarray(B.grad))
