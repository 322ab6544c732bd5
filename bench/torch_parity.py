"""Recompute every pinned PyTorch value of ``tests/torch_values.json`` with PyTorch.

    python -m bench.torch_parity            # exit status 1 if any pinned value differs
    python -m bench.torch_parity --write    # rewrite tests/torch_values.json from PyTorch

The cases (``tests/torch_cases.py``) are shared with ``tests/test_torch_parity.py``, which
checks minigrad against the same pinned values without PyTorch. So the test pins minigrad to
these numbers, and this script pins these numbers to PyTorch. It also runs minigrad on each
case and reports where minigrad and PyTorch differ (the test does that too).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"


def _load() -> tuple:
    sys.path.insert(0, str(TESTS))
    import torch_cases
    try:
        _, pinned = torch_cases.load_pinned()
    except FileNotFoundError:
        pinned = {}
    return torch_cases, pinned


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true",
                        help="rewrite tests/torch_values.json from PyTorch's results")
    args = parser.parse_args(argv)
    import torch

    torch.use_deterministic_algorithms(True)
    cases, pinned = _load()
    results = {}
    failures = 0
    for case in cases.CASES:
        got = cases.run_case(case, "torch")
        results[case.name] = {k: v for k, v in got.items() if k != "message"}
        if "message" in got:
            results[case.name]["message"] = got["message"]
        if args.write:
            continue
        if case.name not in pinned:
            print(f"MISSING  {case.name}: not pinned (run with --write)")
            failures += 1
            continue
        problems = cases.compare(case, got, pinned[case.name])
        if problems:
            failures += 1
            print(f"DIFFERS  {case.name}: " + "; ".join(problems[:3]))
        ours = cases.compare(case, cases.run_case(case, "minigrad"), got)
        if ours:
            print(f"minigrad {case.name}: " + "; ".join(ours[:3]))
    stale = set(pinned) - {c.name for c in cases.CASES}
    for name in sorted(stale):
        print(f"STALE    {name}: pinned but no longer a case")
    if args.write:
        cases.write_pinned(results, torch.__version__)
        print(f"wrote {len(results)} cases to {cases.PINNED_FILE}")
        return 0
    print(f"{len(cases.CASES)} cases, {failures} differ from the pinned PyTorch values")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
