"""The PyTorch contender: CPU eager mode, written the way a PyTorch user writes it.

``nn.Sequential`` of standard layers, ``F.cross_entropy``, ``torch.optim.SGD`` (its default
``foreach`` implementation), ``zero_grad()`` / ``backward()`` / ``step()``. Batches are turned
into tensors before the clock starts (``torch.from_numpy``, no copy).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .cases import Case, Data, as_unit, sgd_step

__all__ = ["make_step"]


def _model(case: Case, params: list[np.ndarray]) -> nn.Module:
    if case.kind == "lenet":
        model = nn.Sequential(  # pool, then ReLU: see bench.cases
            nn.Conv2d(1, 6, 5), nn.MaxPool2d(2), nn.ReLU(),
            nn.Conv2d(6, 16, 5), nn.MaxPool2d(2), nn.ReLU(),
            nn.Flatten(),
            nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))
    else:
        layers: list[nn.Module] = []
        for i, o in zip(case.sizes[:-1], case.sizes[1:]):
            layers += [nn.Linear(i, o), nn.ReLU()]
        model = nn.Sequential(*layers[:-1])
    dtype = getattr(torch, case.dtype)
    model = model.to(dtype)
    with torch.no_grad():
        for p, value in zip(model.parameters(), params):
            p.copy_(torch.from_numpy(value))
    return model


def make_step(case: Case, data: Data, params: list[np.ndarray]) -> Callable[[], object]:
    """One unit of ``case`` (a step, or an epoch for LeNet-5) in PyTorch eager mode."""
    model = _model(case, params)
    opt = torch.optim.SGD(model.parameters(), lr=case.lr, momentum=case.momentum)
    batches = [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in data.batches]

    return as_unit(case, batches, sgd_step(model, opt, F.cross_entropy))
