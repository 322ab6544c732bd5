"""Initial values for parameters, as ``torch.nn.init``: each function fills a tensor in place
(under ``no_grad``) and returns it.

Random values come from an explicit ``generator=`` (a ``numpy.random.Generator``, or a seed),
never from hidden global state; they are drawn in float64 and rounded to the tensor's dtype,
so a float32 and a float64 tensor filled from the same seed hold the same numbers. PyTorch's
own generator gives other numbers: what is the same is the distribution (bounds, standard
deviation) and the fan and gain arithmetic.

>>> import minigrad as mg
>>> w = mg.nn.Parameter(mg.zeros((3, 4)))
>>> _ = mg.nn.init.kaiming_uniform_(w, nonlinearity="relu", generator=0)
>>> bool((abs(w.data) <= (6 / 4) ** 0.5).all())
True
"""
from __future__ import annotations

import math
import numbers
from typing import Any

from .. import backend
from ..tensor import Tensor, no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "zeros_", "ones_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_"]


def _check(tensor: Any, name: str) -> Tensor:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{name}: expected a Tensor (a Parameter); got {type(tensor).__name__}")
    return tensor


def _fill(tensor: Tensor, values: Any) -> Tensor:
    """Write ``values`` (a NumPy array or a number) into ``tensor``'s own array, in place."""
    with no_grad():
        if hasattr(values, "shape"):
            values = backend.copy_to(values, like=tensor.data, dtype=tensor.dtype)
        tensor.data[...] = values
    return tensor


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity, as ``torch.nn.init.calculate_gain``:
    1 for linear, conv and sigmoid, 5/3 for tanh, sqrt(2) for relu,
    ``sqrt(2 / (1 + slope**2))`` for leaky_relu (``param``: the slope, 0.01 by default),
    3/4 for selu."""
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, numbers.Real) and not isinstance(param, bool):
            slope = float(param)
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fans(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out): ``shape[1] * receptive`` and ``shape[0] * receptive``, as PyTorch."""
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         f"dimensions (got shape {tensor.shape})")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _fans(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with values drawn uniformly from ``[a, b)``."""
    _check(tensor, "uniform_")
    rng = backend.default_rng(generator)
    return _fill(tensor, rng.uniform(a, b, size=tensor.shape))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with values drawn from the normal distribution ``N(mean, std**2)``."""
    _check(tensor, "normal_")
    if std < 0:
        raise ValueError(f"normal_: std must be at least 0; got {std}")
    rng = backend.default_rng(generator)
    return _fill(tensor, rng.normal(mean, std, size=tensor.shape))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    return _fill(_check(tensor, "constant_"), val)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with 0."""
    return _fill(_check(tensor, "zeros_"), 0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with 1."""
    return _fill(_check(tensor, "ones_"), 1)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot's uniform initialisation: ``U(-a, a)`` with
    ``a = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = _fans(_check(tensor, "xavier_uniform_"))
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot's normal initialisation: ``N(0, std**2)`` with
    ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _fans(_check(tensor, "xavier_normal_"))
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """He's uniform initialisation: ``U(-bound, bound)`` with
    ``bound = gain * sqrt(3 / fan)``, ``gain = calculate_gain(nonlinearity, a)``.

    ``a=sqrt(5)`` with the default leaky_relu gives PyTorch's default of Linear and Conv2d,
    ``bound = 1 / sqrt(fan_in)``."""
    fan = _fan(_check(tensor, "kaiming_uniform_"), mode)
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """He's normal initialisation: ``N(0, std**2)`` with ``std = gain / sqrt(fan)``."""
    fan = _fan(_check(tensor, "kaiming_normal_"), mode)
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)
