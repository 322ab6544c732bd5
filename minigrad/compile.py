"""``minigrad.compile(step)``: record a training step's array calls once, then replay them.

This module is a fast path *next to* the engine, not part of it: the engine (``tensor.py``,
``functional.py``, ``nn``, ``optim``) runs unchanged while a step is recorded, and a recorded
step no longer runs it at all.

How it works
------------
An eager step (forward, ``backward()``, ``optimizer.step()``) makes about 50 NumPy calls that
each return a fresh array, and builds and walks a graph in Python around them. When a step has
the same structure and shapes at every call, all of that is the same every time except the
numbers. So :class:`CompiledStep`:

1. runs the first call eagerly, only noting which optimizers step (``optim._step_observer``);
2. on the next calls *records* the step: the batch is copied into input buffers that the
   compiled step owns, and the inputs, the parameters, their gradients and the optimizers'
   state are seen through :class:`_Traced`, a NumPy array subclass (the same memory) whose
   ``__array_ufunc__`` and ``__array_function__`` note every NumPy call made on them: the
   function, its arguments and the array it returned. The step itself runs normally, so these
   calls give the same results as eager ones;
3. compares two such recordings: if they are the same program (same calls, same shapes, same
   constants), it keeps the second as the *program*;
4. from then on a call copies the new batch into the input buffers and replays the program:
   each recorded call again, writing with ``out=`` into the array it returned when it was
   recorded. No tensors, no graph, no allocation (for most calls): the arrays that views and
   later calls refer to are the very same ones, refilled.

A replay computes with the same NumPy functions on the same inputs as the eager step, so its
results are **bit for bit** those of the eager step (tested over 100 steps).

When it applies, and what breaks it
-----------------------------------
A step is replayed only for arguments of the shapes and dtypes it was recorded with (the key);
a new key is recorded anew (a re-trace, e.g. for the shorter last batch of an epoch), and each
key keeps its own program. It falls back to the eager step, and says why (a
:class:`CompileWarning` and :attr:`CompiledStep.reasons`), when it cannot be sure a replay
computes what the step would:

* **Python control flow that depends on values** (``if loss.item() > 1``): every value read
  into Python (``.item()``, ``float()``, ``bool()``, printing) is recorded with its value and
  *checked* at each replay (a guard). A read whose value differs between the two recordings
  (a loss printed or returned as a number) means the step cannot be replayed: eager. A guard
  that fails later (cross-entropy's check of the targets' range, given a bad label) makes that
  call run eagerly (it then raises as usual), and the key stays eager.
* **data-dependent shapes** (boolean masks): a replay that meets another shape stops before it
  changes any state and runs the call eagerly.
* **random numbers** (dropout) and arrays computed outside NumPy's dispatch (``np.random``,
  plain NumPy on ``.numpy()``): they enter the recording as constants; if they differ between
  the two recordings, the step is not compiled. (If both recordings see the same batch, such
  a constant cannot be told from a true one: keep plain-NumPy work on ``.numpy()`` out of a
  compiled step.)
* **state kept between calls outside the optimizers** (running statistics a module stores by
  rebinding an attribute): recognised because the second recording reads an array the first
  one computed; not compiled.
* a step that takes keyword arguments, tensors that require grad, or arrays that are not
  NumPy's (CuPy, array-api-strict): eager.

State the step reaches (the objects named by its closure cells and the globals it uses, and
what they own: modules, their ``training`` flags, parameters, ``requires_grad``, optimizers and
their settings) is guarded (:mod:`minigrad.compile_guards`): a change records again, and
:attr:`CompiledStep.changes` says what changed. An optimizer's ``lr`` is read again at each
replay, so a schedule replays. What it cannot see: a Python number the step uses as a
constant (in its closure or an attribute); after changing one, call :meth:`CompiledStep.reset`.

What a replay returns is a new tensor holding a copy of what the step returned (the loss),
without a graph. After a replay, each parameter's ``.grad`` is the gradient of that step, in
the buffer it was recorded in (as with a fused optimizer: copy it to keep it). The engine's
NumPy namespace (``backend.namespace``) reports the arrays that ``zeros``, ``empty``, ``ones``,
``full`` and ``as_strided`` make to the recording thread's hook (``backend.creation_hook``),
so that they are seen too: NumPy itself is never patched, and other threads see nothing.
Every write is recorded with the array it writes, fills included, and the optimizing passes
(:mod:`minigrad.compile_passes`) move a write only where the recorded reads and writes allow.
"""
from __future__ import annotations

import functools
import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from . import backend, optim
from .backend import CreationHook
from .compile_guards import StateGuard
from .compile_passes import COMPARISONS as _COMPARISONS  # noqa: F401 - read by tests
from .compile_passes import Unrecoverable as _Unrecoverable
from .compile_passes import arrays as _arrays
from .compile_passes import check as _check
from .compile_passes import compute_into as _compute_into
from .compile_passes import optimize
from .compile_passes import owner as _owner
from .compile_passes import where_into as _where_into
from .tensor import Tensor, op

__all__ = ["compile", "CompiledStep", "CompileWarning"]


class CompileWarning(UserWarning):
    """A compiled step runs eagerly for some arguments; the message says why."""


_FOREIGN_WRITE = ("the step changes in place an array from outside the recording that "
                  "belongs to no optimizer it drives (a parameter updated by hand? state kept "
                  "in a module?): use an optimizer of minigrad.optim")

_ACTIVE: _Recorder | None = None  # the recording in progress (one at a time)


# ---------------------------------------------------------------------------------------------
# The recording array


