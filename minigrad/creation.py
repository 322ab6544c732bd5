"""Making tensors: ``tensor`` from data, and from nothing ``zeros``, ``ones``, ``full``,
``arange``, ``eye``, ``rand``, ``randn`` and the ``*_like`` forms, as in PyTorch.

Every function of the second kind takes ``dtype`` (float64 by default, NumPy's default float,
kept on purpose: the course compares numbers exactly), ``device`` (``"cpu"`` or ``"cuda[:N]"``)
and ``requires_grad``. Random values come from a NumPy ``Generator``: pass ``generator=`` a seed or
a Generator, and the same seed gives the same numbers on every device (they are drawn on the
CPU in float64, then converted and moved).
"""
from __future__ import annotations

import math
import numbers
from typing import Any

from . import backend
from .tensor import Tensor

__all__ = ["tensor", "zeros", "ones", "full", "arange", "eye", "rand", "randn",
           "zeros_like", "ones_like", "full_like"]


def tensor(data: Any, requires_grad: bool = False, dtype: Any = None,
           device: str | None = None) -> Tensor:
    """Make a tensor, as ``torch.tensor``: ``tensor([1.0, 2.0], requires_grad=True)``.

    ``data`` is a number, a nested list of numbers or an array. Python floats give float64
    (NumPy's default, kept on purpose), ints give int64; strings, ``None`` and other objects
    are refused.
    """
    t = Tensor(data, requires_grad=requires_grad, dtype=dtype)
    return t.to(device) if device is not None else t


def _size(size: tuple[Any, ...], name: str) -> tuple[int, ...]:
    """``zeros(2, 3)`` and ``zeros((2, 3))`` both mean the shape (2, 3); sizes are ints (NumPy's
    too, as PyTorch), at least 0."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for n in size:
        if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 0:
            raise ValueError(f"{name}: sizes must be non-negative ints; got {n!r} in {size}")
    return tuple(int(n) for n in size)


def _fill_value(value: Any, name: str) -> Any:
    """A fill value: a number (bool, int, float, a NumPy scalar; NaN and inf included)."""
    if isinstance(value, numbers.Real) or type(value).__name__ in ("bool", "bool_"):
        return value  # (NumPy's float and int scalars are numbers.Real; its bool is not)
    raise TypeError(f"{name}: fill_value must be a number; got {type(value).__name__} "
                    f"{value!r:.40}")


def _make(values: Any, dtype: Any, device: str | None, requires_grad: bool) -> Tensor:
    """A tensor of NumPy ``values`` in ``dtype`` on ``device``."""
    data = backend.copy_to(values, dtype=dtype, device=device or "cpu")
    return Tensor(data, requires_grad=requires_grad)


def zeros(*size: Any, dtype: Any = "float64", device: str | None = None,
          requires_grad: bool = False) -> Tensor:
    """A tensor of zeros of the given shape: ``zeros(2, 3)`` or ``zeros((2, 3))``."""
    return full(_size(size, "zeros"), 0, dtype=dtype, device=device,
                requires_grad=requires_grad)


def ones(*size: Any, dtype: Any = "float64", device: str | None = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of ones of the given shape."""
    return full(_size(size, "ones"), 1, dtype=dtype, device=device, requires_grad=requires_grad)


