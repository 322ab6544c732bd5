"""More tensor functions, PyTorch-shaped: splitting, repeating, flipping, sorting, padding,
``einsum``, norms and the boolean reductions ``any``/``all``.

Each is written as the core's operations are (:mod:`minigrad.tensor`): the forward on arrays
through the array's own namespace (``xp = x._xp``), and, where the function is not simply a
composition of existing operations, one :func:`~minigrad.tensor.op` whose VJP is a formula in
the output gradient ``g`` and the saved arrays.

The method forms (``x.split(2)``, ``x.flip(0)``, ``x.softmax(dim=1)``, ...) are attached to
:class:`~minigrad.tensor.Tensor` in one place, :func:`_attach_methods` at the end of this
module, so ``tensor.py`` stays the one-sitting read the course asks for.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any, NamedTuple, Sequence

from .backend import Array, asarray, is_floating, take
from .axes import _axes, _axis_index, _reduce_args
from .tensor import Tensor, _tensor_arg, op

__all__ = ["split", "chunk", "repeat", "flip", "sort", "norm", "any", "all", "einsum", "pad",
           "SortResult"]


class SortResult(NamedTuple):
    """What :func:`sort` returns, as ``torch.sort``: the sorted values and their indices."""

    values: Tensor
    indices: Tensor


def _int(n: Any, name: str, arg: str, low: int | None = None) -> int:
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError(f"{name}: {arg} must be an int; got {n!r}")
    if low is not None and n < low:
        raise ValueError(f"{name}: {arg} must be at least {low}; got {n}")
    return int(n)


def _slice_along(x: Tensor, d: int, lo: int, hi: int) -> Tensor:
    return x[(slice(None),) * d + (slice(lo, hi),)]


# ---------------------------------------------------------------------------------------------
# Splitting


def split(x: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0
          ) -> tuple[Tensor, ...]:
    """Cut ``x`` into pieces along ``dim``, as ``torch.split``.

    Parameters
    ----------
    x : Tensor
    split_size_or_sections : int or sequence of int
        An int: pieces of that size (the last one smaller if the size does not divide).
        A sequence: the size of each piece; they must add up to ``x.shape[dim]``.
    dim : int
        The axis to cut.

    Returns
    -------
    tuple of Tensor
        Slices of ``x``; each gets back its part of the gradient.
    """
    x = _tensor_arg(x, "split")
    if x.ndim == 0:
        raise ValueError("split: a 0-d tensor has no axis to split")
    d = _axis_index(x.ndim, dim, "split")
    n = x.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [_int(s, "split", "each section", low=0) for s in split_size_or_sections]
        if sum(sizes) != n:
            raise ValueError(f"split: the sections {list(sizes)} add up to {sum(sizes)}, but "
                             f"axis {d} has size {n} (shape {x.shape})")
    else:
        size = _int(split_size_or_sections, "split", "split_size", low=0)
        if size == 0:
            if n != 0:
                raise ValueError(f"split: split_size 0 cannot cut axis {d} of size {n}")
            return (x + 0,)
        sizes = [min(size, n - lo) for lo in range(0, n, size)] or [0]
    bounds = [0]
    for s in sizes:
        bounds.append(bounds[-1] + s)
    return tuple(_slice_along(x, d, lo, hi) for lo, hi in zip(bounds, bounds[1:]))


def chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """Cut ``x`` into ``chunks`` pieces of equal size along ``dim`` (the last may be smaller,
    and there may be fewer pieces), as ``torch.chunk``: pieces of ``ceil(n / chunks)``."""
    x = _tensor_arg(x, "chunk")
    chunks = _int(chunks, "chunk", "chunks", low=1)
    if x.ndim == 0:
        raise ValueError("chunk: a 0-d tensor has no axis to cut")
    d = _axis_index(x.ndim, dim, "chunk")
    n = x.shape[d]
    if n == 0:
        return tuple(_slice_along(x, d, 0, 0) for _ in range(chunks))
    return split(x, -(-n // chunks), d)


# ---------------------------------------------------------------------------------------------
# Repeating and flipping


def repeat(x: Tensor, *sizes: int) -> Tensor:
    """Tile ``x``: ``x.repeat(2, 3)`` repeats rows twice and columns three times, as
    ``torch.Tensor.repeat`` (``numpy.tile``). Extra leading sizes add new axes.

    Gradient: the gradient of every copy, summed back.
    """
    x = _tensor_arg(x, "repeat")
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    reps = tuple(_int(s, "repeat", "each size", low=0) for s in sizes)
    if len(reps) < x.ndim:
        raise ValueError(f"repeat: give at least as many sizes as the tensor has axes "
                         f"({x.ndim}, shape {x.shape}); got {len(reps)}")
    xp = x._xp
    shape = (1,) * (len(reps) - x.ndim) + x.shape  # (s0, s1, ...)
    y = xp.tile(xp.reshape(x.data, shape), reps)
    # g, shape (r0*s0, r1*s1, ...), viewed as (r0, s0, r1, s1, ...): sum the r axes
    split_shape = tuple(v for r, s in zip(reps, shape) for v in (r, s))
    copies = tuple(range(0, 2 * len(reps), 2))
    old = x.shape
    return op(y, (x,), lambda g: xp.reshape(xp.sum(xp.reshape(g, split_shape), axis=copies),
                                             old), name="repeat")


def flip(x: Tensor, dims: int | Sequence[int]) -> Tensor:
    """Reverse the order of the values along ``dims`` (an int or a sequence), as
    ``torch.flip``. The gradient is flipped back."""
    x = _tensor_arg(x, "flip")
    axes = _axes(x.ndim, tuple(dims) if isinstance(dims, (list, tuple)) else dims, "flip")
    xp = x._xp
    if not axes:
        return x + 0
    return op(xp.flip(x.data, axis=axes), (x,), lambda g: xp.flip(g, axis=axes), name="flip")


# ---------------------------------------------------------------------------------------------
# Sorting


def sort(x: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> SortResult:
    """Sort along ``dim``; the values and the indices they came from, as ``torch.sort``.

    Ties keep their order (a stable sort, whatever ``stable`` says: PyTorch's CPU sort
    is stable too). Gradient: each value's gradient goes back to where it came from.
    NaN sorts as the largest value, as in PyTorch.
    """
    x = _tensor_arg(x, "sort")
    xp = x._xp
    if x.ndim == 0:
        return SortResult(x + 0, Tensor(xp.zeros((), dtype=xp.int64)))
    d = _axis_index(x.ndim, dim, "sort")
    if descending and is_floating(xp, x.dtype):
        # largest first, ties in their order (a stable sort of -x: NaN last), then the NaNs
        # moved first (a stable sort on "is not NaN"): PyTorch's order
        by_value = xp.argsort(-x.data, axis=d, stable=True)
        not_nan = xp.astype(~xp.isnan(xp.take_along_axis(x.data, by_value, axis=d)), xp.int8)
        idx = xp.take_along_axis(by_value, xp.argsort(not_nan, axis=d, stable=True), axis=d)
    elif descending:  # integers and booleans: ascending order of the negated values
        key = ~x.data if xp.isdtype(x.dtype, "bool") else -xp.astype(x.data, xp.int64)
        idx = xp.argsort(key, axis=d, stable=True)
    else:
        idx = xp.argsort(x.data, axis=d, stable=True)
    idx = xp.astype(idx, xp.int64)
    values = xp.take_along_axis(x.data, idx, axis=d)
    inverse = xp.argsort(idx, axis=d, stable=True)  # where each input value went
    out = op(values, (x,), lambda g: xp.take_along_axis(g, inverse, axis=d), name="sort")
    return SortResult(out, Tensor(idx))


# ---------------------------------------------------------------------------------------------
# Norms and boolean reductions


def norm(x: Tensor, p: float | str = "fro", dim: Any = None, keepdim: bool = False) -> Tensor:
    """The vector ``p``-norm of ``x`` over ``dim`` (all values by default), as ``torch.norm``.

    Parameters
    ----------
    x : Tensor
        Floating point.
    p : float or "fro"
        ``"fro"`` or 2: the Euclidean norm; any number ``p``: ``sum(|x|**p)**(1/p)``;
        ``inf``/``-inf``: the largest/smallest ``|x|``; 0: the number of nonzero values.
    dim : int or tuple of int, optional
        The axes to reduce (``"fro"`` takes one or two, as PyTorch).
    keepdim : bool
        Keep the reduced axes as size 1.

    Notes
    -----
    Gradient, as PyTorch: ``g * sign(x) * |x|**(p-1) / norm**(p-1)``, and 0 where the norm
    is 0 (not NaN); for ``inf``/``-inf`` the gradient is shared evenly by the values that
    reach the norm; ``p = 0`` (a count) has no gradient.
    """
    x = _tensor_arg(x, "norm")
    xp = x._xp
    if not is_floating(xp, x.dtype):
        raise TypeError(f"norm: expected a floating-point tensor; got dtype {x.dtype}")
    p = _norm_order(x, p, dim)
    axis, keep = _reduce_args(None, dim, False, keepdim)
    axes = _axes(x.ndim, axis, "norm")
    a = xp.abs(x.data)
    if p == math.inf or p == -math.inf:
        n = (xp.max if p > 0 else xp.min)(a, axis=axes, keepdims=True)
    elif p == 0:  # a count: no gradient (PyTorch gives none either)
        n = xp.sum(xp.astype(a != 0, x.dtype), axis=axes, keepdims=True)
        return Tensor(n if keep else xp.reshape(n, tuple(s for i, s in enumerate(x.shape)
                                                         if i not in axes)))
    elif p == 1:
        n = xp.sum(a, axis=axes, keepdims=True)
    elif p == 2:
        n = xp.sqrt(xp.sum(a * a, axis=axes, keepdims=True))
    else:
        n = xp.sum(a ** p, axis=axes, keepdims=True) ** (1.0 / p)
    out = n if keep else xp.reshape(n, tuple(s for i, s in enumerate(x.shape) if i not in axes))
    return op(out, (x,), _norm_vjp(xp, p, axes, tuple(n.shape)), saved=(x.data, n), name="norm")


def _norm_order(x: Tensor, p: float | str, dim: Any) -> float:
    """:func:`norm`'s ``p`` as a float (``"fro"`` is 2, for one or two axes), checked."""
    if isinstance(p, str):
        if p != "fro":
            raise ValueError(f"norm: p must be a number or 'fro'; got {p!r}")
        if dim is not None and len(_axes(x.ndim, dim, "norm")) > 2:
            raise ValueError(f"norm: p='fro' reduces one or two axes; got dim={dim!r}")
        p = 2.0
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"norm: p must be a number or 'fro'; got {p!r}")
    return float(p)


