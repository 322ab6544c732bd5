"""The minigrad contender, written the way a user writes it.

``nn.Sequential`` of ``nn`` layers, ``functional.cross_entropy``, ``optim.SGD``, and the usual
``zero_grad()`` / ``backward()`` / ``step()``: exactly the PyTorch contender, line for line.
Batches are turned into tensors before the clock starts, as for PyTorch.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import minigrad as mg
import minigrad.functional as F
from minigrad import nn, optim

from .cases import Case, Data, _gpt_model, as_unit, sgd_step, token_cross_entropy

__all__ = ["make_step"]


def _model(case: Case, params: list[np.ndarray], nn: Any = nn) -> Any:
    """The network of ``case`` (LeNet-5 or an MLP) with the weights ``params``; ``nn`` is the
    engine's module of layers (another engine's for bench.ab_eager)."""
    dt = case.dtype
    if case.kind == "lenet":
        model = nn.Sequential(  # pool, then ReLU: see bench.cases
            nn.Conv2d(1, 6, 5, seed=0, dtype=dt), nn.MaxPool2d(2), nn.ReLU(),
            nn.Conv2d(6, 16, 5, seed=1, dtype=dt), nn.MaxPool2d(2), nn.ReLU(),
            nn.Flatten(),
            nn.Linear(400, 120, seed=2, dtype=dt), nn.ReLU(),
            nn.Linear(120, 84, seed=3, dtype=dt), nn.ReLU(),
            nn.Linear(84, 10, seed=4, dtype=dt))
    else:
        layers: list[Any] = []
        for k, (i, o) in enumerate(zip(case.sizes[:-1], case.sizes[1:])):
            layers += [nn.Linear(i, o, seed=k, dtype=dt), nn.ReLU()]
        model = nn.Sequential(*layers[:-1])
    names = [name for name, _ in model.named_parameters()]
    model.load_state_dict(dict(zip(names, params)))   # the weights every contender starts from
    return model


def make_step(case: Case, data: Data, params: list[np.ndarray],
              fused: bool | None = None, compiled: bool = False) -> Callable[[], object]:
    """One unit of ``case`` (a step, or an epoch for LeNet-5) with minigrad.

    ``fused`` goes to ``optim.SGD``: None (its default, what a user gets) fuses the update
    through flat buffers, False updates one parameter at a time (for comparisons).
    ``compiled`` wraps the training step in ``minigrad.compile`` (the "minigrad compiled"
    contender): the same step, recorded once and replayed.
    """
    opt: optim.Optimizer
    batches: list[tuple[Any, Any]]
    if case.kind == "gpt":  # the example's GPT and AdamW; ids stay NumPy arrays
        model = _gpt_model(case, data.n_classes, 0)
        model.load_state_dict(dict(zip(model.state_dict(), params)))
        opt = optim.AdamW(model.parameters(), lr=case.lr)
        batches = list(data.batches)
        train_step = sgd_step(model, opt, token_cross_entropy(F.cross_entropy))
    else:
        model = _model(case, params)
        opt = optim.SGD(model.parameters(), lr=case.lr, momentum=case.momentum, fused=fused)
        batches = [(mg.Tensor(x), y) for x, y in data.batches]
        train_step = sgd_step(model, opt, F.cross_entropy)
    if compiled:
        train_step = mg.compile(train_step)

    return as_unit(case, batches, train_step)
