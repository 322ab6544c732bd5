"""minigrad.graph.draw: one box per tensor with its operation and shape, arrows from parents,
the backward order and the gradients on request; for the engine's Tensor and for a Tensor
built like lesson 1's (the checks' reference Tensor)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch

from minigrad import Tensor, graph
from minigrad.course.checks.lesson1 import ReferenceTensor


def _texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def _boxes(ax) -> list:
    return [p for p in ax.patches if isinstance(p, FancyBboxPatch)]


def _arrows(ax) -> int:
    return sum(1 for t in ax.texts if getattr(t, "arrow_patch", None) is not None)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_engine_graph_has_a_box_per_tensor_and_an_arrow_per_parent():
    a = Tensor([1.0, 2.0], requires_grad=True)
    w = Tensor([3.0, -1.0], requires_grad=True)
    z = (a * (a * w).tanh()).sum()
    ax = graph.draw(z, names={a: "a", w: "w"})
    assert len(_boxes(ax)) == 6                      # a, w, mul, tanh, mul, sum
    assert _arrows(ax) == 6                          # a->mul, w->mul, mul->tanh, a->mul, tanh->mul, mul->sum
    labels = _texts(ax)
    assert "a\n(2,)" in labels and "w\n(2,)" in labels
    assert "sum\n()" in labels and "tanh\n(2,)" in labels
    assert sum(t == "mul\n(2,)" for t in labels) == 2


def test_order_numbers_the_boxes_as_backward_visits_them_and_grads_are_shown():
    a = Tensor([1.0, 2.0], requires_grad=True)
    z = (a * a.tanh()).sum()
    z.backward()
    ax = graph.draw(z, order=True, grads=True)
    labels = _texts(ax)
    assert sorted(t for t in labels if t.isdigit()) == ["1", "2", "3", "4"]
    x = np.array([1.0, 2.0])
    expected = np.tanh(x) + x * (1 - np.tanh(x) ** 2)   # d/dx of x tanh(x)
    grad_text = next(t for t in labels if t.startswith("grad"))
    assert grad_text == "grad [" + ", ".join(f"{v:.3g}" for v in expected) + "]"


def test_drawing_a_lesson_one_tensor_reads_parents_and_the_closure_s_function():
    T = ReferenceTensor
    x = T([1.0, -2.0, 3.0], name="x")

    def mul(a, b):
        return T(a.data * b.data, (a, b), lambda g: (g * b.data, g * a.data))

    def tanh(a):
        y = np.tanh(a.data)
        return T(y, (a,), lambda g: (g * (1 - y**2),))

    z = mul(x, tanh(x))                              # x is reached early, by a shortcut
    _, ax = plt.subplots()
    assert graph.draw(z, ax=ax, order=True, title="shortcut") is ax
    labels = _texts(ax)
    assert "x\n(3,)" in labels and "tanh\n(3,)" in labels and "mul\n(3,)" in labels
    assert len(_boxes(ax)) == 3 and _arrows(ax) == 3
    # backward visits mul, then tanh, then x: x after every tensor computed from it
    numbers = {t.get_text(): t.get_position() for t in ax.texts if t.get_text().isdigit()}
    assert numbers["1"][0] > numbers["2"][0] > numbers["3"][0]
    assert ax.get_title() == "shortcut"


def test_graph_import_does_not_import_matplotlib():
    code = "import sys, minigrad, minigrad.graph; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"