def _norm_vjp(xp: Any, p: float, axes: tuple[int, ...], kept: tuple[int, ...]
              ) -> Callable[[Array, Array, Array], Array]:
    """The VJP of the ``p``-norm ``n`` over ``axes`` (of shape ``kept``, the axes kept)."""
    def vjp(g: Array, x: Array, n: Array) -> Array:
        g = xp.reshape(g, kept)
        if p == math.inf or p == -math.inf:  # shared evenly by the values that reach the norm
            hit = xp.astype(xp.abs(x) == n, x.dtype)
            return xp.sign(x) * hit * (g / xp.sum(hit, axis=axes, keepdims=True))
        if p == 1:
            return xp.sign(x) * g
        safe = xp.where(n == 0, 1.0, n)  # 0 where the norm is 0, not NaN (as PyTorch)
        if p == 2:
            return xp.where(n == 0, 0.0, x * (g / safe))
        scale = xp.where(n == 0, 0.0, g / safe ** (p - 1))
        return xp.sign(x) * xp.abs(x) ** (p - 1) * scale
    return vjp


def _bool_reduce(x: Tensor, dim: Any, keepdim: bool, kind: str) -> Tensor:
    x = _tensor_arg(x, kind)
    xp = x._xp
    axis, keep = _reduce_args(None, dim, False, keepdim)
    axes = _axes(x.ndim, axis, kind)
    fn = xp.any if kind == "any" else xp.all
    data = x.data if xp.isdtype(x.dtype, "bool") else x.data != 0
    return Tensor(fn(data, axis=axes, keepdims=keep))


