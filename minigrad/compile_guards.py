"""The state a compiled step can reach, and the check that it is still the state recorded.

A recorded step (:mod:`minigrad.compile`) refers to the very objects it saw while it was
recorded: the model's parameters and their arrays, the optimizers and their buffers. If the
user's program later swaps one of them (``model = make_model()``, ``opt = optim.Adam(...)``,
``model[0].weight = nn.Parameter(...)``, a layer replaced in a ``Sequential``,
``layer.requires_grad_(False)``, ``model.eval()``), a replay would go on training the old
objects, or with the old flags: right-looking numbers, wrong training. :class:`StateGuard`
notes what the step can reach when it is recorded and, before each replay, checks that every
piece of it is still the same object with the same flags.

What the step can reach
-----------------------
Starting from the step function itself: the objects in its closure cells, the globals its code
names (and, the same way, those of the functions it calls that are found there, of a bound
method's object, of a ``functools.partial``), and everything they own:

* a :class:`~minigrad.nn.Module`: each attribute that holds a module, a tensor or a container
  of them, its ``training`` flag, and how many attributes it has (a new one is a change);
* a list, tuple or dict that holds any of these: each item (which object, in which place,
  how many); a container of plain values (a log of losses) is not followed;
* a tensor that no operation made (a parameter, a data set held by the closure): its
  ``requires_grad`` flag and which array its ``.data`` is (a result kept for later, such as
  ``state["loss"] = loss``, is an output of the step and is not followed);
* an optimizer: which object it is (so its kind), its list of parameters, and its version,
  which counts changes of the hyperparameters that a replay does not read again (everything
  but ``lr``) and of its state (``load_state_dict``);
* any other object with attributes (a trainer object): each attribute, as for a module.

What it does not check
----------------------
Python values that are not objects of the list above: a number or a string captured by the
closure or kept in an attribute (``scale = 2.0`` used as a constant in the step) is part of the
recording as the value it had. Change such a value and call ``step.reset()``, or pass it as an
argument (arguments are part of the key). The learning rate of an optimizer is the exception:
it is read again at every replay, so a schedule needs no new recording.

The checks are identity comparisons done by C loops (``map(operator.is_, ...)``): a few
microseconds for a small network, about the cost of a single NumPy call.
"""
from __future__ import annotations

import functools
import operator
import types
from collections.abc import Callable
from typing import Any

from .tensor import Tensor

__all__ = ["StateGuard"]

_MAX_DEPTH = 12  # how deep the walk follows containers and attributes


