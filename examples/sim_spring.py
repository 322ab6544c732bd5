"""Recover the stiffness and damping of a mass-spring-damper from noisy observations.

    python examples/sim_spring.py --plot spring.png
    python examples/sim_spring.py --smoke          # fewer iterations (CI)

A unit mass on a spring, released from ``x = 1`` at rest, obeys ``x'' = -k x - c x'``. We
observe its position every 0.02 s for 5 seconds, with measurement noise (standard deviation
0.05), and want ``k`` and ``c`` back. The simulator steps the equation with semi-implicit
Euler (velocity first, then position: it keeps the oscillation from growing by itself); the
loss is the mean squared gap between simulated and observed positions; the engine
differentiates through all 250 steps, and Adam fits ``k`` and ``c``.

The known answer: the observations were made with ``k = 4`` and ``c = 0.5`` (a period of about
3.1 s); the fit starts from ``k = 3``, ``c = 0.2``. The gradient is compared once with finite
differences.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import minigrad as mg
import minigrad.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))  # fitting.py: what the simulators share
import fitting

DT, STEPS = 0.02, 250  # 5 seconds of observations
TRUE_K, TRUE_C = 4.0, 0.5
START_K, START_C = 3.0, 0.2
NOISE = 0.05


def simulate(params: mg.Tensor, steps: int = STEPS) -> mg.Tensor:
    """Positions (steps,) of the unit mass for ``params = [k, c]``, from x = 1, v = 0."""
    xp = params._xp
    k, c = params[0], params[1]
    x = mg.Tensor(xp.asarray(1.0, dtype=params.dtype))
    v = mg.Tensor(xp.asarray(0.0, dtype=params.dtype))
    positions = []
    for _ in range(steps):
        v = v - (k * x + c * v) * DT  # the velocity first, with the old position ...
        x = x + v * DT  # ... then the position with the new velocity
        positions.append(x)
    return mg.stack(positions)


def misfit(params: mg.Tensor, observed: mg.Tensor) -> mg.Tensor:
    """Mean squared difference between the simulated and the observed positions."""
    return F.mse_loss(simulate(params), observed)


def main(argv: list[str] | None = None) -> dict[str, float]:
    args = fitting.command_line(__doc__, argv, iterations=200, lr=0.05,
                                smoke={"iterations": 120}, plot="save the fit here",
                                seed="seed of the measurement noise")

    clean = simulate(mg.tensor([TRUE_K, TRUE_C], device=args.device))
    noise = np.random.default_rng(args.seed).normal(0.0, NOISE, STEPS)
    observed = mg.tensor(clean.numpy() + noise, device=args.device)
    print(f"{STEPS} noisy observations (noise {NOISE}) of a spring with k = {TRUE_K:g}, "
          f"c = {TRUE_C:g}")

    params = mg.tensor([START_K, START_C], device=args.device, requires_grad=True)
    rel = fitting.check_gradient(lambda p: misfit(p, observed), params)
    history = fitting.fit(lambda p: misfit(p, observed), params, args.lr, args.iterations)
    k, c = (float(v) for v in params.numpy())
    print(f"after {args.iterations} steps of Adam: mean squared misfit "
          f"{misfit(params, observed).item():.5f} (the noise alone gives {NOISE ** 2:.5f})")
    print(f"recovered k {k:.3f} (true {TRUE_K:g}), c {c:.3f} (true {TRUE_C:g})")
    if args.plot:
        plot(observed.numpy(), clean.numpy(), simulate(params).numpy(), history, args.plot)
        print(f"plot saved to {args.plot}")
    return {"k": k, "c": c, "gradient_error": rel}


def plot(observed: np.ndarray, clean: np.ndarray, fitted: np.ndarray, history: list[float],
         path: str) -> None:
    """Observations, the true and the fitted motion, and the loss per iteration."""
    t = DT * np.arange(1, STEPS + 1)
    fig, (ax, _) = fitting.loss_figure(2, figsize=(10, 4))
    ax.plot(t, observed, ".", markersize=3, color="0.6", label="noisy observations")
    ax.plot(t, clean, "-", label=f"true: k={TRUE_K:g}, c={TRUE_C:g}")
    ax.plot(t, fitted, "--", label="fitted")
    fitting.label_panel(ax, "time (s)", "position", "mass-spring-damper: parameters from data")
    fitting.save_figure(fig, history, "mean squared misfit", path)


if __name__ == "__main__":
    main()