def full(size: Any, fill_value: float, *, dtype: Any = None, device: str | None = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value``.

    Without ``dtype`` it follows the value, as PyTorch: an int gives int64, a bool bool, a
    float float64.
    """
    if not isinstance(size, (numbers.Integral, tuple, list)):
        raise TypeError(f"full: size must be an int or a tuple of ints; got "
                        f"{type(size).__name__}")
    size = _size((size,) if isinstance(size, numbers.Integral) else tuple(size), "full")
    fill_value = _fill_value(fill_value, "full")
    if dtype is None:
        dtype = "bool" if isinstance(fill_value, bool) else \
            "int64" if isinstance(fill_value, int) else "float64"
    xp = backend.namespace(backend.asarray(0))  # NumPy: made on the CPU, then moved
    return _make(xp.full(size, fill_value), dtype, device, requires_grad)


def arange(start: float, end: float | None = None, step: float = 1, *, dtype: Any = None,
           device: str | None = None, requires_grad: bool = False) -> Tensor:
    """Values from ``start`` up to (not including) ``end``, ``step`` apart.

    ``arange(5)`` is ``0..4``. Integer arguments give int64, any float gives float64, as
    PyTorch (with float64 for its float32 default).
    """
    if end is None:
        start, end = 0, start
    for arg, v in (("start", start), ("end", end), ("step", step)):
        if not isinstance(v, numbers.Real) or isinstance(v, bool):
            raise TypeError(f"arange: {arg} must be a number; got {type(v).__name__} {v!r:.40}")
        if not math.isfinite(v):
            raise ValueError(f"arange: {arg} must be finite; got {v}")
    if step == 0:
        raise ValueError("arange: step must not be 0")
    if (end - start) * step < 0:  # as PyTorch: an empty range only when start == end
        raise ValueError(f"arange: the range from {start} to {end} goes against the step {step} "
                         "(upper and lower bound inconsistent with the step's sign)")
    if dtype is None:
        dtype = "int64" if all(isinstance(v, int) for v in (start, end, step)) else "float64"
    xp = backend.namespace(backend.asarray(0))
    values = xp.arange(start, end, step)
    return _make(values, dtype, device, requires_grad)


def eye(n: int, m: int | None = None, *, dtype: Any = "float64", device: str | None = None,
        requires_grad: bool = False) -> Tensor:
    """The ``n x m`` identity matrix (``m = n`` by default)."""
    for arg, k in (("n", n), ("m", m)):
        if k is None and arg == "m":
            continue
        if not isinstance(k, numbers.Integral) or isinstance(k, bool):
            raise TypeError(f"eye: {arg} must be an int; got {k!r}")
        if k < 0:
            raise ValueError(f"eye: {arg} must be non-negative; got {k}")
    xp = backend.namespace(backend.asarray(0))
    return _make(xp.eye(n, n if m is None else m), dtype, device, requires_grad)


def rand(*size: Any, generator: Any = None, dtype: Any = "float64", device: str | None = None,
         requires_grad: bool = False) -> Tensor:
    """Values drawn uniformly from [0, 1) by ``generator`` (a seed or a NumPy Generator).

    PyTorch's generator is a different algorithm: the same seed gives other numbers there.
    """
    values = backend.default_rng(generator).random(_size(size, "rand"))
    return _make(values, dtype, device, requires_grad)


def randn(*size: Any, generator: Any = None, dtype: Any = "float64",
          device: str | None = None, requires_grad: bool = False) -> Tensor:
    """Values drawn from the standard normal distribution by ``generator`` (seed or Generator)."""
    values = backend.default_rng(generator).standard_normal(_size(size, "randn"))
    return _make(values, dtype, device, requires_grad)


def _like(x: Tensor, value: Any, dtype: Any, requires_grad: bool, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a Tensor; got {type(x).__name__}")
    xp = x._xp
    dtype = x.dtype if dtype is None else backend.resolve_dtype(xp, dtype)
    return Tensor(xp.full(x.shape, value, dtype=dtype), requires_grad=requires_grad)


def zeros_like(x: Tensor, *, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Zeros of ``x``'s shape, dtype (unless given) and device."""
    return _like(x, 0, dtype, requires_grad, "zeros_like")


def ones_like(x: Tensor, *, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Ones of ``x``'s shape, dtype (unless given) and device."""
    return _like(x, 1, dtype, requires_grad, "ones_like")


def full_like(x: Tensor, fill_value: float, *, dtype: Any = None,
              requires_grad: bool = False) -> Tensor:
    """``fill_value`` in ``x``'s shape, dtype (unless given) and device."""
    return _like(x, _fill_value(fill_value, "full_like"), dtype, requires_grad, "full_like")
