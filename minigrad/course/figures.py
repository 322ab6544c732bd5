"""The lessons' figures, so that a lesson calls one function instead of showing its matplotlib.

Every function draws one figure and returns it (the notebook shows it with ``plt.show()``).
:func:`setup` sets the style every lesson uses: 100 dpi and labels of 10 pt.

Imports matplotlib (the ``course`` extra) when a function is called, and the engine only for
the figures that run a model. A figure shows what it is given or what the engine computed; it
never computes an exercise's answer itself.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["DPI", "FONT_SIZE", "setup", "topological_walk", "matmul_shapes", "sum_gradient",
           "module_tree", "fit", "network_deltas", "moons", "memory_over_steps"]

#: The resolution of every lesson figure, and the size of its labels in points.
DPI, FONT_SIZE = 100, 10


def setup() -> None:
    """The lessons' figure style: ``DPI`` dots per inch, labels of ``FONT_SIZE`` points."""
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": DPI, "savefig.dpi": DPI, "font.size": FONT_SIZE,
                         "figure.figsize": (6.4, 3.2)})


def _subplots(*args: Any, **kwargs: Any) -> Any:
    """``plt.subplots`` at ``DPI`` dots per inch at least, whatever the backend's default
    (Jupyter's inline backend has used 72)."""
    import matplotlib.pyplot as plt

    return plt.subplots(*args, dpi=max(DPI, plt.rcParams["figure.dpi"]), **kwargs)


def _row(ax: Any, top: float, terms: Sequence[Any]) -> None:
    """One matrix equation as rectangles sized by the shapes (one unit per entry)."""
    from matplotlib.patches import Rectangle

    middle = top - max(t[1] for t in terms if not isinstance(t, str)) / 2
    x = 0.0
    for term in terms:
        if isinstance(term, str):
            ax.text(x + 0.9, middle, term, fontsize=16, ha="center", va="center")
            x += 1.8
            continue
        name, rows, cols, color = term
        y = middle - rows / 2
        ax.add_patch(Rectangle((x, y), cols, rows, facecolor=color, edgecolor="black",
                               alpha=0.7))
        ax.text(x + cols / 2, y + rows + 0.2, f"{name} ({rows}, {cols})", ha="center",
                va="bottom", fontsize=FONT_SIZE)
        x += cols


def matmul_shapes(n: int = 4, k: int = 3, m: int = 2) -> Any:
    """``C = A @ B`` and its two VJPs, each matrix drawn with its shape (lesson 2).

    Parameters
    ----------
    n, k, m : int
        ``A`` is ``(n, k)``, ``B`` is ``(k, m)``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = _subplots(figsize=(5, 5))
    height = max(n, k) + 1.5
    top = 3 * height
    _row(ax, top, [("A", n, k, "tab:blue"), "@", ("B", k, m, "tab:orange"), "=",
                   ("C", n, m, "tab:green")])
    _row(ax, top - height, [("dC", n, m, "tab:green"), "@", ("B.T", m, k, "tab:orange"), "=",
                            ("dA", n, k, "tab:blue")])
    _row(ax, top - 2 * height, [("A.T", k, n, "tab:blue"), "@", ("dC", n, m, "tab:green"),
                                "=", ("dB", k, m, "tab:orange")])
    ax.set_xlim(-0.5, 2 * max(n, k) + m + 5)
    ax.set_ylim(0, top + 1.5)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title("C = A @ B (top) and its two VJPs:\neach gradient has the shape of its input")
    return fig


def sum_gradient(g: Sequence[float], rows: int = 2) -> Any:
    """The gradient of ``s = x.sum(axis=0)``: ``g`` copied back into every row of ``x``.

    Parameters
    ----------
    g : sequence of float
        The gradient arriving at ``s`` (one number per column of ``x``).
    rows : int
        The number of rows of ``x``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.patches import Rectangle

    gv = np.asarray(g, dtype=np.float64)
    cols = len(gv)
    fig, ax = _subplots(figsize=(5, 2.2 + 0.4 * rows))

    def grid(top: float, values: np.ndarray, color: str, label: str) -> None:
        for i, row in enumerate(values):
            for j, v in enumerate(row):
                ax.add_patch(Rectangle((j, top - i - 1), 1, 1, facecolor=color,
                                       edgecolor="black", alpha=0.5))
                ax.text(j + 0.5, top - i - 0.5, f"{v:g}", ha="center", va="center")
        ax.text(-0.3, top - len(values) / 2, label, ha="right", va="center")

    grid(rows + 2.5, gv[None, :], "tab:green", "g = ds   (3,)")
    grid(rows, np.broadcast_to(gv, (rows, cols)), "tab:blue", f"dx   ({rows}, {cols})")
    for j in range(cols):
        ax.annotate("", xy=(j + 0.5, rows + 0.05), xytext=(j + 0.5, rows + 1.45),
                    arrowprops={"arrowstyle": "->"})
    ax.set_xlim(-3.2, cols + 0.2)
    ax.set_ylim(-0.2, rows + 2.7)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title("s = x.sum(axis=0): each row of x gets a copy of g")
    return fig


