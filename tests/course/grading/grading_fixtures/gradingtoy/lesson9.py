"""Checks of the toy lesson 9 (double, mul with its VJP, mean with its VJP)."""
import numpy as np

import minigrad as mg

EXERCISES = {
    "9.1": {"title": "double", "points": 1},
    "9.2": {"title": "mul and its VJP", "points": 2},
    "9.3": {"title": "mean and its VJP", "points": 1},
}


def _fail(message):
    from gradingtoy import CheckFailed
    raise CheckFailed(message)


def double(fn):
    from gradingtoy import refuse_minigrad
    refuse_minigrad(fn, "double")
    for x in (0.0, 1.5, -3.0):
        got = fn(x)
        if got != 2 * x:
            _fail(f"double({x}): expected {2 * x}, got {got}")
    print("double: 3 cases agree")


def mul(fn):
    rng = np.random.default_rng(0)
    a = mg.tensor(rng.normal(size=(3, 1)), requires_grad=True)
    b = mg.tensor(rng.normal(size=(1, 4)), requires_grad=True)
    out = fn(a, b)
    if not np.allclose(out.data, a.data * b.data):
        _fail("mul: the forward value is wrong")
    out.backward(np.ones((3, 4)))
    if a.grad is None or a.grad.shape != (3, 1):
        _fail(f"mul: the gradient for a has shape {getattr(a.grad, 'shape', None)} but a has "
              "shape (3, 1): did you unbroadcast?")
    if not np.allclose(a.grad, b.data.sum(axis=1, keepdims=True).T * np.ones((3, 1))):
        _fail("mul: the gradient for a is wrong (expected g * b, summed over the broadcast axis)")
    if not np.allclose(b.grad, a.data.sum(axis=0, keepdims=True) * np.ones((1, 4))):
        _fail("mul: the gradient for b is wrong (expected g * a, summed over the broadcast axis)")
    print("mul: forward and both gradients agree on shapes (3, 1) x (1, 4)")


def mean(fn):
    x = mg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    out = fn(x)
    if not np.allclose(out.data, 2.5):
        _fail(f"mean: expected 2.5, got {out.data}")
    out.backward()
    if not np.allclose(x.grad, np.full((2, 3), 1 / 6)):
        _fail(f"mean: the gradient should be 1/6 everywhere; got {x.grad}")
    print("mean: value and gradient agree")
