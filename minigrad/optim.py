"""Optimizers: they read each parameter's ``.grad`` and update its ``.data``.

An update works on the arrays directly (``p.data -= lr * g``), so it is never recorded in a
graph: it runs outside autodiff, as under ``no_grad``. The formulas are PyTorch's, so a run
here can be compared with one in PyTorch.

>>> import minigrad as mg, minigrad.nn as nn, minigrad.optim as optim
>>> model = nn.Linear(2, 1, seed=0)
>>> opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
>>> loss = (model(mg.tensor([[1.0, 2.0]])) ** 2).sum()
>>> opt.zero_grad(); loss.backward(); opt.step()

``state_dict()`` holds the hyperparameters and the per-parameter state (momentum, Adam's moving
averages): save it with the model so that a resumed run continues exactly where it stopped.
"""
from __future__ import annotations

from typing import Any, Iterable

from . import backend
from .tensor import Tensor

__all__ = ["Optimizer", "SGD", "Adam"]


class Optimizer:
    """Base class: holds the parameters, their per-parameter ``state`` and the hyperparameters.

    Subclasses list their hyperparameters' names in ``hyperparameters`` and define ``step()``.
    Hyperparameters are plain attributes (``opt.lr = 0.01`` changes the learning rate).
    """

    hyperparameters: tuple[str, ...] = ()

    def __init__(self, params: Iterable[Tensor], **hyper: Any) -> None:
        self.params: list[Tensor] = list(params)
        if not self.params:
            raise ValueError(f"{type(self).__name__}: got an empty list of parameters (was "
                             "model.parameters() already used up by another optimizer?)")
        seen: set[int] = set()
        for i, p in enumerate(self.params):
            if not isinstance(p, Tensor):
                raise TypeError(f"{type(self).__name__}: parameter {i} is a "
                                f"{type(p).__name__}, expected a Tensor (a Parameter)")
            if not p.is_leaf:
                raise ValueError(f"{type(self).__name__}: parameter {i} was computed by an "
                                 "operation; an optimizer can only update leaf tensors")
            if id(p) in seen:
                raise ValueError(f"{type(self).__name__}: parameter {i} appears twice")
            seen.add(id(p))
        for name, value in hyper.items():
            setattr(self, name, value)
        self.state: list[dict[str, Any]] = [{} for _ in self.params]

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the gradients (``backward()`` adds to them otherwise): None, or zeros."""
        for p in self.params:
            if set_to_none or p.grad is None:
                p.grad = None
            else:
                p.grad = p._xp.zeros_like(p.grad)

    def step(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} has no step()")

    def __repr__(self) -> str:
        settings = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.hyperparameters)
        return f"{type(self).__name__}({settings})"

    # --- saving and resuming --------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {name: array or number}}, "param_groups": [{hyper..., "params"}]}``.

        The layout is PyTorch's: parameters are referred to by their position in the list the
        optimizer was given. The arrays are the live state (not copies).
        """
        group = {name: getattr(self, name) for name in self.hyperparameters}
        group["params"] = list(range(len(self.params)))
        return {"state": {i: dict(s) for i, s in enumerate(self.state) if s},
                "param_groups": [group]}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore hyperparameters and state saved by :meth:`state_dict` (arrays are copied).

        The optimizer must have been made with the same parameters, in the same order.
        """
        name = type(self).__name__
        try:
            saved_state, groups = state_dict["state"], state_dict["param_groups"]
        except (KeyError, TypeError):
            raise ValueError(f"{name}.load_state_dict: expected a dict with 'state' and "
                             f"'param_groups' (from optimizer.state_dict()); got "
                             f"{_describe(state_dict)}") from None
        if len(groups) != 1:
            raise ValueError(f"{name}.load_state_dict: expected one parameter group; got "
                             f"{len(groups)}")
        group = groups[0]
        n_saved = len(group.get("params", ()))
        if n_saved != len(self.params):
            raise ValueError(f"{name}.load_state_dict: the saved state is for {n_saved} "
                             f"parameters but this optimizer has {len(self.params)}")
        unknown = [k for k in group if k != "params" and k not in self.hyperparameters]
        if unknown:
            raise ValueError(f"{name}.load_state_dict: unknown hyperparameters {unknown} (was "
                             f"it saved by another kind of optimizer?)")
        new_state: list[dict[str, Any]] = [{} for _ in self.params]
        for key, entries in saved_state.items():
            i = int(key)
            if not 0 <= i < len(self.params):
                raise ValueError(f"{name}.load_state_dict: state for parameter {i}, but there "
                                 f"are only {len(self.params)}")
            p = self.params[i]
            for entry, value in entries.items():
                if isinstance(value, Tensor):
                    value = value.data
                if hasattr(value, "shape"):
                    shape = tuple(value.shape)
                    if shape == p.shape:  # a buffer shaped like its parameter
                        value = backend.copy_to(value, like=p.data, dtype=p.data.dtype)
                    elif shape == ():  # a number stored as a 0-d array (a step count)
                        value = value.item()
                    else:
                        raise ValueError(f"{name}.load_state_dict: {entry!r} of parameter {i} "
                                         f"has shape {shape}, but the parameter has shape "
                                         f"{p.shape}")
                new_state[i][entry] = value
        for key in self.hyperparameters:
            if key in group:
                value = group[key]
                setattr(self, key, tuple(value) if isinstance(value, list) else value)
        self.state = new_state


def _describe(x: Any) -> str:
    return f"keys {sorted(map(str, x))}" if isinstance(x, dict) else type(x).__name__


class SGD(Optimizer):
    """Stochastic gradient descent, with optional momentum, Nesterov momentum and weight decay.

    For each parameter ``p`` with gradient ``g`` (PyTorch's formulas)::

        g = g + weight_decay * p                      (if weight_decay)
        b = g on the first step, else momentum * b + (1 - dampening) * g   (if momentum)
        g = g + momentum * b if nesterov else b       (if momentum)
        p = p - lr * g

    Parameters
    ----------
    params : iterable of Tensor
        What to update, usually ``model.parameters()``.
    lr : float
        Learning rate.
    momentum : float
        Factor of the running sum of gradients (0: none).
    dampening : float
        Shrinks each new gradient's share of the momentum.
    nesterov : bool
        Look ahead along the momentum (needs ``momentum > 0`` and ``dampening == 0``).
    weight_decay : float
        L2 penalty: adds ``weight_decay * p`` to each gradient.
    """

    hyperparameters = ("lr", "momentum", "dampening", "nesterov", "weight_decay")

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, nesterov: bool = False,
                 weight_decay: float = 0.0) -> None:
        if lr < 0 or momentum < 0 or weight_decay < 0:
            raise ValueError(f"SGD: lr, momentum and weight_decay must be >= 0; got lr={lr}, "
                             f"momentum={momentum}, weight_decay={weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: nesterov=True needs momentum > 0 and dampening = 0")
        super().__init__(params, lr=lr, momentum=momentum, dampening=dampening,
                         nesterov=nesterov, weight_decay=weight_decay)

    def step(self) -> None:
        """Update every parameter that has a gradient."""
        lr, momentum, weight_decay = self.lr, self.momentum, self.weight_decay
        if momentum == 0 and weight_decay == 0:  # plain gradient descent: the fast path
            for p in self.params:
                g = p.grad
                if g is not None:
                    p.data -= lr * g
            return
        dampening, nesterov = self.dampening, self.nesterov
        for p, state in zip(self.params, self.state):
            g = p.grad
            if g is None:
                continue
            if weight_decay != 0:
                g = g + weight_decay * p.data
            if momentum != 0:
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = backend.copy_to(g)
                else:
                    buf *= momentum
                    buf += (1 - dampening) * g
                g = g + momentum * buf if nesterov else buf
            p.data -= lr * g


class Adam(Optimizer):
    """Adam: steps scaled by running averages of the gradient and of its square.

    For each parameter ``p`` with gradient ``g``, at step ``t`` = 1, 2, ... (PyTorch's
    formulas)::

        g = g + weight_decay * p                      (if weight_decay)
        m = beta1 * m + (1 - beta1) * g               (moving average of g)
        v = beta2 * v + (1 - beta2) * g * g           (moving average of g squared)
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    The divisions by ``1 - beta**t`` undo the averages' bias towards their zero start.

    Parameters
    ----------
    params : iterable of Tensor
        What to update.
    lr : float
        Learning rate (the largest step is about ``lr``).
    betas : (float, float)
        Decay rates of the two averages.
    eps : float
        Keeps the denominator away from zero.
    weight_decay : float
        L2 penalty added to the gradient.
    """

    hyperparameters = ("lr", "betas", "eps", "weight_decay")

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0) -> None:
        if lr < 0 or eps < 0 or weight_decay < 0:
            raise ValueError(f"Adam: lr, eps and weight_decay must be >= 0; got lr={lr}, "
                             f"eps={eps}, weight_decay={weight_decay}")
        if len(betas) != 2 or not all(0 <= b < 1 for b in betas):
            raise ValueError(f"Adam: betas must be two numbers in [0, 1); got {betas!r}")
        super().__init__(params, lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay)

    def step(self) -> None:
        """Update every parameter that has a gradient."""
        lr, (beta1, beta2), eps, weight_decay = self.lr, self.betas, self.eps, self.weight_decay
        for p, state in zip(self.params, self.state):
            g = p.grad
            if g is None:
                continue
            xp = p._xp
            if weight_decay != 0:
                g = g + weight_decay * p.data
            if not state:
                state["step"] = 0
                state["exp_avg"] = xp.zeros_like(p.data)
                state["exp_avg_sq"] = xp.zeros_like(p.data)
            state["step"] += 1
            t, m, v = state["step"], state["exp_avg"], state["exp_avg_sq"]
            m *= beta1
            m += (1 - beta1) * g
            v *= beta2
            v += (1 - beta2) * (g * g)
            denom = xp.sqrt(v) / (1 - beta2 ** t) ** 0.5 + eps
            p.data -= (lr / (1 - beta1 ** t)) * (m / denom)