def fit(x: np.ndarray, target: np.ndarray, fitted: np.ndarray, losses: Sequence[float]) -> Any:
    """A fitted curve beside its loss per step, on a log scale (lesson 3).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, (ax1, ax2) = _subplots(1, 2, figsize=(8, 3))
    ax1.plot(x, target, label="target")
    ax1.plot(x, fitted, "--", label="network")
    ax1.set_xlabel("x")
    ax1.legend()
    ax2.semilogy(losses)
    ax2.set_xlabel("step")
    ax2.set_ylabel("mean squared error")
    fig.tight_layout()
    return fig


def moons(engine_losses: Sequence[float], hand_losses: Sequence[float], largest_gap: float,
          probability: Callable[[np.ndarray], np.ndarray], X: np.ndarray, y: np.ndarray) -> Any:
    """Two loss curves on top of each other, and a decision boundary over test points (lesson 4).

    Parameters
    ----------
    engine_losses, hand_losses : sequence of float
        The loss of every step, by the engine and by the hand-built loop.
    largest_gap : float
        The largest parameter difference between the two runs (the title says it).
    probability : callable
        Maps points ``(M, 2)`` to the probability of class 1, ``(M,)``.
    X, y : numpy.ndarray
        The test points and their classes.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, (ax1, ax2) = _subplots(1, 2, figsize=(9, 3.5))
    ax1.semilogy(engine_losses, lw=4, alpha=0.4, label="engine (minigrad.nn)")
    ax1.semilogy(hand_losses, "k--", lw=1, label="by hand (byhand.train)")
    ax1.set_xlabel("step")
    ax1.set_ylabel("cross-entropy")
    ax1.set_title(f"largest parameter difference: {largest_gap:.0e}")
    ax1.legend()
    grid_x, grid_y = np.meshgrid(np.linspace(-1.5, 2.5, 200), np.linspace(-1.0, 1.5, 150))
    grid = np.column_stack([grid_x.ravel(), grid_y.ravel()])
    scores = np.asarray(probability(grid)).reshape(grid_x.shape)
    ax2.contourf(grid_x, grid_y, scores, levels=20, cmap="RdBu_r", alpha=0.6)
    ax2.contour(grid_x, grid_y, scores, levels=[0.5], colors="k", linewidths=1)
    ax2.scatter(X[:, 0], X[:, 1], c=y, cmap="RdBu_r", s=4, edgecolors="none")
    ax2.set_title("decision boundary, test points")
    fig.tight_layout()
    return fig


