"""Learning-rate schedules, as ``torch.optim.lr_scheduler``.

A scheduler sets its optimizer's ``lr`` at each :meth:`LRScheduler.step` (call it once per
epoch or per batch, *after* ``optimizer.step()``, as in PyTorch). The value it sets is what
the next ``optimizer.step()`` uses, compiled or not: a step compiled with
:func:`minigrad.compile` reads ``lr`` again at each replay, so a schedule needs no new
recording. (Call ``scheduler.step()`` outside the compiled step: a replay does not run the
step's Python, and a compiled step that changes ``lr`` itself runs eagerly and says so.)

The formulas are PyTorch's, in the same chained form (each step from the last value), so a run
here follows a PyTorch run to rounding. minigrad's optimizers have one parameter group, so the
lists PyTorch keeps per group (``base_lrs``, ``get_last_lr()``) have one entry here.

>>> import minigrad as mg
>>> from minigrad import nn, optim
>>> opt = optim.SGD(nn.Linear(2, 1, seed=0).parameters(), lr=0.1)
>>> sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
>>> lrs = []
>>> for epoch in range(5):
...     opt.step()
...     sched.step()
...     lrs.append(opt.lr)
>>> lrs
[0.1, 0.05, 0.05, 0.025, 0.025]
"""
from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

from . import Optimizer

__all__ = ["LRScheduler", "StepLR", "ExponentialLR", "CosineAnnealingLR", "LambdaLR",
           "LinearLR", "OneCycleLR", "SequentialLR"]