def any(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where any value over ``dim`` (all axes by default) is nonzero, as ``torch.any``.
    A boolean tensor, without a gradient."""
    return _bool_reduce(x, dim, keepdim, "any")


def all(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where every value over ``dim`` (all axes by default) is nonzero, as ``torch.all``.
    A boolean tensor, without a gradient."""
    return _bool_reduce(x, dim, keepdim, "all")


# ---------------------------------------------------------------------------------------------
# einsum


def einsum(equation: str, *operands: Tensor) -> Tensor:
    """Sum of products named by subscripts, as ``torch.einsum``: ``einsum("ij,jk->ik", a, b)``.

    Each operand's axes are named by letters; letters shared by operands are multiplied
    together, and letters missing from the output (after ``->``) are summed over. Without
    ``->`` the output has the letters used once, in alphabetical order.

    It is built from operations that already have gradients: each operand is permuted to the
    order of all letters and given size-1 axes for the letters it lacks, the operands are
    multiplied (broadcasting), and the product summed. So the gradient is that of a product
    and a sum. A letter repeated within one operand (a diagonal, ``"ii->i"``) and ``...`` are
    not supported here (an error says so).
    """
    if not isinstance(equation, str):
        raise TypeError(f"einsum: the equation must be a string; got {type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    tensors = [_tensor_arg(t, "einsum") for t in operands]
    eq = equation.replace(" ", "")
    if "." in eq:
        raise ValueError("einsum: '...' (ellipsis) is not supported; name every axis")
    inputs, arrow, output = eq.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(tensors):
        raise ValueError(f"einsum: the equation {equation!r} names {len(terms)} operands; "
                         f"got {len(tensors)}")
    sizes = _letter_sizes(terms, tensors)
    if not arrow:
        counts = "".join(terms)
        output = "".join(sorted(c for c in set(counts) if counts.count(c) == 1))
    for letter in output:
        if letter not in sizes:
            raise ValueError(f"einsum: output letter {letter!r} is not in any operand")
    if len(set(output)) != len(output):
        raise ValueError(f"einsum: output subscripts {output!r} repeat a letter")
    return _product_summed(terms, tensors, output, sizes)


def _letter_sizes(terms: list[str], tensors: list[Tensor]) -> dict[str, int]:
    """The size of each letter of einsum's subscripts ``terms``, checked against the operands
    (a letter of size 1 in one operand broadcasts against a larger size in another)."""
    sizes: dict[str, int] = {}
    for k, (term, t) in enumerate(zip(terms, tensors)):
        if not term.isalpha() and term:
            raise ValueError(f"einsum: subscripts must be letters; got {term!r}")
        if len(term) != t.ndim:
            raise ValueError(f"einsum: operand {k} has {t.ndim} axes (shape {t.shape}) but "
                             f"the subscripts {term!r} name {len(term)}")
        if len(set(term)) != len(term):
            raise ValueError(f"einsum: subscripts {term!r} repeat a letter (a diagonal); not "
                             "supported here")
        for letter, n in zip(term, t.shape):
            if sizes.setdefault(letter, n) != n:
                if 1 not in (n, sizes[letter]):
                    raise ValueError(f"einsum: letter {letter!r} is size {sizes[letter]} in "
                                     f"one operand and {n} in operand {k}")
                sizes[letter] = max(n, sizes[letter])
    return sizes


def _product_summed(terms: list[str], tensors: list[Tensor], output: str,
                    sizes: dict[str, int]) -> Tensor:
    """einsum once checked: each operand permuted to the order of all letters (the output's,
    then the summed ones) with size-1 axes for the letters it lacks, multiplied, summed."""
    summed = sorted(set(sizes) - set(output))
    order = list(output) + summed  # the axes of the product: output's, then summed ones
    product = None
    for term, t in zip(terms, tensors):
        present = [c for c in order if c in term]
        t = t.permute([term.index(c) for c in present]) if t.ndim > 1 else t
        t = t.reshape(tuple(t.shape[present.index(c)] if c in term else 1 for c in order))
        product = t if product is None else product * t
    assert product is not None
    if summed:
        product = product.sum(axis=tuple(range(len(output), len(order))))
    target = tuple(sizes[c] for c in output)
    return product if product.shape == target else product.expand(*target)


# ---------------------------------------------------------------------------------------------
# Padding


def pad(x: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None
        ) -> Tensor:
    """Pad ``x``, as ``torch.nn.functional.pad``.

    Parameters
    ----------
    x : Tensor
    pad : sequence of int
        Pairs ``(before, after)`` from the *last* axis backwards:
        ``(left, right)`` pads the last axis, ``(left, right, top, bottom)`` the last two.
        In ``"constant"`` mode a negative size crops instead.
    mode : {"constant", "reflect", "replicate", "circular"}
        ``"constant"``: ``value`` (0 by default); ``"reflect"``: mirror, not repeating the
        edge (each size below the axis's length); ``"replicate"``: repeat the edge value;
        ``"circular"``: wrap around.
    value : float, optional
        The fill value of ``"constant"`` mode.

    Returns
    -------
    Tensor
        Gradient: the inner part of ``g`` (constant), or the gradients of every copy of a
        value added back to it (reflect, replicate, circular).
    """
    x = _tensor_arg(x, "pad")
    if not isinstance(pad, (list, tuple)) or len(pad) % 2:
        raise ValueError(f"pad: pad must be a tuple of (before, after) pairs, an even number "
                         f"of ints; got {pad!r}")
    sizes = [_int(s, "pad", "each pad size") for s in pad]
    if len(sizes) // 2 > x.ndim:
        raise ValueError(f"pad: {len(sizes) // 2} axes to pad, but the tensor has {x.ndim} "
                         f"(shape {x.shape})")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise ValueError(f"pad: mode must be 'constant', 'reflect', 'replicate' or 'circular'; "
                         f"got {mode!r}")
    if mode != "constant" and value not in (None, 0, 0.0):
        raise ValueError(f"pad: value is only for mode='constant'; got value={value!r} with "
                         f"mode={mode!r}")
    pairs = [(x.ndim - 1 - k, sizes[2 * k], sizes[2 * k + 1]) for k in range(len(sizes) // 2)]
    if mode == "constant":
        return _pad_constant(x, pairs, 0.0 if value is None else value)
    _check_pad_sizes(x, pairs, mode)
    for d, lo, hi in pairs:
        x = _take_along(x, _pad_index(mode, x.shape[d], lo, hi), d)
    return x


def _check_pad_sizes(x: Tensor, pairs: list[tuple[int, int, int]], mode: str) -> None:
    """Check the sizes ``(axis, before, after)`` of a ``"reflect"``, ``"replicate"`` or
    ``"circular"`` pad of ``x``: each mode reads values of the axis, so it has limits."""
    for d, lo, hi in pairs:
        n = x.shape[d]
        if lo < 0 or hi < 0:
            raise ValueError(f"pad: mode={mode!r} takes sizes of at least 0; got {(lo, hi)} "
                             f"for axis {d}")
        if mode == "reflect" and (lo >= n or hi >= n):
            raise ValueError(f"pad: reflect padding sizes must be less than the axis's size: "
                             f"axis {d} has size {n}, got {(lo, hi)}")
        if mode in ("replicate", "circular") and n == 0 and (lo or hi):
            raise ValueError(f"pad: cannot {mode} an axis of size 0 (axis {d})")
        if mode == "circular" and (lo > n or hi > n):
            raise ValueError(f"pad: circular padding sizes must be at most the axis's size: "
                             f"axis {d} has size {n}, got {(lo, hi)}")


def _pad_index(mode: str, n: int, lo: int, hi: int) -> list[int]:
    """The positions an axis of size ``n`` padded by ``lo`` and ``hi`` reads, in ``mode``:
    ``_pad_index("reflect", 4, 2, 1)`` is ``[2, 1, 0, 1, 2, 3, 2]``."""
    if mode == "reflect":
        return list(range(lo, 0, -1)) + list(range(n)) + list(range(n - 2, n - 2 - hi, -1))
    if mode == "replicate":
        return [0] * lo + list(range(n)) + [n - 1] * hi
    return list(range(n - lo, n)) + list(range(n)) + list(range(hi))  # circular


def _take_along(x: Tensor, index: list[int], d: int) -> Tensor:
    """``x``'s positions ``index`` (a list, repeats allowed) along axis ``d``: one op.

    Its VJP adds each output position's gradient back to the position it was read from:
    ``g @ onehot`` along ``d``, with ``onehot[j, index[j]] = 1`` (repeats add up)."""
    xp = x._xp
    n = x.shape[d]
    idx = xp.astype(asarray(index, like=x.data), xp.int64)
    onehot = xp.astype(xp.reshape(idx, (-1, 1)) == xp.reshape(xp.arange(n), (1, -1)), x.dtype)

    def vjp(g: Array) -> Array:
        return xp.moveaxis(xp.moveaxis(g, d, -1) @ onehot, -1, d)

    return op(take(x.data, idx, axis=d), (x,), vjp, name="pad")


def _pad_constant(x: Tensor, pairs: list[tuple[int, int, int]], value: Any) -> Tensor:
    """Constant padding: crop the negative sizes, then one op that writes ``x`` into a tensor
    filled with ``value``; its VJP is the slice of ``g`` where ``x`` was written."""
    crop = [slice(None)] * x.ndim
    for d, lo, hi in pairs:
        n = x.shape[d]
        start, stop = max(-lo, 0), n - max(-hi, 0)
        if start > stop:
            raise ValueError(f"pad: negative sizes {(lo, hi)} crop more than axis {d}'s "
                             f"{n} values")
        crop[d] = slice(start, stop)
    if [p for p in pairs if p[1] < 0 or p[2] < 0]:
        x = x[tuple(crop)]
    xp = x._xp
    shape = list(x.shape)
    inner = [slice(None)] * x.ndim
    for d, lo, hi in pairs:
        lo, hi = max(lo, 0), max(hi, 0)
        inner[d] = slice(lo, lo + shape[d])
        shape[d] += lo + hi
    if isinstance(value, Tensor) or not isinstance(value, numbers.Number):
        raise TypeError(f"pad: value must be a number; got {type(value).__name__}")
    fill = float(value) if is_floating(xp, x.dtype) else value  # type: ignore[arg-type]
    y = xp.full(tuple(shape), fill, dtype=x.dtype)
    where = tuple(inner)
    y[where] = x.data
    return op(y, (x,), lambda g: g[where], name="pad")


# ---------------------------------------------------------------------------------------------
# The method forms, attached to Tensor in this one place


def _softmax_method(self: Tensor, dim: int | None = None, *, axis: int | None = None) -> Tensor:
    """``x.softmax(dim)``: :func:`minigrad.functional.softmax` along ``dim``."""
    from .functional import softmax
    return softmax(self, axis if axis is not None else (-1 if dim is None else dim))


def _log_softmax_method(self: Tensor, dim: int | None = None, *,
                        axis: int | None = None) -> Tensor:
    """``x.log_softmax(dim)``: :func:`minigrad.functional.log_softmax` along ``dim``."""
    from .functional import log_softmax
    return log_softmax(self, axis if axis is not None else (-1 if dim is None else dim))


def _repeat_method(self: Tensor, *sizes: int) -> Tensor:
    return repeat(self, *sizes)


def _attach_methods() -> None:
    """Give Tensor the method forms of this module's functions (``x.split(2, dim=1)``, ...).

    The one place where this module changes :class:`Tensor`: each method is the function
    above with the tensor as its first argument, under PyTorch's method name.
    """
    for name, fn in (("split", split), ("chunk", chunk), ("flip", flip), ("sort", sort),
                     ("norm", norm), ("any", any), ("all", all), ("repeat", _repeat_method),
                     ("softmax", _softmax_method), ("log_softmax", _log_softmax_method)):
        if name not in Tensor.__dict__:
            setattr(Tensor, name, fn)


_attach_methods()
