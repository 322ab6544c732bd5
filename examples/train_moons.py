"""Train a small network on the two-moons problem with minigrad, and draw what it learned.

    python examples/train_moons.py --plot moons.png
    python examples/train_moons.py --epochs 100 --lr 0.05 --hidden 32 32 --save moons.npz

The network is Linear(2, 16) - ReLU - Linear(16, 16) - ReLU - Linear(16, 2), trained with SGD
and momentum on minibatches, with the softmax cross-entropy loss. The script prints the final
loss and accuracy on the training points and, with ``--plot``, saves the decision boundary.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from tqdm import tqdm

import minigrad as mg
from minigrad import nn, optim
from minigrad.data import batches, moons


def build_model(hidden: list[int], seed: int, dtype: str) -> nn.Sequential:
    """Linear layers of sizes 2 -> hidden... -> 2 with a ReLU between each pair."""
    rng = np.random.default_rng(seed)
    sizes = [2, *hidden, 2]
    layers: list[nn.Module] = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(n_in, n_out, rng=rng, dtype=dtype), nn.ReLU()]
    return nn.Sequential(*layers[:-1])  # no ReLU after the last layer: it outputs logits


def train(model: nn.Module, X: np.ndarray, y: np.ndarray, epochs: int, *, lr: float = 0.05,
          momentum: float = 0.9, batch_size: int = 32, seed: int = 0,
          progress: bool = False) -> None:
    """SGD with momentum on shuffled minibatches, softmax cross-entropy loss.

    ``progress`` shows a bar with the last minibatch's loss of each epoch.
    """
    optimizer = optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    loss_fn = nn.CrossEntropyLoss()
    rng = np.random.default_rng(seed)  # one Generator: a new batch order every epoch
    epoch_bar = tqdm(range(epochs), desc="training", unit="epoch", disable=not progress)
    for _ in epoch_bar:
        for Xb, yb in batches(X, y, batch_size=batch_size, seed=rng):
            loss = loss_fn(model(mg.tensor(Xb)), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        epoch_bar.set_postfix(loss=f"{loss.item():.4f}")


@mg.no_grad()
def evaluate(model: nn.Module, X: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Loss and accuracy of ``model`` on all of ``X, y``."""
    logits = model(mg.tensor(X))
    loss = nn.CrossEntropyLoss()(logits, y).item()
    accuracy = float((logits.numpy().argmax(axis=1) == y).mean())
    return loss, accuracy


def plot_decision_boundary(model: nn.Module, X: np.ndarray, y: np.ndarray, path: str) -> None:
    """Colour the plane by the predicted class and draw the points on top."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lo, hi = X.min(axis=0) - 0.5, X.max(axis=0) + 0.5
    xx, yy = np.meshgrid(np.linspace(lo[0], hi[0], 300), np.linspace(lo[1], hi[1], 300))
    grid = np.stack([xx.ravel(), yy.ravel()], axis=1).astype(X.dtype)
    with mg.no_grad():
        logits = model(mg.tensor(grid)).numpy()
    p1 = np.exp(logits[:, 1] - np.logaddexp(logits[:, 0], logits[:, 1])).reshape(xx.shape)
    fig, ax = plt.subplots(figsize=(5, 4), dpi=100)
    ax.contourf(xx, yy, p1, levels=np.linspace(0, 1, 11), cmap="RdBu_r", alpha=0.6)
    ax.contour(xx, yy, p1, levels=[0.5], colors="k", linewidths=1)
    ax.scatter(X[:, 0], X[:, 1], c=y, cmap="RdBu_r", s=8, edgecolors="k", linewidths=0.3)
    ax.set_title("minigrad: decision boundary on two moons")
    ax.set_xticks([])
    ax.set_yticks([])
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--epochs", type=int, default=60, help="passes over the data")
    parser.add_argument("--lr", type=float, default=0.05, help="learning rate")
    parser.add_argument("--momentum", type=float, default=0.9, help="SGD momentum")
    parser.add_argument("--batch-size", type=int, default=32, help="points per step")
    parser.add_argument("--seed", type=int, default=0, help="seed of data, init and shuffling")
    parser.add_argument("--hidden", type=int, nargs="+", default=[16, 16],
                        help="sizes of the hidden layers")
    parser.add_argument("--n", type=int, default=1000, help="number of points")
    parser.add_argument("--noise", type=float, default=0.1, help="noise of make_moons")
    parser.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    parser.add_argument("--plot", metavar="PNG", help="save the decision boundary here")
    parser.add_argument("--save", metavar="NPZ", help="save the trained model's state dict here")
    args = parser.parse_args(argv)

    X, y = moons(args.n, args.noise, seed=args.seed, dtype=args.dtype)
    model = build_model(args.hidden, args.seed, args.dtype)
    print(model)

    start = time.perf_counter()
    train(model, X, y, args.epochs, lr=args.lr, momentum=args.momentum,
          batch_size=args.batch_size, seed=args.seed, progress=True)
    seconds = time.perf_counter() - start

    loss, accuracy = evaluate(model, X, y)
    print(f"trained {args.epochs} epochs in {seconds:.2f} s")
    print(f"final loss {loss:.4f}")
    print(f"accuracy {accuracy:.4f}")
    if args.plot:
        plot_decision_boundary(model, X, y, args.plot)
        print(f"decision boundary saved to {args.plot}")
    if args.save:
        mg.save(model.state_dict(), args.save)
        print(f"model saved to {args.save}")
    return accuracy


if __name__ == "__main__":
    main()
