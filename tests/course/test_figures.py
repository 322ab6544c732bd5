"""minigrad.course.figures: the lessons' figures of issue 25 (lesson 1's topological walk,
lesson 3's module tree, lesson 4's 2-2-2 network with its deltas): what each one shows, at
100 dpi with labels of 9 points or more, and the same pixels every time."""
from __future__ import annotations

import io

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt

from minigrad import Tensor, nn
from minigrad import functional as F
from minigrad.course import figures
from minigrad.course.demos import reference


@pytest.fixture(autouse=True)
def _style_and_close():
    with plt.rc_context():
        figures.setup()
        yield
    plt.close("all")


def _texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts if t.get_text()]


def _readable(fig) -> None:
    assert fig.dpi >= 100
    sizes = [t.get_fontsize() for ax in fig.axes for t in ax.texts if t.get_text()]
    assert sizes and min(sizes) >= 9


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


# --- lesson 1 ------------------------------------------------------------------------------

def _shortcut():
    """Lesson 1's z = a * tanh(a): a is reached directly and through tanh."""
    T = reference(1, "Tensor")                 # lesson 1's Tensor, finished
    a = T([0.5, -1.0])
    z = a * a.tanh()
    return z, {a: "a", z: "z"}


def test_the_walk_pushes_a_twice_skips_it_once_and_ends_in_topological_order():
    z, names = _shortcut()
    by_id = {id(t): name for t, name in names.items()}
    steps = figures._walk(z, lambda n: by_id.get(id(n), "tanh"))
    # (the pop's action, the stack after it, bottom first, the order so far), worked by hand
    expected = [
        ("start", [("z", False)], []),
        ("expand", [("z", True), ("a", False), ("tanh", False)], []),
        ("expand", [("z", True), ("a", False), ("tanh", True), ("a", False)], []),
        ("expand", [("z", True), ("a", False), ("tanh", True), ("a", True)], []),
        ("append", [("z", True), ("a", False), ("tanh", True)], ["a"]),
        ("append", [("z", True), ("a", False)], ["a", "tanh"]),
        ("skip", [("z", True)], ["a", "tanh"]),
        ("append", [], ["a", "tanh", "z"]),
    ]
    assert len(steps) == len(expected)
    for (action, stack, order), (kind, want_stack, want_order) in zip(steps, expected):
        assert kind in action.replace("push it", "expand").replace("seen", "skip"), action
        assert stack == want_stack and order == want_order


def test_the_walk_figure_has_a_column_per_step_and_is_the_same_every_time():
    z, names = _shortcut()
    fig = figures.topological_walk(z, names=names)
    _readable(fig)
    texts = _texts(fig)
    assert texts.count("z \u2713") == 6 and texts.count("a \u2713") == 1   # a box per stack entry
    assert "a\ntanh\nz" in texts and "pop a:\nseen, skip" in texts
    assert _png(fig) == _png(figures.topological_walk(z, names=names))


def test_the_walk_of_a_long_graph_is_refused_with_the_reason():
    T = reference(1, "Tensor")                 # lesson 1's Tensor, finished
    x = T([1.0])
    for _ in range(6):
        x = x.tanh()
    with pytest.raises(ValueError, match="more than 11 steps"):
        figures.topological_walk(x)


# --- lesson 3 ------------------------------------------------------------------------------

class _Parameter(Tensor):
    def __init__(self, data):
        super().__init__(data, requires_grad=True)


class _Module:                       # lesson 3's Module: parameters live in vars(self)
    def forward(self, x):
        return x

    def parameters(self):
        return []


class _Linear(_Module):
    def __init__(self, n_in, n_out):
        self.weight, self.bias = _Parameter(np.zeros((n_out, n_in))), _Parameter(np.zeros(n_out))


class _Sequential(_Module):
    def __init__(self, *layers):
        self.layers = list(layers)


class _Shared(_Module):
    def __init__(self):
        self.first = _Linear(2, 3)
        self.again = self.first.weight                  # one parameter under two names
        self.mask = Tensor(np.ones(3))                  # a constant: held, not learned


@pytest.mark.parametrize("model, leaves, title", [
    (nn.Sequential(nn.Linear(1, 8, rng=0), nn.ReLU(), nn.Linear(8, 1, rng=1)),
     ["model\nSequential", "0\nLinear", "1\nReLU", "2\nLinear", "weight\n(8, 1)", "bias\n(8,)",
      "weight\n(1, 8)", "bias\n(1,)"], "model: 4 parameters"),
    (_Sequential(_Linear(1, 8), _Linear(8, 1)),
     ["model\n_Sequential", "layers[0]\n_Linear", "layers[1]\n_Linear", "weight\n(8, 1)",
      "bias\n(1,)"], "model: 4 parameters"),
    (_Shared(), ["first\n_Linear", "weight\n(3, 2)", "again\n(again)", "mask\n(3,), constant"],
     "model: 2 parameters"),
])
def test_the_module_tree_shows_modules_parameters_shapes_and_what_is_skipped(model, leaves,
                                                                             title):
    fig = figures.module_tree(model)
    _readable(fig)
    texts = _texts(fig)
    for leaf in leaves:
        assert leaf in texts, (leaf, texts)
    assert fig.axes[0].get_title().startswith(title)
    assert _png(fig) == _png(figures.module_tree(model))


# --- lesson 4 ------------------------------------------------------------------------------

def _lesson4_network():
    model = nn.Sequential(nn.Linear(2, 2), nn.Sigmoid(), nn.Linear(2, 2))
    model.load_state_dict({"0.weight": np.array([[0.5, -0.3], [0.2, 0.8]]),
                           "0.bias": np.array([0.1, -0.2]),
                           "2.weight": np.array([[0.7, -0.4], [-0.6, 0.5]]),
                           "2.bias": np.array([0.05, -0.05])})
    return model, np.array([1.0, -0.5]), 1


def test_the_network_figure_shows_the_lesson_s_table_of_values_and_gradients():
    model, x, t = _lesson4_network()
    with pytest.raises(ValueError, match=r"model\[0\]\.weight\.grad is None"):
        figures.network_deltas(model, x, t)
    F.cross_entropy(model(Tensor(x[None, :])), np.array([t])).backward()
    fig = figures.network_deltas(model, x, t)
    _readable(fig)
    texts = _texts(fig)
    # lesson 4's tables: h, p, delta1, delta2 in the units; dL/dW1 and dL/dW2 on the edges
    units = ["$h_0$ = 0.6792\n$\\delta_{1,0}$ = 0.1843", "$h_1$ = 0.4013\n$\\delta_{1,1}$ = -0.1407",
             "$p_0$ = 0.6506\n$\\delta_{2,0}$ = 0.6506", "$p_1$ = 0.3494\n$\\delta_{2,1}$ = -0.6506",
             "$x_0$ = 1", "$x_1$ = -0.5"]
    edges = ["0.1843", "-0.0921", "-0.1407", "0.0703", "0.4419", "0.2611", "-0.4419", "-0.2611"]
    for text in units + edges:
        assert text in texts, (text, texts)
    assert sum(text in edges for text in texts) == 8                # one label per weight
    assert _png(fig) == _png(figures.network_deltas(model, x, t))
