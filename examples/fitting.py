"""What the three simulator examples share: fit a simulation's parameters to data.

``sim_spring.py``, ``sim_projectile.py`` and ``sim_heat.py`` each write a simulator and a loss
(how far the simulation is from what was observed), then do the same three things with them:

0. :func:`command_line`: the options they share (iterations, learning rate, smoke, device,
   plot);
1. :func:`check_gradient`: the gradient that the engine computes back through every step of
   the simulation, compared once with central finite differences;
2. :func:`fit`: steps of Adam on the loss, recording the loss before each step;
3. :func:`loss_figure`, :func:`label_panel` and :func:`save_figure`: a figure with the loss
   history in its last panel, saved as a PNG.

Each simulator puts this folder on ``sys.path`` to import it, so they run from anywhere.
"""
from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np

import minigrad as mg
from minigrad import optim
from minigrad.backend import to_numpy
from minigrad.gradcheck import numerical_grad

Loss = Callable[[mg.Tensor], mg.Tensor]


def command_line(doc: str, argv: list[str] | None, *, iterations: int, lr: float,
                 smoke: dict[str, int], plot: str, seed: str = "",
                 steps: tuple[int, str] | None = None) -> argparse.Namespace:
    """The options of a simulator, parsed from ``argv``, with the simulator's defaults.

    ``doc``: its docstring (the first paragraph describes the command). ``smoke``: the values
    that ``--smoke`` sets, e.g. ``{"iterations": 80}``. ``plot``: what ``--plot`` saves.
    ``seed``: the help of a ``--seed`` option, if the simulator has one; ``steps``: the default
    and the help of a ``--steps`` option, if it has one.
    """
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    if steps is not None:
        parser.add_argument("--steps", type=int, default=steps[0], help=steps[1])
    parser.add_argument("--iterations", type=int, default=iterations,
                        help="gradient-descent steps")
    parser.add_argument("--lr", type=float, default=lr, help="Adam's learning rate")
    if seed:
        parser.add_argument("--seed", type=int, default=0, help=seed)
    quick = ", ".join(f"{value} {name}"
                      for name, value in smoke.items())
    parser.add_argument("--smoke", action="store_true", help=f"a quick run for CI: {quick}")
    parser.add_argument("--device", default=None, help="'cpu' (default) or 'cuda' (CuPy)")
    parser.add_argument("--plot", metavar="PNG", help=plot)
    args = parser.parse_args(argv)
    if args.smoke:
        for name, value in smoke.items():
            setattr(args, name, value)
    return args


def check_gradient(loss: Loss, params: mg.Tensor) -> float:
    """Print autodiff's gradient of ``loss(params)`` beside finite differences' and return the
    largest relative difference between them. ``params.grad`` is left at None."""
    loss(params).backward()
    numeric = to_numpy(numerical_grad(loss, [params.detach()], 0))
    autodiff, params.grad = to_numpy(params.grad), None
    rel = float(np.max(np.abs(autodiff - numeric) / np.abs(numeric)))
    print(f"gradient check: autodiff {autodiff}, finite differences {numeric}, largest "
          f"relative difference {rel:.1e}")
    return rel


def fit(loss: Loss, params: mg.Tensor, lr: float, iterations: int) -> list[float]:
    """``iterations`` steps of Adam on ``loss(params)``; returns the loss before each step."""
    optimizer = optim.Adam([params], lr=lr)
    history = []
    for _ in range(iterations):
        value = loss(params)
        optimizer.zero_grad()
        value.backward()
        optimizer.step()
        history.append(value.item())
    return history


def loss_figure(panels: int, figsize: tuple[float, float]) -> tuple[Any, list[Any]]:
    """A figure of ``panels`` axes side by side (matplotlib without a display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, panels, figsize=figsize, dpi=100)
    return fig, list(axes)


def label_panel(ax: Any, xlabel: str, ylabel: str, title: str) -> None:
    """Name a panel's axes, title it, and show the legend of what was plotted in it."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()


def save_figure(fig: Any, history: list[float], loss_name: str, path: str) -> None:
    """Draw the loss per Adam step in the figure's last panel, save it to ``path``, close it."""
    import matplotlib.pyplot as plt

    ax_loss = fig.axes[-1]
    ax_loss.semilogy(history)
    ax_loss.set_xlabel("Adam step")
    ax_loss.set_ylabel(loss_name)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