def _positive_int(owner: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{owner}: {name} must be a positive integer; got {value!r}")
    return value


class LRScheduler:
    """Base class: ``get_lr()`` gives the learning rate of epoch ``last_epoch``.

    Parameters
    ----------
    optimizer : Optimizer
        Whose ``lr`` is set.
    last_epoch : int
        The index of the last epoch done (-1: a new run; the constructor then takes the first
        step, setting the learning rate of epoch 0, as PyTorch's). To resume a run, load the
        saved :meth:`state_dict` instead.
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(self).__name__}: expected an optimizer of minigrad.optim; "
                            f"got {type(optimizer).__name__}")
        self.optimizer = optimizer
        if last_epoch == -1:
            if not hasattr(optimizer, "initial_lr"):
                object.__setattr__(optimizer, "initial_lr", optimizer.lr)
        elif not hasattr(optimizer, "initial_lr"):
            raise KeyError(f"{type(self).__name__}: last_epoch={last_epoch} resumes a run, but "
                           "the optimizer has no initial_lr (set by a scheduler made with "
                           "last_epoch=-1); load the scheduler's state_dict instead")
        self.base_lrs: list[float] = [optimizer.initial_lr]  # type: ignore[attr-defined]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self.step()

    def get_lr(self) -> list[float]:
        """The learning rate of epoch ``last_epoch``, from the current one (chained form)."""
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        """The learning rate the last :meth:`step` set (a list of one, as PyTorch's)."""
        return list(self._last_lr)

    def step(self, epoch: int | None = None) -> None:
        """Go to the next epoch (or to ``epoch``, by the closed form where there is one) and
        set the optimizer's learning rate."""
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            values = closed() if closed is not None else self.get_lr()
        self.optimizer.lr = values[0]
        self._last_lr = [self.optimizer.lr]

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer (PyTorch's layout)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved (the optimizer's lr is the optimizer's own
        state: load it with the optimizer's ``load_state_dict``)."""
        self.__dict__.update(state_dict)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(last_epoch={self.last_epoch}, lr={self.optimizer.lr})"

    @property
    def _lr(self) -> float:
        return self.optimizer.lr


class StepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size = _positive_int("StepLR", "step_size", step_size)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [self._lr]
        return [self._lr * self.gamma]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma ** (self.last_epoch // self.step_size)
                for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [self._lr]
        return [self._lr * self.gamma]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Half a cosine from the initial learning rate down to ``eta_min`` over ``T_max`` epochs
    (and back up after, as PyTorch's, which does not restart)."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        self.T_max = _positive_int("CosineAnnealingLR", "T_max", T_max)
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        t, n, low, lr = self.last_epoch, self.T_max, self.eta_min, self._lr
        if t == 0:
            return [lr]
        if self._step_count == 1 and t > 0:
            return self._get_closed_form_lr()
        if (t - 1 - n) % (2 * n) == 0:
            return [lr + (self.base_lrs[0] - low) * (1 - math.cos(math.pi / n)) / 2]
        return [(1 + math.cos(math.pi * t / n)) / (1 + math.cos(math.pi * (t - 1) / n))
                * (lr - low) + low]

    def _get_closed_form_lr(self) -> list[float]:
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


class LambdaLR(LRScheduler):
    """The initial learning rate times ``lr_lambda(epoch)``."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float],
                 last_epoch: int = -1) -> None:
        if not callable(lr_lambda):
            raise TypeError(f"LambdaLR: lr_lambda must be a function of the epoch; got "
                            f"{type(lr_lambda).__name__}")
        self.lr_lambda = lr_lambda
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * self.lr_lambda(self.last_epoch) for base in self.base_lrs]

    def state_dict(self) -> dict[str, Any]:
        """As PyTorch's: a plain function is not saved (make the scheduler with it again)."""
        state = super().state_dict()
        if not hasattr(self.lr_lambda, "__dict__") or callable(getattr(self.lr_lambda,
                                                                       "__code__", None)):
            state.pop("lr_lambda")
        return state


class LinearLR(LRScheduler):
    """Scale the learning rate linearly from ``start_factor`` to ``end_factor`` times the
    initial one over ``total_iters`` epochs (a warm-up), then keep it."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        if not 0 < start_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1]; got {start_factor}")
        if not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: end_factor must be in [0, 1]; got {end_factor}")
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        t, a, b, n = self.last_epoch, self.start_factor, self.end_factor, self.total_iters
        if t == 0:
            return [self._lr * a]
        if t > n:
            return [self._lr]
        return [self._lr * (1.0 + (b - a) / (n * a + (t - 1) * (b - a)))]

    def _get_closed_form_lr(self) -> list[float]:
        a, b, n = self.start_factor, self.end_factor, self.total_iters
        return [base * (a + (b - a) * min(n, self.last_epoch) / n) for base in self.base_lrs]


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith): up from ``max_lr / div_factor`` to ``max_lr`` over
    ``pct_start`` of the steps, then down to ``initial / final_div_factor``; call
    :meth:`step` after every batch. With ``cycle_momentum`` (the default, as PyTorch) it also
    cycles SGD's ``momentum`` or Adam's first beta between ``max_momentum`` and
    ``base_momentum``; a compiled step records again when those change, so pass
    ``cycle_momentum=False`` to keep a compiled step replaying.
    """

    def __init__(self, optimizer: Optimizer, max_lr: float, total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None,
                 pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum: float = 0.85,
                 max_momentum: float = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("OneCycleLR: give total_steps, or epochs and steps_per_epoch")
            total_steps = _positive_int("OneCycleLR", "epochs", epochs) * _positive_int(
                "OneCycleLR", "steps_per_epoch", steps_per_epoch)
        self.total_steps = _positive_int("OneCycleLR", "total_steps", total_steps)
        if not 0 <= pct_start <= 1:
            raise ValueError(f"OneCycleLR: pct_start must be in [0, 1]; got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear'; got "
                             f"{anneal_strategy!r}")
        self.anneal_strategy = anneal_strategy
        initial = max_lr / div_factor
        self.lrs = {"initial_lr": initial, "max_lr": max_lr,
                    "min_lr": initial / final_div_factor}
        n = float(self.total_steps)
        if three_phase:
            self.phases = [(pct_start * n - 1, "initial_lr", "max_lr", "max_momentum",
                            "base_momentum"),
                           (2 * pct_start * n - 2, "max_lr", "initial_lr", "base_momentum",
                            "max_momentum"),
                           (n - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            self.phases = [(pct_start * n - 1, "initial_lr", "max_lr", "max_momentum",
                            "base_momentum"),
                           (n - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        self.cycle_momentum = cycle_momentum
        self.momenta = {"base_momentum": base_momentum, "max_momentum": max_momentum}
        if cycle_momentum:
            if not (hasattr(optimizer, "momentum") or hasattr(optimizer, "betas")):
                raise ValueError("OneCycleLR: cycle_momentum needs an optimizer with momentum "
                                 "or betas; pass cycle_momentum=False")
            if last_epoch == -1:
                self._set_momentum(optimizer, max_momentum)
        if last_epoch == -1:
            optimizer.lr = initial
            object.__setattr__(optimizer, "initial_lr", initial)
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _set_momentum(optimizer: Any, value: float) -> None:
        if hasattr(optimizer, "betas"):
            optimizer.betas = (value, optimizer.betas[1])
        else:
            optimizer.momentum = value

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        t = self.last_epoch
        if t > self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {t} times; total_steps is "
                             f"{self.total_steps}")
        start = 0.0
        lr = momentum = 0.0
        for i, (end, lr_from, lr_to, m_from, m_to) in enumerate(self.phases):
            if t <= end or i == len(self.phases) - 1:
                pct = (t - start) / (end - start)
                lr = self._anneal(self.lrs[lr_from], self.lrs[lr_to], pct)
                momentum = self._anneal(self.momenta[m_from], self.momenta[m_to], pct)
                break
            start = end
        if self.cycle_momentum:
            self._set_momentum(self.optimizer, momentum)
        return [lr]


class SequentialLR(LRScheduler):
    """Run ``schedulers`` one after another, switching at the epochs in ``milestones``."""

    def __init__(self, optimizer: Optimizer, schedulers: Sequence[LRScheduler],
                 milestones: Sequence[int], last_epoch: int = -1) -> None:
        if len(schedulers) < 1 or len(milestones) != len(schedulers) - 1:
            raise ValueError(f"SequentialLR: expected one milestone fewer than schedulers; got "
                             f"{len(schedulers)} schedulers and {len(milestones)} milestones")
        for k, s in enumerate(schedulers):
            if getattr(s, "optimizer", None) is not optimizer:
                raise ValueError(f"SequentialLR: scheduler {k} drives another optimizer than "
                                 "the one given")
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        self.optimizer.lr = optimizer.initial_lr  # type: ignore[attr-defined]
        for s in self._schedulers:  # undo the step each scheduler took when it was made
            s.last_epoch -= 1
        self._schedulers[0]._initial_step()
        self.base_lrs = list(self._schedulers[0].base_lrs)
        self._step_count = 1
        self._last_lr = self._schedulers[0].get_last_lr()

    def step(self, epoch: int | None = None) -> None:
        self._step_count += 1
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler.step(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        state = {key: value for key, value in self.__dict__.items()
                 if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        saved = state.pop("_schedulers")
        self.__dict__.update(state)
        for s, s_state in zip(self._schedulers, saved):
            s.load_state_dict(s_state)
