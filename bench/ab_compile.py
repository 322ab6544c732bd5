"""Same-process A/B of a compiled step's replay: this checkout against an older commit.

``python -m bench.ab_compile [--rev REV] [--rounds N]`` extracts the package as it was at
``REV`` (default ``HEAD~1``) into a temporary folder under another name (``minigrad_ab``: its
imports are relative, so both engines load side by side), builds the same networks from the
same weights in both, compiles each training step, and times the replays in alternating
rounds (A, B, B, A, ...) in one process, so that the machine's drift falls on both alike.
It prints, per case, the median replay time of each and the median of the per-round ratios
new / old, with its range; the issue's bar is a paired median within 10%.

Cases: the moons MLP at batch 32 and at 1000 points (SGD with momentum), the same with Adam,
and a small LeNet (two convolutions and max-pooling) at batch 8. Every case first checks that
both engines' losses agree bit for bit, so a faster replay that computed something else
cannot pass.
"""
from __future__ import annotations

import argparse
import importlib
import io
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def load_rev(rev: str, where: Path, name: str = "minigrad_ab") -> Any:
    """The package ``minigrad`` as it was at ``rev``, imported as ``name`` (its imports are
    relative, so several load side by side)."""
    archive = subprocess.run(["git", "archive", "--format=tar", rev, "minigrad"], cwd=ROOT,
                             check=True, capture_output=True).stdout
    (where / name).mkdir()
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(where / name, filter="data")
    (where / name / "minigrad").rename(where / name / name)
    sys.path.insert(0, str(where / name))
    return importlib.import_module(name)


def compiled_step(mg: Any, model: Any, opt: Any, x: np.ndarray, y: np.ndarray
                  ) -> tuple[Callable[[], Any], Any]:
    """One call of the compiled training step on the batch (x, y), and the compiled step."""
    F = importlib.import_module(f"{mg.__name__}.functional")

    def step(xb: Any, yb: Any) -> Any:
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        return loss

    compiled = mg.compile(step)
    xt = mg.tensor(x)
    return (lambda: compiled(xt, y)), compiled


def moons_case(mg: Any, batch: int, adam: bool) -> tuple[Callable[[], Any], Any]:
    nn = importlib.import_module(f"{mg.__name__}.nn")
    optim = importlib.import_module(f"{mg.__name__}.optim")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 2)).astype("float32")
    y = rng.integers(0, 2, batch)
    model = nn.Sequential(nn.Linear(2, 16, seed=0, dtype="float32"), nn.ReLU(),
                          nn.Linear(16, 16, seed=1, dtype="float32"), nn.ReLU(),
                          nn.Linear(16, 2, seed=2, dtype="float32"))
    opt = (optim.Adam(model.parameters(), lr=0.01) if adam
           else optim.SGD(model.parameters(), lr=0.1, momentum=0.9))
    return compiled_step(mg, model, opt, x, y)


def lenet_case(mg: Any) -> tuple[Callable[[], Any], Any]:
    nn = importlib.import_module(f"{mg.__name__}.nn")
    optim = importlib.import_module(f"{mg.__name__}.optim")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 1, 14, 14)).astype("float32")
    y = rng.integers(0, 3, 8)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, seed=0, dtype="float32"), nn.MaxPool2d(2),
                          nn.ReLU(), nn.Conv2d(4, 6, 3, padding=1, seed=1, dtype="float32"),
                          nn.MaxPool2d(2), nn.ReLU(), nn.Flatten(),
                          nn.Linear(6 * 3 * 3, 16, seed=2, dtype="float32"), nn.ReLU(),
                          nn.Linear(16, 3, seed=3, dtype="float32"))
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return compiled_step(mg, model, opt, x, y)


CASES: dict[str, Callable[[Any], tuple[Callable[[], Any], Any]]] = {
    "moons batch 32, SGD": lambda mg: moons_case(mg, 32, adam=False),
    "moons 1000 points, SGD": lambda mg: moons_case(mg, 1000, adam=False),
    "moons batch 32, Adam": lambda mg: moons_case(mg, 32, adam=True),
    "small LeNet batch 8, SGD": lenet_case,
}


def per_call(run: Callable[[], Any], calls: int) -> float:
    """CPU seconds per call of this process (less moved than wall time by other processes
    on a shared machine; a replay makes no system calls to wait on)."""
    start = time.process_time()
    for _ in range(calls):
        run()
    return (time.process_time() - start) / calls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rev", default="HEAD~1", help="the older commit (default HEAD~1)")
    parser.add_argument("--rounds", type=int, default=15, help="alternating rounds per case")
    parser.add_argument("--calls", type=int, default=300, help="replays timed per round")
    args = parser.parse_args(argv)
    import minigrad as new

    with tempfile.TemporaryDirectory() as tmp:
        old = load_rev(args.rev, Path(tmp))
        print(f"A/B of compiled replays: this checkout (new) against {args.rev} (old), "
              f"{args.rounds} rounds of {args.calls} replays")
        print(f"{'case':28s} {'old us':>8s} {'new us':>8s} {'new/old':>8s}  range")
        for name, make in CASES.items():
            run_old, step_old = make(old)
            run_new, step_new = make(new)
            for _ in range(5):  # eager, two recordings, then replays
                a, b = run_old(), run_new()
                assert a.data.tobytes() == b.data.tobytes(), f"{name}: the losses differ"
            assert step_old.calls["replayed"] >= 2 and step_new.calls["replayed"] >= 2, \
                (name, step_old.calls, step_new.calls)
            olds: list[float] = []
            news: list[float] = []
            ratios: list[float] = []
            for r in range(args.rounds):
                pair = [(run_old, olds), (run_new, news)]
                for run, times in (pair if r % 2 == 0 else pair[::-1]):
                    times.append(per_call(run, args.calls))
                ratios.append(news[-1] / olds[-1])
            print(f"{name:28s} {statistics.median(olds) * 1e6:8.1f} "
                  f"{statistics.median(news) * 1e6:8.1f} {statistics.median(ratios):8.3f}  "
                  f"{min(ratios):.3f}-{max(ratios):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