def _plain(x: Any) -> Any:
    """``x`` with every recording array in it seen as a plain ndarray (the same memory)."""
    if isinstance(x, _Traced):
        return x.view(np.ndarray)
    if isinstance(x, tuple):
        return tuple(_plain(v) for v in x)
    if isinstance(x, list):
        return [_plain(v) for v in x]
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


def _unrecorded(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``func(*args, **kwargs)`` with the recording paused: a NumPy function written in Python
    (``np.pad``, ...) may make arrays with ``np.empty`` and fill them; those are its own
    business, and the recording notes the call as a whole."""
    global _ACTIVE
    rec, _ACTIVE = _ACTIVE, None
    try:
        return func(*args, **kwargs)
    finally:
        _ACTIVE = rec


class _Traced(np.ndarray):
    """A NumPy array that tells the recording in progress about every call made on it.

    Each call is computed on plain views of its arguments (so exactly as NumPy computes it) and
    handed to :class:`_Recorder`, which notes it and returns the result, itself seen through a
    ``_Traced`` view. With no recording in progress it behaves as a plain array.
    """

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        result = getattr(ufunc, method)(*_plain(inputs), **_plain(kwargs))
        if _ACTIVE is None:
            return result
        return _ACTIVE.ufunc(ufunc, method, inputs, kwargs, result)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        result = _unrecorded(func, *_plain(args), **_plain(kwargs))
        if _ACTIVE is None:
            return result
        return _ACTIVE.function(func, args, kwargs, result)

    # Methods that compute without going through a ufunc or an array function.
    def __getitem__(self, index: Any) -> Any:
        result = self.view(np.ndarray)[_plain(index)]
        if _ACTIVE is None:
            return result
        return _ACTIVE.function(operator.getitem, (self, index), {}, result)

    def __setitem__(self, index: Any, value: Any) -> None:
        self.view(np.ndarray)[_plain(index)] = _plain(value)
        if _ACTIVE is not None:
            _ACTIVE.write(operator.setitem, (self, index, value), written=self)

    def astype(self, dtype: Any, *args: Any, **kwargs: Any) -> Any:
        result = self.view(np.ndarray).astype(dtype, *args, **kwargs)
        if _ACTIVE is None:
            return result
        return _ACTIVE.function(np.astype, (self, dtype), {}, result)

    def copy(self, order: Any = "C") -> Any:
        result = self.view(np.ndarray).copy(order)
        if _ACTIVE is None:
            return result
        return _ACTIVE.function(np.copy, (self,), {}, result)

    def reshape(self, *shape: Any, **kwargs: Any) -> Any:
        return np.reshape(self, shape[0] if len(shape) == 1 else shape, **kwargs)

    def fill(self, value: Any) -> None:
        self[...] = value

    def _read(self, convert: Callable[[Any], Any]) -> Any:
        value = convert(self.view(np.ndarray))
        if _ACTIVE is not None:
            _ACTIVE.guard(convert, self, value)
        return value

    def item(self, *args: Any) -> Any:
        return self._read(lambda a: a.item(*args))

    def tolist(self) -> Any:
        return self._read(np.ndarray.tolist)

    def __float__(self) -> float:
        return self._read(float)  # type: ignore[no-any-return]

    def __int__(self) -> int:
        return self._read(int)  # type: ignore[no-any-return]

    def __index__(self) -> int:
        return self._read(operator.index)  # type: ignore[no-any-return]

    def __bool__(self) -> bool:
        return self._read(bool)  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return self._read(repr)  # type: ignore[no-any-return]

    def __str__(self) -> str:
        return self._read(str)  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------
# The recording


_CREATORS = {np.zeros_like: 0, np.ones_like: 1, np.empty_like: None, np.full_like: "full"}
# functions whose result can be written into a given array with out= when replayed
_OUT_FUNCTIONS = {np.sum, np.max, np.min, np.amax, np.amin, np.mean, np.prod, np.matmul,
                  np.dot, np.clip, np.cumsum, np.concatenate, np.argmax, np.argmin, np.take}


class _Recorder(CreationHook):
    """The calls of one recorded step, and the arrays they read and write.

    Every array a call reads or writes belongs to an *owner* (the array that owns its memory),
    numbered in the order seen. Owners are of four kinds: ``input`` (a buffer the batch is
    copied into), ``external`` (an array of an optimizer or a parameter, made before the step),
    ``internal`` (made by a recorded call) and ``constant`` (a plain array made outside the
    recording, e.g. ``np.arange``; compared by value between two recordings). ``ops`` are the
    replayable calls ``(function, args, kwargs)``; ``signature`` describes them for comparing
    two recordings; ``problems`` says why the step cannot be replayed, if it cannot.
    """

    def __init__(self) -> None:
        self.owners: list[Any] = []          # owner arrays, kept alive (their ids are keys)
        self.kinds: list[str] = []
        self.index: dict[int, int] = {}      # id(owner) -> its number
        self.ops: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = []
        self.signature: list[Any] = []
        self.writes: list[set[int]] = []     # per op: the owners it writes
        self.creator: dict[int, int] = {}    # internal owner -> the op that made it
        self.guards: list[int] = []          # ops that check a value read into Python
        self.fills: set[int] = set()         # ops that refill a new array with its constants
        self.unfilled: set[int] = set()      # empty arrays no recorded call has written yet
        self.prologues: list[Callable[[], None]] = []
        self.prologue_at: int | None = None  # ops before this one run before the prologues
        self.problems: list[str] = []
        self.wrapped: dict[int, _Traced] = {}  # id(plain external array) -> its recording view
        self.unwrapped: dict[int, Any] = {}    # id(recording view) -> the plain array

    # --- owners -----------------------------------------------------------------------------------

    def _register(self, owner: Any, kind: str) -> int:
        number = self.index.get(id(owner))
        if number is None:
            number = self.index[id(owner)] = len(self.owners)
            self.owners.append(owner)
            self.kinds.append(kind)
        return number

    def wrap(self, a: Any, kind: str = "external") -> Any:
        """The recording view of array ``a`` (the same one for the same ``a``)."""
        if not isinstance(a, np.ndarray) or type(a) is not np.ndarray:
            return a
        view = self.wrapped.get(id(a))
        if view is None:
            self._register(_owner(a), kind)
            view = self.wrapped[id(a)] = a.view(_Traced)
            self.unwrapped[id(view)] = a
        return view

    def unwrap(self, a: Any) -> Any:
        """The plain array behind a recording view (the original for wrapped ones)."""
        if isinstance(a, _Traced):
            return self.unwrapped.get(id(a), a.view(np.ndarray))
        return a

    def _result(self, result: Any) -> Any:
        """A new array made by a recorded call: an internal owner, seen through a view."""
        self.unfilled.discard(self._register(_owner(result), "internal"))
        return result.view(_Traced)

    def _refill(self, result: Any, described: Any) -> None:
        """Note that a new array starts with the values it has now (``zeros``, ``ones``,
        ...): each replay refills it, and this refill *writes* it, so that no pass moves a
        later write of the array before it."""
        number = self.index[id(_owner(result))]
        self.fills.add(len(self.ops))
        self._add(np.copyto, (result, _fill_value(result)), {}, described, {number})
        self.creator[number] = len(self.ops) - 1

    # --- what the engine's array makers report (backend.CreationHook) ---------------------------

    def created(self, array: Any, fill: Any) -> Any:
        """A new array from ``np.zeros`` / ``ones`` / ``full`` (refilled at each replay) or
        ``empty`` (its values come from whoever fills it)."""
        if not isinstance(array, np.ndarray) or type(array) is not np.ndarray:
            return array
        wrapped = self._result(array)
        if fill is None:
            self.unfilled.add(self.index[id(array)])
        else:
            self._refill(array, ("create", fill, array.shape, array.dtype.str,
                                 array.tobytes()))
        return wrapped

    def seen(self, x: Any) -> Any:
        """An array from outside the step, read by a call NumPy dispatches on it alone: a
        constant (compared by value between two recordings, read by reference in a replay)."""
        return self.wrap(x, "constant")

    def viewed(self, view: Any, base: Any) -> Any:
        """A strided view (``as_strided``) of an array the recording sees."""
        if not isinstance(base, _Traced):
            return view
        return self._view(view)

    # --- describing arguments -----------------------------------------------------------------

    def _describe(self, x: Any) -> Any:
        """A description of argument ``x`` that two recordings of one program share."""
        if isinstance(x, np.ndarray):
            owner = _owner(x)
            number = self.index.get(id(owner))
            if number is None:
                if isinstance(x, _Traced):
                    self.problems.append(
                        "the step uses an array that no recorded call made (computed by a "
                        "NumPy function that is not dispatched to array subclasses, or by an "
                        "earlier call of the step: state kept between calls outside the "
                        "optimizers)")
                number = self._register(owner, "constant")
            if number in self.unfilled:  # np.empty filled by code the recording cannot see
                self.problems.append("the step reads an array that was filled outside the "
                                     "recorded calls (random numbers? NumPy code in C)")
            offset = (x.__array_interface__["data"][0]
                      - owner.__array_interface__["data"][0])
            if self.kinds[number] == "constant":
                return ("const", number, x.shape, x.strides, x.dtype.str, offset,
                        x.tobytes())
            return ("array", number, x.shape, x.strides, x.dtype.str, offset)
        if isinstance(x, (tuple, list)):
            return (type(x).__name__, *[self._describe(v) for v in x])
        if isinstance(x, dict):
            return ("dict", *[(k, self._describe(v)) for k, v in sorted(x.items())])
        if isinstance(x, slice):
            return ("slice", x.start, x.stop, x.step)
        if x is None or x is Ellipsis or isinstance(x, (bool, int, float, complex, str,
                                                         np.generic, np.dtype, type)):
            return (type(x).__name__, repr(x))
        if callable(x):
            return ("callable", getattr(x, "__name__", repr(x)))
        self.problems.append(f"a call got an argument of type {type(x).__name__}, which a "
                             "recording cannot compare")
        return ("?", id(x))

    def _writing(self, arrays: list[Any]) -> set[int]:
        """The owners of ``arrays``, which a call is about to write (call before describing)."""
        written = set()
        for w in arrays:
            owner = _owner(w)
            number = self.index.get(id(owner))
            if number is None:  # an array from outside the recording, and not an optimizer's
                self.problems.append(_FOREIGN_WRITE)
                number = self._register(owner, "external")
            elif self.kinds[number] == "constant":
                self.problems.append(_FOREIGN_WRITE)
            self.unfilled.discard(number)
            written.add(number)
        return written

    def _add(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
             described: Any, written: set[int] | None = None) -> None:
        """Note one replayable call ``fn(*args, **kwargs)`` that writes the owners ``written``."""
        self.ops.append((fn, _plain(args), _plain(kwargs)))
        self.signature.append(described)
        self.writes.append(written or set())

    # --- what the recording array reports -------------------------------------------------------

    def ufunc(self, ufunc: Any, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any],
              result: Any) -> Any:
        fn = ufunc if method == "__call__" else getattr(ufunc, method)
        out = kwargs.get("out")
        if method == "at":  # in place into inputs[0]
            written = self._writing([inputs[0]])
        elif out is not None:  # written into arrays the caller gave
            out = out if isinstance(out, tuple) else (out,)
            written = self._writing(list(out))
        described = ("ufunc", ufunc.__name__, method, self._describe(inputs),
                     self._describe(kwargs))
        if method == "at":
            self._add(fn, inputs, kwargs, described, written)
            return result
        if out is not None:
            self._add(fn, inputs, kwargs, described, written)
            return out[0] if len(out) == 1 else out
        results = result if isinstance(result, tuple) else (result,)
        results = tuple(r if isinstance(r, np.ndarray) else np.asarray(r) for r in results)
        wrapped = tuple(self._result(r) for r in results)
        self._add(fn, inputs, dict(kwargs, out=results), described + ("new",))
        for r in results:
            self.creator[self.index[id(_owner(r))]] = len(self.ops) - 1
        return wrapped if isinstance(result, tuple) else wrapped[0]

    def function(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                 result: Any) -> Any:
        name = getattr(func, "__name__", repr(func))
        if result is None:  # a function that writes into its arguments (np.copyto, ...)
            written = self._writing([a for a in args if isinstance(a, np.ndarray)][:1])
            self._add(func, args, kwargs, ("call", name, self._describe((args, kwargs))),
                      written)
            return None
        if isinstance(result, (tuple, list)) and not _arrays(result):  # np.shape: a value
            self.guard(lambda *a: func(*a, **_plain(kwargs)), args, result, name)
            return result
        if isinstance(result, (tuple, list)):
            if all(isinstance(r, np.ndarray) and self._is_view(r, args) for r in result):
                return type(result)(self._view(r) for r in result)
            self.problems.append(f"{name} returned several new arrays (not recorded)")
            return result
        if not isinstance(result, (np.ndarray, np.generic)):  # a Python value: read, guarded
            self.guard(lambda *a: func(*a, **_plain(kwargs)), args, result, name)
            return result
        if isinstance(result, np.ndarray) and self._is_view(result, args):
            self._describe(args)  # checks where the viewed array came from
            return self._view(result)
        # a new array: replay writes it into the same array again
        result = np.asarray(result)
        described = ("call", name, self._describe((args, kwargs)))
        plain_args, plain_kwargs = _plain(args), _plain(kwargs)
        fill = _CREATORS.get(func, "other")
        if fill != "other":
            wrapped = self._result(result)
            if fill is None:  # empty_like: its values come from whoever fills it
                self.unfilled.add(self.index[id(_owner(result))])
                return wrapped
            self._refill(result, described)  # zeros_like, ones_like, full_like
            return wrapped
        else:
            wrapped = self._result(result)
            if func in _OUT_FUNCTIONS and "out" not in kwargs:
                self._add(func, args, dict(kwargs, out=result), described)
            elif func is np.reshape and len(plain_args) >= 1:
                src = plain_args[0]
                self._add(np.copyto, (result.reshape(np.shape(src)), src), {}, described)
            elif func is np.astype or func is np.copy:
                self._add(np.copyto, (result, plain_args[0]), {"casting": "unsafe"},
                          described)
            elif func is np.where and len(plain_args) == 3 and not plain_kwargs:
                self._add(_where_into, (result, *plain_args), {}, described)
            else:
                if _data_dependent_shape(func, args):  # checked like a value read
                    self.guards.append(len(self.ops))
                self._add(_compute_into, (result, func, plain_args, plain_kwargs), {},
                          described)
        self.creator[self.index[id(_owner(result))]] = len(self.ops) - 1
        return wrapped

    def _is_view(self, result: Any, args: Any) -> bool:
        """Whether ``result`` shares the memory of an array among ``args``."""
        owner = _owner(result)
        if owner is result:
            return False
        stack = [args]
        while stack:
            x = stack.pop()
            if isinstance(x, np.ndarray):
                if _owner(x) is owner:
                    return True
            elif isinstance(x, (tuple, list)):
                stack.extend(x)
            elif isinstance(x, dict):
                stack.extend(x.values())
        return False

    def _view(self, result: Any) -> Any:
        if id(_owner(result)) not in self.index:
            self.problems.append("a view of an array that no recorded call made")
        return result.view(_Traced)

    def write(self, fn: Callable[..., Any], args: tuple[Any, ...], written: Any) -> None:
        numbers = self._writing([written])
        self._add(fn, args, {}, ("write", getattr(fn, "__name__", "?"), self._describe(args)),
                  numbers)

    def guard(self, convert: Callable[..., Any], args: Any, value: Any, name: str = "") -> None:
        """Note a value read into Python: each replay reads it again and checks it is equal."""
        args = args if isinstance(args, tuple) else (args,)
        plain = _plain(args)
        self.ops.append((_check, (convert, plain, value, name or "a value read into Python"),
                         {}))
        self.signature.append(("guard", self._describe(args), repr(value)))
        self.writes.append(set())
        self.guards.append(len(self.ops) - 1)

    # --- used by optimizers and the compiled step -----------------------------------------------

    def scalars(self, dtype: Any, values: tuple[float, ...],
                refill: Callable[[], tuple[float, ...]]) -> tuple[Any, ...]:
        """0-d arrays of ``dtype`` holding ``values``, refilled by ``refill()`` before each
        replay: numbers an optimizer computes in Python and that change every step."""
        arrays = [np.asarray(v, dtype=dtype) for v in values]

        def prologue() -> None:
            for array, value in zip(arrays, refill()):
                array[...] = value

        self.before_replay(prologue)
        return tuple(self.wrap(a, "external") for a in arrays)

    def before_replay(self, fn: Callable[[], None]) -> None:
        """Run ``fn()`` at each replay, where this point of the step is reached."""
        if self.prologue_at is None:
            self.prologue_at = len(self.ops)
        self.prologues.append(fn)
        self.signature.append(("prologue", getattr(fn, "__qualname__", "")))


def _data_dependent_shape(func: Any, args: tuple[Any, ...]) -> bool:
    """Whether the shape of ``func(*args)`` may depend on the values (a boolean mask, ...)."""
    if func is operator.getitem:
        index = args[1] if isinstance(args[1], tuple) else (args[1],)
        return any(isinstance(i, np.ndarray) and i.dtype == bool for i in index)
    return func in (np.nonzero, np.flatnonzero, np.argwhere, np.unique, np.extract,
                    np.compress)


# ---------------------------------------------------------------------------------------------
# Refilling new arrays


def _fill_value(a: Any) -> Any:
    """What refills ``a`` (a new array of zeros, ones, ...): its one value as a 0-d array of
    its dtype when all are equal (a fill, cheaper than a copy), else a copy of it."""
    flat = a.reshape(-1)
    if flat.size and bool((flat == flat[0]).all()):
        return np.array(flat[0], dtype=a.dtype)
    return a.copy()


# ---------------------------------------------------------------------------------------------
# The program: a recording that can be replayed


class _Program:
    """A recorded step made ready to replay: inputs, calls, outputs, gradients to set."""

    def __init__(self, rec: _Recorder, inputs: list[Any], outputs: Any,
                 grads: list[tuple[Tensor, Any]], guard: StateGuard) -> None:
        self.inputs = inputs
        self.outputs = outputs
        self.grads = grads
        self.prologues = rec.prologues
        self.guard = guard
        keep = optimize(rec, outputs, keep=tuple(g for _, g in grads if g is not None))
        split = rec.prologue_at if rec.prologue_at is not None else len(rec.ops)
        self.head = [_fast(call) for k, call in keep if k < split]
        self.tail = [_fast(call) for k, call in keep if k >= split]
        self.n_calls = len(keep)
        self.run_head, self.head_source = _straight_line(self.head)
        self.run_tail, self.tail_source = _straight_line(self.tail)

    def replay(self, args: tuple[Any, ...]) -> Any:
        for buffer, arg in zip(self.inputs, args):
            if buffer is not None:
                np.copyto(buffer, arg.data if isinstance(arg, Tensor) else arg)
        self.run_head()  # may raise _Unrecoverable: no state changed yet
        for prologue in self.prologues:
            prologue()
        try:
            self.run_tail()
        except _Unrecoverable as e:  # only checks of data-dependent shapes can get here
            raise RuntimeError(f"minigrad.compile: a replay stopped after it changed the "
                               f"parameters: {e}") from None
        for p, grad in self.grads:
            p.grad = grad
        return _rebuild(self.outputs)


def _straight_line(calls: list[tuple[Any, tuple[Any, ...], dict[str, Any]]]
                   ) -> tuple[Callable[[], None], str]:
    """One Python function that makes ``calls`` one after the other, and its source.

    ``for fn, args, kwargs in calls: fn(*args, **kwargs)`` would do the same; written out as
    straight-line code (``f3(a3_0, a3_1, out=k3_out)``, the functions and arrays bound by
    name) it skips the loop's unpacking and the building of each argument list: about a
    fifth of a replay's Python time on a small network. ``print(source)`` shows the program.
    """
    names: dict[str, Any] = {}
    lines = ["def run():"]
    for i, (fn, args, kwargs) in enumerate(calls):
        names[f"f{i}"] = fn
        parts = []
        for j, a in enumerate(args):
            names[f"a{i}_{j}"] = a
            parts.append(f"a{i}_{j}")
        for key, value in kwargs.items():
            names[f"k{i}_{key}"] = value
            parts.append(f"{key}=k{i}_{key}")
        lines.append(f"    f{i}({', '.join(parts)})  # {getattr(fn, '__name__', '?')}")
    lines.append("    return None")
    source = "\n".join(lines)
    exec(source, names)  # noqa: S102 - our own text: names bound above, no input from outside
    return names["run"], source


def _fast(call: tuple[Any, tuple[Any, ...], dict[str, Any]]) -> tuple[Any, tuple[Any, ...],
                                                                       dict[str, Any]]:
    """The same call, cheaper to make: a ufunc's only output given as a positional argument
    (``np.add(a, b, out)``), which skips the keyword parsing."""
    fn, args, kwargs = call
    if fn in _REDUCTIONS and len(args) == 1:  # np.sum's default axis is None, reduce's 0
        fn, kwargs = _REDUCTIONS[fn], {"axis": None, **kwargs}
    out = kwargs.get("out")
    if (isinstance(fn, np.ufunc) and len(kwargs) == 1 and isinstance(out, tuple)
            and len(out) == 1 and len(args) == fn.nin and fn not in (np.maximum, np.minimum)):
        return fn, (*args, out[0]), {}
    return fn, args, kwargs


# np.sum(a, ...) on an ndarray is a.sum(...), which is np.add.reduce(a, ...): the same
# computation without NumPy's Python wrappers (about a microsecond each at batch 32)
_REDUCTIONS: dict[Any, Any] = {np.sum: np.add.reduce, np.max: np.maximum.reduce,
                               np.amax: np.maximum.reduce, np.min: np.minimum.reduce,
                               np.amin: np.minimum.reduce, np.prod: np.multiply.reduce}


def _no_vjp(g: Any) -> tuple[()]:
    return ()


def _rebuild(outputs: Any) -> Any:
    """The step's return value again: new tensors holding copies of the recorded outputs."""
    if isinstance(outputs, tuple) and outputs and outputs[0] == "tensor":
        return op(outputs[1].copy(), (), _no_vjp, name="compiled step")  # no parents: a leaf
    if isinstance(outputs, list):
        return tuple(_rebuild(o) for o in outputs)
    return None


# ---------------------------------------------------------------------------------------------
# The compiled step


class _Entry:
    """What is known of one key (shapes and dtypes of the arguments)."""

    def __init__(self) -> None:
        self.signature: list[Any] | None = None  # of the previous recording
        self.program: _Program | None = None
        self.reason: str | None = None           # why this key runs eagerly
        self.changes = 0                         # state changes met since the last replay


class CompiledStep:
    """A training step that is recorded once and then replayed (see :func:`compile`).

    Attributes
    ----------
    reasons : dict
        For each key (the arguments' shapes and dtypes) that runs eagerly, why.
    calls : dict
        How many calls ran ``"eager"``, were ``"recorded"`` or ``"replayed"``.
    changes : list of str
        Each change of the state the step reaches (:mod:`minigrad.compile_guards`) that made
        it record again, in words, oldest first.
    """

    #: a key whose state changes this many times in a row, with no replay between, runs
    #: eagerly (the step, or the loop around it, changes that state at every call)
    max_changes = 3

    def __init__(self, step: Callable[..., Any]) -> None:
        self.step = step
        functools.update_wrapper(self, step)
        self.optimizers: list[Any] | None = None
        self.entries: dict[Any, _Entry] = {}
        self.reasons: dict[Any, str] = {}
        self.calls = {"eager": 0, "recorded": 0, "replayed": 0}
        self.changes: list[str] = []

    def reset(self) -> None:
        """Forget every recording: the next call runs eagerly, the two after it record.

        Call it after changing what a replay cannot see (a Python number the step's closure
        uses as a constant); a change of the objects the step reaches (the model, its layers,
        parameters, ``requires_grad``, ``train()``/``eval()``, the optimizers) is seen anyway.
        """
        self.optimizers = None
        self.entries.clear()
        self.reasons.clear()

    def __repr__(self) -> str:
        return (f"CompiledStep({getattr(self.step, '__name__', 'step')}: "
                f"{len(self.entries)} keys, calls {self.calls})")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        key = None if kwargs else _key(args)
        if key is None:
            return self._eager(args, kwargs, None,
                               "keyword arguments, a tensor that requires grad, or "
                               "arguments that are not NumPy arrays, tensors or Python numbers")
        entry = self.entries.get(key)
        if entry is not None and entry.program is not None:
            change = entry.program.guard.changed()
            if change is None:
                try:
                    result = entry.program.replay(args)
                except _Unrecoverable as e:
                    entry.program = None
                    return self._eager(args, kwargs, key, f"a replay stopped: {e}")
                self.calls["replayed"] += 1
                entry.changes = 0
                return result
            self._state_changed(entry, change, entry.program.guard)
            if entry.changes >= self.max_changes:
                return self._eager(args, kwargs, key, "the state the step reaches changes at "
                                   f"every call ({change}); compile cannot keep up with it")
        if self.optimizers is None:  # the first call: eager, noting the optimizers
            return self._discover(args)
        if entry is None:
            entry = self.entries[key] = _Entry()
        if entry.reason is not None:
            self.calls["eager"] += 1
            return self.step(*args)
        return self._record(args, key, entry)

    def _state_changed(self, entry: _Entry, change: str, guard: StateGuard) -> None:
        """The state the step reaches changed (before a replay, or during a recording): drop
        the programs, record again."""
        arrays_only = guard.only_arrays_changed()
        self.changes.append(change)
        entry.changes += 1
        for other in self.entries.values():
            other.program = None
            if not arrays_only:  # other objects: look for the optimizers again, then record
                other.signature = None
        if not arrays_only:
            self.optimizers = None

    # --- the three ways a call runs ---------------------------------------------------------------

    def _eager(self, args: tuple[Any, ...], kwargs: dict[str, Any], key: Any,
               reason: str) -> Any:
        self._give_up(key, reason)
        self.calls["eager"] += 1
        return self.step(*args, **kwargs)

    def _give_up(self, key: Any, reason: str) -> None:
        if key is not None:
            entry = self.entries.setdefault(key, _Entry())
            entry.reason, entry.program = reason, None
        if self.reasons.get(key) != reason:
            self.reasons[key] = reason
            warnings.warn(f"minigrad.compile: {getattr(self.step, '__name__', 'step')} runs "
                          f"eagerly for arguments {key}: {reason}", CompileWarning, stacklevel=3)

    def _discover(self, args: tuple[Any, ...]) -> Any:
        seen: list[Any] = []

        def observe(opt: Any) -> None:
            if all(opt is not o for o in seen):
                seen.append(opt)

        previous, optim._step_observer = optim._step_observer, observe
        try:
            result = self.step(*args)
        finally:
            optim._step_observer = previous
        self.optimizers = seen
        self.calls["eager"] += 1
        return result

    def _record(self, args: tuple[Any, ...], key: Any, entry: _Entry) -> Any:
        """Run the step once through recording views; keep its program when two recordings
        agree (or give up, or note a state change, saying why); return its result."""
        if _ACTIVE is not None:
            raise RuntimeError("minigrad.compile: a compiled step called inside another one "
                               "while it records")
        optimizers = self.optimizers or []
        guard = StateGuard(self.step, optimizers)  # before the arrays are seen through views
        lrs = [getattr(opt, "lr", None) for opt in optimizers]
        rec = _Recorder()
        inputs, new_args = _traced_args(rec, args)
        result, strangers = self._run_traced(rec, optimizers, new_args)
        self.calls["recorded"] += 1
        outputs, leaves = _outputs(result, rec)
        grads = _untraced(rec, [p for opt in optimizers for p in opt.params] + leaves)
        problems = list(rec.problems)
        if [getattr(opt, "lr", None) for opt in optimizers] != lrs:
            problems.append("the step changes an optimizer's lr itself (a scheduler stepped "
                            "inside the step?): a replay runs no Python, so it would not; "
                            "call scheduler.step() outside the compiled step")
        change = guard.changed()
        if change is not None and not problems:  # e.g. p.data = array, synced by this step
            self._state_changed(entry, change, guard)
            if entry.changes < self.max_changes:
                return _plain_result(result, rec)
            problems.append(f"the step itself changes the state it reaches: {change}")
        problems += _replay_problems(rec, result, outputs, strangers)
        problems += _kept_results(self.step, optimizers, result)
        if problems:
            self._give_up(key, problems[0])
            return _plain_result(result, rec)
        first_write = _first_write(rec)
        if rec.prologue_at is None or (first_write is not None and rec.prologue_at > first_write):
            rec.prologue_at = first_write
        if entry.signature is not None and entry.signature == rec.signature:
            entry.program = _Program(rec, inputs, outputs, grads, guard)
        elif entry.signature is not None:
            self._give_up(key, _difference(entry.signature, rec.signature))
        else:
            entry.signature = rec.signature
        return _plain_result(result, rec)

    def _run_traced(self, rec: _Recorder, optimizers: list[Any],
                    new_args: list[Any]) -> tuple[Any, list[Any]]:
        """Call the step on ``new_args`` with ``rec`` recording (the optimizers' arrays seen
        through its views, NumPy's array makers reporting to it); return its result and the
        optimizers that stepped without being among ``optimizers``."""
        global _ACTIVE
        strangers: list[Any] = []

        def observe(opt: Any) -> None:
            if all(opt is not o for o in optimizers):
                strangers.append(opt)

        for opt in optimizers:
            opt._map_arrays(rec.wrap)
            opt._trace = rec
        previous, optim._step_observer = optim._step_observer, observe
        _ACTIVE = rec
        hook = backend.creation_hook(rec)
        try:
            result = self.step(*new_args)
        finally:
            backend.creation_hook(hook)
            _ACTIVE = None
            optim._step_observer = previous
            for opt in optimizers:
                opt._trace = None
                opt._map_arrays(rec.unwrap)
        return result, strangers


def _traced_args(rec: _Recorder, args: tuple[Any, ...]) -> tuple[list[Any], list[Any]]:
    """The input buffers a replay copies the arguments into (None for a non-array), and the
    arguments the recorded call gets: those buffers seen through the recording's views."""
    inputs: list[Any] = []
    new_args: list[Any] = []
    for arg in args:
        if isinstance(arg, Tensor):
            buffer = np.array(arg.data, copy=True)
            inputs.append(buffer)
            new_args.append(Tensor(rec.wrap(buffer, "input")))
        elif isinstance(arg, np.ndarray):
            buffer = np.array(arg, copy=True)
            inputs.append(buffer)
            new_args.append(rec.wrap(buffer, "input"))
        else:
            inputs.append(None)
            new_args.append(arg)
    return inputs, new_args


def _untraced(rec: _Recorder, params: list[Tensor]) -> list[tuple[Tensor, Any]]:
    """Give ``params`` their plain arrays back; each with its gradient's array, to set after
    every replay."""
    grads = []
    for p in _unique(params):
        if isinstance(p.grad, _Traced):
            p.grad = rec.unwrap(p.grad)
        if isinstance(p.data, _Traced):
            p.data = rec.unwrap(p.data)
        grads.append((p, p.grad))
    return grads


def _first_write(rec: _Recorder) -> int | None:
    """The first call that changes state an eager call would read: after it, a replay that
    stops cannot hand over to the eager step (filling with a constant, as
    zero_grad(set_to_none=False) does, is not such a change: the eager step does it too)."""
    return min((k for k, w in enumerate(rec.writes)
                if any(rec.kinds[n] == "external" for n in w)
                and not _constant_fill(rec.ops[k])), default=None)


def _replay_problems(rec: _Recorder, result: Any, outputs: Any, strangers: list[Any]
                     ) -> list[str]:
    """Why a recording that saw no problem of its own still cannot be replayed, if it cannot."""
    problems = []
    if strangers:
        problems.append("an optimizer stepped that did not step on the first call")
    if outputs is None:
        problems.append(f"the step returns a {type(result).__name__}; a compiled step may "
                        "return a tensor, a tuple of tensors, or None")
    first_write = _first_write(rec)
    if any(first_write is not None and k > first_write for k in rec.guards):
        problems.append("a value is read into Python after the step began to change "
                        "the parameters or their gradients (it could not be checked "
                        "before a replay changes them)")
    return problems


def _kept_results(step: Callable[..., Any], optimizers: list[Any], result: Any) -> list[str]:
    """A tensor the step computed and kept in the state it reaches (a module's attribute, a
    trainer's list): a replay runs no Python, so that tensor would keep the recorded values
    (or memory a later call reuses). The step runs eagerly; the reason names where it is."""
    returned = {id(t) for t in (result if isinstance(result, (tuple, list)) else (result,))}
    for where, t in StateGuard(step, optimizers).results:
        if isinstance(t.data, _Traced) and id(t) not in returned:
            return [f"the step keeps a tensor it computed in {where}: a replay runs no Python "
                    f"and would not update it; return it from the step instead (a replay "
                    f"returns fresh values of what the step returns)"]
    return []


def _constant_fill(call: tuple[Any, tuple[Any, ...], dict[str, Any]]) -> bool:
    """Whether a recorded call sets its target to one constant (``a[...] = 0``)."""
    fn, args, _ = call
    value = args[2] if fn is operator.setitem else args[1] if fn is np.copyto else None
    return isinstance(value, (int, float, np.generic)) and not isinstance(value, bool)


def _key(args: tuple[Any, ...]) -> Any:
    """Shapes and dtypes of the arrays, values of the numbers; None for other arguments."""
    key = []
    for arg in args:
        data = arg.data if isinstance(arg, Tensor) else arg
        if isinstance(arg, Tensor) and arg.requires_grad:
            return None
        if type(data) is np.ndarray:
            key.append((data.shape, data.dtype.str))
        elif isinstance(arg, (bool, int, float, str)) or arg is None:
            key.append((type(arg).__name__, arg))
        else:
            return None
    return tuple(key)


def _outputs(result: Any, rec: _Recorder) -> tuple[Any, list[Tensor]]:
    """What a replay returns (``("tensor", array)`` or a list of them; None: not possible),
    and the leaves of the returned tensors' graphs (their ``.grad`` is set by a replay)."""
    if result is None:
        return ("none",), []
    if isinstance(result, Tensor):
        array = rec.unwrap(result.data)
        if not isinstance(array, np.ndarray) or id(_owner(array)) not in rec.index:
            return None, []
        return ("tensor", array), _leaves(result)
    if isinstance(result, (tuple, list)):
        parts = [_outputs(r, rec) for r in result]
        if any(o is None for o, _ in parts):
            return None, []
        return [o for o, _ in parts], [leaf for _, ls in parts for leaf in ls]
    return None, []


def _leaves(t: Tensor) -> list[Tensor]:
    seen, stack, leaves = set(), [t], []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if not node._parents and node.requires_grad:
            leaves.append(node)
        stack.extend(node._parents)
    return leaves


def _unique(tensors: list[Tensor]) -> list[Tensor]:
    seen: set[int] = set()
    out = []
    for t in tensors:
        if id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return out


def _plain_result(result: Any, rec: _Recorder) -> Any:
    """The recorded call's own result, with its arrays plain again, and copied: the arrays
    it was computed in are the program's, which the replays overwrite."""
    if isinstance(result, Tensor) and isinstance(result.data, _Traced):
        result.data = rec.unwrap(result.data).copy()
    elif isinstance(result, (tuple, list)):
        for r in result:
            _plain_result(r, rec)
    return result


def _difference(before: list[Any], after: list[Any]) -> str:
    """Why two recordings are not the same program, in words."""
    for k, (a, b) in enumerate(zip(before, after)):
        if a != b:
            if _shapes(a) != _shapes(b) and a[:2] == b[:2]:
                return (f"two recordings of the step differ at call {k} ({a[0]} {a[1]!s:.30}): "
                        "an array's shape changed between calls with the same arguments' "
                        "shapes (a data-dependent shape, such as a boolean mask's selection)")
            what = ("a value read into Python" if a[0] == "guard" else
                    "an argument" if a[:3] == b[:3] else "the call")
            return (f"two recordings of the step differ at call {k} ({a[0]} {a[1]!s:.30}): "
                    f"{what} changed between calls (Python control flow on values, random "
                    "numbers, a number that changes, or values computed outside NumPy's "
                    "dispatch)")
    return (f"two recordings of the step differ in length ({len(before)} and {len(after)} "
            "calls): Python control flow that depends on values")


def _shapes(described: Any) -> list[Any]:
    """The shapes of the arrays in a call's description, in order."""
    if isinstance(described, tuple) and described and described[0] in ("array", "const"):
        return [described[2]]
    if isinstance(described, (tuple, list)):
        return [s for part in described for s in _shapes(part)]
    return []


def compile(step: Callable[..., Any]) -> CompiledStep:  # noqa: A001 - torch.compile's name
    """Record one training step's array calls and replay them on later calls.

    Parameters
    ----------
    step : callable
        A function of the batch (tensors, NumPy arrays, Python numbers) that runs one training
        step: ``opt.zero_grad()``, the forward, ``loss.backward()``, ``opt.step()``. It may
        return the loss (a tensor), a tuple of tensors, or None.

    Returns
    -------
    CompiledStep
        Call it as you would call ``step``. The first call runs eagerly; the next two are
        recorded (they also run normally); from then on calls with arguments of the same
        shapes and dtypes replay the recording: the same results, bit for bit, without the
        engine's Python. Read the module's docstring for what makes it fall back to eager;
        ``.reasons`` says why it did, ``.calls`` counts what ran how.

    Example
    -------
    >>> import numpy as np, minigrad as mg, minigrad.functional as F
    >>> from minigrad import nn, optim
    >>> model = nn.Sequential(nn.Linear(2, 8, seed=0), nn.ReLU(), nn.Linear(8, 2, seed=1))
    >>> opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    >>> @mg.compile
    ... def train_step(x, y):
    ...     opt.zero_grad()
    ...     loss = F.cross_entropy(model(x), y)
    ...     loss.backward()
    ...     opt.step()
    ...     return loss
    >>> x, y = mg.tensor(np.ones((4, 2))), np.array([0, 1, 0, 1])
    >>> losses = [train_step(x, y) for _ in range(5)]
    >>> train_step.calls
    {'eager': 1, 'recorded': 2, 'replayed': 2}
    """
    return CompiledStep(step)
