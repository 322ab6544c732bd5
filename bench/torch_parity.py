"""Recompute every pinned PyTorch value of ``tests/support/torch_values.json`` with PyTorch.

    python -m bench.torch_parity            # exit status 1 if any pinned value differs
    python -m bench.torch_parity --write    # rewrite tests/support/torch_values.json from PyTorch

It also re-derives the bad-input table of ``tests/engine/test_bad_inputs.py``: each answer pinned
there must be PyTorch's, and PyTorch must raise where the table says minigrad raises.

The cases (``tests/support/torch_cases.py``) are shared with ``tests/engine/test_torch_parity.py``, which
checks minigrad against the same pinned values without PyTorch. So the test pins minigrad to
these numbers, and this script pins these numbers to PyTorch. It also runs minigrad on each
case and reports where minigrad and PyTorch differ (the test does that too).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _load() -> tuple:
    sys.path.insert(0, str(ROOT))
    from tests.support import torch_cases
    try:
        _, pinned = torch_cases.load_pinned()
    except FileNotFoundError:
        pinned = {}
    return torch_cases, pinned


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true",
                        help="rewrite tests/support/torch_values.json from PyTorch's results")
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
    failures += _bad_inputs(args.write)
    failures += _state_dicts()
    stale = set(pinned) - {c.name for c in cases.CASES}
    for name in sorted(stale):
        print(f"STALE    {name}: pinned but no longer a case")
    if args.write:
        cases.write_pinned(results, torch.__version__)
        print(f"wrote {len(results)} cases to {cases.PINNED_FILE}")
        return 0
    print(f"{len(cases.CASES)} cases, {failures} differ from the pinned PyTorch values")
    return 1 if failures else 0


def _bad_inputs(write: bool) -> int:
    """Re-derive the bad-input table (``tests/engine/test_bad_inputs.py``) with PyTorch: each pinned
    answer must be PyTorch's, and PyTorch must raise on each row where minigrad must raise.
    Its pinned values are written in the test file itself (``--write`` leaves them alone)."""
    import tempfile
    import warnings

    from tests.engine import test_bad_inputs as table  # the root is on sys.path (see _load)

    lib = table.Lib("torch")
    failures = 0
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's own warnings (var with correction >= N)
        lib.tmp = tmp
        for row in table.ROWS:
            if isinstance(row.want, table.Only):
                continue  # minigrad alone (its file format, array-api-strict): row.want.why
            try:
                got = table.plain(row.call(lib))
            except Exception as exc:  # noqa: BLE001 - whether PyTorch raises is the point
                if isinstance(row.want, table.Same):
                    failures += 1
                    print(f"DIFFERS  {row.name}: PyTorch raises {type(exc).__name__}: {exc}")
                continue
            if isinstance(row.want, table.Raises):
                failures += 1
                print(f"DIFFERS  {row.name}: minigrad raises, PyTorch returns {got}")
            elif not table.same(got, table.PINNED[row.name]):
                failures += 1
                print(f"DIFFERS  {row.name}: PyTorch gives {got}, pinned "
                      f"{table.PINNED[row.name]}")
    if write and failures:
        print("(bad-input rows are pinned in tests/engine/test_bad_inputs.py: edit them by hand)")
    print(f"{len(table.ROWS)} bad-input rows, {failures} differ from PyTorch")
    return failures


def _state_dicts() -> int:
    """Re-derive the state-dict keys, shapes and reprs of issue 29's modules, pinned in
    tests/support/torch_cases_issue29.py (STATE_DICTS; edit them by hand), with PyTorch."""
    from tests.support import torch_cases_issue29 as table  # the root is on sys.path (_load)

    failures = 0
    for name, (spec, text) in table.torch_state_dict_specs().items():
        _, want, pinned_text = table.STATE_DICTS[name]
        if spec != [tuple(w) for w in want] or text != pinned_text:
            failures += 1
            print(f"DIFFERS  state dict {name}: PyTorch gives {spec} {text!r}")
    print(f"{len(table.STATE_DICTS)} state dicts, {failures} differ from PyTorch")
    return failures


if __name__ == "__main__":
    raise SystemExit(main())
