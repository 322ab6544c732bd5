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

Fused updates
-------------
A step that loops over the parameters makes a few array calls *per parameter*; on a small
network those calls, not the arithmetic, are the cost. So by default (``fused=None``) an
optimizer whose parameters are NumPy or CuPy arrays *flattens* them: it copies the parameters
of each dtype and device into one contiguous buffer and makes every ``p.data`` a view into it
(the values do not change). Gradients and state (momentum, Adam's averages) get such buffers
too, and ``backward()`` writes each new ``p.grad`` into its view (see
:meth:`minigrad.Tensor.backward`). A step is then the same formula applied once to the whole
buffer (as PyTorch's ``foreach``/fused optimizers do), and takes exactly the same values as the
per-parameter loop, which is kept (``fused=False``) and used whenever the fast path does not
apply: a parameter without a gradient this step, arrays of other libraries (array-api-strict),
or a parameter whose array was replaced by one of another shape, dtype or device. What that
means for you:

* build the optimizer *before* keeping references to ``p.data`` (the arrays are replaced by
  views, with the same values). Assigning ``p.data = new_array`` later is fine: the next step
  copies it into the buffer;
* ``p.grad`` after ``backward()`` is a view that the next ``backward()`` after ``zero_grad()``
  overwrites: copy it (``p.grad.copy()``) to keep it.

What lives here: the base class, :class:`SGD` and :class:`Adam` (this module),
:class:`AdamW`, :class:`RMSprop` and :class:`Adagrad` (:mod:`.adaptive`) and the learning-rate
schedules (:mod:`.lr_scheduler`). It imports the engine's ``tensor`` and ``backend`` and never
``minigrad.export`` or ``minigrad.course``.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable
from typing import Any

from .. import backend
from ..backend import Array
from ..tensor import Tensor

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]

NewBuffer = Callable[[str], Array]  # name of a state -> a zero array for it

# minigrad.compile (compile.py) sets this while it watches a step run: it is called with each
# optimizer whose step() runs, so that a compiled step learns which optimizers it drives.
_step_observer: Callable[[Optimizer], None] | None = None


class Optimizer:
    """Base class: holds the parameters, their per-parameter ``state`` and the hyperparameters.

    Subclasses list their hyperparameters' names in ``hyperparameters``, check one value in
    ``_check`` and write the update of one array in ``_update``; the base class applies it to
    each parameter, or once to each flat buffer of parameters (fused).
    Hyperparameters are plain attributes (``opt.lr = 0.01`` changes the learning rate); each
    value is checked where it is set.
    """

    hyperparameters: tuple[str, ...] = ()
    lr: float  # every optimizer has a learning rate (set by the subclass; schedulers set it)
    # counts changes of the hyperparameters and the state (read by compile), but for lr, which
    # a replayed step reads again each time (a learning-rate schedule needs no new recording)
    _version = 0
    _trace: Any = None  # the recorder of minigrad.compile while it records a step, else None
    _updating = 0  # the parameter (the first of a flat group) that _update() is updating

    def __init__(self, params: Iterable[Tensor], fused: bool | None = None,
                 **hyper: Any) -> None:
        name = type(self).__name__
        self.params: list[Tensor] = list(params)
        if not self.params:
            raise ValueError(f"{name}: got an empty list of parameters (was "
                             "model.parameters() already used up by another optimizer?)")
        seen: set[int] = set()
        for i, p in enumerate(self.params):
            if not isinstance(p, Tensor):
                raise TypeError(f"{name}: parameter {i} is a "
                                f"{type(p).__name__}, expected a Tensor (a Parameter)")
            if not p.is_leaf:
                raise ValueError(f"{name}: parameter {i} was computed by an "
                                 "operation; an optimizer can only update leaf tensors")
            if id(p) in seen:
                raise ValueError(f"{name}: parameter {i} appears twice")
            seen.add(id(p))
        if fused not in (None, True, False):
            raise TypeError(f"{name}: fused must be None, True or False; got {fused!r}")
        for key, value in hyper.items():
            setattr(self, key, value)  # checked by __setattr__
        self.state: list[dict[str, Any]] = [{} for _ in self.params]
        self._groups: list[_FlatGroup] = []
        self._ungrouped: list[int] = list(range(len(self.params)))
        if fused is not False:
            self._flatten(required=fused is True)

    def __setattr__(self, key: str, value: Any) -> None:
        if key in self.hyperparameters:
            value = self._check(key, value)
            if key != "lr":
                object.__setattr__(self, "_version", self._version + 1)
        object.__setattr__(self, key, value)

    def _check(self, key: str, value: Any) -> Any:
        """Return ``value`` if it is a valid setting for hyperparameter ``key``; else raise."""
        return value

    def _update(self, p: Array, g: Array, state: dict[str, Any], new_buffer: NewBuffer,
                scratch: Array | None = None) -> None:
        """Update array ``p`` in place from gradient ``g`` and this ``p``'s ``state``.

        ``new_buffer(name)`` gives a zero array shaped like ``p`` for new state; ``scratch``,
        when given, is an array shaped like ``p`` that may hold a temporary result.
        """
        raise NotImplementedError(f"{type(self).__name__} has no _update()")

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the gradients (``backward()`` adds to them otherwise): None, or zeros in place."""
        for p in self.params:
            if set_to_none or p.grad is None:
                p.grad = None
            else:
                p.grad[...] = 0  # in place, as PyTorch's zero_(): the same array, now zeros

    def step(self) -> None:
        """Update every parameter that has a gradient.

        Every gradient's shape is checked first: if one is wrong, nothing is updated.
        """
        if _step_observer is not None:
            _step_observer(self)
        grads = self._gradients()
        if self._trace is not None:  # compile: replays must also change what is not an array
            updated = [i for i, g in enumerate(grads) if g is not None]
            self._trace.before_replay(lambda: self._replay_prologue(updated))
        rest = self._fused_step(grads) if self._groups else self._ungrouped
        for i in rest:
            g = grads[i]
            if g is not None:
                self._updating = i
                self._update(self.params[i].data, g, self.state[i], self._new_buffer_for(i))

    def __repr__(self) -> str:
        settings = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.hyperparameters)
        return f"{type(self).__name__}({settings})"

    # --- the two paths of a step ------------------------------------------------------------------

    def _gradients(self) -> list[Array | None]:
        """Each parameter's gradient (or None), every shape checked before anything changes."""
        grads = [p.grad for p in self.params]
        for i, (p, g) in enumerate(zip(self.params, grads)):
            if g is not None and g.shape != p.data.shape:
                raise ValueError(f"{type(self).__name__}.step: the gradient of parameter {i} "
                                 f"has shape {tuple(g.shape)} but the parameter has shape "
                                 f"{p.shape}; nothing was updated")
        return grads

    def _fused_step(self, grads: list[Array | None]) -> list[int]:
        """Update each flat group with one application of ``_update``; return the indices of
        the parameters left for the per-parameter loop."""
        rest = self._ungrouped
        for group in self._groups:
            ready = group.gather(self.params, grads)
            if ready is None:  # an array of another shape, dtype or device: no more fusing
                self._groups = [other for other in self._groups if other is not group]
                self._ungrouped = self._ungrouped + group.indices
            if not ready or not self._in_sync(group):
                rest = rest + group.indices  # some parameters skip this step: one at a time
                continue
            state = self.state[group.indices[0]]
            flat_state = {key: (group.buffers[key][0] if key in group.buffers else value)
                          for key, value in state.items()}
            self._updating = group.indices[0]
            self._update(group.data, group.grad, flat_state, group.new_buffer, group.scratch)
            if flat_state:  # each parameter's view of the state (new arrays; Adam's count)
                new = [key for key in group.buffers if key in flat_state and key not in state]
                for j, i in enumerate(group.indices):
                    s = self.state[i]
                    for key, value in flat_state.items():
                        if key not in group.buffers:
                            s[key] = value
                    for key in new:
                        s[key] = group.buffers[key][1][j]
        return rest

    def _in_sync(self, group: _FlatGroup) -> bool:
        """Whether every parameter of ``group`` has the same state, held in the group's views
        (the per-parameter loop, or ``load_state_dict``, may have made them differ)."""
        if group.synced:
            return True
        first = self.state[group.indices[0]]
        for j, i in enumerate(group.indices):
            s = self.state[i]
            if s.keys() != first.keys():
                return False
            for key, value in s.items():
                if key in group.buffers:
                    if value is not group.buffers[key][1][j]:
                        return False
                elif hasattr(value, "shape") or value != first[key]:
                    return False
        group.synced = True
        return True

    def _new_buffer_for(self, i: int) -> NewBuffer:
        """Zero arrays for parameter ``i``'s new state: its views into the flat buffers when it
        is in a flat group (which then needs checking before the next fused step)."""
        for group in self._groups:
            if i in group.positions:
                group.synced = False
                j = group.positions[i]
                return lambda key: group.new_buffer(key, j)
        p = self.params[i]
        return lambda key: p._xp.zeros_like(p.data)

    def _flatten(self, required: bool) -> None:
        """Put the parameters of each dtype and device into one flat buffer (see the module's
        docstring); parameters of other array libraries stay on the per-parameter path."""
        groups: dict[tuple[Any, ...], list[int]] = {}
        for i, p in enumerate(self.params):
            if _can_flatten(p.data):
                key = (type(p.data), str(p.data.dtype), backend.device_name(p.data))
                groups.setdefault(key, []).append(i)
            elif required:
                raise ValueError(f"{type(self).__name__}: fused=True needs NumPy or CuPy "
                                 f"arrays; parameter {i} is a {type(p.data).__module__}."
                                 f"{type(p.data).__name__} (use fused=None or False)")
        for indices in groups.values():
            self._groups.append(_FlatGroup(indices, [self.params[i] for i in indices]))
        grouped = {i for indices in groups.values() for i in indices}
        self._ungrouped = [i for i in range(len(self.params)) if i not in grouped]

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

        The optimizer must have been made with the same parameters, in the same order. Every
        value is checked before anything changes: on an error the optimizer is as it was.
        """
        saved_state, hyper = self._loaded_group(state_dict)
        # 1. check and convert everything; nothing of the optimizer changes here
        new_state = self._loaded_state(saved_state)
        # 2. write: arrays of flattened parameters go into their views of the flat buffers
        for i, entries in enumerate(new_state):
            new_buffer = self._new_buffer_for(i)
            for entry, value in entries.items():
                if hasattr(value, "shape"):
                    buffer = new_buffer(entry)
                    buffer[...] = value
                    entries[entry] = buffer
        for key, value in hyper.items():
            object.__setattr__(self, key, value)
        self.state = new_state
        object.__setattr__(self, "_version", self._version + 1)

    def _loaded_group(self, state_dict: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """For :meth:`load_state_dict`: the saved per-parameter state, not yet checked, and the
        hyperparameters, checked (one group, for as many parameters as this optimizer has)."""
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
        hyper = {}
        for key in self.hyperparameters:
            if key in group:
                value = group[key]
                hyper[key] = self._check(key, tuple(value) if isinstance(value, list) else value)
        return saved_state, hyper

    def _loaded_state(self, saved_state: Any) -> list[dict[str, Any]]:
        """For :meth:`load_state_dict`: each parameter's saved state, checked and converted (a
        step count to an int, a buffer copied to its parameter's device and dtype)."""
        name = type(self).__name__
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
                if entry == "step":  # a count, whatever it was saved as
                    value = int(value.item() if hasattr(value, "item") else value)
                elif hasattr(value, "shape"):
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
        return new_state

    # --- for minigrad.compile ---------------------------------------------------------------------

    def _map_arrays(self, fn: Callable[[Array], Array]) -> None:
        """Replace every array the optimizer holds by ``fn(array)``: the parameters' ``.data``,
        ``.grad`` and gradient buffers, the flat buffers and views, and the state.

        :mod:`minigrad.compile` calls it with a function that wraps each array in a recording
        view (the same memory) before it records a step, and with one that unwraps them after.
        ``fn`` must map one array to one result every time (a memo), so that the identities the
        fused path checks (``p.data is view``) still hold.
        """
        for group in self._groups:
            group.data, group.grad, group.scratch = (fn(group.data), fn(group.grad),
                                                     fn(group.scratch))
            group.data_views = [fn(v) for v in group.data_views]
            group.grad_views = [fn(v) for v in group.grad_views]
            group.buffers = {k: (fn(flat), [fn(v) for v in views])
                             for k, (flat, views) in group.buffers.items()}
        for p in self.params:
            p.data = fn(p.data)
            if p.grad is not None:
                p.grad = fn(p.grad)
            if p._grad_buffer is not None:
                p._grad_buffer = fn(p._grad_buffer)
        for state in self.state:
            for key, value in state.items():
                if hasattr(value, "shape"):
                    state[key] = fn(value)

    def _replay_prologue(self, updated: list[int]) -> None:
        """Do what a step of parameters ``updated`` changes outside the arrays; a replay of a
        compiled step runs it instead of ``step()``'s Python (nothing here; Adam counts)."""


class _FlatGroup:
    """Parameters of one dtype and device as views into one contiguous buffer.

    ``data`` is the flat buffer of the values, and each parameter's ``.data`` a view into it
    (``data_views``); ``grad`` the same for the gradients (each parameter's ``_grad_buffer``,
    where ``backward()`` writes its ``.grad``); ``buffers[name]`` the same for each kind of
    optimizer state, made when first needed; ``scratch`` room for one temporary result.
    """

    def __init__(self, indices: list[int], params: list[Tensor]) -> None:
        xp = params[0]._xp
        self.xp = xp
        self.indices = indices
        self.positions = {i: j for j, i in enumerate(indices)}
        self.shapes = [p.shape for p in params]
        self.data = xp.concat([xp.reshape(p.data, (-1,)) for p in params])
        self.grad = xp.zeros_like(self.data)
        self.scratch = xp.empty_like(self.data)
        self.data_views = self._views(self.data)
        self.grad_views = self._views(self.grad)
        self.buffers: dict[str, tuple[Array, list[Array]]] = {}
        self.synced = True  # all parameters' state is held in this group's views alike
        for p, data, grad in zip(params, self.data_views, self.grad_views):
            p.data = data  # the same values, now a view into the flat buffer
            p._grad_buffer = grad

    def _views(self, flat: Array) -> list[Array]:
        views, start = [], 0
        for shape in self.shapes:
            size = math.prod(shape)
            views.append(self.xp.reshape(flat[start:start + size], shape))
            start += size
        return views

    def new_buffer(self, key: str, j: int | None = None) -> Array:
        """A zeroed flat buffer for state ``key`` (made once), or parameter ``j``'s view of it."""
        if key not in self.buffers:
            flat = self.xp.zeros_like(self.data)
            self.buffers[key] = (flat, self._views(flat))
        flat, views = self.buffers[key]
        buffer = flat if j is None else views[j]
        buffer[...] = 0
        return buffer

    def gather(self, params: list[Tensor], grads: list[Array | None]) -> bool | None:
        """Make the flat buffers hold every parameter and gradient of the group.

        True when they do; False when a parameter has no gradient this step; None when a
        parameter's array was replaced by one of another shape, dtype or device (the flat
        layout no longer fits). An array replaced by one of the same kind (``p.data = ...``,
        ``load_state_dict``) is copied into the buffer, and the parameter gets its view back;
        a gradient set by hand is copied into the gradient buffer.
        """
        complete = True
        for i, data_view, grad_view in zip(self.indices, self.data_views, self.grad_views):
            p = params[i]
            if p.data is not data_view:
                data = p.data
                if (type(data) is not type(data_view) or data.shape != data_view.shape
                        or data.dtype != data_view.dtype
                        or backend.device_name(data) != backend.device_name(data_view)):
                    for k, view in zip(self.indices, self.grad_views):
                        if params[k]._grad_buffer is view:
                            params[k]._grad_buffer = None
                    return None
                data_view[...] = data
                p.data = data_view
                p._grad_buffer = grad_view
            g = grads[i]
            if g is None:
                complete = False
            elif g is not grad_view:  # set by hand, or accumulated elsewhere: bring it in
                grad_view[...] = g
        return complete


def _can_flatten(a: Array) -> bool:
    """NumPy and CuPy arrays: a slice of a flat buffer, reshaped, is a view that writes through."""
    return type(a).__module__.split(".")[0] in ("numpy", "cupy")


def _scaled(g: Array, c: float, out: Array | None) -> Array:
    """``c * g``, written into ``out`` when given (the same values, no new array)."""
    if out is None:
        return c * g
    return backend.namespace(g).multiply(g, c, out=out)


def _describe(x: Any) -> str:
    return f"keys {sorted(map(str, x))}" if isinstance(x, dict) else type(x).__name__


def _number(owner: str, key: str, value: Any, low: float = 0.0, high: float | None = None,
            high_open: bool = False) -> Any:
    """``value`` if it is a real number in [low, high] (or [low, high)); else a clear error."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{owner}: {key} must be a number; got {type(value).__name__} "
                        f"{value!r}")
    bound = "" if high is None else f" and {'<' if high_open else '<='} {high:g}"
    x = float(value)
    ok = x >= low and (high is None or (x < high if high_open else x <= high))
    if not ok or not math.isfinite(x):  # NaN fails every comparison
        raise ValueError(f"{owner}: {key} must be >= {low:g}{bound}, a finite number; got "
                         f"{value!r}")
    return value


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
        Learning rate (>= 0).
    momentum : float
        Factor of the running sum of gradients (0: none).
    dampening : float
        Shrinks each new gradient's share of the momentum.
    nesterov : bool
        Look ahead along the momentum (needs ``momentum > 0`` and ``dampening == 0``).
    weight_decay : float
        L2 penalty: adds ``weight_decay * p`` to each gradient.
    fused : bool or None
        Update all parameters at once through flat buffers (see the module's docstring).
        None (the default): where the parameters allow it; False: one parameter at a time;
        True: always, or an error.
    """

    hyperparameters = ("lr", "momentum", "dampening", "nesterov", "weight_decay")
    lr: float
    momentum: float
    dampening: float
    nesterov: bool
    weight_decay: float

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, nesterov: bool = False,
                 weight_decay: float = 0.0, *, fused: bool | None = None) -> None:
        for key, value in (("lr", lr), ("momentum", momentum), ("dampening", dampening),
                           ("weight_decay", weight_decay)):
            _number("SGD", key, value)  # before anything else, so the first bad one is named
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: nesterov=True needs momentum > 0 and dampening = 0; got "
                             f"momentum={momentum}, dampening={dampening}")
        super().__init__(params, fused=fused, lr=lr, momentum=momentum, dampening=dampening,
                         nesterov=nesterov, weight_decay=weight_decay)

    def _check(self, key: str, value: Any) -> Any:
        if key == "nesterov":
            return bool(value)
        return _number("SGD", key, value)

    def _update(self, p: Array, g: Array, state: dict[str, Any], new_buffer: NewBuffer,
                scratch: Array | None = None) -> None:
        lr, momentum, weight_decay = self.lr, self.momentum, self.weight_decay
        if self._trace is not None:  # compile records: a replay reads lr again (a schedule)
            (lr,) = self._trace.scalars(p.dtype, (lr,), lambda: (self.lr,))
        if weight_decay != 0:
            g = g + weight_decay * p
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:  # the first step: the buffer starts as the gradient itself
                buf = state["momentum_buffer"] = new_buffer("momentum_buffer")
                buf[...] = g
            else:
                buf *= momentum
                # (1 - 0) * g is g exactly: skip that product when there is no dampening
                buf += g if self.dampening == 0 else (1 - self.dampening) * g
            g = g + momentum * buf if self.nesterov else buf
        p -= _scaled(g, lr, scratch)


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
        Decay rates of the two averages, each in [0, 1).
    eps : float
        Keeps the denominator away from zero (>= 0).
    weight_decay : float
        L2 penalty added to the gradient.
    fused : bool or None
        Update all parameters at once through flat buffers (see :class:`SGD`).
    """

    hyperparameters = ("lr", "betas", "eps", "weight_decay")
    lr: float
    betas: tuple[float, float]
    eps: float
    weight_decay: float

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, *, fused: bool | None = None) -> None:
        for key, value in (("lr", lr), ("eps", eps), ("weight_decay", weight_decay),
                           ("betas", betas)):
            self._check(key, value)
        super().__init__(params, fused=fused, lr=lr, betas=tuple(betas), eps=eps,
                         weight_decay=weight_decay)

    def _check(self, key: str, value: Any) -> Any:
        if key != "betas":
            return _number("Adam", key, value)
        try:
            betas = tuple(value)
        except TypeError:
            betas = ()
        if len(betas) != 2:
            raise ValueError(f"Adam: betas must be two numbers in [0, 1); got {value!r}")
        for k, b in enumerate(betas):
            try:
                _number("Adam", f"betas[{k}]", b, high=1.0, high_open=True)
            except (TypeError, ValueError) as e:
                raise ValueError(f"Adam: betas must be two numbers in [0, 1); got {value!r} "
                                 f"({e})") from None
        return betas

    def _update(self, p: Array, g: Array, state: dict[str, Any], new_buffer: NewBuffer,
                scratch: Array | None = None) -> None:
        self._adam_update(p, g, state, new_buffer, self.weight_decay)

    def _adam_update(self, p: Array, g: Array, state: dict[str, Any], new_buffer: NewBuffer,
                     weight_decay: float) -> None:
        """Adam's update of ``p``, with ``weight_decay`` added to the gradient (AdamW passes 0
        and decays ``p`` itself)."""
        (beta1, beta2), eps = self.betas, self.eps
        xp = backend.namespace(p)
        if weight_decay != 0:
            g = g + weight_decay * p
        if not state:
            state["step"] = 0
            state["exp_avg"] = new_buffer("exp_avg")
            state["exp_avg_sq"] = new_buffer("exp_avg_sq")
        state["step"] += 1
        t, m, v = state["step"], state["exp_avg"], state["exp_avg_sq"]
        root_correction, step_size = self._corrections(t)
        if self._trace is not None:  # compile records: these two numbers change at every step,
            # so the replays get them as 0-d arrays (same dtype as p: the same rounding as a
            # Python float), refilled before each replay from the step count, which the
            # replay has advanced (_replay_prologue) by then
            i = self._updating

            def corrections() -> tuple[float, float]:
                return self._corrections(self.state[i]["step"])

            root_correction, step_size = self._trace.scalars(
                p.dtype, (root_correction, step_size), corrections)
        m *= beta1
        m += (1 - beta1) * g
        v *= beta2
        v += (1 - beta2) * (g * g)
        denom = xp.sqrt(v) / root_correction + eps
        p -= step_size * (m / denom)

    def _corrections(self, t: int) -> tuple[float, float]:
        """``sqrt(1 - beta2**t)`` and ``lr / (1 - beta1**t)``: the bias corrections of step t."""
        beta1, beta2 = self.betas
        return (1 - beta2 ** t) ** 0.5, self.lr / (1 - beta1 ** t)

    def _replay_prologue(self, updated: list[int]) -> None:
        for i in updated:  # the step counts that step() would have advanced
            self.state[i]["step"] += 1


from .adaptive import Adagrad, AdamW, RMSprop  # noqa: E402 - they build on the classes above
from . import lr_scheduler  # noqa: E402
