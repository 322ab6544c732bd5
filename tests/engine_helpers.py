"""Run engine tests on NumPy and on array-api-strict (where a hidden trip through NumPy raises)."""
from __future__ import annotations

import contextlib
from typing import Iterator

import array_api_strict
import numpy as np

import minigrad as mg

NAMESPACES = ["numpy", "strict"]


@contextlib.contextmanager
def namespace(name: str) -> Iterator[object]:
    """Yield the array namespace ``name``; for "strict", converting its arrays to NumPy raises."""
    if name == "numpy":
        yield np
        return
    cls = type(array_api_strict.asarray(0.0))
    saved = cls.__array__

    def refuse(self, *args, **kwargs):
        raise AssertionError("the engine converted an array-api-strict array to NumPy")

    cls.__array__ = refuse
    try:
        yield array_api_strict
    finally:
        cls.__array__ = saved


def make(xp, values, requires_grad: bool = True, dtype: str = "float64") -> mg.Tensor:
    """A tensor of ``values`` (a NumPy array or list) living in namespace ``xp``."""
    values = np.asarray(values, dtype=dtype)
    data = values if xp is np else xp.asarray(values)
    return mg.Tensor(data, requires_grad=requires_grad)


def host(xp, array) -> np.ndarray:
    """Copy an array back to NumPy for comparison (outside the guarded region's rules)."""
    if xp is np:
        return np.asarray(array)
    return np.asarray(array._array)  # array-api-strict keeps a NumPy array inside
