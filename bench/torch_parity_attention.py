"""Attention and Transformer layers against PyTorch: the pinned values of
``tests/nn/test_attention.py`` (``tests/support/attention_recipe.py``, ``tests/support/attention_values.json``).

    python -m bench.torch_parity_attention           # recompute with torch, compare all three
    python -m bench.torch_parity_attention --write   # ... and rewrite attention_values.json

Three things must agree for every case (outputs and every gradient, float64): PyTorch now,
minigrad now, and the pinned values the tests read. The parameter names and shapes of each
layer must be PyTorch's (its state dict loads unchanged: the recipe loads the same weights
into both by name).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support import attention_recipe as recipe  # noqa: E402


class TorchLib(recipe.Lib):
    def __init__(self) -> None:
        import torch
        self.torch, self.F, self.nn = torch, torch.nn.functional, torch.nn

    def tensor(self, array: np.ndarray, requires_grad: bool) -> Any:
        t = self.torch.from_numpy(np.array(array))
        return t.requires_grad_(True) if requires_grad else t

    def numpy(self, t: Any) -> np.ndarray:
        return t.detach().numpy().astype("float64")

    def grad(self, t: Any) -> np.ndarray | None:
        return None if t.grad is None else t.grad.numpy().astype("float64")

    def make_layer(self, case: recipe.Case) -> Any:
        assert case.build is not None  # run_case asks only for cases with a layer
        layer = case.build(self.nn).double()
        shapes = [(k, tuple(v.shape)) for k, v in layer.state_dict().items()]
        layer.load_state_dict({k: self.torch.from_numpy(v)
                               for k, v in recipe.weights_for(shapes).items()})
        return layer


def compare(a: np.ndarray | None, b: np.ndarray | None) -> float:
    """The largest difference, NaN and infinities matched by position (inf if they differ)."""
    if a is None or b is None:
        return 0.0 if a is None and b is None else np.inf
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or not np.array_equal(np.isnan(a), np.isnan(b)):
        return np.inf
    fin = np.isfinite(a) & np.isfinite(b)
    if not np.array_equal(a[~fin & ~np.isnan(a)], b[~fin & ~np.isnan(b)]):
        return np.inf
    return float(np.max(np.abs(a[fin] - b[fin]), initial=0.0))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite attention_values.json")
    args = parser.parse_args(argv)
    import torch
    torch.set_num_threads(1)
    tlib, mlib = TorchLib(), recipe.MinigradLib()
    pinned = recipe.load_pinned() if recipe.PINNED_PATH.exists() else {}
    ok, results, state_dicts = True, {}, {}
    for case in recipe.CASES:
        if case.build is not None:  # the same parameter names and shapes as PyTorch
            ours = [(k, tuple(v.shape)) for k, v in case.build(mlib.nn).state_dict().items()]
            theirs = [(k, tuple(v.shape)) for k, v in case.build(tlib.nn).state_dict().items()]
            state_dicts[case.name] = theirs
            if ours != theirs:
                print(f"{case.name}: state-dict keys differ\n  minigrad {ours}\n  torch {theirs}")
                ok = False
        expected, got = recipe.run(tlib, case), recipe.run(mlib, case)
        results[case.name] = expected
        if set(expected) != set(got):
            print(f"{case.name}: keys differ: torch {sorted(expected)} minigrad {sorted(got)}")
            ok = False
        for key, value in expected.items():
            err = compare(got.get(key), value)
            line = f"{case.name:34s} {key:24s} |minigrad - torch| {err:.1e}"
            if case.name in pinned and not args.write:
                pin = pinned[case.name].get(key)
                err_pin = compare(None if pin is None else recipe.decode(pin), value)
                line += f"   |pinned - torch| {err_pin:.1e}"
                ok &= err_pin < 1e-11
            ok &= err < 1e-10
            print(line)
    if args.write:
        recipe.write_pinned(results, state_dicts, torch.__version__.split("+")[0])
        print(f"wrote {recipe.PINNED_PATH}")
    print("parity:", "all agree" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
