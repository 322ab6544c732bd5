"""More elementwise operations: the functions the course does not build (``sqrt``,
``sigmoid``, ``sin``, ``clamp``, ...), and ``where``, ``maximum``, ``minimum``, ``//``, ``%``.

Written as the core's (:mod:`minigrad.tensor`): the forward on arrays through the array's own
namespace, and one :func:`~minigrad.tensor.op` whose VJP is a formula in the output gradient
``g`` and the saved arrays. Each function takes the tensor first, so the same function is the
method: ``mg.sin(x)`` and ``x.sin()`` (attached at the end of this module, in one place).
"""
from __future__ import annotations

import numbers
from typing import Any

from .backend import Array, asarray, check_same_device, is_floating, namespace, times_mask
from .broadcast import broadcast_shapes, unbroadcast
from .dtypes import _kind
from .tensor import (Tensor, _attach, _binary, _host_values, _lift, _operands, _raw, _scalar,
                     _tensor_arg, op)

__all__ = ["sqrt", "sigmoid", "log1p", "expm1", "rsqrt", "sin", "cos", "tan", "leaky_relu",
           "abs", "clamp", "clip", "sign", "floor", "ceil", "round", "maximum", "minimum", "where"]


def sqrt(x: Tensor) -> Tensor:
    """``x ** 0.5``; gradient ``1 / (2 * y)``."""
    y = _tensor_arg(x, "sqrt")._xp.sqrt(x.data)
    return op(y, (x,), lambda g, y: g / (2 * y), saved=(y,), name="sqrt")


def sigmoid(x: Tensor) -> Tensor:
    """``1 / (1 + exp(-x))``, written with ``tanh`` so that it never overflows; gradient
    ``y * (1 - y)``."""
    y = 0.5 * (_tensor_arg(x, "sigmoid")._xp.tanh(0.5 * x.data) + 1)
    return op(y, (x,), lambda g, y: g * y * (1 - y), saved=(y,), name="sigmoid")


def log1p(x: Tensor) -> Tensor:
    """``log(1 + x)``, accurate for small ``x``; gradient ``1 / (1 + x)``."""
    x = _tensor_arg(x, "log1p")
    return op(x._xp.log1p(x.data), (x,), lambda g, x: g / (1 + x), saved=(x.data,), name="log1p")


def expm1(x: Tensor) -> Tensor:
    """``exp(x) - 1``, accurate for small ``x``; gradient ``exp(x) = y + 1``."""
    y = _tensor_arg(x, "expm1")._xp.expm1(x.data)
    return op(y, (x,), lambda g, y: g * (y + 1), saved=(y,), name="expm1")


def rsqrt(x: Tensor) -> Tensor:
    """``1 / sqrt(x)``; gradient ``-y**3 / 2``."""
    y = 1 / _tensor_arg(x, "rsqrt")._xp.sqrt(x.data)
    return op(y, (x,), lambda g, y: -0.5 * g * y * y * y, saved=(y,), name="rsqrt")


def sin(x: Tensor) -> Tensor:
    xp = _tensor_arg(x, "sin")._xp
    return op(xp.sin(x.data), (x,), lambda g, x: g * xp.cos(x), saved=(x.data,), name="sin")


def cos(x: Tensor) -> Tensor:
    xp = _tensor_arg(x, "cos")._xp
    return op(xp.cos(x.data), (x,), lambda g, x: -g * xp.sin(x), saved=(x.data,), name="cos")


def tan(x: Tensor) -> Tensor:
    y = _tensor_arg(x, "tan")._xp.tan(x.data)
    return op(y, (x,), lambda g, y: g * (1 + y * y), saved=(y,), name="tan")


