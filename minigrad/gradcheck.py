"""Finite-difference gradient checking: the one home of finite differences in minigrad.

:func:`numerical_gradient` and :func:`numerical_vjp` work on plain arrays of any namespace
(the course's checks and the tests of the hand-written layers use them);
:func:`numerical_grad` and :func:`gradcheck` work on the engine's tensors.

The engine's gradient of a scalar ``f`` with respect to an input ``x`` should match the central
difference ``(f(x + eps) - f(x - eps)) / (2 eps)`` of every element of ``x``. It is computed in
float64, where ``eps = 1e-6`` leaves an error around 1e-9 for smooth functions.
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable

from .backend import Array, namespace
from .tensor import Tensor

__all__ = ["gradcheck", "GradcheckResult", "numerical_grad", "numerical_gradient",
           "numerical_vjp"]


def numerical_gradient(f: Callable[[Array], Any], x: Array, eps: float = 1e-6) -> Array:
    """Central differences ``(f(x + eps e_i) - f(x - eps e_i)) / (2 eps)`` for every element.

    ``f`` maps an array to a number. ``x`` is changed in place while this runs, one element at
    a time, and restored afterwards, so ``f`` may read it through an object that holds it
    (``lambda W: loss(layer)`` with ``W = layer.W``). The result is float64, shaped as ``x``.
    """
    xp = namespace(x)
    grad = xp.zeros(x.shape, dtype=xp.float64)
    for i in itertools.product(*(range(n) for n in x.shape)):
        old = x[i]
        x[i] = old + eps
        up = float(f(x))
        x[i] = old - eps
        down = float(f(x))
        x[i] = old
        grad[i] = (up - down) / (2 * eps)
    return grad


def numerical_vjp(f: Callable[..., Array], inputs: Sequence[Array], g: Array,
                  eps: float = 1e-6) -> list[Array]:
    """The vector-Jacobian product by finite differences: the gradient of
    ``sum(g * f(*inputs))`` with respect to each input, in float64.

    ``f`` gets float64 copies of the inputs, a fresh copy at every call, so an ``f`` that
    writes into its arguments changes nothing here.
    """
    xp = namespace(inputs[0]) if inputs else namespace(g)
    args = [xp.astype(xp.asarray(x), xp.float64, copy=True) for x in inputs]
    g = xp.astype(xp.asarray(g), xp.float64)
    grads = []
    for k in range(len(args)):
        def scalar(xk: Array, k: int = k) -> float:
            moved = [xp.asarray(a, copy=True) for a in args]
            moved[k] = xp.asarray(xk, copy=True)
            return float(xp.sum(g * xp.astype(xp.asarray(f(*moved)), xp.float64)))
        grads.append(numerical_gradient(scalar, args[k], eps))
    return grads


@dataclass
class GradcheckResult:
    """What :func:`gradcheck` found. True when every gradient agreed.

    When they did not, ``input`` and ``index`` name the first element that disagrees, and
    ``analytic``, ``numeric`` and ``error`` say by how much.
    """

    ok: bool
    input: int | None = None
    index: tuple[int, ...] | None = None
    analytic: float | None = None
    numeric: float | None = None
    error: float | None = None
    message: str = "all gradients agree"

    def __bool__(self) -> bool:
        return self.ok


def _float64(t: Tensor) -> Tensor:
    xp = t._xp
    return Tensor(xp.astype(t.data, xp.float64), requires_grad=True)


def _as_scalar(out: Tensor, seed: int = 0) -> Tensor:
    """Reduce a non-scalar output to a scalar with fixed random weights (all VJP entries matter)."""
    if out.size == 1:
        return out.sum()
    xp = out._xp
    # A fixed, irregular weight per element (no RNG needed, same on every namespace).
    w = xp.reshape(xp.sin(xp.arange(out.size, dtype=xp.float64) * 1.7 + 0.3 + seed), out.shape)
    return (out * Tensor(w)).sum()


def numerical_grad(fn: Callable[..., Tensor], inputs: list[Tensor], which: int,
                   eps: float = 1e-6) -> Any:
    """Central differences of ``_as_scalar(fn(*inputs))`` with respect to ``inputs[which]``."""
    x = inputs[which]
    xp = x._xp
    moved = xp.astype(x.data, xp.float64, copy=True)
    others = [t.detach() for t in inputs]

    def value(v: Array) -> float:
        args = [Tensor(v) if k == which else t for k, t in enumerate(others)]
        return float(_as_scalar(fn(*args)).data)

    return numerical_gradient(value, moved, eps)


def gradcheck(fn: Callable[..., Tensor], *inputs: Any, eps: float = 1e-6, atol: float = 1e-6,
              rtol: float = 1e-5, raise_on_fail: bool = False) -> GradcheckResult:
    """Compare the engine's gradients of ``fn(*inputs)`` with central differences.

    Every floating input is copied to float64 and checked element by element. Non-scalar
    outputs are reduced with fixed weights first. A gradient that is NaN or infinite (from
    backward or from the finite differences) never agrees.

    Returns
    -------
    GradcheckResult
        Truthy when all agree; otherwise names the input, the element and the difference.
    """
    tensors = [_float64(t if isinstance(t, Tensor) else Tensor(t)) for t in inputs]
    _as_scalar(fn(*tensors)).backward()
    for k, t in enumerate(tensors):
        xp = t._xp
        analytic = t.grad if t.grad is not None else xp.zeros_like(t.data)
        numeric = numerical_grad(fn, tensors, k, eps)
        err = xp.abs(analytic - numeric)
        # "not (err <= tolerance)" rather than "err > tolerance": a NaN or inf gradient, from
        # backward or from the differences, fails (NaN compares False with everything).
        bad = ~(err <= atol + rtol * xp.abs(numeric)) | ~xp.isfinite(analytic)
        if bool(xp.any(bad)):
            excess = xp.where(bad, err - (atol + rtol * xp.abs(numeric)), -xp.inf)
            flat = xp.reshape(xp.where(xp.isnan(excess), xp.inf, excess), (-1,))
            pos = int(xp.argmax(flat))
            index = tuple(_unravel(pos, t.shape))
            a = float(xp.reshape(analytic, (-1,))[pos])
            n = float(xp.reshape(numeric, (-1,))[pos])
            result = GradcheckResult(
                False, k, index, a, n, abs(a - n),
                f"gradcheck: input {k} (shape {t.shape}), element {index}: backward gave "
                f"{a:.6g}, finite differences {n:.6g} (difference {abs(a - n):.3g})")
            if raise_on_fail:
                raise AssertionError(result.message)
            return result
    return GradcheckResult(True)


def _unravel(pos: int, shape: tuple[int, ...]) -> list[int]:
    index = []
    for n in reversed(shape):
        index.append(pos % n)
        pos //= n
    return index[::-1]
