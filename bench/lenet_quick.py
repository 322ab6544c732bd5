"""One LeNet-5 epoch on the digits: minigrad against PyTorch CPU, one thread each, same run.

    python bench/lenet_quick.py              # 9 rounds, prints medians and the ratio
    python bench/lenet_quick.py --profile    # cProfile of minigrad's epoch instead

Both train the same network (conv 6@5x5, ReLU, max-pool 2, conv 16@5x5, ReLU, max-pool 2,
400-120-84-10) in float32 on the 1,437 training digits upsampled to 32x32, in minibatches of
64 in the same shuffled order, with SGD (lr 0.05, momentum 0.9). The rounds alternate between
the two, so a busy machine slows both alike. Needs torch (the ``bench`` extra) and threadpoolctl.
The full benchmark of issue 8 is ``bench/run.py``; this is the quick check of the conv layers.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from threadpoolctl import threadpool_limits

import minigrad as mg
from minigrad import nn, optim
from minigrad.data import batches, digits


def minigrad_lenet(seed: int) -> nn.Sequential:
    rng = np.random.default_rng(seed)
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, rng=rng, dtype="float32"), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5, rng=rng, dtype="float32"), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(400, 120, rng=rng, dtype="float32"), nn.ReLU(),
        nn.Linear(120, 84, rng=rng, dtype="float32"), nn.ReLU(),
        nn.Linear(84, 10, rng=rng, dtype="float32"))


def torch_lenet(torch):  # torch is imported lazily
    tnn = torch.nn
    return tnn.Sequential(
        tnn.Conv2d(1, 6, 5), tnn.ReLU(), tnn.MaxPool2d(2),
        tnn.Conv2d(6, 16, 5), tnn.ReLU(), tnn.MaxPool2d(2),
        tnn.Flatten(), tnn.Linear(400, 120), tnn.ReLU(), tnn.Linear(120, 84), tnn.ReLU(),
        tnn.Linear(84, 10))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--profile", action="store_true", help="profile minigrad's epoch")
    args = parser.parse_args()

    (X, y), _ = digits(size=32, dtype="float32")
    model = minigrad_lenet(0)
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    def minigrad_epoch(seed: int) -> None:
        for Xb, yb in batches(X, y, batch_size=64, seed=seed):
            loss = loss_fn(model(mg.tensor(Xb)), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()

    with threadpool_limits(1):
        if args.profile:
            import cProfile
            import pstats

            def five_epochs() -> None:
                for s in range(5):
                    minigrad_epoch(s)

            minigrad_epoch(0)
            profiler = cProfile.Profile()
            profiler.runcall(five_epochs)
            pstats.Stats(profiler).sort_stats("tottime").print_stats(20)
            return

        import torch

        torch.set_num_threads(1)
        torch.manual_seed(0)
        tmodel = torch_lenet(torch)
        topt = torch.optim.SGD(tmodel.parameters(), lr=0.05, momentum=0.9)
        Xt, yt = torch.from_numpy(X), torch.from_numpy(y)

        def torch_epoch(seed: int) -> None:
            for idx, _ in batches(np.arange(len(y)), y, batch_size=64, seed=seed):
                idx_t = torch.from_numpy(idx)
                loss = torch.nn.functional.cross_entropy(tmodel(Xt[idx_t]), yt[idx_t])
                topt.zero_grad()
                loss.backward()
                topt.step()

        times: dict[str, list[float]] = {"minigrad": [], "torch": []}
        minigrad_epoch(0)  # warm up both
        torch_epoch(0)
        for r in range(args.rounds):
            for name, epoch in (("minigrad", minigrad_epoch), ("torch", torch_epoch)):
                start = time.perf_counter()
                epoch(r)
                times[name].append(time.perf_counter() - start)

    med = {k: statistics.median(v) for k, v in times.items()}
    best = {k: min(v) for k, v in times.items()}
    print(f"LeNet-5, one epoch of {len(y)} digits (batches of 64, float32, 1 thread), "
          f"{args.rounds} rounds")
    for name, label in (("minigrad", "minigrad"), ("torch", "PyTorch ")):
        print(f"  {label}  median {med[name] * 1e3:7.1f} ms   best {best[name] * 1e3:7.1f} ms")
    print(f"  ratio minigrad / PyTorch: median {med['minigrad'] / med['torch']:.2f}, "
          f"best {best['minigrad'] / best['torch']:.2f}  (target <= 1.5)")


if __name__ == "__main__":
    main()
