"""The lessons' figures, so that a lesson calls one function instead of showing its matplotlib.

Every function draws one figure and returns it (the notebook shows it with ``plt.show()``).
:func:`setup` sets the style every lesson uses: 100 dpi and labels of 10 pt.

Imports matplotlib (the ``course`` extra) when a function is called, and the engine only for
the figures that run a model.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["DPI", "FONT_SIZE", "setup", "matmul_shapes", "sum_gradient", "fit", "moons",
           "memory_over_steps"]

#: The resolution of every lesson figure, and the size of its labels in points.
DPI, FONT_SIZE = 100, 10


def setup() -> None:
    """The lessons' figure style: ``DPI`` dots per inch, labels of ``FONT_SIZE`` points."""
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": DPI, "savefig.dpi": DPI, "font.size": FONT_SIZE,
                         "figure.figsize": (6.4, 3.2)})


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
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 5))
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
    import matplotlib.pyplot as plt

    g = np.asarray(g, dtype=np.float64)
    cols = len(g)
    fig, ax = plt.subplots(figsize=(5, 2.2 + 0.4 * rows))

    def grid(top: float, values: np.ndarray, color: str, label: str) -> None:
        for i, row in enumerate(values):
            for j, v in enumerate(row):
                ax.add_patch(plt.Rectangle((j, top - i - 1), 1, 1, facecolor=color,
                                           edgecolor="black", alpha=0.5))
                ax.text(j + 0.5, top - i - 0.5, f"{v:g}", ha="center", va="center")
        ax.text(-0.3, top - len(values) / 2, label, ha="right", va="center")

    grid(rows + 2.5, g[None, :], "tab:green", "g = ds   (3,)")
    grid(rows, np.broadcast_to(g, (rows, cols)), "tab:blue", f"dx   ({rows}, {cols})")
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
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8, 3))
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
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
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
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 2.8))
    ax.plot(range(1, len(held_mb) + 1), held_mb, "o-", ms=3, label="held after the step")
    for k, (label, value) in enumerate((marks or {}).items()):
        ax.axhline(value, ls="--", color=f"C{k + 1}", lw=1, label=label)
    ax.set_xlabel("training step")
    ax.set_ylabel("MB allocated")
    ax.set_ylim(bottom=0)
    ax.legend(loc="center right")
    fig.tight_layout()
    return fig
