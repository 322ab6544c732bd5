"""The readable hand-built loop of :mod:`minigrad.course.byhand`: reported, not the target.

It is the course's oracle, written for clarity (a fresh array per operation, a loop over
parameters for the update), so it shows what the engine costs over the code a student
derives on paper. The targets are measured against the tuned loops of :mod:`bench.impl_numpy`.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from minigrad.course import byhand

from .cases import Case, Data

__all__ = ["make_step"]


def make_step(case: Case, data: Data, params: list[np.ndarray]) -> Callable[[], object]:
    """One training step of ``case`` with ``minigrad.course.byhand``'s layers and ``sgd_step``."""
    if case.kind != "mlp" or case.momentum:
        raise NotImplementedError("minigrad.course.byhand has no convolution, pooling or momentum")
    model = byhand.MLP.from_sizes(case.sizes, dtype=case.dtype)
    linears = [layer for layer in model.layers if isinstance(layer, byhand.Linear)]
    for layer, W, b in zip(linears, params[0::2], params[1::2]):
        layer.W, layer.b = W.copy(), b.copy()
    loss_fn = byhand.SoftmaxCrossEntropy()
    batches = data.batches
    state = {"i": 0}

    def step() -> object:
        x, y = batches[state["i"]]
        state["i"] = (state["i"] + 1) % len(batches)
        loss = loss_fn.forward(model.forward(x), y)
        model.backward(loss_fn.backward())
        byhand.sgd_step(model, case.lr)
        return loss

    return step
