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

import argparse

import numpy as np

import minigrad as mg
from minigrad import optim
from minigrad.backend import to_numpy
from minigrad.gradcheck import numerical_grad

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
    gap = simulate(params) - observed
    return (gap * gap).mean()


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--iterations", type=int, default=200, help="gradient-descent steps")
    parser.add_argument("--lr", type=float, default=0.05, help="Adam's learning rate")
    parser.add_argument("--seed", type=int, default=0, help="seed of the measurement noise")
    parser.add_argument("--smoke", action="store_true", help="a quick run for CI: 120 iterations")
    parser.add_argument("--device", default=None, help="'cpu' (default) or 'cuda' (CuPy)")
    parser.add_argument("--plot", metavar="PNG", help="save the fit here")
    args = parser.parse_args(argv)
    if args.smoke:
        args.iterations = 120

    clean = simulate(mg.tensor([TRUE_K, TRUE_C], device=args.device))
    noise = np.random.default_rng(args.seed).normal(0.0, NOISE, STEPS)
    observed = mg.tensor(clean.numpy() + noise, device=args.device)
    print(f"{STEPS} noisy observations (noise {NOISE}) of a spring with k = {TRUE_K:g}, "
          f"c = {TRUE_C:g}")

    params = mg.tensor([START_K, START_C], device=args.device, requires_grad=True)
    misfit(params, observed).backward()
    numeric = to_numpy(numerical_grad(lambda p: misfit(p, observed), [params.detach()], 0))
    autodiff, params.grad = to_numpy(params.grad), None
    rel = float(np.max(np.abs(autodiff - numeric) / np.abs(numeric)))
    print(f"gradient check: autodiff {autodiff}, finite differences {numeric}, largest "
          f"relative difference {rel:.1e}")

    optimizer = optim.Adam([params], lr=args.lr)
    history = []
    for _ in range(args.iterations):
        loss = misfit(params, observed)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append(loss.item())
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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = DT * np.arange(1, STEPS + 1)
    fig, (ax, ax_loss) = plt.subplots(1, 2, figsize=(10, 4), dpi=100)
    ax.plot(t, observed, ".", markersize=3, color="0.6", label="noisy observations")
    ax.plot(t, clean, "-", label=f"true: k={TRUE_K:g}, c={TRUE_C:g}")
    ax.plot(t, fitted, "--", label="fitted")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("position")
    ax.set_title("mass-spring-damper: parameters from data")
    ax.legend()
    ax_loss.semilogy(history)
    ax_loss.set_xlabel("Adam step")
    ax_loss.set_ylabel("mean squared misfit")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


if __name__ == "__main__":
    main()
