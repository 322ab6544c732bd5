"""Train LeNet-5 on scikit-learn's handwritten digits with minigrad.

    python examples/lenet_digits.py                       # 15 epochs: about 99% test accuracy
    python examples/lenet_digits.py --save lenet.npz      # ... and keep the trained weights
    python examples/lenet_digits.py --load lenet.npz --epochs 0    # evaluate saved weights

The 1,797 digits (8x8 pixels, bundled with scikit-learn) are upsampled to 32x32, the input size
LeNet-5 was designed for, and split into 1,437 training and 360 test images. The network:

    conv 6@5x5 - ReLU - max-pool 2 - conv 16@5x5 - ReLU - max-pool 2 - flatten
    - Linear(400, 120) - ReLU - Linear(120, 84) - ReLU - Linear(84, 10)

trained in float32 on minibatches of 64 with SGD and momentum and the softmax cross-entropy
loss. The recipe that gets it from about 96% to about 99% on so few images: each training image
is moved by a random shift of up to 3 pixels every time it is seen (augmentation), inputs are
standardised, and the learning rate follows a cosine from ``--lr`` down to 0. After each epoch
the script prints the test accuracy.
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np
from threadpoolctl import threadpool_limits
from tqdm import tqdm

import minigrad as mg
from minigrad import nn, optim
from minigrad.data import batches, digits


def lenet5(rng: np.random.Generator, dtype: str = "float32") -> nn.Sequential:
    """LeNet-5 for 1x32x32 images and 10 classes, initialised as PyTorch does."""
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, rng=rng, dtype=dtype), nn.ReLU(), nn.MaxPool2d(2),   # 6x28x28, 6x14x14
        nn.Conv2d(6, 16, 5, rng=rng, dtype=dtype), nn.ReLU(), nn.MaxPool2d(2),  # 16x10x10, 16x5x5
        nn.Flatten(),                                                           # 400
        nn.Linear(400, 120, rng=rng, dtype=dtype), nn.ReLU(),
        nn.Linear(120, 84, rng=rng, dtype=dtype), nn.ReLU(),
        nn.Linear(84, 10, rng=rng, dtype=dtype),
    )


MEAN, STD = 0.305, 0.324  # of the training images' pixels: inputs become mean 0, std 1


def standardize(images: np.ndarray) -> np.ndarray:
    return (images - MEAN) / STD


def random_shift(images: np.ndarray, rng: np.random.Generator, max_shift: int) -> np.ndarray:
    """Move each image by its own random offset of up to ``max_shift`` pixels each way.

    Pixels that come in from outside are background (0). A network that sees digits at
    slightly different places learns to recognise them anywhere, and overfits less.
    """
    if max_shift == 0:
        return images
    n, _, h, w = images.shape
    m = max_shift
    padded = np.pad(images, ((0, 0), (0, 0), (m, m), (m, m)))
    top, left = rng.integers(0, 2 * m + 1, size=(2, n))
    return np.stack([padded[i, :, top[i]:top[i] + h, left[i]:left[i] + w] for i in range(n)])


@mg.no_grad()
def accuracy(model: nn.Module, X: np.ndarray, y: np.ndarray, batch_size: int = 256) -> float:
    """The fraction of images in ``X`` whose predicted class is ``y``."""
    model.eval()
    correct = 0
    for Xb, yb in batches(X, y, batch_size=batch_size, shuffle=False):
        logits = model(mg.tensor(standardize(Xb)))
        correct += int((logits.numpy().argmax(axis=1) == yb).sum())
    model.train()
    return correct / len(y)


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--epochs", type=int, default=15, help="passes over the training set")
    parser.add_argument("--lr", type=float, default=0.05,
                        help="learning rate of the first epoch (then a cosine down to 0)")
    parser.add_argument("--momentum", type=float, default=0.9, help="SGD momentum")
    parser.add_argument("--batch-size", type=int, default=64, help="images per step")
    parser.add_argument("--shift", type=int, default=3,
                        help="largest random shift of a training image, in pixels (0: none)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the init, the shuffling and the shifts")
    parser.add_argument("--limit", type=int, metavar="N",
                        help="train and test on the first N images of each set only (a quick run)")
    parser.add_argument("--save", metavar="NPZ", help="save the trained model's state dict here")
    parser.add_argument("--load", metavar="NPZ", help="start from a state dict saved by --save")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS threads (1 is fastest for matrices this small)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    with threadpool_limits(args.threads):  # threadpoolctl comes with scikit-learn
        return train(args)


def train(args: argparse.Namespace) -> float:
    """Load the digits, build (or load) LeNet-5, train it; return the final test accuracy."""
    (X_train, y_train), (X_test, y_test) = digits(size=32, dtype="float32")
    if args.limit is not None:
        X_train, y_train = X_train[:args.limit], y_train[:args.limit]
        X_test, y_test = X_test[:args.limit], y_test[:args.limit]
    print(f"digits: {len(y_train)} training and {len(y_test)} test images of 1x32x32")

    rng = np.random.default_rng(args.seed)  # one Generator: the init, then each epoch's order
    model = lenet5(rng)
    if args.load:
        model.load_state_dict(mg.load(args.load))
        print(f"loaded {args.load}: test accuracy {accuracy(model, X_test, y_test):.4f}")
    print(model)
    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    loss_fn = nn.CrossEntropyLoss()

    test_accuracy = accuracy(model, X_test, y_test)
    for epoch in range(1, args.epochs + 1):
        optimizer.lr = args.lr * 0.5 * (1 + math.cos(math.pi * (epoch - 1) / args.epochs))
        start = time.perf_counter()
        steps = tqdm(batches(X_train, y_train, batch_size=args.batch_size, seed=rng),
                     total=-(-len(y_train) // args.batch_size), desc=f"epoch {epoch:2d}",
                     unit="batch", leave=False, disable=args.quiet)
        total_loss = 0.0
        for Xb, yb in steps:
            Xb = standardize(random_shift(Xb, rng, args.shift))
            loss = loss_fn(model(mg.tensor(Xb)), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total_loss += loss.item() * len(yb)
            steps.set_postfix(loss=f"{loss.item():.4f}")
        seconds = time.perf_counter() - start
        test_accuracy = accuracy(model, X_test, y_test)
        print(f"epoch {epoch:2d}: train loss {total_loss / len(y_train):.4f}, "
              f"test accuracy {test_accuracy:.4f} ({seconds:.2f} s)")

    # Alike only: train_moons.py's main ends the same way (report, save when asked).
    print(f"final test accuracy {test_accuracy:.4f}")
    if args.save:
        mg.save(model.state_dict(), args.save)
        print(f"model saved to {args.save}")
    return test_accuracy


if __name__ == "__main__":
    main()
