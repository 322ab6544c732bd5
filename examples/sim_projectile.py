"""Aim a projectile with air drag by gradient descent through its simulation.

    python examples/sim_projectile.py --plot projectile.png
    python examples/sim_projectile.py --smoke          # fewer, coarser steps (CI)

A ball leaves the origin at an angle and a speed, pulled down by gravity and slowed by
quadratic air drag: ``dv/dt = g - k |v| v``. There is no closed-form answer for where it is
after ``T`` seconds, but a simulator computes it: a few hundred explicit Euler steps. Every
step is a handful of tensor operations, so the engine differentiates the whole simulation,
and gradient descent (Adam) on the launch angle and speed makes the ball reach a target.

The known answer: the target is the point where a launch at 35 degrees and 30 m/s is after
3 seconds (computed by the same simulator), so the fit must recover 35 degrees and 30 m/s
starting from 60 degrees and 15 m/s. Before fitting, the gradient is compared once with
finite differences (:func:`minigrad.gradcheck.numerical_grad`).
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

import minigrad as mg

sys.path.insert(0, str(Path(__file__).resolve().parent))  # fitting.py: what the simulators share
import fitting

GRAVITY = 9.81  # m/s^2
DRAG = 0.02  # 1/m: the drag acceleration is DRAG * speed^2
FLIGHT_TIME = 3.0  # seconds
TRUE_ANGLE, TRUE_SPEED = 35.0, 30.0  # degrees, m/s: the answer the fit must find
START_ANGLE, START_SPEED = 60.0, 15.0
SPEED_SCALE = 10.0  # the speed is fitted in units of 10 m/s, the angle in radians: similar sizes


def simulate(launch: mg.Tensor, steps: int, keep_path: bool = False
             ) -> tuple[mg.Tensor, list[np.ndarray]]:
    """Fly for FLIGHT_TIME seconds in ``steps`` Euler steps from ``launch = [angle, speed]``.

    ``angle`` is in radians, ``speed`` in units of SPEED_SCALE m/s. Returns the final position
    (x, y) as a tensor, and the path as NumPy points when ``keep_path``.
    """
    xp = launch._xp
    dt = FLIGHT_TIME / steps
    angle, speed = launch[0], launch[1] * SPEED_SCALE
    velocity = mg.stack([angle.cos(), angle.sin()]) * speed  # (2,): vx, vy
    position = mg.Tensor(xp.zeros(2, dtype=launch.dtype))
    gravity_dt = mg.Tensor(xp.asarray([0.0, -GRAVITY * dt], dtype=launch.dtype))
    path = [position.numpy()] if keep_path else []
    for _ in range(steps):
        drag_dt = (velocity * velocity).sum().sqrt() * (DRAG * dt)  # k |v| dt
        velocity = velocity - velocity * drag_dt + gravity_dt
        position = position + velocity * dt
        if keep_path:
            path.append(position.numpy())
    return position, path


def miss(launch: mg.Tensor, target: mg.Tensor, steps: int) -> mg.Tensor:
    """Squared distance (m^2) between where the ball is after FLIGHT_TIME and the target."""
    gap = simulate(launch, steps)[0] - target
    return (gap * gap).sum()


def as_launch(angle_deg: float, speed: float, device: str | None) -> mg.Tensor:
    return mg.tensor([math.radians(angle_deg), speed / SPEED_SCALE], device=device)


def main(argv: list[str] | None = None) -> dict[str, float]:
    args = fitting.command_line(__doc__, argv, iterations=150, lr=0.05,
                                smoke={"steps": 100, "iterations": 110},
                                plot="save the trajectories here",
                                steps=(300, "Euler steps over the flight"))

    target, _ = simulate(as_launch(TRUE_ANGLE, TRUE_SPEED, args.device), args.steps)
    x_t, y_t = (float(v) for v in target.numpy())
    print(f"target ({x_t:.2f} m, {y_t:.2f} m): where {TRUE_ANGLE:g} deg and {TRUE_SPEED:g} m/s "
          f"put the ball after {FLIGHT_TIME:g} s ({args.steps} Euler steps, drag {DRAG} 1/m)")

    launch = as_launch(START_ANGLE, START_SPEED, args.device).requires_grad_()
    # The gradient through the whole simulation, checked once against finite differences.
    rel = fitting.check_gradient(lambda p: miss(p, target, args.steps), launch)
    start_path = simulate(launch, args.steps, keep_path=True)[1]
    history = fitting.fit(lambda p: miss(p, target, args.steps), launch, args.lr, args.iterations)
    angle, speed = (float(v) for v in launch.numpy())
    angle, speed = math.degrees(angle), speed * SPEED_SCALE
    final_miss = math.sqrt(miss(launch, target, args.steps).item())
    print(f"after {args.iterations} steps of Adam: miss {final_miss:.3f} m")
    print(f"recovered angle {angle:.2f} deg (true {TRUE_ANGLE:g}), speed {speed:.2f} m/s "
          f"(true {TRUE_SPEED:g})")
    if args.plot:
        plot(start_path, simulate(launch, args.steps, keep_path=True)[1], (x_t, y_t), history,
             args.plot)
        print(f"plot saved to {args.plot}")
    return {"angle": angle, "speed": speed, "miss": final_miss, "gradient_error": rel}


def plot(before: list, after: list, target: tuple[float, float], history: list[float],
         path: str) -> None:
    """The first and the fitted trajectories, the target, and the loss per iteration."""
    fig, (ax, _) = fitting.loss_figure(2, figsize=(10, 4))
    for points, label, style in ((before, f"start: {START_ANGLE:g} deg, {START_SPEED:g} m/s",
                                  "--"), (after, "fitted", "-")):
        xy = np.array(points)
        ax.plot(xy[:, 0], xy[:, 1], style, label=label)
    ax.plot(*target, "r*", markersize=14, label="target")
    fitting.label_panel(ax, "x (m)", "y (m)",
                        "projectile with air drag, aimed by gradient descent")
    fitting.save_figure(fig, history, "miss distance squared (m$^2$)", path)


if __name__ == "__main__":
    main()
