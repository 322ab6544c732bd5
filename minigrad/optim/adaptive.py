"""AdamW, RMSprop and Adagrad: PyTorch's formulas, fused like SGD and Adam.

Each is an :class:`~minigrad.optim.Optimizer` that writes the update of one array in
``_update``; the base class applies it to each parameter or once to each flat buffer (fused),
with the same values either way. Under :func:`minigrad.compile` the numbers that change from
step to step (the learning rate, a step count's corrections) reach a replay as 0-d arrays
refilled before each replay, so a learning-rate schedule replays.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import backend
from ..backend import Array
from ..tensor import Tensor
from . import Adam, NewBuffer, Optimizer, _number

__all__ = ["AdamW", "RMSprop", "Adagrad"]


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter), as ``torch.optim.AdamW``.

    For each parameter ``p`` with gradient ``g``, at step ``t``::

        p = p * (1 - lr * weight_decay)               (the decay, apart from the gradient)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    Parameters
    ----------
    params : iterable of Tensor
        What to update.
    lr : float
        Learning rate.
    betas : (float, float)
        Decay rates of the two averages, each in [0, 1).
    eps : float
        Keeps the denominator away from zero (>= 0).
    weight_decay : float
        Decoupled decay per step, times ``lr`` (PyTorch's default 0.01).
    fused : bool or None
        Update all parameters at once through flat buffers (see :class:`~minigrad.optim.SGD`).
    """

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, *, fused: bool | None = None) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         fused=fused)

    def _check(self, key: str, value: Any) -> Any:
        return super()._check(key, value) if key == "betas" else _number("AdamW", key, value)

    def _update(self, p: Array, g: Array, state: dict[str, Any], new_buffer: NewBuffer,
                scratch: Array | None = None) -> None:
        if self.weight_decay != 0:
            decay: Any = 1 - self.lr * self.weight_decay
            if self._trace is not None:  # compile: lr is read again at each replay
                (decay,) = self._trace.scalars(
                    p.dtype, (decay,), lambda: (1 - self.lr * self.weight_decay,))
            p *= decay
        self._adam_update(p, g, state, new_buffer, weight_decay=0.0)


class RMSprop(Optimizer):
    """RMSprop: steps divided by a running root mean square of the gradient.

    For each parameter ``p`` with gradient ``g`` (``torch.optim.RMSprop``)::

        g = g + weight_decay * p                          (if weight_decay)
        s = alpha * s + (1 - alpha) * g * g
        a = g_avg + (1 - alpha) * (g - g_avg);  d = sqrt(s - a * a) + eps   (centered)
        d = sqrt(s) + eps                                  (otherwise)
        b = momentum * b + g / d;  p = p - lr * b          (if momentum)
        p = p - lr * g / d                                 (otherwise)

    Parameters
    ----------
    params : iterable of Tensor
        What to update.
    lr : float
        Learning rate (PyTorch's default 0.01).
    alpha : float
        Smoothing of the running mean square, in [0, 1].
    eps : float
        Added to the root mean square (>= 0).
    weight_decay : float
        L2 penalty added to the gradient.
    momentum : float
        Factor of the running sum of steps (0: none).
    centered : bool
        Divide by the root of the variance (the mean square minus the squared mean gradient).
    fused : bool or None
        Update all parameters at once through flat buffers.
    """

    hyperparameters = ("lr", "alpha", "eps", "weight_decay", "momentum", "centered")
    lr: float
    alpha: float
    eps: float
    weight_decay: float
    momentum: float
    centered: bool

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum: float = 0.0,
                 centered: bool = False, *, fused: bool | None = None) -> None:
        for key, value in (("lr", lr), ("alpha", alpha), ("eps", eps),
                           ("weight_decay", weight_decay), ("momentum", momentum)):
            self._check(key, value)
        super().__init__(params, fused=fused, lr=lr, alpha=alpha, eps=eps,
                         weight_decay=weight_decay, momentum=momentum, centered=centered)

    def _check(self, key: str, value: Any) -> Any:
        if key == "centered":
            return bool(value)
        return _number("RMSprop", key, value, high=1.0 if key == "alpha" else None)

    def _update(self, p: Array, g: Array, state: dict[str, Any], new_buffer: NewBuffer,
                scratch: Array | None = None) -> None:
        xp = backend.namespace(p)
        lr: Any = self.lr
        if self._trace is not None:  # compile: lr is read again at each replay
            (lr,) = self._trace.scalars(p.dtype, (lr,), lambda: (self.lr,))
        if self.weight_decay != 0:
            g = g + self.weight_decay * p
        if not state:
            state["step"] = 0
            state["square_avg"] = new_buffer("square_avg")
            if self.momentum > 0:
                state["momentum_buffer"] = new_buffer("momentum_buffer")
            if self.centered:
                state["grad_avg"] = new_buffer("grad_avg")
        state["step"] += 1
        s = state["square_avg"]
        s *= self.alpha
        s += (1 - self.alpha) * (g * g)
        if self.centered:
            a = state["grad_avg"]
            a += (1 - self.alpha) * (g - a)
            d = xp.sqrt(s - a * a) + self.eps
        else:
            d = xp.sqrt(s) + self.eps
        if self.momentum > 0:
            b = state["momentum_buffer"]
            b *= self.momentum
            b += g / d
            p -= lr * b
        else:
            p -= lr * (g / d)

    def _replay_prologue(self, updated: list[int]) -> None:
        for i in updated:  # the step counts that step() would have advanced
            self.state[i]["step"] += 1