def leaky_relu(x: Tensor, slope: float = 0.01) -> Tensor:
    """``x`` where ``x > 0``, else ``slope * x``; gradient 1 or ``slope``."""
    t = _tensor_arg(x, "leaky_relu")
    if _scalar(slope) is None:
        raise TypeError(f"leaky_relu: the slope (negative_slope) must be a number; got "
                        f"{slope!r:.40}")
    xp, d = t._xp, t.data
    return op(xp.where(d > 0, d, slope * d), (t,),
              lambda g, x: xp.where(x > 0, g, slope * g), saved=(d,), name="leaky_relu")


def abs(x: Tensor) -> Tensor:  # noqa: A001 - PyTorch's name
    """``|x|``; gradient ``sign(x)``, so 0 at 0 and at NaN (as PyTorch)."""
    xp = _tensor_arg(x, "abs")._xp
    return op(xp.abs(x.data), (x,), lambda g, x: g * xp.where(xp.isnan(x), 0.0, xp.sign(x)),
              saved=(x.data,), name="abs")


def clamp(x: Tensor, min: float | Tensor | None = None,  # noqa: A002 - PyTorch's names
          max: float | Tensor | None = None) -> Tensor:  # noqa: A002
    """Limit the values to ``[min, max]`` (either may be ``None``); also named ``clip``.

    The gradient passes where ``min <= x <= max`` (bounds included) and is 0 outside, as
    PyTorch. As in PyTorch, ``min > max`` gives ``max`` everywhere. The bounds are numbers,
    or tensors that broadcast with ``x``; a tensor bound gets the gradient where it is the
    result (``min`` where ``x < min <= max``, ``max`` where ``max(x, min) > max``), the
    same split as PyTorch's.
    """
    t = _tensor_arg(x, "clamp")
    if min is None and max is None:
        raise ValueError("clamp: give at least one of min and max; got neither")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        broadcast_shapes(t.shape, *[b.shape for b in (min, max) if isinstance(b, Tensor)],
                         op="clamp (x, min and max)")  # a bound of the wrong shape: say so
        # clamp = min(max(x, lo), hi), each step a where() whose ties go to x
        y = t if min is None else where(t.data >= _raw(min), t, min)
        return y if max is None else where(y.data > _raw(max), max, y)
    for name, bound in (("min", min), ("max", max)):
        if bound is not None and _scalar(bound) is None:
            raise TypeError(f"clamp: {name} must be a number, a tensor or None; got "
                            f"{type(bound).__name__}")
    xp, d = t._xp, t.data
    y = xp.full_like(d, max) if max is not None and min is not None and min > max else \
        xp.clip(d, min, max)
    lo = float("-inf") if min is None else min
    hi = float("inf") if max is None else max
    return op(y, (t,), lambda g, x: times_mask(g, (x >= lo) & (x <= hi)), saved=(d,),
              name="clamp")


clip = clamp


# Step functions: their derivative is 0 wherever it exists; PyTorch gives a zero gradient.

def _step(t: Tensor, y: Array, name: str) -> Tensor:
    """The output of a step function (sign, floor, ...): its gradient is 0, as PyTorch."""
    if not is_floating(t._xp, t.dtype):
        return Tensor(y)
    xp = t._xp
    return op(y, (t,), lambda g: xp.zeros_like(g), name=name)


def sign(x: Tensor) -> Tensor:
    """-1, 0 or 1, and 0 for NaN (as PyTorch; NumPy gives NaN). Gradient 0 everywhere."""
    xp, d = _tensor_arg(x, "sign")._xp, x.data
    y = xp.sign(d)
    if is_floating(xp, d.dtype):
        y = xp.where(xp.isnan(d), xp.zeros_like(y), y)
    return _step(x, y, "sign")


def floor(x: Tensor) -> Tensor:
    """Round down. Gradient 0 everywhere (as PyTorch)."""
    return _step(x, _tensor_arg(x, "floor")._xp.floor(x.data), "floor")


def ceil(x: Tensor) -> Tensor:
    """Round up. Gradient 0 everywhere (as PyTorch)."""
    return _step(x, _tensor_arg(x, "ceil")._xp.ceil(x.data), "ceil")


