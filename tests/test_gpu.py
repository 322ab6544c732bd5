"""The engine on a GPU through CuPy: skipped where CuPy cannot find a device."""
from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad.backend import cupy_available

pytestmark = pytest.mark.skipif(not cupy_available(),
                                reason="CuPy is not installed or sees no CUDA device")


def test_training_step_on_the_gpu_matches_numpy():
    import cupy as cp

    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(64, 2)), rng.integers(0, 2, size=64)
    init = [rng.normal(size=s) * 0.5 for s in [(2, 16), (16,), (16, 2), (2,)]]
    results = {}
    for device in ["cpu", "cuda"]:
        params = [mg.tensor(p, requires_grad=True, device=device) for p in init]
        xs = mg.tensor(x, device=device)
        ys = cp.asarray(y) if device == "cuda" else y
        for _ in range(10):
            w1, b1, w2, b2 = params
            loss = F.cross_entropy((xs @ w1 + b1).relu() @ w2 + b2, ys)
            loss.backward()
            with mg.no_grad():
                for p in params:
                    p.data -= 0.1 * p.grad
                    p.grad = None
        assert params[0].device == ("cpu" if device == "cpu" else "cuda:0")
        results[device] = [p.numpy() for p in params]
    for a, b in zip(results["cpu"], results["cuda"]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_to_cpu_round_trip():
    t = mg.tensor([1.0, 2.0]).to("cuda")
    assert t.device.startswith("cuda")
    np.testing.assert_array_equal(t.to("cpu").numpy(), [1.0, 2.0])
