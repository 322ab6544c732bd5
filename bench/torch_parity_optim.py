"""Recompute the pinned PyTorch answers of tests/support/optim_cases.py (optimizers and schedules).

``python -m bench.torch_parity_optim`` runs every case with PyTorch (the ``bench`` extra) and
fails on any value that differs from ``tests/support/torch_optim_values.json`` by more than 1e-12
relative; ``--write`` rewrites the file from PyTorch.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support import optim_cases as cases  # noqa: E402


def compute() -> dict:
    import torch

    values: dict = {"torch": torch.__version__, "optimizers": {}, "schedules": {}}
    for name in cases.OPTIMIZERS:
        values["optimizers"][name] = cases.run_optimizer(name, "torch")
    for name in cases.SCHEDULES:
        values["schedules"][name] = cases.run_schedule(name, "torch")
    return values


def _close(a: object, b: object) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)
    return a == b


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite the pinned values")
    args = parser.parse_args(argv)
    values = compute()
    if args.write:
        cases.write_pinned(values)
        print(f"wrote {cases.PINNED}")
        return 0
    pinned = cases.load_pinned()
    bad = [f"{kind} {name}" for kind in ("optimizers", "schedules")
           for name in values[kind] if not _close(values[kind][name], pinned[kind].get(name))]
    print("every pinned value agrees with PyTorch" if not bad else f"differ: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
