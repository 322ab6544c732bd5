"""Find where a hot spot was, from a snapshot of a 2-D plate taken after heat has spread.

    python examples/sim_heat.py --plot heat.png
    python examples/sim_heat.py --device cuda      # the same code on a GPU (CuPy)
    python examples/sim_heat.py --smoke            # fewer iterations (CI)

A square plate of 32 x 32 cells, held at 0 on its border, starts with a Gaussian hot spot of
unknown centre and height. Heat diffuses, ``du/dt = alpha * laplacian(u)``; 100 explicit steps
later we photograph the plate (with a little noise). Where was the spot, and how hot?

The step is written with array operations only: on a grid the discrete Laplacian is
``D @ u + u @ D``, with ``D`` the 1-D second-difference matrix (-2 on the diagonal, 1 beside
it), so one step is ``u + alpha * (D @ u + u @ D)``: two matrix products, on the CPU or the GPU
alike. The loss is the mean squared gap between the simulated and the observed snapshots;
the engine differentiates through the 100 steps and Adam fits the centre and the height.

The known answer: the snapshot was made from a spot at column 21, row 9 of height 10; the fit
starts at the middle of the plate (16, 16) with height 5. The gradient is compared once with
finite differences.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import minigrad as mg
import minigrad.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))  # fitting.py: what the simulators share
import fitting

SIZE, STEPS, ALPHA = 32, 100, 0.2  # alpha <= 0.25 keeps the explicit scheme stable
WIDTH = 2.0  # the spot's standard deviation, in cells (known)
TRUE_SPOT = (21.0, 9.0, 10.0)  # column, row, height: the answer
START_SPOT = (16.0, 16.0, 5.0)
NOISE = 0.01


class Plate:
    """The constant arrays of the simulation, made once on the chosen device."""

    def __init__(self, device: str | None = None) -> None:
        d = -2.0 * np.eye(SIZE) + np.eye(SIZE, k=1) + np.eye(SIZE, k=-1)
        self.second_difference = mg.tensor(d, device=device)  # (SIZE, SIZE)
        cells = np.arange(SIZE, dtype=np.float64)
        self.column = mg.tensor(np.tile(cells, (SIZE, 1)), device=device)  # column index
        self.row = mg.tensor(np.tile(cells[:, None], (1, SIZE)), device=device)  # row index

    def hot_spot(self, spot: mg.Tensor) -> mg.Tensor:
        """The initial temperature (SIZE, SIZE): a Gaussian bump at ``spot = [col, row, h]``."""
        dx, dy = self.column - spot[0], self.row - spot[1]
        return spot[2] * (-(dx * dx + dy * dy) * (1.0 / (2 * WIDTH ** 2))).exp()

    def diffuse(self, u: mg.Tensor, steps: int = STEPS) -> mg.Tensor:
        """``steps`` explicit steps of the heat equation (zero temperature beyond the edge)."""
        d = self.second_difference
        for _ in range(steps):
            u = u + (d @ u + u @ d) * ALPHA
        return u


def misfit(plate: Plate, spot: mg.Tensor, observed: mg.Tensor) -> mg.Tensor:
    """Mean squared difference between the simulated and the observed snapshots."""
    return F.mse_loss(plate.diffuse(plate.hot_spot(spot)), observed)


def main(argv: list[str] | None = None) -> dict[str, float]:
    args = fitting.command_line(__doc__, argv, iterations=120, lr=0.5,
                                smoke={"iterations": 80}, plot="save the pictures here",
                                seed="seed of the snapshot's noise")

    plate = Plate(args.device)
    initial = plate.hot_spot(mg.tensor(TRUE_SPOT, device=args.device))
    clean = plate.diffuse(initial)
    noise = np.random.default_rng(args.seed).normal(0.0, NOISE, (SIZE, SIZE))
    observed = mg.tensor(clean.numpy() + noise, device=args.device)
    print(f"snapshot after {STEPS} steps: peak {float(clean.numpy().max()):.3f} (the spot "
          f"started at {TRUE_SPOT[2]:g}), noise {NOISE}")

    spot = mg.tensor(START_SPOT, device=args.device, requires_grad=True)
    rel = fitting.check_gradient(lambda s: misfit(plate, s, observed), spot)
    history = fitting.fit(lambda s: misfit(plate, s, observed), spot, args.lr, args.iterations)
    col, row, height = (float(v) for v in spot.numpy())
    print(f"after {args.iterations} steps of Adam on {plate.second_difference.device}: mean "
          f"squared misfit {misfit(plate, spot, observed).item():.2e}")
    print(f"recovered column {col:.2f}, row {row:.2f}, height {height:.2f} (true "
          f"{TRUE_SPOT[0]:g}, {TRUE_SPOT[1]:g}, {TRUE_SPOT[2]:g})")
    if args.plot:
        plot(initial.numpy(), observed.numpy(), plate.hot_spot(spot).numpy(), history,
             args.plot)
        print(f"plot saved to {args.plot}")
    return {"column": col, "row": row, "height": height, "gradient_error": rel}


def plot(initial: np.ndarray, observed: np.ndarray, recovered: np.ndarray,
         history: list[float], path: str) -> None:
    """The true start, the snapshot, the recovered start, and the loss per iteration."""
    fig, axes = fitting.loss_figure(4, figsize=(14, 3.4))
    for ax, image, title in ((axes[0], initial, "true start (hidden)"),
                             (axes[1], observed, f"snapshot after {STEPS} steps"),
                             (axes[2], recovered, "recovered start")):
        shown = ax.imshow(image, cmap="inferno")
        ax.set_title(title)
        ax.set_xticks([])
        ax.set_yticks([])
        fig.colorbar(shown, ax=ax, fraction=0.046)
    fitting.save_figure(fig, history, "mean squared misfit", path)


if __name__ == "__main__":
    main()
