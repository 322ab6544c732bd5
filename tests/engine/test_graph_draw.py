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


def test_a_matrix_gradient_is_a_small_matrix_readable_and_large_enough():
    W = Tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    x = Tensor([[1.0, 2.0], [-1.0, 0.25]])
    loss = ((x @ W).tanh() * 2.0).sum()
    loss.backward()
    ax = graph.draw(loss, grads=True, names={W: "W"})
    assert ax.figure.dpi >= graph.DPI >= 100
    texts = [t for t in ax.texts if t.get_text()]
    assert min(t.get_fontsize() for t in texts) >= 9
    shown = {t.get_text(): t for t in texts if t.get_text().startswith("grad")}
    xW = np.array([[1.0, 2.0], [-1.0, 0.25]]) @ np.array([[1.0, -2.0], [0.5, 3.0]])
    expected = np.array([[1.0, -1.0], [2.0, 0.25]]) @ (2 * (1 - np.tanh(xW) ** 2))  # x.T @ g
    np.testing.assert_allclose(W.grad, expected)
    assert np.allclose(expected.round(4), [[-0.868, -0.0297], [0.535, 0.0135]], atol=6e-4)
    matrix = "grad [[-0.868, -0.0297],\n      [ 0.535,  0.0135]]"  # a row a line, aligned
    assert matrix in shown, list(shown)
    assert shown[matrix].get_family()[0] == "monospace"
    r, gr, b = matplotlib.colors.to_rgb(shown[matrix].get_color())
    assert 0.2126 * r + 0.7152 * gr + 0.0722 * b < 0.35       # dark enough on white
    # the boxes of a column sit far enough apart for a two-line gradient under each
    columns: dict[float, list[float]] = {}
    for box in _boxes(ax):
        columns.setdefault(round(box.get_x(), 6), []).append(box.get_y())
    gaps = [b - a for ys in columns.values() for a, b in zip(sorted(ys), sorted(ys)[1:])]
    assert gaps and min(gaps) >= 0.62 + 0.2 + 2 * 0.17 - 1e-9


@pytest.mark.parametrize("grad, text", [
    (np.float64(0.5), "0.5"),
    (np.array([1.0, -2.0]), "[1, -2]"),
    (np.array([[1.0, -0.25], [0.5, 2.0]]), "[[  1, -0.25],\n [0.5,     2]]"),
    (np.array([[1.5, 2.5, 3.5]]), "[[1.5, 2.5, 3.5]]"),
    (np.arange(25.0).reshape(5, 5), "|g| max 24 (5, 5)"),
    (np.ones((2, 2, 2)), "|g| max 1 (2, 2, 2)"),
])
def test_gradient_texts(grad, text):
    assert graph._short(grad) == text