class Adagrad(Optimizer):
    """Adagrad: steps divided by the root of each value's sum of squared gradients.

    For each parameter ``p`` with gradient ``g``, at step ``t`` (``torch.optim.Adagrad``)::

        g = g + weight_decay * p                      (if weight_decay)
        s = s + g * g                                 (s starts at initial_accumulator_value)
        p = p - lr / (1 + (t - 1) * lr_decay) * g / (sqrt(s) + eps)

    Parameters
    ----------
    params : iterable of Tensor
        What to update.
    lr : float
        Learning rate (PyTorch's default 0.01).
    lr_decay : float
        Shrinks the learning rate with the step count.
    weight_decay : float
        L2 penalty added to the gradient.
    initial_accumulator_value : float
        Where the sums of squares start (>= 0).
    eps : float
        Added to the root of the sums (>= 0).
    fused : bool or None
        Update all parameters at once through flat buffers.
    """

    hyperparameters = ("lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps")
    lr: float
    lr_decay: float
    weight_decay: float
    initial_accumulator_value: float
    eps: float

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, *, fused: bool | None = None) -> None:
        for key, value in (("lr", lr), ("lr_decay", lr_decay), ("weight_decay", weight_decay),
                           ("initial_accumulator_value", initial_accumulator_value),
                           ("eps", eps)):
            self._check(key, value)
        super().__init__(params, fused=fused, lr=lr, lr_decay=lr_decay,
                         weight_decay=weight_decay,
                         initial_accumulator_value=initial_accumulator_value, eps=eps)

    def _check(self, key: str, value: Any) -> Any:
        return _number("Adagrad", key, value)

    def _step_size(self, t: int) -> float:
        return self.lr / (1 + (t - 1) * self.lr_decay)

    def _update(self, p: Array, g: Array, state: dict[str, Any], new_buffer: NewBuffer,
                scratch: Array | None = None) -> None:
        xp = backend.namespace(p)
        if self.weight_decay != 0:
            g = g + self.weight_decay * p
        if not state:
            state["step"] = 0
            state["sum"] = new_buffer("sum")
            if self.initial_accumulator_value != 0:
                state["sum"][...] = self.initial_accumulator_value
        state["step"] += 1
        step_size: Any = self._step_size(state["step"])
        if self._trace is not None:  # compile: refilled from the advanced step count
            i = self._updating
            step_size, = self._trace.scalars(
                p.dtype, (step_size,), lambda: (self._step_size(self.state[i]["step"]),))
        s = state["sum"]
        s += g * g
        p -= step_size * (g / (xp.sqrt(s) + self.eps))

    def _replay_prologue(self, updated: list[int]) -> None:
        for i in updated:
            self.state[i]["step"] += 1
