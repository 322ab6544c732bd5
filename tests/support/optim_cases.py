"""Optimizers and learning-rate schedules compared with PyTorch: one table for the tests and
the bench script.

Each optimizer case trains the same two parameters (float64) on the same least-squares loss
for ``STEPS`` steps, written once for ``lib = minigrad`` and ``lib = torch``; each schedule
case records the learning rate (and the momentum, for OneCycleLR) after each of ``EPOCHS``
calls of ``scheduler.step()``. PyTorch's answers are pinned in ``torch_optim_values.json``:
``tests/nn/test_optim_more.py`` compares minigrad with them (CI has no PyTorch), and
``python -m bench.torch_parity_optim`` recomputes them with PyTorch and fails on any
difference (``--write`` rewrites the file).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

STEPS, EPOCHS = 6, 14
PINNED = Path(__file__).resolve().parent / "torch_optim_values.json"

W0 = [[0.5, -0.25], [0.75, 0.1], [-0.6, 0.3]]
B0 = [0.05, -0.15]
X = [[1.0, 2.0, -1.0], [0.5, -1.5, 2.0], [-2.0, 0.25, 1.0], [1.5, 1.0, 0.5]]
Y = [[1.0, 0.0], [0.0, 1.0], [-1.0, 0.5], [0.25, -0.75]]

OPTIMIZERS: dict[str, tuple[str, dict[str, Any]]] = {
    "adamw": ("AdamW", {"lr": 0.05}),
    "adamw-decay-betas": ("AdamW", {"lr": 0.05, "weight_decay": 0.1, "betas": (0.8, 0.95),
                                    "eps": 1e-6}),
    "rmsprop": ("RMSprop", {"lr": 0.01}),
    "rmsprop-momentum": ("RMSprop", {"lr": 0.01, "momentum": 0.9}),
    "rmsprop-centered": ("RMSprop", {"lr": 0.01, "centered": True, "alpha": 0.9}),
    "rmsprop-everything": ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5,
                                       "weight_decay": 0.01, "eps": 1e-6}),
    "adagrad": ("Adagrad", {"lr": 0.1}),
    "adagrad-decay-initial": ("Adagrad", {"lr": 0.1, "lr_decay": 0.05, "weight_decay": 0.01,
                                          "initial_accumulator_value": 0.1, "eps": 1e-8}),
}

SCHEDULES: dict[str, Callable[[Any, Any], Any]] = {
    "step": lambda L, opt: L.StepLR(opt, step_size=3, gamma=0.5),
    "exponential": lambda L, opt: L.ExponentialLR(opt, gamma=0.9),
    "cosine": lambda L, opt: L.CosineAnnealingLR(opt, T_max=5, eta_min=0.001),
    "lambda": lambda L, opt: L.LambdaLR(opt, lambda epoch: 1.0 / (1 + epoch)),
    "linear-warmup": lambda L, opt: L.LinearLR(opt, start_factor=0.1, total_iters=4),
    "one-cycle": lambda L, opt: L.OneCycleLR(opt, max_lr=0.5, total_steps=EPOCHS),
    "one-cycle-linear-3-phase": lambda L, opt: L.OneCycleLR(
        opt, max_lr=0.5, total_steps=EPOCHS, anneal_strategy="linear", three_phase=True),
    "sequential-warmup-cosine": lambda L, opt: L.SequentialLR(
        opt, [L.LinearLR(opt, start_factor=0.25, total_iters=3),
              L.CosineAnnealingLR(opt, T_max=8)], milestones=[3]),
}


def run_optimizer(name: str, lib_name: str) -> list[list[float]]:
    """The flattened parameters after each step."""
    cls, kwargs = OPTIMIZERS[name]
    if lib_name == "torch":
        import torch as lib
        from torch import optim

        def make(v: Any) -> Any:
            return lib.tensor(v, dtype=lib.float64, requires_grad=True)

        def const(v: Any) -> Any:
            return lib.tensor(v, dtype=lib.float64)
    else:
        import minigrad as lib  # type: ignore[no-redef]
        from minigrad import optim  # type: ignore[no-redef]

        def make(v: Any) -> Any:
            return lib.tensor(v, dtype="float64", requires_grad=True)

        def const(v: Any) -> Any:
            return lib.tensor(v, dtype="float64")
    w, b = make(W0), make(B0)
    x, y = const(X), const(Y)
    opt = getattr(optim, cls)([w, b], **kwargs)
    out = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = ((x @ w + b - y) ** 2).sum()
        loss.backward()
        opt.step()
        out.append([*_flat(w), *_flat(b)])
    return out


def _flat(t: Any) -> list[float]:
    return [float(v) for v in t.detach().numpy().reshape(-1)]


def run_schedule(name: str, lib_name: str) -> dict[str, list[float]]:
    """The learning rate (and momentum) after each scheduler step."""
    if lib_name == "torch":
        import torch
        from torch.optim import lr_scheduler as L
        p = torch.zeros(2, requires_grad=True)
        opt = torch.optim.SGD([p], lr=0.1, momentum=0.9)

        def lr() -> float:
            return float(opt.param_groups[0]["lr"])

        def momentum() -> float:
            return float(opt.param_groups[0]["momentum"])
    else:
        import minigrad as mg
        from minigrad.optim import lr_scheduler as L  # type: ignore[no-redef]
        p = mg.tensor([0.0, 0.0], requires_grad=True)
        opt = mg.optim.SGD([p], lr=0.1, momentum=0.9)

        def lr() -> float:
            return float(opt.lr)

        def momentum() -> float:
            return float(opt.momentum)
    sched = SCHEDULES[name](L, opt)
    lrs, momenta = [lr()], [momentum()]
    for _ in range(EPOCHS - 1):
        opt.step()
        sched.step()
        lrs.append(lr())
        momenta.append(momentum())
    return {"lr": lrs, "momentum": momenta}


def load_pinned() -> dict[str, Any]:
    return json.loads(PINNED.read_text())


def write_pinned(values: dict[str, Any]) -> None:
    PINNED.write_text(json.dumps(values, indent=1, sort_keys=True) + "\n")
