"""Run engine tests on NumPy and on array-api-strict (where a hidden trip through NumPy raises).

The namespace-parametrised tests run on ``NAMESPACES``: NumPy and array-api-strict, unless the
environment variable ``MINIGRAD_TEST_NAMESPACES`` names others, comma-separated, from
``numpy``, ``strict`` and ``cupy``. ``MINIGRAD_TEST_NAMESPACES=cupy`` runs them on a GPU
(``bench/gpu_check.sh`` does); asking for cupy where CuPy cannot run fails loudly rather than
skipping, so a GPU run cannot pass by testing nothing.
"""
from __future__ import annotations

import contextlib
import os
from typing import Iterator

import array_api_strict
import numpy as np

import minigrad as mg
from minigrad.backend import cuda_problem

KNOWN_NAMESPACES = ("numpy", "strict", "cupy")


def _namespaces_from_env() -> list[str]:
    names = [n.strip() for n in os.environ.get("MINIGRAD_TEST_NAMESPACES", "numpy,strict")
             .split(",") if n.strip()]
    unknown = [n for n in names if n not in KNOWN_NAMESPACES]
    if unknown or not names:
        raise ValueError(f"MINIGRAD_TEST_NAMESPACES: expected names from {KNOWN_NAMESPACES}, "
                         f"comma-separated; got {os.environ.get('MINIGRAD_TEST_NAMESPACES')!r}")
    if "cupy" in names and cuda_problem() is not None:
        raise RuntimeError(f"MINIGRAD_TEST_NAMESPACES asks for cupy, but {cuda_problem()}")
    return names


NAMESPACES = _namespaces_from_env()


@contextlib.contextmanager
def namespace(name: str) -> Iterator[object]:
    """Yield the array namespace ``name``; for "strict", converting its arrays to NumPy raises."""
    if name == "numpy":
        yield np
        return
    if name == "cupy":  # CuPy itself refuses implicit conversion to NumPy (TypeError)
        import cupy
        yield cupy
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
    if xp.__name__ == "cupy":
        return xp.asnumpy(array)
    return np.asarray(array._array)  # array-api-strict keeps a NumPy array inside


def mlp_sgd_step(params: list[mg.Tensor], x: mg.Tensor, y: mg.Tensor,
                 lr: float = 0.1) -> mg.Tensor:
    """One step of plain SGD on a 2-layer ReLU network ``params = [w1, b1, w2, b2]`` with the
    cross-entropy loss, written with tensors alone (no nn, no optim); returns the loss."""
    w1, b1, w2, b2 = params
    loss = mg.functional.cross_entropy((x @ w1 + b1).relu() @ w2 + b2, y)
    loss.backward()
    with mg.no_grad():
        for p in params:
            p.data -= lr * p.grad
            p.grad = None
    return loss


def layer_function(layer, call):
    """``fn(*inputs, *parameters)``: ``call(layer, *inputs)`` with the given tensors put in
    place of the layer's parameters (dotted names reach sub-layers), for ``mg.gradcheck`` of
    the inputs and every parameter at once."""
    names = [n for n, _ in layer.named_parameters()]

    def fn(*tensors):
        k = len(tensors) - len(names)
        for dotted, p in zip(names, tensors[k:]):
            owner, _, name = dotted.rpartition(".")
            module = layer
            for part in owner.split(".") if owner else ():
                module = getattr(module, part)
            setattr(module, name, p)
        return call(layer, *tensors[:k])
    return fn
