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

from .cases import Case, Data, as_unit, sgd_step, token_cross_entropy

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
    batches = [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in data.batches]
    if case.kind == "gpt":  # bench/char_gpt_torch.py's twin of the example's GPT
        import argparse

        from .char_gpt_torch import torch_gpt
        from .cases import _gpt_model
        blocks, width, heads, context = case.sizes
        ours = _gpt_model(case, data.n_classes, 0)
        ours.load_state_dict(dict(zip(ours.state_dict(), params)))
        model = torch_gpt(ours, argparse.Namespace(
            width=width, heads=heads, layers=blocks, context=context, dropout=0.0, tie=False,
            dtype=case.dtype))
        opt = torch.optim.AdamW(model.parameters(), lr=case.lr)
        return as_unit(case, batches, sgd_step(model, opt, token_cross_entropy(F.cross_entropy)))
    model = _model(case, params)
    opt = torch.optim.SGD(model.parameters(), lr=case.lr, momentum=case.momentum)
    return as_unit(case, batches, sgd_step(model, opt, F.cross_entropy))
