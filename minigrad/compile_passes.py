"""The optimizing passes of :mod:`minigrad.compile`, and the calls a replay makes.

A recording (``compile._Recorder``) is a list of calls ``(function, args, kwargs)`` in the
order the step made them, with, for each call, the arrays it writes; every array is known by
its *owner* (the array that owns its memory), numbered. :class:`Plan` adds what each call reads
and which call made each array. Each pass below then drops or rewrites calls; a pass may change
*when* an array is written only where the recorded reads and writes show that no call in
between reads or writes that array, so every value a replay computes is, bit for bit, the value
the recording computed:

1. :func:`drop_unchanged_refills` -- a refill of a new array (``zeros_like``, ``np.ones``)
   that nothing writes afterwards: the array keeps those values from one replay to the next;
2. :func:`drop_self_assignments` -- ``a[i] = v`` where ``v`` already is ``a[i]`` (what
   Python's ``a[i] += w`` leaves behind);
3. :func:`fold_constants` -- a new array computed from constants only keeps its value;
4. :func:`drop_dead_calls` -- a call whose result nothing needs (an input, a parameter, a
   gradient, an optimizer's state, the output, a checked value);
5. :func:`sum_scattered_slices` -- a sum of arrays of zeros that each hold one slice of values
   (the backward of ``x[t]`` at every step of a recurrent layer, of an LSTM's four gates): each
   slice of the sum computed alone, ``s[i] = v + 0``, with no array of zeros filled or added;
6. :func:`write_results_in_place` -- ``dst[...] = r``, where only this copy reads the fresh
   result ``r``: the call that makes ``r`` writes into ``dst`` instead (a gradient landing in
   an optimizer's flat buffer), when ``dst`` has ``r``'s layout, or when the call is
   elementwise (each value computed alone: where it is stored cannot change it);
7. :func:`fuse_value_checks` -- a value computed only to be checked is computed and checked
   in one call;
8. :func:`write_elementwise_in_place` -- an elementwise call writes its new result over an
   input of the same layout that no later call reads (a sigmoid's four calls in one buffer);
9. :func:`reuse_buffers` -- a large array (16 KiB or more) that the step makes, uses and
   forgets writes into the memory of one the step has already forgotten (a register
   allocator's idea): the replay touches a few buffers again and again instead of a fresh one
   per call, and so stays in the processor's caches. Only arrays that a call writes whole before anything reads them, and
   that nothing needs after the replay, move; into a buffer of the same size and alignment,
   seen with the same shape and strides.

Each pass is a function of a :class:`Plan` and is tested on its own (tests/engine/test_compile_passes.py).
"""
from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

__all__ = ["Plan", "optimize", "PASSES", "drop_unchanged_refills", "drop_self_assignments",
           "fold_constants", "drop_dead_calls", "sum_scattered_slices", "write_results_in_place",
           "fuse_value_checks", "write_elementwise_in_place", "reuse_buffers",
           "add_pieces"]

Call = tuple[Any, tuple[Any, ...], dict[str, Any]]


class Unrecoverable(Exception):
    """A replay met what the recording did not (a guard, a shape); nothing was changed yet."""


# ---------------------------------------------------------------------------------------------
# The calls a recording holds besides NumPy's own


def owner(a: Any) -> Any:
    """The array that owns ``a``'s memory (``a`` itself when it is not a view)."""
    while True:
        base = getattr(a, "base", None)
        if base is None or isinstance(base, (bytes, memoryview)):
            return a
        a = base


def arrays(x: Any) -> list[Any]:
    """The arrays in an argument list (nested tuples, lists and dicts)."""
    if isinstance(x, np.ndarray):
        return [x]
    if isinstance(x, (tuple, list)):
        return [a for v in x for a in arrays(v)]
    if isinstance(x, dict):
        return [a for v in x.values() for a in arrays(v)]
    return []