def memory_over_steps(held_mb: Sequence[float], marks: dict[str, float] | None = None) -> Any:
    """The memory a training run holds after each step, in MB (lesson 4).

    Parameters
    ----------
    held_mb : sequence of float
        Megabytes allocated after each step.
    marks : dict, optional
        Labelled horizontal lines, e.g. ``{"one step's graph": 3.2}``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = _subplots(figsize=(6, 2.8))
    ax.plot(range(1, len(held_mb) + 1), held_mb, "o-", ms=3, label="held after the step")
    for k, (label, value) in enumerate((marks or {}).items()):
        ax.axhline(value, ls="--", color=f"C{k + 1}", lw=1, label=label)
    ax.set_xlabel("training step")
    ax.set_ylabel("MB allocated")
    ax.set_ylim(bottom=0)
    ax.legend(loc="center right")
    fig.tight_layout()
    return fig


# --- lesson 1: the walk of topological_order -------------------------------------------------

#: The most steps :func:`topological_walk` draws (a column each).
MAX_WALK_STEPS = 12


def _walk(root: Any, label: Callable[[Any], str]) -> list[tuple[str, list[tuple[str, bool]],
                                                               list[str]]]:
    """The stack walk of exercise 1.2's hints, one entry per pop: (what the pop did, the
    stack after it, bottom first, as (label, parents done), the order so far)."""
    from minigrad.graph import _parents_of

    stack: list[tuple[Any, bool]] = [(root, False)]
    visited: set[int] = set()
    order: list[Any] = []

    def state(action: str) -> tuple[str, list[tuple[str, bool]], list[str]]:
        return action, [(label(n), done) for n, done in stack], [label(n) for n in order]

    steps = [state("start")]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            action = f"pop {label(node)} \u2713:\nappend it"
        elif id(node) in visited:
            action = f"pop {label(node)}:\nseen, skip"
        else:
            visited.add(id(node))
            stack.append((node, True))
            stack.extend((p, False) for p in _parents_of(node) if id(p) not in visited)
            action = f"pop {label(node)}:\npush it \u2713,\nits parents"
        steps.append(state(action))
        if len(steps) > MAX_WALK_STEPS:
            raise ValueError(f"topological_walk: the walk of this graph takes more than "
                             f"{MAX_WALK_STEPS - 1} steps; draw a graph of a few tensors")
    return steps


def topological_walk(root: Any, names: dict[Any, str] | None = None) -> Any:
    """The stack of exercise 1.2's walk after each step, and the order it builds (lesson 1).

    The walk of the hints: pop ``(node, parents_done)``; a node whose parents are done is
    appended to the order; a node seen before is skipped; any other is pushed back flagged
    done (drawn with a tick), then its parents not yet seen are pushed above it.

    Parameters
    ----------
    root : tensor
        The output; its graph is read as :func:`minigrad.graph.draw` reads it (``parents`` or
        ``_parents``).
    names : dict, optional
        ``{tensor: "a", ...}`` labels by identity; other tensors are labelled by their
        operation.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        When the walk takes more than ``MAX_WALK_STEPS - 1`` steps (too many columns to read).
    """
    from matplotlib.patches import FancyBboxPatch

    from minigrad.graph import _op_of

    labels = {id(t): n for t, n in (names or {}).items()}
    steps = _walk(root, lambda n: labels.get(id(n)) or _op_of(n))
    height = max(len(stack) for _, stack, _ in steps)
    fig, ax = _subplots(figsize=(1.3 * len(steps) + 0.3, 0.45 * height + 2.4))
    box_w, box_h = 0.9, 0.42
    for k, (action, stack, order) in enumerate(steps):
        ax.text(k, height * 0.5 + 1.15, action, ha="center", va="top", fontsize=FONT_SIZE)
        for level, (name, done) in enumerate(stack):  # the bottom of the stack first
            y = level * 0.5
            ax.add_patch(FancyBboxPatch((k - box_w / 2, y), box_w, box_h,
                                        boxstyle="round,pad=0.02", edgecolor="0.3",
                                        facecolor="#c8e6c9" if done else "#fde9c9"))
            ax.text(k, y + box_h / 2, name + (" \u2713" if done else ""), ha="center",
                    va="center", fontsize=FONT_SIZE)
        if not stack:
            ax.text(k, box_h / 2, "(empty)", ha="center", va="center", fontsize=FONT_SIZE,
                    color="0.35")
        ax.text(k, -0.35, "\n".join(order) if order else "\u2014", ha="center", va="top",
                fontsize=FONT_SIZE, color="#1b5e20")
    ax.text(-0.75, box_h / 2, "stack", ha="right", va="center", fontsize=FONT_SIZE)
    ax.text(-0.75, -0.35, "order", ha="right", va="top", fontsize=FONT_SIZE, color="#1b5e20")
    ax.axhline(-0.12, color="0.6", lw=0.8)
    ax.set_xlim(-1.6, len(steps) - 0.4)
    ax.set_ylim(-0.45 - 0.32 * len(steps[-1][2]), height * 0.5 + 1.2)
    ax.axis("off")
    ax.set_title("the walk, step by step: the stack (top at the top, \u2713 = parents done) "
                 "and the order it builds",
                 fontsize=FONT_SIZE + 1)
    return fig


# --- lesson 3: the module tree ---------------------------------------------------------------


def _is_module(value: Any) -> bool:
    return callable(getattr(value, "parameters", None)) and callable(
        getattr(value, "forward", None))


def _is_tensor(value: Any) -> bool:
    return hasattr(value, "data") and hasattr(value, "requires_grad")


def _module_members(module: Any) -> list[tuple[str, Any]]:
    """(name, value) for each module, parameter or constant tensor the module holds directly:
    its named children when it has them (``minigrad.nn``), else what its attributes hold
    (lesson 3's table: inside lists, tuples and dicts too)."""
    found: list[tuple[str, Any]] = []

    def collect(name: str, value: Any) -> None:
        if _is_module(value) or _is_tensor(value):
            found.append((name, value))
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                collect(f"{name}[{i}]", item)
        elif isinstance(value, dict):
            for key, item in value.items():
                collect(f"{name}[{key!r}]", item)

    children = getattr(module, "named_children", None)
    named = dict(children()) if callable(children) else {}
    for name, value in vars(module).items():
        if named and isinstance(value, (list, tuple, dict)) and any(
                v is c for v in (value.values() if isinstance(value, dict) else value)
                for c in named.values()):
            continue  # the container minigrad.nn names its children from
        if named and _is_module(value):
            continue
        collect(name, value)
    return [(name, child) for name, child in named.items()] + found


def module_tree(module: Any, name: str = "model") -> Any:
    """A module and everything its ``parameters()`` walks, as a tree (lesson 3).

    A box per module (its class, the name it is held under), a leaf per parameter with its
    shape, and a grey leaf per constant tensor (held, not learned). A parameter reached twice
    is drawn where it is first met and marked "again" after that.

    Parameters
    ----------
    module : Module
        Lesson 3's ``Module`` or a ``minigrad.nn.Module``.
    name : str
        The label of the root.

    Returns
    -------
    matplotlib.figure.Figure
    """
    boxes, edges, n_leaves = _tree_layout(module, name)
    return _draw_tree(boxes, edges, n_leaves, name)


_Box = tuple[float, int, str, str]  # x, depth, text, kind
_Edge = tuple[float, int, float, int]  # the parent's x and depth, the child's


def _tree_layout(module: Any, name: str) -> tuple[list[_Box], list[_Edge], float]:
    """Where module_tree draws each box and edge: leaves one unit apart, each module above
    the middle of its children; and the number of leaves."""
    seen: set[int] = set()
    leaves: list[float] = [0.0]
    boxes: list[_Box] = []
    edges: list[_Edge] = []

    def place(value: Any, label: str, depth: int) -> float:
        """Lay the subtree out (leaves one unit apart), return its x."""
        if _is_module(value) and id(value) not in seen:
            seen.add(id(value))
            xs = [place(child, child_name, depth + 1)
                  for child_name, child in _module_members(value)]
            x = sum(xs) / len(xs) if xs else _next_leaf()
            for cx in xs:
                edges.append((x, depth, cx, depth + 1))
            boxes.append((x, depth, f"{label}\n{type(value).__name__}", "module"))
            return x
        x = _next_leaf()
        shape = tuple(int(n) for n in np.shape(getattr(value, "data", ())))
        if id(value) in seen:
            kind, text = "again", f"{label}\n(again)"
        elif _is_module(value):  # a module met twice is not walked twice
            kind, text = "again", f"{label}\n{type(value).__name__} (again)"
        elif getattr(value, "requires_grad", False):
            kind, text = "parameter", f"{label}\n{shape}"
        else:
            kind, text = "constant", f"{label}\n{shape}, constant"
        seen.add(id(value))
        boxes.append((x, depth, text, kind))
        return x

    def _next_leaf() -> float:
        leaves[0] += 1
        return leaves[0] - 1

    place(module, name, 0)
    return boxes, edges, leaves[0]


def _draw_tree(boxes: list[_Box], edges: list[_Edge], n_leaves: float, name: str) -> Any:
    """The figure of module_tree: a rounded box per module, parameter and constant, dashed
    for one met again; lines from parents to children; the count of parameters above."""
    from matplotlib.patches import FancyBboxPatch

    depth = max(d for _, d, _, _ in boxes)
    fig, ax = _subplots(figsize=(max(4.0, 1.25 * n_leaves + 0.5), 1.1 * depth + 1.3))
    colors = {"module": "#fde9c9", "parameter": "#dbe9f6", "constant": "#eeeeee",
              "again": "#ffffff"}
    box_w, box_h = 0.92, 0.55  # a box centred on (x, -depth), leaves one unit apart
    for x0, d0, x1, d1 in edges:  # from the bottom of the parent to the top of the child
        ax.plot([x0, x1], [-d0 - box_h / 2, -d1 + box_h / 2], color="0.45", lw=1)
    for x, d, text, kind in boxes:
        ax.add_patch(FancyBboxPatch((x - box_w / 2, -d - box_h / 2), box_w, box_h,
                                    boxstyle="round,pad=0.03", edgecolor="0.3",
                                    facecolor=colors[kind],
                                    linestyle="--" if kind == "again" else "-"))
        ax.text(x, -d, text, ha="center", va="center", fontsize=FONT_SIZE,
                color="0.35" if kind in ("constant", "again") else "black")
    ax.set_xlim(-0.7, n_leaves - 0.3)
    ax.set_ylim(-depth - 0.5, 0.5)
    ax.axis("off")
    learned = sum(1 for *_, kind in boxes if kind == "parameter")
    ax.set_title(f"{name}: {learned} parameters, found by walking its attributes",
                 fontsize=FONT_SIZE + 1)
    return fig


# --- lesson 4: the 2-2-2 network and its deltas ----------------------------------------------


def network_deltas(model: Any, x: Sequence[float], t: int) -> Any:
    """Lesson 4's network drawn as units and weights, forward values and backward quantities.

    ``model`` is ``Sequential(Linear, Sigmoid, Linear)`` after ``backward()`` of the
    cross-entropy of *one* input ``x`` of class ``t``: each unit shows its value (``x``, the
    hidden ``h``, the output probability ``p``) and its delta, read off the engine's gradient
    of the bias feeding it (for one input, ``dL/db = delta``); each edge shows the engine's
    ``dL/dW`` of its weight, which is ``delta`` of the unit it enters times the value of the
    unit it leaves. Nothing here computes a gradient: it draws the engine's.

    Parameters
    ----------
    model : minigrad.nn.Sequential
        The network, its parameters' ``.grad`` filled by ``backward()``.
    x : sequence of float
        The input (one point).
    t : int
        Its class.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        When a weight or bias has no gradient yet (run ``loss.backward()`` first).
    """
    columns, dWs = _network_values(model, x)
    return _draw_network(columns, dWs, t)


def _network_values(model: Any, x: Sequence[float]) -> tuple[list[list[str]], list[np.ndarray]]:
    """The text of each unit (its value, and its delta read off its bias's gradient), column
    by column, and the two weights' gradients; refusing a model without gradients."""
    from minigrad import Tensor, no_grad
    from minigrad import functional as F

    first, second = model[0], model[2]
    for layer_name, layer in (("model[0]", first), ("model[2]", second)):
        for pname in ("weight", "bias"):
            if getattr(layer, pname).grad is None:
                raise ValueError(f"network_deltas: {layer_name}.{pname}.grad is None; run "
                                 "loss.backward() on the loss of one input first")
    point = np.asarray(x, dtype=np.float64).reshape(1, -1)
    with no_grad():
        hidden = model[1](first(Tensor(point))).numpy()[0]
        p = F.softmax(model(Tensor(point))).numpy()[0]
    from minigrad.backend import to_numpy

    delta1, delta2 = to_numpy(first.bias.grad), to_numpy(second.bias.grad)
    dW1, dW2 = to_numpy(first.weight.grad), to_numpy(second.weight.grad)
    columns = [
        [f"$x_{j}$ = {v:g}" for j, v in enumerate(point[0])],  # indices from 0, as p_t
        [f"$h_{i}$ = {v:.4f}\n$\\delta_{{1,{i}}}$ = {d:.4f}"
         for i, (v, d) in enumerate(zip(hidden, delta1))],
        [f"$p_{i}$ = {v:.4f}\n$\\delta_{{2,{i}}}$ = {d:.4f}"
         for i, (v, d) in enumerate(zip(p, delta2))],
    ]
    return columns, [dW1, dW2]


def _draw_network(columns: list[list[str]], dWs: list[np.ndarray], t: int) -> Any:
    """The figure of network_deltas: the units as boxes in three columns, an arrow per
    weight with its gradient near the unit it enters."""
    fig, ax = _subplots(figsize=(8, 3.6))
    spread = 1.6

    def y_of(i: int, n: int) -> float:
        return ((n - 1) / 2 - i) * spread

    xs, half = [0.0, 4.0, 8.0], [0.55, 0.95, 0.95]  # each column's x, its boxes' half width
    for layer, dW in enumerate(dWs):
        x0, x1 = xs[layer] + half[layer], xs[layer + 1] - half[layer + 1]
        n_in, n_out = len(columns[layer]), len(columns[layer + 1])
        for i in range(n_out):
            for j in range(n_in):
                ya, yb = y_of(j, n_in), y_of(i, n_out)
                ax.annotate("", xy=(x1, yb), xytext=(x0, ya),
                            arrowprops={"arrowstyle": "-|>", "color": "0.55", "lw": 1,
                                        "shrinkA": 0, "shrinkB": 0})
                f = 0.28  # the label near the unit it enters, where the edges are apart
                lx = x1 * (1 - f) + x0 * f
                ly = yb * (1 - f) + ya * f
                ax.text(lx, ly, f"{dW[i, j]:.4f}", ha="center", va="center",
                        fontsize=FONT_SIZE, color="#1b5e20",
                        bbox={"boxstyle": "round,pad=0.15", "facecolor": "white",
                              "edgecolor": "none"})
    for c, (cx, texts) in enumerate(zip(xs, columns)):
        for i, text in enumerate(texts):
            ax.text(cx, y_of(i, len(texts)), text, ha="center", va="center",
                    fontsize=FONT_SIZE,
                    bbox={"boxstyle": "round,pad=0.35", "edgecolor": "0.3",
                          "facecolor": ("#dbe9f6", "#fde9c9", "#fde9c9")[c]})
    for cx, head in zip(xs, ("input", "hidden (sigmoid)", f"output (softmax), t = {t}")):
        ax.text(cx, spread * 0.5 + 1.0, head, ha="center", va="bottom", fontsize=FONT_SIZE)
    ax.set_xlim(-1.3, 9.3)
    ax.set_ylim(-spread * 0.5 - 0.9, spread * 0.5 + 1.5)
    ax.axis("off")
    ax.set_title("each unit: its value and its $\\delta$; each edge (green): "
                 "$\\partial L/\\partial W$ = the $\\delta$ it enters $\\times$ the value it "
                 "leaves", fontsize=FONT_SIZE + 1)
    return fig