def _is_state(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is, or holds, a module, an optimizer or a tensor (or a function,
    which may reach some): what the guard follows. A list of numbers (a log of losses) or a
    dict of strings is not state: it may change at every call."""
    from .nn import Module
    from .optim import Optimizer

    if isinstance(value, Tensor):  # a result kept for later (``state["loss"] = loss``) is an
        return value._op is None   # output of the step, not what a replay reads
    if isinstance(value, (Module, Optimizer, types.FunctionType, types.MethodType,
                          functools.partial)):
        return True
    if depth < 3 and isinstance(value, (list, tuple)):
        return any(_is_state(v, depth + 1) for v in value)
    if depth < 3 and isinstance(value, dict):
        return any(_is_state(v, depth + 1) for v in value.values())
    return False


class StateGuard:
    """What a step could reach when it was recorded; :meth:`changed` says what differs now.

    Parameters
    ----------
    step : callable
        The step function (a function, a bound method, a ``functools.partial`` or an object
        with ``__call__``).
    optimizers : list
        The optimizers the step drives (found by running it), checked even if the walk does
        not meet them.
    """

    def __init__(self, step: Callable[..., Any], optimizers: list[Any]) -> None:
        # four flat tables, each checked by one C loop: where a value sits and which it was
        self._maps: list[Any] = []        # dicts, lists and tuples ...
        self._keys: list[Any] = []        # ... the key or index in each ...
        self._values: list[Any] = []      # ... and the object found there
        self._where: list[str] = []       # its path, for the message
        self._cells: list[Any] = []       # closure cells, and what they held
        self._cell_values: list[Any] = []
        self._cell_where: list[str] = []
        self._sized: list[Any] = []       # containers whose length is checked
        self._sizes: list[int] = []
        self._sized_where: list[str] = []
        self._tensors: list[Tensor] = []  # requires_grad flags and .data arrays
        self._flags: list[bool] = []
        self._datas: list[Any] = []
        self._tensor_where: list[str] = []
        self._optimizers: list[Any] = []  # versions
        self._versions: list[int] = []
        self.results: list[tuple[str, Tensor]] = []  # computed tensors kept in the state
        self._seen: set[int] = set()
        self._walk_callable(step, getattr(step, "__name__", "step"), 0)
        for k, opt in enumerate(optimizers):
            self._walk(opt, f"optimizer {k}", 0)

    # --- noting what is there ----------------------------------------------------------------

    def _slot(self, container: Any, key: Any, value: Any, where: str) -> None:
        self._maps.append(container)
        self._keys.append(key)
        self._values.append(value)
        self._where.append(where)

    def _size(self, container: Any, where: str) -> None:
        self._sized.append(container)
        self._sizes.append(len(container))
        self._sized_where.append(where)

    def _walk_callable(self, fn: Any, where: str, depth: int) -> None:
        if id(fn) in self._seen and depth > 0:
            return
        self._seen.add(id(fn))
        if isinstance(fn, functools.partial):
            self._walk(fn.func, f"{where}.func", depth + 1)
            self._walk(fn.args, f"{where}.args", depth + 1)
            self._walk(fn.keywords, f"{where}.keywords", depth + 1)
            return
        if isinstance(fn, types.MethodType):
            self._walk(fn.__self__, f"{where}.__self__", depth + 1)
            fn = fn.__func__
        if not isinstance(fn, types.FunctionType):  # an object with __call__
            self._walk_attributes(fn, where, depth)
            return
        if fn.__closure__:
            for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                try:
                    value = cell.cell_contents
                except ValueError:  # a cell not filled yet
                    continue
                self.results += _results_in(value, f"{where}: {name}")
                if _is_state(value) or _has_attributes(value):
                    self._cells.append(cell)
                    self._cell_values.append(value)
                    self._cell_where.append(f"{where}: {name}")
                    self._walk(value, name, depth + 1)
        g = fn.__globals__
        for name in sorted(_global_names(fn.__code__)):
            value = g.get(name, _MISSING)
            self.results += _results_in(value, f"{where}: global {name}")
            if _is_state(value) or _has_attributes(value):
                self._slot(g, name, value, f"{where}: global {name}")
                self._walk(value, name, depth + 1)

    def _walk(self, value: Any, where: str, depth: int) -> None:
        from .nn import Module
        from .optim import Optimizer

        if depth > _MAX_DEPTH or id(value) in self._seen:
            return
        if isinstance(value, (types.FunctionType, types.MethodType, functools.partial)):
            self._walk_callable(value, where, depth + 1)
            return
        self._seen.add(id(value))
        if _has_attributes(value):  # a trainer object, a config: its attributes
            self._walk_attributes(value, where, depth)
        elif isinstance(value, Tensor):
            self._tensors.append(value)
            self._flags.append(value.requires_grad)
            self._datas.append(value.data)
            self._tensor_where.append(where)
        elif isinstance(value, Optimizer):
            self._optimizers.append(value)
            self._versions.append(value._version)
            self._walk(value.params, f"{where}.params", depth + 1)
        elif isinstance(value, Module):
            self._walk_attributes(value, where, depth)
        elif isinstance(value, (list, tuple)):
            if not _is_state(value):
                return
            self._size(value, where)
            for i, item in enumerate(value):
                if _is_state(item):
                    self._slot(value, i, item, f"{where}[{i}]")
                    self._walk(item, f"{where}[{i}]", depth + 1)
        elif isinstance(value, dict):
            if not _is_state(value):
                return
            self._size(value, where)
            for key, item in value.items():
                if _is_state(item):
                    self._slot(value, key, item, f"{where}[{key!r}]")
                    self._walk(item, f"{where}[{key!r}]", depth + 1)

    def _walk_attributes(self, obj: Any, where: str, depth: int) -> None:
        from .nn import Module

        attributes = getattr(obj, "__dict__", None)
        if not isinstance(attributes, dict) or isinstance(obj, (type, types.ModuleType)):
            return
        if isinstance(obj, Module) or _is_state(attributes):
            self._size(attributes, where)
        for name, item in attributes.items():
            self.results += _results_in(item, f"{where}.{name}")
            if _is_state(item) or (name == "training" and isinstance(obj, Module)):
                self._slot(attributes, name, item, f"{where}.{name}")
                if _is_state(item):
                    self._walk(item, f"{where}.{name}", depth + 1)

    # --- checking ------------------------------------------------------------------------------

    def changed(self) -> str | None:
        """None if everything the step reached is as recorded; else what changed, in words.

        The usual answer (nothing changed) is six loops that run in C, no Python per item;
        only a change is looked for item by item, to name it.
        """
        try:
            same = (list(map(len, self._sized)) == self._sizes
                    and all(map(operator.is_, map(operator.getitem, self._maps, self._keys),
                                self._values))
                    and all(map(operator.is_, map(_contents, self._cells), self._cell_values))
                    and list(map(_requires_grad, self._tensors)) == self._flags
                    and all(map(operator.is_, map(_data, self._tensors), self._datas))
                    and list(map(_version, self._optimizers)) == self._versions)
        except (KeyError, IndexError, TypeError, ValueError):  # a key gone, a cell emptied
            same = False
        return None if same else self._what_changed()

    def _what_changed(self) -> str | None:
        for c, n, where in zip(self._sized, self._sizes, self._sized_where):
            if len(c) != n:
                return f"{where} holds {len(c)} items, {n} when the step was recorded"
        slots = zip(map(_lookup, self._maps, self._keys), self._values, self._where)
        cells = zip(map(_lookup_cell, self._cells), self._cell_values, self._cell_where)
        for got, want, where in (*slots, *cells):
            if got is not want:
                return (f"{where} is another object ({_name(got)}) than when the step was "
                        f"recorded ({_name(want)})")
        for t, flag, where in zip(self._tensors, self._flags, self._tensor_where):
            if t.requires_grad != flag:
                return f"{where}.requires_grad is {t.requires_grad}, {flag} when recorded"
        for t, data, where in zip(self._tensors, self._datas, self._tensor_where):
            if t.data is not data:
                return f"{where}.data is another array than when the step was recorded"
        for opt, version in zip(self._optimizers, self._versions):
            if opt._version != version:
                return (f"a setting or the state of {type(opt).__name__} changed (only "
                        "lr is read again at each replay)")
        return None

    def only_arrays_changed(self) -> bool:
        """Whether the one change is a tensor's ``.data`` rebound to another array (the same
        objects otherwise): the same program can be recorded again without a new look for the
        optimizers."""
        return (list(map(len, self._sized)) == self._sizes
                and all(map(operator.is_, map(_lookup, self._maps, self._keys), self._values))
                and all(map(operator.is_, map(_lookup_cell, self._cells), self._cell_values))
                and list(map(_requires_grad, self._tensors)) == self._flags
                and list(map(_version, self._optimizers)) == self._versions)


_MISSING = object()


def _results_in(value: Any, where: str, depth: int = 0) -> list[tuple[str, Tensor]]:
    """The tensors made by an operation in ``value`` (a tensor, or lists, tuples and dicts of
    them, two levels deep), with where each sits: results kept for later, which a replay
    does not update."""
    if isinstance(value, Tensor):
        return [(where, value)] if value._op is not None else []
    if depth < 2 and isinstance(value, (list, tuple)):
        return [r for i, v in enumerate(value) for r in _results_in(v, f"{where}[{i}]", depth + 1)]
    if depth < 2 and isinstance(value, dict):
        return [r for k, v in value.items() for r in _results_in(v, f"{where}[{k!r}]", depth + 1)]
    return []


def _lookup(container: Any, key: Any) -> Any:
    try:
        return container[key]
    except (KeyError, IndexError, TypeError):
        return _MISSING


def _has_attributes(value: Any) -> bool:
    """An object of the user's own class with attributes that may hold state (not a module of
    minigrad's kinds, a function, a class, a Python module or a NumPy array)."""
    from .nn import Module
    from .optim import Optimizer

    return (hasattr(value, "__dict__") and not isinstance(
        value, (Module, Optimizer, Tensor, type, types.ModuleType, types.FunctionType,
                types.MethodType, functools.partial))
            and _is_state(vars(value)))


def _lookup_cell(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:
        return _MISSING


_contents = operator.attrgetter("cell_contents")
_requires_grad = operator.attrgetter("requires_grad")
_data = operator.attrgetter("data")
_version = operator.attrgetter("_version")


def _name(x: Any) -> str:
    return "nothing" if x is _MISSING else type(x).__name__


def _global_names(code: types.CodeType) -> set[str]:
    """The names a code object (and the functions and comprehensions inside it) looks up."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names