def round(x: Tensor, decimals: int = 0) -> Tensor:  # noqa: A001 - PyTorch's name
    """Round half to even (as NumPy and PyTorch), to ``decimals`` places (an int; negative
    rounds to tens, hundreds, ...). Gradient 0."""
    xp = _tensor_arg(x, "round")._xp
    if not isinstance(decimals, numbers.Integral) or isinstance(decimals, bool):
        raise TypeError(f"round: decimals must be an int; got {decimals!r}")
    if decimals and not is_floating(xp, x.dtype):
        raise TypeError(f"round: decimals={decimals} needs a floating-point tensor; got dtype "
                        f"{x.dtype} (PyTorch does not implement it either)")
    if decimals == 0:
        return _step(x, xp.round(x.data), "round")
    scale = 10.0 ** decimals
    return _step(x, xp.round(x.data * scale) / scale, "round")


def _pow_tensor(x: Tensor, other: Any) -> Tensor:
    """``x ** e`` for a tensor or array exponent (a number's is the core's ``__pow__``)."""
    xp = x._xp
    a, b = _operands(x, other)
    sa, sb = a.shape, b.shape
    y = _binary(a, b, "pow", lambda x, e: x ** e)
    # (the inner where()s only keep 0 ** -1 and log(0) from being computed where the
    # outer where() throws them away: same values, no NumPy warnings)
    if not b.requires_grad:  # only the base needs a gradient (log of x may not exist)
        return op(y, (a,), lambda g, x, e: unbroadcast(
            xp.where(e == 0, 0.0, g * e * x ** xp.where(e == 0, 1.0, e - 1)), sa),
            saved=(a.data, b.data), name="pow")
    return op(y, (a, b),  # x ** e: e * x ** (e - 1) for x, x ** e * log(x) for e
              lambda g, x, e, y: (
                  unbroadcast(xp.where(e == 0, 0.0, g * e * x ** xp.where(e == 0, 1.0, e - 1)),
                              sa),
                  unbroadcast(xp.where((x == 0) & (e >= 0), 0.0, g * y * xp.log(
                      xp.where((x == 0) & (e >= 0), 1.0, x))), sb)),
              saved=(a.data, b.data, y), name="pow")


# ``//`` and ``%``