def compute_into(out: Any, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Compute ``func(*args, **kwargs)`` again and copy it into ``out`` (its recorded result)."""
    result = func(*args, **kwargs)
    if np.shape(result) != out.shape:
        raise Unrecoverable(f"{getattr(func, '__name__', 'a call')} gave shape "
                            f"{np.shape(result)}, recorded {out.shape} (a data-dependent shape)")
    np.copyto(out, result, casting="unsafe")


def where_into(out: Any, condition: Any, a: Any, b: Any) -> None:
    """``out[...] = np.where(condition, a, b)`` without a new array: the same values."""
    np.copyto(out, b, casting="unsafe")
    np.copyto(out, a, casting="unsafe", where=condition)


def check(convert: Callable[..., Any], args: tuple[Any, ...], value: Any, name: str) -> None:
    """A guard: ``convert(*args)`` must be ``value`` again (NaN equals NaN here)."""
    got = convert(*args)
    if got != value and not (got != got and value != value):
        raise Unrecoverable(f"{name} was {value!r} when recorded and is {got!r} now")


class Composed:
    """``convert(func(*args, **kwargs))``: a guard's value computed and read in one call."""

    def __init__(self, convert: Callable[[Any], Any], func: Callable[..., Any],
                 kwargs: dict[str, Any]) -> None:
        self.convert, self.func, self.kwargs = convert, func, kwargs

    def __call__(self, *args: Any) -> Any:
        return self.convert(self.func(*args, **self.kwargs))


# calls whose first argument is the array they write (not one they read)
WRITERS = (compute_into, where_into, np.copyto, operator.setitem)

COMPARISONS = {np.greater, np.greater_equal, np.less, np.less_equal, np.equal, np.not_equal,
               np.logical_and, np.logical_or, np.logical_not, np.isnan, np.isinf,
               np.isfinite, np.signbit}


def basic(index: Any) -> bool:
    """Whether ``a[index]`` is a view of ``a``: an index of ints, slices and ``...`` only."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(isinstance(i, (int, slice)) or i is Ellipsis for i in parts)


# ---------------------------------------------------------------------------------------------
# The plan the passes work on


class Recording(Protocol):
    """What the passes read of a recording (``compile._Recorder`` has these)."""

    ops: list[Call]
    owners: list[Any]
    writes: list[set[int]]
    kinds: list[str]
    index: dict[int, int]
    creator: dict[int, int]
    fills: set[int]
    guards: list[int]


class Plan:
    """A recording and what the passes know of it: each call's reads and writes (owner
    numbers), which call made each array, which calls are still ``alive``.

    Parameters
    ----------
    rec : Recording
        The recorded calls.
    outputs : Any
        What the step returns (its arrays are needed after the replay).
    keep : tuple
        Other arrays read after a replay (the gradients); only :func:`reuse_buffers` reads it.
    """

    def __init__(self, rec: Recording, outputs: Any, keep: tuple[Any, ...] = ()) -> None:
        self.rec = rec
        self.ops = list(rec.ops)
        self.n = len(self.ops)
        self.writes = [set(w) for w in rec.writes]
        self.reads: list[set[int]] = []
        for fn, args, kwargs in self.ops:
            if fn in WRITERS:
                args = args[1:]
            found = arrays(args) + arrays({k: v for k, v in kwargs.items() if k != "out"})
            self.reads.append({m for m in map(self.number, found) if m is not None})
        self.out_owners = {self.number(a) for a in arrays(
            outputs[1:] if isinstance(outputs, tuple) else outputs)}
        self.lasting = {m for m, kind in enumerate(rec.kinds) if kind in ("external", "input")}
        self.made_by = {k: m for m, k in rec.creator.items()}
        self.alive = [True] * self.n
        # arrays read after a replay besides the outputs (the parameters' gradients)
        self.keep = {m for m in map(self.number, arrays(keep)) if m is not None}

    def number(self, a: Any) -> int | None:
        """The owner number of array ``a`` (None: not an array of the recording)."""
        return self.rec.index.get(id(owner(a)))

    def kept(self) -> list[tuple[int, Call]]:
        """The calls still alive, with their recorded numbers."""
        return [(k, self.ops[k]) for k in range(self.n) if self.alive[k]]

    def readers(self) -> dict[int, list[int]]:
        """For each owner, the live calls that read it."""
        found: dict[int, list[int]] = {}
        for k in range(self.n):
            if self.alive[k]:
                for m in self.reads[k]:
                    found.setdefault(m, []).append(k)
        return found

    def rewritten(self) -> set[int]:
        """The owners written by a call other than the one that made them."""
        return {m for k, w in enumerate(self.writes) for m in w
                if self.rec.creator.get(m) != k}


# ---------------------------------------------------------------------------------------------
# The passes


def drop_unchanged_refills(plan: Plan) -> None:
    """1. A refill of a new array that no other call writes: it keeps its values."""
    rewritten = plan.rewritten()
    for k in plan.rec.fills:
        made = [m for m, j in plan.rec.creator.items() if j == k]
        if made and all(m not in rewritten for m in made):
            plan.alive[k] = False


def drop_self_assignments(plan: Plan) -> None:
    """2. ``a[i] = v`` where ``v`` is the view ``a[i]`` itself: a copy onto itself."""
    for k, (fn, args, _) in enumerate(plan.ops):
        if fn is operator.setitem and isinstance(args[2], np.ndarray):
            target = args[0][args[1]]
            if (isinstance(target, np.ndarray) and target.shape == args[2].shape
                    and target.strides == args[2].strides and target.dtype == args[2].dtype
                    and target.__array_interface__["data"][0]
                    == args[2].__array_interface__["data"][0]):
                plan.alive[k] = False


def fold_constants(plan: Plan) -> None:
    """3. A new array computed from constants only (the seed gradient's ``g / n``) keeps the
    value it got when recorded. Only arrays the step made count: a plain array from outside
    is read by reference, and may have changed by the next call."""
    rec, rewritten = plan.rec, plan.rewritten()
    constant = {plan.made_by[k] for k in rec.fills
                if k in plan.made_by and plan.made_by[k] not in rewritten}
    for k in range(plan.n):
        m = plan.made_by.get(k)
        if (plan.alive[k] and m is not None and m not in rewritten and not plan.writes[k]
                and k not in rec.guards and plan.reads[k] <= constant and k not in rec.fills):
            plan.alive[k] = False
            constant.add(m)


def drop_dead_calls(plan: Plan) -> None:
    """4. Calls whose results nothing needs, from the last call back."""
    needed = set(plan.out_owners) | plan.lasting
    for k in range(plan.n - 1, -1, -1):
        if not plan.alive[k]:
            continue
        makes = {plan.made_by[k]} if k in plan.made_by else set()
        if k in plan.rec.guards or (plan.writes[k] | makes) & needed:
            needed |= plan.reads[k]
        else:
            plan.alive[k] = False


def sum_scattered_slices(plan: Plan) -> None:
    """5. A sum of arrays of zeros that each hold one slice of values (the gradients of
    ``x[t]`` over a recurrent layer's steps, of an LSTM's four gates), ``z = zeros;
    z[i] = v``, ``s = z + z'``, ..., computed as its slices alone: ``s[i] = v + 0`` for each
    piece, zeros where no piece lies. No array of zeros is filled, written or added.

    Exact: where the pieces do not overlap, each value of ``s`` is one ``v`` plus zeros, and
    ``(v + 0) + 0`` is ``v + 0`` in IEEE arithmetic (``v`` itself, but ``-0.0`` becomes
    ``0.0``, as the sum makes it). Only sums of one dtype whose pieces nothing else reads,
    and whose values no call changes before the last sum, are computed so."""
    readers = plan.readers()
    needed = {m for m in plan.out_owners | plan.lasting | plan.keep if m is not None}
    found = _scattered_pieces(plan, readers, needed)
    last: dict[int, int] = {}  # the owner of a sum -> the call that makes it
    for k, _ in plan.kept():
        parts = _sum_of_pieces(plan, k, found, readers, needed)
        if parts is None:
            continue
        r, (a, b) = parts
        pieces_a, mask_a, calls_a = found[a]
        pieces_b, mask_b, calls_b = found[b]
        found[r] = (pieces_a + pieces_b, mask_a | mask_b, calls_a | calls_b | {k})
        last[r] = k
        last.pop(a, None)
        last.pop(b, None)
    for r, k in last.items():
        pieces, mask, calls = found[r]
        if _pieces_unchanged(plan, pieces, k, calls):
            _write_pieces(plan, r, k, pieces, bool(mask.all()), calls)


# a piece of a sum of scattered slices: (the call that wrote it, its index, its values)
_Piece = tuple[int, Any, Any]
# what is known of an array of zeros with pieces: the pieces, the positions they cover (a
# flat mask), the calls that make it
_Pieces = tuple[list[_Piece], Any, set[int]]


def _whole_owner(plan: Plan, a: Any) -> int | None:
    """The owner number of ``a`` when ``a`` is its owner seen whole (same memory and layout)."""
    if not isinstance(a, np.ndarray):
        return None
    o = owner(a)
    if (a.shape != o.shape or a.strides != o.strides or a.dtype != o.dtype
            or a.__array_interface__["data"][0] != o.__array_interface__["data"][0]):
        return None
    return plan.number(a)


def _scattered_pieces(plan: Plan, readers: dict[int, list[int]], needed: set[int]
                      ) -> dict[int, _Pieces]:
    """The new float arrays refilled with +0.0 and then written by one ``z[i] = v`` alone
    (``v`` of the slice's shape and dtype), read by one call, needed by nothing else."""
    writers: dict[int, list[int]] = {}
    for k, _ in plan.kept():
        for m in plan.writes[k]:
            writers.setdefault(m, []).append(k)
    found: dict[int, _Pieces] = {}
    for f in sorted(plan.rec.fills):
        z = plan.made_by.get(f)
        if z is None or not plan.alive[f] or z in needed or len(readers.get(z, [])) != 1:
            continue
        o, value = plan.rec.owners[z], plan.ops[f][1][1]
        if (plan.rec.kinds[z] != "internal" or not np.issubdtype(o.dtype, np.floating)
                or not isinstance(value, np.ndarray) or value.shape != ()
                or value != 0 or np.signbit(value) or o.size == 0):
            continue
        others = [k for k in writers.get(z, []) if k != f]
        if len(others) != 1 or others[0] < f:
            continue
        p = others[0]
        fn, args, kwargs = plan.ops[p]
        if fn is not operator.setitem or kwargs or not basic(args[1]) \
                or _whole_owner(plan, args[0]) != z:
            continue
        v, region = args[2], o[args[1]]
        if (not isinstance(v, np.ndarray) or not isinstance(region, np.ndarray)
                or v.shape != region.shape or v.dtype != o.dtype):
            continue
        mask = np.zeros(o.shape, dtype=bool)
        mask[args[1]] = True
        found[z] = ([(p, args[1], v)], mask, {f, p})
    return found


def _sum_of_pieces(plan: Plan, k: int, found: dict[int, _Pieces],
                   readers: dict[int, list[int]], needed: set[int]
                   ) -> tuple[int, tuple[int, int]] | None:
    """For ``np.add(a, b, out=r)`` of two arrays of pieces that do not overlap, each read by
    this call alone: ``(r, (a, b))`` (owner numbers); else None."""
    fn, args, kwargs = plan.ops[k]
    r = _elementwise_result(plan, fn, kwargs, k) if fn is np.add and len(args) == 2 else None
    if r is None:
        return None
    out = kwargs["out"]
    out = out[0] if isinstance(out, tuple) and len(out) == 1 else out
    a, b = (_whole_owner(plan, x) for x in args)
    if a is None or b is None or a == b or a not in found or b not in found:
        return None
    if any(m in needed or readers.get(m) != [k] or plan.rec.owners[m].shape != out.shape
           or plan.rec.owners[m].dtype != out.dtype for m in (a, b)):
        return None
    if (found[a][1] & found[b][1]).any():
        return None
    return r, (a, b)


def _pieces_unchanged(plan: Plan, pieces: list[_Piece], k: int, calls: set[int]) -> bool:
    """Whether every piece's values are, at call ``k``, what they were when written: no live
    call between writes their owner, and none of them is an array of the sum."""
    made = {plan.made_by[c] for c in calls if c in plan.made_by}
    for p, _, v in pieces:
        m = plan.number(v)
        if m is None or m in made:
            return False
        if any(plan.alive[i] and m in plan.writes[i] for i in range(p + 1, k + 1)):
            return False
    return True


def _write_pieces(plan: Plan, r: int, k: int, pieces: list[_Piece], covered: bool,
                  calls: set[int]) -> None:
    """Call ``k`` computes sum ``r`` from its pieces (:func:`add_pieces`); the refills, the
    writes of the slices and the sums before it are dropped."""
    out = plan.ops[k][2]["out"]
    out = out[0] if isinstance(out, tuple) else out
    values = tuple(v for _, _, v in pieces)
    plan.ops[k] = (add_pieces, values, {"out": out, "index": tuple(i for _, i, _ in pieces),
                                        "zero": np.zeros((), out.dtype), "fill": not covered})
    plan.reads[k] = {m for m in map(plan.number, values) if m is not None}
    for c in calls - {k}:
        plan.alive[c] = False


def add_pieces(*values: Any, out: Any, index: tuple[Any, ...], zero: Any, fill: bool) -> None:
    """``out`` = zeros (when ``fill``) with ``values[j] + zero`` at ``out[index[j]]``: a sum of
    arrays of zeros that each hold one slice, computed slice by slice
    (:func:`sum_scattered_slices`). The pieces are copied, then ``zero`` (a 0-d ``0.0``) is
    added to all of ``out`` in place: the same values as adding it piece by piece, and a
    third of the time (one contiguous pass instead of strided ones)."""
    if fill:
        np.copyto(out, zero)
    for v, i in zip(values, index):
        out[i] = v
    np.add(out, zero, out=out)


def write_results_in_place(plan: Plan) -> None:
    """6. ``dst[...] = r`` (or ``dst[i] = r``) dropped, the call that made ``r`` writing into
    ``dst`` itself, where the recorded reads and writes allow it (see the module's list)."""
    readers = plan.readers()
    for k in range(plan.n):
        target = _copy_target(plan, k)
        if target is None:
            continue
        dst, src, whole = target
        r = plan.number(src)
        j = plan.rec.creator.get(r) if r is not None else None
        if j is None or not _moves(plan, j, k, r, src, dst, whole, readers):
            continue
        jfn, jargs, jkwargs = plan.ops[j]
        origin = owner(src)
        cast = {"casting": "unsafe"} if dst.dtype != origin.dtype else {}
        out = jkwargs.get("out")
        if isinstance(out, tuple) and len(out) == 1 and out[0] is origin:
            plan.ops[j] = (jfn, jargs, dict(jkwargs, out=(dst,), **cast))
        elif out is origin:
            plan.ops[j] = (jfn, jargs, dict(jkwargs, out=dst))
        else:
            continue
        plan.writes[j] = plan.writes[j] | plan.writes[k]
        plan.alive[k] = False


def _copy_target(plan: Plan, k: int) -> tuple[Any, Any, bool] | None:
    """For a live copy ``dst[...] = src`` / ``copyto(dst, src)``: (the array written, src,
    whether it is the whole of dst); else None."""
    fn, args, kwargs = plan.ops[k]
    if not plan.alive[k] or not (fn is operator.setitem and basic(args[1])
                                 or fn is np.copyto and kwargs in ({}, {"casting": "unsafe"})):
        return None
    dst, src = (args[0], args[2]) if fn is operator.setitem else (args[0], args[1])
    if not isinstance(src, np.ndarray) or not isinstance(dst, np.ndarray):
        return None
    whole = fn is np.copyto or args[1] is Ellipsis
    if not whole:
        dst = dst[args[1]]  # the slice written: a view of dst
        if not isinstance(dst, np.ndarray):
            return None
    return dst, src, whole


def _moves(plan: Plan, j: int, k: int, r: int | None, src: Any, dst: Any, whole: bool,
           readers: dict[int, list[int]]) -> bool:
    """Whether call ``j``, which made ``src`` (owner ``r``), may write into ``dst`` at its own
    place instead of the copy ``k``: the same values, and no call between reads or writes
    ``dst``."""
    origin = owner(src)
    if (not plan.alive[j] or r in plan.out_owners or readers.get(r if r is not None else -1) != [k]
            or any(r in plan.writes[i] for i in range(plan.n) if i != j and plan.alive[i])
            or src.shape != origin.shape or src.strides != origin.strides
            or dst.shape != origin.shape
            or src.__array_interface__["data"][0] != origin.__array_interface__["data"][0]):
        return False
    jfn, _, jkwargs = plan.ops[j]
    elementwise = isinstance(jfn, np.ufunc) and jfn.signature is None  # not matmul
    if dst.dtype != origin.dtype and not (jfn in COMPARISONS and jkwargs.keys() == {"out"}):
        return False  # only a bool result is cast exactly the same way inside the ufunc
    if not elementwise and (not whole or [st // dst.itemsize for st in dst.strides]
                            != [st // origin.itemsize for st in origin.strides]):
        return False  # another memory layout could change how the call computes
    d = plan.number(dst)
    return not any(plan.alive[i] and (d in plan.reads[i] or d in plan.writes[i])
                   for i in range(j + 1, k))


def fuse_value_checks(plan: Plan) -> None:
    """7. A value computed only to be checked (a guard): one call computes and checks it."""
    readers = plan.readers()
    for k in plan.rec.guards:
        fn, args, _ = plan.ops[k]
        if fn is not check or not plan.alive[k] or len(args[1]) != 1:
            continue
        r = plan.number(args[1][0])
        j = plan.rec.creator.get(r) if r is not None else None
        if j is None or not plan.alive[j] or plan.ops[j][0] is not compute_into \
                or r in plan.out_owners or readers.get(r if r is not None else -1) != [k]:
            continue
        _, (_, func, fargs, fkwargs), _ = plan.ops[j]
        convert, _, value, name = args
        plan.ops[k] = (check, (Composed(convert, func, fkwargs), tuple(fargs), value, name), {})
        plan.alive[j] = False


def write_elementwise_in_place(plan: Plan) -> None:
    """8. An elementwise call (a ufunc such as ``np.tanh``, ``np.multiply``) whose new result
    has exactly the shape, strides and dtype of an input that no later call reads writes its
    result over that input (``np.tanh(a, out=a)``): a chain such as a sigmoid's four calls
    runs in one buffer, which stays in the processor's caches.

    Exact: an elementwise ufunc computes each value from the values at the same position
    alone, so writing over the input it reads gives the same values (NumPy reads each value
    before it writes it, and copies first where arrays merely overlap). Only new arrays of
    the step that nothing needs after the replay move (as :func:`reuse_buffers`'s)."""
    kept = plan.kept()
    last, hidden, defined = _last_touch(plan, kept)
    blocked = hidden | {m for m in plan.out_owners | plan.lasting | plan.keep if m is not None}
    home: dict[int, int] = {}  # an owner number -> the owner whose memory it uses

    def find(m: int) -> int:
        while m in home:
            m = home[m]
        return m

    for k, (fn, args, kwargs) in kept:
        m = _elementwise_result(plan, fn, kwargs, k)
        if m is None or m in blocked:
            continue
        for a in args:
            n = _whole_owner(plan, a)
            if n is None or find(n) in blocked or find(n) not in defined:
                continue
            n = find(n)
            o, r = plan.rec.owners[n], plan.rec.owners[m]
            if (last.get(n) != k or o.shape != r.shape or o.strides != r.strides
                    or o.dtype != r.dtype or not o.flags.c_contiguous
                    or type(o) is not np.ndarray
                    or any(_owned_by(plan, b, n, find) and _whole_owner(plan, b) is None
                           for b in arrays(args))):
                continue
            home[m] = n
            last[n] = last.get(m, k)
            break
    if home:
        moved = {id(plan.rec.owners[m]): plan.rec.owners[find(m)] for m in home}
        for k, (fn, args, kwargs) in kept:
            plan.ops[k] = (fn, _rebased(args, moved), _rebased(kwargs, moved))


def _last_touch(plan: Plan, kept: list[tuple[int, Call]]
                ) -> tuple[dict[int, int], set[int], set[int]]:
    """For the live calls: the last one that reads or writes each owner; the owners they
    hold where :func:`arrays` does not look (:func:`_hidden_arrays`); and the new arrays of
    the step that a live call writes whole, reading nothing of them, before any other call
    touches them (so each replay computes them afresh: not an array whose refill pass 1
    dropped, nor a constant pass 3 folded)."""
    last: dict[int, int] = {}
    hidden: set[int] = set()
    defined: set[int] = set()
    for k, (fn, args, kwargs) in kept:
        whole, read = _accesses(plan, fn, args, kwargs)
        made = {plan.made_by[k]} if k in plan.made_by else set()
        for m in whole | made:
            if m not in last and m not in read and plan.rec.kinds[m] == "internal":
                defined.add(m)
        for m in whole | read | plan.writes[k] | made:
            last[m] = k
        hidden |= {m for m in map(plan.number, _hidden_arrays((fn, args, kwargs)))
                   if m is not None}
    return last, hidden, defined


def _elementwise_result(plan: Plan, fn: Any, kwargs: dict[str, Any], k: int) -> int | None:
    """The owner of the new array that call ``k``, an elementwise ufunc with one output and
    no other options, writes whole; else None."""
    if not (isinstance(fn, np.ufunc) and fn.signature is None and fn.nout == 1
            and kwargs.keys() == {"out"}):
        return None
    out = kwargs["out"]
    out = out[0] if isinstance(out, tuple) and len(out) == 1 else out
    m = plan.made_by.get(k)
    if m is None or _whole_owner(plan, out) != m or plan.rec.kinds[m] != "internal":
        return None
    return m


def _owned_by(plan: Plan, b: Any, n: int, find: Callable[[int], int]) -> bool:
    """Whether array ``b`` lies in the memory of owner ``n`` (after the moves so far)."""
    m = plan.number(b)
    return m is not None and find(m) == n


# an array smaller than this is not worth moving (it stays in the caches anyway); a (32, 128)
# float32 state of the char-RNN's LSTM is 16 KiB: moving those too took its replay from 47 MB
# of arrays to 19 MB, and 0.94x the time (paired, same process); no change on the char-GPT
REUSE_BYTES = 1 << 14


def reuse_buffers(plan: Plan) -> None:
    """9. Each large array the step makes and forgets writes into the memory of an array of
    the same size and alignment that no later call reads (see the module's list)."""
    kept = plan.kept()
    first, last, movable = _lifetimes(plan, kept)
    free: dict[tuple[int, int], list[Any]] = {}
    home: dict[int, Any] = {}  # owner number -> the array whose memory it now uses
    ends: dict[int, list[int]] = {}
    for m, k in last.items():
        ends.setdefault(k, []).append(m)
    for k, _ in kept:
        for m in sorted(movable & first.get(k, set())):
            o = plan.rec.owners[m]
            pool = free.get(_size_class(o))
            if pool:
                home[m] = pool.pop()
        for m in ends.get(k, []):
            if m in movable:  # its memory is free after call k (not during: no aliasing)
                o = plan.rec.owners[m]
                free.setdefault(_size_class(o), []).append(home.get(m, o))
    if home:
        moved = {id(plan.rec.owners[m]): b for m, b in home.items()}
        for k, (fn, args, kwargs) in kept:
            plan.ops[k] = (fn, _rebased(args, moved), _rebased(kwargs, moved))


def _size_class(a: Any) -> tuple[int, int]:
    return a.nbytes, a.__array_interface__["data"][0] % 64


def _lifetimes(plan: Plan, kept: list[tuple[int, Call]]
               ) -> tuple[dict[int, set[int]], dict[int, int], set[int]]:
    """For the live calls, as they now are: the owners each call touches first, the last call
    that touches each owner, and the owners :func:`reuse_buffers` may move (written whole by
    the call that touches them first, which does not read them)."""
    first: dict[int, set[int]] = {}
    last: dict[int, int] = {}
    seen: set[int] = set()
    defined: set[int] = set()
    hidden: set[int] = set()
    for k, (fn, args, kwargs) in kept:
        whole, read = _accesses(plan, fn, args, kwargs)
        touched = whole | read | plan.writes[k]
        if k in plan.made_by:
            touched.add(plan.made_by[k])
        for m in touched - seen:
            first.setdefault(k, set()).add(m)
            if m in whole and m not in read:
                defined.add(m)
        seen |= touched
        for m in touched:
            last[m] = k
        hidden |= {m for m in map(plan.number, _hidden_arrays((fn, args, kwargs)))
                   if m is not None}
    owners = plan.rec.owners
    movable = {m for m in defined
               if plan.rec.kinds[m] == "internal" and m not in plan.out_owners
               and m not in plan.keep and m not in hidden and type(owners[m]) is np.ndarray
               and owners[m].flags.c_contiguous and owners[m].nbytes >= REUSE_BYTES}
    return first, last, movable


def _accesses(plan: Plan, fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
              ) -> tuple[set[int], set[int]]:
    """(the owners that call ``fn(*args, **kwargs)`` writes in full, every byte; the owners
    of every other array it is given), read from the call itself."""
    rest: Any = (args, kwargs)
    targets: list[Any] = []
    if "where" in kwargs:  # a masked write keeps the other values: a read too
        pass
    elif fn in (compute_into, where_into, np.copyto):
        targets, rest = [args[0]], (args[1:], kwargs)
    elif fn is operator.setitem and args[1] is Ellipsis:
        targets, rest = [args[0]], (args[1:], kwargs)
    elif fn is not operator.setitem and "out" in kwargs:
        out = kwargs["out"]
        targets = list(out) if isinstance(out, tuple) else [out]
        rest = (args, {k: v for k, v in kwargs.items() if k != "out"})
    whole = {m for t in targets if isinstance(t, np.ndarray) and _covers(t)
             for m in [plan.number(t)] if m is not None}
    partial = [t for t in targets if isinstance(t, np.ndarray) and plan.number(t) not in whole]
    read = {m for m in map(plan.number, arrays(rest) + partial) if m is not None}
    return whole, read


def _covers(a: Any) -> bool:
    """Whether view ``a`` is every byte of its owner: same start and size, dense."""
    o = owner(a)
    if (a.__array_interface__["data"][0] != o.__array_interface__["data"][0]
            or a.nbytes != o.nbytes or not o.flags.c_contiguous):
        return False
    order = sorted(range(a.ndim), key=lambda i: -a.strides[i])
    step = a.itemsize
    for i in reversed(order):  # the smallest stride first: each the product of those below
        if a.shape[i] != 1 and a.strides[i] != step:
            return False
        step *= a.shape[i]
    return True


def _hidden_arrays(x: Any, depth: int = 0) -> list[Any]:
    """Arrays a call holds where :func:`arrays` does not look (a closure's cells, a
    :class:`Composed`'s arguments): :func:`reuse_buffers` moves none of them."""
    if depth > 4:
        return []
    if isinstance(x, (tuple, list)):
        return [a for v in x for a in _hidden_arrays(v, depth)]
    if isinstance(x, dict):
        return [a for v in x.values() for a in _hidden_arrays(v, depth)]
    found: list[Any] = []
    if isinstance(x, Composed):
        found = arrays(x.kwargs) + _hidden_arrays((x.convert, x.func, x.kwargs), depth + 1)
    for cell in getattr(x, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        found += arrays(value) + _hidden_arrays(value, depth + 1)
    return found


def _rebased(x: Any, moved: dict[int, Any]) -> Any:
    """``x`` with every array whose owner moved replaced by the same view of its new home."""
    if isinstance(x, np.ndarray):
        o = owner(x)
        home = moved.get(id(o))
        if home is None:
            return x
        offset = x.__array_interface__["data"][0] - o.__array_interface__["data"][0]
        return np.ndarray(x.shape, x.dtype, buffer=home, offset=offset, strides=x.strides)
    if isinstance(x, tuple):
        return tuple(_rebased(v, moved) for v in x)
    if isinstance(x, list):
        return [_rebased(v, moved) for v in x]
    if isinstance(x, dict):
        return {k: _rebased(v, moved) for k, v in x.items()}
    return x


PASSES: tuple[Callable[[Plan], None], ...] = (
    drop_unchanged_refills, drop_self_assignments, fold_constants, drop_dead_calls,
    sum_scattered_slices, write_results_in_place, fuse_value_checks, write_elementwise_in_place,
    reuse_buffers)


def optimize(rec: Recording, outputs: Any,
             passes: tuple[Callable[[Plan], None], ...] = PASSES,
             keep: tuple[Any, ...] = ()) -> list[tuple[int, Call]]:
    """The recorded calls worth replaying, numbered as recorded, after ``passes``; ``keep``:
    other arrays read after a replay (see :class:`Plan`)."""
    plan = Plan(rec, outputs, keep)
    for run in passes:
        run(plan)
    return plan.kept()