def _floordiv(a: Tensor, other: Any) -> Tensor:
    """``floor(a / b)``. No gradient: a step function (PyTorch does not differentiate it).

    Integers divided by an integer 0 raise ``ZeroDivisionError``, as PyTorch (NumPy would
    give 0); floats give ``inf`` or NaN. On a GPU the divisor is not read (that would wait
    for the device): there an integer 0 divisor gives CuPy's answer, 0."""
    a, b = _operands(a, other)
    _check_divisor(a, b, "floordiv")
    return Tensor(_binary(a, b, "floordiv", lambda x, y: x // y))


def _mod(a: Tensor, other: Any) -> Tensor:
    """``a - floor(a / b) * b`` (the sign of ``b``, as Python and PyTorch's ``remainder``).

    Gradient: ``g`` for ``a`` and ``-g * floor(a / b)`` for ``b``, as PyTorch. Integers
    modulo an integer 0 raise ``ZeroDivisionError``, as PyTorch (NumPy would give 0).
    """
    xp = a._xp
    c = _scalar(other)
    if c is not None:
        if c == 0 and type(c) is int and _kind(xp, a.dtype) < 2:
            raise ZeroDivisionError(f"mod: integer modulo by zero (the divisor is {other!r}); "
                                    "PyTorch raises too. Use floats for NaN")
        return op(a.data % c, (a,), lambda g: g, name="mod")
    a, b = _operands(a, other)
    _check_divisor(a, b, "mod")
    sa, sb = a.shape, b.shape
    return op(_binary(a, b, "mod", lambda x, y: x % y), (a, b),
              lambda g, x, y: (unbroadcast(g, sa), unbroadcast(-g * xp.floor(x / y), sb)),
              saved=(a.data, b.data), name="mod")


def _check_divisor(a: Tensor, b: Tensor, name: str) -> None:
    """Integer division (``//``, ``%``) by 0 raises ``ZeroDivisionError``, as PyTorch (NumPy
    gives 0 with a warning). Only arrays in host memory are read (on a GPU the read would wait)."""
    xp = b._xp
    if _kind(xp, b.dtype) < 2 and _host_values(b.data) and bool(xp.any(b.data == 0)):
        raise ZeroDivisionError(f"{name}: integer division by zero (the divisor of shape "
                                f"{b.shape} holds a 0); PyTorch raises too. Divide floats for "
                                "inf or NaN")


# Choosing between two operands

def maximum(a: Any, b: Any) -> Tensor:
    """Elementwise larger of ``a`` and ``b``; at ties each gets half the gradient (as PyTorch).

    At least one of them must be a tensor; the other may be a number or an array.
    """
    return _pick(a, b, "maximum")


def minimum(a: Any, b: Any) -> Tensor:
    """Elementwise smaller of ``a`` and ``b``; at ties each gets half the gradient."""
    return _pick(a, b, "minimum")


def _pick(a: Any, b: Any, kind: str) -> Tensor:
    a, b = _operands(a, b, kind)
    xp, sa, sb = a._xp, a.shape, b.shape
    y = _binary(a, b, kind, xp.maximum if kind == "maximum" else xp.minimum)

    def vjp(g: Array, x: Array, w: Array) -> tuple[Any, ...]:
        # PyTorch's rule: each side gets g unless it lost (half at a tie). A NaN loses to
        # nothing and beats nothing, so at a NaN both sides get g.
        a_lost, b_lost = (x < w, x > w) if kind == "maximum" else (x > w, x < w)
        tie = x == w
        half = 0.5 * g
        return (unbroadcast(xp.where(tie, half, xp.where(a_lost, 0.0, g)), sa),
                unbroadcast(xp.where(tie, half, xp.where(b_lost, 0.0, g)), sb))

    return op(y, (a, b), vjp, saved=(a.data, b.data), name=kind)


def where(condition: Any, a: Any, b: Any) -> Tensor:
    """``a`` where ``condition`` holds, else ``b``; each gets the gradient where it was chosen.

    ``a`` and ``b`` may be tensors, arrays or numbers (``where(mask, 1.0, 0.0)`` is a tensor,
    float64 by default, as for every Python float here).
    """
    cond = _raw(condition)
    if isinstance(cond, (list, bool)):
        cond = asarray(cond)
    if not hasattr(cond, "dtype") or not namespace(cond).isdtype(cond.dtype, "bool"):
        raise TypeError(f"where: condition must be a boolean tensor or array; got "
                        f"{getattr(cond, 'dtype', type(cond).__name__)}")
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = Tensor(asarray(a, like=cond))
    a, b = _operands(a, b, "where")
    xp = a._xp
    sa, sb = a.shape, b.shape
    try:
        y = xp.where(cond, a.data, b.data)
    except (TypeError, ValueError):
        check_same_device("where", a.data, b.data)
        broadcast_shapes(tuple(cond.shape), sa, sb, op="where (condition, a and b)")
        raise
    return op(y, (a, b), lambda g: (unbroadcast(xp.where(cond, g, 0), sa),
                                    unbroadcast(xp.where(cond, 0, g), sb)), name="where")


_attach(sqrt=sqrt, sigmoid=sigmoid, log1p=log1p, expm1=expm1, rsqrt=rsqrt, sin=sin, cos=cos,
        tan=tan, leaky_relu=leaky_relu, abs=abs, __abs__=abs, clamp=clamp, clip=clamp, sign=sign, floor=floor, ceil=ceil,
        round=round, _pow_tensor=_pow_tensor, __floordiv__=_floordiv, __mod__=_mod,
        __rfloordiv__=lambda self, other: _lift(other, self) // self,
        __rmod__=lambda self, other: _lift(other, self) % self)
